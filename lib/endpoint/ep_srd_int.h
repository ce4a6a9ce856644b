/* SPDX-License-Identifier: BSD-3-Clause */
/* Internals shared by ep_srd.c (sender) and ep_srd_rx.c (receiver). */
#ifndef ROCEMU_EP_SRD_INT_H
#define ROCEMU_EP_SRD_INT_H

#include "ep_srd.h"

#define EP_SRD_MASK (EP_SRD_WIN - 1)

/** Push a completion; the oldest is lost when the ring is full. */
void ep_srd_cq_push(struct ep_cqe *ring, uint32_t *head, uint32_t *tail, const struct ep_cqe *c);

/** A congestion signal (ECE, CNP, RTT): rate x md, at most once per srtt. */
void ep_srd_cut(struct ep_srd *s, uint64_t now_ns);

/** Sender: a SACK arrived. */
void ep_srd_rx_sack(struct ep_srd *s, const uint8_t *frame, const struct roce_pkt *p,
		    uint64_t now_ns);

/** Receiver: build the pending SACK into buf. */
int ep_srd_tx_sack(struct ep_srd *s, uint8_t *buf, uint32_t cap);

#endif
