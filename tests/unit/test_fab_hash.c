/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lib/fabric/fab_hash: each function against published check values (CRC-16/CCITT-FALSE and
 * CRC-32 of "123456789", MurmurHash3_x86_32's SMHasher verification value and test vectors,
 * Microsoft's RSS verification suite for Toeplitz, also against DPDK's rte_softrss() and
 * rte_net_crc); the key layouts (HPCC's 12-byte Murmur3 key); spread over 4 links of 10^4
 * random 5-tuples (chi-square at 1%, 3 degrees of freedom: 11.345) for every function;
 * per-flow consistency; polarization of two tiers; the JSON configuration and its errors.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>
#include <rte_net_crc.h>
#include <rte_thash.h>

#include "lib/base/emu_compat.h"
#include "lib/fabric/fab_hash.h"
#include "lib/proto/roce_crc.h"
#include "lib/proto/roce_proto.h"

#define N_FLOWS 10000
#define CHI2_1PCT_3DOF 11.345

static uint64_t
rnd(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545F4914F6CDD1DULL;
}

static void
random_tuple(uint64_t *s, struct fab_tuple *t)
{
	unsigned int i;

	memset(t, 0, sizeof(*t));
	t->ip_version = (rnd(s) & 3) == 0 ? 6 : 4;
	for (i = 0; i < (t->ip_version == 4 ? 4u : 16u); i++) {
		t->src_ip[i] = (uint8_t)rnd(s);
		t->dst_ip[i] = (uint8_t)rnd(s);
	}
	t->src_port = (uint16_t)rnd(s);
	t->dst_port = (uint16_t)rnd(s);
	t->protocol = (rnd(s) & 1) ? ROCE_IPPROTO_UDP : ROCE_IPPROTO_TCP;
	t->dest_qp = (uint32_t)rnd(s) & 0xFFFFFF;
}

static void
cfg_init(struct fab_hash_cfg *c, enum fab_hash_fn fn, uint32_t fields, uint32_t seed)
{
	assert_int_equal(fab_hash_cfg_init(c, fn, fields, seed), 0);
}

static void
test_crc_vectors(void **state)
{
	static const uint8_t check[] = "123456789";
	struct fab_hash_cfg c;
	struct fab_tuple t;
	uint8_t key[16];

	(void)state;
	assert_int_equal(fab_crc16_ccitt(0xFFFF, check, 9), 0x29B1);	/* CRC-16/CCITT-FALSE */
	assert_int_equal(~roce_crc32_update(ROCE_CRC32_INIT, check, 9), 0xCBF43926);
#if !EMU_DPDK_AT_LEAST(25, 3)
	/* DPDK's CRC32_ETH is the same CRC-32; its CRC16_CCITT is CRC-16/X-25, not ours */
	assert_int_equal(rte_net_crc_calc(check, 9, RTE_NET_CRC32_ETH), 0xCBF43926);
	assert_int_equal(rte_net_crc_calc(check, 9, RTE_NET_CRC16_CCITT), 0x906E);
#else
	printf("SKIP (part): rte_net_crc needs EAL from DPDK 25.03 on\n");
#endif
	/* the CRC key: src_ip, dst_ip, protocol, sport, dport, DestQP, network order */
	memset(&t, 0, sizeof(t));
	t.ip_version = 4;
	memcpy(t.src_ip, (const uint8_t[]){ 10, 0, 0, 1 }, 4);
	memcpy(t.dst_ip, (const uint8_t[]){ 10, 0, 1, 2 }, 4);
	t.protocol = 17;
	t.src_port = 0xC123;
	t.dst_port = 4791;
	t.dest_qp = 0xABCDEF;
	memcpy(key, (const uint8_t[]){ 10, 0, 0, 1, 10, 0, 1, 2, 17, 0xC1, 0x23, 0x12, 0xB7 }, 13);
	cfg_init(&c, FAB_HASH_CRC16_CCITT, FAB_HASH_F_5TUPLE, 0);
	assert_int_equal(fab_hash_tuple(&c, &t), fab_crc16_ccitt(0xFFFF, key, 13));
	/* the seed is the register's starting value XOR 0xFFFF */
	cfg_init(&c, FAB_HASH_CRC16_CCITT, FAB_HASH_F_5TUPLE, 0x1234);
	assert_int_equal(fab_hash_tuple(&c, &t), fab_crc16_ccitt(0xFFFF ^ 0x1234, key, 13));
	cfg_init(&c, FAB_HASH_CRC32_LO, FAB_HASH_F_5TUPLE, 0);
	assert_int_equal(fab_hash_tuple(&c, &t), roce_crc32(key, 13) & 0xFFFF);
	cfg_init(&c, FAB_HASH_CRC32_HI, FAB_HASH_F_5TUPLE, 0);
	assert_int_equal(fab_hash_tuple(&c, &t), roce_crc32(key, 13) >> 16);
	/* xor: 16-bit words 0x0a00 0x0001 0x0a00 0x0102 0x11c1 0x2312 0xb700 */
	cfg_init(&c, FAB_HASH_XOR, FAB_HASH_F_5TUPLE, 0);
	assert_int_equal(fab_hash_tuple(&c, &t),
		0x0a00 ^ 0x0001 ^ 0x0a00 ^ 0x0102 ^ 0x11c1 ^ 0x2312 ^ 0xb700);
	/* DestQP appends 3 bytes; the rotation keeps 16 bits */
	cfg_init(&c, FAB_HASH_CRC16_CCITT, FAB_HASH_F_5TUPLE | FAB_HASH_F_DEST_QP, 0);
	memcpy(key + 13, (const uint8_t[]){ 0xAB, 0xCD, 0xEF }, 3);
	c.bit_offset = 4;
	{
		uint16_t h = fab_crc16_ccitt(0xFFFF, key, 13 + 3);

		assert_int_equal(fab_hash_tuple(&c, &t), (uint16_t)(h >> 4 | h << 12));
	}
}

/* SMHasher's VerificationTest for MurmurHash3_x86_32: 0xB0F57EE3. */
static void
test_murmur3_vectors(void **state)
{
	static const char fox[] = "The quick brown fox jumps over the lazy dog";
	uint8_t key[256], hashes[4 * 256], fin[4];
	struct fab_hash_cfg c;
	struct fab_tuple t;
	uint32_t i, h;

	(void)state;
	for (i = 0; i < 256; i++) {
		key[i] = (uint8_t)i;
		roce_put_le32(hashes + 4 * i, fab_murmur3_32(key, i, 256 - i));
	}
	roce_put_le32(fin, fab_murmur3_32(hashes, sizeof(hashes), 0));
	assert_int_equal(roce_get_le32(fin), 0xB0F57EE3);
	assert_int_equal(fab_murmur3_32(key, 0, 0), 0);
	assert_int_equal(fab_murmur3_32(key, 0, 1), 0x514E28B7);
	assert_int_equal(fab_murmur3_32(key, 0, 0xFFFFFFFF), 0x81F16F39);
	memset(key, 0, 4);
	assert_int_equal(fab_murmur3_32(key, 4, 0), 0x2362F9DE);
	assert_int_equal(fab_murmur3_32((const uint8_t *)fox, sizeof(fox) - 1, 0x9747b28c),
		0x2FA826CD);

	/* HPCC's ns-3 key: u32 {sip, dip, sport | dport << 16} in memory, seed = node id */
	memset(&t, 0, sizeof(t));
	t.ip_version = 4;
	memcpy(t.src_ip, (const uint8_t[]){ 11, 0, 3, 1 }, 4);
	memcpy(t.dst_ip, (const uint8_t[]){ 11, 0, 7, 1 }, 4);
	t.src_port = 10000;
	t.dst_port = 100;
	roce_put_le32(key, 0x0b000301);
	roce_put_le32(key + 4, 0x0b000701);
	roce_put_le32(key + 8, 10000 | 100u << 16);
	cfg_init(&c, FAB_HASH_MURMUR3, FAB_HASH_F_SRC_IP | FAB_HASH_F_DST_IP | FAB_HASH_F_SRC_PORT |
		FAB_HASH_F_DST_PORT, 17);
	h = fab_hash_tuple(&c, &t);
	assert_int_equal(h, fab_murmur3_32(key, 12, 17));
	printf("HPCC key 11.0.3.1:10000 -> 11.0.7.1:100, seed 17: 0x%08x, %% 4 = %u\n", h,
		fab_hash_pick(h, 4));
}

/* Microsoft's RSS verification suite (IPv4, IPv6; with and without ports), key at seed 0. */
static void
test_toeplitz_vectors(void **state)
{
	static const struct {
		uint8_t v;
		uint8_t dst[16], src[16];
		uint16_t dport, sport;
		uint32_t ip_only, with_ports;
	} vec[] = {
		{ 4, { 161, 142, 100, 80 }, { 66, 9, 149, 187 }, 1766, 2794, 0x323e8fc2, 0x51ccc178 },
		{ 4, { 65, 69, 140, 83 }, { 199, 92, 111, 2 }, 4739, 14230, 0xd718262a, 0xc626b0ea },
		{ 4, { 12, 22, 207, 184 }, { 24, 19, 198, 95 }, 38024, 12898, 0xd2d0a5de,
		  0x5c2b394a },
		{ 4, { 209, 142, 163, 6 }, { 38, 27, 205, 30 }, 2217, 48228, 0x82989176, 0xafc7327f },
		{ 4, { 202, 188, 127, 2 }, { 153, 39, 163, 191 }, 1303, 44251, 0x5d1809c5,
		  0x10e828a2 },
		{ 6, { 0x3f, 0xfe, 0x25, 0x01, 0x02, 0x00, 0x00, 0x03, 0, 0, 0, 0, 0, 0, 0, 0x01 },
		  { 0x3f, 0xfe, 0x25, 0x01, 0x02, 0x00, 0x1f, 0xff, 0, 0, 0, 0, 0, 0, 0, 0x07 },
		  1766, 2794, 0x2cc18cd5, 0x40207d3d },
		{ 6, { 0xff, 0x02, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x01 },
		  { 0x3f, 0xfe, 0x05, 0x01, 0x00, 0x08, 0, 0, 0x02, 0x60, 0x97, 0xff, 0xfe, 0x40,
		    0xef, 0xab }, 4739, 14230, 0x0f0c461c, 0xdde51bbf },
		{ 6, { 0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0x02, 0x00, 0xf8, 0xff, 0xfe, 0x21, 0x67, 0xcf },
		  { 0x3f, 0xfe, 0x19, 0x00, 0x45, 0x45, 0x00, 0x03, 0x02, 0x00, 0xf8, 0xff, 0xfe,
		    0x21, 0x67, 0xcf }, 38024, 44251, 0x4b61e985, 0x02d1feef },
	};
	const uint32_t ips = FAB_HASH_F_SRC_IP | FAB_HASH_F_DST_IP;
	const uint32_t ports = ips | FAB_HASH_F_SRC_PORT | FAB_HASH_F_DST_PORT;
	struct fab_hash_cfg a, b;
	unsigned int i;
	uint64_t rng = 3;

	(void)state;
	cfg_init(&a, FAB_HASH_TOEPLITZ, ips, 0);
	cfg_init(&b, FAB_HASH_TOEPLITZ, ports, 0);
	for (i = 0; i < sizeof(vec) / sizeof(vec[0]); i++) {
		struct fab_tuple t;

		memset(&t, 0, sizeof(t));
		t.ip_version = vec[i].v;
		memcpy(t.src_ip, vec[i].src, 16);
		memcpy(t.dst_ip, vec[i].dst, 16);
		t.src_port = vec[i].sport;
		t.dst_port = vec[i].dport;
		assert_int_equal(fab_hash_tuple(&a, &t), vec[i].ip_only);
		assert_int_equal(fab_hash_tuple(&b, &t), vec[i].with_ports);
	}
	/* any fields and seed: DPDK's rte_softrss() on the raw key over the same words */
	for (i = 0; i < 1000; i++) {
		uint32_t w[10], n = 0, k, fields = 1 + (uint32_t)(rnd(&rng) % FAB_HASH_F_ALL);
		struct fab_hash_cfg c;
		struct fab_tuple t;
		unsigned int alen;

		random_tuple(&rng, &t);
		alen = t.ip_version == 4 ? 4 : 16;
		cfg_init(&c, FAB_HASH_TOEPLITZ, fields, (uint32_t)rnd(&rng) & (i & 1 ? ~0u : 0));
		for (k = 0; (fields & FAB_HASH_F_SRC_IP) && k < alen; k += 4)
			w[n++] = roce_get_be32(t.src_ip + k);
		for (k = 0; (fields & FAB_HASH_F_DST_IP) && k < alen; k += 4)
			w[n++] = roce_get_be32(t.dst_ip + k);
		if (fields & (FAB_HASH_F_SRC_PORT | FAB_HASH_F_DST_PORT))
			w[n++] = (fields & FAB_HASH_F_SRC_PORT ? (uint32_t)t.src_port << 16 : 0) |
				(fields & FAB_HASH_F_DST_PORT ? t.dst_port : 0);
		if (fields & (FAB_HASH_F_DEST_QP | FAB_HASH_F_PROTOCOL))
			w[n++] = (fields & FAB_HASH_F_DEST_QP ? t.dest_qp : 0) |
				(fields & FAB_HASH_F_PROTOCOL ? (uint32_t)t.protocol << 24 : 0);
		assert_int_equal(fab_hash_tuple(&c, &t), rte_softrss(w, n, c.toeplitz_key));
	}
}

static double
chi2_4(const unsigned int *cnt, unsigned int n)
{
	double e = n / 4.0, x = 0;
	unsigned int k;

	for (k = 0; k < 4; k++)
		x += (cnt[k] - e) * (cnt[k] - e) / e;
	return x;
}

static void
test_spread_and_consistency(void **state)
{
	unsigned int fn, s;

	(void)state;
	for (fn = 0; fn < FAB_HASH_FN_MAX; fn++) {
		for (s = 0; s < 2; s++) {
			unsigned int cnt[4] = { 0 }, i;
			struct fab_hash_cfg c;
			uint64_t rng = 1000 + fn;
			double x;

			cfg_init(&c, (enum fab_hash_fn)fn, FAB_HASH_F_5TUPLE, s ? 0xC0FFEE : 0);
			for (i = 0; i < N_FLOWS; i++) {
				struct fab_tuple t, u;
				uint32_t h;

				random_tuple(&rng, &t);
				h = fab_hash_tuple(&c, &t);
				u = t;
				assert_int_equal(fab_hash_tuple(&c, &u), h);	/* per flow */
				cnt[fab_hash_pick(h, 4)]++;
			}
			x = chi2_4(cnt, N_FLOWS);
			printf("%-12s seed %-8u links %u %u %u %u  chi2 %.2f\n",
				fab_hash_fn_name((enum fab_hash_fn)fn), c.seed, cnt[0], cnt[1],
				cnt[2], cnt[3], x);
			assert_true(x < CHI2_1PCT_3DOF);
		}
	}
}

/* A packet's hash is its tuple's, whatever the opcode, PSN or payload of the packet. */
static void
test_pkt_flow(void **state)
{
	struct roce_hdr_params hp = roce_hdr_params_default();
	static const uint8_t ops[] = { 0x06, 0x07, 0x08, 0x0A, 0x04 };
	struct fab_hash_cfg c;
	struct fab_tuple t;
	uint8_t buf[2048];
	unsigned int i, fn;

	(void)state;
	hp.src_ip[0] = 10, hp.src_ip[3] = 1;
	hp.dst_ip[0] = 10, hp.dst_ip[3] = 2;
	hp.udp_sport = roce_udp_sport_from_qpns(0x11, 0x22);
	hp.dest_qp = 0x22;
	memset(&t, 0, sizeof(t));
	t.ip_version = 4;
	memcpy(t.src_ip, hp.src_ip, 4);
	memcpy(t.dst_ip, hp.dst_ip, 4);
	t.src_port = hp.udp_sport;
	t.dst_port = ROCE_UDP_PORT;
	t.protocol = ROCE_IPPROTO_UDP;
	t.dest_qp = 0x22;
	for (fn = 0; fn < FAB_HASH_FN_MAX; fn++) {
		cfg_init(&c, (enum fab_hash_fn)fn, FAB_HASH_F_ALL, 9);
		for (i = 0; i < sizeof(ops); i++) {
			struct roce_pkt p;
			int len;

			hp.opcode = ops[i];
			hp.psn = 100 * i;
			len = roce_build(buf, sizeof(buf), &hp, NULL, 256 * i);
			assert_true(len > 0);
			roce_parse(buf, (uint32_t)len, ROCE_UDP_PORT, &p);
			assert_int_equal(p.cls, ROCE_CLASS_ROCEV2);
			assert_int_equal(fab_hash(&c, &p), fab_hash_tuple(&c, &t));
		}
	}
}

/*
 * How many distinct tier-2 links the flows of each tier-1 link reach (the smallest group).
 * IPv4 flows only: a CRC or XOR seed moves the result by a constant that depends on the key
 * length, so a v4/v6 mix would show two permutations instead of one.
 */
static unsigned int
tier2_links(const struct fab_hash_cfg *t1, const struct fab_hash_cfg *t2)
{
	unsigned int cnt[4][4] = { { 0 } }, i, k, j, min_links = 4;
	uint64_t rng = 77;

	for (i = 0; i < N_FLOWS; i++) {
		struct fab_tuple t;

		random_tuple(&rng, &t);
		t.ip_version = 4;
		cnt[fab_hash_pick(fab_hash_tuple(t1, &t), 4)]
			[fab_hash_pick(fab_hash_tuple(t2, &t), 4)]++;
	}
	for (k = 0; k < 4; k++) {
		unsigned int used = 0, tot = 0;

		for (j = 0; j < 4; j++)
			tot += cnt[k][j];
		for (j = 0; j < 4; j++)
			used += cnt[k][j] > tot / 8;	/* a real share, not a stray flow */
		if (used < min_links)
			min_links = used;
	}
	return min_links;
}

static void
test_polarization(void **state)
{
	unsigned int fn;

	(void)state;
	for (fn = 0; fn < FAB_HASH_FN_MAX; fn++) {
		struct fab_hash_cfg a, b;
		unsigned int same, seeds, offs;

		cfg_init(&a, (enum fab_hash_fn)fn, FAB_HASH_F_5TUPLE, 1);
		cfg_init(&b, (enum fab_hash_fn)fn, FAB_HASH_F_5TUPLE, 1);
		same = tier2_links(&a, &b);
		cfg_init(&b, (enum fab_hash_fn)fn, FAB_HASH_F_5TUPLE, 2);
		seeds = tier2_links(&a, &b);
		b.bit_offset = 2;
		offs = tier2_links(&a, &b);
		printf("%-12s tier-2 links per tier-1 link: same seed %u, seeds 1/2 %u, "
			"and bit_offset 0/2 %u\n", fab_hash_fn_name((enum fab_hash_fn)fn), same,
			seeds, offs);
		assert_int_equal(same, 1);
		/* a seed that only XORs a constant into a CRC or XOR result permutes the links */
		if (fn == FAB_HASH_TOEPLITZ || fn == FAB_HASH_MURMUR3)
			assert_int_equal(seeds, 4);
		else
			assert_int_equal(seeds, 1);
		assert_int_equal(offs, 4);
	}
	{
		struct fab_hash_cfg a, b;

		cfg_init(&a, FAB_HASH_CRC32_LO, FAB_HASH_F_5TUPLE, 0);
		cfg_init(&b, FAB_HASH_CRC32_HI, FAB_HASH_F_5TUPLE, 0);
		assert_int_equal(tier2_links(&a, &b), 4);	/* another function per tier */
	}
}

static int
parse_str(const char *text, struct fab_hash_cfg *c, struct emu_err *err)
{
	json_error_t je;
	json_t *j = json_loads(text, JSON_REJECT_DUPLICATES, &je);
	int rc;

	assert_non_null(j);
	memset(err, 0, sizeof(*err));
	rc = fab_hash_parse(j, "fabric.hash", c, err);
	json_decref(j);
	return rc;
}

static void
expect_error(const char *text, const char *prefix)
{
	struct fab_hash_cfg c;
	struct emu_err err;

	assert_int_not_equal(parse_str(text, &c, &err), 0);
	if (strncmp(err.msg, prefix, strlen(prefix)) != 0)
		fail_msg("%s: got \"%s\", want a message starting \"%s\"", text, err.msg, prefix);
}

static void
test_config(void **state)
{
	struct fab_hash_cfg c;
	struct emu_err err;

	(void)state;
	assert_int_equal(parse_str("{}", &c, &err), 0);
	assert_int_equal(c.fn, FAB_HASH_CRC16_CCITT);
	assert_int_equal(c.fields, FAB_HASH_F_5TUPLE);
	assert_int_equal(c.seed, 0);
	assert_int_equal(parse_str("{\"function\": \"murmur3\", \"fields\": [\"src_ip\", "
		"\"dst_ip\", \"dest_qp\"], \"seed\": 4294967295, \"bit_offset\": 31}", &c, &err), 0);
	assert_int_equal(c.fn, FAB_HASH_MURMUR3);
	assert_int_equal(c.fields, FAB_HASH_F_SRC_IP | FAB_HASH_F_DST_IP | FAB_HASH_F_DEST_QP);
	assert_int_equal(c.seed, 0xFFFFFFFFu);
	assert_int_equal(c.bit_offset, 31);
	assert_int_equal(parse_str("{\"function\": \"toeplitz\", \"seed\": 0}", &c, &err), 0);
	assert_int_equal(c.toeplitz_key[0], 0x6d);

	expect_error("{\"function\": \"crc8\"}",
		"fabric.hash.function: unknown hash function \"crc8\" (known: crc16_ccitt,");
	expect_error("{\"function\": 3}", "fabric.hash.function: must be a string");
	expect_error("{\"fields\": [\"src_ip\", \"vlan\"]}",
		"fabric.hash.fields[1]: unknown field \"vlan\" (known: src_ip,");
	expect_error("{\"fields\": [\"src_ip\", \"src_ip\"]}",
		"fabric.hash.fields[1]: field \"src_ip\" given twice");
	expect_error("{\"fields\": [7]}", "fabric.hash.fields[0]: must be a string");
	expect_error("{\"fields\": []}", "fabric.hash.fields: must name at least one field");
	expect_error("{\"fields\": \"src_ip\"}", "fabric.hash.fields: ");
	expect_error("{\"seed\": -1}", "fabric.hash.seed: ");
	expect_error("{\"seed\": 4294967296}", "fabric.hash.seed: ");
	expect_error("{\"seed\": \"1\"}", "fabric.hash.seed: must be an integer");
	expect_error("{\"seed\": 1.5}", "fabric.hash.seed: must be an integer");
	expect_error("{\"bit_offset\": 16}", "fabric.hash.bit_offset: ");
	expect_error("{\"function\": \"murmur3\", \"bit_offset\": 32}", "fabric.hash.bit_offset: ");
	expect_error("{\"sed\": 1}", "fabric.hash.sed: unknown key");
	expect_error("[]", "fabric.hash: ");
	assert_int_equal(fab_hash_cfg_init(&c, FAB_HASH_FN_MAX, FAB_HASH_F_5TUPLE, 0), -EINVAL);
	assert_int_equal(fab_hash_cfg_init(&c, FAB_HASH_XOR, 0, 0), -EINVAL);
	assert_int_equal(fab_hash_cfg_init(&c, FAB_HASH_XOR, 1u << 6, 0), -EINVAL);
	assert_int_equal(fab_hash_fn_from_name("xor"), FAB_HASH_XOR);
	assert_null(fab_hash_fn_name(FAB_HASH_FN_MAX));
	assert_int_equal(fab_hash_pick(12345, 0), 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_crc_vectors),
		cmocka_unit_test(test_murmur3_vectors),
		cmocka_unit_test(test_toeplitz_vectors),
		cmocka_unit_test(test_spread_and_consistency),
		cmocka_unit_test(test_pkt_flow),
		cmocka_unit_test(test_polarization),
		cmocka_unit_test(test_config),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
