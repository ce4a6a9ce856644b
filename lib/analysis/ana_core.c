/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The streaming pass: flows, per-flow counters, the retransmission checks (Lumina's and more)
 * and the congestion signals. Memory per flow: counters, a 2^16-PSN bitmap for data flows,
 * bounded event lists, rate bins whose width doubles rather than grow past a cap.
 *
 * The flow table and the pairing of directions are in ana_flows.c, the series and other
 * helpers in ana_util.c, the outputs and the DCQCN validation apart. About 600 lines on
 * purpose: what is left is the one per-frame pass (ana_feed) and the checks it calls inline.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/proto/roce_proto.h"

#include "ana_internal.h"

#define ANA_SEEN_BITS (1u << 16)
#define ANA_CNP_CAP (1u << 20)
#define ANA_CNP_NAK_NS 2000 /* a CNP and a NAK this close on one flow went out together */

static bool
ana_seen_get(const struct ana_flow *f, uint32_t psn)
{
	uint32_t b = psn & (ANA_SEEN_BITS - 1);

	return f->seen != NULL && (f->seen[b / 64] >> (b % 64) & 1);
}

static void
ana_seen_set(struct ana_flow *f, uint32_t psn, bool on)
{
	uint32_t b = psn & (ANA_SEEN_BITS - 1);

	if (f->seen == NULL)
		return;
	if (on)
		f->seen[b / 64] |= 1ULL << (b % 64);
	else
		f->seen[b / 64] &= ~(1ULL << (b % 64));
}

static bool
ana_is_data_op(uint8_t op)
{
	return op <= ROCE_OP_RDMA_WRITE_ONLY_WITH_IMMEDIATE || op == ROCE_OP_RDMA_READ_REQUEST ||
	       op == ROCE_OP_COMPARE_SWAP || op == ROCE_OP_FETCH_ADD ||
	       op == ROCE_OP_SEND_LAST_WITH_INVALIDATE || op == ROCE_OP_SEND_ONLY_WITH_INVALIDATE ||
	       (op >= ROCE_OP_RDMA_READ_RESPONSE_FIRST && op <= ROCE_OP_RDMA_READ_RESPONSE_ONLY);
}

/* Keeps the gap from the flow's last data packet to t_ns (in_msg: inside a message). */
static void
ana_msg_gap(struct ana_flow *f, uint64_t t_ns, bool in_msg)
{
	f->msg_gaps = ana_grow(f->msg_gaps, &f->cap_msg_gaps, f->n_msg_gaps, sizeof(*f->msg_gaps),
			       64, ANA_MSG_GAPS_CAP);
	if (f->n_msg_gaps == f->cap_msg_gaps) {
		f->msg_gaps_dropped++;
		return;
	}
	f->msg_gaps[f->n_msg_gaps].from_ns = f->t_prev_tx_ns;
	f->msg_gaps[f->n_msg_gaps].to_ns = t_ns;
	f->msg_gaps[f->n_msg_gaps].wire = f->prev_wire;
	f->msg_gaps[f->n_msg_gaps].spacing_ns = f->prev_gap_ns;
	f->msg_gaps[f->n_msg_gaps].in_msg = in_msg;
	f->n_msg_gaps++;
}

static bool
ana_is_msg_end(uint8_t op)
{
	switch (op) {
	case ROCE_OP_SEND_LAST: case ROCE_OP_SEND_LAST_WITH_IMMEDIATE: case ROCE_OP_SEND_ONLY:
	case ROCE_OP_SEND_ONLY_WITH_IMMEDIATE: case ROCE_OP_RDMA_WRITE_LAST:
	case ROCE_OP_RDMA_WRITE_LAST_WITH_IMMEDIATE: case ROCE_OP_RDMA_WRITE_ONLY:
	case ROCE_OP_RDMA_WRITE_ONLY_WITH_IMMEDIATE: case ROCE_OP_RDMA_READ_REQUEST:
	case ROCE_OP_RDMA_READ_RESPONSE_LAST: case ROCE_OP_RDMA_READ_RESPONSE_ONLY:
	case ROCE_OP_SEND_LAST_WITH_INVALIDATE: case ROCE_OP_SEND_ONLY_WITH_INVALIDATE:
	case ROCE_OP_COMPARE_SWAP: case ROCE_OP_FETCH_ADD:
		return true;
	default:
		return false;
	}
}

/*
 * A data packet with PSN psn: go-back-N bookkeeping at the capture point. The capture may sit
 * before or after a loss, so a drop shows either as a gap (PSNs skipped) or not at all; a
 * resend shows as the PSN going back: after a NAK it must restart at the NAK'd PSN; without
 * a NAK it is a timeout (after timeout_ns of silence) or a duplicate. A PSN going back into
 * a gap that was never seen, with no NAK, is a late (reordered) packet.
 */
static bool
ana_data_psn(struct ana *a, struct ana_flow *f, uint32_t psn, uint64_t pktno, uint64_t t_ns)
{
	int32_t d;

	if (f->seen == NULL)
		f->seen = calloc(ANA_SEEN_BITS / 64, sizeof(uint64_t));
	if (!f->have_psn) {
		f->have_psn = true;
		f->psn_first = psn;
		f->psn_max = psn;
		ana_seen_set(f, psn, true);
		return true;
	}
	d = psn_diff(psn, (f->psn_max + 1) & PSN_MASK);
	if (d >= 0) {
		uint32_t q;

		if (d > 0) {
			f->c[ANA_C_GAPS]++;
			f->c[ANA_C_GAP_PSNS] += (uint64_t)d;
			ana_flow_event(f, ANA_EV_GAP, pktno, 0, t_ns, (f->psn_max + 1) & PSN_MASK,
				       (psn - 1) & PSN_MASK, d);
			f->gap_open = true;
			f->gap_psn = (f->psn_max + 1) & PSN_MASK;
			f->gap_t_ns = t_ns;
			/* the skipped PSNs are unseen: clear them (bounded by the bitmap) */
			for (q = 1; q <= (uint32_t)d && q < ANA_SEEN_BITS; q++)
				ana_seen_set(f, (f->psn_max + q) & PSN_MASK, false);
		}
		if (psn < f->psn_max)
			f->c[ANA_C_PSN_WRAPS]++;
		ana_seen_set(f, (psn + ANA_SEEN_BITS / 2) & PSN_MASK, false);
		f->psn_max = psn;
		ana_seen_set(f, psn, true);
		f->round_active = false;
		f->t_last_data_ns = t_ns;
		return true;
	}
	/* psn is at or behind the highest PSN seen */
	if (f->round_active && psn == f->round_next) {
		f->c[ANA_C_RETX_PKTS]++;
		f->round_next = (psn + 1) & PSN_MASK;
		if (psn == f->round_end)
			f->round_active = false;
		ana_seen_set(f, psn, true);
		f->t_last_data_ns = t_ns;
		return false;
	}
	if (f->round_active && psn_diff(psn, f->round_next) > 0) {
		/* a resend skipped inside a round: lost before the capture point */
		int32_t k = psn_diff(psn, f->round_next);

		f->c[ANA_C_LOST_RETX_PSNS] += (uint64_t)k;
		ana_flow_event(f, ANA_EV_LOST_RETX, pktno, 0, t_ns, f->round_next,
			       (psn - 1) & PSN_MASK, k);
		f->c[ANA_C_RETX_PKTS]++;
		f->round_next = (psn + 1) & PSN_MASK;
		if (psn == f->round_end)
			f->round_active = false;
		f->t_last_data_ns = t_ns;
		return false;
	}
	if (f->nak_pending) {
		/* the NAK came on the other port: its time may be a little ahead */
		int64_t lat = t_ns > f->nak_t_ns ? (int64_t)(t_ns - f->nak_t_ns) : 0;

		f->nak_pending = false;
		f->c[ANA_C_RETX_ROUNDS]++;
		f->c[ANA_C_RETX_PKTS]++;
		if (psn == f->nak_psn) {
			ana_flow_event(f, ANA_EV_RETX, pktno, f->nak_pkt, t_ns, psn, f->nak_psn, lat);
		} else if (psn_diff(psn, f->nak_psn) > 0 && !ana_seen_get(f, f->nak_psn)) {
			/* the round began at the NAK'd PSN but that resend did not reach us */
			int32_t k = psn_diff(psn, f->nak_psn);

			f->c[ANA_C_LOST_RETX_PSNS] += (uint64_t)k;
			ana_flow_event(f, ANA_EV_RETX, pktno, f->nak_pkt, t_ns, psn, f->nak_psn, lat);
			ana_flow_event(f, ANA_EV_LOST_RETX, pktno, f->nak_pkt, t_ns, f->nak_psn,
				       (psn - 1) & PSN_MASK, k);
		} else {
			f->c[ANA_C_RESTART_BAD]++;
			ana_flow_event(f, ANA_EV_RESTART_BAD, pktno, f->nak_pkt, t_ns, psn,
				       f->nak_psn, lat);
		}
		f->retx_lat_sum_ns += (uint64_t)lat;
		f->retx_lat_n++;
		if ((uint64_t)lat > f->retx_lat_max_ns)
			f->retx_lat_max_ns = (uint64_t)lat;
		if ((uint64_t)lat < f->retx_lat_min_ns)
			f->retx_lat_min_ns = (uint64_t)lat;
	} else if (t_ns > f->t_last_data_ns && t_ns - f->t_last_data_ns >= a->o.timeout_ns) {
		/* after a timeout's silence: a resend (of a PSN seen or lost before us) */
		f->c[ANA_C_TIMEOUTS]++;
		f->c[ANA_C_RETX_ROUNDS]++;
		f->c[ANA_C_RETX_PKTS]++;
		ana_flow_event(f, ANA_EV_TIMEOUT, pktno, 0, t_ns, psn, 0,
			       (int64_t)(t_ns - f->t_last_data_ns));
	} else if (!ana_seen_get(f, psn)) {
		int64_t deg = -psn_diff(psn, f->psn_max);

		f->c[ANA_C_OOO_PKTS]++;
		if (deg > f->reorder_max)
			f->reorder_max = deg;
		ana_flow_event(f, ANA_EV_OOO, pktno, 0, t_ns, psn, f->psn_max, deg);
		ana_seen_set(f, psn, true);
		f->t_last_data_ns = t_ns;
		return true;
	} else {
		f->c[ANA_C_DUP_RUNS]++;
		f->c[ANA_C_RETX_PKTS]++;
		ana_flow_event(f, ANA_EV_DUP, pktno, 0, t_ns, psn, 0, 0);
	}
	ana_seen_set(f, psn, true);
	f->t_last_data_ns = t_ns;
	if (psn != f->psn_max) {
		f->round_active = true;
		f->round_next = (psn + 1) & PSN_MASK;
		f->round_end = f->psn_max;
	} else {
		f->round_active = false;
	}
	return false;
}

/* A response (ACK, NAK) on flow r for the data flow d (may be NULL: not paired yet). */
static void
ana_response(struct ana_flow *r, struct ana_flow *d, const struct roce_pkt *p, uint64_t pktno,
	     uint64_t t_ns)
{
	if (p->aeth_kind == ROCE_AETH_KIND_ACK) {
		r->c[ANA_C_ACKS]++;
		if (r->have_ack) {
			int32_t step = psn_diff(p->psn, r->last_ack_psn);

			if (step < 0) {
				r->c[ANA_C_ACK_BACK]++;
				ana_flow_event(r, ANA_EV_ACK_BACK, pktno, r->last_ack_pkt, t_ns,
					       p->psn, r->last_ack_psn, step);
			} else {
				r->c[ANA_C_ACKED_PSNS] += (uint64_t)step;
			}
		} else if (d != NULL && d->have_psn && psn_diff(p->psn, d->psn_first) >= 0) {
			/* the first ACK covers every PSN from the first one seen */
			r->c[ANA_C_ACKED_PSNS] += (uint64_t)psn_diff(p->psn, d->psn_first) + 1;
		} else {
			r->c[ANA_C_ACKED_PSNS]++;
		}
		r->have_ack = true;
		r->last_ack_psn = p->psn;
		r->last_ack_pkt = pktno;
		return;
	}
	if (p->aeth_kind == ROCE_AETH_KIND_RNR_NAK) {
		r->c[ANA_C_NAKS_RNR]++;
		return;
	}
	if (p->aeth_kind != ROCE_AETH_KIND_NAK || p->aeth_code != 0) {
		r->c[ANA_C_NAKS_OTHER]++;
		return;
	}
	r->c[ANA_C_NAKS_SEQ]++;
	/* ConnectX-5/6 with slow restart send a CNP together with a NAK (docs/wire.md) */
	if (r->n_cnp > 0 && t_ns >= r->cnp_t[r->n_cnp - 1] &&
	    t_ns - r->cnp_t[r->n_cnp - 1] <= ANA_CNP_NAK_NS)
		r->c[ANA_C_CNPS_WITH_NAK]++;
	r->last_nak_ns = t_ns;
	ana_flow_event(r, ANA_EV_NAK, pktno, 0, t_ns, p->psn, 0, 0);
	if (d == NULL)
		return;
	if (d->nak_pending && d->nak_psn == p->psn) {
		/* at most one outstanding NAK per gap (Lumina): the second one fails */
		r->c[ANA_C_DOUBLE_NAKS]++;
		ana_flow_event(r, ANA_EV_DOUBLE_NAK, pktno, d->nak_pkt, t_ns, p->psn, 0,
			       (int64_t)(t_ns - d->nak_t_ns));
		return;
	}
	/* NAK generation latency (Lumina): from the packet that showed the gap to the NAK */
	if (d->gap_open && d->gap_psn == p->psn && t_ns >= d->gap_t_ns) {
		uint64_t lat = t_ns - d->gap_t_ns;

		d->nak_gen_sum_ns += lat;
		d->nak_gen_n++;
		if (lat > d->nak_gen_max_ns)
			d->nak_gen_max_ns = lat;
		d->gap_open = false;
	}
	d->nak_pending = true;
	d->nak_psn = p->psn;
	d->nak_t_ns = t_ns;
	d->nak_pkt = pktno;
	d->round_active = false;
}

/* A CNP on flow c (to the data sender QPN c->dqp); d = the data flow it answers. */
static void
ana_cnp(struct ana *a, struct ana_flow *c, struct ana_flow *d, const struct roce_pkt *p,
	uint64_t pktno, uint64_t t_ns)
{
	c->c[ANA_C_CNPS]++;
	ana_bw_cnp(a, c, t_ns);
	if (c->last_nak_ns != 0 && t_ns >= c->last_nak_ns && t_ns - c->last_nak_ns <= ANA_CNP_NAK_NS)
		c->c[ANA_C_CNPS_WITH_NAK]++;
	a->cnps_seen++;
	if (!p->becn)
		c->c[ANA_C_CNPS_NO_BECN]++;
	if (c->n_cnp == 0) {
		c->cnp_dscp = p->dscp;
		c->cnp_pcp = p->pcp;
		c->cnp_ecn = p->ecn;
	} else if (c->cnp_dscp != p->dscp || c->cnp_pcp != p->pcp || c->cnp_ecn != p->ecn) {
		c->cnp_fields_vary = true;
	}
	if (c->n_cnp > 0) {
		uint64_t gap = t_ns - c->cnp_t[c->n_cnp - 1];

		if (gap < c->cnp_min_gap_ns)
			c->cnp_min_gap_ns = gap;
		if (gap < a->o.np_min_time_between_cnps_ns) {
			c->c[ANA_C_CNPS_FAST]++;
			ana_flow_event(c, ANA_EV_CNP_FAST, pktno, 0, t_ns, 0, 0, (int64_t)gap);
		}
	}
	c->cnp_t = ana_grow(c->cnp_t, &c->cap_cnp, c->n_cnp, sizeof(*c->cnp_t), 64, ANA_CNP_CAP);
	if (c->n_cnp < c->cap_cnp)
		c->cnp_t[c->n_cnp++] = t_ns;
	if (d != NULL && d->ce_first_open_ns != 0) {
		uint64_t lat = t_ns > d->ce_first_open_ns ? t_ns - d->ce_first_open_ns : 0;

		if (d->cnp_lat_n == 0)
			d->cnp_lat_first_ns = lat;
		d->cnp_lat_sum_ns += lat;
		d->cnp_lat_n++;
		if (lat > d->cnp_lat_max_ns)
			d->cnp_lat_max_ns = lat;
		d->ce_first_open_ns = 0;
	}
}

/*
 * "rocemu: key=value key=value ...": queue depth, wait, drop reason. Returns true when the
 * packet was dropped by the emulator (it never reached the receiver).
 */
static bool
ana_annotation(struct ana *a, struct ana_flow *f, const char *c, uint64_t t_ns)
{
	const char *s = strstr(c, "rocemu:");
	bool dropped = false;

	if (s == NULL)
		return false;
	a->ann_pkts++;
	s += 7;
	while (*s != '\0') {
		char key[32], val[64];
		size_t kl = 0, vl = 0;

		while (*s == ' ' || *s == '\t' || *s == '\n' || *s == ',' || *s == ';')
			s++;
		if (*s == '\0')
			break;
		while (*s != '\0' && *s != '=' && *s != ' ' && kl + 1 < sizeof(key))
			key[kl++] = *s++;
		key[kl] = '\0';
		if (*s != '=') {
			a->ann_bad++;
			while (*s != '\0' && *s != ' ')
				s++;
			continue;
		}
		s++;
		while (*s != '\0' && *s != ' ' && *s != '\t' && *s != '\n' && vl + 1 < sizeof(val))
			val[vl++] = *s++;
		val[vl] = '\0';
		while (*s != '\0' && *s != ' ' && *s != '\t' && *s != '\n')
			s++;
		if (strcmp(key, "qdepth") == 0 || strcmp(key, "qdepth_bytes") == 0) {
			char *end;
			double q = strtod(val, &end);

			if (end == val) {
				a->ann_bad++;
				continue;
			}
			if (q > a->qdepth_max)
				a->qdepth_max = q;
			ana_series_add(&a->qdepth, t_ns, q);
		} else if (strcmp(key, "wait") == 0 || strcmp(key, "wait_ns") == 0) {
			char *end;
			unsigned long long w = strtoull(val, &end, 10);

			if (end == val) {
				a->ann_bad++;
				continue;
			}
			a->wait_sum_ns += w;
			a->wait_n++;
			if (w > a->wait_max_ns)
				a->wait_max_ns = w;
		} else if (strcmp(key, "drop") == 0) {
			uint32_t i;

			for (i = 0; i < a->n_drop_reasons; i++)
				if (strcmp(a->drop_reason[i], val) == 0)
					break;
			if (i == a->n_drop_reasons && i < ANA_DROP_REASONS) {
				snprintf(a->drop_reason[i], sizeof(a->drop_reason[i]), "%s", val);
				a->n_drop_reasons++;
			}
			if (i < ANA_DROP_REASONS)
				a->drop_count[i]++;
			if (f != NULL)
				f->c[ANA_C_DROPS_ANNOTATED]++;
			dropped = true;
		}
	}
	return dropped;
}

void
ana_feed(struct ana *a, const uint8_t *frame, uint32_t caplen, uint32_t orig_len,
	 uint64_t t_ns, uint32_t ifindex, const char *comment)
{
	struct roce_pkt p;
	struct ana_flow *f, *peer;
	uint64_t pktno = ++a->pkts;
	enum roce_class cls;
	bool hdr_only = false, fresh;
	uint64_t payload = 0;
	uint8_t op;

	a->bytes += orig_len;
	if (a->pkts == 1)
		a->t_first_ns = t_ns;
	if (t_ns < a->t_last_ns)
		a->time_back++;
	else
		a->t_last_ns = t_ns;
	cls = roce_parse_partial(frame, caplen, orig_len, 4791, &p);
	if (cls < 16)
		a->cls[cls]++;
	if (p.reason < 32)
		a->reasons[p.reason]++;
	if (cls == ROCE_CLASS_MAC_CONTROL) {
		if (p.macctl_opcode == 0x0101)
			a->pfc_frames++;
		else if (p.macctl_opcode == 0x0001)
			a->pause_frames++;
		if (p.macctl_opcode == 0x0101 || p.macctl_opcode == 0x0001)
			ana_pfc_frame(a, frame + 6, ifindex, p.macctl_opcode, p.pfc_enable,
				      p.pause_quanta, t_ns);
		if (comment != NULL)
			ana_annotation(a, NULL, comment, t_ns);
		return;
	}
	/* header-only captures: the BTH is there, extension headers or ICRC cut off */
	if (cls == ROCE_CLASS_INVALID && caplen < orig_len && p.bth_off != 0 &&
	    (p.reason == ROCE_REASON_TRUNC_EXT_HDR || p.reason == ROCE_REASON_TRUNC_BTH) &&
	    caplen >= (uint32_t)p.bth_off + 12u) {
		hdr_only = true;
		cls = ROCE_CLASS_ROCEV2;
	}
	if (cls != ROCE_CLASS_ROCEV2 && cls != ROCE_CLASS_ROCEV1) {
		if (cls == ROCE_CLASS_INVALID)
			a->invalid_pkts++;
		else
			a->other_pkts++;
		if (comment != NULL)
			ana_annotation(a, NULL, comment, t_ns);
		return;
	}
	a->roce_pkts++;
	op = p.opcode;
	if (p.transport == 3 || p.transport == 2) {
		a->ud_pkts++;
		if (comment != NULL)
			ana_annotation(a, NULL, comment, t_ns);
		return;
	}
	if (hdr_only)
		p.cls = ROCE_CLASS_ROCEV2;
	f = ana_flow_get(a, &p, pktno, t_ns);
	if (f == NULL) {
		a->flows_dropped_pkts++;
		return;
	}
	/* the table's entries do not age: a flow teaches it once, and again on a new port */
	if (f->c[ANA_C_PKTS] == 0 || f->last_sport != p.udp_sport) {
		roce_qpmap_learn(a->qpmap, &p, t_ns);
		f->last_sport = p.udp_sport;
	}
	f->c[ANA_C_PKTS]++;
	f->c[ANA_C_BYTES] += orig_len;
	f->ops[op]++;
	/* a packet the emulator dropped is counted, and nothing more: it was not delivered */
	if (comment != NULL && ana_annotation(a, f, comment, t_ns))
		return;
	f->t_last_ns = t_ns;
	/* the QP's own port, from its data and ACKs: CNPs may come from another port (0) */
	if (op == ROCE_OPCODE_CNP) {
		if (!f->have_cnp_sport) {
			f->have_cnp_sport = true;
			f->cnp_sport = p.udp_sport;
		}
	} else if (!f->have_sport) {
		f->have_sport = true;
		f->sport = p.udp_sport;
	} else if (f->sport != p.udp_sport) {
		f->sport_varies = true;
	}
	if (f->c[ANA_C_PKTS] == 1) {
		memcpy(f->src_mac, frame + 6, 6);
		f->rocev1 = cls == ROCE_CLASS_ROCEV1;
	}
	if (hdr_only || caplen < orig_len)
		f->c[ANA_C_HEADER_ONLY]++;
	else if (!roce_icrc_verify(frame, caplen, &p))
		f->c[ANA_C_ICRC_BAD]++;
	f->c[ANA_C_NOT_ECT + (p.ecn & 3)]++;
	peer = ana_peer(a, f, &p, t_ns);
	if (op == ROCE_OPCODE_CNP) {
		ana_cnp(a, f, peer, &p, pktno, t_ns);
		return;
	}
	if (f->transport == 0xFF)
		f->transport = p.transport;
	/* Manufacturer-specific opcodes (rocegen's SRD data 0xC0 and SACK 0xC1) are counted by
	 * opcode only: the RC checks below (PSN order, messages, go-back-N) do not apply to them,
	 * and their low five bits are not IBA operations. */
	if (op >= ROCE_OPCODE_VENDOR_FIRST)
		return;
	if ((op & 0x1F) == ROCE_OP_ACKNOWLEDGE || (op & 0x1F) == ROCE_OP_ATOMIC_ACKNOWLEDGE) {
		if (p.has_aeth)
			ana_response(f, peer, &p, pktno, t_ns);
		return;
	}
	if (!ana_is_data_op(op & 0x1F))
		return;
	f->c[ANA_C_DATA_PKTS]++;
	if (!f->have_data_prio) {
		f->have_data_prio = true;
		f->data_prio = p.n_vlans > 0 ? p.pcp : (uint8_t)(p.dscp >> 3);
	}
	if ((op & 0x1F) == ROCE_OP_RDMA_READ_REQUEST)
		f->c[ANA_C_READ_REQS]++;
	if (ana_is_msg_end(op & 0x1F))
		f->c[ANA_C_MESSAGES]++;
	{
		/* payload from the IP/UDP lengths (the frame may be cut): UDP length - UDP, BTH,
		 * extension headers, pad and ICRC */
		uint32_t plen = 0;

		if (p.ip_version == 4 && caplen >= (uint32_t)p.l4_off + 6u) {
			uint32_t ulen = (uint32_t)frame[p.l4_off + 4] << 8 | frame[p.l4_off + 5];
			uint32_t hdr = 8 + 12 + roce_opcode_ext_len(op) + p.padcnt + 4;

			plen = ulen > hdr ? ulen - hdr : 0;
		} else {
			plen = p.payload_len;
		}
		f->c[ANA_C_PAYLOAD_BYTES] += plen;
		payload = plen;
	}
	if (f->c[ANA_C_DATA_PKTS] == 1)
		f->t_first_data_ns = t_ns;
	/* wire bytes: the frame, its FCS, preamble and inter-frame gap */
	ana_series_add(&f->rate, t_ns, (double)orig_len + 24.0);
	/* pacing samples (for the DCQCN fit, which starts at the first CNP) only with --fit and
	 * once the capture has CNPs (the flows may not be paired yet): no memory for them
	 * otherwise */
	if (a->o.fit && f->prev_wire != 0 && t_ns > f->t_prev_tx_ns && a->cnps_seen > 0) {
		if (!f->gap_sum.started) {
			/* align with the rate series */
			f->gap_sum.t0_ns = f->rate.t0_ns;
			f->gap_n.t0_ns = f->rate.t0_ns;
			f->gap_sum.started = true;
			f->gap_n.started = true;
		}
		ana_series_add(&f->gap_sum, f->t_prev_tx_ns,
			       (double)f->prev_wire * 8000.0 / (double)(t_ns - f->t_prev_tx_ns));
		ana_series_add(&f->gap_n, f->t_prev_tx_ns, 1.0);
	}
	if (f->prev_wire != 0 && a->cnps_seen > 0 && t_ns > f->t_prev_tx_ns &&
	    (double)(t_ns - f->t_prev_tx_ns) > (double)a->o.window_ns / 64.0 &&
	    (double)(t_ns - f->t_prev_tx_ns) > (f->prev_ended_msg ? 2.0 : 4.0) *
	    f->prev_wire * 8.0 / a->o.link_gbps)
		ana_msg_gap(f, t_ns, !f->prev_ended_msg);
	f->prev_ended_msg = ana_is_msg_end(op & 0x1F);
	f->prev_gap_ns = f->prev_wire != 0 && t_ns > f->t_prev_tx_ns ? t_ns - f->t_prev_tx_ns : 0;
	f->t_prev_tx_ns = t_ns;
	f->prev_wire = orig_len + 24;
	if (p.ecn == 3) {
		ana_series_add(&f->ce_series, t_ns, 1.0);
		if (f->ce_first_open_ns == 0)
			f->ce_first_open_ns = t_ns ? t_ns : 1;
	}
	/* read responses carry the requester's PSNs: not this direction's sequence */
	if ((op & 0x1F) >= ROCE_OP_RDMA_READ_RESPONSE_FIRST &&
	    (op & 0x1F) <= ROCE_OP_RDMA_READ_RESPONSE_ONLY)
		fresh = true;
	else {
		/* new at this point of the capture: a PSN not seen before (a resend of a PSN lost
		 * before the capture point is the first copy seen here) */
		fresh = !(f->have_psn && psn_diff(p.psn, f->psn_max) <= 0 &&
			  ana_seen_get(f, p.psn));
		ana_data_psn(a, f, p.psn, pktno, t_ns);
	}
	/* goodput and collectives count each PSN once: resends are not application bytes */
	if (fresh) {
		f->c[ANA_C_GOODPUT_BYTES] += payload;
		ana_coll_data(a, f, t_ns, payload);
	}
	ana_bw_data(a, f, t_ns, orig_len + 24, fresh, payload);
}
