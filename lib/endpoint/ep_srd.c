/* SPDX-License-Identifier: BSD-3-Clause */
/* The SRD-like transport (ep_srd.h), sender side: configuration, spraying, SACK processing,
 * selective retransmission, AIMD. The receiver is in ep_srd_rx.c. */
#include <errno.h>
#include <string.h>

#include "ep_srd_int.h"

#define EP_SRD_GUARD_MIN_NS 10000	/* the AIMD step is at least this long */

#define EP_SRD_CTR_NAME_(n, s) s,
static const char *const ep_srd_ctr_names[] = { EP_SRD_FOREACH_CTR(EP_SRD_CTR_NAME_) };
#undef EP_SRD_CTR_NAME_

const char *
ep_srd_ctr_name(enum ep_srd_ctr c)
{
	return c < EP_SRD_CTR_MAX ? ep_srd_ctr_names[c] : "unknown";
}

void
ep_srd_cfg_default(struct ep_srd_cfg *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	ep_qp_cfg_default(&cfg->qp);
	cfg->n_paths = 16;
	cfg->spray = 1;
	cfg->reorder_pkts = 64;
	cfg->retry_cnt = 16;
	cfg->rto_init_ns = 1000000;
	cfg->rto_min_ns = 200000;
	cfg->rto_max_ns = 100000000;
	cfg->cc_enabled = true;
	cfg->md = 0.5;
	cfg->ai_mbps = cfg->qp.dcqcn.line_rate_mbps / 100.0;
	cfg->min_rate_mbps = cfg->qp.dcqcn.line_rate_mbps / 1000.0;
	cfg->rtt_thresh_ns = 0;
}

uint16_t
ep_srd_path_sport(uint16_t port0, uint32_t k)
{
	if (k == 0)
		return port0;
	return (uint16_t)(0xC000 | ((port0 + k * 0x0F1Du) & 0x3FFF));
}

int
ep_srd_init(struct ep_srd *s, const struct ep_srd_cfg *cfg, struct ep_pfc *pfc, uint64_t now_ns)
{
	const struct ep_qp_cfg *q = &cfg->qp;
	uint64_t max_out;

	if (q->mtu < 256 || q->mtu > 4096 || (q->mtu & (q->mtu - 1)) != 0 ||
	    q->window_bytes == 0 || q->dcqcn.line_rate_mbps <= 0 || cfg->n_paths == 0 ||
	    cfg->n_paths > EP_SRD_MAX_PATHS || cfg->spray == 0 || cfg->reorder_pkts == 0 ||
	    !(cfg->md > 0 && cfg->md < 1) || cfg->rto_min_ns == 0 ||
	    cfg->rto_max_ns < cfg->rto_min_ns)
		return -EINVAL;
	memset(s, 0, sizeof(*s));
	s->cfg = *cfg;
	s->pfc = pfc;
	s->state = EP_QP_RTS;
	max_out = q->window_bytes / q->mtu;
	s->max_out = (uint32_t)(max_out == 0 ? 1 : max_out > EP_SRD_WIN ? EP_SRD_WIN : max_out);
	s->reorder = cfg->reorder_pkts < s->max_out / 2 ? cfg->reorder_pkts : s->max_out / 2;
	if (s->reorder == 0)
		s->reorder = 1;
	s->hp = roce_hdr_params_default();
	memcpy(s->hp.src_mac, q->src_mac, 6);
	memcpy(s->hp.dst_mac, q->dst_mac, 6);
	memcpy(s->hp.src_ip, q->src_ip, 4);
	memcpy(s->hp.dst_ip, q->dst_ip, 4);
	s->hp.dscp = q->dscp;
	s->hp.ecn = q->ecn;
	s->hp.udp_sport = q->udp_sport;
	s->hp.dest_qp = q->dest_qpn & ROCE_QPN_MASK;
	s->next_psn = q->sq_psn & EP_PSN_MASK;
	s->snd_una = s->next_psn;
	s->snd_nxt = s->next_psn;
	s->epsn = q->rq_psn & EP_PSN_MASK;
	s->next_rto_check_ns = UINT64_MAX;
	s->path_left = cfg->spray;
	s->rate_mbps = q->dcqcn.line_rate_mbps;
	s->min_rate_seen_mbps = s->rate_mbps;
	s->next_send_ns = now_ns;
	s->pause_start_ns = UINT64_MAX;
	return 0;
}

