/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The DCQCN model (lib/dcqcn) against
 *  1. values derived by hand from NVIDIA's documented timing (docs/wire.md): a CNP causes a cut
 *     at the start of the next rate_reduce_monitor_period, alpha is updated on a fixed
 *     dce_tcp_rtt grid whether or not a CNP came; the derivation is in the comments;
 *  2. an independent implementation of the same rules written here in another style: an
 *     event-queue simulator modelled on the "Mellanox version" of DCQCN in HPCC's ns-3
 *     (rdma-hw.cc: UpdateAlphaMlx, CheckRateDecreaseMlx, RateIncEventTimerMlx), with the byte
 *     counter off as there, on single CNPs, 50 us trains, 4 us and 2 us trains and CNPs inside
 *     a monitor period: the same number of decreases and the rate within 2% at every sample.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>

#include <cmocka.h>

#include "lib/dcqcn/dcqcn.h"

#define US 1000ULL
#define LINE 100000.0 /* 100 Gb/s in Mb/s */

static void
assert_close(double got, double want)
{
	if (fabs(got - want) > 1e-9 * fabs(want) + 1e-9)
		fail_msg("got %.12f, want %.12f", got, want);
}

static void
test_nvidia_first_cnp_cut_at_next_period(void **state)
{
	struct dcqcn_params p;
	struct dcqcn_rp rp;

	(void)state;
	dcqcn_params_nvidia(&p, LINE);
	dcqcn_rp_init(&rp, &p, 0);
	assert_true(dcqcn_rp_on_cnp(&rp, &p, 0));
	/* not at once: the rate holds until the monitor period (4 us) ends */
	assert_close(rp.rc_mbps, LINE);
	dcqcn_rp_advance(&rp, &p, 4 * US - 1);
	assert_close(rp.rc_mbps, LINE);
	assert_int_equal(rp.decreases, 0);
	/* alpha = 1023/1024 at the CNP, 4 decays (1..4 us, before the cut at 4 us):
	 * a = 1023/1024 (1019/1024)^4 = 0.979653707796742, Rc = 100000 (1 - a/2) */
	dcqcn_rp_advance(&rp, &p, 4 * US);
	assert_int_equal(rp.decreases, 1);
	assert_close(rp.alpha, 0.979653707796742);
	assert_close(rp.rc_mbps, 51017.3146101629);
	assert_close(rp.rt_mbps, LINE);
	assert_true(rp.last_decrease_ns == 4 * US);
}

static void
test_nvidia_cnp_inside_monitor_period(void **state)
{
	struct dcqcn_params p;
	struct dcqcn_rp rp;

	(void)state;
	dcqcn_params_nvidia(&p, LINE);
	dcqcn_rp_init(&rp, &p, 0);
	dcqcn_rp_on_cnp(&rp, &p, 0);
	/* a second CNP at 2 us in the same period: not lost, not a second cut; it raises alpha
	 * at the update at 3 us: a = 1023/1024 (1-g)^2 (updates at 1, 2 us), then (1-g) a + g at
	 * 3 us, then (1-g) a at 4 us = 0.984512678438832; Rc = 100000 (1 - a/2) */
	assert_false(dcqcn_rp_on_cnp(&rp, &p, 2 * US));
	assert_int_equal(rp.cnps_coalesced, 1);
	dcqcn_rp_advance(&rp, &p, 4 * US);
	assert_int_equal(rp.decreases, 1);
	assert_close(rp.alpha, 0.984512678438832);
	assert_close(rp.rc_mbps, 50774.3660780584);
}

