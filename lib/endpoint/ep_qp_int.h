/* SPDX-License-Identifier: BSD-3-Clause */
/* Internals shared by the RC QP's requester (ep_qp.c) and responder (ep_qp_rsp.c). */
#ifndef ROCEMU_EP_QP_INT_H
#define ROCEMU_EP_QP_INT_H

#include "ep_qp.h"

/** Push a completion; the oldest is lost when the ring is full (callers drain every loop). */
void ep_cq_push(struct ep_cqe *ring, uint32_t *head, uint32_t *tail, const struct ep_cqe *c);

/** Requester: an ACK or NAK arrived. */
void ep_qp_rx_ack(struct ep_qp *qp, const struct roce_pkt *p, uint64_t now_ns);

/** Responder: build a pending NAK, ACK or CNP into buf (its length, 0 if none may go now). */
int ep_qp_rsp_tx(struct ep_qp *qp, uint64_t now_ns, uint8_t *buf, uint32_t cap);

#endif
