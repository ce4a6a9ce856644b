/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * DCQCN validation: for each data flow whose sender received CNPs, the measured sending rate
 * (wire bytes per bin at the capture point) against the trajectory lib/dcqcn predicts for the
 * same CNP arrival times with the --dcqcn parameters; per-CNP cuts, recovery, a verdict; and a
 * fit of the parameters (coordinate search) that explain the trace best.
 *
 * Error measure: windows of W = max(--window, 16 frame times at line rate); per window the
 * measured and the predicted wire bytes; err = sqrt(sum (m - p)^2 / sum m^2) over the windows
 * from the first CNP to the last data packet. The prediction feeds the model the measured
 * bytes (the byte counter counts what the NIC sent).
 */
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "ana_internal.h"

/* ---- parameter files in NVIDIA's names ---- */

struct ana_pname {
	const char *name;
	int kind; /* 0 us->ns, 1 bytes, 2 count, 3 Mb/s, 4 percent, 5 /1024 g, 6 /1024 alpha,
		   * 7 bool, 8 accepted and not modelled, 9 must be 0 */
	size_t off;
};

#define OFF(f) offsetof(struct dcqcn_params, f)
static const struct ana_pname ana_pnames[] = {
	{ "rpg_time_reset", 0, OFF(rpg_time_reset_ns) },
	{ "rpg_byte_reset", 1, OFF(rpg_byte_reset) },
	{ "rpg_threshold", 2, OFF(rpg_threshold) },
	{ "rpg_ai_rate", 3, OFF(rpg_ai_rate_mbps) },
	{ "rpg_hai_rate", 3, OFF(rpg_hai_rate_mbps) },
	{ "rpg_min_dec_fac", 4, OFF(rpg_min_dec_fac_pct) },
	{ "rpg_min_rate", 3, OFF(rpg_min_rate_mbps) },
	{ "rpg_gd", 8, 0 },
	{ "rpg_max_rate", 8, 0 },
	{ "rate_to_set_on_first_cnp", 9, 0 },
	{ "dce_tcp_g", 5, OFF(g) },
	{ "dce_tcp_rtt", 0, OFF(alpha_period_ns) },
	{ "rate_reduce_monitor_period", 0, OFF(rate_reduce_monitor_period_ns) },
	{ "initial_alpha_value", 6, OFF(initial_alpha) },
	{ "clamp_tgt_rate", 7, OFF(clamp_tgt_rate) },
	{ "clamp_tgt_rate_after_time_inc", 7, OFF(clamp_tgt_rate_after_time_inc) },
	{ "min_time_between_cnps", 0, OFF(min_time_between_cnps_ns) },
	{ "cnp_dscp", 8, 0 },
	{ "cnp_802p_prio", 8, 0 },
	{ "cnp_prio", 8, 0 },
	{ "enable", 8, 0 },
	{ "line_rate_mbps", 3, OFF(line_rate_mbps) },
};
#undef OFF

static const struct ana_pname *
ana_pname_find(const char *raw)
{
	char buf[96];
	const char *n = raw, *slash = strrchr(raw, '/');
	unsigned int i, pass;

	if (slash != NULL)
		n = slash + 1;
	for (pass = 0; pass < 3; pass++) {
		if (pass == 0)
			snprintf(buf, sizeof(buf), "%s", n);
		else if (pass == 1 && strncmp(n, "rp_", 3) == 0)
			snprintf(buf, sizeof(buf), "rpg_%s", n + 3);
		else if (pass == 2 && (strncmp(n, "rp_", 3) == 0 || strncmp(n, "np_", 3) == 0))
			snprintf(buf, sizeof(buf), "%s", n + 3);
		else
			continue;
		for (i = 0; i < sizeof(ana_pnames) / sizeof(ana_pnames[0]); i++)
			if (strcmp(ana_pnames[i].name, buf) == 0)
				return &ana_pnames[i];
	}
	return NULL;
}

