/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The DCQCN validation's parameter fit (--fit: the alpha parameters from the cut ratios,
 * rpg_time_reset from the first increase after each cut, a Nelder-Mead search of the two
 * increase rates for each rpg_threshold, a coordinate polish) and, on a FAIL, the
 * one-parameter explanation (each parameter alone over a log grid, then a golden-section
 * search). Both work on ana_model.c's trajectory model and error measure (ana_eval()), and
 * share the table of fitted parameters, their getters and setters in NVIDIA's units and one
 * golden-section search (ana_golden()). About 600 lines on purpose: the fit and the
 * explanation share that table and search, static here.
 */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ana_internal.h"
#include "ana_dcqcn_int.h"

static int
ana_cmp_u64_d(const void *x, const void *y)
{
	uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;

	return a < b ? -1 : a > b;
}

/* ana_eval with ana_golden's signature (the second buffer unused). */
static double
ana_eval_g(const struct ana_trace *t, const struct dcqcn_params *p, double *pred, double *unused)
{
	(void)unused;
	return ana_eval(t, p, pred);
}

/* ---- fit ---- */

struct ana_fitp {
	const char *name;
	int kind; /* 0 double, 1 uint64 ns, 2 uint32 */
	size_t off;
	double lo, hi;
};

#define OFF(f) offsetof(struct dcqcn_params, f)
static const struct ana_fitp ana_fitps[] = {
	{ "initial_alpha_value", 0, OFF(initial_alpha), 0.01, 1.0 },
	{ "dce_tcp_g", 0, OFF(g), 1.0 / 1024, 0.5 },
	/* up to 1 s: timers scaled for a slow link (profiles/dcqcn-50m.conf: 20 ms) */
	{ "rpg_time_reset", 1, OFF(rpg_time_reset_ns), 1000, 1000000000 },
	{ "rpg_ai_rate", 0, OFF(rpg_ai_rate_mbps), 0.1, 100000 },
	{ "rpg_hai_rate", 0, OFF(rpg_hai_rate_mbps), 0.1, 100000 },
	{ "rpg_min_dec_fac", 2, OFF(rpg_min_dec_fac_pct), 1, 100 },
};
#undef OFF
#define ANA_NFIT (sizeof(ana_fitps) / sizeof(ana_fitps[0]))

static double
ana_fget(const struct dcqcn_params *p, const struct ana_fitp *f)
{
	const char *b = (const char *)p;

	if (f->kind == 0)
		return *(const double *)(b + f->off);
	if (f->kind == 1)
		return (double)*(const uint64_t *)(b + f->off);
	return (double)*(const uint32_t *)(b + f->off);
}

static void
ana_fset(struct dcqcn_params *p, const struct ana_fitp *f, double v)
{
	char *b = (char *)p;

	if (v < f->lo)
		v = f->lo;
	if (v > f->hi)
		v = f->hi;
	if (f->kind == 0)
		*(double *)(b + f->off) = v;
	else if (f->kind == 1)
		*(uint64_t *)(b + f->off) = (uint64_t)(v + 0.5);
	else
		*(uint32_t *)(b + f->off) = (uint32_t)(v + 0.5);
}

/* Golden-section search of one parameter (log scale) within log(x) -/+ @p lspan on err();
 * returns the better error, the parameter left at the best value, or @p cur and unchanged. */
