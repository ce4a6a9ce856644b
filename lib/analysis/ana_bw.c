/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Where the bandwidth went: per IP pair (the data of all its QPs, in capture order), the time
 * from its first data packet to the end of its last is split, gap by gap, into
 *
 *   line_rate       the frame time at --link-gbps of each new data packet
 *   retransmitting  the frame time of each resent one (a PSN seen before)
 *   pfc_paused      the part of a gap in which the data's priority (or 802.3x PAUSE) was
 *                   paused by a port other than the sender's own MAC
 *   idle            the rest of a gap of at least ANA_BW_IDLE_FRAMES frame times and
 *                   ANA_BW_IDLE_MIN_NS: the sender had nothing to send (between steps: the
 *                   host side or the intra-node phase of a collective)
 *   dcqcn_limited   the rest of a shorter gap while the sender is rate-limited: a CNP for the
 *                   pair came within ANA_BW_DCQCN_HORIZON_NS and no gap at line rate since
 *   host_limited    the rest of a shorter gap otherwise: the sender had data (the gap is
 *                   short) yet sent below the line rate with no pause and no CNP to explain
 *                   it (PCIe, GPUDirect RDMA off, the NIC or the CPU)
 *
 * so the parts add up to the span exactly. ana_bw_finish turns shares into findings, one line
 * each naming the likely layer (thresholds below; docs/rocestat.md states them).
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ana_internal.h"

#define ANA_BW_IDLE_FRAMES 64          /* a gap this many frame times or more: idle ... */
#define ANA_BW_IDLE_MIN_NS 10000       /* ... and at least 10 us */
#define ANA_BW_DCQCN_HORIZON_NS 2000000 /* a CNP limits the rate for 2 ms at most */
#define ANA_BW_LINE_GAP 1.25           /* a gap within 1.25 frame times: at line rate */
/* findings: a part's share of the span at or above these */
#define ANA_BW_HOST_SHARE 0.20
#define ANA_BW_PFC_SHARE 0.10
#define ANA_BW_DCQCN_SHARE 0.10
#define ANA_BW_RETX_SHARE 0.02
#define ANA_BW_IDLE_SHARE 0.30
#define ANA_BW_PAIRS_MAX 4096

static const char *const ana_bw_part_names[] = {
#define ANA_BW_NAME_(n, s) s,
	ANA_FOREACH_BW_PART(ANA_BW_NAME_)
#undef ANA_BW_NAME_
};

const char *
ana_bw_part_name(enum ana_bw_part p)
{
	return p < ANA_BW_PARTS ? ana_bw_part_names[p] : "unknown";
}

static int32_t
ana_bw_find(const struct ana *a, const uint8_t *src, const uint8_t *dst)
{
	uint32_t i;

	for (i = 0; i < a->n_bw; i++)
		if (memcmp(a->bw[i].src_ip, src, 16) == 0 && memcmp(a->bw[i].dst_ip, dst, 16) == 0)
			return (int32_t)i;
	return -1;
}

static struct ana_bw_pair *
ana_bw_get(struct ana *a, struct ana_flow *f, uint64_t t_ns)
{
	struct ana_bw_pair *p;
	int32_t i;

	if (f->bw_pair >= 0)
		return &a->bw[f->bw_pair];
	i = ana_bw_find(a, f->src_ip, f->dst_ip);
	if (i >= 0) {
		f->bw_pair = i;
		return &a->bw[i];
	}
	a->bw = ana_grow(a->bw, &a->cap_bw, a->n_bw, sizeof(*a->bw), 16, ANA_BW_PAIRS_MAX);
	if (a->n_bw == a->cap_bw)
		return NULL;
	p = &a->bw[a->n_bw];
	memset(p, 0, sizeof(*p));
	memcpy(p->src_ip, f->src_ip, 16);
	memcpy(p->dst_ip, f->dst_ip, 16);
	p->ip_version = f->ip_version;
	memcpy(p->src_mac, f->src_mac, 6);
	p->prio = f->data_prio;
	p->t_first_ns = t_ns;
	p->src_rank = p->dst_rank = p->rail = -1;
	ana_series_init(&p->rate, a->o.bin_ns, a->o.series_max_bins, false);
	f->bw_pair = (int32_t)a->n_bw;
	return &a->bw[a->n_bw++];
}

/* The frame time of @p wire bytes at the line rate, ns. */
static double
ana_bw_frame_ns(const struct ana *a, uint32_t wire)
{
	return wire * 8.0 / a->o.link_gbps;
}

