/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Outputs: the text report (nccl-tests / ethtool -S style tables), the JSON document
 * (docs/rocestat.md names every field) and the CSV time series.
 *
 * Over 600 lines (about 1045): text, JSON and CSV of every section; one file per output
 * format is the natural split.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "lib/proto/roce_proto.h"

#include "ana_internal.h"

static void
ana_flow_label(const struct ana *a, const struct ana_flow *f, char *buf, size_t len)
{
	char s[48], d[48];

	ana_ip_str(f->src_ip, f->ip_version, s, sizeof(s));
	ana_ip_str(f->dst_ip, f->ip_version, d, sizeof(d));
	if (f->sqp_known)
		snprintf(buf, len, "%s:0x%x->%s:0x%x", s, f->sqp, d, f->dqp);
	else
		snprintf(buf, len, "%s:?->%s:0x%x", s, d, f->dqp);
	(void)a;
}

/* ---- CNP pacing scopes ---- */

struct ana_scope {
	uint64_t min_gap_ns;
	uint64_t violations;
	uint64_t groups;
};

static int
ana_cmp_u64(const void *x, const void *y)
{
	uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;

	return a < b ? -1 : a > b;
}

/* Whether CNP flows f and g share a pacing group of the scope. */
static bool
ana_same_scope(const struct ana_flow *f, const struct ana_flow *g, int scope)
{
	bool src = memcmp(g->src_ip, f->src_ip, 16) == 0, dst = memcmp(g->dst_ip, f->dst_ip, 16) == 0;

	return scope == 1 ? src && dst : scope == 2 ? src : scope == 3 ? dst : false;
}

/*
 * Scope 0: per QP, 1: per IP pair, 2: per NP port (CNP source IP), 3: per destination IP
 * (the data sender's host): Lumina's scopes.
 */
static void
ana_scope(const struct ana *a, int scope, struct ana_scope *out)
{
	bool *done = calloc(a->n_flows ? a->n_flows : 1, sizeof(bool));
	uint32_t i, j;

	memset(out, 0, sizeof(*out));
	out->min_gap_ns = UINT64_MAX;
	if (done == NULL)
		return;
	for (i = 0; i < a->n_flows; i++) {
		const struct ana_flow *f = &a->flows[i];
		uint64_t *t, n = 0;

		if (done[i] || f->n_cnp == 0)
			continue;
		for (j = i; j < a->n_flows; j++) {
			const struct ana_flow *g = &a->flows[j];

			if (done[j] || g->n_cnp == 0)
				continue;
			if (j != i && !ana_same_scope(f, g, scope))
				continue;
			n += g->n_cnp;
		}
		t = malloc(n * sizeof(*t));
		if (t == NULL)
			break;
		n = 0;
		for (j = i; j < a->n_flows; j++) {
			const struct ana_flow *g = &a->flows[j];

			if (done[j] || g->n_cnp == 0)
				continue;
			if (j != i && !ana_same_scope(f, g, scope))
				continue;
			memcpy(t + n, g->cnp_t, g->n_cnp * sizeof(*t));
			n += g->n_cnp;
			done[j] = true;
		}
		qsort(t, n, sizeof(*t), ana_cmp_u64);
		for (j = 1; j < n; j++) {
			uint64_t gap = t[j] - t[j - 1];

			if (gap < out->min_gap_ns)
				out->min_gap_ns = gap;
			if (gap < a->o.np_min_time_between_cnps_ns)
				out->violations++;
		}
		out->groups++;
		free(t);
	}
	free(done);
}

#define ANA_SCOPES 4
static const char *const ana_scope_names[] = { "qp", "ip_pair", "port", "dst_ip" };

/* The broadest scope without violations; "none" if even per QP some CNPs come too fast. */
static const char *
ana_scope_inferred(const struct ana_scope *s)
{
	int i;

	static const int order[] = { 2, 3, 1, 0 }; /* broadest first */

	for (i = 0; i < ANA_SCOPES; i++)
		if (s[order[i]].violations == 0 && s[order[i]].groups > 0)
			return ana_scope_names[order[i]];
	return s[0].groups ? "none" : "no_cnps";
}

/* ---- collectives: host pairs and the pattern ---- */

struct ana_hpair {
	const uint8_t *src, *dst;
	uint8_t version;
	uint32_t qps;
	uint64_t bytes;
};

/*
 * Host pairs carrying bulk data (flows with at least 64 KiB of goodput, or 1% of the largest),
 * and the pattern they form: "ring" (every host sends to one and receives from one, one
 * cycle), "all_to_all" (every host sends to every other, more than 2 hosts), "tree" (pairs
 * in both directions forming a tree), "incast" (all send to one), else "other".
 */
static uint32_t
ana_host_pairs(const struct ana *a, struct ana_hpair *hp, uint32_t cap, const char **pattern)
{
	uint64_t big = 0, thr;
	uint32_t n = 0, i, j, nh = 0, k;
	const uint8_t *hosts[64];
	unsigned int outd[64] = { 0 }, ind[64] = { 0 };
	bool ring = true, a2a = true;

	*pattern = "none";
	for (i = 0; i < a->n_flows; i++)
		if (a->flows[i].c[ANA_C_GOODPUT_BYTES] > big)
			big = a->flows[i].c[ANA_C_GOODPUT_BYTES];
	thr = big / 100 > 65536 ? 65536 : big / 100;
	if (big == 0)
		return 0;
	for (i = 0; i < a->n_flows; i++) {
		const struct ana_flow *f = &a->flows[i];

		if (f->c[ANA_C_GOODPUT_BYTES] < thr || f->c[ANA_C_GOODPUT_BYTES] == 0)
			continue;
		for (j = 0; j < n; j++)
			if (memcmp(hp[j].src, f->src_ip, 16) == 0 && memcmp(hp[j].dst, f->dst_ip, 16) == 0)
				break;
		if (j == n) {
			if (n == cap)
				continue;
			hp[n].src = f->src_ip;
			hp[n].dst = f->dst_ip;
			hp[n].version = f->ip_version;
			hp[n].qps = 0;
			hp[n].bytes = 0;
			n++;
		}
		hp[j].qps++;
		hp[j].bytes += f->c[ANA_C_GOODPUT_BYTES];
	}
	for (i = 0; i < n; i++) {
		const uint8_t *e[2] = { hp[i].src, hp[i].dst };

		for (k = 0; k < 2; k++) {
			for (j = 0; j < nh; j++)
				if (memcmp(hosts[j], e[k], 16) == 0)
					break;
			if (j == nh && nh < 64)
				hosts[nh++] = e[k];
			if (j < 64)
				(k == 0 ? outd : ind)[j]++;
		}
	}
	if (nh < 2) {
		*pattern = "other";
		return n;
	}
	for (j = 0; j < nh; j++) {
		if (outd[j] != 1 || ind[j] != 1)
			ring = false;
		if (outd[j] != nh - 1 || ind[j] != nh - 1)
			a2a = false;
	}
	if (ring) {
		/* one cycle: follow the successors from host 0 */
		const uint8_t *cur = hosts[0];
		uint32_t steps = 0;

		do {
			for (i = 0; i < n; i++)
				if (memcmp(hp[i].src, cur, 16) == 0)
					break;
			cur = hp[i].dst;
			steps++;
		} while (memcmp(cur, hosts[0], 16) != 0 && steps <= nh);
		*pattern = steps == nh ? "ring" : "other";
	} else if (a2a && nh > 2) {
		*pattern = "all_to_all";
	} else if (n == 2 * (nh - 1)) {
		bool sym = true;

		for (i = 0; i < n && sym; i++) {
			for (j = 0; j < n; j++)
				if (memcmp(hp[j].src, hp[i].dst, 16) == 0 &&
				    memcmp(hp[j].dst, hp[i].src, 16) == 0)
					break;
			sym = j < n;
		}
		*pattern = sym ? "tree" : "other";
	} else {
		for (j = 0; j < nh; j++)
			if (ind[j] == nh - 1 && n == nh - 1)
				*pattern = "incast";
		if (strcmp(*pattern, "incast") != 0)
			*pattern = "other";
	}
	return n;
}