static double
ana_golden(const struct ana_fitp *fp, struct dcqcn_params *p, double lspan,
	   double (*err)(const struct ana_trace *, const struct dcqcn_params *, double *,
			 double *), const struct ana_trace *t, double *b1, double *b2, double cur)
{
	double x0 = log(fmax(ana_fget(p, fp), fp->lo)), lo = x0 - lspan, hi = x0 + lspan;
	const double gr = 0.6180339887498949;
	double c, d, fc, fd, keep = ana_fget(p, fp);
	unsigned int it;

	if (lo < log(fp->lo))
		lo = log(fp->lo);
	if (hi > log(fp->hi))
		hi = log(fp->hi);
	c = hi - gr * (hi - lo);
	d = lo + gr * (hi - lo);
	ana_fset(p, fp, exp(c));
	fc = err(t, p, b1, b2);
	ana_fset(p, fp, exp(d));
	fd = err(t, p, b1, b2);
	for (it = 0; it < 40 && hi - lo > 1e-4; it++) {
		if (fc < fd) {
			hi = d;
			d = c;
			fd = fc;
			c = hi - gr * (hi - lo);
			ana_fset(p, fp, exp(c));
			fc = err(t, p, b1, b2);
		} else {
			lo = c;
			c = d;
			fc = fd;
			d = lo + gr * (hi - lo);
			ana_fset(p, fp, exp(d));
			fd = err(t, p, b1, b2);
		}
	}
	if (fmin(fc, fd) < cur - 1e-12) {
		ana_fset(p, fp, exp(fc < fd ? c : d));
		return fmin(fc, fd);
	}
	ana_fset(p, fp, keep);
	return cur;
}

/*
 * Coordinate search for one rpg_threshold F: each continuous parameter in turn, a
 * golden-section search of log(value) within a bracket around the current value (x/4 .. x*4
 * first, narrowing each round), until a round improves by less than 1e-5.
 */
static double
ana_fit_f(const struct ana_trace *t, struct dcqcn_params *p, double *pred)
{
	double best = ana_eval(t, p, pred), span = log(4.0);
	unsigned int round, i;

	for (round = 0; round < 12; round++) {
		double start = best;

		for (i = 0; i < ANA_NFIT; i++)
			best = ana_golden(&ana_fitps[i], p, span, ana_eval_g, t, pred, NULL, best);
		span = span * 0.7 > log(1.05) ? span * 0.7 : log(1.05);
		if (start - best < 1e-5 && round >= 3)
			break;
	}
	return best;
}

/*
 * The cut each CNP caused, as a ratio Rc after / Rc before, in the model (q) and in the
 * measured pacing (m: mean gap rate over 10 us before the CNP and over 10 us from one monitor
 * period after it, when no other CNP falls in between). Returns the number of pairs.
 */
static uint32_t
ana_cut_ratios(const struct ana_trace *t, const struct dcqcn_params *p, double *m, double *q)
{
	struct dcqcn_rp rp;
	uint32_t k, ci = 0, pending = UINT32_MAX, n = 0;
	uint32_t wb = (uint32_t)(10000 / t->bin_ns) + 1;
	uint64_t dec = 0;
	double rc_prev;

	for (k = 0; k < t->n_cnp; k++)
		q[k] = -1;
	dcqcn_rp_init(&rp, p, t->t0_ns);
	rc_prev = rp.rc_mbps;
	for (k = 0; k < t->n; k++) {
		uint64_t a = t->t0_ns + (uint64_t)k * t->bin_ns;

		while (ci < t->n_cnp && t->cnp[ci] <= a) {
			dcqcn_rp_advance(&rp, p, t->cnp[ci]);
			if (rp.decreases != dec && pending != UINT32_MAX) {
				q[pending] = rp.rc_mbps / rc_prev;
				pending = UINT32_MAX;
			}
			dec = rp.decreases;
			rc_prev = rp.rc_mbps;
			if (dcqcn_rp_on_cnp(&rp, p, t->cnp[ci]))
				pending = ci;
			ci++;
		}
		dcqcn_rp_advance(&rp, p, a);
		if (rp.decreases != dec && pending != UINT32_MAX) {
			q[pending] = rp.rc_mbps / rc_prev;
			pending = UINT32_MAX;
		}
		dec = rp.decreases;
		rc_prev = rp.rc_mbps;
	}
	for (ci = 0; ci < t->n_cnp; ci++) {
		int64_t kc = ana_bin(t, t->cnp[ci]);
		int64_t ka = ana_bin(t, t->cnp[ci] + p->rate_reduce_monitor_period_ns) + 1;
		double sb = 0, nb = 0, sa = 0, na = 0;
		uint32_t j;

		if (q[ci] <= 0 || kc < (int64_t)wb || ka + wb >= t->n)
			continue;
		if (ci + 1 < t->n_cnp && ana_bin(t, t->cnp[ci + 1]) < ka + (int64_t)wb)
			continue;
		if (ana_idle_in(t, kc - (int64_t)wb, wb) || ana_idle_in(t, ka, wb))
			continue; /* idle time before or after it: not the cut's doing */
		for (j = 1; j <= wb; j++) {
			sb += t->gsum[kc - j];
			nb += t->gn[kc - j];
			sa += t->gsum[ka + j - 1];
			na += t->gn[ka + j - 1];
		}
		if (nb == 0 || na == 0)
			continue;
		m[n] = (sa / na) / (sb / nb);
		q[n] = q[ci];
		n++;
	}
	return n;
}

