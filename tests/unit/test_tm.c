/* SPDX-License-Identifier: BSD-3-Clause */
/* The TM on its own: the shaper (exact departure times for known sizes and rates, byte limits,
 * rate changes, propagation delay, runs with packets not yet arrived), strict priority and
 * DWRR, fan-in, PFC (generation, thresholds, pauses received, storms, watchdog), the shared
 * and static buffer with headroom, RED ECN at enqueue and dequeue, links down and up. The
 * TM's fast entries against its general steps are in test_tm_same.c.
 *
 * Over 600 lines (about 1000): some twenty short cases, each an exact check of one behaviour
 * on hand-made frames, sharing the frame and drain helpers here; split by subject they would
 * each repeat those. */
#include "test_common.h"
#include <inttypes.h>
#include <math.h>

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
	assert_int_equal(emu_tm_set(tm, 0, "rate_gbps", v, false, 0, &rng, "x", &err), 0);
	assert_int_equal(emu_tm_set(tm, 0, "rate_gbps", v, true, 10000, &rng, "x", &err), 0);
	emu_tm_enqueue(tm, 0, test_frame(pool, mac_b, mac_a, 1226, 1), 10000, &rng);
	assert_int_equal(drain(tm, UINT64_MAX - 1, deps, seqs, 4), 1);
	assert_int_equal(deps[0], 10000 + 4000 + 5000); /* 4 us at 2.5G */
	json_decref(v);
	v = json_integer(-5);
	assert_int_not_equal(emu_tm_set(tm, 0, "rate_gbps", v, false, 0, &rng, "tm.p0.rate_gbps",
					&err), 0);
	assert_string_equal(err.msg, "tm.p0.rate_gbps: must be >= 1e-06, got -5");
	json_decref(v);
	emu_tm_free(tm);
}

/* ---- TM v2: priorities, buffer, ECN, PFC ---- */

#include "tests/unit/test_tm_common.h"

static struct rte_mbuf *
frame_prio(uint32_t len, uint32_t seq, uint8_t prio, uint16_t in_port)
{
	struct rte_mbuf *m = test_frame(pool, mac_b, mac_a, len, seq);

	emu_meta(m)->prio = prio;
	emu_meta(m)->in_port = in_port;
	return m;
}

/* Dequeue port @p port at @p t, recording seq and departure, freeing the frames. */
static unsigned int
take(struct emu_tm *tm, uint16_t port, uint64_t t, uint32_t *seqs, uint64_t *deps, unsigned int got,
     unsigned int max)
{
	struct rte_mbuf *out[32];
	uint16_t n, i;

	while ((n = emu_tm_dequeue(tm, port, t, out, 32, &rng)) > 0)
		for (i = 0; i < n; i++) {
			if (got < max) {
				if (seqs != NULL)
					seqs[got] = test_frame_seq(out[i]);
				if (deps != NULL)
					deps[got] = emu_meta(out[i])->ts_ns;
			}
			got++;
			rte_pktmbuf_free(out[i]);
		}
	return got;
}

static unsigned int
drain_port(struct emu_tm *tm, uint16_t port, uint32_t *seqs, uint64_t *deps, unsigned int max)
{
	unsigned int got = 0;
	uint64_t t;

	while ((t = emu_tm_next_event_ns(tm)) != UINT64_MAX)
		got = take(tm, port, t, seqs, deps, got, max);
	return got;
}

/*
 * Runs of alike packets (the enqueue and advance loops' inner loops take them) with a packet
 * that has not arrived yet behind them: four 1000-byte frames at t = 0 and four at t = 10 us
 * to a 10 Gb/s port with 3 us of propagation delay, through the burst entry. At 5 us the first
 * four have started (two have left, two are on the line), the second four are still queued
 * (none started before it arrived), and they leave 3 us after their own wire times from
 * 10 us on. The same without the delay (the first four have left by 5 us: each start due,
 * straight to the dequeue).
 */
static void
test_runs_future_arrival(void **state)
{
	uint64_t delay;

	(void)state;
	for (delay = 0; delay <= 3000; delay += 3000) {
		struct emu_tm *tm = tm_one_port(10000000000ULL, 1 << 20, delay);
		struct emu_tm_prio_stats ps;
		struct rte_mbuf *pkts[4];
		uint64_t deps[8];
		uint32_t seqs[8];
		unsigned int i, n;

		for (i = 0; i < 8; i++) {
			pkts[i % 4] = test_frame(pool, mac_b, mac_a, 1000, i);
			emu_meta(pkts[i % 4])->in_port = 1;
			if (i % 4 == 3)
				assert_int_equal(emu_tm_enqueue_burst(tm, 0, pkts, 4,
								      i < 4 ? 0 : 10000, &rng), 4);
		}
		n = take(tm, 0, 5000, seqs, deps, 0, 8);
		/* finish_k = (k + 1) x 819.2 ns, rounded up, + delay */
		assert_int_equal(n, delay == 0 ? 4 : 2);
		emu_tm_prio_stats(tm, 0, 0, 5000, &ps);
		assert_int_equal(ps.queue_pkts, 4);
		assert_int_equal(ps.queue_bytes, 4 * 1000);
		n = take(tm, 0, 50000, seqs, deps, n, 8);
		assert_int_equal(n, 8);
		for (i = 0; i < 8; i++) {
			uint64_t exact_ps = (i < 4 ? 0 : 10000000) + (uint64_t)(i % 4 + 1) * 819200;

			assert_int_equal(seqs[i], i);
			assert_int_equal(deps[i], (exact_ps + 999) / 1000 + delay);
		}
		emu_tm_free(tm);
	}
}

static void
test_strict_priority(void **state)
{
	struct emu_tm *tm = tm_ports(1, NULL);
	static const uint8_t prios[6] = { 0, 3, 0, 6, 3, 1 };
	static const uint32_t want[6] = { 3, 1, 4, 5, 0, 2 };
	uint32_t seqs[8];
	unsigned int i;

	(void)state;
	/* All arrive at t = 0, before the link picks: highest priority first, FIFO within one. */
	for (i = 0; i < 6; i++)
		assert_true(emu_tm_enqueue(tm, 0, frame_prio(100, i, prios[i], 0), 0, &rng));
	assert_int_equal(drain_port(tm, 0, seqs, NULL, 8), 6);
	for (i = 0; i < 6; i++)
		assert_int_equal(seqs[i], want[i]);
	emu_tm_free(tm);
}

