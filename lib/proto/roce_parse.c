/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Over 600 lines (about 620): the general parser and its fast path (untagged or one VLAN,
 * IPv4/IPv6, UDP 4791, BTH) share the per-header helpers and tables (bth_fields(),
 * ext_fields(), pkt_zero()); in two files each would hold its own copy of ext_fields() with
 * one caller, which the compiler then inlines into roce_parse_partial(), changing the
 * per-packet full parse. The datapath's variant of the fast path (roce_parse_partial_dp(),
 * _min(), _qp()) is apart, in roce_parse_dp.c; tests/unit/proto/test_fastpath.c includes this
 * file to compare the paths with each other.
 *
 * Frame parser. Every header is taken through a bounds-checked cursor whose end is the
 * smallest of: the bytes at hand, the frame, and the length the enclosing header claims.
 * Lengths that lie are reported (BAD_*_LEN), never followed.
 */
#include <stddef.h>
#include <string.h>

#include "roce_proto.h"
#include "roce_internal.h"
#include "roce_parse_fast.h"
#include "roce_parse_priv.h"

struct roce_cursor {
	const uint8_t *buf;
	uint32_t off;	/* next byte to read */
	uint32_t end;	/* first byte not to read; off <= end always */
};

/* Take n bytes at the cursor, or NULL (and no move) if fewer than n remain. */
static inline const uint8_t *
cursor_pull(struct roce_cursor *c, uint32_t n)
{
	const uint8_t *p;

	if (c->end - c->off < n)
		return NULL;
	p = c->buf + c->off;
	c->off += n;
	return p;
}

uint32_t
roce_pkt_flow_hash(const struct roce_pkt *p)
{
	unsigned int words = p->ip_version == 4 ? 1 : 4;
	uint32_t h = 0x52CE0000u | p->ip_version;
	unsigned int i;

	for (i = 0; i < words; i++) {
		h = roce_hash_mix(h, roce_get_be32(p->src_ip + 4 * i));
		h = roce_hash_mix(h, roce_get_be32(p->dst_ip + 4 * i));
	}
	h = roce_hash_mix(h, (uint32_t)p->udp_sport << 16 | p->udp_dport);
	h = roce_hash_mix(h, p->dest_qp);
	return roce_hash_fmix(h);
}


static inline enum roce_class
pkt_done(struct roce_pkt *out, enum roce_class cls, enum roce_reason reason)
{
	out->cls = (uint8_t)cls;
	out->reason = (uint8_t)reason;
	return cls;
}

static inline uint64_t
load_be64(const uint8_t *b)
{
	return (uint64_t)roce_fast_be32(b) << 32 | roce_fast_be32(b + 4);
}

/*
 * BTH byte 1 (SE, MigReq, PadCnt, TVer) as the four consecutive fields of struct roce_pkt
 * that hold it, one table row per value: one 4-byte copy instead of four shifts and masks.
 */
#define BTH_B1(x) { (x) >> 7, ((x) >> 6) & 1, ((x) >> ROCE_BTH_PADCNT_SHIFT) & 3, \
		    (x) & ROCE_BTH_TVER_MASK }
#define BTH_B1_4(x) BTH_B1(x), BTH_B1((x) + 1), BTH_B1((x) + 2), BTH_B1((x) + 3)
#define BTH_B1_16(x) BTH_B1_4(x), BTH_B1_4((x) + 4), BTH_B1_4((x) + 8), BTH_B1_4((x) + 12)
#define BTH_B1_64(x) BTH_B1_16(x), BTH_B1_16((x) + 16), BTH_B1_16((x) + 32), \
	BTH_B1_16((x) + 48)

static const uint8_t bth_b1_fields[256][4] = {
	BTH_B1_64(0), BTH_B1_64(64), BTH_B1_64(128), BTH_B1_64(192),
};

