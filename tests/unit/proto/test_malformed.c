/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Malformed input: every header cut at every byte, lengths that lie, jumbo frames, QinQ,
 * IPv4 options, RoCEv1, random mutations. Each parse runs on a heap copy of exactly the
 * bytes given, so that ASan (meson -Db_sanitize=address,undefined) catches any read past it.
 */
#include <errno.h>

#include "lib/proto/roce_proto.h"
#include "test_util.h"

static const uint8_t mac_a[6] = { 0x02, 0, 0, 0, 0, 0x0a };
static const uint8_t mac_b[6] = { 0x02, 0, 0, 0, 0, 0x0b };

/* Parse len bytes from a fresh heap block of exactly len bytes. */
static enum roce_class
parse_exact(const uint8_t *f, uint32_t len, struct roce_pkt *p)
{
	uint8_t *copy = malloc(len ? len : 1);
	enum roce_class c;

	assert_non_null(copy);
	memcpy(copy, f, len);
	c = roce_parse(copy, len, ROCE_UDP_PORT, p);
	if (c == ROCE_CLASS_ROCEV2 || c == ROCE_CLASS_ROCEV1) {
		/* the ICRC routines must stay inside too */
		(void)roce_icrc_verify(copy, len, p);
		roce_icrc_update(copy, len, p);
	}
	free(copy);
	return c;
}

static int
build(uint8_t *buf, size_t cap, uint8_t opcode, int ipv6, int n_vlans, uint32_t payload_len)
{
	struct roce_hdr_params hp = roce_hdr_params_default();
	int len;

	memcpy(hp.dst_mac, mac_b, 6);
	memcpy(hp.src_mac, mac_a, 6);
	hp.ip_version = ipv6 ? 6 : 4;
	hp.src_ip[0] = 10;
	hp.dst_ip[0] = 10;
	hp.dst_ip[3] = 2;
	hp.opcode = opcode;
	hp.dest_qp = 0x1234;
	hp.has_vlan = n_vlans > 0;
	hp.vlan_id = 100;
	hp.pcp = 3;
	len = roce_build(buf, cap, &hp, NULL, payload_len);
	assert_true(len > 0);
	if (n_vlans == 2) {
		/* push an outer S-tag: 0x88A8, PCP 5, VID 200 */
		memmove(buf + 16, buf + 12, (size_t)len - 12);
		roce_put_be16(buf + 12, ROCE_ETHERTYPE_QINQ);
		roce_put_be16(buf + 14, 5 << 13 | 200);
		len += 4;
	}
	return len;
}

/* Expected (class, reason) of a RoCEv2 frame f cut to c bytes. */
static void
expect_cut(const uint8_t *f, uint32_t c, const struct roce_pkt *full, uint8_t *cls,
	uint8_t *reason)
{
	uint32_t ip_end, hl = full->l4_off - full->l3_off;

	if (c < ROCE_ETH_HDR_LEN) {
		*cls = ROCE_CLASS_OTHER;
		*reason = ROCE_REASON_TRUNC_ETH;
		return;
	}
	if (c < full->l3_off) {
		*cls = ROCE_CLASS_OTHER;
		*reason = ROCE_REASON_TRUNC_VLAN;
		return;
	}
	*cls = full->ip_version == 4 ? ROCE_CLASS_IPV4_OTHER : ROCE_CLASS_IPV6_OTHER;
	if (c < (uint32_t)full->l3_off + hl) {
		*reason = ROCE_REASON_TRUNC_IP;
		return;
	}
	ip_end = full->ip_version == 4 ?
		full->l3_off + roce_get_be16(f + full->l3_off + 2) :
		full->l4_off + roce_get_be16(f + full->l3_off + 4);
	if (c < ip_end) {
		/* the IP length lies; INVALID once the UDP port shows it was RoCE */
		if (c >= full->l4_off + 4u)
			*cls = ROCE_CLASS_INVALID;
		*reason = ROCE_REASON_BAD_IP_LEN;
		return;
	}
	*cls = ROCE_CLASS_ROCEV2;
	*reason = ROCE_REASON_OK;
}

