/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The RC queue pair (ep_qp.h): configuration, PFC honouring, and the requester (work requests,
 * segmentation, go-back-N, the retransmission timer, the DCQCN reaction point and pacing).
 * The responder is in ep_qp_rsp.c.
 */
#include <errno.h>
#include <string.h>

#include "ep_qp_int.h"

#define EP_CTR_NAME_(n, s) s,
static const char *const ep_ctr_names[] = { EP_FOREACH_CTR(EP_CTR_NAME_) };
#undef EP_CTR_NAME_

const char *
ep_ctr_name(enum ep_ctr c)
{
	return c < EP_CTR_MAX ? ep_ctr_names[c] : "unknown";
}

void
ep_pfc_init(struct ep_pfc *pfc, double link_mbps)
{
	memset(pfc, 0, sizeof(*pfc));
	pfc->link_mbps = link_mbps > 0 ? link_mbps : 100000.0; /* quanta need a link rate */
}

/* One quantum is 512 bit times: ns = quanta * 512 * 1000 / Mb/s. */
static uint64_t
ep_quanta_ns(const struct ep_pfc *pfc, uint16_t quanta)
{
	return (uint64_t)((double)quanta * 512.0 * 1000.0 / pfc->link_mbps);
}

void
ep_pfc_on_frame(struct ep_pfc *pfc, const struct roce_pkt *p, uint64_t now_ns)
{
	unsigned int i;

	if (p->cls != ROCE_CLASS_MAC_CONTROL)
		return;
	if (p->macctl_opcode == ROCE_MACCTL_OP_PFC) {
		pfc->pfc_rcvd++;
		for (i = 0; i < EP_N_PRIO; i++) {
			if ((p->pfc_enable & (1u << i)) == 0)
				continue;
			/* a newer frame restarts the timer; time 0 resumes at once */
			pfc->pause_until_ns[i] = p->pause_quanta[i] == 0 ? 0 :
				now_ns + ep_quanta_ns(pfc, p->pause_quanta[i]);
		}
	} else if (p->macctl_opcode == ROCE_MACCTL_OP_PAUSE) {
		pfc->pause_rcvd++;
		for (i = 0; i < EP_N_PRIO; i++)
			pfc->pause_until_ns[i] = p->pause_quanta[0] == 0 ? 0 :
				now_ns + ep_quanta_ns(pfc, p->pause_quanta[0]);
	}
}

bool
ep_pfc_may_send(const struct ep_pfc *pfc, uint8_t prio, uint64_t now_ns)
{
	return pfc == NULL || now_ns >= pfc->pause_until_ns[prio & 7];
}

void
ep_qp_cfg_default(struct ep_qp_cfg *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->mtu = 1024;
	cfg->ackreq_every = 16;
	cfg->window_bytes = 1 << 20;
	cfg->timeout = 14;
	cfg->retry_cnt = 7;
	cfg->dscp = 26;
	cfg->ecn = 2;
	cfg->prio = 3;
	cfg->cnp_dscp = 48;
	cfg->cnp_prio = 6;
	cfg->udp_sport = 0xC000;
	cfg->dcqcn_enabled = true;
	dcqcn_params_nvidia(&cfg->dcqcn, 100000.0);
}

uint64_t
ep_timeout_ns(uint8_t timeout)
{
	return 4096ULL << timeout;
}