static void
dwrr_1_3(struct emu_tm_cfg *cfg)
{
	cfg->ports[0].scheduler = EMU_TM_SCHED_DWRR;
	cfg->ports[0].weights[0] = 1;
	cfg->ports[0].weights[1] = 3;
}

static void
test_dwrr_weights(void **state)
{
	struct emu_tm *tm = tm_ports(1, dwrr_1_3);
	uint32_t seqs[32];
	unsigned int i, n0 = 0, n1 = 0;

	(void)state;
	/* 1000-byte frames, quantum 1024 x weight: queue 0 sends 1, queue 1 sends 3 per round. */
	for (i = 0; i < 16; i++) {
		assert_true(emu_tm_enqueue(tm, 0, frame_prio(1000, i, 0, 0), 0, &rng));
		assert_true(emu_tm_enqueue(tm, 0, frame_prio(1000, 100 + i, 1, 0), 0, &rng));
	}
	assert_int_equal(drain_port(tm, 0, seqs, NULL, 32), 32);
	for (i = 0; i < 16; i++) {
		/* rounds: 0, 1, 1, 1 */
		if (i % 4 == 0)
			assert_int_equal(seqs[i], n0++);
		else
			assert_int_equal(seqs[i], 100 + n1++);
	}
	emu_tm_free(tm);
}

static void
test_fan_in_2to1_growth(void **state)
{
	struct emu_tm *tm = tm_ports(3, NULL);
	struct emu_tm_prio_stats ps;
	unsigned int k, got = 0;

	(void)state;
	/* Ports 0 and 1 each deliver a frame per wire time (line rate) to port 2 at the same
	 * rate: by t = k us, 2(k+1) arrived and k+1 started, so k+1 frames wait: the queue grows
	 * by exactly one frame per frame time, the excess rate. */
	for (k = 0; k < 1000; k++) {
		uint64_t t = (uint64_t)k * 1000;

		assert_true(emu_tm_enqueue(tm, 2, frame_prio(LEN_1US, 2 * k, 0, 0), t, &rng));
		assert_true(emu_tm_enqueue(tm, 2, frame_prio(LEN_1US, 2 * k + 1, 0, 1), t, &rng));
		got = take(tm, 2, t, NULL, NULL, got, 0);
		emu_tm_prio_stats(tm, 2, 0, t, &ps);
		assert_int_equal(ps.queue_bytes, (uint64_t)(k + 1) * LEN_1US);
		assert_int_equal(got, k); /* departures at (j + 1) us */
	}
	assert_int_equal(emu_tm_port_ctrs(tm, 2)[EMU_TM_CTR_MAX_QUEUE_BYTES],
			 1000ULL * LEN_1US + LEN_1US); /* both frames queued before the pick */
	assert_int_equal(drain_port(tm, 2, NULL, NULL, 0), 2000 - got);
	emu_tm_free(tm);
}

static void
pfc_small(struct emu_tm_cfg *cfg)
{
	unsigned int i;

	for (i = 0; i < 2; i++) {
		cfg->ports[i].pfc.enabled = true;
		cfg->ports[i].pfc.xoff_bytes = 10000;
		cfg->ports[i].pfc.xon_bytes = 5000;
		cfg->ports[i].pfc.quanta = 100; /* 100 x 512 bits at 8.176 Gb/s = 6262.3 -> 6263 ns */
	}
}

static void
test_pfc_generation_thresholds(void **state)
{
	struct emu_tm *tm = tm_ports(3, pfc_small);
	struct emu_tm_pfc_frame f[4];
	struct emu_tm_prio_stats ps;
	uint64_t xoff_t[2] = { 0, 0 }, last_t[2] = { 0, 0 }, xon_t[2] = { 0, 0 }, t;
	unsigned int k, n, i, refreshes[2] = { 0, 0 }, got = 0;
	bool sending[2] = { true, true };

	(void)state;
	assert_int_equal(emu_tm_pause_ns(100, R_1US), 6263);
	assert_int_equal(emu_tm_pause_ns(0xFFFF, 100000000000ULL), 335540); /* 335.5 us */
	/* 2:1 fan-in of lossless priority 3; each sender stops at its first XOFF. */
	for (k = 0; sending[0] || sending[1]; k++) {
		t = (uint64_t)k * 1000;
		for (i = 0; i < 2; i++) {
			uint64_t before;

			if (!sending[i])
				continue;
			emu_tm_prio_stats(tm, (uint16_t)i, 3, t, &ps);
			before = ps.ingress_bytes;
			assert_true(emu_tm_enqueue(tm, 2, frame_prio(LEN_1US, 2 * k + i, 3,
								     (uint16_t)i), t, &rng));
			n = emu_tm_pfc_collect(tm, t, f, 4);
			if (n == 0)
				continue;
			/* XOFF leaves exactly when this port's held bytes cross 10000 */
			emu_tm_prio_stats(tm, (uint16_t)i, 3, t, &ps);
			assert_int_equal(n, 1);
			assert_int_equal(f[0].port, i);
			assert_int_equal(f[0].vector, 1u << 3);
			assert_int_equal(f[0].quanta[3], 100);
			assert_true(before <= 10000 && ps.ingress_bytes > 10000);
			assert_true(ps.xoff);
			xoff_t[i] = last_t[i] = t;
			sending[i] = false;
		}
		got = take(tm, 2, t, NULL, NULL, got, 0);
	}
	/* Drain: refresh at half the pause time while above XON, one XON below it. */
	while ((t = emu_tm_next_event_ns(tm)) != UINT64_MAX) {
		got = take(tm, 2, t, NULL, NULL, got, 0);
		n = emu_tm_pfc_collect(tm, t, f, 4);
		for (k = 0; k < n; k++) {
			i = f[k].port;
			emu_tm_prio_stats(tm, (uint16_t)i, 3, t, &ps);
			assert_int_equal(f[k].vector, 1u << 3);
			if (f[k].quanta[3] != 0) {
				assert_int_equal(t, last_t[i] + 6263 / 2);
				assert_true(ps.ingress_bytes >= 5000);
				last_t[i] = t;
				refreshes[i]++;
			} else {
				assert_true(ps.ingress_bytes < 5000);
				assert_int_equal(xon_t[i], 0);
				xon_t[i] = t;
			}
		}
	}
	for (i = 0; i < 2; i++) {
		const uint64_t *c = emu_tm_port_ctrs(tm, (uint16_t)i);

		assert_true(xon_t[i] > xoff_t[i]);
		assert_true(refreshes[i] >= 1);
		assert_int_equal(c[EMU_TM_CTR_PFC_TX_XOFF], 1 + refreshes[i]);
		assert_int_equal(c[EMU_TM_CTR_PFC_TX_XON], 1);
		assert_int_equal(c[EMU_TM_CTR_PFC_QUANTA_SENT], 100 * (1 + refreshes[i]));
		emu_tm_prio_stats(tm, (uint16_t)i, 3, UINT64_MAX / 2, &ps);
		assert_int_equal(ps.xoff_ns, xon_t[i] - xoff_t[i]);
		assert_int_equal(ps.ingress_bytes, 0);
	}
	assert_int_equal(got, emu_tm_port_ctrs(tm, 2)[EMU_TM_CTR_ENQ_PKTS]);
	assert_int_equal(emu_tm_port_ctrs(tm, 2)[EMU_TM_CTR_DROP_QUEUE_FULL], 0);
	emu_tm_free(tm);
}

