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

/** Parse the frame in an mbuf chain (pkt_len bytes, no FCS); same contract as roce_parse(). */
enum roce_class roce_parse_mbuf(const struct rte_mbuf *m, uint16_t roce_port,
		struct roce_pkt *out);

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