int
ep_qp_init(struct ep_qp *qp, const struct ep_qp_cfg *cfg, struct ep_pfc *pfc, uint64_t now_ns)
{
	if (cfg->mtu < 256 || cfg->mtu > 4096 || (cfg->mtu & (cfg->mtu - 1)) != 0 ||
	    cfg->timeout == 0 || cfg->timeout > 31 || cfg->window_bytes == 0 ||
	    cfg->dcqcn.line_rate_mbps <= 0)
		return -EINVAL;
	memset(qp, 0, sizeof(*qp));
	qp->cfg = *cfg;
	qp->pfc = pfc;
	qp->state = EP_QP_RTS;
	qp->hp = roce_hdr_params_default();
	memcpy(qp->hp.src_mac, cfg->src_mac, 6);
	memcpy(qp->hp.dst_mac, cfg->dst_mac, 6);
	memcpy(qp->hp.src_ip, cfg->src_ip, 4);
	memcpy(qp->hp.dst_ip, cfg->dst_ip, 4);
	qp->hp.dscp = cfg->dscp;
	qp->hp.ecn = cfg->ecn;
	qp->hp.udp_sport = cfg->udp_sport;
	qp->hp.dest_qp = cfg->dest_qpn & ROCE_QPN_MASK;
	qp->next_psn = cfg->sq_psn & EP_PSN_MASK;
	qp->snd_una = qp->next_psn;
	qp->snd_nxt = qp->next_psn;
	qp->snd_max = qp->next_psn;
	qp->epsn = cfg->rq_psn & EP_PSN_MASK;
	qp->last_cnp_ns = UINT64_MAX;
	qp->pause_start_ns = UINT64_MAX;
	qp->last_progress_ns = now_ns;
	qp->next_send_ns = now_ns;
	dcqcn_rp_init(&qp->rp, &cfg->dcqcn, now_ns);
	qp->min_rate_mbps = cfg->dcqcn.line_rate_mbps;
	return 0;
}

void
ep_qp_set_dst_mac(struct ep_qp *qp, const uint8_t mac[6])
{
	memcpy(qp->cfg.dst_mac, mac, 6);
	memcpy(qp->hp.dst_mac, mac, 6);
}

static struct ep_wr_slot *
ep_slot(struct ep_qp *qp, uint32_t i)
{
	return &qp->wrs[i % EP_MAX_WR];
}

int
ep_qp_post(struct ep_qp *qp, const struct ep_wr *wr)
{
	struct ep_wr_slot *s;

	if (qp->state != EP_QP_RTS)
		return -EIO;
	/* a 0-byte WRITE or SEND with immediate is one packet with no payload (NCCL's
	 * completion write under adaptive routing); without an immediate it would say nothing */
	if (wr->len == 0 && wr->op != EP_WR_WRITE_IMM && wr->op != EP_WR_SEND_IMM)
		return -EINVAL;
	if (qp->wr_tail - qp->wr_head >= EP_MAX_WR)
		return -ENOSPC;
	s = ep_slot(qp, qp->wr_tail++);
	s->wr = *wr;
	s->first_psn = qp->next_psn;
	s->npkts = wr->len == 0 ? 1 : (wr->len + qp->cfg.mtu - 1) / qp->cfg.mtu;
	qp->next_psn = (qp->next_psn + s->npkts) & EP_PSN_MASK;
	return 0;
}

/* Index of the WR holding psn among the unacknowledged ones, or wr_tail. */
static uint32_t
ep_find_wr(struct ep_qp *qp, uint32_t psn)
{
	uint32_t i;

	for (i = qp->wr_head; i != qp->wr_tail; i++) {
		struct ep_wr_slot *s = ep_slot(qp, i);

		if (ep_psn_diff(psn, s->first_psn) >= 0 &&
		    ep_psn_diff(psn, s->first_psn + s->npkts) < 0)
			return i;
	}
	return qp->wr_tail;
}

/* Payload bytes of the PSNs in [from, to). */
static uint64_t
ep_bytes_between(struct ep_qp *qp, uint32_t from, uint32_t to)
{
	uint64_t sum = 0;
	uint32_t i;

	for (i = qp->wr_head; i != qp->wr_tail; i++) {
		struct ep_wr_slot *s = ep_slot(qp, i);
		int32_t lo = ep_psn_diff(from, s->first_psn);
		int32_t hi = ep_psn_diff(to, s->first_psn);
		uint64_t blo, bhi;

		if (lo < 0)
			lo = 0;
		if (hi > (int32_t)s->npkts)
			hi = (int32_t)s->npkts;
		if (hi <= lo)
			continue;
		blo = (uint64_t)lo * qp->cfg.mtu;
		bhi = (uint64_t)hi * qp->cfg.mtu;
		if (bhi > s->wr.len)
			bhi = s->wr.len;
		sum += bhi - blo;
	}
	return sum;
}

void
ep_cq_push(struct ep_cqe *ring, uint32_t *head, uint32_t *tail, const struct ep_cqe *c)
{
	if (*tail - *head >= EP_MAX_CQE)
		(*head)++; /* the oldest is lost: callers drain every loop */
	ring[(*tail)++ % EP_MAX_CQE] = *c;
}