static void
test_nvidia_alpha_grid_and_second_cut(void **state)
{
	struct dcqcn_params p;
	struct dcqcn_rp rp;

	(void)state;
	dcqcn_params_nvidia(&p, LINE);
	dcqcn_rp_init(&rp, &p, 0);
	dcqcn_rp_on_cnp(&rp, &p, 0);
	dcqcn_rp_advance(&rp, &p, 4 * US); /* Rc1 = 51017.3146101629, a4 = 0.979653707796742 */
	/* a CNP at 10 us falls in the period [8, 12) us: the cut comes at 12 us, not at 10 */
	assert_true(dcqcn_rp_on_cnp(&rp, &p, 10 * US));
	assert_close(rp.rc_mbps, 51017.3146101629);
	dcqcn_rp_advance(&rp, &p, 12 * US - 1);
	assert_int_equal(rp.decreases, 1);
	/* alpha: 6 decays (5..10 us), (1-g) a + g at 11 us, a decay at 12 us, then the cut:
	 * a = 0.946892597097705, Rc2 = Rc1 (1 - a/2) = 26863.355846079; Rt stays at line rate
	 * (no timer increase since the first cut) */
	dcqcn_rp_advance(&rp, &p, 12 * US);
	assert_int_equal(rp.decreases, 2);
	assert_close(rp.alpha, 0.946892597097705);
	assert_close(rp.rc_mbps, 26863.355846079);
	assert_close(rp.rt_mbps, LINE);
	/* alpha keeps decaying on its grid without CNPs: 100 more updates */
	dcqcn_rp_advance(&rp, &p, 112 * US);
	assert_close(rp.alpha, 0.946892597097705 * pow(1019.0 / 1024.0, 100));
	/* the increase timer, 300 us after the last cut (312 us): F = 1, T = 1, BC = 0 ->
	 * additive: Rt = min(line, line + 5) = line, Rc = (Rt + Rc2) / 2 */
	dcqcn_rp_advance(&rp, &p, 312 * US - 1);
	assert_close(rp.rc_mbps, 26863.355846079);
	dcqcn_rp_advance(&rp, &p, 312 * US);
	assert_close(rp.rc_mbps, 63431.6779230395);
	assert_int_equal(rp.additive_increases, 1);
}

static void
test_nvidia_additive_and_hyper(void **state)
{
	struct dcqcn_params p;
	struct dcqcn_rp rp;
	double rc, rt;

	(void)state;
	dcqcn_params_nvidia(&p, LINE);
	dcqcn_rp_init(&rp, &p, 0);
	dcqcn_rp_on_cnp(&rp, &p, 0);
	dcqcn_rp_advance(&rp, &p, 4 * US);
	rc = rp.rc_mbps;
	rt = rp.rt_mbps;
	/* BC = 1, T = 0, F = 1: additive, Rt += 5 (capped at line), Rc = (Rt + Rc) / 2 */
	dcqcn_rp_on_bytes(&rp, &p, 32767, 5 * US);
	rt = fmin(rt + 5, LINE);
	rc = (rt + rc) / 2;
	assert_close(rp.rc_mbps, rc);
	assert_int_equal(rp.additive_increases, 1);
	/* bytes below the counter do nothing */
	dcqcn_rp_on_bytes(&rp, &p, 32766, 6 * US);
	assert_close(rp.rc_mbps, rc);
	/* one more byte: BC = 2, T = 0: still additive */
	dcqcn_rp_on_bytes(&rp, &p, 1, 7 * US);
	rc = (rt + rc) / 2;
	assert_close(rp.rc_mbps, rc);
	/* the timer at 304 us: T = 1, BC = 2: both >= F: hyper, a fixed step of HAI = 50 */
	dcqcn_rp_advance(&rp, &p, 304 * US);
	rc = (rt + rc) / 2;
	assert_int_equal(rp.hyper_increases, 1);
	assert_close(rp.rc_mbps, rc);
	/* a CNP at 305 us after a timer increase: at the cut (308 us) Rt = Rc
	 * (clamp_tgt_rate_after_time_inc) */
	dcqcn_rp_on_cnp(&rp, &p, 305 * US);
	dcqcn_rp_advance(&rp, &p, 308 * US);
	assert_close(rp.rt_mbps, rc);
	assert_true(rp.rc_mbps < rc);
	assert_int_equal(rp.t_events, 0);
	assert_int_equal(rp.bc_events, 0);
	(void)rt;
}

static void
test_byte_counter_off_stages(void **state)
{
	struct dcqcn_params p;
	struct dcqcn_rp rp;

	(void)state;
	dcqcn_params_paper(&p, LINE);
	p.rpg_byte_reset = 0;
	p.rpg_threshold = 2;
	dcqcn_rp_init(&rp, &p, 0);
	dcqcn_rp_on_cnp(&rp, &p, 0);
	dcqcn_rp_on_bytes(&rp, &p, 1000000000, 50 * US); /* counter off: nothing */
	assert_int_equal(rp.bc_events, 0);
	/* cut at 50 us; timer every 55 us: T = 1 fast, T = 2 additive, T = 3, 4 hyper */
	dcqcn_rp_advance(&rp, &p, 50 * US + 4 * 55 * US);
	assert_int_equal(rp.fast_recoveries, 1);
	assert_int_equal(rp.additive_increases, 1);
	assert_int_equal(rp.hyper_increases, 2);
}

