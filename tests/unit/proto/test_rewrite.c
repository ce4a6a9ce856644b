/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Rewriters on 10^5 random headers: ECN/DSCP/TTL/FECN/BECN keep the ICRC valid and leave the
 * IPv4 checksum equal to a full recompute (RFC 1624 incremental update); sport and address
 * rewrites recompute a valid ICRC (and a nonzero UDP checksum); corruption invalidates it.
 */
#include <errno.h>

#include "lib/proto/roce_proto.h"
#include "test_util.h"

#define N_RANDOM 100000

/* Full UDP checksum (RFC 768) over the pseudo-header and the datagram. */
static uint16_t
udp_cksum_full(const uint8_t *f, const struct roce_pkt *p)
{
	uint32_t alen = p->ip_version == 4 ? 4 : 16, ulen = roce_get_be16(f + p->l4_off + 4);
	uint32_t sum = 0, i;

	for (i = 0; i < alen; i += 2)
		sum += roce_get_be16(p->src_ip + i) + roce_get_be16(p->dst_ip + i);
	sum += ROCE_IPPROTO_UDP + ulen;
	for (i = 0; i + 1 < ulen; i += 2)
		if (i != 6)
			sum += roce_get_be16(f + p->l4_off + i);
	if (ulen & 1)
		sum += (uint32_t)f[p->l4_off + ulen - 1] << 8;
	while (sum >> 16)
		sum = (sum & 0xFFFF) + (sum >> 16);
	sum = (uint16_t)~sum;
	return sum == 0 ? 0xFFFF : (uint16_t)sum;
}

/* Insert n_words 32-bit words of IPv4 options (NOP ... EOL) and fix lengths, checksum, ICRC. */
static int
add_ipv4_options(uint8_t *f, int len, unsigned int n_words)
{
	struct roce_pkt p;
	uint32_t add = 4 * n_words, hl;
	uint8_t *ip;

	roce_parse(f, (uint32_t)len, ROCE_UDP_PORT, &p);
	ip = f + p.l3_off;
	memmove(ip + 20 + add, ip + 20, (size_t)len - p.l3_off - 20);
	memset(ip + 20, 1, add);	/* NOP */
	ip[20 + add - 1] = 0;		/* EOL */
	hl = 20 + add;
	ip[0] = (uint8_t)(0x40 | hl / 4);
	roce_put_be16(ip + 2, (uint16_t)(roce_get_be16(ip + 2) + add));
	roce_put_be16(ip + 10, roce_ipv4_cksum(ip, hl));
	len += (int)add;
	roce_parse(f, (uint32_t)len, ROCE_UDP_PORT, &p);
	roce_icrc_update(f, (uint32_t)len, &p);
	return len;
}

static int
random_frame(uint64_t *rng, uint8_t *buf, size_t cap)
{
	struct roce_hdr_params hp = roce_hdr_params_default();
	static const uint8_t ops[] = { 0x00, 0x04, 0x06, 0x0A, 0x0B, 0x11, 0x24, 0x64, 0x81, 0x4C };
	unsigned int i;
	int len;

	hp.ip_version = (test_rand(rng) & 3) == 0 ? 6 : 4;
	for (i = 0; i < 16; i++) {
		hp.src_ip[i] = (uint8_t)test_rand(rng);
		hp.dst_ip[i] = (uint8_t)test_rand(rng);
	}
	hp.has_vlan = (uint8_t)(test_rand(rng) & 1);
	hp.vlan_id = (uint16_t)(test_rand(rng) & 0xFFF);
	hp.dscp = (uint8_t)(test_rand(rng) & 63);
	hp.ecn = (uint8_t)(test_rand(rng) & 3);
	hp.ttl = (uint8_t)test_rand(rng);
	hp.ip_id = (uint16_t)test_rand(rng);
	hp.ip_df = (uint8_t)(test_rand(rng) & 1);
	hp.flow_label = (uint32_t)test_rand(rng);
	hp.udp_sport = (uint16_t)test_rand(rng);
	hp.opcode = ops[test_rand(rng) % sizeof(ops)];
	hp.dest_qp = (uint32_t)test_rand(rng);
	hp.psn = (uint32_t)test_rand(rng);
	hp.bth_rsvd = (uint8_t)test_rand(rng);
	len = roce_build(buf, cap, &hp, NULL, (uint32_t)(test_rand(rng) % 300));
	if (len > 0 && hp.ip_version == 4 && (test_rand(rng) & 3) == 0)
		len = add_ipv4_options(buf, len, (unsigned int)(1 + test_rand(rng) % 10));
	return len;
}