static void
test_cut_every_byte(void **state)
{
	static const uint8_t ops[] = { 0x04, 0x06, 0x0B, 0x11, 0x12, 0x13, 0x64, 0x65, 0x81, 0x53 };
	uint8_t buf[512];
	unsigned int i, n = 0;
	int ipv6, nv;

	(void)state;
	for (i = 0; i < sizeof(ops); i++) {
		for (ipv6 = 0; ipv6 < 2; ipv6++) {
			for (nv = 0; nv <= 2; nv++) {
				int len = build(buf, sizeof(buf), ops[i], ipv6, nv, 5);
				struct roce_pkt full, p;
				uint32_t c;

				assert_int_equal(parse_exact(buf, (uint32_t)len, &full),
					ROCE_CLASS_ROCEV2);
				assert_int_equal(full.n_vlans, nv);
				for (c = 0; c <= (uint32_t)len; c++) {
					uint8_t cls, reason;

					expect_cut(buf, c, &full, &cls, &reason);
					parse_exact(buf, c, &p);
					if (p.cls != cls || p.reason != reason)
						fprintf(stderr, "op 0x%02x v%d vlans %d cut %u: %s/%s\n",
							ops[i], ipv6 ? 6 : 4, nv, c,
							roce_class_name(p.cls),
							roce_reason_name(p.reason));
					assert_int_equal(p.cls, cls);
					assert_int_equal(p.reason, reason);
					n++;
				}
			}
		}
	}
	printf("%u cuts\n", n);
}

/* Non-RoCE frames cut anywhere: never a crash, and never OK before the header is whole. */
static void
test_cut_other(void **state)
{
	uint8_t pfc[60], arp[60];
	const uint16_t q[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };
	struct roce_pkt p;
	uint32_t c;

	(void)state;
	roce_build_pfc(pfc, sizeof(pfc), mac_a, 0xFF, q);
	for (c = 0; c <= 60; c++) {
		parse_exact(pfc, c, &p);
		if (c < 14) {
			assert_int_equal(p.reason, ROCE_REASON_TRUNC_ETH);
		} else {
			assert_int_equal(p.cls, ROCE_CLASS_MAC_CONTROL);
			assert_int_equal(p.reason, c < 14 + ROCE_MACCTL_PFC_LEN ?
				ROCE_REASON_TRUNC_MACCTL : ROCE_REASON_OK);
		}
	}
	roce_build_pause(pfc, sizeof(pfc), mac_a, 9);
	parse_exact(pfc, 17, &p);
	assert_int_equal(p.reason, ROCE_REASON_TRUNC_MACCTL);
	parse_exact(pfc, 18, &p);
	assert_int_equal(p.reason, ROCE_REASON_OK);
	assert_int_equal(p.pause_quanta[0], 9);

	memset(arp, 0, sizeof(arp));
	roce_put_be16(arp + 12, ROCE_ETHERTYPE_ARP);
	parse_exact(arp, 14, &p);
	assert_int_equal(p.cls, ROCE_CLASS_ARP);
	roce_put_be16(arp + 12, ROCE_ETHERTYPE_LLDP);
	parse_exact(arp, 60, &p);
	assert_int_equal(p.cls, ROCE_CLASS_LLDP);
	roce_put_be16(arp + 12, 0x1234);
	parse_exact(arp, 60, &p);
	assert_int_equal(p.cls, ROCE_CLASS_OTHER);
	assert_int_equal(p.reason, ROCE_REASON_OK);
	assert_int_equal(p.ethertype, 0x1234);
}

static void
expect(const uint8_t *f, uint32_t len, uint8_t cls, uint8_t reason)
{
	struct roce_pkt p;

	parse_exact(f, len, &p);
	if (p.cls != cls || p.reason != reason)
		fprintf(stderr, "got %s/%s, expected %s/%s\n", roce_class_name(p.cls),
			roce_reason_name(p.reason), roce_class_name(cls), roce_reason_name(reason));
	assert_int_equal(p.cls, cls);
	assert_int_equal(p.reason, reason);
}

/* IPv4 at offset 14 of buf: set a 16-bit field and keep the header checksum right. */
static void
ip4_set16(uint8_t *buf, unsigned int off, uint16_t v)
{
	roce_put_be16(buf + 14 + off, v);
	roce_put_be16(buf + 24, roce_ipv4_cksum(buf + 14, 20));
}

