/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The parser's fast path for the commonest frame (untagged IPv4 without options, UDP to the
 * RoCE port, a BTH and its extension headers, every length consistent) as inline functions,
 * so that the parse stage's per-packet loop takes the class-only parse
 * (roce_parse_partial_min_inline()) and the datapath's (roce_parse_partial_dp_inline(), a
 * fabric's) without a call; roce_parse_dp.c uses the same functions for
 * every partial parse, so there is one copy of each check. Internal to lib/proto and
 * lib/stages/parse.c.
 */
#ifndef ROCE_PARSE_FAST_H
#define ROCE_PARSE_FAST_H

#include <stdbool.h>
#include <string.h>

#include "roce_proto.h"
#include "roce_internal.h"

/* roce_ext_len() of a set as a constant expression, for roce_opcode_ext_len_tab[]. */
#define ROCE_EXT_LEN_OF(e) \
	((((e) & ROCE_EXT_RDETH) ? ROCE_RDETH_LEN : 0) + \
	 (((e) & ROCE_EXT_DETH) ? ROCE_DETH_LEN : 0) + \
	 (((e) & ROCE_EXT_RETH) ? ROCE_RETH_LEN : 0) + \
	 (((e) & ROCE_EXT_ATOMICETH) ? ROCE_ATOMICETH_LEN : 0) + \
	 (((e) & ROCE_EXT_AETH) ? ROCE_AETH_LEN : 0) + \
	 (((e) & ROCE_EXT_ATOMICACKETH) ? ROCE_ATOMICACKETH_LEN : 0) + \
	 (((e) & ROCE_EXT_IMMDT) ? ROCE_IMMDT_LEN : 0) + \
	 (((e) & ROCE_EXT_IETH) ? ROCE_IETH_LEN : 0) + \
	 (((e) & ROCE_EXT_CNP) ? ROCE_CNP_RSVD_LEN : 0))

/* roce_ext_len(roce_opcode_ext[op]) per opcode (roce_names.c, from the same list): the
 * parser's one load per packet, where the set and then its length would be two dependent
 * ones. */
extern const uint8_t roce_opcode_ext_len_tab[256];

/* What the fast path's checks found out about a frame, for the fills below. */
struct roce_fast_hdr {
	const uint8_t *ip, *udp, *b; /* IP, UDP and BTH headers */
	uint32_t l3, l4, bth, ip_end, ext_len, room;
	uint16_t et, tci;            /* inner EtherType, outer VLAN TCI */
	uint8_t n_vlans, tc, padcnt; /* tc: IP traffic class (DSCP << 2 | ECN) */
};

/* Eight frame bytes as the uint64_t that memcpy() loads them into. */
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define ROCE_MEM8(a, b, c, d, e, f, g, h) \
	((uint64_t)(a) | (uint64_t)(b) << 8 | (uint64_t)(c) << 16 | (uint64_t)(d) << 24 | \
	 (uint64_t)(e) << 32 | (uint64_t)(f) << 40 | (uint64_t)(g) << 48 | (uint64_t)(h) << 56)
#else
#define ROCE_MEM8(a, b, c, d, e, f, g, h) \
	((uint64_t)(h) | (uint64_t)(g) << 8 | (uint64_t)(f) << 16 | (uint64_t)(e) << 24 | \
	 (uint64_t)(d) << 32 | (uint64_t)(c) << 40 | (uint64_t)(b) << 48 | (uint64_t)(a) << 56)
#endif