_Static_assert(ROCE_BTH_SE == 0x80 && ROCE_BTH_MIGREQ == 0x40, "bth_b1_fields: bit positions");
_Static_assert(offsetof(struct roce_pkt, migreq) == offsetof(struct roce_pkt, se) + 1 &&
	       offsetof(struct roce_pkt, padcnt) == offsetof(struct roce_pkt, se) + 2 &&
	       offsetof(struct roce_pkt, tver) == offsetof(struct roce_pkt, se) + 3,
	       "bth_b1_fields: se, migreq, padcnt, tver follow each other");

/* AETH syndrome -> has_aeth, aeth_kind, aeth_code, aeth_syndrome (consecutive fields). */
#define AETH_SYN(x) { 1, ((x) & ROCE_AETH_KIND_MASK) >> 5, (x) & ROCE_AETH_CODE_MASK, (x) }
#define AETH_SYN_4(x) AETH_SYN(x), AETH_SYN((x) + 1), AETH_SYN((x) + 2), AETH_SYN((x) + 3)
#define AETH_SYN_16(x) AETH_SYN_4(x), AETH_SYN_4((x) + 4), AETH_SYN_4((x) + 8), \
	AETH_SYN_4((x) + 12)
#define AETH_SYN_64(x) AETH_SYN_16(x), AETH_SYN_16((x) + 16), AETH_SYN_16((x) + 32), \
	AETH_SYN_16((x) + 48)

static const uint8_t aeth_syn_fields[256][4] = {
	AETH_SYN_64(0), AETH_SYN_64(64), AETH_SYN_64(128), AETH_SYN_64(192),
};

_Static_assert(offsetof(struct roce_pkt, aeth_kind) == offsetof(struct roce_pkt, has_aeth) + 1 &&
	       offsetof(struct roce_pkt, aeth_code) == offsetof(struct roce_pkt, has_aeth) + 2 &&
	       offsetof(struct roce_pkt, aeth_syndrome) ==
		       offsetof(struct roce_pkt, has_aeth) + 3,
	       "aeth_syn_fields: has_aeth, aeth_kind, aeth_code, aeth_syndrome follow each other");

/*
 * The BTH's fields. Its three words are loaded before the first store: out may alias the
 * frame as far as the compiler knows, and would otherwise re-read every byte after each store.
 */
static inline void
bth_fields(const uint8_t *b, struct roce_pkt *out)
{
	uint32_t w0 = roce_fast_be32(b), w1 = roce_fast_be32(b + 4), w2 = roce_fast_be32(b + 8);
	uint8_t b4 = (uint8_t)(w1 >> 24);

	out->opcode = (uint8_t)(w0 >> 24);
	out->transport = (uint8_t)(w0 >> 29);
	memcpy(&out->se, bth_b1_fields[(uint8_t)(w0 >> 16)], 4);
	out->pkey = (uint16_t)w0;
	out->fecn = (b4 & ROCE_BTH_FECN) != 0;
	out->becn = (b4 & ROCE_BTH_BECN) != 0;
	out->dest_qp = w1 & 0xFFFFFF;
	out->ackreq = (w2 >> 24 & ROCE_BTH_ACKREQ) != 0;
	out->psn = w2 & 0xFFFFFF;
}