void
ep_srd_set_dst_mac(struct ep_srd *s, const uint8_t mac[6])
{
	memcpy(s->cfg.qp.dst_mac, mac, 6);
	memcpy(s->hp.dst_mac, mac, 6);
}

static struct ep_wr_slot *
ep_srd_wr(struct ep_srd *s, uint32_t i)
{
	return &s->wrs[i % EP_MAX_WR];
}

int
ep_srd_post(struct ep_srd *s, const struct ep_wr *wr)
{
	struct ep_wr_slot *w;

	if (s->state != EP_QP_RTS)
		return -EIO;
	if (wr->len == 0 || (wr->op != EP_WR_WRITE && wr->op != EP_WR_WRITE_IMM))
		return -EINVAL;
	if (s->wr_tail - s->wr_head >= EP_MAX_WR)
		return -ENOSPC;
	w = ep_srd_wr(s, s->wr_tail++);
	w->wr = *wr;
	w->first_psn = s->next_psn;
	w->npkts = (wr->len + s->cfg.qp.mtu - 1) / s->cfg.qp.mtu;
	s->next_psn = (s->next_psn + w->npkts) & EP_PSN_MASK;
	return 0;
}

void
ep_srd_cq_push(struct ep_cqe *ring, uint32_t *head, uint32_t *tail, const struct ep_cqe *c)
{
	if (*tail - *head >= EP_MAX_CQE)
		(*head)++; /* the oldest is lost: callers drain every loop */
	ring[(*tail)++ % EP_MAX_CQE] = *c;
}

/* RTO of a packet retransmitted @p tries times: RFC 6298's srtt + 4 rttvar, doubled per try. */
static uint64_t
ep_srd_rto(const struct ep_srd *s, uint8_t tries)
{
	uint64_t rto = s->srtt_ns == 0 ? s->cfg.rto_init_ns : s->srtt_ns + 4 * s->rttvar_ns;
	unsigned int i;

	if (rto < s->cfg.rto_min_ns)
		rto = s->cfg.rto_min_ns;
	for (i = 0; i < tries && rto < s->cfg.rto_max_ns; i++)
		rto *= 2;
	return rto > s->cfg.rto_max_ns ? s->cfg.rto_max_ns : rto;
}

static uint64_t
ep_srd_guard_ns(const struct ep_srd *s)
{
	return s->srtt_ns > EP_SRD_GUARD_MIN_NS ? s->srtt_ns : EP_SRD_GUARD_MIN_NS;
}

/* A congestion signal: rate x md, at most once per srtt. */
void
ep_srd_cut(struct ep_srd *s, uint64_t now_ns)
{
	if (!s->cfg.cc_enabled || now_ns < s->cut_ok_ns)
		return;
	s->rate_mbps *= s->cfg.md;
	if (s->rate_mbps < s->cfg.min_rate_mbps)
		s->rate_mbps = s->cfg.min_rate_mbps;
	if (s->rate_mbps < s->min_rate_seen_mbps)
		s->min_rate_seen_mbps = s->rate_mbps;
	s->cut_ok_ns = now_ns + ep_srd_guard_ns(s);
	s->inc_ok_ns = s->cut_ok_ns;
	s->ctrs[EP_SRD_CTR_CC_DECREASES]++;
}