void
ana_bw_data(struct ana *a, struct ana_flow *f, uint64_t t_ns, uint32_t wire, bool fresh,
	    uint64_t payload)
{
	struct ana_bw_pair *p = ana_bw_get(a, f, t_ns);

	if (p == NULL)
		return;
	if (p->pkts > 0 && t_ns >= p->t_prev_ns) {
		double gap = (double)(t_ns - p->t_prev_ns);
		double frame = ana_bw_frame_ns(a, p->prev_wire);
		double send = gap < frame ? gap : frame, slack = gap - send;

		p->part_ns[p->prev_retx ? ANA_BW_RETX : ANA_BW_LINE] += send;
		if (p->limited && (gap <= ANA_BW_LINE_GAP * frame ||
				   t_ns - p->last_cnp_ns > ANA_BW_DCQCN_HORIZON_NS))
			p->limited = false;
		if (slack > 0) {
			double paused = a->n_pfc == 0 ? 0 :
				(double)ana_pfc_paused_within(a, p->prio, p->src_mac,
							      p->t_prev_ns, t_ns);

			if (paused > slack)
				paused = slack;
			p->part_ns[ANA_BW_PAUSED] += paused;
			slack -= paused;
			if (gap >= ANA_BW_IDLE_FRAMES * frame && gap >= ANA_BW_IDLE_MIN_NS) {
				p->part_ns[ANA_BW_IDLE] += slack;
				p->idle_gaps++;
				if (t_ns - p->t_prev_ns > p->idle_max_ns)
					p->idle_max_ns = t_ns - p->t_prev_ns;
			} else {
				p->part_ns[p->limited ? ANA_BW_DCQCN : ANA_BW_HOST] += slack;
			}
		}
	}
	p->pkts++;
	p->wire_bytes += wire;
	if (fresh)
		p->goodput_bytes += payload;
	else
		p->retx_pkts++;
	p->prev_retx = !fresh;
	p->prev_wire = wire;
	p->t_prev_ns = t_ns;
	ana_series_add(&p->rate, t_ns, (double)wire);
}

/* A CNP on flow @p c (receiver -> sender): the pair sender -> receiver is rate-limited. */
void
ana_bw_cnp(struct ana *a, const struct ana_flow *c, uint64_t t_ns)
{
	int32_t i = ana_bw_find(a, c->dst_ip, c->src_ip);

	if (i < 0)
		return;
	a->bw[i].cnps++;
	a->bw[i].last_cnp_ns = t_ns;
	a->bw[i].limited = true;
}

