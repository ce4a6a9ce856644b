/* SPDX-License-Identifier: BSD-3-Clause */
/* The shaper: exact departure times for known sizes and rates, byte limits, rate changes,
 * propagation delay. */
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

#define R_1US 8176000000ULL /* a 998-byte frame (1022 B on the wire) takes exactly 1000 ns */
#define LEN_1US 998

static struct emu_tm *
tm_ports(unsigned int n, void (*tweak)(struct emu_tm_cfg *))
{
	struct emu_tm_cfg cfg;
	struct emu_err err;
	struct emu_tm *tm;
	unsigned int i;

	emu_tm_cfg_default(&cfg, n);
	for (i = 0; i < n; i++)
		cfg.ports[i].rate_bps = R_1US;
	if (tweak != NULL)
		tweak(&cfg);
	tm = emu_tm_create(&cfg, &err);
	assert_non_null(tm);
	return tm;
}

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
 * emu_tm_enqueue_burst() against emu_tm_enqueue() one packet at a time: two TMs with the
 * same configuration (a small shared buffer, static or dynamic, 256 B or 200 B cells, one port
 * with a buffer of its own or not, port 1 with a propagation delay, headroom, PFC and RED ECN
 * on priority 3, a slot limit; the trace off and on) get the same random bursts (lengths,
 * priorities 0 and 3, ingress ports, ECT or not; every other burst mostly one priority from
 * one ingress and of one length, the loops' runs, one in four of them fabric hops, with
 * header captures and fabric hops among them; some stamped ahead of the next dequeue; now
 * and then a PFC pause) to the same ports at the same times, one through each entry point,
 * A taking the general steps (emu_tm_set_general_only()), and the same dequeues and PFC
 * collections in between. Every packet must leave at the same time with the same trace,
 * every counter and every PFC frame must be the same, and the traffic must have reached the
 * drops, the headroom, XOFF and the ECN marks.
 */
static unsigned int burst_mode; /* bit 0: dynamic buffer; bit 1: port 2 has its own buffer
				  * (a fabric link); 3: also cells of 200 B (not a power of two) */

static void
burst_cfg(struct emu_tm_cfg *cfg)
{
	unsigned int i;

	cfg->buffer.total_bytes = 48 * 1024;
	cfg->buffer.dynamic = (burst_mode & 1) != 0;
	cfg->buffer.alpha = 1;
	cfg->buffer.cell_bytes = burst_mode == 3 ? 200 : 256;
	cfg->ports[2].own_buffer = (burst_mode & 2) != 0;
	cfg->ports[1].delay_ns = 3000; /* packets on the line after they have started */
	for (i = 0; i < 3; i++) {
		cfg->ports[i].queue_pkts = 64;
		cfg->ports[i].limit_bytes = 40 * 1024;
		cfg->ports[i].queue_limit_bytes = 24 * 1024;
		cfg->ports[i].headroom_bytes = 6 * 1024;
		cfg->ports[i].lossless_mask = 1u << 3;
		cfg->ports[i].pfc.enabled = true;
		cfg->ports[i].pfc.xoff_bytes = 12 * 1024;
		cfg->ports[i].pfc.xon_bytes = 6 * 1024;
		cfg->ports[i].ecn.enabled = true;
		cfg->ports[i].ecn.kmin_bytes = 4 * 1024;
		cfg->ports[i].ecn.kmax_bytes = 16 * 1024;
		cfg->ports[i].ecn.pmax = 0.2;
	}
}

