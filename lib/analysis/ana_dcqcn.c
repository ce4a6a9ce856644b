/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * DCQCN validation: for each data flow whose sender received CNPs, the measured sending rate
 * (wire bytes per bin at the capture point) against the trajectory lib/dcqcn predicts for the
 * same CNP arrival times with the --dcqcn parameters; per-CNP cuts, recovery, idle time and
 * PFC pauses of the sender left out, a verdict. The fit of the parameters that explain the
 * trace best (--fit) and, on a FAIL, the parameters that changed alone explain it: ana_fit.c;
 * the parameter files in NVIDIA's names: ana_params.c.
 *
 * Error measure: windows of W = max(--window, 64 frame times at line rate); per window the
 * measured and the predicted wire bytes; err = sqrt(sum (m - p)^2 / sum m^2) over the windows
 * from the first CNP to the last data packet. The prediction feeds the model the measured
 * bytes (the byte counter counts what the NIC sent).
 */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ana_internal.h"
#include "ana_dcqcn_int.h"

/* ---- paused and idle time, recovery ---- */

/* Does a bin of [from, to] hold paused time (@p paused: ana_pause_mark(), NULL: none)? */
static bool
ana_pause_in(const struct ana_trace *t, const uint8_t *paused, uint64_t from_ns, uint64_t to_ns)
{
	int64_t b = ana_bin(t, from_ns), e = ana_bin(t, to_ns);

	if (paused == NULL)
		return false;
	for (b = b < 0 ? 0 : b; b <= e && b < (int64_t)t->n; b++)
		if (paused[b])
			return true;
	return false;
}

/* Mean of v over bins [k, k + w) as Mb/s. */
static double
ana_win_mbps(const struct ana_trace *t, const double *v, int64_t k, uint32_t w)
{
	double s = 0;
	uint32_t j;

	if (k < 0)
		k = 0;
	for (j = 0; j < w && (uint64_t)k + j < t->n; j++)
		s += v[k + j];
	return j ? s * 8000.0 / ((double)j * (double)t->bin_ns) : 0;
}

/* Time from the last CNP until the windowed rate first reaches 95% of line rate. */
static double
ana_recovery(const struct ana_trace *t, const double *v, double line_mbps)
{
	int64_t k;
	int64_t k_last;

	if (t->n_cnp == 0)
		return 0;
	k_last = ana_bin(t, t->cnp[t->n_cnp - 1]);
	if (k_last < 0)
		k_last = 0;
	for (k = k_last; k + t->w <= t->k1; k++)
		if (ana_win_mbps(t, v, k, t->w) >= 0.95 * line_mbps)
			return (double)(k + t->w - k_last) * (double)t->bin_ns;
	return -1;
}

/*
 * PFC pauses of @p d's sender: the paused intervals (ana_pfc.c) of its data's priority and
 * of 802.3x PAUSE, from every port but the sender's own MAC (its own frames pause what is sent
 * to it), longer than @p min_idle within the trace. A paused NIC sends nothing, whatever its
 * DCQCN rate: their bins are left out as idle bins are. Which port's pause reached the sender
 * a capture does not say (the switch's MAC in a routed fabric, the peer's in a bump in the
 * wire): any other port's counts, which may leave out windows a pause elsewhere fell in,
 * never count a pause against the sender. Returns a byte per bin (1: paused), NULL without
 * any (or without memory: then nothing is left out for pauses).
 */
static uint8_t *
ana_pause_mark(const struct ana *a, const struct ana_trace *t, const struct ana_flow *d,
	       double min_idle, struct ana_dcqcn_res *r)
{
	const uint64_t t_end = t->t0_ns + (uint64_t)t->n * t->bin_ns;
	uint8_t *paused = NULL;
	uint32_t i, j, k;

	if (!d->have_data_prio)
		return NULL;
	for (i = 0; i < a->n_pfc; i++) {
		const struct ana_pfc_port *pp = &a->pfc[i];

		if (memcmp(pp->mac, d->src_mac, 6) == 0)
			continue;
		for (j = 0; j < 2; j++) {
			const struct ana_pfc_prio *q =
				&pp->prio[j == 0 ? d->data_prio : ANA_PRIOS - 1];

			for (k = 0; k < q->n_iv; k++) {
				const struct ana_interval *v = &q->iv[k];
				uint64_t s = v->start_ns > t->t0_ns ? v->start_ns : t->t0_ns;
				uint64_t e = v->end_ns < t_end ? v->end_ns : t_end;
				int64_t b;

				if (e <= s || (double)(e - s) <= min_idle)
					continue;
				if (paused == NULL && (paused = calloc(t->n, 1)) == NULL)
					return NULL;
				for (b = ana_bin(t, s); b <= ana_bin(t, e - 1); b++)
					paused[b] = 1;
				r->pauses++;
				r->paused_ns += (double)(e - s);
			}
		}
	}
	return paused;
}

