/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Over 600 lines (1299): the validation, the parameter fit and the one-parameter explanation
 * of a FAIL share the trajectory model and the error measure; the fit and the explanation
 * (coordinate and golden-section searches) are the next file to go.
 *
 * DCQCN validation: for each data flow whose sender received CNPs, the measured sending rate
 * (wire bytes per bin at the capture point) against the trajectory lib/dcqcn predicts for the
 * same CNP arrival times with the --dcqcn parameters; per-CNP cuts, recovery, a verdict; and a
 * fit of the parameters (coordinate search) that explain the trace best; on a FAIL, the
 * parameters that changed alone explain it (ana_explain).
 *
 * Error measure: windows of W = max(--window, 64 frame times at line rate); per window the
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
	const double *gsum;       /* per bin: sum of the rates the inter-packet gaps imply */
	const double *gn;         /* per bin: number of gaps (NULL: fit on bytes) */
	uint32_t w;               /* bins per window */
	uint32_t k0, k1;          /* windowed range compared: bins [k0, k1) */
	const uint32_t *idle_cum; /* idle bins before bin k, k = 0..n (NULL: no idle time) */
};

/* Bins in [k, k + w) that hold idle time (ana_idle_mark()); 0 without any. */
static inline uint32_t
ana_idle_in(const struct ana_trace *t, int64_t k, uint32_t w)
{
	int64_t e = k + (int64_t)w;

	if (t->idle_cum == NULL)
		return 0;
	if (k < 0)
		k = 0;
	if (e > (int64_t)t->n)
		e = t->n;
	return e > k ? t->idle_cum[e] - t->idle_cum[k] : 0;
}

static int
ana_cmp_u64_d(const void *x, const void *y)
{
	uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;

	return a < b ? -1 : a > b;
}

/* Bin of time t (may be negative: before the series starts). */
static int64_t
ana_bin(const struct ana_trace *t, uint64_t t_ns)
{
	return t_ns >= t->t0_ns ? (int64_t)((t_ns - t->t0_ns) / t->bin_ns) :
				  -(int64_t)((t->t0_ns - t_ns) / t->bin_ns) - 1;
}

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

		if (ana_idle_in(t, k, t->w))
			continue; /* the sender had nothing to send for part of it */
		for (j = 0; j < t->w; j++) {
			m += t->meas[k + j];
			q += pred[k + j];
		}
		num += (m - q) * (m - q);
		den += m * m;
	}
	return den > 0 ? sqrt(num / den) : 1e9;
}

/*
 * The fit's error when the pacing is visible: per bin the mean rate the inter-packet gaps
 * imply against Rc at the bin's start, weighted by the number of gaps; relative RMS. A paced
 * sender's gaps give its rate packet by packet, much finer than bytes per window.
 */
static double
ana_err_gaps(const struct ana_trace *t, const struct dcqcn_params *p)
{
	struct dcqcn_rp rp;
	double num = 0, den = 0;
	uint32_t k, ci = 0;

	dcqcn_rp_init(&rp, p, t->t0_ns);
	for (k = 0; k < t->n; k++) {
		uint64_t a = t->t0_ns + (uint64_t)k * t->bin_ns;

		while (ci < t->n_cnp && t->cnp[ci] <= a) {
			dcqcn_rp_on_cnp(&rp, p, t->cnp[ci]);
			ci++;
		}
		dcqcn_rp_advance(&rp, p, a);
		if (k >= t->k0 && t->gn[k] > 0 && !ana_idle_in(t, k, 1)) {
			double m = t->gsum[k] / t->gn[k];

			num += t->gn[k] * (m - rp.rc_mbps) * (m - rp.rc_mbps);
			den += t->gn[k] * m * m;
		}
		if (t->meas[k] > 0)
			dcqcn_rp_on_bytes(&rp, p, (uint64_t)t->meas[k], a + t->bin_ns);
	}
	return den > 0 ? sqrt(num / den) : 1e9;
}

static double
ana_eval(const struct ana_trace *t, const struct dcqcn_params *p, double *pred)
{
	struct dcqcn_rp rp;

	if (t->gn != NULL)
		return ana_err_gaps(t, p);
	ana_predict(t, p, pred, &rp);
	return ana_err(t, pred);
}

/* ana_eval with ana_golden's signature (the second buffer unused). */
static double
ana_eval_g(const struct ana_trace *t, const struct dcqcn_params *p, double *pred, double *unused)
{
	(void)unused;
	return ana_eval(t, p, pred);
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
	/* up to 1 s: timers scaled for a slow link (tests/analysis/dcqcn-50m.conf: 20 ms) */
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
			for (it = 0; it < 40 && hi - lo > 1e-4; it++) {
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

/* Golden-section search of one parameter (log scale) within x/span .. x*span on err(). */
static double
ana_golden(const struct ana_fitp *fp, struct dcqcn_params *p, double span,
	   double (*err)(const struct ana_trace *, const struct dcqcn_params *, double *,
			 double *), const struct ana_trace *t, double *b1, double *b2, double cur)
{
	double x0 = log(fmax(ana_fget(p, fp), fp->lo)), lo = x0 - log(span), hi = x0 + log(span);
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
		uint64_t a = t->t0_ns + (uint64_t)k * t->bin_ns;

		while (ci < t->n_cnp && t->cnp[ci] <= a) {
			dcqcn_rp_on_cnp(&rp, p, t->cnp[ci]);
			ci++;
		}
		dcqcn_rp_advance(&rp, p, a);
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
static void
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
				cur = ana_golden(&ana_fitps[0], p, span, ana_cut_err, t, m, q, cur);
				cur = ana_golden(&ana_fitps[1], p, span, ana_cut_err, t, m, q, cur);
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
 * polling in bursts) still tells which parameter is wrong.
 */
static void
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
		best = ana_golden(fp, &p, exp(step), ana_eval_g, t, pred, NULL, best);
		errs[i] = best;
		vals[i] = ana_fget_nv(&p, i);
	}
	errs[ANA_NFIT] = 1e300;
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
	cum = malloc(((size_t)t->n + 1) * sizeof(*cum));
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
	double line = a->o.link_gbps * 1000.0, *line_pred;
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
	r->pred = calloc(t.n ? t.n : 1, sizeof(double));
	line_pred = calloc(t.n ? t.n : 1, sizeof(double));
	r->cuts = calloc(t.n_cnp, sizeof(*r->cuts));
	if (r->pred == NULL || line_pred == NULL || r->cuts == NULL) {
		free(line_pred);
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
	for (k = 0; k < t.n; k++)
		line_pred[k] = line * (double)t.bin_ns / 8000.0;
	r->err_traj_line = ana_err(&t, line_pred);
	free(line_pred);
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
		double *tmp = calloc(t.n ? t.n : 1, sizeof(double));

		if (!r->pass && tmp != NULL)
			ana_explain(&t, &p, a->o.tol_traj, r, tmp);

		if (d->gap_n.n > 0 && d->gap_n.bin_ns == t.bin_ns && d->gap_n.t0_ns == t.t0_ns &&
		    d->gap_n.n <= t.n && d->gap_sum.n == d->gap_n.n) {
			/* the gap series may end a bin early: pad with empty bins */
			double *gs = calloc(t.n, sizeof(double)), *gn = calloc(t.n, sizeof(double));

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
