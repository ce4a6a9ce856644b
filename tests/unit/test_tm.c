/* SPDX-License-Identifier: BSD-3-Clause */
/* The shaper: exact departure times for known sizes and rates, byte limits, rate changes,
 * propagation delay. */
#include "test_common.h"
#include "lib/tm/emu_tm.h"

static struct rte_mempool *pool;
static struct emu_rng rng;
static const uint8_t mac_a[6] = { 2, 0, 0, 0, 0, 0xa };
static const uint8_t mac_b[6] = { 2, 0, 0, 0, 0, 0xb };

static struct emu_tm *
tm_one_port(uint64_t rate_bps, uint64_t limit_bytes, uint64_t delay_ns)
{
	struct emu_tm_cfg cfg;
	struct emu_err err;
	struct emu_tm *tm;

	emu_tm_cfg_default(&cfg, 1);
	cfg.ports[0].rate_bps = rate_bps;
	cfg.ports[0].limit_bytes = limit_bytes;
	cfg.ports[0].queue_limit_bytes = limit_bytes;
	cfg.ports[0].delay_ns = delay_ns;
	tm = emu_tm_create(&cfg, &err);
	assert_non_null(tm);
	return tm;
}

/* Dequeue everything by time @p until, stepping to each next event, recording departures. */
static unsigned int
drain(struct emu_tm *tm, uint64_t until, uint64_t *deps, uint32_t *seqs, unsigned int max)
{
	struct rte_mbuf *out[32];
	unsigned int got = 0;
	uint64_t t;
	uint16_t n, i;

	while ((t = emu_tm_next_event_ns(tm)) <= until) {
		n = emu_tm_dequeue(tm, 0, t, out, 32, &rng);
		for (i = 0; i < n; i++) {
			assert_true(got < max);
			deps[got] = emu_meta(out[i])->ts_ns;
			seqs[got] = test_frame_seq(out[i]);
			got++;
			rte_pktmbuf_free(out[i]);
		}
	}
	return got;
}

static void
test_wire_time(void **state)
{
	(void)state;
	/* 64 B frame at 10 Gb/s: (64 + 24) * 8 = 704 bits = 70.4 ns; min frame pads to 60. */
	assert_int_equal(emu_tm_wire_ps(64, 10000000000ULL), 70400);
	assert_int_equal(emu_tm_wire_ps(40, 10000000000ULL), emu_tm_wire_ps(60, 10000000000ULL));
	/* 1518 B at 100 Gb/s: 1542 * 8 / 100 = 123.36 ns */
	assert_int_equal(emu_tm_wire_ps(1518, 100000000000ULL), 123360);
	/* 4 KB RoCE frame (4096 + 58 headers) at 25 Gb/s: 4178 * 8 / 25 = 1336.96 ns */
	assert_int_equal(emu_tm_wire_ps(4154, 25000000000ULL), 1336960);
}

static void
test_back_to_back(void **state)
{
	struct emu_tm *tm = tm_one_port(10000000000ULL, 1 << 20, 0);
	uint64_t deps[16];
	uint32_t seqs[16];
	unsigned int i, n;

	(void)state;
	/* Ten 1000-byte frames arriving together at t = 1000 ns: each takes 819.2 ns. */
	for (i = 0; i < 10; i++)
		assert_true(emu_tm_enqueue(tm, 0, test_frame(pool, mac_b, mac_a, 1000, i), 1000, &rng));
	assert_int_equal(emu_tm_held(tm), 10);
	n = drain(tm, UINT64_MAX - 1, deps, seqs, 16);
	assert_int_equal(n, 10);
	for (i = 0; i < 10; i++) {
		/* finish_k = 1000 + (k+1) * 819.2 ns, rounded up to the ns */
		uint64_t exact_ps = 1000000 + (uint64_t)(i + 1) * 819200;

		assert_int_equal(seqs[i], i);
		assert_int_equal(deps[i], (exact_ps + 999) / 1000);
	}
	assert_int_equal(emu_tm_held(tm), 0);
	emu_tm_free(tm);
}

