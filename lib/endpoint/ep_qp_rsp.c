/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The RC QP's responder (ep_qp.h): in-order acceptance and placement, ACK/NAK coalescing, the
 * DCQCN notification point (CNPs), the bitmaps of placed bytes, and the dispatch of received
 * frames (ACKs and NAKs go to the requester in ep_qp.c).
 */
#include <string.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "ep_qp_int.h"

static int
ep_tx_ack(struct ep_qp *qp, uint8_t *buf, uint32_t cap, uint8_t syndrome, uint32_t psn)
{
	struct roce_hdr_params hp = qp->hp;

	hp.psn = psn & EP_PSN_MASK;
	return roce_build_ack(buf, cap, &hp, syndrome, qp->msn);
}

static int
ep_tx_cnp(struct ep_qp *qp, uint8_t *buf, uint32_t cap)
{
	struct roce_cnp_params cp = roce_cnp_params_default();

	memcpy(cp.src_mac, qp->cfg.src_mac, 6);
	memcpy(cp.dst_mac, qp->cfg.dst_mac, 6);
	memcpy(cp.src_ip, qp->cfg.src_ip, 4);
	memcpy(cp.dst_ip, qp->cfg.dst_ip, 4);
	cp.dscp = qp->cfg.cnp_dscp;
	cp.dest_qp = qp->cfg.dest_qpn & ROCE_QPN_MASK;
	return roce_build_cnp(buf, cap, &cp);
}

/*
 * Place a packet's payload in the memory region. The region is written once per message and
 * read much later (a collective's landing buffer, megabytes), so a normal copy first reads
 * every destination line into the cache (read-for-ownership) and then evicts lines that are
 * still needed. From 1 KB up, 16-byte non-temporal stores write the aligned middle straight to
 * memory, head and tail by memcpy. Neither libc's memcpy nor rte_memcpy does non-temporal
 * stores at these sizes; SSE2 is in every x86-64, so no run-time check.
 */
void
ep_place(uint8_t *dst, const uint8_t *src, uint64_t len)
{
#if defined(__SSE2__)
	if (len >= 1024) {
		uint64_t head = (16 - ((uintptr_t)dst & 15)) & 15, n;

		memcpy(dst, src, head);
		dst += head;
		src += head;
		len -= head;
		for (n = len >> 4; n > 0; n--) {
			_mm_stream_si128((__m128i *)(void *)dst,
					 _mm_loadu_si128((const __m128i *)(const void *)src));
			dst += 16;
			src += 16;
		}
		_mm_sfence();
		len &= 15;
	}
#endif
	memcpy(dst, src, len);
}

void
ep_bitmap_set(uint64_t *bm, uint64_t off, uint64_t len)
{
	while (len > 0 && (off & 63) != 0) {
		bm[off >> 6] |= 1ULL << (off & 63);
		off++;
		len--;
	}
	if (len >= 64) {	/* whole words at once */
		memset(&bm[off >> 6], 0xff, (len >> 6) * sizeof(*bm));
		off += len & ~63ULL;
		len &= 63;
	}
	while (len > 0) {
		bm[off >> 6] |= 1ULL << (off & 63);
		off++;
		len--;
	}
}

uint64_t
ep_bitmap_count(const uint64_t *bm, uint64_t off, uint64_t len)
{
	uint64_t n = 0;

	while (len > 0 && (off & 63) != 0) {
		n += (bm[off >> 6] >> (off & 63)) & 1;
		off++;
		len--;
	}
	while (len >= 64) {
		n += (uint64_t)__builtin_popcountll(bm[off >> 6]);
		off += 64;
		len -= 64;
	}
	while (len > 0) {
		n += (bm[off >> 6] >> (off & 63)) & 1;
		off++;
		len--;
	}
	return n;
}

/* Accept one in-order data packet: place its payload, complete the message on its last packet. */
static void
ep_rx_data(struct ep_qp *qp, const uint8_t *frame, const struct roce_pkt *p)
{
	uint8_t op = p->opcode & ROCE_OP_MASK;
	bool first = op == ROCE_OP_SEND_FIRST || op == ROCE_OP_SEND_ONLY ||
		op == ROCE_OP_SEND_ONLY_WITH_IMMEDIATE || op == ROCE_OP_RDMA_WRITE_FIRST ||
		op == ROCE_OP_RDMA_WRITE_ONLY || op == ROCE_OP_RDMA_WRITE_ONLY_WITH_IMMEDIATE;
	bool last = op != ROCE_OP_SEND_FIRST && op != ROCE_OP_SEND_MIDDLE &&
		op != ROCE_OP_RDMA_WRITE_FIRST && op != ROCE_OP_RDMA_WRITE_MIDDLE;
	bool write = op >= ROCE_OP_RDMA_WRITE_FIRST && op <= ROCE_OP_RDMA_WRITE_ONLY_WITH_IMMEDIATE;
	uint32_t plen = p->payload_len;

	if (first) {
		qp->in_msg = true;
		qp->msg_bytes = 0;
		if (write) {
			qp->wr_va = p->reth_va;
		} else {
			if (qp->recv_off + plen > qp->cfg.mr_len)
				qp->recv_off = 0;
			qp->wr_va = qp->recv_off;
		}
	}
	if (qp->cfg.mr != NULL && qp->wr_va + plen <= qp->cfg.mr_len) {
		ep_place(qp->cfg.mr + qp->wr_va, frame + p->payload_off, plen);
		if (qp->cfg.placed_bitmap != NULL)
			ep_bitmap_set(qp->cfg.placed_bitmap, qp->wr_va, plen);
		qp->ctrs[EP_CTR_RX_PLACED_BYTES] += plen;
	} else if (qp->cfg.mr != NULL) {
		qp->ctrs[EP_CTR_RX_BAD_PKTS]++; /* outside the region: accepted, not placed */
	}
	qp->wr_va += plen;
	qp->msg_bytes += plen;
	if (!write && !first)
		qp->recv_off = qp->wr_va;
	if (last) {
		struct ep_cqe c;

		memset(&c, 0, sizeof(c));
		c.wr_id = qp->msn;
		c.len = qp->msg_bytes;
		c.opcode = p->opcode;
		c.has_imm = p->has_imm;
		c.imm = p->imm;
		if (qp->rq_cq_tail - qp->rq_cq_head >= EP_MAX_CQE)
			qp->rq_cq_overflow++;
		ep_cq_push(qp->rq_cqes, &qp->rq_cq_head, &qp->rq_cq_tail, &c);
		qp->msn = (qp->msn + 1) & 0xFFFFFF;
		qp->ctrs[EP_CTR_MSGS_RCVD]++;
		qp->in_msg = false;
		if (!write)
			qp->recv_off = qp->wr_va;
	}
}