static double
ana_cut_err(const struct ana_trace *t, const struct dcqcn_params *p, double *m, double *q)
{
	uint32_t n = ana_cut_ratios(t, p, m, q), i;
	double e = 0;

	for (i = 0; i < n; i++)
		e += (log(m[i]) - log(q[i])) * (log(m[i]) - log(q[i]));
	return n ? sqrt(e / n) : 1e9;
}


/*
 * Nelder-Mead over log(rpg_ai_rate), log(rpg_hai_rate) (and log(rpg_time_reset) unless
 * fix_tr, when the trace gave it): these trade
 * off against each other along narrow diagonal valleys that a one-at-a-time search cannot
 * follow. Standard coefficients (reflect 1, expand 2, contract 1/2, shrink 1/2), initial
 * steps of 30%, at most 300 evaluations.
 */
static double
ana_nelder_mead(const struct ana_trace *t, struct dcqcn_params *p, double *pred, bool fix_tr)
{
	enum { DMAX = 3 };
	const struct ana_fitp *fp[DMAX] = { &ana_fitps[3], &ana_fitps[4], &ana_fitps[2] };
	const unsigned int D = fix_tr ? 2 : 3;
	double x[DMAX + 1][DMAX], fx[DMAX + 1];
	unsigned int i, j, evals = 0;

#define NM_EVAL(v, out)                                                                 \
	do {                                                                            \
		struct dcqcn_params q_ = *p;                                            \
		unsigned int k_;                                                        \
		for (k_ = 0; k_ < D; k_++)                                              \
			ana_fset(&q_, fp[k_], exp((v)[k_]));                            \
		(out) = ana_eval(t, &q_, pred);                                         \
		evals++;                                                                \
	} while (0)

	for (j = 0; j < D; j++)
		x[0][j] = log(fmax(ana_fget(p, fp[j]), fp[j]->lo));
	for (i = 1; i <= D; i++) {
		for (j = 0; j < D; j++)
			x[i][j] = x[0][j] + (i - 1 == j ? log(1.3) : 0);
	}
	for (i = 0; i <= D; i++)
		NM_EVAL(x[i], fx[i]);
	while (evals < 400) {
		double c[DMAX], xr[DMAX], xe[DMAX], xc[DMAX], fr, fe, fc;
		unsigned int hi = 0, lo = 0, nh = 0;

		for (i = 0; i <= D; i++) {
			if (fx[i] > fx[hi])
				hi = i;
			if (fx[i] < fx[lo])
				lo = i;
		}
		nh = lo;
		for (i = 0; i <= D; i++)
			if (i != hi && fx[i] > fx[nh])
				nh = i;
		if (fx[hi] - fx[lo] < 1e-7 * fmax(fx[lo], 1e-9))
			break;
		for (j = 0; j < D; j++) {
			c[j] = 0;
			for (i = 0; i <= D; i++)
				if (i != hi)
					c[j] += x[i][j] / D;
			xr[j] = c[j] + (c[j] - x[hi][j]);
		}
		NM_EVAL(xr, fr);
		if (fr < fx[lo]) {
			for (j = 0; j < D; j++)
				xe[j] = c[j] + 2 * (c[j] - x[hi][j]);
			NM_EVAL(xe, fe);
			if (fe < fr) {
				memcpy(x[hi], xe, sizeof(xe));
				fx[hi] = fe;
			} else {
				memcpy(x[hi], xr, sizeof(xr));
				fx[hi] = fr;
			}
			continue;
		}
		if (fr < fx[nh]) {
			memcpy(x[hi], xr, sizeof(xr));
			fx[hi] = fr;
			continue;
		}
		for (j = 0; j < D; j++)
			xc[j] = c[j] + 0.5 * (x[hi][j] - c[j]);
		NM_EVAL(xc, fc);
		if (fc < fx[hi]) {
			memcpy(x[hi], xc, sizeof(xc));
			fx[hi] = fc;
			continue;
		}
		for (i = 0; i <= D; i++) {
			if (i == lo)
				continue;
			for (j = 0; j < D; j++)
				x[i][j] = x[lo][j] + 0.5 * (x[i][j] - x[lo][j]);
			NM_EVAL(x[i], fx[i]);
		}
	}
#undef NM_EVAL
	j = 0;
	for (i = 1; i <= D; i++)
		if (fx[i] < fx[j])
			j = i;
	for (i = 0; i < D; i++)
		ana_fset(p, fp[i], exp(x[j][i]));
	return fx[j];
}

