/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The DCQCN validation's internals shared by ana_model.c (the trajectory model and the error
 * measure), ana_dcqcn.c (idle and paused time, the verdict) and ana_fit.c (the parameter fit
 * and the one-parameter explanation of a FAIL). Internal to lib/analysis.
 */
#ifndef ROCE_ANA_DCQCN_INT_H
#define ROCE_ANA_DCQCN_INT_H

#include <stddef.h>
#include <stdint.h>

#include "lib/dcqcn/dcqcn.h"
#include "ana_internal.h"

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

/* Bin of time t (may be negative: before the series starts). */
static inline int64_t
ana_bin(const struct ana_trace *t, uint64_t t_ns)
{
	return t_ns >= t->t0_ns ? (int64_t)((t_ns - t->t0_ns) / t->bin_ns) :
				  -(int64_t)((t->t0_ns - t_ns) / t->bin_ns) - 1;
}

/* The trajectory error of @p p on @p t: on the inter-packet gaps when t->gn is set, else on
 * bytes per window (the prediction in @p pred, t->n bins). ana_dcqcn.c. */
/* The model sender @p rp brought to @p a_ns: the trace's CNPs up to then (from *@p ci on)
 * received, then its timers and rate advanced. */
static inline void
ana_model_to(const struct ana_trace *t, const struct dcqcn_params *p, struct dcqcn_rp *rp,
	     uint32_t *ci, uint64_t a_ns)
{
	while (*ci < t->n_cnp && t->cnp[*ci] <= a_ns) {
		dcqcn_rp_on_cnp(rp, p, t->cnp[*ci]);
		(*ci)++;
	}
	dcqcn_rp_advance(rp, p, a_ns);
}

double ana_eval(const struct ana_trace *t, const struct dcqcn_params *p, double *pred);
/* ana_model.c: the predicted wire bytes per bin (the model's end state in *rp), and the
 * relative RMS error per window of a prediction against the measured bytes */
void ana_predict(const struct ana_trace *t, const struct dcqcn_params *p, double *pred,
		 struct dcqcn_rp *rp);
double ana_err(const struct ana_trace *t, const double *pred);
double ana_err_const(const struct ana_trace *t, double c);

/* ana_fit.c: the fit of @p p (from --dcqcn's values) to @p t, its error in *best_err; the names
 * of the parameters of @p fit more than 5% from @p given into @p out; on a FAIL, the parameters
 * that changed alone explain the trace (r->expl, r->explained). */
void ana_fit(const struct ana_trace *t, struct dcqcn_params *p, double *pred, double *best_err);
void ana_differs(const struct dcqcn_params *given, const struct dcqcn_params *fit, char *out,
		 size_t len);
void ana_explain(const struct ana_trace *t, const struct dcqcn_params *given, double tol,
		 struct ana_dcqcn_res *r, double *pred);

#endif /* ROCE_ANA_DCQCN_INT_H */