/* Dequeue ports 0 .. @p n_ports - 1 of both TMs at @p t and compare what leaves. */
static void
burst_take(struct emu_tm *a, struct emu_rng *ra, struct emu_tm *b, struct emu_rng *rb,
	   uint64_t t, unsigned int *left, uint16_t n_ports)
{
	struct rte_mbuf *oa[32], *ob[32];
	uint16_t port, na, nb, i;

	for (port = 0; port < n_ports; port++) {
		do {
			na = emu_tm_dequeue(a, port, t, oa, 32, ra);
			nb = emu_tm_dequeue(b, port, t, ob, 32, rb);
			assert_int_equal(na, nb);
			for (i = 0; i < na; i++) {
				const struct emu_pkt_meta *ma = emu_meta(oa[i]), *mb = emu_meta(ob[i]);

				assert_int_equal(test_frame_seq(oa[i]), test_frame_seq(ob[i]));
				assert_int_equal(ma->ts_ns, mb->ts_ns);
				assert_int_equal(ma->flags, mb->flags);
				assert_memory_equal(&ma->trace, &mb->trace, sizeof(ma->trace));
				assert_memory_equal(rte_pktmbuf_mtod(oa[i], void *),
						    rte_pktmbuf_mtod(ob[i], void *),
						    rte_pktmbuf_pkt_len(oa[i]));
				rte_pktmbuf_free(oa[i]);
				rte_pktmbuf_free(ob[i]);
				*left += 1;
			}
		} while (na > 0);
	}
}

/* Two TMs of @p n ports configured by @p tweak, and their random streams seeded alike. */
static void
tm_pair(unsigned int n, void (*tweak)(struct emu_tm_cfg *), uint64_t seed, struct emu_tm **a,
	struct emu_tm **b, struct emu_rng *ra, struct emu_rng *rb)
{
	*a = tm_ports(n, tweak);
	*b = tm_ports(n, tweak);
	/* A is the reference: every packet through the general steps of the enqueue and
	 * advance loops; B takes the inner loops for runs of alike packets where they apply */
	emu_tm_set_general_only(*a, true);
	emu_rng_seed(ra, seed, seed);
	emu_rng_seed(rb, seed, seed);
}

/* Ports 0 .. @p n_ports - 1 of @p a and @p b have the same counters, and both send the same
 * PFC frames at @p t. */
static void
pair_same(struct emu_tm *a, struct emu_tm *b, uint16_t n_ports, uint64_t t)
{
	struct emu_tm_pfc_frame fa[16], fb[16];
	unsigned int na, nb;
	uint16_t p;

	for (p = 0; p < n_ports; p++)
		assert_memory_equal(emu_tm_port_ctrs(a, p), emu_tm_port_ctrs(b, p),
				    sizeof(uint64_t) * EMU_TM_CTR_MAX);
	na = emu_tm_pfc_collect(a, t, fa, 16);
	nb = emu_tm_pfc_collect(b, t, fb, 16);
	assert_int_equal(na, nb);
	assert_memory_equal(fa, fb, na * sizeof(fa[0]));
}

/* At the end: the same counters (pair_same()), ports @p from .. @p n_ports - 1 added to
 * @p totals, every port's drops to *@p drops; both freed. */
static void
pair_end(struct emu_tm *a, struct emu_tm *b, uint16_t n_ports, uint16_t from,
	 uint64_t totals[EMU_TM_CTR_MAX], uint64_t *drops)
{
	uint16_t p;
	unsigned int c;

	pair_same(a, b, n_ports, UINT64_MAX / 2);
	for (p = 0; p < n_ports; p++) {
		const uint64_t *ca = emu_tm_port_ctrs(a, p);

		for (c = 0; c < EMU_TM_CTR_MAX && p >= from; c++)
			totals[c] += ca[c];
		*drops += ca[EMU_TM_CTR_DROP_QUEUE_FULL] + ca[EMU_TM_CTR_DROP_BUFFER_FULL] +
			  ca[EMU_TM_CTR_DROP_HEADROOM_OVERFLOW] + ca[EMU_TM_CTR_DROP_LINK_DOWN];
	}
	emu_tm_free(a);
	emu_tm_free(b);
}