static inline uint64_t
roce_load8(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

/*
 * Is the frame untagged IPv4 with room for the headers roce_fast_check_ipv4() reads, and are
 * its fixed fields those of the fast path? Two masked compares of 8 bytes each: bytes 12-14
 * EtherType 0x0800 and version 4 / IHL 5; bytes 20-21 no MF and no fragment offset (the DF
 * and reserved bits free), byte 23 protocol UDP.
 */
static inline int
roce_fast_is_ipv4(const uint8_t *hdr, uint32_t avail)
{
	const uint64_t m0 = ROCE_MEM8(0xFF, 0xFF, 0xFF, 0, 0, 0, 0, 0);
	const uint64_t v0 = ROCE_MEM8(ROCE_ETHERTYPE_IPV4 >> 8, ROCE_ETHERTYPE_IPV4 & 0xFF, 0x45,
				      0, 0, 0, 0, 0);
	const uint64_t m1 = ROCE_MEM8((ROCE_IPV4_MF | ROCE_IPV4_FRAG_OFF_MASK) >> 8,
				      (ROCE_IPV4_MF | ROCE_IPV4_FRAG_OFF_MASK) & 0xFF, 0, 0xFF,
				      0, 0, 0, 0);
	const uint64_t v1 = ROCE_MEM8(0, 0, 0, ROCE_IPPROTO_UDP, 0, 0, 0, 0);

	return avail >= ROCE_ETH_HDR_LEN + ROCE_IPV4_HDR_LEN + ROCE_UDP_HDR_LEN + ROCE_BTH_LEN &&
	       (roce_load8(hdr + 12) & m0) == v0 && (roce_load8(hdr + 20) & m1) == v1;
}

/*
 * The checks after the IP header, for parse_fast_check() (roce_parse_dp.c) and
 * roce_fast_check_ipv4(): UDP to the RoCE port with the length the IP header leaves it, a BTH
 * and its extension headers within the smaller of the bytes at hand and the IP end, the pad
 * within the payload. Returns 1 and fills the rest of *h, or 0. Inline: with the offsets of
 * untagged IPv4 as constants, they fold.
 */
static inline __attribute__((always_inline)) int
roce_fast_check_l4(const uint8_t *hdr, uint32_t avail, uint16_t roce_port, uint32_t l3,
		   uint32_t l4, uint32_t ip_end, uint16_t et, struct roce_fast_hdr *h)
{
	const uint32_t end = avail < ip_end ? avail : ip_end, bth = l4 + ROCE_UDP_HDR_LEN;
	const uint8_t *udp = hdr + l4, *b = hdr + bth;
	uint32_t ext_len;

	if (bth + ROCE_BTH_LEN > end || roce_get_be16(udp + 2) != roce_port ||
	    roce_get_be16(udp + 4) != ip_end - l4)
		return 0;
	ext_len = roce_opcode_ext_len_tab[b[0]];
	if (bth + ROCE_BTH_LEN + ext_len > end ||
	    ip_end - bth < ROCE_BTH_LEN + ext_len + ROCE_ICRC_LEN)
		return 0;
	h->room = ip_end - ROCE_ICRC_LEN - (bth + ROCE_BTH_LEN + ext_len);
	h->padcnt = (b[1] >> ROCE_BTH_PADCNT_SHIFT) & 3;
	if (h->padcnt > h->room)
		return 0;
	h->ip = hdr + l3;
	h->udp = udp;
	h->b = b;
	h->l3 = l3;
	h->l4 = l4;
	h->bth = bth;
	h->ip_end = ip_end;
	h->ext_len = ext_len;
	h->et = et;
	return 1;
}

/*
 * parse_fast_check() for untagged IPv4 (the caller, roce_fast_is_ipv4(), saw EtherType
 * 0x0800, version 4 without options, not a fragment, UDP, and avail >= Eth + IPv4 + UDP +
 * BTH): the same checks with every offset a constant. An IP total length below 20 fails the
 * BTH's bounds (ip_end < the BTH's end).
 */
static inline __attribute__((always_inline)) int
roce_fast_check_ipv4(const uint8_t *hdr, uint32_t avail, uint32_t frame_len,
		     uint16_t roce_port, struct roce_fast_hdr *h)
{
	const uint32_t tot_len = roce_get_be16(hdr + ROCE_ETH_HDR_LEN + 2);

	if (tot_len > frame_len - ROCE_ETH_HDR_LEN)
		return 0;
	h->n_vlans = 0;
	h->tci = 0;
	h->tc = hdr[ROCE_ETH_HDR_LEN + 1];
	return roce_fast_check_l4(hdr, avail, roce_port, ROCE_ETH_HDR_LEN,
				  ROCE_ETH_HDR_LEN + ROCE_IPV4_HDR_LEN, ROCE_ETH_HDR_LEN + tot_len,
				  ROCE_ETHERTYPE_IPV4, h);
}

/* The fields every fill stores: class, VLAN, EtherType, l3_off, IP version and traffic class
 * (what the switch itself reads: priority, ECN marking). */
static inline __attribute__((always_inline)) void
roce_fast_class_fields(const struct roce_fast_hdr *h, struct roce_pkt *out)
{
	out->cls = ROCE_CLASS_ROCEV2;
	out->reason = ROCE_REASON_OK;
	out->n_vlans = h->n_vlans;
	out->pcp = (uint8_t)(h->tci >> 13);
	out->vlan_id = h->tci & 0x0FFF;
	out->ethertype = h->et;
	out->l3_off = (uint16_t)h->l3;
	out->ip_version = h->et == ROCE_ETHERTYPE_IPV4 ? 4 : 6;
	out->dscp = h->tc >> 2;
	out->ecn = h->tc & 3;
}

/*
 * A frame parse_fast_check() took, for roce_parse_partial_min(): the class and what the
 * switch itself reads of it (priority, ECN marking): cls, reason, n_vlans, pcp, vlan_id,
 * ethertype, l3_off, ip_version, dscp, ecn; and dp_only = 2. Nothing else of *out is written.
 */
static inline __attribute__((always_inline)) void
roce_fast_fill_min(const struct roce_fast_hdr *h, struct roce_pkt *out)
{
	roce_fast_class_fields(h, out);
	out->dp_only = 2;
}

/* Four frame bytes, big-endian, as they lie (memcpy: no alignment assumed, one load; the
 * parser's, roce_parse.c, too). */
static inline uint32_t
roce_fast_be32(const uint8_t *b)
{
	uint32_t v;

	memcpy(&v, b, 4);
	return __builtin_bswap32(v);
}

/* The fields both the full and the datapath fill store: roce_fast_class_fields()', the other
 * offsets and lengths, TTL, UDP ports. */
static inline __attribute__((always_inline)) void
roce_fast_common_fields(const struct roce_fast_hdr *h, uint16_t roce_port, struct roce_pkt *out)
{
	uint8_t ttl = h->et == ROCE_ETHERTYPE_IPV4 ? h->ip[8] : h->ip[7];
	uint16_t sport = roce_get_be16(h->udp);

	roce_fast_class_fields(h, out);
	out->l4_off = (uint16_t)h->l4;
	out->bth_off = (uint16_t)h->bth;
	out->payload_off = (uint16_t)(h->bth + ROCE_BTH_LEN + h->ext_len);
	out->icrc_off = (uint16_t)(h->ip_end - ROCE_ICRC_LEN);
	out->payload_len = (uint16_t)(h->room - h->padcnt);
	out->ttl = ttl;
	out->udp_sport = sport;
	out->udp_dport = roce_port;
}

/* What names a packet within its QP, as the full parse leaves it: dst_ip (IPv4 in the first 4
 * bytes, zeros after), opcode, transport, dest_qp and psn. Both the dp and the qp fills. */
static inline __attribute__((always_inline)) void
roce_fast_qp_fields(const struct roce_fast_hdr *h, struct roce_pkt *out)
{
	uint32_t w0 = roce_fast_be32(h->b), w1 = roce_fast_be32(h->b + 4), w2 = roce_fast_be32(h->b + 8);

	if (h->et == ROCE_ETHERTYPE_IPV4) {
		memcpy(out->dst_ip, h->ip + 16, 4);
		memset(out->dst_ip + 4, 0, 12);
	} else {
		memcpy(out->dst_ip, h->ip + 24, 16);
	}
	out->opcode = (uint8_t)(w0 >> 24);
	out->transport = (uint8_t)(w0 >> 29);
	out->dest_qp = w1 & 0xFFFFFF;
	out->psn = w2 & 0xFFFFFF;
}

/*
 * A frame parse_fast_check() took, for roce_parse_partial_dp(): only the fields its header
 * lists (those of parse_fast_fill() in the first 24 bytes, the addresses, the UDP ports,
 * opcode, transport, DestQP and PSN), and dp_only = 1; nothing else of *out is written.
 */
static inline __attribute__((always_inline)) void
roce_fast_fill_dp(const struct roce_fast_hdr *h, uint16_t roce_port, struct roce_pkt *out)
{
	roce_fast_common_fields(h, roce_port, out);
	/* the source address as the full parse leaves it, as roce_fast_qp_fields() the destination */
	if (h->et == ROCE_ETHERTYPE_IPV4) {
		memcpy(out->src_ip, h->ip + 12, 4);
		memset(out->src_ip + 4, 0, 12);
	} else {
		memcpy(out->src_ip, h->ip + 8, 16);
	}
	roce_fast_qp_fields(h, out);
	out->dp_only = 1;
}

/*
 * Whether the inline parses below take the frame: untagged IPv4 that passes every check. The
 * partial parses they stand for clamp frame_len to 65535 and avail to frame_len first: frames
 * that need neither are the same without; the others go to them.
 */
static inline __attribute__((always_inline)) bool
roce_fast_inline_takes(const uint8_t *hdr, uint32_t avail, uint32_t frame_len,
		       uint16_t roce_port, struct roce_fast_hdr *h)
{
	return __builtin_expect(frame_len <= UINT16_MAX && avail <= frame_len &&
				roce_fast_is_ipv4(hdr, avail) &&
				roce_fast_check_ipv4(hdr, avail, frame_len, roce_port, h), 1);
}

/**
 * roce_parse_partial_dp() with its commonest frame inline, as roce_parse_partial_min_inline()
 * below: the same result for every frame.
 */
static inline __attribute__((always_inline)) enum roce_class
roce_parse_partial_dp_inline(const uint8_t *hdr, uint32_t avail, uint32_t frame_len,
			     uint16_t roce_port, struct roce_pkt *out)
{
	struct roce_fast_hdr h;

	if (roce_fast_inline_takes(hdr, avail, frame_len, roce_port, &h)) {
		roce_fast_fill_dp(&h, roce_port, out);
		return ROCE_CLASS_ROCEV2;
	}
	return roce_parse_partial_dp(hdr, avail, frame_len, roce_port, out);
}

/**
 * roce_parse_partial_min() with its commonest frame inline: the same result for every frame
 * (anything but untagged IPv4 that passes every check goes to roce_parse_partial_min(), which
 * clamps the lengths and checks again from the start).
 */
static inline __attribute__((always_inline)) enum roce_class
roce_parse_partial_min_inline(const uint8_t *hdr, uint32_t avail, uint32_t frame_len,
			      uint16_t roce_port, struct roce_pkt *out)
{
	struct roce_fast_hdr h;

	if (roce_fast_inline_takes(hdr, avail, frame_len, roce_port, &h)) {
		roce_fast_fill_min(&h, out);
		return ROCE_CLASS_ROCEV2;
	}
	return roce_parse_partial_min(hdr, avail, frame_len, roce_port, out);
}

#endif /* ROCE_PARSE_FAST_H */