static void
test_lying_lengths(void **state)
{
	uint8_t buf[256], orig[256];
	int len;
	uint32_t l;

	(void)state;
	/* IPv4 RC ACK: 62 bytes, IP total length 48, UDP length 28 */
	len = build(orig, sizeof(orig), ROCE_OPCODE_RC_ACK, 0, 0, 0);
	assert_int_equal(len, 62);
	l = (uint32_t)len;
#define RESET() memcpy(buf, orig, l)
	RESET();
	expect(buf, l, ROCE_CLASS_ROCEV2, ROCE_REASON_OK);
	ip4_set16(buf, 2, 49);			/* IP length past the frame */
	expect(buf, l, ROCE_CLASS_INVALID, ROCE_REASON_BAD_IP_LEN);
	ip4_set16(buf, 2, 19);			/* shorter than its header */
	expect(buf, l, ROCE_CLASS_INVALID, ROCE_REASON_BAD_IP_LEN);
	ip4_set16(buf, 2, 0xFFFF);
	expect(buf, l, ROCE_CLASS_INVALID, ROCE_REASON_BAD_IP_LEN);
	ip4_set16(buf, 2, 44);			/* shorter than the UDP length */
	expect(buf, l, ROCE_CLASS_INVALID, ROCE_REASON_BAD_UDP_LEN);
	RESET();
	roce_put_be16(buf + 38, 29);		/* UDP length longer than IP says */
	expect(buf, l, ROCE_CLASS_INVALID, ROCE_REASON_BAD_UDP_LEN);
	roce_put_be16(buf + 38, 27);
	expect(buf, l, ROCE_CLASS_INVALID, ROCE_REASON_BAD_UDP_LEN);
	roce_put_be16(buf + 38, 0);
	expect(buf, l, ROCE_CLASS_INVALID, ROCE_REASON_BAD_UDP_LEN);
	RESET();
	/* consistent lengths that leave too little room: UDP payload 11, 15, 19 bytes */
	ip4_set16(buf, 2, 20 + 8 + 11);
	roce_put_be16(buf + 38, 8 + 11);
	expect(buf, l, ROCE_CLASS_INVALID, ROCE_REASON_TRUNC_BTH);
	ip4_set16(buf, 2, 20 + 8 + 15);
	roce_put_be16(buf + 38, 8 + 15);
	expect(buf, l, ROCE_CLASS_INVALID, ROCE_REASON_TRUNC_ICRC);
	ip4_set16(buf, 2, 20 + 8 + 19);		/* ACK needs 4 bytes of AETH */
	roce_put_be16(buf + 38, 8 + 19);
	expect(buf, l, ROCE_CLASS_INVALID, ROCE_REASON_TRUNC_EXT_HDR);
	ip4_set16(buf, 2, 20 + 8);		/* no UDP payload at all */
	roce_put_be16(buf + 38, 8);
	expect(buf, l, ROCE_CLASS_INVALID, ROCE_REASON_TRUNC_BTH);
	ip4_set16(buf, 2, 20 + 7);		/* UDP header itself cut by the IP length */
	expect(buf, l, ROCE_CLASS_INVALID, ROCE_REASON_TRUNC_UDP);
	ip4_set16(buf, 2, 20 + 3);		/* not even the port is inside */
	expect(buf, l, ROCE_CLASS_IPV4_OTHER, ROCE_REASON_TRUNC_UDP);
	RESET();
	buf[43] |= 0x30;			/* PadCnt 3 on an ACK without payload */
	expect(buf, l, ROCE_CLASS_INVALID, ROCE_REASON_BAD_PAD);
	RESET();
	buf[14] = 0x44;				/* IHL 4 */
	expect(buf, l, ROCE_CLASS_IPV4_OTHER, ROCE_REASON_BAD_IP_HLEN);
	buf[14] = 0x55;				/* version 5 */
	expect(buf, l, ROCE_CLASS_IPV4_OTHER, ROCE_REASON_BAD_IP_VERSION);
	buf[14] = 0x4F;				/* IHL 15: 60 bytes, more than the frame */
	expect(buf, l, ROCE_CLASS_IPV4_OTHER, ROCE_REASON_TRUNC_IP);
	buf[14] = 0x47;				/* IHL 7: "UDP" now starts inside the BTH */
	expect(buf, l, ROCE_CLASS_IPV4_OTHER, ROCE_REASON_OK);
	RESET();
	ip4_set16(buf, 6, 0x2000);		/* MF: a fragmented RoCE packet */
	expect(buf, l, ROCE_CLASS_INVALID, ROCE_REASON_IP_FRAGMENT);
	ip4_set16(buf, 6, 0x0001);		/* non-first fragment: no UDP header to see */
	expect(buf, l, ROCE_CLASS_IPV4_OTHER, ROCE_REASON_OK);
	RESET();
	roce_put_be16(buf + 36, 4792);		/* another port: plain UDP */
	expect(buf, l, ROCE_CLASS_IPV4_OTHER, ROCE_REASON_OK);
	RESET();
	buf[23] = ROCE_IPPROTO_TCP;
	expect(buf, l, ROCE_CLASS_IPV4_OTHER, ROCE_REASON_OK);
	{
		struct roce_pkt p;

		/* a custom RoCE port */
		RESET();
		roce_put_be16(buf + 36, 4792);
		roce_parse(buf, l, 4792, &p);
		assert_int_equal(p.cls, ROCE_CLASS_ROCEV2);
		roce_parse(orig, l, 4792, &p);
		assert_int_equal(p.cls, ROCE_CLASS_IPV4_OTHER);
	}

	/* IPv6 */
	len = build(orig, sizeof(orig), ROCE_TRANSPORT_RC | ROCE_OP_SEND_ONLY, 1, 0, 8);
	l = (uint32_t)len;
	RESET();
	expect(buf, l, ROCE_CLASS_ROCEV2, ROCE_REASON_OK);
	roce_put_be16(buf + 18, (uint16_t)(roce_get_be16(buf + 18) + 1));
	expect(buf, l, ROCE_CLASS_INVALID, ROCE_REASON_BAD_IP_LEN);
	roce_put_be16(buf + 18, 0);		/* jumbogram marker: no UDP header inside */
	expect(buf, l, ROCE_CLASS_IPV6_OTHER, ROCE_REASON_TRUNC_UDP);
	RESET();
	buf[14] = 0x40;
	expect(buf, l, ROCE_CLASS_IPV6_OTHER, ROCE_REASON_BAD_IP_VERSION);
	RESET();
	buf[20] = ROCE_IPPROTO_ICMPV6;
	buf[54] = 135;				/* neighbour solicitation */
	expect(buf, l, ROCE_CLASS_IPV6_ND, ROCE_REASON_OK);
	buf[54] = 128;				/* echo request */
	expect(buf, l, ROCE_CLASS_IPV6_OTHER, ROCE_REASON_OK);
	buf[20] = 0;				/* hop-by-hop first: not followed */
	expect(buf, l, ROCE_CLASS_IPV6_OTHER, ROCE_REASON_OK);
#undef RESET
}

