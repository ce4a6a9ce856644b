/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <math.h>
#include <string.h>

#include "dcqcn.h"

void
dcqcn_params_nvidia(struct dcqcn_params *p, double line_rate_mbps)
{
	memset(p, 0, sizeof(*p));
	p->line_rate_mbps = line_rate_mbps;
	p->rpg_time_reset_ns = 300000;
	p->rpg_byte_reset = 32767;
	p->rpg_threshold = 1;
	p->rpg_ai_rate_mbps = 5;
	p->rpg_hai_rate_mbps = 50;
	p->rpg_min_dec_fac_pct = 50;
	p->rpg_min_rate_mbps = 1;
	p->g = 5.0 / 1024.0; /* dce_tcp_g = 1019: alpha keeps 1019/1024 per period */
	p->alpha_period_ns = 1000;
	p->rate_reduce_monitor_period_ns = 4000;
	p->initial_alpha = 1023.0 / 1024.0;
	p->clamp_tgt_rate = false;
	p->clamp_tgt_rate_after_time_inc = true;
	p->min_time_between_cnps_ns = 4000;
}

void
dcqcn_params_paper(struct dcqcn_params *p, double line_rate_mbps)
{
	memset(p, 0, sizeof(*p));
	p->line_rate_mbps = line_rate_mbps;
	p->rpg_time_reset_ns = 55000;
	p->rpg_byte_reset = 10 * 1000 * 1000;
	p->rpg_threshold = 5;
	p->rpg_ai_rate_mbps = 40;
	p->rpg_hai_rate_mbps = 200;
	p->rpg_min_dec_fac_pct = 50;
	p->rpg_min_rate_mbps = 1;
	p->g = 1.0 / 256.0;
	p->alpha_period_ns = 55000;
	p->rate_reduce_monitor_period_ns = 50000;
	p->initial_alpha = 1.0;
	p->clamp_tgt_rate = true;
	p->clamp_tgt_rate_after_time_inc = false;
	p->min_time_between_cnps_ns = 50000;
}

int
dcqcn_params_by_name(struct dcqcn_params *p, const char *name, double line_rate_mbps)
{
	if (strcmp(name, "nvidia") == 0)
		dcqcn_params_nvidia(p, line_rate_mbps);
	else if (strcmp(name, "paper") == 0)
		dcqcn_params_paper(p, line_rate_mbps);
	else
		return -EINVAL;
	return 0;
}

void
dcqcn_rp_init(struct dcqcn_rp *rp, const struct dcqcn_params *p, uint64_t now_ns)
{
	(void)now_ns;
	memset(rp, 0, sizeof(*rp));
	rp->rc_mbps = p->line_rate_mbps;
	rp->rt_mbps = p->line_rate_mbps;
	rp->min_rc_mbps = p->line_rate_mbps;
	rp->alpha = p->initial_alpha;
	rp->next_cut_ns = UINT64_MAX;
	rp->next_alpha_ns = UINT64_MAX;
	rp->next_timer_ns = UINT64_MAX;
}

static double
dcqcn_min(double a, double b)
{
	return a < b ? a : b;
}