/* ---- text ---- */

static void
ana_text_checks(const struct ana *a, FILE *out, const struct ana_flow *f, const char *lbl)
{
	uint32_t i;

#define FIRST_EV(T, V)                                                                  \
	const struct ana_event *V = NULL;                                               \
	for (i = 0; i < f->n_ev; i++)                                                   \
		if (f->ev[i].type == (T)) {                                             \
			V = &f->ev[i];                                                  \
			break;                                                          \
		}
	if (f->c[ANA_C_NAKS_SEQ] > 0) {
		FIRST_EV(ANA_EV_DOUBLE_NAK, e)
		if (e != NULL)
			fprintf(out, "  FAIL one NAK per gap        %s: packet %lu NAKs PSN %u again "
				"(first NAK packet %lu, no resend between)\n", lbl,
				(unsigned long)e->pkt, e->psn, (unsigned long)e->pkt2);
		else
			fprintf(out, "  PASS one NAK per gap        %s: %lu NAKs\n", lbl,
				(unsigned long)f->c[ANA_C_NAKS_SEQ]);
	}
	if (f->c[ANA_C_ACKS] > 0) {
		FIRST_EV(ANA_EV_ACK_BACK, e)
		if (e != NULL)
			fprintf(out, "  FAIL ACK PSN never goes back %s: packet %lu acks %u after "
				"packet %lu acked %u\n", lbl, (unsigned long)e->pkt, e->psn,
				(unsigned long)e->pkt2, e->psn2);
		else
			fprintf(out, "  PASS ACK PSN never goes back %s: %lu ACKs\n", lbl,
				(unsigned long)f->c[ANA_C_ACKS]);
	}
	if (f->c[ANA_C_RETX_ROUNDS] > 0 || f->c[ANA_C_RESTART_BAD] > 0) {
		FIRST_EV(ANA_EV_RESTART_BAD, e)
		if (e != NULL)
			fprintf(out, "  FAIL go-back-N at NAK'd PSN %s: packet %lu resends from PSN "
				"%u, the NAK (packet %lu) asked for %u\n", lbl,
				(unsigned long)e->pkt, e->psn, (unsigned long)e->pkt2, e->psn2);
		else
			fprintf(out, "  PASS go-back-N at NAK'd PSN %s: %lu rounds (%lu after a NAK, "
				"%lu timeouts, %lu duplicates)\n", lbl,
				(unsigned long)f->c[ANA_C_RETX_ROUNDS],
				(unsigned long)(f->c[ANA_C_RETX_ROUNDS] - f->c[ANA_C_TIMEOUTS]),
				(unsigned long)f->c[ANA_C_TIMEOUTS],
				(unsigned long)f->c[ANA_C_DUP_RUNS]);
	}
	if (f->n_cnp > 0) {
		FIRST_EV(ANA_EV_CNP_FAST, e)
		if (e != NULL)
			fprintf(out, "  FAIL CNP spacing >= %.1f us %s: packet %lu came %.3f us after "
				"the previous CNP\n", a->o.np_min_time_between_cnps_ns / 1000.0, lbl,
				(unsigned long)e->pkt, e->val / 1000.0);
		else
			fprintf(out, "  PASS CNP spacing >= %.1f us %s: %u CNPs\n",
				a->o.np_min_time_between_cnps_ns / 1000.0, lbl, f->n_cnp);
		fprintf(out, "  %s CNP BECN set             %s: %lu without\n",
			f->c[ANA_C_CNPS_NO_BECN] ? "FAIL" : "PASS", lbl,
			(unsigned long)f->c[ANA_C_CNPS_NO_BECN]);
	}
	for (i = 0; i < f->n_ev && i < 40; i++) {
		const struct ana_event *e = &f->ev[i];

		switch (e->type) {
		case ANA_EV_GAP:
			fprintf(out, "       gap        packet %lu: PSN %u..%u not seen\n",
				(unsigned long)e->pkt, e->psn, e->psn2);
			break;
		case ANA_EV_RETX:
			fprintf(out, "       retx       packet %lu: round from PSN %u, %.3f us after "
				"the NAK (packet %lu)\n", (unsigned long)e->pkt, e->psn,
				e->val / 1000.0, (unsigned long)e->pkt2);
			break;
		case ANA_EV_LOST_RETX:
			fprintf(out, "       lost retx  packet %lu: resend of PSN %u..%u not seen\n",
				(unsigned long)e->pkt, e->psn, e->psn2);
			break;
		case ANA_EV_TIMEOUT:
			fprintf(out, "       timeout    packet %lu: resend from PSN %u without NAK "
				"after %.3f us of silence\n", (unsigned long)e->pkt, e->psn,
				e->val / 1000.0);
			break;
		case ANA_EV_DUP:
			fprintf(out, "       duplicate  packet %lu: PSN %u again, no NAK\n",
				(unsigned long)e->pkt, e->psn);
			break;
		case ANA_EV_OOO:
			fprintf(out, "       reordered  packet %lu: PSN %u late by %ld PSNs\n",
				(unsigned long)e->pkt, e->psn, (long)e->val);
			break;
		case ANA_EV_NAK:
			fprintf(out, "       nak        packet %lu: PSN %u\n", (unsigned long)e->pkt,
				e->psn);
			break;
		default:
			break;
		}
	}
#undef FIRST_EV
}

