/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rte_mbuf variants of the parser and the ICRC routines, aware of multi-segment mbufs.
 * Headers that straddle segments are copied to a small stack buffer; payload is read in
 * place, segment by segment. No EAL call is made: these work on any well-formed mbuf chain.
 */
#ifndef ROCE_MBUF_H
#define ROCE_MBUF_H

#include <stdint.h>

#include <rte_mbuf.h>

#include "roce_proto.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Most bytes the parser reads from the start of a frame (2 tags, IPv4 options, 48 B of
 * extension headers); roce_mbuf.c checks it against lib/proto's own constant. */
#define ROCE_PARSE_MAX_HDR 150

/** roce_parse_mbuf() for a chain whose headers straddle segments (copied to the stack). */
enum roce_class roce_parse_mbuf_chain(const struct rte_mbuf *m, uint16_t roce_port,
		struct roce_pkt *out);

/** Parse the frame in an mbuf chain (pkt_len bytes, no FCS); same contract as roce_parse(). */
static inline enum roce_class
roce_parse_mbuf(const struct rte_mbuf *m, uint16_t roce_port, struct roce_pkt *out)
{
	/* the parser reads at most ROCE_PARSE_MAX_HDR bytes: in place when they are in the
	 * first segment (inline: every packet takes this way) */
	uint32_t want = m->pkt_len < ROCE_PARSE_MAX_HDR ? m->pkt_len : ROCE_PARSE_MAX_HDR;

	if (m->data_len >= want)
		return roce_parse_partial(rte_pktmbuf_mtod(m, const uint8_t *), m->data_len,
					  m->pkt_len, roce_port, out);
	return roce_parse_mbuf_chain(m, roce_port, out);
}

/** ICRC of a parsed RoCE frame in an mbuf chain (0 if p is not RoCE). */
uint32_t roce_icrc_compute_mbuf(const struct rte_mbuf *m, const struct roce_pkt *p);

/** Return 1 if the ICRC stored in a parsed RoCE frame in an mbuf chain is right, else 0. */
int roce_icrc_verify_mbuf(const struct rte_mbuf *m, const struct roce_pkt *p);

/** Recompute and store the ICRC of a parsed RoCE frame in an mbuf chain. */
void roce_icrc_update_mbuf(struct rte_mbuf *m, const struct roce_pkt *p);

/**
 * Pointer to the first hdr_len bytes of the frame if they lie in the first segment (so the
 * in-place rewriters such as roce_set_ecn() can be used on it), else NULL.
 */
static inline uint8_t *
roce_mbuf_hdr(struct rte_mbuf *m, uint32_t hdr_len)
{
	if (rte_pktmbuf_data_len(m) < hdr_len)
		return NULL;
	return rte_pktmbuf_mtod(m, uint8_t *);
}

#ifdef __cplusplus
}
#endif

#endif /* ROCE_MBUF_H */