static uint64_t
dcqcn_min_u64(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

/* One rate-increase event (timer or byte counter already counted in T / BC). */
static void
dcqcn_rp_increase(struct dcqcn_rp *rp, const struct dcqcn_params *p)
{
	uint32_t lo = rp->t_events < rp->bc_events ? rp->t_events : rp->bc_events;
	uint32_t hi = rp->t_events > rp->bc_events ? rp->t_events : rp->bc_events;
	uint32_t f = p->rpg_threshold;
	int stage; /* 0 fast recovery, 1 additive, 2 hyper */

	if (p->rpg_byte_reset == 0)
		stage = rp->t_events < f ? 0 : rp->t_events == f ? 1 : 2;
	else
		stage = hi < f ? 0 : lo >= f ? 2 : 1;
	if (stage == 0) {
		rp->fast_recoveries++;
	} else if (stage == 2) {
		rp->rt_mbps += p->rpg_hai_rate_mbps;
		rp->hyper_increases++;
	} else {
		rp->rt_mbps += p->rpg_ai_rate_mbps;
		rp->additive_increases++;
	}
	rp->rt_mbps = dcqcn_min(rp->rt_mbps, p->line_rate_mbps);
	rp->rc_mbps = dcqcn_min((rp->rt_mbps + rp->rc_mbps) / 2, p->line_rate_mbps);
	/* Back at line rate nothing is left to recover: the timer stops until the next cut. */
	if (rp->rc_mbps >= p->line_rate_mbps)
		rp->next_timer_ns = UINT64_MAX;
}

/* The cut a CNP of the monitor period ending at @p t_ns asked for. */
static void
dcqcn_rp_cut(struct dcqcn_rp *rp, const struct dcqcn_params *p, uint64_t t_ns)
{
	double floor_mbps;

	if (rp->decreases == 0 || p->clamp_tgt_rate ||
	    (p->clamp_tgt_rate_after_time_inc && rp->timer_inc_since_cnp))
		rp->rt_mbps = rp->rc_mbps;
	floor_mbps = rp->rc_mbps * (1.0 - p->rpg_min_dec_fac_pct / 100.0);
	rp->rc_mbps = rp->rc_mbps * (1.0 - rp->alpha / 2.0);
	if (rp->rc_mbps < floor_mbps)
		rp->rc_mbps = floor_mbps;
	if (rp->rc_mbps < p->rpg_min_rate_mbps)
		rp->rc_mbps = p->rpg_min_rate_mbps;
	if (rp->rc_mbps < rp->min_rc_mbps)
		rp->min_rc_mbps = rp->rc_mbps;
	rp->decreases++;
	rp->last_decrease_ns = t_ns;
	rp->cut_pending = false;
	rp->next_cut_ns = UINT64_MAX;
	rp->t_events = 0;
	rp->bc_events = 0;
	rp->bytes_since = 0;
	rp->timer_inc_since_cnp = false;
	rp->next_timer_ns = t_ns + p->rpg_time_reset_ns;
}

/*
 * Alpha updates on the grid up to and including @p limit_ns. Only the first update can see
 * a CNP (dcqcn_rp_on_cnp advances to its arrival first); the rest are plain decays, applied
 * in closed form.
 */
static void
dcqcn_rp_alpha_to(struct dcqcn_rp *rp, const struct dcqcn_params *p, uint64_t limit_ns)
{
	uint64_t k;

	if (rp->next_alpha_ns == UINT64_MAX || limit_ns < rp->next_alpha_ns)
		return;
	if (rp->alpha_cnp) {
		rp->alpha = (1.0 - p->g) * rp->alpha + p->g;
		rp->alpha_cnp = false;
		rp->next_alpha_ns += p->alpha_period_ns;
		if (limit_ns < rp->next_alpha_ns)
			return;
	}
	k = (limit_ns - rp->next_alpha_ns) / p->alpha_period_ns + 1;
	rp->alpha *= k == 1 ? 1.0 - p->g : pow(1.0 - p->g, (double)k); /* (pow is slow) */
	rp->next_alpha_ns += k * p->alpha_period_ns;
}

void
dcqcn_rp_advance(struct dcqcn_rp *rp, const struct dcqcn_params *p, uint64_t now_ns)
{
	for (;;) {
		uint64_t t = dcqcn_min_u64(rp->next_cut_ns, rp->next_timer_ns);

		if (t > now_ns)
			break;
		/* alpha first on a shared instant, then the cut, then the timer (which a cut
		 * at the same instant restarts) */
		dcqcn_rp_alpha_to(rp, p, t);
		if (rp->next_cut_ns == t) {
			dcqcn_rp_cut(rp, p, t);
			continue;
		}
		rp->next_timer_ns += p->rpg_time_reset_ns;
		rp->t_events++;
		rp->timer_inc_since_cnp = true;
		dcqcn_rp_increase(rp, p);
	}
	dcqcn_rp_alpha_to(rp, p, now_ns);
}

bool
dcqcn_rp_on_cnp(struct dcqcn_rp *rp, const struct dcqcn_params *p, uint64_t now_ns)
{
	uint64_t k;

	dcqcn_rp_advance(rp, p, now_ns);
	rp->cnps++;
	if (!rp->cnp_seen) {
		rp->cnp_seen = true;
		rp->alpha = p->initial_alpha;
		rp->alpha_cnp = false;
		rp->grid0_ns = now_ns;
		rp->next_alpha_ns = now_ns + p->alpha_period_ns;
		rp->cut_pending = true;
		rp->next_cut_ns = now_ns + p->rate_reduce_monitor_period_ns;
		return true;
	}
	rp->alpha_cnp = true;
	if (rp->cut_pending) {
		rp->cnps_coalesced++;
		return false;
	}
	k = (now_ns - rp->grid0_ns) / p->rate_reduce_monitor_period_ns + 1;
	rp->cut_pending = true;
	rp->next_cut_ns = rp->grid0_ns + k * p->rate_reduce_monitor_period_ns;
	return true;
}

void
dcqcn_rp_on_bytes(struct dcqcn_rp *rp, const struct dcqcn_params *p, uint64_t bytes,
		  uint64_t now_ns)
{
	dcqcn_rp_advance(rp, p, now_ns);
	if (rp->decreases == 0 || p->rpg_byte_reset == 0 || rp->rc_mbps >= p->line_rate_mbps)
		return;
	rp->bytes_since += bytes;
	while (rp->bytes_since >= p->rpg_byte_reset && rp->rc_mbps < p->line_rate_mbps) {
		rp->bytes_since -= p->rpg_byte_reset;
		rp->bc_events++;
		dcqcn_rp_increase(rp, p);
	}
}

bool
dcqcn_np_may_send(uint64_t *last_ns, const struct dcqcn_params *p, uint64_t now_ns)
{
	if (*last_ns != UINT64_MAX && now_ns - *last_ns < p->min_time_between_cnps_ns)
		return false;
	*last_ns = now_ns;
	return true;
}