static void
test_paper_fast_recovery_then_additive(void **state)
{
	static const double want[] = { 75000.0, 87500.0, 93750.0, 96875.0, 98437.5 };
	struct dcqcn_params p;
	struct dcqcn_rp rp;
	unsigned int i;

	(void)state;
	dcqcn_params_paper(&p, LINE);
	dcqcn_rp_init(&rp, &p, 0);
	dcqcn_rp_on_cnp(&rp, &p, 0);
	dcqcn_rp_advance(&rp, &p, 50 * US); /* the cut at the end of the 50 us period */
	assert_close(rp.rc_mbps, 50000.0); /* alpha = 1 (the first update comes at 55 us): halve */
	for (i = 0; i < 5; i++) {
		dcqcn_rp_advance(&rp, &p, 50 * US + (i + 1) * 55 * US);
		assert_close(rp.rc_mbps, want[i]);
	}
	/* F = 5: four fast recoveries, then additive (+40, capped at line rate) */
	assert_int_equal(rp.fast_recoveries, 4);
	assert_int_equal(rp.additive_increases, 1);
}

static void
test_min_rate_and_recovery_stops(void **state)
{
	struct dcqcn_params p;
	struct dcqcn_rp rp;
	unsigned int i;

	(void)state;
	dcqcn_params_paper(&p, LINE);
	dcqcn_rp_init(&rp, &p, 0);
	/* a CNP every 50 us (the monitor period) halves the rate at each boundary (alpha stays 1:
	 * every 55 us alpha period holds a CNP) down to the floor */
	for (i = 0; i < 30; i++)
		dcqcn_rp_on_cnp(&rp, &p, i * 50 * US);
	dcqcn_rp_advance(&rp, &p, 30 * 50 * US);
	assert_close(rp.rc_mbps, 1.0);
	assert_close(rp.alpha, 1.0);
	assert_int_equal(rp.decreases, 30);
	/* without CNPs it climbs back to line rate, and stops there */
	dcqcn_rp_advance(&rp, &p, 1000000 * US);
	assert_close(rp.rc_mbps, LINE);
	assert_true(rp.next_timer_ns == UINT64_MAX);
}

static void
test_np_pacing(void **state)
{
	struct dcqcn_params p;
	uint64_t last = UINT64_MAX;

	(void)state;
	dcqcn_params_nvidia(&p, LINE);
	assert_true(dcqcn_np_may_send(&last, &p, 100));
	assert_false(dcqcn_np_may_send(&last, &p, 100 + 3999));
	assert_true(dcqcn_np_may_send(&last, &p, 100 + 4000));
	assert_int_equal(dcqcn_params_by_name(&p, "paper", LINE), 0);
	assert_int_equal(p.min_time_between_cnps_ns, 50000);
	assert_int_not_equal(dcqcn_params_by_name(&p, "bogus", LINE), 0);
}

/*
 * The independent reference: an event-queue simulator in the shape of HPCC's ns-3 "Mellanox
 * version" (rdma-hw.cc). Three kinds of scheduled events, as there: the alpha update
 * (UpdateAlphaMlx, every alpha period from the first CNP, forever), the rate-decrease check
 * (CheckRateDecreaseMlx, every monitor period from the first CNP, cutting only when a CNP
 * arrived since the last check) and the rate-increase timer (RateIncEventTimerMlx, re-armed
 * at each cut). A CNP only sets the two "CNP arrived" bits (cnp_received_mlx). Where HPCC
 * and the documented rules differ, the documented rules are kept: alpha starts at
 * initial_alpha (HPCC: 1), a decrease keeps at least min_dec_fac, the increase stage is
 * decided after counting the event (HPCC decides before), and same-instant events run alpha
 * update, decrease check, timer (HPCC: a 1 ns offset puts the decrease after the alpha
 * update). Time in ns; events kept in a small array and the earliest taken each step.
 */
enum ref_ev { REF_ALPHA, REF_DECREASE, REF_TIMER, REF_NEV };

struct ref_qp {
	double rate, target, alpha;
	int first_cnp;
	int alpha_cnp_arrived, decrease_cnp_arrived;
	uint32_t time_stage;
	uint64_t at[REF_NEV]; /* UINT64_MAX: not scheduled */
	unsigned int decreases;
};

static void
ref_init(struct ref_qp *q)
{
	unsigned int i;

	q->rate = LINE;
	q->target = LINE;
	q->alpha = 1;
	q->first_cnp = 1;
	q->alpha_cnp_arrived = 0;
	q->decrease_cnp_arrived = 0;
	q->time_stage = 0;
	q->decreases = 0;
	for (i = 0; i < REF_NEV; i++)
		q->at[i] = UINT64_MAX;
}