/* The extension headers of set ext, starting at e (all of them at hand). */
static inline void
ext_fields(uint16_t ext, const uint8_t *e, struct roce_pkt *out)
{
	/* each header's loads come before its stores (see bth_fields) */
	if (ext & ROCE_EXT_RDETH)
		e += ROCE_RDETH_LEN;
	if (ext & ROCE_EXT_DETH) {
		uint32_t qkey = roce_fast_be32(e), src_qp = roce_fast_be32(e + 4) & 0xFFFFFF;

		out->has_deth = 1;
		out->deth_qkey = qkey;
		out->deth_src_qp = src_qp;
		e += ROCE_DETH_LEN;
	}
	if (ext & ROCE_EXT_RETH) {
		uint64_t va = load_be64(e);
		uint32_t rkey = roce_fast_be32(e + 8), len = roce_fast_be32(e + 12);

		out->has_reth = 1;
		out->reth_va = va;
		out->reth_rkey = rkey;
		out->reth_len = len;
		e += ROCE_RETH_LEN;
	}
	if (ext & ROCE_EXT_ATOMICETH) {
		uint64_t va = load_be64(e), swap_add = load_be64(e + 12), cmp = load_be64(e + 20);
		uint32_t rkey = roce_fast_be32(e + 8);

		out->has_atomiceth = 1;
		out->atomic_va = va;
		out->atomic_rkey = rkey;
		out->atomic_swap_add = swap_add;
		out->atomic_compare = cmp;
		e += ROCE_ATOMICETH_LEN;
	}
	if (ext & ROCE_EXT_AETH) {
		uint32_t w = roce_fast_be32(e);

		memcpy(&out->has_aeth, aeth_syn_fields[w >> 24], 4);
		out->msn = w & 0xFFFFFF;
		e += ROCE_AETH_LEN;
	}
	if (ext & ROCE_EXT_ATOMICACKETH)
		e += ROCE_ATOMICACKETH_LEN;
	if (ext & ROCE_EXT_IMMDT) {
		uint32_t imm = roce_fast_be32(e);

		out->has_imm = 1;
		out->imm = imm;
		e += ROCE_IMMDT_LEN;
	}
	if (ext & ROCE_EXT_IETH) {
		uint32_t rkey = roce_fast_be32(e);

		out->has_ieth = 1;
		out->imm = rkey;
	}
}

/*
 * BTH, extension headers, pad and ICRC of a RoCE packet whose BTH starts at the cursor and
 * whose transport part ends at end (the ICRC's last byte + 1, from the IP/UDP/GRH length).
 */
static enum roce_class
parse_bth(struct roce_cursor *c, uint32_t end, enum roce_class cls, struct roce_pkt *out)
{
	uint32_t rem = end - c->off;
	const uint8_t *b;
	uint32_t ext_len, room;
	uint16_t ext;

	out->bth_off = (uint16_t)c->off;
	if (rem < ROCE_BTH_LEN)
		return pkt_done(out, ROCE_CLASS_INVALID, ROCE_REASON_TRUNC_BTH);
	if (rem < ROCE_BTH_LEN + ROCE_ICRC_LEN)
		return pkt_done(out, ROCE_CLASS_INVALID, ROCE_REASON_TRUNC_ICRC);
	b = cursor_pull(c, ROCE_BTH_LEN);
	if (b == NULL)
		return pkt_done(out, ROCE_CLASS_INVALID, ROCE_REASON_TRUNC_BTH);
	bth_fields(b, out);

	/* Undefined (e.g. vendor) opcodes: no extension headers known, all is payload. */
	ext = roce_opcode_ext[out->opcode];
	ext_len = roce_opcode_ext_len_tab[out->opcode];
	out->ext_len = (uint8_t)ext_len;
	if (rem < ROCE_BTH_LEN + ext_len + ROCE_ICRC_LEN)
		return pkt_done(out, ROCE_CLASS_INVALID, ROCE_REASON_TRUNC_EXT_HDR);
	if (ext_len != 0) {
		const uint8_t *e = cursor_pull(c, ext_len);

		if (e == NULL)
			return pkt_done(out, ROCE_CLASS_INVALID, ROCE_REASON_TRUNC_EXT_HDR);
		ext_fields(ext, e, out);
	}
	out->payload_off = (uint16_t)c->off;
	out->icrc_off = (uint16_t)(end - ROCE_ICRC_LEN);
	room = end - ROCE_ICRC_LEN - c->off;
	if (out->padcnt > room)
		return pkt_done(out, ROCE_CLASS_INVALID, ROCE_REASON_BAD_PAD);
	out->payload_len = (uint16_t)(room - out->padcnt);
	return pkt_done(out, cls, ROCE_REASON_OK);
}

/* Ports of a non-RoCE TCP or UDP header, for the flow hash; the cursor ends at the IP end. */
static enum roce_class
parse_ports(struct roce_cursor *c, enum roce_class cls, struct roce_pkt *out)
{
	const uint8_t *l4 = cursor_pull(c, 4);

	if (l4 == NULL)
		return pkt_done(out, cls, ROCE_REASON_TRUNC_L4);
	out->udp_sport = roce_get_be16(l4);
	out->udp_dport = roce_get_be16(l4 + 2);
	return pkt_done(out, cls, ROCE_REASON_OK);
}