int
ana_write_text(struct ana *a, FILE *out)
{
	double dur_us = (double)(a->t_last_ns - a->t_first_ns) / 1000.0;
	struct ana_scope sc[ANA_SCOPES];
	uint32_t i, j;

	fprintf(out, "# rocestat: %lu packets, %lu bytes, %.3f us; RoCE %lu, PFC %lu, PAUSE %lu, "
		"UD %lu, malformed RoCE %lu, other %lu\n", (unsigned long)a->pkts,
		(unsigned long)a->bytes, dur_us, (unsigned long)a->roce_pkts,
		(unsigned long)a->pfc_frames, (unsigned long)a->pause_frames,
		(unsigned long)a->ud_pkts, (unsigned long)a->invalid_pkts,
		(unsigned long)a->other_pkts);
	if (a->time_back)
		fprintf(out, "# warning: time went backwards %lu times\n",
			(unsigned long)a->time_back);
	fprintf(out, "#\n# QPs (both directions of each connection)\n");
	fprintf(out, "# %-44s %9s %11s %8s %7s %10s %10s %9s %6s %5s %5s %7s\n", "flow",
		"packets", "bytes", "data", "msgs", "mean Mb/s", "peak Mb/s", "PSNs", "CE",
		"CNPs", "NAKs", "sport");
	for (i = 0; i < a->n_conns; i++) {
		const struct ana_conn *c = &a->conns[i];
		int32_t side[2] = { c->a, c->b };

		for (j = 0; j < 2; j++) {
			const struct ana_flow *f;
			char lbl[192];

			if (side[j] < 0)
				continue;
			f = &a->flows[side[j]];
			ana_flow_label(a, f, lbl, sizeof(lbl));
			fprintf(out, "  %-44s %9lu %11lu %8lu %7lu %10.1f %10.1f %9lu %6lu %5u %5lu "
				"%7u%s\n", lbl, (unsigned long)f->c[ANA_C_PKTS],
				(unsigned long)f->c[ANA_C_BYTES],
				(unsigned long)f->c[ANA_C_DATA_PKTS],
				(unsigned long)f->c[ANA_C_MESSAGES], ana_flow_mean_mbps(f),
				ana_flow_peak_mbps(a, f),
				f->have_psn ? (unsigned long)(((f->psn_max - f->psn_first) &
							       0xFFFFFF) + 1) : 0UL,
				(unsigned long)f->c[ANA_C_CE], f->n_cnp,
				(unsigned long)(f->c[ANA_C_NAKS_SEQ] + f->c[ANA_C_NAKS_RNR] +
						f->c[ANA_C_NAKS_OTHER]),
				f->sport, f->sport_varies ? "*" : "");
		}
		if (c->sport_checked)
			fprintf(out, "    UDP source port %s the Linux/mlx5 rule (expected %u)%s%s\n",
				c->sport_linux ? "follows" : "does NOT follow", c->sport_expected,
				c->sport_linux ? "" : ": ",
				c->sport_linux ? "" : strcmp(c->sport_rule, "per_direction") == 0 ?
				"a different port per direction" :
				strcmp(c->sport_rule, "symmetric_other") == 0 ?
				"the same port both ways, another hash" :
				strcmp(c->sport_rule, "varies") == 0 ? "the port changes" : "another rule");
		else if (a->flows[c->a].rocev1)
			fprintf(out, "    RoCEv1 (GRH): no UDP source port\n");
		else
			fprintf(out, "    one direction only: UDP source port rule not checked\n");
	}
	fprintf(out, "#\n# Counters per flow (non-zero, ethtool -S style)\n");
	for (i = 0; i < a->n_flows; i++) {
		const struct ana_flow *f = &a->flows[i];
		char lbl[192];
		unsigned int k;

		ana_flow_label(a, f, lbl, sizeof(lbl));
		fprintf(out, "%s:\n", lbl);
		for (k = 0; k < ANA_C_MAX; k++)
			if (f->c[k])
				fprintf(out, "     %s: %lu\n", ana_ctr_name(k), (unsigned long)f->c[k]);
		for (k = 0; k < 256; k++)
			if (f->ops[k])
				fprintf(out, "     op_%s: %lu\n", roce_opcode_name((uint8_t)k),
					(unsigned long)f->ops[k]);
		if (f->retx_lat_n)
			fprintf(out, "     retx_latency_us: min %.3f mean %.3f max %.3f\n",
				f->retx_lat_min_ns / 1000.0,
				f->retx_lat_sum_ns / 1000.0 / (double)f->retx_lat_n,
				f->retx_lat_max_ns / 1000.0);
		if (f->cnp_lat_n)
			fprintf(out, "     ce_to_cnp_latency_us: first %.3f mean %.3f max %.3f\n",
				f->cnp_lat_first_ns / 1000.0, f->cnp_lat_sum_ns / 1000.0 / (double)f->cnp_lat_n,
				f->cnp_lat_max_ns / 1000.0);
		if (f->nak_gen_n)
			fprintf(out, "     nak_latency_us (gap seen to NAK): mean %.3f max %.3f\n",
				f->nak_gen_sum_ns / 1000.0 / (double)f->nak_gen_n,
				f->nak_gen_max_ns / 1000.0);
		if (f->reorder_max)
			fprintf(out, "     reorder_degree_max: %ld\n", (long)f->reorder_max);
		if (f->n_cnp)
			fprintf(out, "     cnp_min_gap_us: %.3f  cnp_dscp: %u  cnp_pcp: %u  "
				"cnp_ecn: %u%s\n", f->cnp_min_gap_ns / 1000.0, f->cnp_dscp,
				f->cnp_pcp, f->cnp_ecn, f->cnp_fields_vary ? " (varies)" : "");
	}
	fprintf(out, "#\n# Checks\n");
	for (i = 0; i < a->n_flows; i++) {
		char lbl[192];

		ana_flow_label(a, &a->flows[i], lbl, sizeof(lbl));
		ana_text_checks(a, out, &a->flows[i], lbl);
	}
	for (i = 0; i < ANA_SCOPES; i++)
		ana_scope(a, (int)i, &sc[i]);
	if (sc[0].groups) {
		fprintf(out, "#\n# CNP pacing (min_time_between_cnps %.1f us, %s)\n",
			a->o.np_min_time_between_cnps_ns / 1000.0,
			strcmp(a->o.np_min_source, "flag") == 0 ? "from --np-min-time-between-cnps" :
			strcmp(a->o.np_min_source, "dcqcn") == 0 ? "from the --dcqcn file" :
			"the default");
		fprintf(out, "# %-8s %7s %12s %11s\n", "scope", "groups", "min gap us",
			"violations");
		for (i = 0; i < ANA_SCOPES; i++)
			fprintf(out, "  %-8s %7lu %12.3f %11lu\n", ana_scope_names[i],
				(unsigned long)sc[i].groups,
				sc[i].min_gap_ns == UINT64_MAX ? 0 : sc[i].min_gap_ns / 1000.0,
				(unsigned long)sc[i].violations);
		fprintf(out, "  pacing scope consistent with the capture: %s\n",
			ana_scope_inferred(sc));
	}
	if (a->n_pfc) {
		fprintf(out, "#\n# PFC / PAUSE at %g Gb/s (prio 8 = 802.3x PAUSE)\n", a->o.link_gbps);
		fprintf(out, "# %-17s %4s %7s %7s %7s %12s %8s %12s %6s\n", "port (src MAC)", "prio",
			"frames", "XOFF", "XON", "paused us", "% time", "longest us", "storms");
		for (i = 0; i < a->n_pfc; i++)
			for (j = 0; j < ANA_PRIOS; j++) {
				const struct ana_pfc_prio *q = &a->pfc[i].prio[j];
				const uint8_t *m = a->pfc[i].mac;

				if (q->frames == 0)
					continue;
				fprintf(out, "  %02x:%02x:%02x:%02x:%02x:%02x %4u %7lu %7lu %7lu %12.3f "
					"%8.3f %12.3f %6lu\n", m[0], m[1], m[2], m[3], m[4], m[5], j,
					(unsigned long)q->frames, (unsigned long)q->xoff,
					(unsigned long)q->xon, q->paused_ns / 1000.0,
					dur_us > 0 ? q->paused_ns / 10.0 / dur_us : 0,
					q->longest_ns / 1000.0, (unsigned long)q->storms);
			}
	}
	if (a->ann_pkts) {
		fprintf(out, "#\n# rocemu annotations: %lu packets (%lu unreadable fields)\n",
			(unsigned long)a->ann_pkts, (unsigned long)a->ann_bad);
		fprintf(out, "  queue depth max %.0f, wait mean %.3f us max %.3f us\n",
			a->qdepth_max, a->wait_n ? a->wait_sum_ns / 1000.0 / a->wait_n : 0,
			a->wait_max_ns / 1000.0);
		for (i = 0; i < a->n_drop_reasons; i++)
			fprintf(out, "  drop %-24s %lu\n", a->drop_reason[i],
				(unsigned long)a->drop_count[i]);
	}
	for (i = 0; i < a->n_dres; i++) {
		const struct ana_dcqcn_res *r = &a->dres[i];
		char lbl[192];

		ana_flow_label(a, &a->flows[r->flow], lbl, sizeof(lbl));
		fprintf(out, "#\n# DCQCN validation %s against '%s' at %g Gb/s\n", lbl,
			a->o.dcqcn_name, a->o.link_gbps);
		fprintf(out, "# %4s %12s %13s %13s %13s %4s\n", "cnp", "time us", "before Mb/s",
			"measured Mb/s", "model Mb/s", "ok");
		for (j = 0; j < r->n_cuts && j < 30; j++)
			fprintf(out, "  %4u %12.3f %13.1f %13.1f %13.1f %4s\n", j,
				(r->cuts[j].t_ns - a->t_first_ns) / 1000.0, r->cuts[j].before_mbps,
				r->cuts[j].meas_after_mbps, r->cuts[j].pred_after_mbps,
				r->cuts[j].ok ? "yes" : "NO");
		if (r->n_cuts > 30)
			fprintf(out, "  ... %u more in --json / --csv\n", r->n_cuts - 30);
		fprintf(out, "  trajectory error %.4f (a sender ignoring CNPs: %.4f)\n", r->err_traj,
			r->err_traj_line);
		if (r->idle_gaps > 0 || r->idle_unknown > 0)
			fprintf(out, "  idle between messages: %.3f ms in %u gaps; left out %u of %u "
				"windows and %u cuts%s%s\n", r->idle_ns / 1e6, r->idle_gaps,
				r->windows_idle, r->windows, r->cuts_idle,
				r->pauses > 0 ? " (PFC pauses included)" : "", r->idle_unknown ?
				" (more gaps than kept: some idle time may be counted against the "
				"sender)" : "");
		if (r->pauses > 0)
			fprintf(out, "  PFC pauses of the sender: %.3f ms in %u; left out %u of %u "
				"windows; %u gaps inside messages were pauses, not stalls\n",
				r->paused_ns / 1e6, r->pauses, r->windows_paused, r->windows,
				r->gaps_paused);
		if (r->stalls > 0)
			fprintf(out, "  stalls inside messages: %u, %.3f ms in all, the longest "
				"%.3f ms (counted against the sender: its window or its host held "
				"it back, or a pause the capture does not hold)\n", r->stalls,
				r->stall_ns / 1e6, r->stall_max_ns / 1e6);
		{
			char m[32], q[32];

			if (r->recovery_meas_ns < 0)
				snprintf(m, sizeof(m), "not reached");
			else
				snprintf(m, sizeof(m), "%.1f us", r->recovery_meas_ns / 1000.0);
			if (r->recovery_pred_ns < 0)
				snprintf(q, sizeof(q), "not reached");
			else
				snprintf(q, sizeof(q), "%.1f us", r->recovery_pred_ns / 1000.0);
			fprintf(out, "  recovery to 95%% of line rate after the last CNP: measured %s, "
				"model %s (model: %lu fast recovery, %lu additive, %lu hyper steps)\n",
				m, q, (unsigned long)r->pred_fast, (unsigned long)r->pred_additive,
				(unsigned long)r->pred_hyper);
		}
		fprintf(out, "  %s %s\n", r->pass ? "PASS" : "FAIL", r->why);
		if (r->fitted)
			fprintf(out, "  fit (error %.4f): initial_alpha_value %.1f dce_tcp_g %.1f "
				"rpg_time_reset %.2f us rpg_ai_rate %.3f Mb/s rpg_hai_rate %.3f Mb/s "
				"rpg_threshold %u rpg_min_dec_fac %u%%; differs from '%s' in: %s\n",
				r->fit_err, r->fit.initial_alpha * 1024, 1024 - r->fit.g * 1024,
				r->fit.rpg_time_reset_ns / 1000.0, r->fit.rpg_ai_rate_mbps,
				r->fit.rpg_hai_rate_mbps, r->fit.rpg_threshold,
				r->fit.rpg_min_dec_fac_pct, a->o.dcqcn_name,
				r->fit_differs[0] ? r->fit_differs : "nothing (within 5%)");
		if (r->fitted && !r->pass) {
			uint32_t k;

			if (r->n_explained == 0)
				fprintf(out, "  no one parameter changed alone explains the trace "
					"within %.3f\n", a->o.tol_traj);
			for (k = 0; k < r->n_explained; k++)
				fprintf(out, "  changed alone, %s = %.6g explains the trace (trajectory "
					"error %.3f <= %.3f)\n", r->expl[k].name, r->expl[k].value,
					r->expl[k].error, a->o.tol_traj);
		}
	}
	if (a->n_iters && (a->o.collective[0] || a->app_seen)) {
		double bus, f = a->o.collective[0] ?
				  ana_coll_factor(a->o.collective, a->o.ranks, &bus) : 0;

		struct ana_hpair hp[256];
		const char *pattern;
		uint32_t np = ana_host_pairs(a, hp, 256, &pattern);

		fprintf(out, "#\n# Iterations (bursts separated by >= %.1f us idle)%s%s, %u ranks; "
			"%u host pairs carry the data, pattern: %s\n", a->o.idle_gap_ns / 1000.0,
			a->o.collective[0] ? ": " : "", a->o.collective, a->o.ranks, np, pattern);
		fprintf(out, "# %5s %12s %12s %14s %12s %8s %8s\n", "iter", "start us", "time us",
			"wire bytes", "size (B)", "algbw", "busbw");
		fprintf(out, "# %5s %12s %12s %14s %12s %8s %8s\n", "", "", "", "", "", "(GB/s)",
			"(GB/s)");
		for (i = 0; i < a->n_iters; i++) {
			const struct ana_iter *it = &a->iters[i];
			double t_s = (double)(it->end_ns - it->start_ns) / 1e9;
			double size = f > 0 ? (double)it->bytes / f : 0;
			double alg = t_s > 0 && f > 0 ? size / 1e9 / t_s : 0;

			fprintf(out, "  %5u %12.3f %12.3f %14lu %12.0f %8.3f %8.3f\n", i,
				(it->start_ns - a->t_first_ns) / 1000.0, t_s * 1e6,
				(unsigned long)it->bytes, size, alg, alg * (f > 0 ? bus : 0));
		}
		if (a->app_seen)
			fprintf(out, "  application (%s, size %lu): algbw %.3f GB/s busbw %.3f GB/s\n",
				a->app_kind, (unsigned long)a->app_size, a->app_algbw_gbs,
				a->app_busbw_gbs);
	}
	ana_bw_write_text(a, out);
	fprintf(out, "# %u checks FAILED\n", ana_failures(a));
	return ferror(out) ? -EIO : 0;
}