static void
test_enqueue_burst_same(void **state)
{
	uint64_t rs = 0x9E3779B97F4A7C15ULL, t = 0, t_in, totals[EMU_TM_CTR_MAX] = { 0 }, drops = 0;
	struct emu_rng ra, rb;
	unsigned int mode, it, i, sent = 0, left = 0, queued = 0, runs = 0, pauses = 0;

	(void)state;
	for (mode = 0; mode < 8; mode++) {
		struct emu_tm *a, *b;

		/* each buffer mode with the trace off and on */
		burst_mode = mode % 4;
		tm_pair(3, burst_cfg, 7, &a, &b, &ra, &rb);
		emu_tm_set_trace(a, mode >= 4);
		emu_tm_set_trace(b, mode >= 4);
		for (it = 0; it < 3000; it++) {
			struct rte_mbuf *ba[32], *bb[32];
			unsigned int n, na, nb;
			uint16_t port, run_in;
			uint32_t run_len;
			uint8_t run_prio;
			bool run, run_hops;

#define BURST_RND() (rs ^= rs << 13, rs ^= rs >> 7, rs ^= rs << 17, (uint32_t)(rs >> 11))
			n = 1 + BURST_RND() % 32;
			port = (uint16_t)(BURST_RND() % 3);
			/* every other burst one priority from one ingress (the loop's same run),
			 * with now and then one packet of another, a header capture (wire length
			 * apart from the mbuf's) or a fabric hop in it */
			run = BURST_RND() % 2 == 0;
			run_prio = (BURST_RND() % 3) ? 3 : 0;
			run_in = (uint16_t)(BURST_RND() % 4);
			run_hops = run && BURST_RND() % 4 == 0;
			/* two lengths: runs of one burst and the next are then often alike */
			run_len = BURST_RND() % 2 ? 1074 : 98;
			for (i = 0; i < n; i++) {
				uint32_t len = 74 + 4 * (BURST_RND() % 360);
				uint8_t prio = (BURST_RND() % 3) ? 3 : 0;
				uint8_t ecn = (uint8_t)(BURST_RND() % 3);
				uint16_t in = (uint16_t)(BURST_RND() % 4); /* 3: no TM port */
				unsigned int odd = BURST_RND() % 16;

				if (run && odd > 2) {
					prio = run_prio;
					in = run_in;
				}
				if (run && odd != 3)
					len = run_len;
				ba[i] = test_roce_frame(pool, mac_b, mac_a, len, sent, 26, ecn);
				bb[i] = test_roce_frame(pool, mac_b, mac_a, len, sent, 26, ecn);
				emu_meta(ba[i])->prio = emu_meta(bb[i])->prio = prio;
				emu_meta(ba[i])->in_port = emu_meta(bb[i])->in_port = in;
				if (run_hops && odd > 2) {
					/* a run of fabric hops: their ingress is hop_in */
					emu_meta(ba[i])->flags |= EMU_META_HOP;
					emu_meta(bb[i])->flags |= EMU_META_HOP;
					emu_meta(ba[i])->hop_in = emu_meta(bb[i])->hop_in = run_in;
					emu_meta(ba[i])->in_port = emu_meta(bb[i])->in_port =
						(uint16_t)(BURST_RND() % 4);
				} else if (run && odd == 1) {
					emu_meta(ba[i])->flags |= EMU_META_SNAP;
					emu_meta(bb[i])->flags |= EMU_META_SNAP;
					emu_meta(ba[i])->wire_len = len + 512;
					emu_meta(bb[i])->wire_len = len + 512;
				} else if (run && odd == 2) {
					emu_meta(ba[i])->flags |= EMU_META_HOP;
					emu_meta(bb[i])->flags |= EMU_META_HOP;
					emu_meta(ba[i])->hop_in = emu_meta(bb[i])->hop_in =
						(uint16_t)(BURST_RND() % 4);
				}
				sent++;
			}
			runs += run;
			/* one burst in eight is stamped up to 2 us ahead of the next dequeue, which
			 * then finds packets that have not arrived yet; one in sixteen comes with a
			 * PFC pause of its priorities on the port (0 quanta: resume) */
			t_in = t + (BURST_RND() % 8 == 0 ? BURST_RND() % 2000 : 0);
			if (BURST_RND() % 16 == 0) {
				uint16_t quanta[EMU_TM_N_PRIO] = { 0 };

				quanta[0] = quanta[3] = (uint16_t)(BURST_RND() % 4 == 0 ? 0 :
								   BURST_RND() % 64);
				emu_tm_pause_rx(a, port, t, EMU_TM_MACCTL_OPCODE_PFC, 1u << 3 | 1u,
						quanta, &ra);
				emu_tm_pause_rx(b, port, t, EMU_TM_MACCTL_OPCODE_PFC, 1u << 3 | 1u,
						quanta, &rb);
				pauses++;
			}
			for (i = 0, na = 0; i < n; i++)
				na += emu_tm_enqueue(a, port, ba[i], t_in, &ra);
			if (it % 2 == 0) {
				nb = emu_tm_enqueue_burst(b, port, bb, (uint16_t)n, t_in, &rb);
			} else {
				/* the runner's entry: the run ends at a packet for another port
				 * (here one in four bursts), the rest goes in after it */
				unsigned int stop = BURST_RND() % 4 == 0 ? BURST_RND() % n : n, k;
				uint64_t before = emu_tm_port_ctrs(b, port)[EMU_TM_CTR_ENQ_PKTS];

				for (i = 0; i < n; i++)
					emu_meta(bb[i])->out_port = i == stop ? (port + 1) % 3 : port;
				k = emu_tm_enqueue_port_run(b, port, bb, (uint16_t)n, t_in, &rb);
				assert_int_equal(k, stop);
				if (stop < n) {
					emu_meta(bb[stop])->out_port = port;
					k += emu_tm_enqueue_port_run(b, port, bb + stop,
								     (uint16_t)(n - stop), t_in,
								     &rb);
				}
				assert_int_equal(k, n);
				nb = (unsigned int)(emu_tm_port_ctrs(b, port)[EMU_TM_CTR_ENQ_PKTS] -
						    before);
			}
			assert_int_equal(na, nb);
			queued += na;
			pair_same(a, b, 3, t_in);
			if (t_in > t)
				burst_take(a, &ra, b, &rb, t + BURST_RND() % (t_in - t + 1), &left,
					   3);
			/* a burst (about 13 us of link time) to each port every 13.5 us on average:
			 * queues build up and drain */
			t = t_in + BURST_RND() % 9000;
			burst_take(a, &ra, b, &rb, t, &left, 3);
		}
		burst_take(a, &ra, b, &rb, UINT64_MAX / 2, &left, 3);
		pair_end(a, b, 3, 0, totals, &drops);
	}
	print_message("burst enqueue: %u bursts of one priority from one ingress, %u pauses\n",
		      runs, pauses);
	print_message("burst enqueue: %u frames, %u queued, %" PRIu64 " dropped (queue full %"
		      PRIu64 ", buffer full %" PRIu64 ", headroom %" PRIu64 "), %" PRIu64
		      " into headroom, %" PRIu64 " ECN marks, %" PRIu64 " XOFF sent: same\n",
		      sent, queued,
		      totals[EMU_TM_CTR_DROP_QUEUE_FULL] + totals[EMU_TM_CTR_DROP_BUFFER_FULL] +
			      totals[EMU_TM_CTR_DROP_HEADROOM_OVERFLOW],
		      totals[EMU_TM_CTR_DROP_QUEUE_FULL], totals[EMU_TM_CTR_DROP_BUFFER_FULL],
		      totals[EMU_TM_CTR_DROP_HEADROOM_OVERFLOW], totals[EMU_TM_CTR_HEADROOM_PKTS],
		      totals[EMU_TM_CTR_ECN_MARKED], totals[EMU_TM_CTR_PFC_TX_XOFF]);
	assert_int_equal(left, queued);
	assert_true(totals[EMU_TM_CTR_DROP_QUEUE_FULL] > 0);
	assert_true(totals[EMU_TM_CTR_HEADROOM_PKTS] > 0);
	assert_true(totals[EMU_TM_CTR_ECN_MARKED] > 0);
	assert_true(totals[EMU_TM_CTR_PFC_TX_XOFF] > 0);
}