/* Go-back-N: the next transmission is psn again. */
static void
ep_go_back(struct ep_qp *qp, uint32_t psn)
{
	qp->snd_nxt = psn;
	qp->wr_send = ep_find_wr(qp, psn);
}

/* Everything before psn is acknowledged. */
static void
ep_ack_upto(struct ep_qp *qp, uint32_t psn, uint64_t now_ns)
{
	if (ep_psn_diff(psn, qp->snd_una) <= 0)
		return;
	qp->snd_una = psn;
	if (ep_psn_diff(qp->snd_nxt, psn) < 0)
		ep_go_back(qp, psn); /* acknowledged beyond a go-back point: skip ahead */
	qp->last_progress_ns = now_ns;
	qp->retries = 0;
	while (qp->wr_head != qp->wr_tail) {
		struct ep_wr_slot *s = ep_slot(qp, qp->wr_head);
		struct ep_cqe c;

		if (ep_psn_diff(psn, s->first_psn + s->npkts) < 0)
			break;
		memset(&c, 0, sizeof(c));
		c.wr_id = s->wr.wr_id;
		c.len = s->wr.len;
		c.imm = s->wr.imm;
		ep_cq_push(qp->sq_cqes, &qp->sq_cq_head, &qp->sq_cq_tail, &c);
		qp->ctrs[EP_CTR_MSGS_SENT]++;
		if (qp->wr_send == qp->wr_head)
			qp->wr_send++;
		qp->wr_head++;
	}
}

void
ep_qp_advance(struct ep_qp *qp, uint64_t now_ns)
{
	if (qp->cfg.dcqcn_enabled) {
		/* a CNP's cut comes at the next monitor-period boundary, inside advance */
		dcqcn_rp_advance(&qp->rp, &qp->cfg.dcqcn, now_ns);
		if (qp->rp.min_rc_mbps < qp->min_rate_mbps)
			qp->min_rate_mbps = qp->rp.min_rc_mbps;
	}
	if (qp->state != EP_QP_RTS || ep_psn_diff(qp->snd_max, qp->snd_una) <= 0)
		return;
	if (now_ns - qp->last_progress_ns < ep_timeout_ns(qp->cfg.timeout))
		return;
	qp->ctrs[EP_CTR_TIMEOUTS]++;
	if (qp->retries >= qp->cfg.retry_cnt) {
		qp->state = EP_QP_ERROR;
		return;
	}
	qp->retries++;
	qp->last_progress_ns = now_ns;
	ep_go_back(qp, qp->snd_una);
}

static uint8_t
ep_data_opcode(enum ep_wr_op op, uint32_t idx, uint32_t npkts)
{
	bool write = op == EP_WR_WRITE || op == EP_WR_WRITE_IMM;
	bool imm = op == EP_WR_WRITE_IMM || op == EP_WR_SEND_IMM;

	if (npkts == 1) {
		if (write)
			return imm ? ROCE_OP_RDMA_WRITE_ONLY_WITH_IMMEDIATE :
				     ROCE_OP_RDMA_WRITE_ONLY;
		return imm ? ROCE_OP_SEND_ONLY_WITH_IMMEDIATE : ROCE_OP_SEND_ONLY;
	}
	if (idx == 0)
		return write ? ROCE_OP_RDMA_WRITE_FIRST : ROCE_OP_SEND_FIRST;
	if (idx + 1 < npkts)
		return write ? ROCE_OP_RDMA_WRITE_MIDDLE : ROCE_OP_SEND_MIDDLE;
	if (write)
		return imm ? ROCE_OP_RDMA_WRITE_LAST_WITH_IMMEDIATE : ROCE_OP_RDMA_WRITE_LAST;
	return imm ? ROCE_OP_SEND_LAST_WITH_IMMEDIATE : ROCE_OP_SEND_LAST;
}

static void
ep_pause_track(struct ep_qp *qp, bool paused, uint64_t now_ns)
{
	if (paused && qp->pause_start_ns == UINT64_MAX) {
		qp->pause_start_ns = now_ns;
	} else if (!paused && qp->pause_start_ns != UINT64_MAX) {
		qp->ctrs[EP_CTR_PAUSED_NS] += now_ns - qp->pause_start_ns;
		qp->pause_start_ns = UINT64_MAX;
	}
}