static int
ana_pset(struct dcqcn_params *p, const char *where, const char *name, double v, char *err,
	 size_t err_len)
{
	const struct ana_pname *d = ana_pname_find(name);
	char *b = (char *)p;

	if (d == NULL) {
		snprintf(err, err_len, "%s: unknown DCQCN parameter '%s' (NVIDIA names: rpg_ai_rate, "
			 "rp_time_reset, dce_tcp_g, ...)", where, name);
		return -EINVAL;
	}
	if (!isfinite(v) || v < 0) {
		snprintf(err, err_len, "%s: %s: must be a number >= 0", where, name);
		return -EINVAL;
	}
	switch (d->kind) {
	case 0:
		if (v == 0 && strcmp(d->name, "min_time_between_cnps") != 0) {
			snprintf(err, err_len, "%s: %s: must be > 0 us", where, name);
			return -EINVAL;
		}
		*(uint64_t *)(b + d->off) = (uint64_t)(v * 1000 + 0.5);
		break;
	case 1:
		*(uint64_t *)(b + d->off) = (uint64_t)v;
		break;
	case 2:
		if (v < 1 || v > 1000) {
			snprintf(err, err_len, "%s: %s: must be 1..1000, got %g", where, name, v);
			return -EINVAL;
		}
		*(uint32_t *)(b + d->off) = (uint32_t)v;
		break;
	case 3:
		*(double *)(b + d->off) = v;
		break;
	case 4:
		if (v > 100) {
			snprintf(err, err_len, "%s: %s: must be 0..100 (%%), got %g", where, name, v);
			return -EINVAL;
		}
		*(uint32_t *)(b + d->off) = (uint32_t)v;
		break;
	case 5:
		if (v > 1024) {
			snprintf(err, err_len, "%s: %s: must be 0..1024, got %g", where, name, v);
			return -EINVAL;
		}
		*(double *)(b + d->off) = (1024.0 - v) / 1024.0;
		break;
	case 6:
		if (v > 1024) {
			snprintf(err, err_len, "%s: %s: must be 0..1024, got %g", where, name, v);
			return -EINVAL;
		}
		*(double *)(b + d->off) = v / 1024.0;
		break;
	case 7:
		if (v != 0 && v != 1) {
			snprintf(err, err_len, "%s: %s: must be 0 or 1, got %g", where, name, v);
			return -EINVAL;
		}
		*(bool *)(b + d->off) = v != 0;
		break;
	case 9:
		if (v != 0) {
			snprintf(err, err_len, "%s: %s: only 0 is modelled, got %g", where, name, v);
			return -EINVAL;
		}
		break;
	default:
		break;
	}
	return 0;
}

int
ana_dcqcn_load(struct dcqcn_params *p, const char *path, char *err, size_t err_len)
{
	FILE *f = fopen(path, "r");
	char line[512];
	int c, rc = 0;
	unsigned int lineno = 0;

	if (f == NULL) {
		snprintf(err, err_len, "--dcqcn %s: %s", path, strerror(errno));
		return -errno;
	}
	do
		c = fgetc(f);
	while (c == ' ' || c == '\n' || c == '\t' || c == '\r');
	if (c == '{') {
		json_error_t je;
		json_t *root, *v;
		const char *k;

		rewind(f);
		root = json_loadf(f, JSON_REJECT_DUPLICATES, &je);
		fclose(f);
		if (root == NULL || !json_is_object(root)) {
			snprintf(err, err_len, "--dcqcn %s: line %d: %s", path, je.line,
				 root ? "not an object" : je.text);
			json_decref(root);
			return -EINVAL;
		}
		json_object_foreach(root, k, v) {
			char where[600];

			snprintf(where, sizeof(where), "--dcqcn %s: .%s", path, k);
			if (!json_is_number(v)) {
				snprintf(err, err_len, "%s: must be a number", where);
				rc = -EINVAL;
				break;
			}
			rc = ana_pset(p, where, k, json_number_value(v), err, err_len);
			if (rc != 0)
				break;
		}
		json_decref(root);
		return rc;
	}
	rewind(f);
	while (fgets(line, sizeof(line), f) != NULL) {
		char *s = line, *name, *val, *end, *save = NULL, where[600];
		double v;

		lineno++;
		if (strchr(line, '\n') == NULL && !feof(f)) {
			snprintf(err, err_len, "--dcqcn %s: line %u: too long", path, lineno);
			rc = -EINVAL;
			break;
		}
		while (*s == ' ' || *s == '\t')
			s++;
		if (*s == '#' || *s == '\n' || *s == '\r' || *s == '\0')
			continue;
		/* `name value`, `name=value` or grep's `path/name:value` */
		name = strtok_r(s, " \t:=\r\n", &save);
		val = strtok_r(NULL, " \t:=\r\n", &save);
		snprintf(where, sizeof(where), "--dcqcn %s: line %u", path, lineno);
		if (name == NULL || val == NULL) {
			snprintf(err, err_len, "%s: expected `name value`", where);
			rc = -EINVAL;
			break;
		}
		v = strtod(val, &end);
		if (*end != '\0') {
			snprintf(err, err_len, "%s: %s: '%s' is not a number", where, name, val);
			rc = -EINVAL;
			break;
		}
		rc = ana_pset(p, where, name, v, err, err_len);
		if (rc != 0)
			break;
	}
	if (rc == 0 && ferror(f)) {
		snprintf(err, err_len, "--dcqcn %s: read error", path);
		rc = -EIO;
	}
	fclose(f);
	return rc;
}