/*
 * emu_tm_enqueue_grouped() against emu_tm_advance() + emu_tm_enqueue() packet by packet: two
 * TMs with the same configuration (ports 0 and 1 real, with PFC and headroom on priority 3;
 * ports 2-4 links with buffers of their own, ECN at dequeue, port 4 static, port 1 a real port
 * the grouped call must refuse) get the same random bursts at one instant each (lengths,
 * priorities, ingresses mostly one per burst, links mostly 2-4), one packet at a time in A, in
 * B through the grouped call (packet by packet when it refuses), with the same PAUSE frames on
 * the links and the same dequeues and PFC collections in between. Everything that leaves, every
 * counter and every PFC frame must be the same, the grouped call must have taken some bursts
 * and refused others, and the traffic must have reached XOFF and ECN marks on the links.
 */
static void
grouped_cfg(struct emu_tm_cfg *cfg)
{
	unsigned int i;

	cfg->buffer.total_bytes = 64 * 1024;
	cfg->buffer.dynamic = burst_mode == 0;
	cfg->buffer.alpha = 1;
	cfg->buffer.cell_bytes = 256;
	for (i = 0; i < 5; i++) {
		cfg->ports[i].queue_pkts = 64;
		cfg->ports[i].limit_bytes = 24 * 1024;
		cfg->ports[i].queue_limit_bytes = 16 * 1024;
		cfg->ports[i].headroom_bytes = 8 * 1024;
		cfg->ports[i].lossless_mask = 1u << 3;
		cfg->ports[i].pfc.enabled = i < 2;
		cfg->ports[i].pfc.xoff_bytes = 16 * 1024;
		cfg->ports[i].pfc.xon_bytes = 8 * 1024;
		cfg->ports[i].own_buffer = i >= 2;
		cfg->ports[i].ecn.enabled = i >= 2;
		cfg->ports[i].ecn.kmin_bytes = 6 * 1024;
		cfg->ports[i].ecn.kmax_bytes = 12 * 1024;
		cfg->ports[i].ecn.pmax = 0.5;
		cfg->ports[i].delay_ns = i >= 2 ? 700 : 0;
	}
	cfg->ports[2].scheduler = EMU_TM_SCHED_DWRR;
	cfg->ports[2].weights[0] = 1;
	cfg->ports[2].weights[3] = 2;
}