static void
test_jumbo(void **state)
{
	static uint8_t buf[9216 + 64];
	int ipv6;

	(void)state;
	for (ipv6 = 0; ipv6 < 2; ipv6++) {
		/* RoCE frames are 2 mod 4 bytes long: the largest within 9216 is 9214 */
		uint32_t hdr = 14 + (ipv6 ? 40 : 20) + 8 + 12 + 4;
		int len = build(buf, sizeof(buf), ROCE_TRANSPORT_RC | ROCE_OP_RDMA_WRITE_MIDDLE, ipv6,
			0, 9214 - hdr);
		struct roce_pkt p;

		assert_int_equal(len, 9214);
		buf[9214] = 0xEE;	/* 2 more bytes on the wire (padding, trailer) */
		buf[9215] = 0xEE;
		assert_int_equal(parse_exact(buf, 9216, &p), ROCE_CLASS_ROCEV2);
		assert_int_equal(p.payload_len, 9214 - hdr);
		assert_int_equal(p.padcnt, 0);
		assert_int_equal(p.icrc_off, 9210);
		assert_true(roce_icrc_verify(buf, 9216, &p));
		/* one byte short: the IP length lies */
		assert_int_equal(parse_exact(buf, 9213, &p), ROCE_CLASS_INVALID);
		assert_int_equal(p.reason, ROCE_REASON_BAD_IP_LEN);
		/* tagged, PadCnt 2 */
		len = build(buf, sizeof(buf), ROCE_TRANSPORT_RC | ROCE_OP_SEND_MIDDLE, ipv6, 1,
			9214 - hdr - 4 - 2);
		assert_int_equal(len, 9214);
		assert_int_equal(parse_exact(buf, 9214, &p), ROCE_CLASS_ROCEV2);
		assert_int_equal(p.padcnt, 2);
		assert_int_equal(p.payload_len, 9214 - hdr - 4 - 2);
		assert_true(roce_icrc_verify(buf, 9214, &p));
	}
	/* frame_len beyond 16-bit offsets: clamped, nothing read past the buffer */
	{
		uint8_t *big = calloc(1, 70000);
		struct roce_pkt p;

		assert_non_null(big);
		memcpy(big, buf, 9216);
		roce_parse(big, 70000, ROCE_UDP_PORT, &p);
		assert_int_equal(p.cls, ROCE_CLASS_ROCEV2);
		free(big);
	}
}

