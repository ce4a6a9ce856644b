/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * In-place header rewriters on a frame parsed by roce_parse() into p. They keep p in step
 * with the frame and return 0, or -EINVAL if p does not have the header they change.
 * Fields masked out of the ICRC (ECN, DSCP, TTL, FECN/BECN) only need the IPv4 checksum
 * fixed (RFC 1624 incremental update); the others recompute the ICRC.
 */
#ifndef ROCE_REWRITE_H
#define ROCE_REWRITE_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct roce_pkt;

/** Set the ECN field (0..3) of an IPv4/IPv6 header (or RoCEv1 GRH); the ICRC stays valid. */
int roce_set_ecn(uint8_t *frame, struct roce_pkt *p, uint8_t ecn);

/** Set the DSCP (0..63) of an IPv4/IPv6 header (or RoCEv1 GRH); the ICRC stays valid. */
int roce_set_dscp(uint8_t *frame, struct roce_pkt *p, uint8_t dscp);

/** Set the IPv4 TTL or IPv6 hop limit; the ICRC stays valid. */
int roce_set_ttl(uint8_t *frame, struct roce_pkt *p, uint8_t ttl);

/** Set or clear the BTH FECN and BECN bits (masked out of the ICRC, which stays valid). */
int roce_set_fecn_becn(uint8_t *frame, struct roce_pkt *p, uint8_t fecn, uint8_t becn);

/**
 * Set the UDP source port of a RoCEv2 frame; fixes a nonzero UDP checksum and recomputes the
 * ICRC over the whole frame (so a wrong ICRC comes out right). roce_patch_udp_sport() is the
 * datapath version.
 */
int roce_set_udp_sport(uint8_t *frame, uint32_t len, struct roce_pkt *p, uint16_t port);

/**
 * Set the UDP source port of a RoCEv2 frame as a switch that re-stamps the ICRC would: the
 * ICRC and a nonzero UDP checksum are updated for the two changed bytes only
 * (roce_icrc_patch(), tens of ns whatever the length). A right ICRC stays right; a wrong one
 * stays wrong by the same error, unlike roce_set_udp_sport().
 */
int roce_patch_udp_sport(uint8_t *frame, uint32_t len, struct roce_pkt *p, uint16_t port);

/**
 * Replace the IP addresses (4 or 16 bytes each per p->ip_version; NULL keeps one) of a RoCEv2
 * frame; fixes the IPv4 header checksum, a nonzero UDP checksum and the ICRC.
 */
int roce_set_ip_addrs(uint8_t *frame, uint32_t len, struct roce_pkt *p, const uint8_t *src_ip,
		const uint8_t *dst_ip);

/** Invert the stored ICRC of a RoCE frame so that the receiving NIC drops it. */
int roce_corrupt_icrc(uint8_t *frame, uint32_t len, const struct roce_pkt *p);

/** RFC 1624 eqn. 3: checksum after one 16-bit word of the summed data changes from old to new. */
static inline uint16_t
roce_cksum_adjust(uint16_t cksum, uint16_t old_word, uint16_t new_word)
{
	uint32_t sum = (uint32_t)(uint16_t)~cksum + (uint16_t)~old_word + new_word;

	sum = (sum & 0xFFFF) + (sum >> 16);
	sum = (sum & 0xFFFF) + (sum >> 16);
	return (uint16_t)~sum;
}

#ifdef __cplusplus
}
#endif

#endif /* ROCE_REWRITE_H */