static void
test_pause_rx(void **state)
{
	struct emu_tm *tm = tm_ports(1, NULL);
	uint16_t quanta[8] = { 0 };
	struct emu_tm_prio_stats ps;
	uint32_t seqs[16];
	uint64_t deps[16];
	unsigned int i;

	(void)state;
	/* PFC for priority 3 only, 100 quanta = 6263 ns at this rate, at t = 0. */
	quanta[3] = 100;
	quanta[0] = 7; /* not enabled: ignored */
	emu_tm_pause_rx(tm, 0, 0, EMU_TM_MACCTL_OPCODE_PFC, 1u << 3, quanta, &rng);
	for (i = 0; i < 3; i++) {
		assert_true(emu_tm_enqueue(tm, 0, frame_prio(LEN_1US, i, 3, 0), 0, &rng));
		assert_true(emu_tm_enqueue(tm, 0, frame_prio(LEN_1US, 10 + i, 0, 0), 0, &rng));
	}
	emu_tm_prio_stats(tm, 0, 3, 0, &ps);
	assert_true(ps.paused);
	assert_int_equal(drain_port(tm, 0, seqs, deps, 16), 6);
	for (i = 0; i < 3; i++) {
		/* priority 0 goes at once; priority 3 waits for the pause to end at 6263 ns */
		assert_int_equal(seqs[i], 10 + i);
		assert_int_equal(deps[i], 1000 * (i + 1));
		assert_int_equal(seqs[3 + i], i);
		assert_int_equal(deps[3 + i], 6263 + 1000 * (i + 1));
	}
	emu_tm_prio_stats(tm, 0, 3, 100000, &ps);
	assert_int_equal(ps.paused_ns, 6263);
	assert_false(ps.paused);
	assert_int_equal(emu_tm_port_ctrs(tm, 0)[EMU_TM_CTR_PFC_RX], 1);

	/* 0xFFFF quanta at 20000, XON (time 0) at 22500: resumes at once. */
	quanta[3] = 0xFFFF;
	emu_tm_pause_rx(tm, 0, 20000, EMU_TM_MACCTL_OPCODE_PFC, 1u << 3, quanta, &rng);
	assert_true(emu_tm_enqueue(tm, 0, frame_prio(LEN_1US, 20, 3, 0), 20000, &rng));
	assert_int_equal(take(tm, 0, 22000, seqs, deps, 0, 16), 0);
	quanta[3] = 0;
	emu_tm_pause_rx(tm, 0, 22500, EMU_TM_MACCTL_OPCODE_PFC, 1u << 3, quanta, &rng);
	assert_int_equal(drain_port(tm, 0, seqs, deps, 16), 1);
	assert_int_equal(deps[0], 22500 + 1000);
	emu_tm_prio_stats(tm, 0, 3, 100000, &ps);
	assert_int_equal(ps.paused_ns, 6263 + 2500);

	/* PAUSE (802.3x) stops every priority: quanta[0] = 200 -> 12524.5 -> 12525 ns. */
	quanta[0] = 200;
	emu_tm_pause_rx(tm, 0, 30000, EMU_TM_MACCTL_OPCODE_PAUSE, 0, quanta, &rng);
	for (i = 0; i < 8; i++)
		assert_true(emu_tm_enqueue(tm, 0, frame_prio(LEN_1US, 30 + i, (uint8_t)i, 0), 30000,
					   &rng));
	assert_int_equal(drain_port(tm, 0, seqs, deps, 16), 8);
	for (i = 0; i < 8; i++) {
		assert_int_equal(seqs[i], 37 - i);
		assert_int_equal(deps[i], 30000 + 12525 + 1000 * (i + 1));
	}
	assert_int_equal(emu_tm_port_ctrs(tm, 0)[EMU_TM_CTR_PAUSE_RX], 1);
	emu_tm_free(tm);
}

static void
buf_small(struct emu_tm_cfg *cfg)
{
	cfg->buffer.total_bytes = 10 * 1024;
	cfg->buffer.cell_bytes = 256;
	cfg->ports[1].headroom_bytes = 2048;
}

static void
test_buffer_static_headroom(void **state)
{
	struct emu_tm *tm = tm_ports(2, buf_small);
	const uint64_t *c = emu_tm_port_ctrs(tm, 0);
	struct emu_tm_prio_stats ps;
	uint64_t used, total;
	unsigned int i;

	(void)state;
	/* 1000-byte frames take 4 cells (1024 B): 10 fit in the 10 KB shared buffer. */
	for (i = 0; i < 12; i++)
		emu_tm_enqueue(tm, 0, frame_prio(1000, i, 0, 1), 0, &rng);
	assert_int_equal(c[EMU_TM_CTR_DROP_BUFFER_FULL], 2);
	emu_tm_buffer_use(tm, &used, &total);
	assert_int_equal(used, 10 * 1024);
	assert_int_equal(total, 10 * 1024);
	/* Lossless priority 3 from port 1: the buffer is full, so headroom (2048 = 2 frames),
	 * then drop_headroom_overflow. */
	for (i = 0; i < 3; i++)
		emu_tm_enqueue(tm, 0, frame_prio(1000, 20 + i, 3, 1), 0, &rng);
	assert_int_equal(c[EMU_TM_CTR_DROP_HEADROOM_OVERFLOW], 1);
	assert_int_equal(emu_tm_port_ctrs(tm, 1)[EMU_TM_CTR_HEADROOM_PKTS], 2);
	emu_tm_prio_stats(tm, 1, 3, 0, &ps);
	assert_int_equal(ps.headroom_bytes, 2048);
	assert_int_equal(drain_port(tm, 0, NULL, NULL, 0), 12);
	emu_tm_buffer_use(tm, &used, &total);
	assert_int_equal(used, 0);
	emu_tm_prio_stats(tm, 1, 3, 0, &ps);
	assert_int_equal(ps.headroom_bytes, 0);
	emu_tm_free(tm);
}