static int
ep_tx_data(struct ep_qp *qp, uint64_t now_ns, uint8_t *buf, uint32_t cap)
{
	struct roce_hdr_params hp;
	struct ep_wr_slot *s;
	uint32_t idx, plen, psn;
	uint64_t off, gap_ns, floor_ns;
	bool last, retx;
	int len;

	if (qp->state != EP_QP_RTS)
		return 0;
	if (qp->wr_send == qp->wr_tail) {
		qp->pace_busy = false;	/* nothing to send: the pacer saves no credit (below) */
		return 0;
	}
	if (!ep_pfc_may_send(qp->pfc, qp->cfg.prio, now_ns)) {
		ep_pause_track(qp, true, now_ns);
		return 0;
	}
	ep_pause_track(qp, false, now_ns);
	if (qp->cfg.dcqcn_enabled && now_ns < qp->next_send_ns)
		return 0;
	s = ep_slot(qp, qp->wr_send);
	psn = qp->snd_nxt;
	idx = (uint32_t)ep_psn_diff(psn, s->first_psn);
	off = (uint64_t)idx * qp->cfg.mtu;
	plen = s->wr.len - off < qp->cfg.mtu ? (uint32_t)(s->wr.len - off) : qp->cfg.mtu;
	if (ep_psn_diff(psn, qp->snd_una) > 0 &&
	    ep_bytes_between(qp, qp->snd_una, psn) + plen > qp->cfg.window_bytes)
		return 0;
	last = idx + 1 == s->npkts;
	hp = qp->hp;
	hp.opcode = ROCE_TRANSPORT_RC | ep_data_opcode(s->wr.op, idx, s->npkts);
	hp.psn = psn;
	qp->pkts_since_ackreq++;
	/* AckReq at the end of a message, every N packets, and when the window fills up */
	hp.ackreq = last ||
		(qp->cfg.ackreq_every != 0 && qp->pkts_since_ackreq >= qp->cfg.ackreq_every) ||
		ep_bytes_between(qp, qp->snd_una, psn) + 2ULL * plen > qp->cfg.window_bytes;
	if (hp.ackreq)
		qp->pkts_since_ackreq = 0;
	hp.se = last && (s->wr.op == EP_WR_WRITE_IMM || s->wr.op == EP_WR_SEND_IMM);
	if (idx == 0) {
		hp.reth_va = s->wr.remote_va;
		hp.reth_rkey = s->wr.rkey;
		hp.reth_len = s->wr.len;
	}
	hp.imm = s->wr.imm;
	len = roce_build_data(buf, cap, &hp, s->wr.local != NULL ? s->wr.local + off : NULL, plen);
	if (len <= 0)
		return len;
	if (ep_psn_diff(qp->snd_max, qp->snd_una) <= 0)
		qp->last_progress_ns = now_ns; /* the timer starts with the first outstanding */
	retx = ep_psn_diff(psn, qp->snd_max) < 0;
	if (retx) {
		qp->ctrs[EP_CTR_RETX_PKTS]++;
		qp->ctrs[EP_CTR_RETX_BYTES] += plen;
	} else {
		qp->snd_max = (psn + 1) & EP_PSN_MASK;
	}
	qp->snd_nxt = (psn + 1) & EP_PSN_MASK;
	if (last)
		qp->wr_send++;
	qp->ctrs[EP_CTR_TX_DATA_PKTS]++;
	qp->ctrs[EP_CTR_TX_PAYLOAD_BYTES] += plen;
	if (qp->cfg.dcqcn_enabled) {
		/* pace at Rc, with up to 64 KB or 50 us of credit (whichever is longer) so that a
		 * software polling loop that comes back every few tens of us can still reach Rc;
		 * but none from a time with nothing to send (the first packet of a message after
		 * the send queue ran empty goes at Rc from now): a NIC's rate limiter does not save
		 * up, and a burst above Rc after each idle time is not DCQCN (rocestat saw the
		 * sender 10-24% above the model for 50 ms after each of NCCL's step boundaries) */
		double rate = qp->rp.rc_mbps;

		gap_ns = (uint64_t)((double)(len + EP_FRAME_OVERHEAD) * 8000.0 / rate);
		floor_ns = (uint64_t)(65536.0 * 8000.0 / rate);
		if (floor_ns < 50000)
			floor_ns = 50000;
		if (!qp->pace_busy) {
			floor_ns = 0;
			qp->pace_busy = true;
		}
		if (qp->next_send_ns + floor_ns < now_ns)
			qp->next_send_ns = now_ns - floor_ns;
		qp->next_send_ns += gap_ns;
		dcqcn_rp_on_bytes(&qp->rp, &qp->cfg.dcqcn, (uint64_t)len, now_ns);
		if (qp->rp.min_rc_mbps < qp->min_rate_mbps)
			qp->min_rate_mbps = qp->rp.min_rc_mbps;
	}
	return len;
}

