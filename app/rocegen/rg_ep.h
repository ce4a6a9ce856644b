/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef ROCEGEN_RG_EP_H
#define ROCEGEN_RG_EP_H

/*
 * One end of a rocegen connection over either transport: an RC QP (lib/endpoint ep_qp.h) or,
 * when srd is not NULL, an SRD-like connection (ep_srd.h). rocegen's event loop, collectives
 * and reports go through these calls and never look at which one it is.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <jansson.h>

#include "lib/endpoint/ep_qp.h"
#include "lib/endpoint/ep_srd.h"

#define RG_EP_MAX_CTRS 64	/* at least EP_CTR_MAX and EP_SRD_CTR_MAX */

struct rg_ep {
	struct ep_qp qp;	/* RC (unused when srd is set) */
	struct ep_srd *srd;	/* SRD: allocated by rg_ep_init_srd */
};

/* RC from @p cfg; 0 or -EINVAL. */
int rg_ep_init_rc(struct rg_ep *e, const struct ep_qp_cfg *cfg, struct ep_pfc *pfc,
		  uint64_t now_ns);

/* SRD from @p cfg; 0, -EINVAL or -ENOMEM. */
int rg_ep_init_srd(struct rg_ep *e, const struct ep_srd_cfg *cfg, struct ep_pfc *pfc,
		   uint64_t now_ns);

/* Free what rg_ep_init_* allocated (NULL and zeroed ends are fine). */
void rg_ep_free(struct rg_ep *e);

int rg_ep_tx(struct rg_ep *e, uint64_t now_ns, uint8_t *buf, uint32_t cap);
void rg_ep_rx(struct rg_ep *e, const uint8_t *f, uint32_t len, const struct roce_pkt *p,
	      uint64_t now_ns);
int rg_ep_post(struct rg_ep *e, const struct ep_wr *wr);
int rg_ep_poll_sq(struct rg_ep *e, struct ep_cqe *c);
int rg_ep_poll_rq(struct rg_ep *e, struct ep_cqe *c);
bool rg_ep_idle(const struct rg_ep *e);
bool rg_ep_failed(const struct rg_ep *e);
uint32_t rg_ep_qpn(const struct rg_ep *e);
void rg_ep_set_dst_mac(struct rg_ep *e, const uint8_t mac[6]);

/* Counters: how many, the name and the value of counter i. */
unsigned int rg_ep_n_ctrs(const struct rg_ep *e);
const char *rg_ep_ctr_name(const struct rg_ep *e, unsigned int i);
uint64_t rg_ep_ctr(const struct rg_ep *e, unsigned int i);

/* Whether it sent data or CNPs (the report lists only those). */
bool rg_ep_carried(const struct rg_ep *e);
/* Payload bytes sent (retransmissions included). */
uint64_t rg_ep_tx_payload(const struct rg_ep *e);

/* Its counters and rates as a JSON object (SRD adds path_packets); NULL if out of memory. */
json_t *rg_ep_json(const struct rg_ep *e);

/* One line of its non-zero counters after @p prefix. */
void rg_ep_print(const struct rg_ep *e, FILE *f, const char *prefix);

/* Its sequence state, for the report of a run that got stuck. */
void rg_ep_dump(const struct rg_ep *e, FILE *f);

#endif