/* Progress without a signal: + ai_mbps once per srtt, up to the line rate. */
static void
ep_srd_grow(struct ep_srd *s, uint64_t now_ns)
{
	double line = s->cfg.qp.dcqcn.line_rate_mbps;

	if (!s->cfg.cc_enabled || now_ns < s->inc_ok_ns || s->rate_mbps >= line)
		return;
	s->rate_mbps += s->cfg.ai_mbps;
	if (s->rate_mbps > line)
		s->rate_mbps = line;
	s->inc_ok_ns = now_ns + ep_srd_guard_ns(s);
	s->ctrs[EP_SRD_CTR_CC_INCREASES]++;
}

static void
ep_srd_rtt_sample(struct ep_srd *s, uint64_t rtt)
{
	uint64_t d;

	s->ctrs[EP_SRD_CTR_RTT_SAMPLES]++;
	if (s->srtt_ns == 0) {
		s->srtt_ns = rtt;
		s->rttvar_ns = rtt / 2;
		return;
	}
	d = rtt > s->srtt_ns ? rtt - s->srtt_ns : s->srtt_ns - rtt;
	s->rttvar_ns = (3 * s->rttvar_ns + d) / 4;
	s->srtt_ns = (7 * s->srtt_ns + rtt) / 8;
}

static bool
ep_srd_in_flight(const struct ep_srd *s, uint32_t psn)
{
	return ep_psn_diff(psn, s->snd_una) >= 0 && ep_psn_diff(psn, s->snd_nxt) < 0;
}

static void
ep_srd_queue(struct ep_srd *s, uint32_t psn)
{
	s->txs[psn & EP_SRD_MASK].queued = 1;
	s->rtxq[s->rtxq_tail++ % EP_SRD_WIN] = psn;
}

void
ep_srd_advance(struct ep_srd *s, uint64_t now_ns)
{
	uint64_t next = UINT64_MAX;
	bool probed = false;
	uint32_t psn;

	if (s->state != EP_QP_RTS || now_ns < s->next_rto_check_ns)
		return;
	for (psn = s->snd_una; psn != s->snd_nxt; psn = (psn + 1) & EP_PSN_MASK) {
		struct ep_srd_txs *t = &s->txs[psn & EP_SRD_MASK];

		if (t->sacked || t->queued)
			continue;
		if (now_ns >= t->due_ns && probed) {
			t->due_ns = now_ns + ep_srd_rto(s, t->tries); /* behind the probe */
		} else if (now_ns >= t->due_ns) {
			s->ctrs[EP_SRD_CTR_TIMEOUTS]++;
			if (t->tries >= s->cfg.retry_cnt) {
				s->state = EP_QP_ERROR;
				return;
			}
			ep_srd_queue(s, psn);
			probed = true;
			continue;
		}
		if (t->due_ns < next)
			next = t->due_ns;
	}
	s->next_rto_check_ns = next;
}

static void
ep_srd_pause_track(struct ep_srd *s, bool paused, uint64_t now_ns)
{
	if (paused && s->pause_start_ns == UINT64_MAX) {
		s->pause_start_ns = now_ns;
	} else if (!paused && s->pause_start_ns != UINT64_MAX) {
		s->ctrs[EP_SRD_CTR_PAUSED_NS] += now_ns - s->pause_start_ns;
		s->pause_start_ns = UINT64_MAX;
	}
}

/* The WR holding psn among the unacknowledged ones, or NULL. */
static struct ep_wr_slot *
ep_srd_find_wr(struct ep_srd *s, uint32_t psn)
{
	uint32_t i;

	for (i = s->wr_head; i != s->wr_tail; i++) {
		struct ep_wr_slot *w = ep_srd_wr(s, i);

		if (ep_psn_diff(psn, w->first_psn) >= 0 &&
		    ep_psn_diff(psn, w->first_psn + w->npkts) < 0)
			return w;
	}
	return NULL;
}