static void
ref_fire(struct ref_qp *q, const struct dcqcn_params *p, enum ref_ev ev)
{
	uint64_t now = q->at[ev];

	if (ev == REF_ALPHA) {
		if (q->alpha_cnp_arrived)
			q->alpha = (1 - p->g) * q->alpha + p->g;
		else
			q->alpha = (1 - p->g) * q->alpha;
		q->alpha_cnp_arrived = 0;
		q->at[REF_ALPHA] = now + p->alpha_period_ns;
	} else if (ev == REF_DECREASE) {
		q->at[REF_DECREASE] = now + p->rate_reduce_monitor_period_ns;
		if (q->decrease_cnp_arrived) {
			double keep = q->rate * (1 - p->rpg_min_dec_fac_pct / 100.0);

			if (q->decreases == 0 || p->clamp_tgt_rate ||
			    (p->clamp_tgt_rate_after_time_inc && q->time_stage != 0))
				q->target = q->rate;
			q->rate = fmax(p->rpg_min_rate_mbps, fmax(keep, q->rate * (1 - q->alpha / 2)));
			q->time_stage = 0;
			q->decrease_cnp_arrived = 0;
			q->at[REF_TIMER] = now + p->rpg_time_reset_ns;
			q->decreases++;
		}
	} else {
		q->at[REF_TIMER] = now + p->rpg_time_reset_ns;
		q->time_stage++;
		if (q->time_stage < p->rpg_threshold) {
			/* fast recovery */
		} else if (q->time_stage == p->rpg_threshold) {
			q->target = fmin(q->target + p->rpg_ai_rate_mbps, LINE);
		} else {
			q->target = fmin(q->target + p->rpg_hai_rate_mbps, LINE);
		}
		q->rate = q->rate / 2 + q->target / 2;
	}
}

/* Run every event at or before t, earliest first, ties in enum order. */
static void
ref_run_to(struct ref_qp *q, const struct dcqcn_params *p, uint64_t t)
{
	for (;;) {
		int best = -1, i;

		for (i = 0; i < REF_NEV; i++)
			if (q->at[i] <= t && (best < 0 || q->at[i] < q->at[best]))
				best = i;
		if (best < 0)
			return;
		ref_fire(q, p, (enum ref_ev)best);
	}
}

static void
ref_cnp(struct ref_qp *q, const struct dcqcn_params *p, uint64_t t)
{
	ref_run_to(q, p, t);
	q->alpha_cnp_arrived = 1;
	q->decrease_cnp_arrived = 1;
	if (q->first_cnp) {
		q->alpha = p->initial_alpha;
		q->alpha_cnp_arrived = 0;
		q->at[REF_ALPHA] = t + p->alpha_period_ns;
		q->at[REF_DECREASE] = t + p->rate_reduce_monitor_period_ns;
		q->first_cnp = 0;
	}
}

/*
 * Feed the same CNP times to both; sample Rc every 1 us up to end_ns (so the rate after each
 * CNP's cut and through the recovery); both must cut the same number of times and stay within
 * 2% of each other (they implement the same rules, so in practice they agree to rounding).
 */
static void
compare_with_reference(const char *name, const uint64_t *cnps, unsigned int n, uint64_t end_ns,
		       unsigned int want_decreases)
{
	struct dcqcn_params p;
	struct dcqcn_rp rp;
	struct ref_qp q;
	double worst = 0;
	unsigned int i = 0;
	uint64_t t;

	dcqcn_params_nvidia(&p, LINE);
	p.rpg_byte_reset = 0; /* byte counter off, as in HPCC's model */
	dcqcn_rp_init(&rp, &p, 0);
	ref_init(&q);
	for (t = 0; t <= end_ns; t += US) {
		double d;

		while (i < n && cnps[i] <= t) {
			dcqcn_rp_on_cnp(&rp, &p, cnps[i]);
			ref_cnp(&q, &p, cnps[i]);
			i++;
		}
		dcqcn_rp_advance(&rp, &p, t);
		ref_run_to(&q, &p, t);
		d = fabs(rp.rc_mbps - q.rate) / q.rate;
		if (d > worst)
			worst = d;
		if (d > 0.02)
			fail_msg("%s: at %lu ns Rc %.3f, reference %.3f", name, (unsigned long)t,
				 rp.rc_mbps, q.rate);
	}
	print_message("%s: %u CNPs, %lu decreases (reference %u), worst rate difference %.2g\n",
		      name, n, (unsigned long)rp.decreases, q.decreases, worst);
	assert_int_equal(rp.decreases, q.decreases);
	assert_int_equal(rp.decreases, want_decreases);
}