/* ---- JSON ---- */

/*
 * A time in the JSON: whole ns after the capture's first frame (exact, and below 2^53 for
 * 104 days, so JavaScript and jq hold it); capture.start gives the first frame's absolute
 * time as a string. A double of absolute us kept ten digits: 102 ms off. A time before the
 * first frame (a capture whose time goes backwards) is negative.
 */
static json_int_t
ana_rel_ns(const struct ana *a, uint64_t t_ns)
{
	return (json_int_t)t_ns - (json_int_t)a->t_first_ns;
}

static json_t *
ana_json_events(const struct ana *a, const struct ana_flow *f)
{
	json_t *arr = json_array();
	uint32_t i;

	for (i = 0; i < f->n_ev; i++) {
		const struct ana_event *e = &f->ev[i];

		json_array_append_new(arr, json_pack("{s:s,s:I,s:I,s:I,s:I,s:I,s:I}", "type",
						     ana_ev_name(e->type), "packet", (json_int_t)e->pkt,
						     "packet2", (json_int_t)e->pkt2, "t_ns",
						     ana_rel_ns(a, e->t_ns), "psn", (json_int_t)e->psn,
						     "psn2", (json_int_t)e->psn2, "value",
						     (json_int_t)e->val));
	}
	return arr;
}

static json_t *
ana_json_flow(const struct ana *a, const struct ana_flow *f, uint32_t idx)
{
	json_t *o = json_object(), *ctr = json_object(), *ops = json_object();
	char lbl[192], ip[64];
	unsigned int k;

	ana_flow_label(a, f, lbl, sizeof(lbl));
	json_object_set_new(o, "id", json_integer(idx));
	json_object_set_new(o, "label", json_string(lbl));
	ana_ip_str(f->src_ip, f->ip_version, ip, sizeof(ip));
	json_object_set_new(o, "src_ip", json_string(ip));
	ana_ip_str(f->dst_ip, f->ip_version, ip, sizeof(ip));
	json_object_set_new(o, "dst_ip", json_string(ip));
	json_object_set_new(o, "dest_qp", json_integer(f->dqp));
	json_object_set_new(o, "src_qp", f->sqp_known ? json_integer(f->sqp) : json_null());
	json_object_set_new(o, "peer", f->peer >= 0 ? json_integer(f->peer) : json_null());
	json_object_set_new(o, "udp_sport", json_integer(f->sport));
	json_object_set_new(o, "udp_sport_varies", json_boolean(f->sport_varies));
	json_object_set_new(o, "first_packet", json_integer((json_int_t)f->first_pkt));
	json_object_set_new(o, "t_first_ns", json_integer(ana_rel_ns(a, f->t_first_ns)));
	json_object_set_new(o, "t_last_ns", json_integer(ana_rel_ns(a, f->t_last_ns)));
	json_object_set_new(o, "active_ns", json_integer((json_int_t)(f->t_last_ns -
									 f->t_first_ns)));
	json_object_set_new(o, "mean_mbps", json_real(ana_flow_mean_mbps(f)));
	json_object_set_new(o, "peak_mbps", json_real(ana_flow_peak_mbps(a, f)));
	json_object_set_new(o, "psn_first", f->have_psn ? json_integer(f->psn_first) : json_null());
	json_object_set_new(o, "psn_max", f->have_psn ? json_integer(f->psn_max) : json_null());
	for (k = 0; k < ANA_C_MAX; k++)
		json_object_set_new(ctr, ana_ctr_name(k), json_integer((json_int_t)f->c[k]));
	json_object_set_new(o, "counters", ctr);
	for (k = 0; k < 256; k++)
		if (f->ops[k])
			json_object_set_new(ops, roce_opcode_name((uint8_t)k),
					    json_integer((json_int_t)f->ops[k]));
	json_object_set_new(o, "opcodes", ops);
	json_object_set_new(o, "acked_psns_per_ack", json_real(f->c[ANA_C_ACKS] ?
			    (double)f->c[ANA_C_ACKED_PSNS] / (double)f->c[ANA_C_ACKS] : 0));
	json_object_set_new(o, "retx_latency_us", f->retx_lat_n ?
			    json_pack("{s:f,s:f,s:f,s:I}", "min", f->retx_lat_min_ns / 1000.0,
				      "mean", f->retx_lat_sum_ns / 1000.0 / (double)f->retx_lat_n,
				      "max", f->retx_lat_max_ns / 1000.0, "n",
				      (json_int_t)f->retx_lat_n) : json_null());
	json_object_set_new(o, "nak_latency_us", f->nak_gen_n ?
			    json_pack("{s:f,s:f,s:I}", "mean",
				      f->nak_gen_sum_ns / 1000.0 / (double)f->nak_gen_n, "max",
				      f->nak_gen_max_ns / 1000.0, "n", (json_int_t)f->nak_gen_n) :
			    json_null());
	json_object_set_new(o, "reorder_degree_max", json_integer(f->reorder_max));
	json_object_set_new(o, "ce_to_cnp_latency_us", f->cnp_lat_n ?
			    json_pack("{s:f,s:f,s:f,s:I}", "first",
				      f->cnp_lat_first_ns / 1000.0, "mean",
				      f->cnp_lat_sum_ns / 1000.0 / (double)f->cnp_lat_n, "max",
				      f->cnp_lat_max_ns / 1000.0, "n", (json_int_t)f->cnp_lat_n) :
			    json_null());
	if (f->n_cnp)
		json_object_set_new(o, "cnp", json_pack("{s:I,s:f,s:i,s:i,s:i,s:b,s:i}", "count",
			(json_int_t)f->n_cnp, "min_gap_us", f->n_cnp > 1 ?
			f->cnp_min_gap_ns / 1000.0 : 0.0, "dscp", f->cnp_dscp, "pcp", f->cnp_pcp,
			"ecn", f->cnp_ecn, "fields_vary", f->cnp_fields_vary, "udp_sport",
			(int)f->cnp_sport));
	else
		json_object_set_new(o, "cnp", json_null());
	json_object_set_new(o, "checks", json_pack("{s:s,s:s,s:s,s:s,s:s}",
		"one_nak_per_gap", f->c[ANA_C_NAKS_SEQ] == 0 ? "n/a" :
			f->c[ANA_C_DOUBLE_NAKS] ? "FAIL" : "PASS",
		"ack_psn_monotonic", f->c[ANA_C_ACKS] == 0 ? "n/a" :
			f->c[ANA_C_ACK_BACK] ? "FAIL" : "PASS",
		"gbn_restart_at_nak", f->c[ANA_C_RETX_ROUNDS] == 0 ? "n/a" :
			f->c[ANA_C_RESTART_BAD] ? "FAIL" : "PASS",
		"cnp_spacing", f->n_cnp == 0 ? "n/a" : f->c[ANA_C_CNPS_FAST] ? "FAIL" : "PASS",
		"cnp_becn", f->n_cnp == 0 ? "n/a" : f->c[ANA_C_CNPS_NO_BECN] ? "FAIL" : "PASS"));
	json_object_set_new(o, "events", ana_json_events(a, f));
	json_object_set_new(o, "events_dropped", json_integer((json_int_t)f->ev_dropped));
	return o;
}