static void
buf_dynamic(struct emu_tm_cfg *cfg)
{
	cfg->buffer.total_bytes = 100 * 1000;
	cfg->buffer.dynamic = true;
	cfg->buffer.alpha = 1.0;
}

static void
test_buffer_dynamic(void **state)
{
	struct emu_tm *tm = tm_ports(2, buf_dynamic);
	unsigned int i;

	(void)state;
	/* alpha 1, one queue: admitted while q + 1000 <= 100000 - q, i.e. 50 frames. */
	for (i = 0; i < 60; i++)
		emu_tm_enqueue(tm, 0, frame_prio(1000, i, 0, 1), 0, &rng);
	assert_int_equal(emu_tm_port_ctrs(tm, 0)[EMU_TM_CTR_DROP_QUEUE_FULL], 10);
	/* a second queue gets alpha x what is left: q2 + 1000 <= 50000 - q2 -> 25 frames */
	for (i = 0; i < 30; i++)
		emu_tm_enqueue(tm, 1, frame_prio(1000, i, 1, 0), 0, &rng);
	assert_int_equal(emu_tm_port_ctrs(tm, 1)[EMU_TM_CTR_DROP_QUEUE_FULL], 5);
	{
		unsigned int got = 0;
		uint64_t t;

		while ((t = emu_tm_next_event_ns(tm)) != UINT64_MAX)
			got = take(tm, 1, t, NULL, NULL, take(tm, 0, t, NULL, NULL, got, 0), 0);
		assert_int_equal(got, 75);
	}
	emu_tm_free(tm);
}

/*
 * The switch on two workers: each replica's TM owns one port, and admits against the shared
 * buffer less what the other holds (emu_tm_buffer_others(), as live_buffer_share() does once a
 * poll). The same frames, split over two replicas, meet the same limits as in one TM; the
 * replicas' counters add up to the one TM's (emu_tm_absorb()).
 */
static void
test_buffer_two_replicas(void **state)
{
	struct emu_tm *one = tm_ports(2, buf_dynamic);
	struct emu_tm *a = tm_ports(2, buf_dynamic), *b = tm_ports(2, buf_dynamic);
	uint64_t used, total;
	unsigned int i, k;

	(void)state;
	for (i = 0; i < 30; i++) {
		emu_tm_enqueue(one, 0, frame_prio(1000, i, 0, 1), 0, &rng);
		emu_tm_enqueue(a, 0, frame_prio(1000, i, 0, 1), 0, &rng);
	}
	emu_tm_buffer_others(b, emu_tm_buffer_used(a));
	emu_tm_buffer_others(a, emu_tm_buffer_used(b));
	for (i = 0; i < 40; i++) {
		emu_tm_enqueue(one, 1, frame_prio(1000, i, 1, 0), 0, &rng);
		emu_tm_enqueue(b, 1, frame_prio(1000, i, 1, 0), 0, &rng);
	}
	/* q1 + 1000 <= 100000 - 30 frames' cells - q1 */
	assert_true(emu_tm_port_ctrs(one, 1)[EMU_TM_CTR_DROP_QUEUE_FULL] > 0);
	assert_int_equal(emu_tm_port_ctrs(b, 1)[EMU_TM_CTR_DROP_QUEUE_FULL],
			 emu_tm_port_ctrs(one, 1)[EMU_TM_CTR_DROP_QUEUE_FULL]);
	/* one holds what the two replicas hold together */
	emu_tm_buffer_use(one, &used, &total);
	assert_int_equal(used, emu_tm_buffer_used(a) + emu_tm_buffer_used(b));
	/* without the other's share, b would have taken more: the share is what limits it */
	emu_tm_buffer_others(b, 0);
	emu_tm_enqueue(b, 1, frame_prio(1000, 99, 1, 0), 0, &rng);
	assert_int_equal(emu_tm_port_ctrs(b, 1)[EMU_TM_CTR_DROP_QUEUE_FULL],
			 emu_tm_port_ctrs(one, 1)[EMU_TM_CTR_DROP_QUEUE_FULL]);
	/* what each reports is its own use of the configured buffer */
	emu_tm_buffer_use(b, &used, &total);
	assert_int_equal(total, 100 * 1000);
	/* b's port 1 into a, whose port 0 is its own: together they count what one counted */
	emu_tm_absorb(a, b, 0);
	for (k = 0; k < EMU_TM_CTR_MAX; k++)
		for (i = 0; i < 2; i++)
			if (i == 0 || (k != EMU_TM_CTR_ENQ_PKTS && k != EMU_TM_CTR_ENQ_BYTES &&
				       k != EMU_TM_CTR_MAX_QUEUE_BYTES)) /* b's extra frame */
				assert_int_equal(emu_tm_port_ctrs(a, i)[k],
						 emu_tm_port_ctrs(one, i)[k]);
	assert_int_equal(emu_tm_port_ctrs(a, 1)[EMU_TM_CTR_ENQ_PKTS],
			 emu_tm_port_ctrs(one, 1)[EMU_TM_CTR_ENQ_PKTS] + 1);
	emu_tm_free(one);
	emu_tm_free(a);
	emu_tm_free(b);
}

static uint64_t ecn_kmin = 100 * 1024, ecn_kmax = 400 * 1024;
static bool ecn_enq;

static void
ecn_cfg(struct emu_tm_cfg *cfg)
{
	cfg->ports[0].ecn.enabled = true;
	cfg->ports[0].ecn.kmin_bytes = ecn_kmin;
	cfg->ports[0].ecn.kmax_bytes = ecn_kmax;
	cfg->ports[0].ecn.pmax = 0.2;
	cfg->ports[0].ecn.at_enqueue = ecn_enq;
}

/* RED ramp, floating-point reference. */
static double
ecn_ref(uint64_t q)
{
	if (q <= ecn_kmin)
		return 0;
	if (q > ecn_kmax)
		return 1;
	return 0.2 * (double)(q - ecn_kmin) / (double)(ecn_kmax - ecn_kmin);
}

