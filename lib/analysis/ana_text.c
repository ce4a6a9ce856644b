/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The text report (nccl-tests / ethtool -S style tables): the capture, the QPs, counters per
 * flow, the checks, CNP pacing, PFC, annotations, the DCQCN validation, collectives and where
 * the bandwidth went (ana_bw_out.c).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "lib/proto/roce_proto.h"

#include "ana_internal.h"

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