static void
test_reference_single_cnps(void **state)
{
	uint64_t c[5];
	unsigned int i;

	(void)state;
	for (i = 0; i < 5; i++)
		c[i] = 100 * US + i * 2000 * US; /* far apart: full recoveries between */
	compare_with_reference("single CNPs", c, 5, 12000 * US, 5);
}

static void
test_reference_trains(void **state)
{
	static uint64_t c[400];
	unsigned int i;

	(void)state;
	/* 50 us apart (longer than the 4 us period: one cut each) */
	for (i = 0; i < 20; i++)
		c[i] = 10 * US + i * 50 * US;
	compare_with_reference("50 us train", c, 20, 3000 * US, 20);
	/* 4 us: one per period, one cut each */
	for (i = 0; i < 100; i++)
		c[i] = 10 * US + i * 4 * US;
	compare_with_reference("4 us train", c, 100, 2000 * US, 100);
	/* 2 us: two per period, one cut per period */
	for (i = 0; i < 200; i++)
		c[i] = 10 * US + i * 2 * US;
	compare_with_reference("2 us train", c, 200, 2000 * US, 100);
	/* 1.5 us, not aligned to the grid */
	for (i = 0; i < 400; i++)
		c[i] = 10 * US + i * 1500;
	compare_with_reference("1.5 us train", c, 400, 2000 * US, 150);
}

static void
test_reference_inside_monitor_period(void **state)
{
	/* first CNP at 10 us (grid 10, 14, 18, ...): 11.5 and 13 us in the first period, 16.2 in
	 * the second, 30 and 31.9 us in [30, 34): three cuts, at 14, 18 and 34 us */
	static const uint64_t c[] = { 10 * US, 11500, 13 * US, 16200, 30 * US, 31900 };

	(void)state;
	compare_with_reference("inside a period", c, 6, 1000 * US, 3);
}

/* The lowest rate is kept at the cut itself: a caller that advances late (a descheduled
 * sender) sees the rate already recovered, min_rc_mbps still has the cut. */
static void
test_min_rate_seen_at_the_cut(void **state)
{
	struct dcqcn_params p;
	struct dcqcn_rp rp, early;
	uint64_t t;

	(void)state;
	dcqcn_params_nvidia(&p, LINE);
	dcqcn_rp_init(&rp, &p, 0);
	assert_close(rp.min_rc_mbps, LINE);
	assert_true(dcqcn_rp_on_cnp(&rp, &p, 0));
	early = rp;
	dcqcn_rp_advance(&early, &p, 4 * US);
	assert_int_equal(early.decreases, 1);
	/* one late call, 2 ms on: the cut and six timer increases (every 300 us) in it */
	dcqcn_rp_advance(&rp, &p, 2000 * US);
	assert_int_equal(rp.decreases, 1);
	assert_true(rp.rc_mbps > early.rc_mbps * 1.5);
	assert_close(rp.min_rc_mbps, early.rc_mbps);
	/* later cuts lower it, recoveries never raise it */
	for (t = 2000 * US; t < 2200 * US; t += 5 * US) {
		dcqcn_rp_advance(&rp, &p, t);
		dcqcn_rp_on_cnp(&rp, &p, t);
	}
	dcqcn_rp_advance(&rp, &p, 5000 * US);
	assert_true(rp.min_rc_mbps < early.rc_mbps && rp.min_rc_mbps < rp.rc_mbps);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_nvidia_first_cnp_cut_at_next_period),
		cmocka_unit_test(test_min_rate_seen_at_the_cut),
		cmocka_unit_test(test_nvidia_cnp_inside_monitor_period),
		cmocka_unit_test(test_nvidia_alpha_grid_and_second_cut),
		cmocka_unit_test(test_nvidia_additive_and_hyper),
		cmocka_unit_test(test_byte_counter_off_stages),
		cmocka_unit_test(test_paper_fast_recovery_then_additive),
		cmocka_unit_test(test_min_rate_and_recovery_stops),
		cmocka_unit_test(test_np_pacing),
		cmocka_unit_test(test_reference_single_cnps),
		cmocka_unit_test(test_reference_trains),
		cmocka_unit_test(test_reference_inside_monitor_period),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