static void
check_ipv4_cksum(const uint8_t *f, const struct roce_pkt *p)
{
	const uint8_t *ip = f + p->l3_off;

	if (p->ip_version == 4)
		assert_int_equal(roce_get_be16(ip + 10),
			roce_ipv4_cksum(ip, (uint32_t)(ip[0] & 0x0F) * 4));
}

static void
test_masked_rewrites(void **state)
{
	static uint8_t buf[1024];
	uint64_t rng = 42;
	unsigned int i, n_v4 = 0;

	(void)state;
	for (i = 0; i < N_RANDOM; i++) {
		int len = random_frame(&rng, buf, sizeof(buf));
		uint8_t icrc[4], ecn = (uint8_t)(test_rand(&rng) & 3);
		uint8_t dscp = (uint8_t)(test_rand(&rng) & 63), ttl = (uint8_t)test_rand(&rng);
		uint8_t fecn = (uint8_t)(test_rand(&rng) & 1), becn = (uint8_t)(test_rand(&rng) & 1);
		struct roce_pkt p, q;

		assert_true(len > 0);
		roce_parse(buf, (uint32_t)len, ROCE_UDP_PORT, &p);
		assert_int_equal(p.cls, ROCE_CLASS_ROCEV2);
		assert_true(roce_icrc_verify(buf, (uint32_t)len, &p));
		check_ipv4_cksum(buf, &p);
		n_v4 += p.ip_version == 4;
		memcpy(icrc, buf + p.icrc_off, 4);

		assert_int_equal(roce_set_ecn(buf, &p, ecn), 0);
		check_ipv4_cksum(buf, &p);
		assert_int_equal(roce_set_dscp(buf, &p, dscp), 0);
		check_ipv4_cksum(buf, &p);
		assert_int_equal(roce_set_ttl(buf, &p, ttl), 0);
		check_ipv4_cksum(buf, &p);
		assert_int_equal(roce_set_fecn_becn(buf, &p, fecn, becn), 0);
		check_ipv4_cksum(buf, &p);
		assert_memory_equal(buf + p.icrc_off, icrc, 4);
		assert_true(roce_icrc_verify(buf, (uint32_t)len, &p));

		/* the rewritten frame parses to the same packet with the new values */
		roce_parse(buf, (uint32_t)len, ROCE_UDP_PORT, &q);
		assert_int_equal(q.ecn, ecn);
		assert_int_equal(q.dscp, dscp);
		assert_int_equal(q.ttl, ttl);
		assert_int_equal(q.fecn, fecn);
		assert_int_equal(q.becn, becn);
		assert_memory_equal(&q, &p, sizeof(p));
	}
	assert_true(n_v4 > N_RANDOM / 2);
	assert_int_equal(roce_set_ecn(buf, &(struct roce_pkt){ .ip_version = 4 }, 4), -EINVAL);
	assert_int_equal(roce_set_dscp(buf, &(struct roce_pkt){ .ip_version = 4 }, 64), -EINVAL);
}

/* The incremental update matches a full recompute on arbitrary (not RoCE-built) headers. */
static void
test_cksum_adjust_random(void **state)
{
	uint64_t rng = 5;
	unsigned int i;

	(void)state;
	for (i = 0; i < N_RANDOM; i++) {
		uint8_t ip[20];
		uint16_t old, upd;
		unsigned int w, k;

		for (k = 0; k < 20; k++)
			ip[k] = (uint8_t)test_rand(&rng);
		ip[0] = 0x45;
		roce_put_be16(ip + 10, roce_ipv4_cksum(ip, 20));
		do {
			w = (unsigned int)(test_rand(&rng) % 10);
		} while (w == 5);
		old = roce_get_be16(ip + 2 * w);
		upd = (uint16_t)test_rand(&rng);
		if (w == 0)
			upd = (uint16_t)(0x4500 | (upd & 0xFF));
		roce_put_be16(ip + 2 * w, upd);
		roce_put_be16(ip + 10, roce_cksum_adjust(roce_get_be16(ip + 10), old, upd));
		assert_int_equal(roce_get_be16(ip + 10), roce_ipv4_cksum(ip, 20));
	}
}