/*
 * rpg_time_reset from the trace: after each cut (its time from the model: the monitor grid
 * depends only on the first CNP), the first bin whose mean gap rate rises 0.2% above the
 * level just after the cut marks the first increase event; the median over the cuts that see
 * one before the next CNP. 0 if none.
 */
static uint64_t
ana_est_time_reset(const struct ana_trace *t, const struct dcqcn_params *p)
{
	struct dcqcn_rp rp;
	uint64_t *cut = calloc(t->n_cnp + 1, sizeof(uint64_t)), *d, res = 0;
	uint32_t k, ci = 0, nc = 0, nd = 0, i;
	uint64_t dec = 0;

	d = calloc(t->n_cnp + 1, sizeof(uint64_t));
	if (cut == NULL || d == NULL)
		goto out;
	dcqcn_rp_init(&rp, p, t->t0_ns);
	for (k = 0; k < t->n; k++) {
		const uint64_t a = t->t0_ns + (uint64_t)k * t->bin_ns;

		ana_model_to(t, p, &rp, &ci, a);
		if (rp.decreases != dec && nc <= t->n_cnp)
			cut[nc++] = rp.last_decrease_ns;
		dec = rp.decreases;
	}
	for (i = 0; i < nc; i++) {
		int64_t k0 = ana_bin(t, cut[i]) + 1, kk;
		uint64_t next = UINT64_MAX;
		double s = 0, n = 0, level;

		for (ci = 0; ci < t->n_cnp; ci++)
			if (t->cnp[ci] > cut[i]) {
				next = t->cnp[ci];
				break;
			}
		if (ana_idle_in(t, k0, (uint32_t)(8000 / t->bin_ns) + 1))
			continue; /* the level after the cut would hold idle time */
		for (kk = k0; kk < k0 + (int64_t)(8000 / t->bin_ns) + 1 && kk < (int64_t)t->n; kk++) {
			s += t->gsum[kk];
			n += t->gn[kk];
		}
		if (n == 0)
			continue;
		level = s / n;
		for (; kk < (int64_t)t->n; kk++) {
			uint64_t tb = t->t0_ns + (uint64_t)kk * t->bin_ns;

			if (tb >= next || ana_idle_in(t, kk, 1))
				break; /* the next CNP, or idle time, came first */
			if (t->gn[kk] > 0 && t->gsum[kk] / t->gn[kk] > level * 1.002) {
				d[nd++] = tb - cut[i];
				break;
			}
		}
	}
	if (nd > 0) {
		qsort(d, nd, sizeof(*d), ana_cmp_u64_d);
		res = d[nd / 2];
	}
out:
	free(cut);
	free(d);
	return res;
}