/* UDP header at the cursor; ip_end is where the IP header says the datagram ends. */
static enum roce_class
parse_udp(struct roce_cursor *c, uint32_t ip_end, uint16_t roce_port, enum roce_class other,
	struct roce_pkt *out)
{
	const uint8_t *udp;
	uint32_t ulen;

	out->l4_off = (uint16_t)c->off;
	udp = cursor_pull(c, ROCE_UDP_HDR_LEN);
	if (udp == NULL) {
		if (c->end - c->off >= 4 && roce_get_be16(c->buf + c->off + 2) == roce_port)
			other = ROCE_CLASS_INVALID;
		return pkt_done(out, other, ROCE_REASON_TRUNC_UDP);
	}
	out->udp_sport = roce_get_be16(udp);
	out->udp_dport = roce_get_be16(udp + 2);
	if (out->udp_dport != roce_port)
		return pkt_done(out, other, ROCE_REASON_OK);
	/* RoCEv2: UDP must span the IP payload exactly, as the ICRC is found from it. */
	ulen = roce_get_be16(udp + 4);
	if (ulen != ip_end - out->l4_off)
		return pkt_done(out, ROCE_CLASS_INVALID, ROCE_REASON_BAD_UDP_LEN);
	return parse_bth(c, ip_end, ROCE_CLASS_ROCEV2, out);
}

/* Does the frame have a UDP header to the RoCE port at l4_off, within the bytes at hand? */
static inline int
looks_like_rocev2(const struct roce_cursor *c, uint32_t avail, uint32_t l4_off,
	uint16_t roce_port)
{
	return avail >= 4 && l4_off <= avail - 4 &&
		roce_get_be16(c->buf + l4_off + 2) == roce_port;
}

static enum roce_class
parse_ipv4(struct roce_cursor *c, uint32_t avail, uint32_t frame_len, uint16_t roce_port,
	struct roce_pkt *out)
{
	const uint8_t *ip = cursor_pull(c, ROCE_IPV4_HDR_LEN);
	uint32_t hlen, tot_len, ip_end;
	uint16_t frag;
	int suspect;

	if (ip == NULL)
		return pkt_done(out, ROCE_CLASS_IPV4_OTHER, ROCE_REASON_TRUNC_IP);
	if ((ip[0] >> 4) != 4)
		return pkt_done(out, ROCE_CLASS_IPV4_OTHER, ROCE_REASON_BAD_IP_VERSION);
	hlen = (uint32_t)(ip[0] & 0x0F) * 4;
	if (hlen < ROCE_IPV4_HDR_LEN)
		return pkt_done(out, ROCE_CLASS_IPV4_OTHER, ROCE_REASON_BAD_IP_HLEN);
	if (cursor_pull(c, hlen - ROCE_IPV4_HDR_LEN) == NULL)
		return pkt_done(out, ROCE_CLASS_IPV4_OTHER, ROCE_REASON_TRUNC_IP);
	out->ip_version = 4;
	out->dscp = ip[1] >> 2;
	out->ecn = ip[1] & 3;
	out->ttl = ip[8];
	memcpy(out->src_ip, ip + 12, 4);
	memcpy(out->dst_ip, ip + 16, 4);
	out->l4_off = (uint16_t)c->off;