static json_t *
ana_json_params(const struct dcqcn_params *p)
{
	return json_pack("{s:f,s:f,s:I,s:i,s:f,s:f,s:i,s:f,s:f,s:f,s:f,s:f,s:b,s:b,s:f}",
		"line_rate_mbps", p->line_rate_mbps,
		"rpg_time_reset_us", p->rpg_time_reset_ns / 1000.0,
		"rpg_byte_reset", (json_int_t)p->rpg_byte_reset,
		"rpg_threshold", (int)p->rpg_threshold,
		"rpg_ai_rate_mbps", p->rpg_ai_rate_mbps,
		"rpg_hai_rate_mbps", p->rpg_hai_rate_mbps,
		"rpg_min_dec_fac_pct", (int)p->rpg_min_dec_fac_pct,
		"rpg_min_rate_mbps", p->rpg_min_rate_mbps,
		"dce_tcp_g", 1024 - p->g * 1024,
		"dce_tcp_rtt_us", p->alpha_period_ns / 1000.0,
		"rate_reduce_monitor_period_us", p->rate_reduce_monitor_period_ns / 1000.0,
		"initial_alpha_value", p->initial_alpha * 1024,
		"clamp_tgt_rate", p->clamp_tgt_rate,
		"clamp_tgt_rate_after_time_inc", p->clamp_tgt_rate_after_time_inc,
		"min_time_between_cnps_us", p->min_time_between_cnps_ns / 1000.0);
}