/* ---- prediction ---- */

struct ana_trace {
	const double *meas;       /* wire bytes per bin */
	uint32_t n;
	uint64_t t0_ns, bin_ns;
	const uint64_t *cnp;
	uint32_t n_cnp;
	uint32_t w;               /* bins per window */
	uint32_t k0, k1;          /* windowed range compared: bins [k0, k1) */
};

/* Bin of time t (may be negative: before the series starts). */
static int64_t
ana_bin(const struct ana_trace *t, uint64_t t_ns)
{
	return t_ns >= t->t0_ns ? (int64_t)((t_ns - t->t0_ns) / t->bin_ns) :
				  -(int64_t)((t->t0_ns - t_ns) / t->bin_ns) - 1;
}

/* Predicted wire bytes per bin for params p; returns the model state at the end in *rp. */
static void
ana_predict(const struct ana_trace *t, const struct dcqcn_params *p, double *pred,
	    struct dcqcn_rp *rp)
{
	uint32_t k, ci = 0;

	dcqcn_rp_init(rp, p, t->t0_ns);
	for (k = 0; k < t->n; k++) {
		uint64_t a = t->t0_ns + (uint64_t)k * t->bin_ns, b = a + t->bin_ns, x = a;
		double bytes = 0;

		/* integrate Rc over the bin, piecewise between CNPs and at the bin's midpoint */
		while (x < b) {
			uint64_t nx = b;

			if (ci < t->n_cnp && t->cnp[ci] < nx && t->cnp[ci] >= x)
				nx = t->cnp[ci];
			if (x < a + t->bin_ns / 2 && a + t->bin_ns / 2 < nx)
				nx = a + t->bin_ns / 2;
			dcqcn_rp_advance(rp, p, x);
			bytes += rp->rc_mbps * (double)(nx - x) / 8000.0;
			x = nx;
			while (ci < t->n_cnp && t->cnp[ci] <= x && t->cnp[ci] < b) {
				dcqcn_rp_on_cnp(rp, p, t->cnp[ci]);
				ci++;
			}
		}
		pred[k] = bytes;
		if (t->meas[k] > 0)
			dcqcn_rp_on_bytes(rp, p, (uint64_t)t->meas[k], b);
	}
}

static double
ana_err(const struct ana_trace *t, const double *pred)
{
	double num = 0, den = 0;
	uint32_t k;

	for (k = t->k0; k + t->w <= t->k1; k += t->w) {
		double m = 0, q = 0;
		uint32_t j;

		for (j = 0; j < t->w; j++) {
			m += t->meas[k + j];
			q += pred[k + j];
		}
		num += (m - q) * (m - q);
		den += m * m;
	}
	return den > 0 ? sqrt(num / den) : 1e9;
}