	frag = roce_get_be16(ip + 6);
	suspect = ip[9] == ROCE_IPPROTO_UDP && (frag & ROCE_IPV4_FRAG_OFF_MASK) == 0 &&
		looks_like_rocev2(c, avail, c->off, roce_port);
	tot_len = roce_get_be16(ip + 2);
	if (tot_len < hlen || tot_len > frame_len - out->l3_off)
		return pkt_done(out, suspect ? ROCE_CLASS_INVALID : ROCE_CLASS_IPV4_OTHER,
			ROCE_REASON_BAD_IP_LEN);
	if (frag & (ROCE_IPV4_MF | ROCE_IPV4_FRAG_OFF_MASK)) {
		if (suspect)
			return pkt_done(out, ROCE_CLASS_INVALID, ROCE_REASON_IP_FRAGMENT);
		return pkt_done(out, ROCE_CLASS_IPV4_OTHER, ROCE_REASON_OK);
	}
	ip_end = out->l3_off + tot_len;
	if (c->end > ip_end)
		c->end = ip_end;
	if (ip[9] == ROCE_IPPROTO_UDP)
		return parse_udp(c, ip_end, roce_port, ROCE_CLASS_IPV4_OTHER, out);
	if (ip[9] == ROCE_IPPROTO_TCP)
		return parse_ports(c, ROCE_CLASS_IPV4_OTHER, out);
	return pkt_done(out, ROCE_CLASS_IPV4_OTHER, ROCE_REASON_OK);
}

/* IPv6 header or RoCEv1 GRH (same layout): version, traffic class, hop limit, addresses. */
static inline void
parse_ipv6_fields(const uint8_t *ip, struct roce_pkt *out)
{
	uint8_t tc = (uint8_t)((ip[0] & 0x0F) << 4 | ip[1] >> 4);

	out->ip_version = 6;
	out->dscp = tc >> 2;
	out->ecn = tc & 3;
	out->ttl = ip[7];
	memcpy(out->src_ip, ip + 8, 16);
	memcpy(out->dst_ip, ip + 24, 16);
}

static enum roce_class
parse_ipv6(struct roce_cursor *c, uint32_t avail, uint32_t frame_len, uint16_t roce_port,
	struct roce_pkt *out)
{
	const uint8_t *ip = cursor_pull(c, ROCE_IPV6_HDR_LEN);
	uint32_t ip_end;
	int suspect;

	if (ip == NULL)
		return pkt_done(out, ROCE_CLASS_IPV6_OTHER, ROCE_REASON_TRUNC_IP);
	if ((ip[0] >> 4) != 6)
		return pkt_done(out, ROCE_CLASS_IPV6_OTHER, ROCE_REASON_BAD_IP_VERSION);
	parse_ipv6_fields(ip, out);
	out->l4_off = (uint16_t)c->off;
	suspect = ip[6] == ROCE_IPPROTO_UDP && looks_like_rocev2(c, avail, c->off, roce_port);
	ip_end = c->off + roce_get_be16(ip + 4);
	if (ip_end > frame_len)
		return pkt_done(out, suspect ? ROCE_CLASS_INVALID : ROCE_CLASS_IPV6_OTHER,
			ROCE_REASON_BAD_IP_LEN);
	if (c->end > ip_end)
		c->end = ip_end;
	switch (ip[6]) {
	case ROCE_IPPROTO_UDP:
		return parse_udp(c, ip_end, roce_port, ROCE_CLASS_IPV6_OTHER, out);
	case ROCE_IPPROTO_TCP:
		return parse_ports(c, ROCE_CLASS_IPV6_OTHER, out);
	case ROCE_IPPROTO_ICMPV6: {
		const uint8_t *icmp = cursor_pull(c, 1);

		if (icmp == NULL)
			return pkt_done(out, ROCE_CLASS_IPV6_OTHER, ROCE_REASON_TRUNC_L4);
		/* 133..137: router and neighbour solicitation/advertisement, redirect */
		if (icmp[0] >= 133 && icmp[0] <= 137)
			return pkt_done(out, ROCE_CLASS_IPV6_ND, ROCE_REASON_OK);
		return pkt_done(out, ROCE_CLASS_IPV6_OTHER, ROCE_REASON_OK);
	}
	default:
		return pkt_done(out, ROCE_CLASS_IPV6_OTHER, ROCE_REASON_OK);
	}
}