/* Hold port 0's queue at @p k frames for @p n decisions; returns the marks and the depth
 * (bytes) every decision saw. */
static uint64_t
ecn_band(unsigned int k, unsigned int n, uint64_t *depth)
{
	struct emu_tm *tm = tm_ports(1, ecn_cfg);
	const uint64_t *c = emu_tm_port_ctrs(tm, 0);
	struct emu_tm_prio_stats ps;
	uint64_t marked0 = 0, t = 0, seen = UINT64_MAX;
	unsigned int i;

	for (i = 0; i < k; i++)
		emu_tm_enqueue(tm, 0, test_roce_frame(pool, mac_b, mac_a, LEN_1US, i, 26, 2), 0,
			       &rng);
	take(tm, 0, 0, NULL, NULL, 0, 0);
	marked0 = c[EMU_TM_CTR_ECN_MARKED];
	for (i = 0; i < n; i++) {
		t += 1000;
		/* one frame starts at each t (dequeue marking sees what it leaves behind),
		 * then one joins (enqueue marking sees what is ahead of it) */
		take(tm, 0, t, NULL, NULL, 0, 0);
		emu_tm_prio_stats(tm, 0, 0, t, &ps);
		if (seen == UINT64_MAX)
			seen = ps.queue_bytes;
		assert_int_equal(ps.queue_bytes, seen);
		emu_tm_enqueue(tm, 0, test_roce_frame(pool, mac_b, mac_a, LEN_1US, k + i, 26, 2), t,
			       &rng);
	}
	marked0 = c[EMU_TM_CTR_ECN_MARKED] - marked0;
	*depth = seen;
	drain_port(tm, 0, NULL, NULL, 0);
	emu_tm_free(tm);
	return marked0;
}

static void
test_ecn_red_ramp(void **state)
{
	static const unsigned int depths[] = { 100, 150, 250, 350, 450 }; /* frames of 998 B */
	const unsigned int n = 100000;
	unsigned int d, m;

	(void)state;
	for (m = 0; m < 2; m++) {
		ecn_enq = m == 1;
		for (d = 0; d < RTE_DIM(depths); d++) {
			uint64_t depth, marks = ecn_band(depths[d], n, &depth);
			double p = ecn_ref(depth), mean = p * n, sigma = sqrt(n * p * (1 - p));

			printf("ecn %s: depth %" PRIu64 " B p %.4f marked %" PRIu64
			       " expected %.0f +- %.0f\n", ecn_enq ? "enqueue" : "dequeue", depth, p,
			       marks, mean, 3 * sigma);
			assert_true(fabs((double)marks - mean) <= 3 * sigma + 1e-9);
		}
	}
	ecn_enq = false;
}

static void
test_ecn_enqueue_vs_dequeue(void **state)
{
	struct rte_mbuf *out[64];
	unsigned int i, n, m;

	(void)state;
	ecn_kmin = 19 * 998;     /* no frame falls inside the ramp: marking is exact */
	ecn_kmax = 20 * 998 - 1; /* more than 19 frames of queue: p = 1 */
	for (m = 0; m < 2; m++) {
		struct emu_tm *tm;
		uint64_t t;

		ecn_enq = m == 1;
		tm = tm_ports(1, ecn_cfg);
		/* A burst of 30 into an empty queue (the link picks after all arrived). */
		for (i = 0; i < 30; i++)
			emu_tm_enqueue(tm, 0, test_roce_frame(pool, mac_b, mac_a, LEN_1US, i, 26, 2),
				       0, &rng);
		n = 0;
		while ((t = emu_tm_next_event_ns(tm)) != UINT64_MAX)
			n += emu_tm_dequeue(tm, 0, t, out + n, 64 - n, &rng);
		assert_int_equal(n, 30);
		for (i = 0; i < 30; i++) {
			/* enqueue: frame i had i frames ahead; dequeue: it left 29 - i behind */
			uint64_t q = ecn_enq ? i * 998ULL : (29 - i) * 998ULL;
			struct roce_pkt pk;

			roce_parse_mbuf(out[i], 4791, &pk);
			assert_int_equal(pk.ecn, q > ecn_kmax ? 3 : 2);
			assert_int_equal(roce_icrc_verify_mbuf(out[i], &pk), 1);
			rte_pktmbuf_free(out[i]);
		}
		assert_int_equal(emu_tm_port_ctrs(tm, 0)[EMU_TM_CTR_ECN_MARKED], 10);
		emu_tm_free(tm);
	}
	/* Not-ECT and CE packets are never (re)marked. */
	{
		struct emu_tm *tm;

		ecn_enq = true;
		tm = tm_ports(1, ecn_cfg);
		for (i = 0; i < 25; i++)
			emu_tm_enqueue(tm, 0, test_roce_frame(pool, mac_b, mac_a, LEN_1US, i, 26,
							      i < 22 ? 2 : (i == 22 ? 0 : 3)),
				       0, &rng);
		assert_int_equal(emu_tm_port_ctrs(tm, 0)[EMU_TM_CTR_ECN_MARKED], 2);
		assert_int_equal(emu_tm_port_ctrs(tm, 0)[EMU_TM_CTR_ECN_NOT_ECT], 1);
		assert_int_equal(emu_tm_port_ctrs(tm, 0)[EMU_TM_CTR_ECN_CE_ALREADY], 2);
		drain_port(tm, 0, NULL, NULL, 0);
		emu_tm_free(tm);
	}
	ecn_kmin = 100 * 1024;
	ecn_kmax = 400 * 1024;
	ecn_enq = false;
}

/* ---- Link events, PFC storm, PFC watchdog ---- */

static void
link_set(struct emu_tm *tm, uint16_t port, const char *state, uint64_t t)
{
	json_t *v = json_string(state);
	struct emu_err err;

	assert_int_equal(emu_tm_set(tm, port, "link", v, false, t, &rng, "x", &err), 0);
	assert_int_equal(emu_tm_set(tm, port, "link", v, true, t, &rng, "x", &err), 0);
	json_decref(v);
}