static void
test_qinq_and_tags(void **state)
{
	uint8_t buf[256];
	struct roce_pkt p;
	int len;

	(void)state;
	len = build(buf, sizeof(buf), ROCE_TRANSPORT_RC | ROCE_OP_SEND_ONLY, 0, 2, 16);
	assert_int_equal(parse_exact(buf, (uint32_t)len, &p), ROCE_CLASS_ROCEV2);
	assert_int_equal(p.n_vlans, 2);
	assert_int_equal(p.pcp, 5);		/* outermost tag */
	assert_int_equal(p.vlan_id, 200);
	assert_int_equal(p.l3_off, 22);
	assert_true(roce_icrc_verify(buf, (uint32_t)len, &p));	/* tags not covered */
	/* a third tag is too many */
	memmove(buf + 16, buf + 12, (size_t)len - 12);
	roce_put_be16(buf + 12, ROCE_ETHERTYPE_QINQ_OLD);
	roce_put_be16(buf + 14, 7);
	len += 4;
	parse_exact(buf, (uint32_t)len, &p);
	assert_int_equal(p.cls, ROCE_CLASS_OTHER);
	assert_int_equal(p.reason, ROCE_REASON_TOO_MANY_VLANS);
}

static void
test_ipv4_options(void **state)
{
	uint8_t buf[256], tmp[256];
	unsigned int words;

	(void)state;
	for (words = 1; words <= 10; words++) {
		int len = build(buf, sizeof(buf), ROCE_TRANSPORT_RC | ROCE_OP_RDMA_WRITE_FIRST, 0, 1, 7);
		uint32_t add = 4 * words;
		struct roce_pkt p;
		uint32_t c;

		/* insert options after the 20-byte header at 18 and fix lengths and checksum */
		memcpy(tmp, buf, (size_t)len);
		memset(buf + 38, 1, add);
		memcpy(buf + 38 + add, tmp + 38, (size_t)len - 38);
		buf[18] = (uint8_t)(0x45 + words);
		roce_put_be16(buf + 20, (uint16_t)(roce_get_be16(buf + 20) + add));
		roce_put_be16(buf + 28, roce_ipv4_cksum(buf + 18, 20 + add));
		len += (int)add;
		assert_int_equal(parse_exact(buf, (uint32_t)len, &p), ROCE_CLASS_ROCEV2);
		assert_int_equal(p.l4_off, 38 + add);
		assert_int_equal(p.bth_off, 46 + add);
		assert_true(p.has_reth);
		/* the ICRC covers the options: recompute, verify, then flip one option byte */
		roce_icrc_update(buf, (uint32_t)len, &p);
		assert_true(roce_icrc_verify(buf, (uint32_t)len, &p));
		buf[38] ^= 0x10;
		assert_false(roce_icrc_verify(buf, (uint32_t)len, &p));
		buf[38] ^= 0x10;
		/* options cut short */
		for (c = 38; c < 38 + add; c++) {
			parse_exact(buf, c, &p);
			assert_int_equal(p.reason, ROCE_REASON_TRUNC_IP);
		}
	}
}