/* RoCEv1: GRH (IPv6 layout, next header 0x1B), BTH; the GRH payload length covers the ICRC. */
static enum roce_class
parse_grh(struct roce_cursor *c, uint32_t frame_len, struct roce_pkt *out)
{
	const uint8_t *grh = cursor_pull(c, ROCE_GRH_LEN);
	uint32_t end;

	if (grh == NULL)
		return pkt_done(out, ROCE_CLASS_INVALID, ROCE_REASON_TRUNC_GRH);
	if ((grh[0] >> 4) != 6)
		return pkt_done(out, ROCE_CLASS_INVALID, ROCE_REASON_BAD_IP_VERSION);
	parse_ipv6_fields(grh, out);
	out->l4_off = (uint16_t)c->off;
	if (grh[6] != ROCE_GRH_NXT_BTH)
		return pkt_done(out, ROCE_CLASS_INVALID, ROCE_REASON_BAD_GRH_NEXT_HDR);
	end = c->off + roce_get_be16(grh + 4);
	if (end > frame_len)
		return pkt_done(out, ROCE_CLASS_INVALID, ROCE_REASON_BAD_GRH_LEN);
	if (c->end > end)
		c->end = end;
	return parse_bth(c, end, ROCE_CLASS_ROCEV1, out);
}

static enum roce_class
parse_macctl(struct roce_cursor *c, struct roce_pkt *out)
{
	const uint8_t *m = cursor_pull(c, 2);
	unsigned int i;

	if (m == NULL)
		return pkt_done(out, ROCE_CLASS_MAC_CONTROL, ROCE_REASON_TRUNC_MACCTL);
	out->macctl_opcode = roce_get_be16(m);
	if (out->macctl_opcode == ROCE_MACCTL_OP_PAUSE) {
		m = cursor_pull(c, 2);
		if (m == NULL)
			return pkt_done(out, ROCE_CLASS_MAC_CONTROL, ROCE_REASON_TRUNC_MACCTL);
		out->pause_quanta[0] = roce_get_be16(m);
	} else if (out->macctl_opcode == ROCE_MACCTL_OP_PFC) {
		m = cursor_pull(c, ROCE_MACCTL_PFC_LEN - 2);
		if (m == NULL)
			return pkt_done(out, ROCE_CLASS_MAC_CONTROL, ROCE_REASON_TRUNC_MACCTL);
		out->pfc_enable = roce_get_be16(m);
		for (i = 0; i < 8; i++)
			out->pause_quanta[i] = roce_get_be16(m + 2 + 2 * i);
	}
	return pkt_done(out, ROCE_CLASS_MAC_CONTROL, ROCE_REASON_OK);
}

/*
 * memset(out, 0, sizeof(*out)) in fixed 32-byte pieces: a single 184-byte memset becomes
 * `rep stos` with -march=corei7, which costs about 30 ns per packet on AMD EPYC (perf).
 */
static inline void
pkt_zero(struct roce_pkt *out)
{
	uint8_t *o = (uint8_t *)out;

	/* unrolled: 16-byte stores and no loop (sizeof is a constant) */
	_Static_assert(sizeof(*out) > 160 && sizeof(*out) <= 192, "pkt_zero: pieces");
	memset(o, 0, 32);
	memset(o + 32, 0, 32);
	memset(o + 64, 0, 32);
	memset(o + 96, 0, 32);
	memset(o + 128, 0, 32);
	memset(o + 160, 0, sizeof(*out) - 160);
}


/*
 * The common frame in one pass: Ethernet, untagged or one 802.1Q tag, IPv4 without options
 * (not a fragment) or IPv6, UDP to the RoCE port, a BTH and its extension headers within the
 * bytes at hand, every length consistent. Returns 1 with *out exactly as pkt_zero() and the
 * general parser would leave it; returns 0 for anything else, and the general parser runs
 * from the start (what this wrote to *out by then is overwritten).
 */
static inline int
parse_fast(const uint8_t *hdr, uint32_t avail, uint32_t frame_len, uint16_t roce_port,
	   struct roce_pkt *out)
{
	uint32_t l3 = ROCE_ETH_HDR_LEN, l4, bth, ip_end, end, ext_len, room;
	const uint8_t *ip, *udp, *b;
	uint16_t et, ext;
	uint8_t tc, nxt;

