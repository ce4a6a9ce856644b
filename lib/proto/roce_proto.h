/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lib/proto: RoCE wire formats. Parse, ICRC, builders, header rewriters, QP pairing.
 * Pure functions of bytes: no EAL, no allocation on the datapath, no globals.
 *
 * This umbrella header declares the parser and the ICRC routines and includes the builders
 * (roce_build.h), the rewriters (roce_rewrite.h) and the QP pairing table (roce_qpmap.h).
 * The rte_mbuf variants live in roce_mbuf.h so that this header needs no DPDK include.
 */
#ifndef ROCE_PROTO_H
#define ROCE_PROTO_H

#include <stddef.h>
#include <stdint.h>

#include "roce_wire.h"

#ifdef __cplusplus
extern "C" {
#endif

/** What a frame is. */
enum roce_class {
	ROCE_CLASS_ROCEV2,	/**< UDP to the RoCE port, BTH and ICRC in place */
	ROCE_CLASS_ROCEV1,	/**< EtherType 0x8915: GRH + BTH */
	ROCE_CLASS_ARP,
	ROCE_CLASS_IPV4_OTHER,	/**< any IPv4 that is not RoCEv2 (also malformed IPv4) */
	ROCE_CLASS_IPV6_ND,	/**< ICMPv6 router/neighbour solicitation/advertisement, redirect */
	ROCE_CLASS_IPV6_OTHER,	/**< any other IPv6 (also malformed IPv6) */
	ROCE_CLASS_LLDP,
	ROCE_CLASS_MAC_CONTROL,	/**< EtherType 0x8808: PAUSE, PFC */
	ROCE_CLASS_OTHER,	/**< any other EtherType, and frames too short to tell */
	/** Looked like RoCE (UDP dport = RoCE port or EtherType 0x8915) but malformed: see reason. */
	ROCE_CLASS_INVALID,
	ROCE_CLASS_MAX
};

/*
 * Why a frame is malformed (ROCE_REASON_OK if it is not). Any class may carry a reason other
 * than OK: a truncated IPv4 header gives IPV4_OTHER + TRUNC_IP (nothing says it was RoCE),
 * a RoCEv2 packet whose UDP length lies gives INVALID + BAD_UDP_LEN.
 */
#define ROCE_FOREACH_REASON(_) \
	_(OK, "ok") \
	_(TRUNC_ETH, "truncated_eth") \
	_(TRUNC_VLAN, "truncated_vlan") \
	_(TOO_MANY_VLANS, "too_many_vlans") \
	_(TRUNC_MACCTL, "truncated_mac_control") \
	_(TRUNC_IP, "truncated_ip") \
	_(BAD_IP_VERSION, "bad_ip_version") \
	_(BAD_IP_HLEN, "bad_ip_header_length") \
	_(BAD_IP_LEN, "bad_ip_length") \
	_(IP_FRAGMENT, "ip_fragment") \
	_(TRUNC_L4, "truncated_l4") \
	_(TRUNC_UDP, "truncated_udp") \
	_(BAD_UDP_LEN, "bad_udp_length") \
	_(TRUNC_GRH, "truncated_grh") \
	_(BAD_GRH_NEXT_HDR, "bad_grh_next_header") \
	_(BAD_GRH_LEN, "bad_grh_payload_length") \
	_(TRUNC_BTH, "truncated_bth") \
	_(TRUNC_ICRC, "truncated_icrc") \
	_(TRUNC_EXT_HDR, "truncated_ext_header") \
	_(BAD_PAD, "bad_pad")

#define ROCE_REASON_ENUM_(n, s) ROCE_REASON_##n,
/** Malformation reasons: ROCE_REASON_OK, ROCE_REASON_TRUNC_ETH, ... */
enum roce_reason {
	ROCE_FOREACH_REASON(ROCE_REASON_ENUM_)
	ROCE_REASON_MAX
};
#undef ROCE_REASON_ENUM_

/** Compact parse result. Offsets count from the first byte of the frame. */
struct roce_pkt {
	uint8_t cls;		/**< enum roce_class */
	uint8_t reason;		/**< enum roce_reason */
	uint8_t n_vlans;	/**< 0..2 */
	uint8_t pcp;		/**< outermost 802.1p PCP, 0 if untagged */
	uint16_t vlan_id;	/**< outermost VLAN ID, 0 if untagged */
	uint16_t ethertype;	/**< inner EtherType after the tags */
	uint16_t l3_off;	/**< IP header (or GRH for RoCEv1) */
	uint16_t l4_off;	/**< UDP/TCP header; BTH for RoCEv1 */
	uint16_t bth_off;
	uint16_t payload_off;	/**< first byte after the BTH and its extension headers */
	uint16_t icrc_off;
	uint16_t payload_len;	/**< bytes between the extension headers and the pad */
	uint8_t ip_version;	/**< 4, 6, or 0 (RoCEv1 GRH: 6 as well, as it has IPv6's layout) */
	uint8_t dscp;
	uint8_t ecn;
	uint8_t ttl;		/**< IPv4 TTL or IPv6 hop limit */
	uint8_t src_ip[16];	/**< IPv4 in the first 4 bytes, rest zero */
	uint8_t dst_ip[16];
	uint16_t udp_sport;	/**< UDP or TCP ports, also for non-RoCE IP */
	uint16_t udp_dport;
	uint8_t opcode;
	uint8_t transport;	/**< opcode >> 5: 0 RC, 1 UC, 2 RD, 3 UD, 4 CNP */
	uint8_t se;
	uint8_t migreq;
	uint8_t padcnt;
	uint8_t tver;
	uint8_t fecn;
	uint8_t becn;
	uint8_t ackreq;
	uint8_t dp_only;	/**< 1: roce_parse_partial_dp() filled only its fields, 2:
				 * roce_parse_partial_min(), 3: roce_parse_partial_qp() (see there);
				 * 0: the whole result */
	uint16_t pkey;
	uint32_t dest_qp;
	uint32_t psn;
	uint8_t has_aeth;
	uint8_t aeth_kind;	/**< enum roce_aeth_kind */
	uint8_t aeth_code;	/**< credit count, RNR timer or NAK code */
	uint8_t aeth_syndrome;	/**< the whole syndrome byte */
	uint32_t msn;
	uint8_t has_reth;
	uint8_t has_imm;
	uint8_t has_deth;
	uint8_t has_ieth;	/**< SEND_*_WITH_INVALIDATE: the IETH R_Key is in imm */
	uint8_t has_atomiceth;	/**< COMPARE_SWAP, FETCH_ADD */
	uint8_t ext_len;	/**< bytes of extension headers between BTH and payload */
	uint64_t reth_va;
	uint32_t reth_rkey;
	uint32_t reth_len;
	uint32_t imm;		/**< ImmDt, or the IETH R_Key of a SEND_*_WITH_INVALIDATE */
	uint32_t deth_src_qp;	/**< UD and RD */
	uint32_t deth_qkey;
	uint64_t atomic_va;	/**< AtomicETH */
	uint32_t atomic_rkey;
	uint64_t atomic_swap_add;
	uint64_t atomic_compare;
	/* MAC control */
	uint16_t macctl_opcode;
	uint16_t pfc_enable;
	uint16_t pause_quanta[8];	/**< PAUSE: quanta in [0]; PFC: one per priority */
};

/**
 * Direction-dependent hash of a parsed packet's addresses, ports and DestQP, stable across
 * runs. Computed on demand: the parser does not spend it on every packet.
 */
uint32_t roce_pkt_flow_hash(const struct roce_pkt *p);

/**
 * Parse an Ethernet frame (without FCS). roce_port is the UDP destination port that means
 * RoCEv2 (normally 4791). Fills *out (all of it) and returns out->cls. Reads nothing outside
 * [frame, frame + len), whatever the bytes claim.
 */
enum roce_class roce_parse(const uint8_t *frame, uint32_t len, uint16_t roce_port,
		struct roce_pkt *out);

/**
 * Parse when only the first avail bytes of a frame of frame_len bytes are at hand (e.g. the
 * first segment of an mbuf). Headers must lie within avail; lengths are checked against
 * frame_len. roce_parse(f, len, ...) is roce_parse_partial(f, len, len, ...).
 */
enum roce_class roce_parse_partial(const uint8_t *hdr, uint32_t avail, uint32_t frame_len,
		uint16_t roce_port, struct roce_pkt *out);

/**
 * roce_parse_partial() for a datapath that reads only some of the result. A frame the
 * parser's fast path takes (well-formed RoCEv2 over Ethernet, untagged or one 802.1Q tag,
 * IPv4 without options or IPv6: cls ROCE_CLASS_ROCEV2, reason OK) gets only these fields,
 * each equal to what roce_parse_partial() gives: cls, reason, n_vlans, pcp, vlan_id,
 * ethertype, l3_off, l4_off, bth_off, payload_off, icrc_off, payload_len, ip_version, dscp,
 * ecn, ttl, src_ip, dst_ip, udp_sport, udp_dport, opcode, transport, dest_qp, psn; and
 * dp_only = 1. Every
 * other field keeps what *out held before: a caller that reads one of them must use
 * roce_parse_partial(). Any other frame gets the whole result (dp_only = 0).
 */
enum roce_class roce_parse_partial_dp(const uint8_t *hdr, uint32_t avail, uint32_t frame_len,
		uint16_t roce_port, struct roce_pkt *out);

/**
 * roce_parse_partial_dp() for a datapath that reads only the class and what a switch needs to
 * queue and ECN-mark the frame: on the same fast path, only cls, reason, n_vlans, pcp,
 * vlan_id, ethertype, l3_off, ip_version, dscp and ecn, and dp_only = 2 (every other field
 * keeps what *out held). Any other frame gets the whole result (dp_only = 0).
 */
enum roce_class roce_parse_partial_min(const uint8_t *hdr, uint32_t avail, uint32_t frame_len,
		uint16_t roce_port, struct roce_pkt *out);

/**
 * roce_parse_partial_min() and what names the packet within its QP (a reorder stage): also
 * dst_ip, opcode, transport, dest_qp and psn, each as roce_parse_partial() gives it, and
 * dp_only = 3. Any other frame gets the whole result (dp_only = 0).
 */
enum roce_class roce_parse_partial_qp(const uint8_t *hdr, uint32_t avail, uint32_t frame_len,
		uint16_t roce_port, struct roce_pkt *out);

/** Name of a class ("rocev2", "invalid", ...); "unknown" if out of range. */
const char *roce_class_name(enum roce_class c);

/** Name of a reason ("ok", "truncated_eth", ...); "unknown" if out of range. */
const char *roce_reason_name(enum roce_reason r);

/** Name of a BTH opcode ("RC_SEND_FIRST", "UD_SEND_ONLY", "CNP", ...); "UNKNOWN" if undefined. */
const char *roce_opcode_name(uint8_t opcode);

/** Return 1 if the opcode is defined for its transport (RC, UC, RD, UD or the CNP), else 0. */
int roce_opcode_is_valid(uint8_t opcode);

/** Length of the extension headers between the BTH and the payload for an opcode (0 if undefined). */
uint32_t roce_opcode_ext_len(uint8_t opcode);

/**
 * ICRC of a parsed RoCEv2 (or RoCEv1) frame, as a host integer: the wire bytes are its
 * little-endian encoding. Returns 0 if p is not a well-formed RoCE packet of this frame.
 */
uint32_t roce_icrc_compute(const uint8_t *frame, uint32_t len, const struct roce_pkt *p);

/** Return 1 if the ICRC stored in a parsed RoCE frame is right, 0 if not (or not RoCE). */
int roce_icrc_verify(const uint8_t *frame, uint32_t len, const struct roce_pkt *p);

/** Recompute the ICRC of a parsed RoCE frame and store it; does nothing if p is not RoCE. */
void roce_icrc_update(uint8_t *frame, uint32_t len, const struct roce_pkt *p);

/**
 * Update the stored ICRC of a parsed RoCE frame for n bytes at frame offset off that changed
 * from old_bytes to new_bytes (the frame may hold either), without reading the rest of the
 * frame: the CRC is linear, so the ICRC changes by the CRC of the difference moved to the end
 * of the covered bytes (roce_crc32_shift()). Masked bits (ECN, TTL, UDP checksum, ...) and
 * bytes outside the IP header .. ICRC range do not count. A right ICRC stays right and a wrong
 * one stays wrong by the same error. Does nothing if p is not RoCE.
 */
void roce_icrc_patch(uint8_t *frame, uint32_t len, const struct roce_pkt *p, uint32_t off,
		const uint8_t *old_bytes, const uint8_t *new_bytes, unsigned int n);

/**
 * Running CRC state after the 8 0xFF bytes and the masked IP, UDP and BTH headers of a parsed
 * RoCE frame whose first avail bytes are at hdr; feed the rest (bth_off + 12 .. icrc_off) to
 * roce_crc32_update() and invert to get the ICRC. Returns -EINVAL if p is not RoCE.
 */
int roce_icrc_begin(const uint8_t *hdr, uint32_t avail, const struct roce_pkt *p,
		uint32_t *state);

/** IPv4 header checksum of hdr_len bytes (the stored checksum field is skipped), as stored. */
uint16_t roce_ipv4_cksum(const uint8_t *ip_hdr, uint32_t hdr_len);

/**
 * UDP checksum (RFC 768, pseudo-header included, 0 sent as 0xFFFF) of a parsed frame with a
 * whole UDP header, over the UDP length; the stored checksum field is skipped.
 */
uint16_t roce_udp_cksum(const uint8_t *frame, const struct roce_pkt *p);

#ifdef __cplusplus
}
#endif

#include "roce_build.h"
#include "roce_rewrite.h"
#include "roce_qpmap.h"

#endif /* ROCE_PROTO_H */