static double
ana_eval(const struct ana_trace *t, const struct dcqcn_params *p, double *pred)
{
	struct dcqcn_rp rp;

	ana_predict(t, p, pred, &rp);
	return ana_err(t, pred);
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
	{ "rpg_time_reset", 1, OFF(rpg_time_reset_ns), 1000, 10000000 },
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

/*
 * Coordinate search: each parameter in turn, a golden-section search of log(value) within a
 * bracket around the current value (x/4 .. x*4 first, narrowing each round), threshold F by
 * scanning 1..10; rounds until nothing improves by 1e-4.
 */
static void
ana_fit(const struct ana_trace *t, struct dcqcn_params *p, double *pred, double *best_err)
{
	double best = ana_eval(t, p, pred), span = log(4.0);
	unsigned int round, i;

	for (round = 0; round < 8; round++) {
		double start = best;
		uint32_t f, bestf = p->rpg_threshold;

		for (f = 1; f <= 10; f++) {
			double e;

			p->rpg_threshold = f;
			e = ana_eval(t, p, pred);
			if (e < best - 1e-12) {
				best = e;
				bestf = f;
			}
		}
		p->rpg_threshold = bestf;
		for (i = 0; i < ANA_NFIT; i++) {
			const struct ana_fitp *fp = &ana_fitps[i];
			double x0 = log(fmax(ana_fget(p, fp), fp->lo)), lo = x0 - span, hi = x0 + span;
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
			fc = ana_eval(t, p, pred);
			ana_fset(p, fp, exp(d));
			fd = ana_eval(t, p, pred);
			for (it = 0; it < 30 && hi - lo > 1e-4; it++) {
				if (fc < fd) {
					hi = d;
					d = c;
					fd = fc;
					c = hi - gr * (hi - lo);
					ana_fset(p, fp, exp(c));
					fc = ana_eval(t, p, pred);
				} else {
					lo = c;
					c = d;
					fc = fd;
					d = lo + gr * (hi - lo);
					ana_fset(p, fp, exp(d));
					fd = ana_eval(t, p, pred);
				}
			}
			if (fmin(fc, fd) < best - 1e-12) {
				ana_fset(p, fp, exp(fc < fd ? c : d));
				best = fmin(fc, fd);
			} else {
				ana_fset(p, fp, keep);
			}
		}
		span = span * 0.6 > log(1.02) ? span * 0.6 : log(1.02);
		if (start - best < 1e-4 && round >= 2)
			break;
	}
	*best_err = ana_eval(t, p, pred);
}

static void
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

static void
ana_dcqcn_flow(struct ana *a, struct ana_flow *d, struct ana_flow *c, struct ana_dcqcn_res *r)
{
	struct dcqcn_params p = a->o.dcqcn;
	double line = a->o.link_gbps * 1000.0, *line_pred;
	struct ana_trace t;
	struct dcqcn_rp rp;
	double frame_bytes, frame_ns;
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
	t.w = (uint32_t)(fmax((double)a->o.window_ns, 16 * frame_ns) / (double)t.bin_ns + 0.999);
	if (t.w == 0)
		t.w = 1;
	kc = ana_bin(&t, t.cnp[0]);
	t.k0 = kc > 0 ? (uint32_t)kc : 0;
	t.k1 = t.n;
	r->flow = (int32_t)(d - a->flows);
	r->n_cnp = c->n_cnp;
	r->pred = calloc(t.n ? t.n : 1, sizeof(double));
	line_pred = calloc(t.n ? t.n : 1, sizeof(double));
	r->cuts = calloc(t.n_cnp, sizeof(*r->cuts));
	if (r->pred == NULL || line_pred == NULL || r->cuts == NULL) {
		free(line_pred);
		snprintf(r->why, sizeof(r->why), "out of memory");
		return;
	}
	r->n_pred = t.n;
	for (k = 0; k < t.n; k++)
		line_pred[k] = line * (double)t.bin_ns / 8000.0;
	r->err_traj_line = ana_err(&t, line_pred);
	free(line_pred);
	ana_predict(&t, &p, r->pred, &rp);
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
		u->t_ns = t.cnp[i];
		u->before_mbps = ana_win_mbps(&t, t.meas, kb - (int64_t)t.w, t.w);
		u->meas_after_mbps = ana_win_mbps(&t, t.meas, ka, t.w);
		u->pred_after_mbps = ana_win_mbps(&t, r->pred, ka, t.w);
		u->ok = fabs(u->meas_after_mbps - u->pred_after_mbps) <=
			a->o.tol_cut * fmax(u->pred_after_mbps, 1e-9);
		r->cuts_ok += u->ok;
		r->n_cuts++;
	}
	r->recovery_meas_ns = ana_recovery(&t, t.meas, line);
	r->recovery_pred_ns = ana_recovery(&t, r->pred, line);
	r->pass = r->err_traj <= a->o.tol_traj && r->cuts_ok * 10 >= r->n_cuts * 9;
	if (r->pass)
		snprintf(r->why, sizeof(r->why), "trajectory error %.3f <= %.3f, %u of %u cuts "
			 "within %.0f%%", r->err_traj, a->o.tol_traj, r->cuts_ok, r->n_cuts,
			 a->o.tol_cut * 100);
	else if (r->err_traj_line < r->err_traj && r->err_traj_line <= a->o.tol_traj)
		snprintf(r->why, sizeof(r->why), "the sender kept its rate: a sender ignoring the "
			 "CNPs explains the trace (error %.3f) better than the model (%.3f)",
			 r->err_traj_line, r->err_traj);
	else
		snprintf(r->why, sizeof(r->why), "trajectory error %.3f > %.3f or only %u of %u "
			 "cuts within %.0f%%", r->err_traj, a->o.tol_traj, r->cuts_ok, r->n_cuts,
			 a->o.tol_cut * 100);
	if (a->o.fit) {
		double *tmp = calloc(t.n ? t.n : 1, sizeof(double));

		if (tmp != NULL) {
			r->fit = p;
			ana_fit(&t, &r->fit, tmp, &r->fit_err);
			r->fitted = true;
			ana_differs(&p, &r->fit, r->fit_differs, sizeof(r->fit_differs));
			free(tmp);
		}
	}
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
	}
	free(a->dres);
	a->dres = NULL;
	a->n_dres = 0;
}