	/* the shortest frame taken here: Eth, IPv4, UDP, BTH */
	if (avail < ROCE_ETH_HDR_LEN + ROCE_IPV4_HDR_LEN + ROCE_UDP_HDR_LEN + ROCE_BTH_LEN)
		return 0;
	et = roce_get_be16(hdr + 12);
	pkt_zero(out);
	if (et == ROCE_ETHERTYPE_VLAN) {
		const uint8_t *tag = hdr + ROCE_ETH_HDR_LEN;

		if (avail < ROCE_ETH_HDR_LEN + ROCE_VLAN_HDR_LEN + ROCE_IPV4_HDR_LEN +
				    ROCE_UDP_HDR_LEN + ROCE_BTH_LEN)
			return 0;
		out->n_vlans = 1;
		out->pcp = tag[0] >> 5;
		out->vlan_id = roce_get_be16(tag) & 0x0FFF;
		et = roce_get_be16(tag + 2);
		l3 += ROCE_VLAN_HDR_LEN;
	}
	ip = hdr + l3;
	if (et == ROCE_ETHERTYPE_IPV4) {
		uint32_t tot_len = roce_get_be16(ip + 2);
		uint8_t ttl = ip[8];

		if (ip[0] != 0x45 || ip[9] != ROCE_IPPROTO_UDP ||
		    (roce_get_be16(ip + 6) & (ROCE_IPV4_MF | ROCE_IPV4_FRAG_OFF_MASK)) != 0 ||
		    tot_len < ROCE_IPV4_HDR_LEN || tot_len > frame_len - l3)
			return 0;
		tc = ip[1];
		memcpy(out->src_ip, ip + 12, 4);
		memcpy(out->dst_ip, ip + 16, 4);
		out->ip_version = 4;
		out->ttl = ttl;
		l4 = l3 + ROCE_IPV4_HDR_LEN;
		ip_end = l3 + tot_len;
	} else if (et == ROCE_ETHERTYPE_IPV6) {
		if (avail < l3 + ROCE_IPV6_HDR_LEN + ROCE_UDP_HDR_LEN + ROCE_BTH_LEN)
			return 0;
		nxt = ip[6];
		l4 = l3 + ROCE_IPV6_HDR_LEN;
		ip_end = l4 + roce_get_be16(ip + 4);
		if ((ip[0] >> 4) != 6 || nxt != ROCE_IPPROTO_UDP || ip_end > frame_len)
			return 0;
		tc = (uint8_t)((ip[0] & 0x0F) << 4 | ip[1] >> 4);
		out->ip_version = 6;
		out->ttl = ip[7];
		memcpy(out->src_ip, ip + 8, 16);
		memcpy(out->dst_ip, ip + 24, 16);
	} else {
		return 0;
	}
	/* headers are read up to the smaller of the bytes at hand and the IP end */
	end = avail < ip_end ? avail : ip_end;
	udp = hdr + l4;
	bth = l4 + ROCE_UDP_HDR_LEN;
	if (bth + ROCE_BTH_LEN > end || roce_get_be16(udp + 2) != roce_port ||
	    roce_get_be16(udp + 4) != ip_end - l4)
		return 0;
	b = hdr + bth;
	ext = roce_opcode_ext[b[0]];
	ext_len = roce_opcode_ext_len_tab[b[0]];
	if (bth + ROCE_BTH_LEN + ext_len > end ||
	    ip_end - bth < ROCE_BTH_LEN + ext_len + ROCE_ICRC_LEN)
		return 0;
	room = ip_end - ROCE_ICRC_LEN - (bth + ROCE_BTH_LEN + ext_len);
	if (((b[1] >> ROCE_BTH_PADCNT_SHIFT) & 3) > room)
		return 0;
	out->ethertype = et;
	out->l3_off = (uint16_t)l3;
	out->l4_off = (uint16_t)l4;
	out->bth_off = (uint16_t)bth;
	out->dscp = tc >> 2;
	out->ecn = tc & 3;
	out->udp_sport = roce_get_be16(udp);
	out->udp_dport = roce_port;
	bth_fields(b, out);
	out->ext_len = (uint8_t)ext_len;
	if (ext_len != 0)
		ext_fields(ext, b + ROCE_BTH_LEN, out);
	out->payload_off = (uint16_t)(bth + ROCE_BTH_LEN + ext_len);
	out->icrc_off = (uint16_t)(ip_end - ROCE_ICRC_LEN);
	out->payload_len = (uint16_t)(room - out->padcnt);
	out->cls = ROCE_CLASS_ROCEV2;
	out->reason = ROCE_REASON_OK;
	return 1;
}