static void
test_link_down_up(void **state)
{
	struct emu_tm *tm = tm_ports(2, pfc_small);
	struct emu_tm_pfc_frame f[4];
	struct emu_tm_prio_stats ps;
	const uint64_t *c = emu_tm_port_ctrs(tm, 1);
	struct emu_err err;
	uint32_t seqs[8];
	uint64_t deps[8];
	unsigned int i;
	json_t *v;

	(void)state;
	/* 12 lossless frames from port 0 to port 1 at t = 0: XOFF on port 0. */
	for (i = 0; i < 12; i++)
		assert_true(emu_tm_enqueue(tm, 1, frame_prio(LEN_1US, i, 3, 0), 0, &rng));
	assert_int_equal(emu_tm_pfc_collect(tm, 0, f, 4), 1);
	assert_int_equal(f[0].quanta[3], 100);
	/* Down at 1500: frames 0 and 1 started (at 0 and 1000), the other 10 are dropped. */
	link_set(tm, 1, "down", 1500);
	assert_false(emu_tm_link_up(tm, 1));
	assert_int_equal(c[EMU_TM_CTR_DROP_LINK_DOWN], 10);
	emu_tm_prio_stats(tm, 0, 3, 1500, &ps);
	assert_int_equal(ps.ingress_bytes, 0);
	assert_false(ps.xoff);
	assert_int_equal(emu_tm_pfc_collect(tm, 1500, f, 4), 1); /* XON */
	assert_int_equal(f[0].quanta[3], 0);
	/* While down, every frame for the port is dropped at enqueue, control frames too. */
	assert_false(emu_tm_enqueue(tm, 1, frame_prio(LEN_1US, 20, 0, 0), 2000, &rng));
	assert_false(emu_tm_enqueue(tm, 1, frame_prio(LEN_1US, 21, 3, 0), 2500, &rng));
	assert_int_equal(c[EMU_TM_CTR_DROP_LINK_DOWN], 12);
	assert_int_equal(drain_port(tm, 1, seqs, deps, 8), 2);
	assert_int_equal(seqs[0], 0);
	assert_int_equal(deps[0], 1000);
	assert_int_equal(seqs[1], 1);
	assert_int_equal(deps[1], 2000);
	/* Up at 5000: frames flow again. */
	link_set(tm, 1, "up", 5000);
	assert_true(emu_tm_link_up(tm, 1));
	assert_true(emu_tm_enqueue(tm, 1, frame_prio(LEN_1US, 30, 0, 0), 5000, &rng));
	assert_int_equal(drain_port(tm, 1, seqs, deps, 8), 1);
	assert_int_equal(seqs[0], 30);
	assert_int_equal(deps[0], 6000);
	assert_int_equal(c[EMU_TM_CTR_DROP_LINK_DOWN], 12);
	assert_int_equal(c[EMU_TM_CTR_ENQ_PKTS], 13);
	assert_int_equal(c[EMU_TM_CTR_DEQ_PKTS], 3);
	assert_int_equal(emu_tm_held(tm), 0);
	/* Validation */
	v = json_string("sideways");
	assert_int_not_equal(emu_tm_set(tm, 1, "link", v, false, 0, &rng, "phases[0].tm.p1.link",
					&err), 0);
	assert_string_equal(err.msg,
			    "phases[0].tm.p1.link: must be \"down\" or \"up\", got \"sideways\"");
	json_decref(v);
	v = json_false();
	assert_int_not_equal(emu_tm_set(tm, 1, "link", v, false, 0, &rng, "l", &err), 0);
	assert_string_equal(err.msg, "l: must be \"down\" or \"up\", got a boolean");
	json_decref(v);
	emu_tm_free(tm);
}

static void
storm_set(struct emu_tm *tm, const char *json, uint64_t t, struct emu_err *err, int want)
{
	json_t *v = json_loads(json, JSON_DECODE_ANY, NULL);

	assert_non_null(v);
	assert_int_equal(emu_tm_set(tm, 0, "pfc_storm", v, false, t, &rng, "s", err) == 0,
			 want == 0);
	if (want == 0)
		assert_int_equal(emu_tm_set(tm, 0, "pfc_storm", v, true, t, &rng, "s", err), 0);
	json_decref(v);
}

static void
test_pfc_storm(void **state)
{
	struct emu_tm *tm = tm_ports(1, NULL);
	struct emu_tm_pfc_frame f[4];
	struct emu_err err;
	uint64_t t, times[16];
	unsigned int n, k = 0;

	(void)state;
	/* 3 frames per second from t = 1000: due at 1000 + floor(k * 1e9 / 3). */
	storm_set(tm, "{\"priorities\": [3, 5], \"quanta\": 4000, \"rate_pps\": 3}", 1000, &err,
		  0);
	while ((t = emu_tm_next_event_ns(tm)) <= 1000001000ULL) {
		n = emu_tm_pfc_collect(tm, t, f, 4);
		assert_int_equal(n, 1);
		assert_true(k < 16);
		times[k++] = t;
		assert_int_equal(f[0].port, 0);
		assert_int_equal(f[0].vector, (1u << 3) | (1u << 5));
		assert_int_equal(f[0].quanta[3], 4000);
		assert_int_equal(f[0].quanta[5], 4000);
		assert_int_equal(f[0].quanta[0], 0);
	}
	assert_int_equal(k, 4);
	assert_int_equal(times[0], 1000);
	assert_int_equal(times[1], 1000 + 333333333);
	assert_int_equal(times[2], 1000 + 666666666);
	assert_int_equal(times[3], 1000 + 1000000000);
	assert_int_equal(emu_tm_port_ctrs(tm, 0)[EMU_TM_CTR_PFC_STORM_TX], 4);
	/* A new storm restarts at its own time; false stops it. */
	storm_set(tm, "{\"priorities\": [0], \"rate_pps\": 1000000}", 2000000000ULL, &err, 0);
	for (k = 0; (t = emu_tm_next_event_ns(tm)) < 2000005000ULL; k++) {
		assert_int_equal(t, 2000000000ULL + 1000 * k);
		assert_int_equal(emu_tm_pfc_collect(tm, t, f, 4), 1);
		assert_int_equal(f[0].quanta[0], 0xFFFF);
	}
	assert_int_equal(k, 5);
	storm_set(tm, "false", 2000005000ULL, &err, 0);
	assert_int_equal(emu_tm_next_event_ns(tm), UINT64_MAX);
	assert_int_equal(emu_tm_pfc_collect(tm, 2000005000ULL, f, 4), 0);
	assert_int_equal(emu_tm_port_ctrs(tm, 0)[EMU_TM_CTR_PFC_STORM_TX], 9);
	/* An 802.3x PAUSE storm: every frame a PAUSE with the time in quanta[0]. */
	storm_set(tm, "{\"pause\": true, \"quanta\": 100, \"rate_pps\": 1000}", 3000000000ULL,
		  &err, 0);
	for (k = 0; (t = emu_tm_next_event_ns(tm)) < 3000000000ULL + 3000000; k++) {
		assert_int_equal(t, 3000000000ULL + 1000000 * k);
		assert_int_equal(emu_tm_pfc_collect(tm, t, f, 4), 1);
		assert_true(f[0].pause);
		assert_int_equal(f[0].quanta[0], 100);
	}
	assert_int_equal(k, 3);
	storm_set(tm, "false", 3000000000ULL + 3000000, &err, 0);
	storm_set(tm, "{\"pause\": true, \"priorities\": [3], \"rate_pps\": 1}", 0, &err, -1);
	assert_string_equal(err.msg, "s.priorities: not used with \"pause\": true (PAUSE stops all "
			    "priorities)");
	/* Validation */
	storm_set(tm, "true", 0, &err, -1);
	assert_string_equal(err.msg, "s: must be an object or false, got a boolean");
	storm_set(tm, "{\"priorities\": [3]}", 0, &err, -1);
	assert_string_equal(err.msg, "s.rate_pps: required key is missing");
	storm_set(tm, "{\"priorities\": [], \"rate_pps\": 5}", 0, &err, -1);
	assert_string_equal(err.msg, "s.priorities: must list at least one priority");
	storm_set(tm, "{\"priorities\": [8], \"rate_pps\": 5}", 0, &err, -1);
	storm_set(tm, "{\"priorities\": [1], \"rate_pps\": 0}", 0, &err, -1);
	storm_set(tm, "{\"priorities\": [1], \"rate_pps\": 5, \"pps\": 1}", 0, &err, -1);
	emu_tm_free(tm);
}