/*
 * Two stages. (1) The cut ratios depend on the alpha parameters only (initial_alpha_value,
 * dce_tcp_g), not on the increases: fit those on the measured cuts alone. (2) With alpha
 * fixed, the increase parameters: rpg_time_reset measured from the trace (byte counter off)
 * or, for each rpg_threshold 1..8, the best of 16 values (10 us .. 5 ms, log-spaced); from
 * each of these 8 starts (and the given values) a Nelder-Mead search of rpg_ai_rate and
 * rpg_hai_rate (and rpg_time_reset when it was not measured); then coordinate searches of
 * every parameter, Nelder-Mead once more, and a last polish. Without gaps (no pacing
 * visible) only the search from the given values runs.
 */
void
ana_fit(const struct ana_trace *t, struct dcqcn_params *p, double *pred, double *best_err)
{
	struct dcqcn_params start = *p, best_p, cand[10];
	double best = 1e300, cell;
	uint64_t tr = 0;
	unsigned int nc = 0, i, round;
	uint32_t f;

	if (t->gn != NULL && t->n_cnp > 0) {
		double *m = calloc(t->n_cnp, sizeof(double)), *q = calloc(t->n_cnp, sizeof(double));

		if (m != NULL && q != NULL) {
			double cur = ana_cut_err(t, p, m, q), span = 8;

			for (round = 0; round < 8; round++) {
				cur = ana_golden(&ana_fitps[0], p, log(span), ana_cut_err, t, m, q,
						 cur);
				cur = ana_golden(&ana_fitps[1], p, log(span), ana_cut_err, t, m, q,
						 cur);
				span = span > 1.3 ? sqrt(span) : 1.1;
			}
		}
		free(m);
		free(q);
		start = *p;
		/* with the byte counter on, the first increase may be the counter's */
		tr = start.rpg_byte_reset == 0 ? ana_est_time_reset(t, &start) : 0;
		/* per F, rpg_time_reset as estimated, else the best of 16 values from 10 us to
		 * 5 ms */
		for (f = 1; f <= 8; f++) {
			cell = 1e300;
			for (i = 0; i < (tr ? 1u : 16u); i++) {
				struct dcqcn_params c = start;
				double e;

				c.rpg_threshold = f;
				c.rpg_time_reset_ns = tr ? tr :
					(uint64_t)(10000.0 * pow(500.0, i / 15.0));
				e = ana_eval(t, &c, pred);
				if (e < cell) {
					cell = e;
					cand[nc] = c;
				}
			}
			nc++;
		}
	}
	cand[nc++] = start;
	best_p = start;
	for (i = 0; i < nc; i++) {
		struct dcqcn_params c = cand[i];
		double e = ana_nelder_mead(t, &c, pred, tr != 0 && i + 1 < nc);

		if (e < best) {
			best = e;
			best_p = c;
		}
	}
	*p = best_p;
	best = ana_fit_f(t, p, pred);
	/* once more along the AI/HAI valley, then polish */
	ana_nelder_mead(t, p, pred, true);
	best = ana_fit_f(t, p, pred);
	*best_err = best;
}

void
ana_differs(const struct dcqcn_params *given, const struct dcqcn_params *fit, char *out,
	    size_t len)
{
	size_t used = 0;
	unsigned int i;

	out[0] = '\0';
	for (i = 0; i < ANA_NFIT; i++) {
		double g = ana_fget(given, &ana_fitps[i]), f = ana_fget(fit, &ana_fitps[i]);

		if (fabs(f - g) > 0.05 * fmax(fabs(g), 1e-12) && used < len) {
			used += (size_t)snprintf(out + used, len - used, "%s%s", used ? "," : "",
						 ana_fitps[i].name);
		}
	}
	if (given->rpg_threshold != fit->rpg_threshold && used < len)
		snprintf(out + used, len - used, "%srpg_threshold", used ? "," : "");
}

/* A fitted parameter's value in NVIDIA's units (as the parameter files and the JSON give it). */
static double
ana_fget_nv(const struct dcqcn_params *p, unsigned int i)
{
	double v = ana_fget(p, &ana_fitps[i]);

	if (ana_fitps[i].off == offsetof(struct dcqcn_params, initial_alpha))
		return v * 1024;
	if (ana_fitps[i].off == offsetof(struct dcqcn_params, g))
		return 1024 - v * 1024;
	if (ana_fitps[i].off == offsetof(struct dcqcn_params, rpg_time_reset_ns))
		return v / 1000;
	return v;
}

