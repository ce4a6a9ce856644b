/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The DCQCN validation's trajectory model and error measure: the wire bytes per bin lib/dcqcn
 * predicts for the trace's CNP arrivals (ana_predict), the relative RMS error per window
 * against the measured bytes (ana_err) or on the inter-packet gaps (ana_err_gaps), and
 * ana_eval, which the verdict (ana_dcqcn.c) and the fit (ana_fit.c) both call. Apart from
 * both so that neither file calls into the other's helpers: ana_dcqcn.c -> ana_fit.c ->
 * ana_model.c, and ana_dcqcn.c -> ana_model.c (the error measure is stated in ana_dcqcn.c's
 * header).
 */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ana_internal.h"
#include "ana_dcqcn_int.h"

/* Predicted wire bytes per bin for params p; returns the model state at the end in *rp. */
void
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

/* The relative RMS error per window of a prediction: pred[] per bin, or c in every bin when
 * pred is NULL (a sender at line rate: no array of t->n copies of c); the same sums in the
 * same order either way. Windows where the sender was idle are left out. */
static double
ana_err_of(const struct ana_trace *t, const double *pred, double c)
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
			q += pred != NULL ? pred[k + j] : c;
		}
		num += (m - q) * (m - q);
		den += m * m;
	}
	return den > 0 ? sqrt(num / den) : 1e9;
}

double
ana_err(const struct ana_trace *t, const double *pred)
{
	return ana_err_of(t, pred, 0);
}

double
ana_err_const(const struct ana_trace *t, double c)
{
	return ana_err_of(t, NULL, c);
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
		const uint64_t a = t->t0_ns + (uint64_t)k * t->bin_ns;

		ana_model_to(t, p, &rp, &ci, a);
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

double
ana_eval(const struct ana_trace *t, const struct dcqcn_params *p, double *pred)
{
	struct dcqcn_rp rp;

	if (t->gn != NULL)
		return ana_err_gaps(t, p);
	ana_predict(t, p, pred, &rp);
	return ana_err(t, pred);
}