static void
test_icrc_rewrites(void **state)
{
	static uint8_t buf[1024];
	uint64_t rng = 77;
	unsigned int i;

	(void)state;
	for (i = 0; i < N_RANDOM / 10; i++) {
		int len = random_frame(&rng, buf, sizeof(buf));
		uint16_t port = (uint16_t)test_rand(&rng);
		uint8_t src[16], dst[16];
		struct roce_pkt p, q;
		unsigned int k;

		roce_parse(buf, (uint32_t)len, ROCE_UDP_PORT, &p);
		/* half of the frames carry a UDP checksum (allowed, and usual for IPv6) */
		if (test_rand(&rng) & 1)
			roce_put_be16(buf + p.l4_off + 6, udp_cksum_full(buf, &p));

		assert_int_equal(roce_set_udp_sport(buf, (uint32_t)len, &p, port), 0);
		assert_true(roce_icrc_verify(buf, (uint32_t)len, &p));
		roce_parse(buf, (uint32_t)len, ROCE_UDP_PORT, &q);
		assert_int_equal(q.udp_sport, port);
		assert_int_equal(roce_pkt_flow_hash(&q), roce_pkt_flow_hash(&p));
		assert_true(roce_icrc_verify(buf, (uint32_t)len, &q));
		if (roce_get_be16(buf + p.l4_off + 6) != 0)
			assert_int_equal(roce_get_be16(buf + p.l4_off + 6), udp_cksum_full(buf, &q));

		for (k = 0; k < 16; k++) {
			src[k] = (uint8_t)test_rand(&rng);
			dst[k] = (uint8_t)test_rand(&rng);
		}
		assert_int_equal(roce_set_ip_addrs(buf, (uint32_t)len, &p, src,
			(test_rand(&rng) & 1) ? dst : NULL), 0);
		roce_parse(buf, (uint32_t)len, ROCE_UDP_PORT, &q);
		assert_memory_equal(q.src_ip, src, p.ip_version == 4 ? 4 : 16);
		assert_memory_equal(q.dst_ip, p.dst_ip, 16);
		assert_int_equal(roce_pkt_flow_hash(&q), roce_pkt_flow_hash(&p));
		assert_true(roce_icrc_verify(buf, (uint32_t)len, &q));
		check_ipv4_cksum(buf, &q);
		if (roce_get_be16(buf + p.l4_off + 6) != 0)
			assert_int_equal(roce_get_be16(buf + p.l4_off + 6), udp_cksum_full(buf, &q));

		assert_int_equal(roce_corrupt_icrc(buf, (uint32_t)len, &q), 0);
		assert_false(roce_icrc_verify(buf, (uint32_t)len, &q));
		roce_icrc_update(buf, (uint32_t)len, &q);
		assert_true(roce_icrc_verify(buf, (uint32_t)len, &q));
	}
}

/* Any single-bit change outside the masked fields breaks the ICRC; inside them it does not. */
static void
test_icrc_coverage(void **state)
{
	struct roce_hdr_params hp = roce_hdr_params_default();
	uint8_t buf[256];
	unsigned int ipv, bit;

	(void)state;
	for (ipv = 4; ipv <= 6; ipv += 2) {
		struct roce_pkt p;
		int len;

		hp.ip_version = (uint8_t)ipv;
		hp.opcode = ROCE_TRANSPORT_RC | ROCE_OP_RDMA_WRITE_ONLY;
		len = roce_build(buf, sizeof(buf), &hp, NULL, 33);
		roce_parse(buf, (uint32_t)len, ROCE_UDP_PORT, &p);
		for (bit = 8 * p.l3_off; bit < 8u * p.icrc_off; bit++) {
			uint32_t off = bit / 8 - p.l3_off;
			uint32_t uoff = bit / 8 - p.l4_off;
			int masked;

			if (ipv == 4)
				masked = off == 1 || off == 8 || off == 10 || off == 11;
			else
				masked = (off == 0 && (bit & 7) >= 4) || off == 1 || off == 2 ||
					off == 3 || off == 7;
			masked |= bit / 8 >= p.l4_off && (uoff == 6 || uoff == 7);
			masked |= bit / 8 == p.bth_off + 4u;
			buf[bit / 8] ^= (uint8_t)(0x80 >> (bit & 7));
			assert_int_equal(roce_icrc_verify(buf, (uint32_t)len, &p), masked);
			buf[bit / 8] ^= (uint8_t)(0x80 >> (bit & 7));
		}
		/* Ethernet header is not covered */
		buf[0] ^= 1;
		assert_true(roce_icrc_verify(buf, (uint32_t)len, &p));
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_masked_rewrites),
		cmocka_unit_test(test_cksum_adjust_random),
		cmocka_unit_test(test_icrc_rewrites),
		cmocka_unit_test(test_icrc_coverage),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