/* Build and account one transmission of psn (of WR w) on the current path. */
static int
ep_srd_send_psn(struct ep_srd *s, struct ep_wr_slot *w, uint32_t psn, bool retx, uint64_t now_ns,
		uint8_t *buf, uint32_t cap)
{
	struct roce_hdr_params hp = s->hp;
	struct ep_srd_txs *t = &s->txs[psn & EP_SRD_MASK];
	uint32_t mtu = s->cfg.qp.mtu, idx = (uint32_t)ep_psn_diff(psn, w->first_psn), plen;
	uint64_t off = (uint64_t)idx * mtu, va = w->wr.remote_va + off;
	bool last = idx + 1 == w->npkts;
	uint8_t *h = s->scratch;
	int len, i;

	plen = w->wr.len - off < mtu ? (uint32_t)(w->wr.len - off) : mtu;
	for (i = 0; i < 8; i++)
		h[i] = (uint8_t)(va >> (56 - 8 * i));
	h[8] = (uint8_t)(w->wr.imm >> 24);
	h[9] = (uint8_t)(w->wr.imm >> 16);
	h[10] = (uint8_t)(w->wr.imm >> 8);
	h[11] = (uint8_t)w->wr.imm;
	h[12] = (uint8_t)((last ? EP_SRD_FLAG_LAST : 0) | (idx == 0 ? EP_SRD_FLAG_FIRST : 0) |
			  (w->wr.op == EP_WR_WRITE_IMM ? EP_SRD_FLAG_IMM : 0));
	h[13] = h[14] = h[15] = 0;
	if (w->wr.local != NULL)
		memcpy(h + EP_SRD_HDR_LEN, w->wr.local + off, plen);
	else
		memset(h + EP_SRD_HDR_LEN, 0, plen);
	hp.opcode = EP_SRD_OP_DATA;
	hp.psn = psn;
	hp.udp_sport = ep_srd_path_sport(s->cfg.qp.udp_sport, s->path);
	hp.ackreq = last || retx || (s->cfg.qp.ackreq_every != 0 &&
				     (idx + 1) % s->cfg.qp.ackreq_every == 0);
	len = roce_build(buf, cap, &hp, h, EP_SRD_HDR_LEN + plen);
	if (len <= 0)
		return len;
	t->sent_ns = now_ns;
	t->tx_seq = ++s->tx_seq;
	t->queued = 0;
	if (retx) {
		t->tries++;
		s->ctrs[EP_SRD_CTR_RETX_PKTS]++;
		s->ctrs[EP_SRD_CTR_RETX_BYTES] += plen;
	}
	t->due_ns = now_ns + ep_srd_rto(s, t->tries);
	if (t->due_ns < s->next_rto_check_ns)
		s->next_rto_check_ns = t->due_ns;
	s->path_pkts[s->path]++;
	if (--s->path_left == 0) {
		s->path = (s->path + 1) % s->cfg.n_paths;
		s->path_left = s->cfg.spray;
	}
	s->ctrs[EP_SRD_CTR_TX_DATA_PKTS]++;
	s->ctrs[EP_SRD_CTR_TX_PAYLOAD_BYTES] += plen;
	if (s->cfg.cc_enabled) {
		/* pace at the rate, with 64 KB or 50 us of credit, none from a time with nothing
		 * to send, as ep_qp's DCQCN pacer */
		uint64_t gap = (uint64_t)((double)(len + EP_FRAME_OVERHEAD) * 8000.0 /
					  s->rate_mbps);
		uint64_t floor_ns = (uint64_t)(65536.0 * 8000.0 / s->rate_mbps);

		if (floor_ns < 50000)
			floor_ns = 50000;
		if (!s->pace_busy) {
			floor_ns = 0;
			s->pace_busy = true;
		}
		if (s->next_send_ns + floor_ns < now_ns)
			s->next_send_ns = now_ns - floor_ns;
		s->next_send_ns += gap;
	}
	return len;
}

