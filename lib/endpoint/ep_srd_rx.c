/* SPDX-License-Identifier: BSD-3-Clause */
/* The SRD-like transport (ep_srd.h), receiver side: out-of-order placement, in-order
 * completion, SACKs; and the frame dispatch. */
#include <string.h>

#include "ep_srd_int.h"

int
ep_srd_tx_sack(struct ep_srd *s, uint8_t *buf, uint32_t cap)
{
	struct roce_hdr_params hp = s->hp;
	uint8_t pl[EP_SRD_SACK_LEN];
	uint32_t i;

	memset(pl, 0, sizeof(pl));
	pl[0] = (uint8_t)(s->trigger_psn >> 16);
	pl[1] = (uint8_t)(s->trigger_psn >> 8);
	pl[2] = (uint8_t)s->trigger_psn;
	pl[3] = (uint8_t)((s->ece_pending ? EP_SRD_SACK_ECE : 0) |
			  (s->trigger_valid ? EP_SRD_SACK_TRIGGER : 0));
	for (i = 0; i < EP_SRD_SACK_BITS; i++)
		if (s->rxs[(s->epsn + 1 + i) & EP_SRD_MASK].got)
			pl[4 + i / 8] |= (uint8_t)(1u << (i % 8));
	hp.opcode = EP_SRD_OP_SACK;
	hp.psn = s->epsn;
	hp.ackreq = 0;
	s->sack_pending = false;
	s->ece_pending = false;
	s->trigger_valid = false;
	s->ctrs[EP_SRD_CTR_SACKS_SENT]++;
	return roce_build(buf, cap, &hp, pl, sizeof(pl));
}

static void
ep_srd_rx_data(struct ep_srd *s, const uint8_t *frame, const struct roce_pkt *p)
{
	const uint8_t *h = frame + p->payload_off;
	const struct ep_qp_cfg *q = &s->cfg.qp;
	struct ep_srd_rxs *r;
	uint32_t plen, i;
	uint64_t va = 0;
	int32_t d;

	if (p->payload_len < EP_SRD_HDR_LEN) {
		s->ctrs[EP_SRD_CTR_RX_BAD_PKTS]++;
		return;
	}
	if (p->ecn == 3) {
		s->ctrs[EP_SRD_CTR_RX_CE_PKTS]++;
		s->ece_pending = true;
	}
	d = ep_psn_diff(p->psn, s->epsn);
	if (d >= EP_SRD_WIN) {
		s->ctrs[EP_SRD_CTR_RX_BEYOND_WIN]++;
		return;
	}
	s->trigger_psn = p->psn;
	s->trigger_valid = true;
	r = &s->rxs[p->psn & EP_SRD_MASK];
	if (d < 0 || r->got) {
		s->ctrs[EP_SRD_CTR_RX_DUP_PKTS]++;
		s->sack_pending = true; /* our SACK may have been lost */
		return;
	}
	for (i = 0; i < 8; i++)
		va = va << 8 | h[i];
	plen = p->payload_len - EP_SRD_HDR_LEN;
	if (q->mr != NULL && va + plen <= q->mr_len && va + plen >= va) {
		ep_place(q->mr + va, h + EP_SRD_HDR_LEN, plen);
		if (q->placed_bitmap != NULL)
			ep_bitmap_set(q->placed_bitmap, va, plen);
		s->ctrs[EP_SRD_CTR_RX_PLACED_BYTES] += plen;
	} else if (q->mr != NULL) {
		s->ctrs[EP_SRD_CTR_RX_BAD_PKTS]++; /* outside the region: accepted, not placed */
	}
	r->got = 1;
	r->flags = h[12];
	r->len = plen;
	r->imm = ((uint32_t)h[8] << 24) | ((uint32_t)h[9] << 16) | ((uint32_t)h[10] << 8) | h[11];
	if (d > 0) {
		s->ctrs[EP_SRD_CTR_RX_OOO_PKTS]++;
		s->sack_pending = true;
	}
	if (p->ackreq)
		s->sack_pending = true;
	/* complete, in PSN order, the messages whose packets are all in */
	while (s->rxs[s->epsn & EP_SRD_MASK].got) {
		r = &s->rxs[s->epsn & EP_SRD_MASK];
		s->msg_bytes += r->len;
		if (r->flags & EP_SRD_FLAG_LAST) {
			struct ep_cqe c;

			memset(&c, 0, sizeof(c));
			c.wr_id = s->msn;
			c.len = s->msg_bytes;
			c.opcode = EP_SRD_OP_DATA;
			c.has_imm = (r->flags & EP_SRD_FLAG_IMM) != 0;
			c.imm = r->imm;
			ep_srd_cq_push(s->rq_cqes, &s->rq_cq_head, &s->rq_cq_tail, &c);
			s->msn = (s->msn + 1) & EP_PSN_MASK;
			s->msg_bytes = 0;
			s->ctrs[EP_SRD_CTR_MSGS_RCVD]++;
		}
		memset(r, 0, sizeof(*r));
		s->epsn = (s->epsn + 1) & EP_PSN_MASK;
	}
}

void
ep_srd_rx(struct ep_srd *s, const uint8_t *frame, uint32_t len, const struct roce_pkt *p,
	  uint64_t now_ns)
{
	s->ctrs[EP_SRD_CTR_RX_PKTS]++;
	s->ctrs[EP_SRD_CTR_RX_BYTES] += len;
	if (p->cls != ROCE_CLASS_ROCEV2 || !roce_icrc_verify(frame, len, p)) {
		s->ctrs[EP_SRD_CTR_RX_BAD_PKTS]++;
		return;
	}
	if (p->opcode == ROCE_OPCODE_CNP) {
		s->ctrs[EP_SRD_CTR_CNPS_RCVD]++;
		ep_srd_cut(s, now_ns);
	} else if (p->opcode == EP_SRD_OP_SACK) {
		ep_srd_rx_sack(s, frame, p, now_ns);
	} else if (p->opcode == EP_SRD_OP_DATA) {
		ep_srd_rx_data(s, frame, p);
	} else {
		s->ctrs[EP_SRD_CTR_RX_BAD_PKTS]++;
	}
}

int
ep_srd_poll_rq(struct ep_srd *s, struct ep_cqe *cqe)
{
	if (s->rq_cq_head == s->rq_cq_tail)
		return 0;
	*cqe = s->rq_cqes[s->rq_cq_head++ % EP_MAX_CQE];
	return 1;
}