/*
 * Idle time: a gap after a message's last packet is idle for the part of it beyond one pacing
 * gap (the last frame's wire time at the predicted Rc of its bin, or the sender's own gap
 * before that packet when longer), when that part is longer than the pacing gap and than
 * 1/64 of a window (1.5% of its bytes); the bins from the last packet's to the next one's. A
 * rate limiter sends no faster than Rc, and a sender without a next message sends nothing:
 * a window with such time says nothing of DCQCN, and is left out of the error, the fit and
 * the cuts (NCCL's steps: each waits for the peer's data, and for the reduction). A stall
 * inside a message (more than four pacing gaps and 1/64 of a window) is not idle time: it
 * counts against the sender, and is counted in r->stalls, unless a PFC pause of the sender
 * (ana_pause_mark()) falls in it: then it is the pause's (r->gaps_paused), whose bins are left
 * out as idle ones. Returns the prefix counts of idle or paused bins (n + 1), NULL without
 * either or without memory (then nothing is left out).
 */
static uint32_t *
ana_idle_mark(const struct ana *a, const struct ana_trace *t, const struct ana_flow *d,
	      const double *pred, struct ana_dcqcn_res *r)
{
	double min_idle = (double)t->w * (double)t->bin_ns / 64.0;
	uint8_t *idle = NULL, *paused = ana_pause_mark(a, t, d, min_idle, r);
	uint32_t *cum, i, k;

	r->idle_unknown = d->msg_gaps_dropped;
	if (paused != NULL) {
		/* the paused bins are left out: count the windows they fall in */
		for (k = t->k0; k + t->w <= t->k1; k += t->w) {
			uint32_t b;

			for (b = k; b < k + t->w && !paused[b]; b++)
				;
			r->windows_paused += b < k + t->w;
		}
		/* idle bins are marked on a copy: a gap is a pause's by the pauses alone */
		if ((idle = malloc(t->n)) == NULL) {
			free(paused);
			return NULL;
		}
		memcpy(idle, paused, t->n);
	}
	for (i = 0; i < d->n_msg_gaps; i++) {
		const struct ana_msg_gap *g = &d->msg_gaps[i];
		int64_t kb = ana_bin(t, g->from_ns), ke, j;
		double mbps, pace, idle_ns;

		if (kb < 0 || kb >= (int64_t)t->n)
			continue;
		mbps = pred[kb] * 8000.0 / (double)t->bin_ns;
		if (mbps <= 0)
			continue;
		pace = (double)g->wire * 8000.0 / mbps;
		if (!g->in_msg && (double)g->spacing_ns > pace)
			/* a sender slower than the model: its own spacing, so that a rate cut
			 * too deep does not make its message ends look idle */
			pace = (double)g->spacing_ns;
		idle_ns = (double)(g->to_ns - g->from_ns) - pace;
		if (g->in_msg) {
			if (idle_ns > 3 * pace && idle_ns > min_idle &&
			    ana_pause_in(t, paused, g->from_ns, g->to_ns)) {
				r->gaps_paused++;
			} else if (idle_ns > 3 * pace && idle_ns > min_idle) {
				r->stalls++;
				r->stall_ns += idle_ns;
				if (idle_ns > r->stall_max_ns)
					r->stall_max_ns = idle_ns;
				r->stall_iv = ana_grow(r->stall_iv, &r->cap_stall_iv, r->n_stall_iv,
						       sizeof(*r->stall_iv), 64, ANA_STALL_IV_CAP);
				if (r->n_stall_iv < r->cap_stall_iv) {
					r->stall_iv[r->n_stall_iv].start_ns = g->from_ns;
					r->stall_iv[r->n_stall_iv++].end_ns = g->to_ns;
				}
			}
			continue;
		}
		if (idle_ns <= pace || idle_ns <= min_idle)
			continue;
		if (idle == NULL && (idle = calloc(t->n, 1)) == NULL) {
			free(paused);
			return NULL;
		}
		/* from the last packet's bin (its rate sample in the gap series is the gap's) */
		ke = ana_bin(t, g->to_ns - 1);
		for (j = kb < 0 ? 0 : kb; j <= ke && j < (int64_t)t->n; j++)
			idle[j] = 1;
		r->idle_gaps++;
		r->idle_ns += idle_ns;
	}
	free(paused);
	if (idle == NULL)
		return NULL;
	cum = ana_calloc((size_t)t->n + 1, sizeof(*cum));
	if (cum != NULL) {
		cum[0] = 0;
		for (k = 0; k < t->n; k++)
			cum[k + 1] = cum[k] + idle[k];
	}
	free(idle);
	return cum;
}