static void
test_enqueue_grouped_same(void **state)
{
	uint64_t rs = 0x2545F4914F6CDD1DULL, t = 1000, totals[EMU_TM_CTR_MAX] = { 0 };
	static const uint16_t quanta[EMU_TM_N_PRIO] = { 0, 0, 0, 40, 0, 0, 0, 0 };
	struct emu_rng ra, rb;
	unsigned int mode, it, i, p, sent = 0, left = 0, grouped = 0, refused = 0;
	uint64_t drops = 0, xoff = 0;

	(void)state;
	for (mode = 0; mode < 2; mode++) {
		struct emu_tm *a, *b;

		burst_mode = mode;
		tm_pair(5, grouped_cfg, 9, &a, &b, &ra, &rb);
		for (it = 0; it < 4000; it++) {
			struct rte_mbuf *ba[32], *bb[32];
			uint16_t ports[32];
			unsigned int n;
			uint8_t prio = (BURST_RND() % 4) ? 3 : 0;
			uint16_t in = (uint16_t)(BURST_RND() % 2);

			n = 1 + BURST_RND() % 32;
			for (i = 0; i < n; i++) {
				uint32_t len = 74 + 4 * (BURST_RND() % 300);
				uint8_t ecn = (uint8_t)(1 + BURST_RND() % 2);

				ba[i] = test_roce_frame(pool, mac_b, mac_a, len, sent, 26, ecn);
				bb[i] = test_roce_frame(pool, mac_b, mac_a, len, sent, 26, ecn);
				/* now and then a second priority, ingress or a real port */
				emu_meta(ba[i])->prio = emu_meta(bb[i])->prio =
					BURST_RND() % 50 ? prio : (uint8_t)(3 - prio);
				emu_meta(ba[i])->in_port = emu_meta(bb[i])->in_port =
					BURST_RND() % 50 ? in : (uint16_t)(1 - in);
				ports[i] = (uint16_t)(BURST_RND() % 100 ? 2 + BURST_RND() % 3 : 1);
				sent++;
			}
			for (i = 0; i < n; i++) {
				emu_tm_advance(a, ports[i], t, &ra);
				emu_tm_enqueue(a, ports[i], ba[i], t, &ra);
			}
			if (emu_tm_enqueue_grouped(b, ports, bb, (uint16_t)n, t, &rb)) {
				grouped++;
			} else {
				refused++;
				for (i = 0; i < n; i++) {
					emu_tm_advance(b, ports[i], t, &rb);
					emu_tm_enqueue(b, ports[i], bb[i], t, &rb);
				}
			}
			pair_same(a, b, 5, t);
			/* a pause of priority 3 on a link now and then (PFC from its far end) */
			if (BURST_RND() % 16 == 0) {
				uint16_t l = (uint16_t)(2 + BURST_RND() % 3);

				emu_tm_pause_rx(a, l, t, EMU_TM_MACCTL_OPCODE_PFC, 1u << 3, quanta, &ra);
				emu_tm_pause_rx(b, l, t, EMU_TM_MACCTL_OPCODE_PFC, 1u << 3, quanta, &rb);
			}
			t += 1 + BURST_RND() % 12000;
			burst_take(a, &ra, b, &rb, t, &left, 5);
		}
		burst_take(a, &ra, b, &rb, UINT64_MAX / 2, &left, 5);
		for (p = 0; p < 2; p++)
			xoff += emu_tm_port_ctrs(a, (uint16_t)p)[EMU_TM_CTR_PFC_TX_XOFF];
		pair_end(a, b, 5, 2, totals, &drops);
	}
	print_message("grouped enqueue: %u frames, %u bursts grouped, %u refused, links: %" PRIu64
		      " ECN marks, %" PRIu64 " dropped; %" PRIu64 " XOFF sent: same\n", sent,
		      grouped, refused, totals[EMU_TM_CTR_ECN_MARKED],
		      totals[EMU_TM_CTR_DROP_QUEUE_FULL], xoff);
	assert_true(grouped > 500 && refused > 500);
	assert_true(totals[EMU_TM_CTR_ECN_MARKED] > 0);
	assert_true(xoff > 0);
	assert_int_equal(left + drops, sent);
}