void
ep_qp_rx(struct ep_qp *qp, const uint8_t *frame, uint32_t len, const struct roce_pkt *p,
	 uint64_t now_ns)
{
	uint8_t op;
	int32_t d;

	qp->ctrs[EP_CTR_RX_PKTS]++;
	qp->ctrs[EP_CTR_RX_BYTES] += len;
	if (p->cls != ROCE_CLASS_ROCEV2 || !roce_icrc_verify(frame, len, p)) {
		qp->ctrs[EP_CTR_RX_BAD_PKTS]++;
		return;
	}
	if (p->opcode == ROCE_OPCODE_CNP) {
		qp->ctrs[EP_CTR_CNPS_RCVD]++;
		if (qp->cfg.dcqcn_enabled) {
			dcqcn_rp_on_cnp(&qp->rp, &qp->cfg.dcqcn, now_ns);
			if (qp->rp.min_rc_mbps < qp->min_rate_mbps)
				qp->min_rate_mbps = qp->rp.min_rc_mbps;
		}
		return;
	}
	if (p->transport != 0) {
		qp->ctrs[EP_CTR_RX_BAD_PKTS]++;
		return;
	}
	op = p->opcode & ROCE_OP_MASK;
	if (op == ROCE_OP_ACKNOWLEDGE) {
		ep_qp_rx_ack(qp, p, now_ns);
		return;
	}
	if (op > ROCE_OP_RDMA_WRITE_ONLY_WITH_IMMEDIATE) {
		qp->ctrs[EP_CTR_RX_BAD_PKTS]++;
		return;
	}
	/* notification point: CE-marked data gives a CNP, at most one per min_time_between_cnps */
	if (p->ecn == 3) {
		qp->ctrs[EP_CTR_RX_CE_PKTS]++;
		if (dcqcn_np_may_send(&qp->last_cnp_ns, &qp->cfg.dcqcn, now_ns))
			qp->cnp_pending++;
		else
			qp->ctrs[EP_CTR_CNPS_PACED]++;
	}
	d = ep_psn_diff(p->psn, qp->epsn);
	if (d < 0) {
		qp->ctrs[EP_CTR_RX_DUP_PKTS]++;
		qp->ack_pending = true; /* re-acknowledge: our ACK may have been lost */
		return;
	}
	if (d > 0) {
		qp->ctrs[EP_CTR_RX_OOO_PKTS]++;
		if (!qp->nak_outstanding) {
			qp->nak_outstanding = true;
			qp->nak_pending = true;
		}
		return;
	}
	ep_rx_data(qp, frame, p);
	qp->epsn = (qp->epsn + 1) & EP_PSN_MASK;
	qp->nak_outstanding = false;
	if (p->ackreq)
		qp->ack_pending = true;
}

int
ep_qp_poll_rq(struct ep_qp *qp, struct ep_cqe *cqe)
{
	if (qp->rq_cq_head == qp->rq_cq_tail)
		return 0;
	*cqe = qp->rq_cqes[qp->rq_cq_head++ % EP_MAX_CQE];
	return 1;
}

int
ep_qp_rsp_tx(struct ep_qp *qp, uint64_t now_ns, uint8_t *buf, uint32_t cap)
{
	int len = 0;

	if ((qp->nak_pending || qp->ack_pending) &&
	    ep_pfc_may_send(qp->pfc, qp->cfg.prio, now_ns)) {
		if (qp->nak_pending) {
			/* the NAK names the expected PSN: it acknowledges everything before it */
			len = ep_tx_ack(qp, buf, cap, ROCE_AETH_NAK | ROCE_NAK_PSN_SEQ_ERR,
					qp->epsn);
			qp->ctrs[EP_CTR_NAKS_SENT]++;
		} else {
			len = ep_tx_ack(qp, buf, cap, ROCE_AETH_ACK | ROCE_AETH_CREDIT_UNLIMITED,
					qp->epsn - 1);
			qp->ctrs[EP_CTR_ACKS_SENT]++;
		}
		qp->nak_pending = false;
		qp->ack_pending = false;
	} else if (qp->cnp_pending > 0 && ep_pfc_may_send(qp->pfc, qp->cfg.cnp_prio, now_ns)) {
		len = ep_tx_cnp(qp, buf, cap);
		qp->cnp_pending--;
		qp->ctrs[EP_CTR_CNPS_SENT]++;
	}
	return len;
}