/*
 * On a FAIL: which one parameter, changed alone, explains the trace? For each fitted
 * parameter and rpg_threshold, the others kept at the given values: 33 values spread
 * evenly in log(value) over its range (rates up to the line rate), then a golden-section
 * search between the best one's neighbours, on the trajectory error (bytes per window, as the
 * verdict). Those whose best value brings the error within --tol-traj are named, best first.
 * Unlike the fit (all parameters at once, on the inter-packet gaps when the pacing is
 * visible), it needs no clean pacing: a capture whose timestamps bunch (a software switch
 * polling in bursts) still tells which parameter is wrong. A parameter whose best value is
 * its given one (within 5%, the fit's "differs" rule; rpg_threshold exactly) is not named:
 * leaving it as it is explains nothing (a FAIL on the cuts alone, the trajectory within
 * --tol-traj, once named every parameter at its current value).
 */
void
ana_explain(const struct ana_trace *t, const struct dcqcn_params *given, double tol,
	    struct ana_dcqcn_res *r, double *pred)
{
	enum { NGRID = 33 };
	double errs[ANA_NFIT + 1], vals[ANA_NFIT + 1];
	bool used[ANA_NFIT + 1] = { false };
	unsigned int i, k, n = ANA_NFIT + 1;
	size_t len = 0;

	for (i = 0; i < ANA_NFIT; i++) {
		const struct ana_fitp *fp = &ana_fitps[i];
		struct dcqcn_params p = *given;
		double lo = log(fp->lo), hi = log(fp->hi), best = 1e300, bx = lo, step, e;

		if (fp->off == offsetof(struct dcqcn_params, rpg_ai_rate_mbps) ||
		    fp->off == offsetof(struct dcqcn_params, rpg_hai_rate_mbps))
			hi = log(fmax(given->line_rate_mbps, fp->lo * 2));
		step = (hi - lo) / (NGRID - 1);
		for (k = 0; k < NGRID; k++) {
			ana_fset(&p, fp, exp(lo + step * k));
			e = ana_eval(t, &p, pred);
			if (e < best) {
				best = e;
				bx = lo + step * k;
			}
		}
		ana_fset(&p, fp, exp(bx));
		best = ana_golden(fp, &p, step, ana_eval_g, t, pred, NULL, best);
		errs[i] = best;
		vals[i] = ana_fget_nv(&p, i);
	}
	errs[ANA_NFIT] = 1e300;
	vals[ANA_NFIT] = given->rpg_threshold;
	for (k = 1; k <= 8; k++) {
		struct dcqcn_params p = *given;
		double e;

		p.rpg_threshold = k;
		e = ana_eval(t, &p, pred);
		if (e < errs[ANA_NFIT]) {
			errs[ANA_NFIT] = e;
			vals[ANA_NFIT] = k;
		}
	}
	r->explained[0] = '\0';
	r->n_explained = 0;
	for (i = 0; i < ANA_NFIT; i++) {
		double cur = ana_fget_nv(given, i);

		if (fabs(vals[i] - cur) <= 0.05 * fabs(cur))
			used[i] = true;
	}
	if (vals[ANA_NFIT] == given->rpg_threshold)
		used[ANA_NFIT] = true;
	for (;;) {
		unsigned int b = n;

		for (i = 0; i < n; i++)
			if (!used[i] && errs[i] <= tol && (b == n || errs[i] < errs[b]))
				b = i;
		if (b == n || len >= sizeof(r->explained) - 1)
			break;
		used[b] = true;
		if (r->n_explained < ANA_EXPLAIN_MAX) {
			struct ana_explained *x = &r->expl[r->n_explained++];

			x->name = b < ANA_NFIT ? ana_fitps[b].name : "rpg_threshold";
			x->value = vals[b];
			x->error = errs[b];
		}
		len += (size_t)snprintf(r->explained + len, sizeof(r->explained) - len, "%s%s",
					len ? "," : "", b < ANA_NFIT ? ana_fitps[b].name :
					"rpg_threshold");
	}
}