/*
 * emu_tm_arrive() against emu_tm_advance() + emu_tm_enqueue(): two TMs with the same
 * configuration (grouped_cfg(): real ports 0 and 1 with PFC and headroom, links 2-4 with
 * buffers of their own and ECN at dequeue; port 2 under DWRR) get the same packets one at a
 * time, each at its own time (mostly a few ns apart, now and then a gap that lets the queues
 * drain), to random ports, priorities and ingresses, with the same PAUSE frames, dequeues and
 * PFC collections in between; A through the two calls, B through emu_tm_arrive(). Everything
 * that leaves, every counter and PFC frame must be the same, and the traffic must have
 * reached drops, headroom, XOFF and ECN marks.
 */
/* Now and then (1 in 64) the same PFC pause of priority 3 at @p t on a random port of both. */
static void
pair_pause_maybe(struct emu_tm *a, struct emu_rng *ra, struct emu_tm *b, struct emu_rng *rb,
		 uint64_t t, uint64_t *rsp)
{
	static const uint16_t quanta[EMU_TM_N_PRIO] = { 0, 0, 0, 30, 0, 0, 0, 0 };
	uint64_t rs = *rsp;

	if (BURST_RND() % 64 == 0) {
		uint16_t l = (uint16_t)(BURST_RND() % 5);

		emu_tm_pause_rx(a, l, t, EMU_TM_MACCTL_OPCODE_PFC, 1u << 3, quanta, ra);
		emu_tm_pause_rx(b, l, t, EMU_TM_MACCTL_OPCODE_PFC, 1u << 3, quanta, rb);
	}
	*rsp = rs;
}