/* Every frame the fast path does not take (its own function: the fast path keeps its
 * registers). */
__attribute__((noinline)) enum roce_class
parse_general(const uint8_t *hdr, uint32_t avail, uint32_t frame_len, uint16_t roce_port,
	      struct roce_pkt *out)
{
	struct roce_cursor c;
	const uint8_t *eth;
	uint16_t et;

	pkt_zero(out);
	c.buf = hdr;
	c.off = 0;
	c.end = avail;

	eth = cursor_pull(&c, ROCE_ETH_HDR_LEN);
	if (eth == NULL)
		return pkt_done(out, ROCE_CLASS_OTHER, ROCE_REASON_TRUNC_ETH);
	et = roce_get_be16(eth + 12);
	while (et == ROCE_ETHERTYPE_VLAN || et == ROCE_ETHERTYPE_QINQ ||
			et == ROCE_ETHERTYPE_QINQ_OLD) {
		const uint8_t *tag;

		if (out->n_vlans == ROCE_MAX_VLANS)
			return pkt_done(out, ROCE_CLASS_OTHER, ROCE_REASON_TOO_MANY_VLANS);
		tag = cursor_pull(&c, ROCE_VLAN_HDR_LEN);
		if (tag == NULL)
			return pkt_done(out, ROCE_CLASS_OTHER, ROCE_REASON_TRUNC_VLAN);
		if (out->n_vlans == 0) {
			out->pcp = tag[0] >> 5;
			out->vlan_id = roce_get_be16(tag) & 0x0FFF;
		}
		out->n_vlans++;
		et = roce_get_be16(tag + 2);
	}
	out->ethertype = et;
	out->l3_off = (uint16_t)c.off;

	switch (et) {
	case ROCE_ETHERTYPE_IPV4:
		return parse_ipv4(&c, avail, frame_len, roce_port, out);
	case ROCE_ETHERTYPE_IPV6:
		return parse_ipv6(&c, avail, frame_len, roce_port, out);
	case ROCE_ETHERTYPE_ROCEV1:
		return parse_grh(&c, frame_len, out);
	case ROCE_ETHERTYPE_ARP:
		return pkt_done(out, ROCE_CLASS_ARP, ROCE_REASON_OK);
	case ROCE_ETHERTYPE_LLDP:
		return pkt_done(out, ROCE_CLASS_LLDP, ROCE_REASON_OK);
	case ROCE_ETHERTYPE_MACCTL:
		return parse_macctl(&c, out);
	default:
		return pkt_done(out, ROCE_CLASS_OTHER, ROCE_REASON_OK);
	}
}

enum roce_class
roce_parse_partial(const uint8_t *hdr, uint32_t avail, uint32_t frame_len, uint16_t roce_port,
	struct roce_pkt *out)
{
	/* Offsets are 16-bit: no Ethernet frame is longer (jumbo frames stop near 16 KB). */
	if (frame_len > UINT16_MAX)
		frame_len = UINT16_MAX;
	if (avail > frame_len)
		avail = frame_len;
	if (parse_fast(hdr, avail, frame_len, roce_port, out))
		return ROCE_CLASS_ROCEV2;
	return parse_general(hdr, avail, frame_len, roce_port, out);
}


enum roce_class
roce_parse(const uint8_t *frame, uint32_t len, uint16_t roce_port, struct roce_pkt *out)
{
	return roce_parse_partial(frame, len, len, roce_port, out);
}