static void
ana_bw_finding(struct ana_bw_pair *p, const char *kind, const char *layer, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static void
ana_bw_finding(struct ana_bw_pair *p, const char *kind, const char *layer, const char *fmt, ...)
{
	struct ana_bw_finding *x;
	va_list ap;

	if (p->n_find == ANA_BW_FINDINGS_MAX)
		return;
	x = &p->find[p->n_find++];
	x->kind = kind;
	x->layer = layer;
	va_start(ap, fmt);
	vsnprintf(x->text, sizeof(x->text), fmt, ap);
	va_end(ap);
}

static void
ana_bw_diagnose(const struct ana *a, struct ana_bw_pair *p)
{
	double span = p->span_ns > 0 ? p->span_ns : 1, line = a->o.link_gbps;
	double sh[ANA_BW_PARTS];
	unsigned int k;

	for (k = 0; k < ANA_BW_PARTS; k++)
		sh[k] = p->part_ns[k] / span;
	if (sh[ANA_BW_HOST] >= ANA_BW_HOST_SHARE)
		ana_bw_finding(p, "host_cap", "host (PCIe, GPUDirect RDMA, NIC or CPU)",
			       "sender never above %.1f Gb/s of %g (%.0f%% of the time below the line "
			       "rate with no pause and no CNP): host-side cap, check the NIC's PCIe "
			       "width and generation (lspci LnkSta) and GDR (NCCL's 'via NET/IB/x/"
			       "GDRDMA')", p->peak_gbps, line, 100 * sh[ANA_BW_HOST]);
	if (sh[ANA_BW_PAUSED] >= ANA_BW_PFC_SHARE)
		ana_bw_finding(p, "pfc", "fabric: PFC (congestion downstream)",
			       "paused by PFC %.0f%% of the time (priority %u): congestion downstream "
			       "(an incast, a slow receiver, a storm); ECN marking should act before "
			       "PFC: check the switch's ECN thresholds against its PFC xoff",
			       100 * sh[ANA_BW_PAUSED], p->prio);
	if (sh[ANA_BW_DCQCN] >= ANA_BW_DCQCN_SHARE)
		ana_bw_finding(p, "dcqcn", "fabric: ECN marking and DCQCN",
			       "rate-limited after %lu CNPs %.0f%% of the time (DCQCN): ECN marks in "
			       "the fabric; check the ECN thresholds and the DCQCN parameters "
			       "(rocestat --dcqcn FILE --fit)", (unsigned long)p->cnps,
			       100 * sh[ANA_BW_DCQCN]);
	if (sh[ANA_BW_RETX] >= ANA_BW_RETX_SHARE)
		ana_bw_finding(p, "retransmission", "fabric: loss",
			       "retransmitting %.1f%% of the time (%lu packets resent): frames lost "
			       "in the fabric; check drops and that the lossless class is lossless",
			       100 * sh[ANA_BW_RETX], (unsigned long)p->retx_pkts);
	if (sh[ANA_BW_IDLE] >= ANA_BW_IDLE_SHARE)
		ana_bw_finding(p, "idle", "host or intra-node phase (not the network)",
			       "idle %.0f%% of the time in %u gaps (the longest %.1f us): nothing to "
			       "send between steps; the host side or the intra-node phase (NVLink/PCIe "
			       "reduction, NCCL's proxy), not the network", 100 * sh[ANA_BW_IDLE],
			       p->idle_gaps, p->idle_max_ns / 1000.0);
	if (a->o.expect_qps > 0 && p->qps != a->o.expect_qps)
		ana_bw_finding(p, "qps", "NCCL configuration (channels, QPs per connection)",
			       "%u QP(s) carry data to this peer, %u expected: check "
			       "NCCL_IB_QPS_PER_CONNECTION, NCCL_NCHANNELS_PER_NET_PEER and "
			       "NCCL_IB_SPLIT_DATA_ON_QPS (or NCCL chose fewer channels)", p->qps,
			       a->o.expect_qps);
}

/* The rank of an address and the rail of a rank pair, from --nccl-log or --rocegen-json. */
static void
ana_bw_ranks(const struct ana *a, struct ana_bw_pair *p)
{
	uint32_t i;

	for (i = 0; i < a->n_rank_ips; i++) {
		if (memcmp(a->rank_ips[i].ip, p->src_ip, 16) == 0)
			p->src_rank = a->rank_ips[i].rank;
		if (memcmp(a->rank_ips[i].ip, p->dst_ip, 16) == 0)
			p->dst_rank = a->rank_ips[i].rank;
	}
	for (i = 0; i < a->n_rails && p->src_rank >= 0; i++)
		if (a->rails[i].from == p->src_rank && a->rails[i].to == p->dst_rank)
			p->rail = a->rails[i].rail;
	/* rocegen: a QP's frames leave by its sending rank's rail (rocegen.md, "Rails") */
	if (p->rail < 0 && a->rocegen_seen && p->src_rank >= 0 && p->dst_rank >= 0)
		p->rail = (int32_t)((uint32_t)p->src_rank % a->rg_per_process % a->rg_rails);
}

void
ana_bw_finish(struct ana *a)
{
	uint32_t i, j;

	for (i = 0; i < a->n_bw; i++) {
		struct ana_bw_pair *p = &a->bw[i];
		double last = ana_bw_frame_ns(a, p->prev_wire);

		/* the last frame's own time ends the span */
		p->part_ns[p->prev_retx ? ANA_BW_RETX : ANA_BW_LINE] += last;
		p->span_ns = (double)(p->t_prev_ns - p->t_first_ns) + last;
		p->peak_gbps = ana_series_peak_mbps(&p->rate, a->o.window_ns) / 1000.0;
		p->qps = 0;
		for (j = 0; j < a->n_flows; j++)
			if (a->flows[j].bw_pair == (int32_t)i && a->flows[j].bulk_pkts > 0)
				p->qps++;
		ana_bw_ranks(a, p);
		ana_bw_diagnose(a, p);
	}
}

void
ana_bw_free(struct ana *a)
{
	uint32_t i;

	for (i = 0; i < a->n_bw; i++)
		ana_series_free(&a->bw[i].rate);
	free(a->bw);
	a->bw = NULL;
	a->n_bw = 0;
	free(a->rank_ips);
	a->rank_ips = NULL;
	free(a->rails);
	a->rails = NULL;
}