/* The end of an arrive test: every frame accounted, and the traffic reached drops, headroom,
 * ECN marks, XOFF and XON. */
static void
pair_report(const char *what, unsigned int sent, unsigned int left, uint64_t drops,
	    const uint64_t totals[EMU_TM_CTR_MAX])
{
	print_message("%s: %u frames, %" PRIu64 " dropped, %" PRIu64 " into headroom, %" PRIu64
		      " ECN marks, %" PRIu64 " XOFF, %" PRIu64 " XON sent: same\n", what, sent, drops,
		      totals[EMU_TM_CTR_HEADROOM_PKTS], totals[EMU_TM_CTR_ECN_MARKED],
		      totals[EMU_TM_CTR_PFC_TX_XOFF], totals[EMU_TM_CTR_PFC_TX_XON]);
	assert_int_equal(left + drops, sent);
	assert_true(drops > 0);
	assert_true(totals[EMU_TM_CTR_HEADROOM_PKTS] > 0);
	assert_true(totals[EMU_TM_CTR_ECN_MARKED] > 0);
	assert_true(totals[EMU_TM_CTR_PFC_TX_XOFF] > 0 && totals[EMU_TM_CTR_PFC_TX_XON] > 0);
}

static void
test_arrive_same(void **state)
{
	uint64_t rs = 0x853C49E6748FEA9BULL, t = 1000, totals[EMU_TM_CTR_MAX] = { 0 };
	struct emu_rng ra, rb;
	unsigned int mode, it, sent = 0, left = 0;
	uint64_t drops = 0;

	(void)state;
	for (mode = 0; mode < 2; mode++) {
		struct emu_tm *a, *b;

		burst_mode = mode;
		tm_pair(5, grouped_cfg, 5, &a, &b, &ra, &rb);
		emu_tm_set_trace(a, mode == 1);
		emu_tm_set_trace(b, mode == 1);
		for (it = 0; it < 60000; it++) {
			uint32_t len = 74 + 4 * (BURST_RND() % 300);
			uint8_t ecn = (uint8_t)(1 + BURST_RND() % 2);
			uint16_t port = (uint16_t)(BURST_RND() % 5);
			struct rte_mbuf *ma = test_roce_frame(pool, mac_b, mac_a, len, sent, 26, ecn);
			struct rte_mbuf *mb = test_roce_frame(pool, mac_b, mac_a, len, sent, 26, ecn);

			emu_meta(ma)->prio = emu_meta(mb)->prio = (BURST_RND() % 8) ? 3 : 0;
			emu_meta(ma)->in_port = emu_meta(mb)->in_port = (uint16_t)(BURST_RND() % 5);
			sent++;
			emu_tm_advance(a, port, t, &ra);
			emu_tm_enqueue(a, port, ma, t, &ra);
			emu_tm_arrive(b, port, mb, t, &rb);
			pair_same(a, b, 5, t);
			pair_pause_maybe(a, &ra, b, &rb, t, &rs);
			/* tens of ns apart (queues build: 8 Gb/s ports), now and then a pause to drain */
			t += BURST_RND() % 512 ? BURST_RND() % 80 : BURST_RND() % 200000;
			if (BURST_RND() % 8 == 0)
				burst_take(a, &ra, b, &rb, t, &left, 5);
		}
		burst_take(a, &ra, b, &rb, UINT64_MAX / 2, &left, 5);
		pair_end(a, b, 5, 0, totals, &drops);
	}
	pair_report("arrive", sent, left, drops, totals);
}

/*
 * emu_tm_arrive_run() against emu_tm_advance() + emu_tm_enqueue() at each packet's own time:
 * runs of 1-24 packets into one port, each later than the one before (0-60 ns), mostly of one
 * priority, from random ingresses (a real port or another port as a fabric hop), into ports
 * that are lossless with PFC or not, with ECN or not, with a shared or an own buffer, a delay
 * and DWRR on one; one run in four mixes in other priorities; now and then a pause, and
 * dequeues between runs. The runs go from calm (the
 * loop for calm runs) to queues that mark, drop, take headroom, cross XOFF and XON.
 */
