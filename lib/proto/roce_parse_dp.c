/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The datapath's partial parses (roce_parse_partial_dp(), _min(), _qp()): the fast path's
 * frames checked with loads only, fewer fields stored, untagged IPv4 with constant offsets
 * apart; every other frame goes to the general parser (parse_general(), roce_parse.c). Their
 * checks and fills shared with the parse stage's inline copy are in roce_parse_fast.h.
 */
#include <stddef.h>
#include <string.h>

#include "roce_proto.h"
#include "roce_internal.h"
#include "roce_parse_fast.h"
#include "roce_parse_priv.h"

/*
 * parse_fast()'s checks for roce_parse_partial_dp(), on the same frames (Ethernet, untagged or
 * one 802.1Q tag, IPv4 without options, not a fragment, or IPv6, UDP to the RoCE port, a BTH
 * and its extension headers within the bytes at hand, every length consistent). Returns 1 and
 * fills *h for such a frame, 0 for anything else (then the general parser runs from the
 * start). Loads only: nothing is stored in the parse result before every check has passed.
 */
static inline __attribute__((always_inline)) int
parse_fast_check(const uint8_t *hdr, uint32_t avail, uint32_t frame_len, uint16_t roce_port,
		 struct roce_fast_hdr *h)
{
	uint32_t l3 = ROCE_ETH_HDR_LEN, l4, ip_end;
	const uint8_t *ip;
	uint16_t et;

	/* the shortest frame taken here: Eth, IPv4, UDP, BTH */
	if (avail < ROCE_ETH_HDR_LEN + ROCE_IPV4_HDR_LEN + ROCE_UDP_HDR_LEN + ROCE_BTH_LEN)
		return 0;
	et = roce_get_be16(hdr + 12);
	h->n_vlans = 0;
	h->tci = 0;
	if (et == ROCE_ETHERTYPE_VLAN) {
		const uint8_t *tag = hdr + ROCE_ETH_HDR_LEN;

		if (avail < ROCE_ETH_HDR_LEN + ROCE_VLAN_HDR_LEN + ROCE_IPV4_HDR_LEN +
				    ROCE_UDP_HDR_LEN + ROCE_BTH_LEN)
			return 0;
		h->n_vlans = 1;
		h->tci = roce_get_be16(tag);
		et = roce_get_be16(tag + 2);
		l3 += ROCE_VLAN_HDR_LEN;
	}
	ip = hdr + l3;
	if (et == ROCE_ETHERTYPE_IPV4) {
		uint32_t tot_len = roce_get_be16(ip + 2);

		if (ip[0] != 0x45 || ip[9] != ROCE_IPPROTO_UDP ||
		    (roce_get_be16(ip + 6) & (ROCE_IPV4_MF | ROCE_IPV4_FRAG_OFF_MASK)) != 0 ||
		    tot_len < ROCE_IPV4_HDR_LEN || tot_len > frame_len - l3)
			return 0;
		h->tc = ip[1];
		l4 = l3 + ROCE_IPV4_HDR_LEN;
		ip_end = l3 + tot_len;
	} else if (et == ROCE_ETHERTYPE_IPV6) {
		if (avail < l3 + ROCE_IPV6_HDR_LEN + ROCE_UDP_HDR_LEN + ROCE_BTH_LEN)
			return 0;
		l4 = l3 + ROCE_IPV6_HDR_LEN;
		ip_end = l4 + roce_get_be16(ip + 4);
		if ((ip[0] >> 4) != 6 || ip[6] != ROCE_IPPROTO_UDP || ip_end > frame_len)
			return 0;
		h->tc = (uint8_t)((ip[0] & 0x0F) << 4 | ip[1] >> 4);
	} else {
		return 0;
	}
	return roce_fast_check_l4(hdr, avail, roce_port, l3, l4, ip_end, et, h);
}
/*
 * A frame parse_fast_check() took, for roce_parse_partial_qp(): roce_fast_fill_min()'s fields
 * and what names the packet within its QP: dst_ip (as the full parse leaves it), opcode,
 * transport, dest_qp and psn; and dp_only = 3.
 */
static inline __attribute__((always_inline)) void
parse_fast_fill_qp(const struct roce_fast_hdr *h, struct roce_pkt *out)
{
	roce_fast_fill_min(h, out);
	roce_fast_qp_fields(h, out);
	out->dp_only = 3;
}

/*
 * The datapath's partial parses: @p level is the result's dp_only (1 roce_parse_partial_dp(),
 * 2 _min(), 3 _qp()), the fill of each (parse_fast_fill_*()) the only difference.
 */
static inline __attribute__((always_inline)) void
parse_fast_fill_level(const struct roce_fast_hdr *h, uint16_t roce_port, struct roce_pkt *out,
		      const unsigned int level)
{
	if (level == 1)
		roce_fast_fill_dp(h, roce_port, out);
	else if (level == 2)
		roce_fast_fill_min(h, out);
	else
		parse_fast_fill_qp(h, out);
}

/* A frame that is not untagged IPv4 (its own function: the untagged IPv4 path needs fewer
 * registers); the level is a value here, not a constant. */
static __attribute__((noinline)) enum roce_class
parse_level_other(const uint8_t *hdr, uint32_t avail, uint32_t frame_len, uint16_t roce_port,
		  struct roce_pkt *out, unsigned int level)
{
	struct roce_fast_hdr h;

	if (parse_fast_check(hdr, avail, frame_len, roce_port, &h)) {
		if (level == 1)
			parse_fast_fill_level(&h, roce_port, out, 1);
		else if (level == 2)
			parse_fast_fill_level(&h, roce_port, out, 2);
		else
			parse_fast_fill_level(&h, roce_port, out, 3);
		return ROCE_CLASS_ROCEV2;
	}
	return parse_general(hdr, avail, frame_len, roce_port, out);
}

static inline __attribute__((always_inline)) enum roce_class
parse_partial_level(const uint8_t *hdr, uint32_t avail, uint32_t frame_len, uint16_t roce_port,
		    struct roce_pkt *out, const unsigned int level)
{
	struct roce_fast_hdr h;

	if (frame_len > UINT16_MAX)
		frame_len = UINT16_MAX;
	if (avail > frame_len)
		avail = frame_len;
	if (!roce_fast_is_ipv4(hdr, avail))
		return parse_level_other(hdr, avail, frame_len, roce_port, out, level);
	/* its own copy of the check and the fill: every offset a constant */
	if (roce_fast_check_ipv4(hdr, avail, frame_len, roce_port, &h)) {
		parse_fast_fill_level(&h, roce_port, out, level);
		return ROCE_CLASS_ROCEV2;
	}
	return parse_general(hdr, avail, frame_len, roce_port, out);
}

enum roce_class
roce_parse_partial_dp(const uint8_t *hdr, uint32_t avail, uint32_t frame_len,
		      uint16_t roce_port, struct roce_pkt *out)
{
	return parse_partial_level(hdr, avail, frame_len, roce_port, out, 1);
}

enum roce_class
roce_parse_partial_min(const uint8_t *hdr, uint32_t avail, uint32_t frame_len,
		       uint16_t roce_port, struct roce_pkt *out)
{
	return parse_partial_level(hdr, avail, frame_len, roce_port, out, 2);
}

enum roce_class
roce_parse_partial_qp(const uint8_t *hdr, uint32_t avail, uint32_t frame_len,
		      uint16_t roce_port, struct roce_pkt *out)
{
	return parse_partial_level(hdr, avail, frame_len, roce_port, out, 3);
}