json_t *
ana_json(struct ana *a)
{
	json_t *root = json_object(), *flows = json_array(), *conns = json_array();
	json_t *pfc = json_array(), *dv = json_array(), *iters = json_array(), *cls = json_object();
	json_t *scope = json_object();
	struct ana_scope sc[ANA_SCOPES];
	char start[48];
	double bus = 0, f = a->o.collective[0] ? ana_coll_factor(a->o.collective, a->o.ranks,
								  &bus) : 0;
	uint32_t i, j;

	if (root == NULL)
		return NULL;
	snprintf(start, sizeof(start), "%lu.%09lu", (unsigned long)(a->t_first_ns / 1000000000),
		 (unsigned long)(a->t_first_ns % 1000000000));
	json_object_set_new(root, "capture", json_pack("{s:I,s:I,s:s,s:I,s:I,s:I,s:I,s:I,s:I,"
		"s:I,s:I}", "packets", (json_int_t)a->pkts, "bytes", (json_int_t)a->bytes,
		"start", start, "duration_ns",
		ana_rel_ns(a, a->t_last_ns), "roce_packets", (json_int_t)a->roce_pkts,
		"pfc_frames", (json_int_t)a->pfc_frames, "pause_frames",
		(json_int_t)a->pause_frames, "ud_packets", (json_int_t)a->ud_pkts,
		"malformed_roce", (json_int_t)a->invalid_pkts, "other_packets",
		(json_int_t)a->other_pkts, "time_backwards", (json_int_t)a->time_back));
	for (i = 0; i < 16 && i < ROCE_CLASS_MAX; i++)
		if (a->cls[i])
			json_object_set_new(cls, roce_class_name(i), json_integer((json_int_t)a->cls[i]));
	json_object_set_new(root, "classes", cls);
	{
		json_t *r = json_object();

		for (i = 1; i < 32 && i < ROCE_REASON_MAX; i++)
			if (a->reasons[i])
				json_object_set_new(r, roce_reason_name(i),
						    json_integer((json_int_t)a->reasons[i]));
		json_object_set_new(root, "malformed_reasons", r);
	}
	for (i = 0; i < a->n_flows; i++)
		json_array_append_new(flows, ana_json_flow(a, &a->flows[i], i));
	json_object_set_new(root, "flows", flows);
	for (i = 0; i < a->n_conns; i++) {
		const struct ana_conn *c = &a->conns[i];

		json_array_append_new(conns, json_pack("{s:i,s:o,s:o,s:o,s:o}", "a", c->a, "b",
			c->b >= 0 ? json_integer(c->b) : json_null(), "udp_sport_linux_rule",
			c->sport_checked ? json_boolean(c->sport_linux) : json_null(),
			"udp_sport_expected", c->sport_checked ? json_integer(c->sport_expected) :
			json_null(), "udp_sport_rule", c->sport_checked && c->sport_rule ?
			json_string(c->sport_rule) : json_null()));
	}
	json_object_set_new(root, "qps", conns);
	for (i = 0; i < ANA_SCOPES; i++) {
		ana_scope(a, (int)i, &sc[i]);
		json_object_set_new(scope, ana_scope_names[i], json_pack("{s:I,s:o,s:I}", "groups",
			(json_int_t)sc[i].groups, "min_gap_us", sc[i].min_gap_ns == UINT64_MAX ?
			json_null() : json_real(sc[i].min_gap_ns / 1000.0), "violations",
			(json_int_t)sc[i].violations));
	}
	json_object_set_new(scope, "inferred", json_string(ana_scope_inferred(sc)));
	json_object_set_new(scope, "min_time_between_cnps_us",
			    json_real(a->o.np_min_time_between_cnps_ns / 1000.0));
	json_object_set_new(scope, "min_time_between_cnps_from", json_string(a->o.np_min_source));
	json_object_set_new(root, "cnp_pacing", scope);
	for (i = 0; i < a->n_pfc; i++)
		for (j = 0; j < ANA_PRIOS; j++) {
			const struct ana_pfc_prio *q = &a->pfc[i].prio[j];
			const uint8_t *m = a->pfc[i].mac;
			char mac[32];
			json_t *iv = json_array();
			uint32_t k;

			if (q->frames == 0) {
				json_decref(iv);
				continue;
			}
			snprintf(mac, sizeof(mac), "%02x:%02x:%02x:%02x:%02x:%02x", m[0], m[1], m[2],
				 m[3], m[4], m[5]);
			for (k = 0; k < q->n_iv; k++)
				json_array_append_new(iv, json_pack("[I,I]",
					ana_rel_ns(a, q->iv[k].start_ns),
					ana_rel_ns(a, q->iv[k].end_ns)));
			json_array_append_new(pfc, json_pack("{s:s,s:i,s:i,s:I,s:I,s:I,s:I,s:I,s:I,"
				"s:o,s:I}", "port", mac, "interface", (int)a->pfc[i].ifindex,
				"priority", (int)j, "frames", (json_int_t)q->frames, "xoff",
				(json_int_t)q->xoff, "xon", (json_int_t)q->xon, "paused_ns",
				(json_int_t)q->paused_ns, "longest_ns", (json_int_t)q->longest_ns,
				"storms", (json_int_t)q->storms, "intervals_ns", iv, "intervals_dropped",
				(json_int_t)q->iv_dropped));
		}
	json_object_set_new(root, "pfc", pfc);
	{
		json_t *drops = json_object();

		for (i = 0; i < a->n_drop_reasons; i++)
			json_object_set_new(drops, a->drop_reason[i],
					    json_integer((json_int_t)a->drop_count[i]));
		json_object_set_new(root, "annotations", json_pack("{s:I,s:I,s:f,s:f,s:f,s:o}",
			"packets", (json_int_t)a->ann_pkts, "unreadable", (json_int_t)a->ann_bad,
			"qdepth_max", a->qdepth_max, "wait_mean_us", a->wait_n ?
			a->wait_sum_ns / 1000.0 / (double)a->wait_n : 0.0, "wait_max_us",
			a->wait_max_ns / 1000.0, "drops", drops));
	}
	for (i = 0; i < a->n_dres; i++) {
		const struct ana_dcqcn_res *r = &a->dres[i];
		json_t *cuts = json_array(), *o;

		for (j = 0; j < r->n_cuts; j++)
			json_array_append_new(cuts, json_pack("{s:I,s:f,s:f,s:f,s:b}", "t_ns",
				ana_rel_ns(a, r->cuts[j].t_ns), "before_mbps", r->cuts[j].before_mbps,
				"measured_mbps", r->cuts[j].meas_after_mbps, "predicted_mbps",
				r->cuts[j].pred_after_mbps, "ok", r->cuts[j].ok));
		o = json_pack("{s:i,s:I,s:f,s:f,s:o,s:I,s:o,s:o,s:{s:I,s:I,s:I},s:s,s:s,s:o}",
			"flow", r->flow, "cnps", (json_int_t)r->n_cnp, "trajectory_error",
			r->err_traj, "trajectory_error_ignoring_cnps", r->err_traj_line, "cuts", cuts,
			"cuts_ok", (json_int_t)r->cuts_ok, "recovery_measured_us",
			r->recovery_meas_ns < 0 ? json_null() : json_real(r->recovery_meas_ns / 1000.0),
			"recovery_predicted_us",
			r->recovery_pred_ns < 0 ? json_null() : json_real(r->recovery_pred_ns / 1000.0),
			"predicted_steps", "fast_recovery",
			(json_int_t)r->pred_fast, "additive", (json_int_t)r->pred_additive, "hyper",
			(json_int_t)r->pred_hyper, "verdict", r->pass ? "PASS" : "FAIL", "why", r->why,
			"params", ana_json_params(&a->o.dcqcn));
		json_object_set_new(o, "idle", json_pack("{s:I,s:I,s:I,s:I,s:f,s:I}", "windows",
			(json_int_t)r->windows, "windows_idle", (json_int_t)r->windows_idle,
			"cuts_idle", (json_int_t)r->cuts_idle, "gaps", (json_int_t)r->idle_gaps,
			"idle_us", r->idle_ns / 1000.0, "gaps_not_kept", (json_int_t)r->idle_unknown));
		json_object_set_new(o, "pfc_paused", json_pack("{s:I,s:f,s:I,s:I,s:i}", "pauses",
			(json_int_t)r->pauses, "paused_us", r->paused_ns / 1000.0, "windows",
			(json_int_t)r->windows_paused, "gaps_in_messages",
			(json_int_t)r->gaps_paused,
			"priority", a->flows[r->flow].have_data_prio ?
			(int)a->flows[r->flow].data_prio : -1));
		{
			json_t *iv = json_array();

			for (j = 0; j < r->n_stall_iv; j++)
				json_array_append_new(iv, json_pack("[I,I]",
					ana_rel_ns(a, r->stall_iv[j].start_ns),
					ana_rel_ns(a, r->stall_iv[j].end_ns)));
			/* the gaps are whole ns (differences of capture times) held in doubles */
			json_object_set_new(o, "stalls", json_pack("{s:I,s:I,s:I,s:o}", "gaps",
				(json_int_t)r->stalls, "total_ns", (json_int_t)llround(r->stall_ns),
				"longest_ns", (json_int_t)llround(r->stall_max_ns), "intervals_ns",
				iv));
		}
		if (r->fitted) {
			json_t *ex = json_array();
			uint32_t k;

			for (k = 0; k < r->n_explained; k++)
				json_array_append_new(ex, json_pack("{s:s,s:f,s:f}", "name",
					r->expl[k].name, "value", r->expl[k].value, "error",
					r->expl[k].error));
			json_object_set_new(o, "fit", json_pack("{s:o,s:f,s:s,s:s,s:o}", "params",
				ana_json_params(&r->fit), "error", r->fit_err, "differs",
				r->fit_differs, "measure", r->fit_on_gaps ? "gaps" : "bytes",
				"explained_by", ex));
		}
		json_array_append_new(dv, o);
	}
	json_object_set_new(root, "dcqcn", dv);
	for (i = 0; i < a->n_iters; i++) {
		const struct ana_iter *it = &a->iters[i];
		double t_s = (double)(it->end_ns - it->start_ns) / 1e9;
		double size = f > 0 ? (double)it->bytes / f : 0;
		double alg = t_s > 0 && f > 0 ? size / 1e9 / t_s : 0;

		json_array_append_new(iters, json_pack("{s:I,s:I,s:I,s:I,s:f,s:f,s:f}", "start_ns",
			ana_rel_ns(a, it->start_ns), "time_ns",
			(json_int_t)(it->end_ns - it->start_ns), "wire_bytes",
			(json_int_t)it->bytes, "packets", (json_int_t)it->pkts, "size_bytes", size,
			"algbw_gbs", alg, "busbw_gbs", alg * bus));
	}
	{
		struct ana_hpair hp[256];
		const char *pattern;
		uint32_t n = ana_host_pairs(a, hp, 256, &pattern), k;
		json_t *pairs = json_array();

		for (k = 0; k < n; k++) {
			char s1[64], s2[64];

			ana_ip_str(hp[k].src, hp[k].version, s1, sizeof(s1));
			ana_ip_str(hp[k].dst, hp[k].version, s2, sizeof(s2));
			json_array_append_new(pairs, json_pack("{s:s,s:s,s:i,s:I}", "src", s1, "dst",
				s2, "qps", (int)hp[k].qps, "goodput_bytes", (json_int_t)hp[k].bytes));
		}
		json_object_set_new(root, "host_pairs", pairs);
		json_object_set_new(root, "pattern", json_string(pattern));
	}
	json_object_set_new(root, "collective", json_pack("{s:s,s:i,s:f,s:o,s:o}", "name",
		a->o.collective, "ranks", (int)a->o.ranks, "idle_gap_us", a->o.idle_gap_ns / 1000.0,
		"iterations", iters, "application", a->app_seen ? json_pack("{s:s,s:I,s:f,s:f,s:f}",
		"type", a->app_kind, "size_bytes", (json_int_t)a->app_size, "time_us",
		a->app_time_us, "algbw_gbs", a->app_algbw_gbs, "busbw_gbs", a->app_busbw_gbs) :
		json_null()));
	json_object_set_new(root, "bandwidth", ana_bw_json(a));
	json_object_set_new(root, "failures", json_integer(ana_failures(a)));
	return root;
}