static void
wd_10us(struct emu_tm_cfg *cfg)
{
	cfg->ports[0].pfc_watchdog_ns = 10000;
}

static void
test_pfc_watchdog(void **state)
{
	struct emu_tm *tm = tm_ports(1, wd_10us);
	const uint64_t *c = emu_tm_port_ctrs(tm, 0);
	uint16_t quanta[8] = { 0 };
	struct emu_tm_prio_stats ps;
	uint32_t seqs[8];
	uint64_t deps[8], t;

	(void)state;
	quanta[3] = 100; /* 6263 ns */
	/* A storm of pauses every 2 us from t = 0; a priority 3 frame waits from t = 0. */
	emu_tm_pause_rx(tm, 0, 0, EMU_TM_MACCTL_OPCODE_PFC, 1u << 3, quanta, &rng);
	assert_true(emu_tm_enqueue(tm, 0, frame_prio(LEN_1US, 0, 3, 0), 0, &rng));
	for (t = 2000; t <= 8000; t += 2000)
		emu_tm_pause_rx(tm, 0, t, EMU_TM_MACCTL_OPCODE_PFC, 1u << 3, quanta, &rng);
	assert_int_equal(c[EMU_TM_CTR_PFC_WATCHDOG_TRIPS], 0);
	/* 10 us after the pause began: the frame trips the watchdog, the pause ends now. */
	emu_tm_pause_rx(tm, 0, 10000, EMU_TM_MACCTL_OPCODE_PFC, 1u << 3, quanta, &rng);
	assert_int_equal(c[EMU_TM_CTR_PFC_WATCHDOG_TRIPS], 1);
	emu_tm_prio_stats(tm, 0, 3, 10000, &ps);
	assert_false(ps.paused);
	assert_int_equal(ps.paused_ns, 10000);
	/* Further pauses are ignored. */
	emu_tm_pause_rx(tm, 0, 12000, EMU_TM_MACCTL_OPCODE_PFC, 1u << 3, quanta, &rng);
	assert_true(emu_tm_enqueue(tm, 0, frame_prio(LEN_1US, 1, 3, 0), 12000, &rng));
	emu_tm_pause_rx(tm, 0, 14000, EMU_TM_MACCTL_OPCODE_PFC, 1u << 3, quanta, &rng);
	assert_int_equal(c[EMU_TM_CTR_PFC_WATCHDOG_IGNORED], 2);
	assert_int_equal(c[EMU_TM_CTR_PFC_RX], 8);
	/* 9.999 us after the last ignored one: still ignored (and restarts the quiet time). */
	emu_tm_pause_rx(tm, 0, 23999, EMU_TM_MACCTL_OPCODE_PFC, 1u << 3, quanta, &rng);
	assert_int_equal(c[EMU_TM_CTR_PFC_WATCHDOG_IGNORED], 3);
	/* 10 us of quiet: honoured again. */
	emu_tm_pause_rx(tm, 0, 33999, EMU_TM_MACCTL_OPCODE_PFC, 1u << 3, quanta, &rng);
	assert_int_equal(c[EMU_TM_CTR_PFC_WATCHDOG_IGNORED], 3);
	assert_true(emu_tm_enqueue(tm, 0, frame_prio(LEN_1US, 2, 3, 0), 33999, &rng));
	assert_int_equal(drain_port(tm, 0, seqs, deps, 8), 3);
	assert_int_equal(deps[0], 11000); /* started when the watchdog tripped */
	assert_int_equal(deps[1], 13000); /* not paused by the frame at 12000 */
	assert_int_equal(deps[2], 33999 + 6263 + 1000);
	emu_tm_prio_stats(tm, 0, 3, 100000, &ps);
	assert_int_equal(ps.paused_ns, 10000 + 6263);
	assert_int_equal(c[EMU_TM_CTR_PFC_WATCHDOG_TRIPS], 1);
	emu_tm_free(tm);
}

/*
 * RED in fixed point against its floating definition p(q) = pmax (q - kmin) / (kmax - kmin):
 * over random ramps and every queue depth around them the fixed value differs by less than
 * (kmax - kmin + 1) / 2^48, and a marking decision drawn from 48 random bits agrees with the
 * floating one drawn from the same 64 bits except inside that band.
 */