static void
test_arrive_run_same(void **state)
{
	uint64_t rs = 0x6A09E667F3BCC909ULL, t = 1000, totals[EMU_TM_CTR_MAX] = { 0 };
	struct emu_rng ra, rb;
	unsigned int mode, it, i, sent = 0, left = 0;
	uint64_t drops = 0;

	(void)state;
	for (mode = 0; mode < 2; mode++) {
		struct emu_tm *a, *b;

		burst_mode = mode;
		tm_pair(5, grouped_cfg, 11, &a, &b, &ra, &rb);
		emu_tm_set_trace(a, mode == 1);
		emu_tm_set_trace(b, mode == 1);
		for (it = 0; it < 6000; it++) {
			struct rte_mbuf *run[24];
			uint16_t port = (uint16_t)(BURST_RND() % 5);
			unsigned int n = 1 + BURST_RND() % 24;
			uint8_t prio = BURST_RND() % 8 ? 3 : 0;
			bool mixed = BURST_RND() % 4 == 0;
			uint64_t ti = t;

			for (i = 0; i < n; i++) {
				uint32_t len = 74 + 4 * (BURST_RND() % 300);
				uint8_t ecn = (uint8_t)(1 + BURST_RND() % 2);
				uint16_t hop = (uint16_t)(BURST_RND() % 5);
				struct rte_mbuf *ma = test_roce_frame(pool, mac_b, mac_a, len, sent, 26, ecn);
				struct rte_mbuf *mb = test_roce_frame(pool, mac_b, mac_a, len, sent, 26, ecn);

				emu_meta(ma)->prio = emu_meta(mb)->prio =
					!mixed || BURST_RND() % 8 ? prio : (uint8_t)(BURST_RND() % 8);
				emu_meta(ma)->in_port = emu_meta(mb)->in_port = (uint16_t)(BURST_RND() % 2);
				if (hop >= 2 && hop != port) { /* from a link, as a fabric hands it on */
					emu_meta(ma)->hop_in = emu_meta(mb)->hop_in = hop;
					emu_meta(ma)->flags |= EMU_META_HOP;
					emu_meta(mb)->flags |= EMU_META_HOP;
				}
				emu_meta(mb)->ts_ns = ti;
				sent++;
				emu_tm_advance(a, port, ti, &ra);
				emu_tm_enqueue(a, port, ma, ti, &ra);
				run[i] = mb;
				ti += BURST_RND() % 61;
			}
			emu_tm_arrive_run(b, port, run, (uint16_t)n, &rb);
			pair_same(a, b, 5, ti);
			t = ti;
			pair_pause_maybe(a, &ra, b, &rb, t, &rs);
			/* now and then a long gap: the queues drain, the runs are calm again */
			t += BURST_RND() % 4 ? BURST_RND() % 400 : BURST_RND() % 400000;
			if (BURST_RND() % 4 == 0)
				burst_take(a, &ra, b, &rb, t, &left, 5);
		}
		burst_take(a, &ra, b, &rb, UINT64_MAX / 2, &left, 5);
		pair_end(a, b, 5, 0, totals, &drops);
	}
	pair_report("arrive runs", sent, left, drops, totals);
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
		cmocka_unit_test(test_ecn_red_ramp),
		cmocka_unit_test(test_ecn_enqueue_vs_dequeue),
		cmocka_unit_test(test_link_down_up),
		cmocka_unit_test(test_pfc_storm),
		cmocka_unit_test(test_pfc_watchdog),
		cmocka_unit_test(test_red_fixed_point),
		cmocka_unit_test(test_enqueue_burst_same),
		cmocka_unit_test(test_runs_future_arrival),
		cmocka_unit_test(test_enqueue_grouped_same),
		cmocka_unit_test(test_arrive_same),
		cmocka_unit_test(test_arrive_run_same),
	};

	emu_rng_seed(&rng, 1, 1);
	pool = test_eal_pool("test_tm", 8192);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