/* ---- CSV ---- */

/*
 * The files are opened, checked and put in place by the caller (rocestat writes them through
 * lib/base/emu_out: temporary name, rename); this only formats them, so the library keeps
 * no file I/O of its own.
 */
const char *const ana_csv_files[] = {
	"rate.csv", "cnp.csv", "events.csv", "pfc.csv", "ce.csv", "qdepth.csv", "bandwidth.csv",
	NULL,
};

/* rate.csv: measured (and predicted, where validated) rate per data flow and bin */
static void
ana_csv_rate(const struct ana *a, FILE *f)
{
	uint32_t i, j, k;

	fputs("flow,t_us,measured_mbps,predicted_mbps\n", f);
	for (i = 0; i < a->n_flows; i++) {
		const struct ana_flow *fl = &a->flows[i];
		const struct ana_series *s = &fl->rate;
		const double *pred = NULL;

		for (j = 0; j < a->n_dres; j++)
			if (a->dres[j].flow == (int32_t)i)
				pred = a->dres[j].pred;
		for (k = 0; k < s->n; k++) {
			double t_us = (s->t0_ns - a->t_first_ns + (double)k * s->bin_ns) / 1000.0;
			double m = s->v[k] * 8000.0 / (double)s->bin_ns;

			if (pred != NULL)
				fprintf(f, "%u,%.3f,%.3f,%.3f\n", i, t_us, m,
					pred[k] * 8000.0 / (double)s->bin_ns);
			else
				fprintf(f, "%u,%.3f,%.3f,\n", i, t_us, m);
		}
	}
}