/* RoCEv1: EtherType 0x8915, GRH (IPv6 layout, next header 0x1B), BTH, ICRC. */
static void
test_rocev1(void **state)
{
	uint8_t f[128];
	struct roce_pkt p;
	uint32_t len = 14 + 40 + 12 + 16 + 4, c;

	(void)state;
	memset(f, 0, sizeof(f));
	memcpy(f, mac_b, 6);
	memcpy(f + 6, mac_a, 6);
	roce_put_be16(f + 12, ROCE_ETHERTYPE_ROCEV1);
	roce_put_be32(f + 14, 6u << 28 | 0x68u << 20 | 0x12345);
	roce_put_be16(f + 18, 12 + 16 + 4);
	f[20] = ROCE_GRH_NXT_BTH;
	f[21] = 64;
	f[22] = 0xfe;
	f[23] = 0x80;
	f[37] = 1;
	f[38] = 0xfe;
	f[39] = 0x80;
	f[53] = 2;
	f[54] = ROCE_TRANSPORT_RC | ROCE_OP_SEND_ONLY;
	roce_put_be16(f + 56, 0xFFFF);
	roce_put_be24(f + 59, 0x77);
	roce_put_be24(f + 63, 0x10);
	assert_int_equal(parse_exact(f, len, &p), ROCE_CLASS_ROCEV1);
	assert_int_equal(p.reason, ROCE_REASON_OK);
	assert_int_equal(p.dest_qp, 0x77);
	assert_int_equal(p.psn, 0x10);
	assert_int_equal(p.dscp, 0x68 >> 2);
	assert_int_equal(p.payload_len, 16);
	roce_icrc_update(f, len, &p);
	assert_true(roce_icrc_verify(f, len, &p));
	assert_int_equal(roce_set_ecn(f, &p, 3), 0);	/* GRH traffic class is masked */
	assert_true(roce_icrc_verify(f, len, &p));
	for (c = 0; c < len; c++) {
		parse_exact(f, c, &p);
		assert_int_not_equal(p.reason, ROCE_REASON_OK);
		if (c >= 14)
			assert_int_equal(p.cls, ROCE_CLASS_INVALID);
	}
	f[20] = 17;
	parse_exact(f, len, &p);
	assert_int_equal(p.reason, ROCE_REASON_BAD_GRH_NEXT_HDR);
	f[20] = ROCE_GRH_NXT_BTH;
	roce_put_be16(f + 18, 12 + 16 + 5);
	parse_exact(f, len, &p);
	assert_int_equal(p.reason, ROCE_REASON_BAD_GRH_LEN);
}

/* Random byte mutations of valid frames: consistent offsets whenever the parse says OK. */
static void
test_random_mutations(void **state)
{
	static const uint8_t ops[] = { 0x00, 0x06, 0x0B, 0x0C, 0x10, 0x11, 0x12, 0x13, 0x16,
		0x2B, 0x45, 0x52, 0x65, 0x81, 0xC0 };
	uint8_t buf[512];
	uint64_t rng = 2024;
	unsigned int i, n_ok = 0;

	(void)state;
	for (i = 0; i < 200000; i++) {
		int len = build(buf, sizeof(buf), ops[i % sizeof(ops)], (int)(i & 1),
			(int)((i >> 1) % 3), (uint32_t)(test_rand(&rng) % 100));
		unsigned int k, n = 1 + (unsigned int)(test_rand(&rng) % 4);
		struct roce_pkt p;
		uint32_t cut;

		for (k = 0; k < n; k++) {
			/* mutate the headers mostly */
			uint32_t at = (uint32_t)(test_rand(&rng) % (uint32_t)(len < 120 ? len : 120));

			buf[at] = (uint8_t)test_rand(&rng);
		}
		cut = (test_rand(&rng) & 3) ? (uint32_t)len : (uint32_t)(test_rand(&rng) % (uint32_t)len);
		parse_exact(buf, cut, &p);
		assert_true(p.cls < ROCE_CLASS_MAX);
		assert_true(p.reason < ROCE_REASON_MAX);
		assert_true(p.n_vlans <= 2);
		if ((p.cls == ROCE_CLASS_ROCEV2 || p.cls == ROCE_CLASS_ROCEV1) &&
				p.reason == ROCE_REASON_OK) {
			n_ok++;
			assert_true(p.l3_off < p.l4_off);
			assert_true(p.l4_off <= p.bth_off);
			assert_true(p.bth_off + 12u <= p.payload_off);
			assert_int_equal(p.payload_off + p.payload_len + p.padcnt, p.icrc_off);
			assert_true(p.icrc_off + 4u <= cut);
		}
		if (p.cls == ROCE_CLASS_INVALID)
			assert_int_not_equal(p.reason, ROCE_REASON_OK);
	}
	printf("%u of 200000 mutated frames still parse as RoCE\n", n_ok);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cut_every_byte),
		cmocka_unit_test(test_cut_other),
		cmocka_unit_test(test_lying_lengths),
		cmocka_unit_test(test_jumbo),
		cmocka_unit_test(test_qinq_and_tags),
		cmocka_unit_test(test_ipv4_options),
		cmocka_unit_test(test_rocev1),
		cmocka_unit_test(test_random_mutations),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