static int
ep_srd_tx_data(struct ep_srd *s, uint64_t now_ns, uint8_t *buf, uint32_t cap)
{
	struct ep_wr_slot *w;
	uint32_t psn;
	int len;

	if (s->state != EP_QP_RTS)
		return 0;
	if (s->rtxq_head == s->rtxq_tail && s->wr_send == s->wr_tail) {
		s->pace_busy = false;	/* nothing to send: the pacer saves no credit */
		return 0;
	}
	if (!ep_pfc_may_send(s->pfc, s->cfg.qp.prio, now_ns)) {
		ep_srd_pause_track(s, true, now_ns);
		return 0;
	}
	ep_srd_pause_track(s, false, now_ns);
	if (s->cfg.cc_enabled && now_ns < s->next_send_ns)
		return 0;
	while (s->rtxq_head != s->rtxq_tail) {
		psn = s->rtxq[s->rtxq_head++ % EP_SRD_WIN];
		if (!ep_srd_in_flight(s, psn) || s->txs[psn & EP_SRD_MASK].sacked) {
			s->ctrs[EP_SRD_CTR_RETX_CANCELLED]++;
			if (ep_srd_in_flight(s, psn))
				s->txs[psn & EP_SRD_MASK].queued = 0;
			continue;
		}
		w = ep_srd_find_wr(s, psn);
		if (w == NULL)
			continue;
		return ep_srd_send_psn(s, w, psn, true, now_ns, buf, cap);
	}
	if (s->wr_send == s->wr_tail || (uint32_t)ep_psn_diff(s->snd_nxt, s->snd_una) >= s->max_out)
		return 0;
	w = ep_srd_wr(s, s->wr_send);
	psn = s->snd_nxt;
	memset(&s->txs[psn & EP_SRD_MASK], 0, sizeof(s->txs[0]));
	len = ep_srd_send_psn(s, w, psn, false, now_ns, buf, cap);
	if (len <= 0)
		return len;
	s->snd_nxt = (psn + 1) & EP_PSN_MASK;
	if (ep_psn_diff(s->snd_nxt, w->first_psn + w->npkts) == 0)
		s->wr_send++;
	return len;
}


int
ep_srd_tx(struct ep_srd *s, uint64_t now_ns, uint8_t *buf, uint32_t cap)
{
	int len;

	ep_srd_advance(s, now_ns);
	if (s->sack_pending && ep_pfc_may_send(s->pfc, s->cfg.qp.prio, now_ns))
		len = ep_srd_tx_sack(s, buf, cap);
	else
		len = ep_srd_tx_data(s, now_ns, buf, cap);
	if (len > 0) {
		s->ctrs[EP_SRD_CTR_TX_PKTS]++;
		s->ctrs[EP_SRD_CTR_TX_BYTES] += (uint64_t)len;
	}
	return len;
}

/* Mark psn SACKed; true if it was in flight and not yet. */
static bool
ep_srd_mark(struct ep_srd *s, uint32_t psn)
{
	struct ep_srd_txs *t = &s->txs[psn & EP_SRD_MASK];

	if (!ep_srd_in_flight(s, psn) || t->sacked)
		return false;
	t->sacked = 1;
	/* a retransmitted packet's SACK may be for its first transmission: it says nothing
	 * about what was sent before the retransmission */
	if (t->tries == 0 && t->tx_seq > s->hi_sacked_seq)
		s->hi_sacked_seq = t->tx_seq;
	return true;
}