static void
test_red_fixed_point(void **state)
{
	struct emu_rng rng;
	unsigned int t, disagree = 0, decisions = 0;

	(void)state;
	emu_rng_seed(&rng, 42, 7);
	for (t = 0; t < 200; t++) {
		struct emu_tm_ecn_cfg ec = { .enabled = true };
		uint64_t kmin = (1 + emu_rng_u64(&rng) % 4000) * 1024;
		uint64_t kmax = kmin + (1 + emu_rng_u64(&rng) % 4000) * 1024;
		double band, pmax = t == 0 ? 1.0 : emu_rng_uniform(&rng);
		uint64_t q;

		ec.kmin_bytes = kmin;
		ec.kmax_bytes = kmax;
		ec.pmax = pmax;
		emu_tm_ecn_ramp(&ec);
		band = (double)(kmax - kmin + 1) / 281474976710656.0;
		assert_int_equal(emu_tm_red_q48(&ec, kmin), 0);
		assert_int_equal(emu_tm_red_q48(&ec, kmin - 1), 0);
		for (q = kmin; q <= kmax + 64; q += 1 + (kmax - kmin) / 997) {
			double pf = q <= kmin ? 0 : pmax * (double)(RTE_MIN(q, kmax) - kmin) /
						     (double)(kmax - kmin);
			double px = (double)emu_tm_red_q48(&ec, q) / 281474976710656.0;
			uint64_t u = emu_rng_u64(&rng);
			bool mf = (double)(u >> 11) * 0x1.0p-53 < pf, mx = (u >> 16) <
							emu_tm_red_q48(&ec, q);

			if (fabs(px - pf) >= band)
				fail_msg("kmin %" PRIu64 " kmax %" PRIu64 " pmax %g q %" PRIu64
					 ": fixed %.17g, float %.17g", kmin, kmax, pmax, q, px, pf);
			decisions++;
			if (mf != mx) {
				disagree++;
				assert_true(fabs((double)(u >> 11) * 0x1.0p-53 - pf) < 2 * band);
			}
		}
	}
	print_message("RED fixed point: %u decisions, %u differ from floating (all within the "
		      "band)\n", decisions, disagree);
	assert_true(decisions > 100000);
}

/*
 * A full control queue (its port has not sent for a while): a PFC frame merges into the last
 * one queued, each priority it names taking its time (an XON is never refused); a PAUSE frame
 * is still refused, under drop_queue_full.
 */
static void
test_pfc_control_queue_merge(void **state)
{
	struct emu_tm *tm = tm_one_port(1000000000ull, 1 << 20, 0);
	struct emu_tm_pfc_frame f = { .port = 0 };
	const uint64_t *ctr = emu_tm_port_ctrs(tm, 0);
	struct rte_mbuf *m, *out[EMU_TM_CTRL_SLOTS + 4];
	const uint8_t *d;
	unsigned int i, got = 0;
	uint16_t n;

	(void)state;
	/* 64 XOFF refreshes of priority 3 fill the queue; nothing dequeued yet */
	f.vector = 1u << 3;
	f.quanta[3] = 0xffff;
	for (i = 0; i < EMU_TM_CTRL_SLOTS; i++) {
		m = emu_tm_pfc_mbuf(pool, &f, mac_a, 0);
		assert_non_null(m);
		assert_true(emu_tm_enqueue(tm, 0, m, 0, &rng));
	}
	/* the XON of priority 3 and an XOFF of priority 5: merged into the last */
	f.quanta[3] = 0;
	assert_true(emu_tm_enqueue(tm, 0, emu_tm_pfc_mbuf(pool, &f, mac_a, 0), 0, &rng));
	memset(&f, 0, sizeof(f));
	f.vector = 1u << 5;
	f.quanta[5] = 0x1234;
	assert_true(emu_tm_enqueue(tm, 0, emu_tm_pfc_mbuf(pool, &f, mac_a, 0), 0, &rng));
	assert_int_equal(ctr[EMU_TM_CTR_PFC_COALESCED], 2);
	assert_int_equal(ctr[EMU_TM_CTR_DROP_QUEUE_FULL], 0);
	/* a PAUSE frame is not merged */
	memset(&f, 0, sizeof(f));
	f.pause = true;
	f.quanta[0] = 100;
	m = emu_tm_pfc_mbuf(pool, &f, mac_a, 0);
	assert_false(emu_tm_enqueue(tm, 0, m, 0, &rng));
	assert_int_equal(ctr[EMU_TM_CTR_DROP_QUEUE_FULL], 1);
	assert_int_equal(emu_tm_held(tm), EMU_TM_CTRL_SLOTS);

	while ((n = emu_tm_dequeue(tm, 0, UINT64_MAX / 2, out + got,
				   (uint16_t)(RTE_DIM(out) - got), &rng)) > 0)
		got += n;
	assert_int_equal(got, EMU_TM_CTRL_SLOTS);
	for (i = 0; i < got; i++) {
		d = rte_pktmbuf_mtod(out[i], const uint8_t *);
		assert_int_equal((d[14] << 8) | d[15], EMU_TM_MACCTL_OPCODE_PFC);
		if (i + 1 < got) { /* the refreshes as they were */
			assert_int_equal((d[16] << 8) | d[17], 1u << 3);
			assert_int_equal((d[18 + 6] << 8) | d[19 + 6], 0xffff);
		} else { /* the last: priority 3 released, priority 5 paused */
			assert_int_equal((d[16] << 8) | d[17], (1u << 3) | (1u << 5));
			assert_int_equal((d[18 + 6] << 8) | d[19 + 6], 0);
			assert_int_equal((d[18 + 10] << 8) | d[19 + 10], 0x1234);
		}
		rte_pktmbuf_free(out[i]);
	}
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
		cmocka_unit_test(test_strict_priority),
		cmocka_unit_test(test_dwrr_weights),
		cmocka_unit_test(test_fan_in_2to1_growth),
		cmocka_unit_test(test_pfc_generation_thresholds),
		cmocka_unit_test(test_pause_rx),
		cmocka_unit_test(test_buffer_static_headroom),
		cmocka_unit_test(test_buffer_dynamic),
		cmocka_unit_test(test_buffer_two_replicas),
		cmocka_unit_test(test_ecn_red_ramp),
		cmocka_unit_test(test_ecn_enqueue_vs_dequeue),
		cmocka_unit_test(test_link_down_up),
		cmocka_unit_test(test_pfc_storm),
		cmocka_unit_test(test_pfc_watchdog),
		cmocka_unit_test(test_red_fixed_point),
		cmocka_unit_test(test_runs_future_arrival),
		cmocka_unit_test(test_pfc_control_queue_merge),
	};

	emu_rng_seed(&rng, 1, 1);
	pool = test_eal_pool("test_tm", 8192);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