static void
ana_csv_cnp(const struct ana *a, FILE *f)
{
	uint32_t i, k;

	fputs("flow,data_flow,t_us\n", f);
	for (i = 0; i < a->n_flows; i++)
		for (k = 0; k < a->flows[i].n_cnp; k++)
			fprintf(f, "%u,%d,%.3f\n", i, a->flows[i].peer,
				(a->flows[i].cnp_t[k] - a->t_first_ns) / 1000.0);
}

static void
ana_csv_events(const struct ana *a, FILE *f)
{
	uint32_t i, k;

	fputs("flow,type,packet,packet2,t_us,psn,psn2,value\n", f);
	for (i = 0; i < a->n_flows; i++)
		for (k = 0; k < a->flows[i].n_ev; k++) {
			const struct ana_event *e = &a->flows[i].ev[k];

			fprintf(f, "%u,%s,%lu,%lu,%.3f,%u,%u,%ld\n", i, ana_ev_name(e->type),
				(unsigned long)e->pkt, (unsigned long)e->pkt2,
				(e->t_ns - a->t_first_ns) / 1000.0, e->psn, e->psn2, (long)e->val);
		}
}

static void
ana_csv_pfc(const struct ana *a, FILE *f)
{
	uint32_t i, j, k;

	fputs("port,priority,start_us,end_us\n", f);
	for (i = 0; i < a->n_pfc; i++)
		for (j = 0; j < ANA_PRIOS; j++)
			for (k = 0; k < a->pfc[i].prio[j].n_iv; k++) {
				const struct ana_interval *v = &a->pfc[i].prio[j].iv[k];
				const uint8_t *m = a->pfc[i].mac;

				fprintf(f, "%02x:%02x:%02x:%02x:%02x:%02x,%u,%.3f,%.3f\n", m[0], m[1],
					m[2], m[3], m[4], m[5], j,
					(v->start_ns - a->t_first_ns) / 1000.0,
					(v->end_ns - a->t_first_ns) / 1000.0);
			}
}

static void
ana_csv_ce(const struct ana *a, FILE *f)
{
	uint32_t i, k;

	fputs("flow,t_us,ce_marks\n", f);
	for (i = 0; i < a->n_flows; i++) {
		const struct ana_series *cs = &a->flows[i].ce_series;

		for (k = 0; k < cs->n; k++)
			if (cs->v[k] > 0)
				fprintf(f, "%u,%.3f,%.0f\n", i, (cs->t0_ns - a->t_first_ns +
					(double)k * cs->bin_ns) / 1000.0, cs->v[k]);
	}
}

static void
ana_csv_qdepth(const struct ana *a, FILE *f)
{
	uint32_t k;

	fputs("t_us,qdepth_max\n", f);
	for (k = 0; k < a->qdepth.n; k++)
		if (a->qdepth.v[k] > 0)
			fprintf(f, "%.3f,%.0f\n", (a->qdepth.t0_ns - a->t_first_ns +
				(double)k * a->qdepth.bin_ns) / 1000.0, a->qdepth.v[k]);
}

int
ana_write_csv_file(struct ana *a, const char *name, FILE *f)
{
	static void (*const fn[])(const struct ana *, FILE *) = {
		ana_csv_rate, ana_csv_cnp, ana_csv_events, ana_csv_pfc, ana_csv_ce, ana_csv_qdepth,
		ana_bw_csv,
	};
	unsigned int i;

	_Static_assert(sizeof(fn) / sizeof(fn[0]) + 1 ==
		       sizeof(ana_csv_files) / sizeof(ana_csv_files[0]),
		       "one formatter per CSV file");
	for (i = 0; ana_csv_files[i] != NULL; i++)
		if (strcmp(name, ana_csv_files[i]) == 0) {
			fn[i](a, f);
			return ferror(f) ? -EIO : 0;
		}
	return -EINVAL;
}