void
ep_srd_rx_sack(struct ep_srd *s, const uint8_t *frame, const struct roce_pkt *p, uint64_t now_ns)
{
	const uint8_t *pl = frame + p->payload_off;
	uint32_t cum = p->psn, trig, psn, i;
	bool rtt_ok = false, congested;
	uint64_t rtt = 0;

	if (p->payload_len < EP_SRD_SACK_LEN || ep_psn_diff(cum, s->snd_nxt) > 0) {
		s->ctrs[EP_SRD_CTR_RX_BAD_PKTS]++;
		return;
	}
	s->ctrs[EP_SRD_CTR_SACKS_RCVD]++;
	trig = ((uint32_t)pl[0] << 16) | ((uint32_t)pl[1] << 8) | pl[2];
	/* Karn: only a packet sent once, and SACKed by this SACK for the first time, is timed */
	if ((pl[3] & EP_SRD_SACK_TRIGGER) && ep_srd_in_flight(s, trig) &&
	    !s->txs[trig & EP_SRD_MASK].sacked && s->txs[trig & EP_SRD_MASK].tries == 0) {
		rtt_ok = true;
		rtt = now_ns - s->txs[trig & EP_SRD_MASK].sent_ns;
	}
	for (psn = s->snd_una; ep_psn_diff(psn, cum) < 0; psn = (psn + 1) & EP_PSN_MASK)
		ep_srd_mark(s, psn);
	for (i = 0; i < EP_SRD_SACK_BITS; i++)
		if (pl[4 + i / 8] & (1u << (i % 8)))
			ep_srd_mark(s, (cum + 1 + i) & EP_PSN_MASK);
	rtt_ok = rtt_ok && s->txs[trig & EP_SRD_MASK].sacked;
	if (rtt_ok)
		ep_srd_rtt_sample(s, rtt);
	while (s->snd_una != s->snd_nxt && s->txs[s->snd_una & EP_SRD_MASK].sacked)
		s->snd_una = (s->snd_una + 1) & EP_PSN_MASK;
	if (s->snd_una == s->snd_nxt)
		s->next_rto_check_ns = UINT64_MAX;
	while (s->wr_head != s->wr_tail) {
		struct ep_wr_slot *w = ep_srd_wr(s, s->wr_head);
		struct ep_cqe c;

		if (ep_psn_diff(s->snd_una, w->first_psn + w->npkts) < 0)
			break;
		memset(&c, 0, sizeof(c));
		c.wr_id = w->wr.wr_id;
		c.len = w->wr.len;
		c.imm = w->wr.imm;
		ep_srd_cq_push(s->sq_cqes, &s->sq_cq_head, &s->sq_cq_tail, &c);
		s->ctrs[EP_SRD_CTR_MSGS_SENT]++;
		s->wr_head++;
	}
	/* a hole is lost once reorder_pkts later transmissions have been SACKed */
	if (s->hi_sacked_seq > s->reorder)
		for (psn = s->snd_una; psn != s->snd_nxt; psn = (psn + 1) & EP_PSN_MASK) {
			struct ep_srd_txs *t = &s->txs[psn & EP_SRD_MASK];

			if (t->sacked || t->queued ||
			    t->tx_seq + s->reorder > s->hi_sacked_seq)
				continue;
			s->ctrs[EP_SRD_CTR_RETX_SACK]++;
			ep_srd_queue(s, psn);
		}
	if (pl[3] & EP_SRD_SACK_ECE)
		s->ctrs[EP_SRD_CTR_ECE_RCVD]++;
	congested = (pl[3] & EP_SRD_SACK_ECE) ||
		(rtt_ok && s->cfg.rtt_thresh_ns != 0 && rtt > s->cfg.rtt_thresh_ns);
	if (congested)
		ep_srd_cut(s, now_ns);
	else
		ep_srd_grow(s, now_ns);
}



int
ep_srd_poll_sq(struct ep_srd *s, struct ep_cqe *cqe)
{
	if (s->sq_cq_head == s->sq_cq_tail)
		return 0;
	*cqe = s->sq_cqes[s->sq_cq_head++ % EP_MAX_CQE];
	return 1;
}


bool
ep_srd_idle(const struct ep_srd *s)
{
	return s->wr_head == s->wr_tail;
}