static void
ana_dcqcn_flow(struct ana *a, struct ana_flow *d, struct ana_flow *c, struct ana_dcqcn_res *r)
{
	struct dcqcn_params p = a->o.dcqcn;
	double line = a->o.link_gbps * 1000.0;
	struct ana_trace t;
	struct dcqcn_rp rp;
	double frame_bytes, frame_ns, meas_ratio;
	uint32_t i, k;
	int64_t kc;

	p.line_rate_mbps = line;
	memset(&t, 0, sizeof(t));
	t.meas = d->rate.v;
	t.n = d->rate.n;
	t.t0_ns = d->rate.t0_ns;
	t.bin_ns = d->rate.bin_ns;
	t.cnp = c->cnp_t;
	t.n_cnp = c->n_cnp;
	frame_bytes = d->c[ANA_C_DATA_PKTS] ? (double)d->c[ANA_C_BYTES] / (double)d->c[ANA_C_PKTS]
					   + 24.0 : 1000.0;
	frame_ns = frame_bytes * 8000.0 / line;
	t.w = (uint32_t)(fmax((double)a->o.window_ns, 64 * frame_ns) / (double)t.bin_ns + 0.999);
	if (t.w == 0)
		t.w = 1;
	kc = ana_bin(&t, t.cnp[0]);
	t.k0 = kc > 0 ? (uint32_t)kc : 0;
	t.k1 = t.n;
	r->flow = (int32_t)(d - a->flows);
	r->n_cnp = c->n_cnp;
	r->pred = ana_calloc(t.n ? t.n : 1, sizeof(double));
	r->cuts = calloc(t.n_cnp, sizeof(*r->cuts));
	if (r->pred == NULL || r->cuts == NULL) {
		snprintf(r->why, sizeof(r->why), "out of memory");
		return;
	}
	r->n_pred = t.n;
	ana_predict(&t, &p, r->pred, &rp);
	t.idle_cum = ana_idle_mark(a, &t, d, r->pred, r);
	for (k = t.k0; k + t.w <= t.k1; k += t.w) {
		r->windows++;
		r->windows_idle += ana_idle_in(&t, k, t.w) > 0;
	}
	r->err_traj_line = ana_err_const(&t, line * (double)t.bin_ns / 8000.0);
	r->err_traj = ana_err(&t, r->pred);
	r->pred_fast = rp.fast_recoveries;
	r->pred_additive = rp.additive_increases;
	r->pred_hyper = rp.hyper_increases;
	/* per CNP: the rate over the window that starts one monitor period after it */
	for (i = 0; i < t.n_cnp; i++) {
		struct ana_cut *u = &r->cuts[r->n_cuts];
		int64_t kb = ana_bin(&t, t.cnp[i]);
		int64_t ka = ana_bin(&t, t.cnp[i] + p.rate_reduce_monitor_period_ns) + 1;

		if (ka + t.w > t.k1)
			break;
		if (ana_idle_in(&t, ka, t.w) || ana_idle_in(&t, kb - (int64_t)t.w, t.w)) {
			r->cuts_idle++;
			continue;
		}
		u->t_ns = t.cnp[i];
		u->before_mbps = ana_win_mbps(&t, t.meas, kb - (int64_t)t.w, t.w);
		u->meas_after_mbps = ana_win_mbps(&t, t.meas, ka, t.w);
		u->pred_after_mbps = ana_win_mbps(&t, r->pred, ka, t.w);
		u->ok = fabs(u->meas_after_mbps - u->pred_after_mbps) <=
			a->o.tol_cut * fmax(u->pred_after_mbps, 1e-9);
		r->cuts_ok += u->ok;
		r->n_cuts++;
	}
	{
		double sum = 0;
		uint32_t nr = 0;

		for (i = 0; i < r->n_cuts; i++)
			if (r->cuts[i].before_mbps > 0) {
				sum += r->cuts[i].meas_after_mbps / r->cuts[i].before_mbps;
				nr++;
			}
		meas_ratio = nr ? sum / nr : 1;
	}
	r->recovery_meas_ns = ana_recovery(&t, t.meas, line);
	r->recovery_pred_ns = ana_recovery(&t, r->pred, line);
	r->pass = r->err_traj <= a->o.tol_traj && r->cuts_ok * 10 >= r->n_cuts * 9;
	if (r->n_cuts == 0 && r->cuts_idle > 0)
		r->pass = false; /* every cut left out: nothing of the cuts was checked */
	if (r->windows > 0 && r->windows_idle == r->windows)
		snprintf(r->why, sizeof(r->why), "every one of the %u windows holds idle time "
			 "between messages (%.3f ms in %u gaps) or a PFC pause of the sender "
			 "(%.3f ms in %u): nothing to compare; a smaller --window-us may leave "
			 "some",
			 r->windows, r->idle_ns / 1e6, r->idle_gaps, r->paused_ns / 1e6, r->pauses);
	else if (r->n_cuts == 0 && r->cuts_idle > 0)
		snprintf(r->why, sizeof(r->why), "the windows of all %u cuts hold idle time "
			 "between messages (%.3f ms in %u gaps) or a PFC pause of the sender "
			 "(%.3f ms in %u): no cut to check", r->cuts_idle, r->idle_ns / 1e6,
			 r->idle_gaps, r->paused_ns / 1e6, r->pauses);
	else if (r->pass)
		snprintf(r->why, sizeof(r->why), "trajectory error %.3f <= %.3f, %u of %u cuts "
			 "within %.0f%%", r->err_traj, a->o.tol_traj, r->cuts_ok, r->n_cuts,
			 a->o.tol_cut * 100);
	else if (r->err_traj_line < r->err_traj && r->err_traj_line <= a->o.tol_traj &&
		 meas_ratio > 0.98)
		snprintf(r->why, sizeof(r->why), "the sender kept its rate: no cut after the CNPs "
			 "(rate after / before %.3f), a sender ignoring them explains the trace (error "
			 "%.3f) better than the model (%.3f)", meas_ratio, r->err_traj_line,
			 r->err_traj);
	else
		snprintf(r->why, sizeof(r->why), "trajectory error %.3f > %.3f or only %u of %u "
			 "cuts within %.0f%%", r->err_traj, a->o.tol_traj, r->cuts_ok, r->n_cuts,
			 a->o.tol_cut * 100);
	if (a->o.fit) {
		double *tmp = ana_calloc(t.n ? t.n : 1, sizeof(double));

		if (!r->pass && tmp != NULL)
			ana_explain(&t, &p, a->o.tol_traj, r, tmp);

		if (d->gap_n.n > 0 && d->gap_n.bin_ns == t.bin_ns && d->gap_n.t0_ns == t.t0_ns &&
		    d->gap_n.n <= t.n && d->gap_sum.n == d->gap_n.n) {
			/* the gap series may end a bin early: pad with empty bins */
			double *gs = ana_calloc(t.n, sizeof(double)), *gn = ana_calloc(t.n, sizeof(double));

			if (gs != NULL && gn != NULL) {
				memcpy(gs, d->gap_sum.v, d->gap_sum.n * sizeof(double));
				memcpy(gn, d->gap_n.v, d->gap_n.n * sizeof(double));
				t.gsum = gs;
				t.gn = gn;
				r->fit_on_gaps = true;
			} else {
				free(gs);
				free(gn);
			}
		}
		if (tmp != NULL) {
			r->fit = p;
			ana_fit(&t, &r->fit, tmp, &r->fit_err);
			r->fitted = true;
			ana_differs(&p, &r->fit, r->fit_differs, sizeof(r->fit_differs));
			free(tmp);
		}
		free((double *)t.gsum);
		free((double *)t.gn);
	}
	free((uint32_t *)t.idle_cum);
}