int
ep_qp_tx(struct ep_qp *qp, uint64_t now_ns, uint8_t *buf, uint32_t cap)
{
	int len;

	ep_qp_advance(qp, now_ns);
	len = ep_qp_rsp_tx(qp, now_ns, buf, cap);	/* a pending NAK, ACK or CNP first */
	if (len == 0)
		len = ep_tx_data(qp, now_ns, buf, cap);
	if (len > 0) {
		qp->ctrs[EP_CTR_TX_PKTS]++;
		qp->ctrs[EP_CTR_TX_BYTES] += (uint64_t)len;
	}
	return len;
}

void
ep_qp_rx_ack(struct ep_qp *qp, const struct roce_pkt *p, uint64_t now_ns)
{
	uint8_t kind = p->aeth_syndrome & ROCE_AETH_KIND_MASK;
	uint8_t code = p->aeth_syndrome & ROCE_AETH_CODE_MASK;

	if (kind == ROCE_AETH_ACK) {
		qp->ctrs[EP_CTR_ACKS_RCVD]++;
		if (ep_psn_diff(p->psn, qp->snd_max) < 0)
			ep_ack_upto(qp, (p->psn + 1) & EP_PSN_MASK, now_ns);
		return;
	}
	if (kind == ROCE_AETH_NAK && code == ROCE_NAK_PSN_SEQ_ERR) {
		qp->ctrs[EP_CTR_NAKS_RCVD]++;
		if (ep_psn_diff(p->psn, qp->snd_una) < 0 || ep_psn_diff(p->psn, qp->snd_max) > 0)
			return; /* stale */
		ep_ack_upto(qp, p->psn, now_ns);
		ep_go_back(qp, p->psn);
		qp->last_progress_ns = now_ns;
		return;
	}
	if (kind == ROCE_AETH_NAK) {
		qp->ctrs[EP_CTR_NAKS_RCVD]++;
		qp->state = EP_QP_ERROR; /* invalid request, access or operational error */
	}
}

uint64_t
ep_qp_next_event_ns(const struct ep_qp *qp, uint64_t now_ns)
{
	uint64_t t = UINT64_MAX;

	if (qp->ack_pending || qp->nak_pending || qp->cnp_pending > 0)
		return now_ns;
	if (ep_psn_diff(qp->snd_max, qp->snd_una) > 0)
		t = qp->last_progress_ns + ep_timeout_ns(qp->cfg.timeout);
	if (qp->wr_send != qp->wr_tail) {
		uint64_t s = qp->next_send_ns > now_ns ? qp->next_send_ns : now_ns;

		if (qp->pfc != NULL && qp->pfc->pause_until_ns[qp->cfg.prio & 7] > s)
			s = qp->pfc->pause_until_ns[qp->cfg.prio & 7];
		if (s < t)
			t = s;
	}
	return t;
}

int
ep_qp_poll_sq(struct ep_qp *qp, struct ep_cqe *cqe)
{
	if (qp->sq_cq_head == qp->sq_cq_tail)
		return 0;
	*cqe = qp->sq_cqes[qp->sq_cq_head++ % EP_MAX_CQE];
	return 1;
}

bool
ep_qp_idle(const struct ep_qp *qp)
{
	return qp->wr_head == qp->wr_tail;
}

double
ep_qp_rate_mbps(const struct ep_qp *qp)
{
	return qp->cfg.dcqcn_enabled ? qp->rp.rc_mbps : qp->cfg.dcqcn.line_rate_mbps;
}
