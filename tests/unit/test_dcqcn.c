/* SPDX-License-Identifier: BSD-3-Clause */
/* The DCQCN model against rate trajectories computed by hand (independently, in Python, from
 * PROTOCOL.md's formulas): NVIDIA defaults and the paper's parameter set. */
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
	if (fabs(got - want) > 1e-6 * fabs(want) + 1e-9)
		fail_msg("got %.9f, want %.9f", got, want);
}

static void
test_nvidia_first_cnp_and_monitor_period(void **state)
{
	struct dcqcn_params p;
	struct dcqcn_rp rp;

	(void)state;
	dcqcn_params_nvidia(&p, LINE);
	dcqcn_rp_init(&rp, &p, 0);
	assert_true(dcqcn_rp_on_cnp(&rp, &p, 0));
	/* alpha = 1023/1024: Rc = 100000 (1 - 1023/2048) */
	assert_close(rp.rc_mbps, 50048.828125);
	assert_close(rp.rt_mbps, LINE);
	/* 2 us later: inside the 4 us monitor period, no decrease */
	assert_false(dcqcn_rp_on_cnp(&rp, &p, 2 * US));
	assert_close(rp.rc_mbps, 50048.828125);
	assert_int_equal(rp.cnps_ignored, 1);
	/* 10 us: alpha decayed over 10 periods, then (1-g) alpha + g; no timer increase yet, so
	 * Rt stays (clamp_tgt_rate_after_time_inc) */
	assert_true(dcqcn_rp_on_cnp(&rp, &p, 10 * US));
	assert_close(rp.alpha, 0.951538782559421);
	assert_close(rp.rc_mbps, 26237.127633705895);
	assert_close(rp.rt_mbps, LINE);
	/* the rate-increase timer (300 us after the last CNP): F = 1, so additive at once */
	dcqcn_rp_advance(&rp, &p, 310 * US);
	assert_close(rp.rc_mbps, 63118.56381685295);
	assert_int_equal(rp.additive_increases, 1);
}

static void
test_nvidia_additive_and_hyper(void **state)
{
	struct dcqcn_params p;
	struct dcqcn_rp rp;

	(void)state;
	dcqcn_params_nvidia(&p, LINE);
	dcqcn_rp_init(&rp, &p, 0);
	dcqcn_rp_on_cnp(&rp, &p, 0);
	dcqcn_rp_advance(&rp, &p, 300 * US); /* timer: T = 1, additive (Rt capped at line) */
	assert_close(rp.rc_mbps, 75024.4140625);
	assert_true(dcqcn_rp_on_cnp(&rp, &p, 301 * US)); /* after a timer increase: Rt = Rc */
	assert_close(rp.rt_mbps, 75024.4140625);
	assert_close(rp.alpha, 0.23270307177994887);
	assert_close(rp.rc_mbps, 66295.20825708272);
	dcqcn_rp_on_bytes(&rp, &p, 32767, 302 * US); /* BC = 1, T = 0: additive, +5 */
	assert_close(rp.rt_mbps, 75029.4140625);
	assert_close(rp.rc_mbps, 70662.31115979137);
	dcqcn_rp_advance(&rp, &p, 601 * US); /* T = 1, BC = 1: hyper, +50 (min - F + 1 = 1) */
	assert_close(rp.rt_mbps, 75079.4140625);
	assert_close(rp.rc_mbps, 72870.86261114568);
	dcqcn_rp_on_bytes(&rp, &p, 32767, 602 * US); /* BC = 2, T = 1: hyper, +50 */
	assert_close(rp.rc_mbps, 74000.13833682284);
	assert_int_equal(rp.hyper_increases, 2);
	assert_int_equal(rp.additive_increases, 2);
	/* bytes below the counter do nothing */
	dcqcn_rp_on_bytes(&rp, &p, 32766, 603 * US);
	assert_close(rp.rc_mbps, 74000.13833682284);
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
	assert_close(rp.rc_mbps, 50000.0); /* alpha = 1: halve */
	for (i = 0; i < 5; i++) {
		dcqcn_rp_advance(&rp, &p, (i + 1) * 55 * US);
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
	/* a CNP every 50 us (the monitor period) halves the rate each time down to the floor */
	for (i = 0; i < 30; i++)
		dcqcn_rp_on_cnp(&rp, &p, i * 50 * US);
	assert_close(rp.rc_mbps, 1.0);
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

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_nvidia_first_cnp_and_monitor_period),
		cmocka_unit_test(test_nvidia_additive_and_hyper),
		cmocka_unit_test(test_paper_fast_recovery_then_additive),
		cmocka_unit_test(test_min_rate_and_recovery_stops),
		cmocka_unit_test(test_np_pacing),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