static void
test_idle_gap(void **state)
{
	struct emu_tm *tm = tm_one_port(1000000000ULL, 1 << 20, 0); /* 1 Gb/s */
	uint64_t deps[4];
	uint32_t seqs[4];

	(void)state;
	/* 100 B: 124 * 8 = 992 ns at 1 Gb/s. Second frame arrives after the link went idle. */
	emu_tm_enqueue(tm, 0, test_frame(pool, mac_b, mac_a, 100, 0), 0, &rng);
	assert_int_equal(drain(tm, 5000, deps, seqs, 4), 1);
	emu_tm_enqueue(tm, 0, test_frame(pool, mac_b, mac_a, 100, 1), 5000, &rng);
	emu_tm_enqueue(tm, 0, test_frame(pool, mac_b, mac_a, 100, 2), 5100, &rng);
	assert_int_equal(drain(tm, UINT64_MAX - 1, deps + 1, seqs + 1, 3), 2);
	assert_int_equal(deps[0], 992);
	assert_int_equal(deps[1], 5992);  /* max(now, prev departure) + wire time */
	assert_int_equal(deps[2], 6984);  /* queued behind frame 1 */
	emu_tm_free(tm);
}

static void
test_byte_limit(void **state)
{
	struct emu_tm *tm = tm_one_port(1000000000ULL, 3000, 0);
	uint64_t deps[8];
	uint32_t seqs[8];

	(void)state;
	assert_true(emu_tm_enqueue(tm, 0, test_frame(pool, mac_b, mac_a, 1000, 0), 0, &rng));
	assert_true(emu_tm_enqueue(tm, 0, test_frame(pool, mac_b, mac_a, 1000, 1), 0, &rng));
	assert_true(emu_tm_enqueue(tm, 0, test_frame(pool, mac_b, mac_a, 1000, 2), 0, &rng));
	/* The first frame started serialising at t=0 when dequeue ran; before that all three
	 * count: the fourth exceeds 3000 bytes. */
	assert_false(emu_tm_enqueue(tm, 0, test_frame(pool, mac_b, mac_a, 1000, 3), 0, &rng));
	assert_int_equal(emu_tm_port_ctrs(tm, 0)[EMU_TM_CTR_DROP_QUEUE_FULL], 1);
	assert_int_equal(drain(tm, UINT64_MAX - 1, deps, seqs, 8), 3);
	assert_int_equal(emu_tm_port_ctrs(tm, 0)[EMU_TM_CTR_DEQ_PKTS], 3);
	assert_int_equal(emu_tm_port_ctrs(tm, 0)[EMU_TM_CTR_MAX_QUEUE_BYTES], 3000);
	emu_tm_free(tm);
}

static void
test_delay_and_rate_change(void **state)
{
	struct emu_tm *tm = tm_one_port(10000000000ULL, 1 << 20, 5000);
	json_t *v = json_real(2.5);
	struct emu_err err;
	uint64_t deps[4];
	uint32_t seqs[4];

	(void)state;
	emu_tm_enqueue(tm, 0, test_frame(pool, mac_b, mac_a, 1226, 0), 0, &rng); /* 1250 B on the wire */
	assert_int_equal(drain(tm, UINT64_MAX - 1, deps, seqs, 4), 1);
	assert_int_equal(deps[0], 1000 + 5000); /* 1 us at 10G plus 5 us of cable */
	assert_int_equal(emu_tm_set(tm, 0, "rate_gbps", v, false, "x", &err), 0);
	assert_int_equal(emu_tm_set(tm, 0, "rate_gbps", v, true, "x", &err), 0);
	emu_tm_enqueue(tm, 0, test_frame(pool, mac_b, mac_a, 1226, 1), 10000, &rng);
	assert_int_equal(drain(tm, UINT64_MAX - 1, deps, seqs, 4), 1);
	assert_int_equal(deps[0], 10000 + 4000 + 5000); /* 4 us at 2.5G */
	json_decref(v);
	v = json_integer(-5);
	assert_int_not_equal(emu_tm_set(tm, 0, "rate_gbps", v, false, "tm.p0.rate_gbps", &err), 0);
	assert_string_equal(err.msg, "tm.p0.rate_gbps: must be >= 1e-06, got -5");
	json_decref(v);
	emu_tm_free(tm);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_wire_time),
		cmocka_unit_test(test_back_to_back),
		cmocka_unit_test(test_idle_gap),
		cmocka_unit_test(test_byte_limit),
		cmocka_unit_test(test_delay_and_rate_change),
	};

	pool = test_eal_pool("test_tm", 4096);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