void
ana_dcqcn_run(struct ana *a)
{
	uint32_t i, n = 0;

	for (i = 0; i < a->n_flows; i++) {
		struct ana_flow *d = &a->flows[i];

		if (d->peer >= 0 && a->flows[d->peer].n_cnp > 0 && d->c[ANA_C_DATA_PKTS] > 0 &&
		    d->rate.n > 0)
			n++;
	}
	if (n == 0)
		return;
	a->dres = calloc(n, sizeof(*a->dres));
	if (a->dres == NULL)
		return;
	for (i = 0; i < a->n_flows; i++) {
		struct ana_flow *d = &a->flows[i];

		if (d->peer >= 0 && a->flows[d->peer].n_cnp > 0 && d->c[ANA_C_DATA_PKTS] > 0 &&
		    d->rate.n > 0)
			ana_dcqcn_flow(a, d, &a->flows[d->peer], &a->dres[a->n_dres++]);
	}
}

void
ana_dcqcn_free(struct ana *a)
{
	uint32_t i;

	for (i = 0; i < a->n_dres; i++) {
		free(a->dres[i].cuts);
		free(a->dres[i].pred);
		free(a->dres[i].stall_iv);
	}
	free(a->dres);
	a->dres = NULL;
	a->n_dres = 0;
}
