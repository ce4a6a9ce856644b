/* SPDX-License-Identifier: BSD-3-Clause */
/* Incast load from virtual senders: exact schedules on the virtual clock, queue growth at the
 * excess rate, tail drop, sink frames, profile changes at exact times, conservation, no leaks. */
#include <math.h>

#include "test_common.h"
#include "lib/ctl/emu_profile.h"
#include "lib/tm/emu_incast_host.h"

#define POOL_N 4096

static struct rte_mempool *pool;

struct sink_log {
	unsigned int n;
	uint64_t ts[64];
};

/* Run the clock to @p until, transmitting (and logging port @p log_port's) released frames. */
static void
run_until(struct emu_switch *sw, uint64_t until, uint16_t log_port, struct sink_log *log)
{
	struct rte_mbuf **pkts;
	uint64_t t;
	uint16_t p, n, i;

	while ((t = emu_switch_next_event_ns(sw)) <= until) {
		for (p = 0; p < 2; p++) {
			n = emu_switch_tx_prepare(sw, p, t, &pkts);
			for (i = 0; i < n; i++) {
				if (log != NULL && p == log_port && log->n < 64)
					log->ts[log->n++] = emu_meta(pkts[i])->ts_ns;
				rte_pktmbuf_free(pkts[i]);
			}
			emu_switch_tx_done(sw, p, n);
		}
	}
}

static int64_t
ctr(const struct emu_switch *sw, const char *name)
{
	return emu_switch_incast_counter(sw, "x", name);
}

static uint64_t
emu_port_stats_tx(const struct emu_switch *sw)
{
	struct emu_port_stats a, b;

	emu_switch_port_stats(sw, 0, &a);
	emu_switch_port_stats(sw, 1, &b);
	return a.tx_pkts + b.tx_pkts;
}

static void
check_conservation(const struct emu_switch *sw)
{
	struct emu_conservation c;

	emu_switch_conservation(sw, &c);
	assert_int_equal(c.unaccounted, 0);
}

static void
finish(struct emu_switch *sw, struct emu_pipeline *pl)
{
	check_conservation(sw);
	emu_switch_free(sw);
	emu_pipeline_free(pl);
	assert_int_equal(rte_mempool_avail_count(pool), POOL_N);
}

/*
 * 2 senders at 100 Gb/s of 1000-byte frames (wire 8192 bits) into a 100 Gb/s port: arrivals
 * every 40.96 ns, starts every 81.92 ns. At T = 2048 ns x m: 50m + 1 generated, 25m + 1
 * started, so the queue holds exactly 25m frames: it grows at the excess rate (100 Gb/s =
 * 25 frames of 1024 wire bytes per 2048 ns). With a 100 KB queue limit it then tail-drops.
 */
static void
test_incast_queue_growth(void **state)
{
	struct emu_pipeline *pl = test_pipeline(
		"{\"ports\": [{\"name\": \"a\"}, {\"name\": \"b\"}],"
		" \"tm\": {\"ports\": [{\"port\": \"b\", \"rate_gbps\": 100, \"buffer_kb\": 100}]},"
		" \"incast\": [{\"name\": \"x\", \"port\": \"b\", \"priority\": 0, \"senders\": 2,"
		" \"rate_gbps\": 100, \"frame_bytes\": 1000}]}");
	struct emu_switch *sw = test_switch(pool, pl);
	struct emu_tm_prio_stats ps;
	struct emu_conservation c;
	unsigned int m;

	(void)state;
	for (m = 1; m <= 4; m++) {
		run_until(sw, 2048 * m, 0, NULL);
		emu_tm_prio_stats(emu_switch_tm(sw), 1, 0, 2048 * m, &ps);
		assert_int_equal(ps.queue_pkts, 25 * m);
		assert_int_equal(ps.queue_bytes, 25000 * m);
		assert_int_equal(ctr(sw, "generated"), 50 * m + 1);
		assert_int_equal(ctr(sw, "bytes"), 1000 * (50 * m + 1));
		/* frames 0 .. 25m - 1 have finished by 2048m; 25m is on the wire */
		assert_int_equal(ctr(sw, "absorbed"), 25 * m);
		assert_int_equal(ctr(sw, "tm_dropped"), 0);
		emu_switch_conservation(sw, &c);
		assert_int_equal(c.created, 50 * m + 1);
		assert_int_equal(c.consumed, 25 * m);
		assert_int_equal(c.held, 25 * m + 1);
		assert_int_equal(c.unaccounted, 0);
	}
	/* 102 frames fill 100 KB (102400 B); from then on one in two arrivals is dropped */
	run_until(sw, 2048 * 40, 0, NULL);
	emu_tm_prio_stats(emu_switch_tm(sw), 1, 0, 2048 * 40, &ps);
	assert_true(ps.queue_pkts == 101 || ps.queue_pkts == 102);
	assert_int_equal(ps.max_queue_bytes, 102000);
	assert_int_equal(ctr(sw, "generated"), 50 * 40 + 1);
	assert_int_equal(ctr(sw, "tm_dropped"),
			 emu_tm_port_ctrs(emu_switch_tm(sw), 1)[EMU_TM_CTR_DROP_QUEUE_FULL]);
	assert_int_equal(ctr(sw, "generated"),
			 ctr(sw, "tm_dropped") + (int64_t)ps.queue_pkts + ctr(sw, "absorbed") + 1);
	assert_int_equal(ctr(sw, "absorbed"), 25 * 40);
	assert_int_equal(ctr(sw, "tm_dropped"), 50 * 40 + 1 - 1000 - 1 - (int64_t)ps.queue_pkts);
	assert_int_equal(ctr(sw, "incast_nombuf"), 0);
	assert_int_equal(emu_port_stats_tx(sw), 0);
	finish(sw, pl);
}

/* Step the source frame by frame; return the arrival times of its first @p n frames. */
static void
next_times(struct emu_switch *sw, unsigned int n, uint64_t *out, struct sink_log *log)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		out[i] = emu_switch_incast_next_ns(sw, "x");
		run_until(sw, out[i], 0, log);
	}
}

/*
 * on_off: 1 sender at 10 Gb/s, 1000-byte frames (819.2 ns each), 2 us on, 3 us off: frames at
 * 0, 819, 1638 (2457 is past the on time), then the next cycle at 5000. Sent to sink port a:
 * each leaves a at its arrival + 82 ns (81.92 ns of 100 Gb/s wire time, rounded up).
 */
static void
test_incast_on_off_sink(void **state)
{
	struct emu_pipeline *pl = test_pipeline(
		"{\"ports\": [{\"name\": \"a\"}, {\"name\": \"b\"}],"
		" \"incast\": [{\"name\": \"x\", \"port\": \"b\", \"rate_gbps\": 10,"
		" \"frame_bytes\": 1000, \"mode\": \"on_off\", \"on_us\": 2, \"off_us\": 3,"
		" \"sink_port\": \"a\"}]}");
	static const uint64_t want[9] = { 0, 819, 1638, 5000, 5819, 6638, 10000, 10819, 11638 };
	struct emu_switch *sw = test_switch(pool, pl);
	struct sink_log log;
	struct emu_port_stats a;
	uint64_t got[9];
	unsigned int i;

	(void)state;
	memset(&log, 0, sizeof(log));
	next_times(sw, 9, got, &log);
	for (i = 0; i < 9; i++)
		assert_int_equal(got[i], want[i]);
	assert_int_equal(emu_switch_incast_next_ns(sw, "x"), 15000);
	run_until(sw, 14999, 0, &log);
	assert_int_equal(log.n, 9);
	for (i = 0; i < 9; i++)
		assert_int_equal(log.ts[i], want[i] + 82);
	assert_int_equal(ctr(sw, "generated"), 9);
	assert_int_equal(ctr(sw, "sink_tx"), 9);
	assert_int_equal(ctr(sw, "absorbed"), 0);
	emu_switch_port_stats(sw, 0, &a);
	assert_int_equal(a.tx_pkts, 9);
	assert_int_equal(a.tx_bytes, 9000);
	finish(sw, pl);
}

/*
 * bursts: 2 senders at 10 Gb/s, message 2 KB = ceil(2048 / 1000) = 3 frames each, every 10 us:
 * 6 frames 409.6 ns apart from each period's start, then nothing until the next period.
 */
static void
test_incast_bursts(void **state)
{
	struct emu_pipeline *pl = test_pipeline(
		"{\"ports\": [{\"name\": \"a\"}, {\"name\": \"b\"}],"
		" \"incast\": [{\"name\": \"x\", \"port\": \"b\", \"senders\": 2,"
		" \"rate_gbps\": 10, \"frame_bytes\": 1000, \"mode\": \"bursts\","
		" \"message_kb\": 2, \"period_us\": 10}]}");
	static const uint64_t want[13] = { 0,     409,   819,   1228,  1638,  2048, 10000,
					   10409, 10819, 11228, 11638, 12048, 20000 };
	struct emu_switch *sw = test_switch(pool, pl);
	uint64_t got[13];
	unsigned int i;

	(void)state;
	next_times(sw, 13, got, NULL);
	for (i = 0; i < 13; i++)
		assert_int_equal(got[i], want[i]);
	assert_int_equal(ctr(sw, "generated"), 13);
	run_until(sw, 20081, 0, NULL);
	assert_int_equal(ctr(sw, "absorbed"), 12);
	run_until(sw, 20082, 0, NULL); /* 20000 + 81.92 ns of wire time, rounded up */
	assert_int_equal(ctr(sw, "absorbed"), 13);
	assert_int_equal(ctr(sw, "generated"), 13);
	finish(sw, pl);
}

/*
 * A profile (t0 = 1 ms) enables the source at +10 us (frames every 819.2 ns at 10 Gb/s), halves
 * its rate at +20 us (the pattern restarts there: every 1638.4 ns) and disables it at +29 us.
 */
static void
test_incast_profile(void **state)
{
	struct emu_pipeline *pl = test_pipeline(
		"{\"ports\": [{\"name\": \"a\"}, {\"name\": \"b\"}],"
		" \"incast\": [{\"name\": \"x\", \"port\": \"b\", \"rate_gbps\": 10,"
		" \"frame_bytes\": 1000, \"enabled\": false}]}");
	struct emu_switch *sw = test_switch(pool, pl);
	json_error_t jerr;
	json_t *doc = json_loads("{\"phases\": ["
				 "{\"at_s\": 0.00001, \"incast\": {\"x\": {\"enabled\": true}}},"
				 "{\"at_s\": 0.00002, \"incast\": {\"x\": {\"rate_gbps\": 5}}},"
				 "{\"at_s\": 0.000029, \"incast\":"
				 " {\"x\": {\"enabled\": false}}}]}",
				 0, &jerr);
	struct emu_profile *prof = NULL;
	struct emu_err err;

	(void)state;
	assert_non_null(doc);
	assert_int_equal(emu_profile_from_json(doc, sw, &prof, &err), 0);
	emu_switch_set_program(sw, emu_profile_prog(prof), 1000000);
	assert_int_equal(emu_switch_incast_next_ns(sw, "x"), UINT64_MAX);
	run_until(sw, 1009999, 0, NULL);
	assert_int_equal(ctr(sw, "generated"), 0);
	run_until(sw, 1010000, 0, NULL);
	assert_int_equal(ctr(sw, "generated"), 1);
	assert_int_equal(emu_switch_incast_next_ns(sw, "x"), 1010819);
	/* k = 0 .. 12 before +20 us (12 x 819.2 = 9830.4) */
	run_until(sw, 1019999, 0, NULL);
	assert_int_equal(ctr(sw, "generated"), 13);
	run_until(sw, 1020000, 0, NULL);
	assert_int_equal(ctr(sw, "generated"), 14);
	assert_int_equal(emu_switch_incast_next_ns(sw, "x"), 1021638);
	/* k = 0 .. 5 at the new rate before +29 us; k = 6 (1029830) never comes */
	run_until(sw, UINT64_MAX - 1, 0, NULL);
	assert_int_equal(ctr(sw, "generated"), 19);
	assert_int_equal(ctr(sw, "absorbed"), 19);
	assert_int_equal(emu_switch_incast_next_ns(sw, "x"), UINT64_MAX);
	assert_int_equal(emu_profile_next_ns(prof), UINT64_MAX);
	emu_profile_free(prof);
	json_decref(doc);
	finish(sw, pl);
}

/* Profile values are checked at load, with the JSON path first. */
static void
test_incast_profile_invalid(void **state)
{
	struct emu_pipeline *pl = test_pipeline(
		"{\"ports\": [{\"name\": \"a\"}, {\"name\": \"b\"}],"
		" \"incast\": [{\"name\": \"x\", \"port\": \"b\", \"rate_gbps\": 10,"
		" \"frame_bytes\": 1000, \"mode\": \"bursts\", \"message_kb\": 100,"
		" \"period_us\": 100}]}");
	struct emu_switch *sw = test_switch(pool, pl);
	json_error_t jerr;
	json_t *doc = json_loads("{\"phases\": [{\"at_s\": 1, \"incast\": {\"x\":"
				 " {\"rate_gbps\": 1}}}]}", 0, &jerr);
	struct emu_profile *prof = NULL;
	struct emu_err err;

	(void)state;
	assert_int_not_equal(emu_profile_from_json(doc, sw, &prof, &err), 0);
	assert_true(strncmp(err.msg, "phases[0].incast.x.rate_gbps: a message of 103 frames", 51) ==
		    0);
	json_decref(doc);
	finish(sw, pl);
}

/*
 * ECN RED ramp with the queue held at fixed depths by incast load. All frames are 1002 bytes
 * (8208 wire bits), the link runs at 8.208 Gb/s: exactly one frame per 1000 ns. The incast
 * source (on_off, 9 us on / 1 us off at the link rate) fills 9 of every 10 slots; a real ECT
 * RoCE frame fills the 10th. Arrivals then equal departures, and every frame that starts leaves
 * exactly the backlog D behind it (Not-ECT frames added at a band's start). Marking at dequeue
 * uses that length: p = pmax (D x 1002 - kmin) / (kmax - kmin). Per band the marked fraction
 * of the real frames must be within 3 binomial sigma of p (exactly 0 below kmin, 1 above kmax).
 */
static uint8_t ecn_band_of[128 * 1024]; /* band of each real ECT frame by PSN; 0xff: not counted */

/* Transmit what is released by @p until, counting per band the real ECT frames and their marks. */
static void
ecn_drain(struct emu_switch *sw, uint64_t until, unsigned int *seen, unsigned int *marked)
{
	struct rte_mbuf **pkts;
	uint64_t te;
	uint16_t k, n, j;

	while ((te = emu_switch_next_event_ns(sw)) <= until) {
		for (k = 0; k < 2; k++) {
			n = emu_switch_tx_prepare(sw, k, te, &pkts);
			for (j = 0; j < n; j++) {
				const uint8_t *f = rte_pktmbuf_mtod(pkts[j], const uint8_t *);
				uint32_t psn = ((uint32_t)f[51] << 16) | ((uint32_t)f[52] << 8) |
					       f[53];

				/* untagged IPv4: ECN in byte 15; BTH PSN in bytes 51-53 */
				if (k == 1 && (f[15] & 3) != 0 && psn < RTE_DIM(ecn_band_of) &&
				    ecn_band_of[psn] != 0xff) {
					seen[ecn_band_of[psn]]++;
					marked[ecn_band_of[psn]] += (f[15] & 3) == 3;
				}
				rte_pktmbuf_free(pkts[j]);
			}
			emu_switch_tx_done(sw, k, n);
		}
	}
}

/*
 * ECN RED ramp with the queue held at fixed depths by incast load. All frames are 1002 bytes
 * (8208 wire bits), the link runs at 8.208 Gb/s: exactly one frame per 1000 ns. The incast
 * source (on_off, 9 us on / 1 us off at the link rate) fills 9 of every 10 slots; a real ECT
 * RoCE frame fills the 10th. Arrivals then equal departures, and every frame that starts leaves
 * exactly the backlog D behind it (Not-ECT frames added at a band's start). Marking at dequeue
 * uses that length: p = pmax (D x 1002 - kmin) / (kmax - kmin). Per band the marked fraction
 * of the real frames must be within 3 binomial sigma of p (exactly 0 below kmin, 1 above kmax).
 * Real frames that would still be queued when the next band's backlog arrives are not counted.
 */
static void
test_incast_ecn_bands(void **state)
{
	struct emu_pipeline *pl = test_pipeline(
		"{\"ports\": [{\"name\": \"a\"}, {\"name\": \"b\"}],"
		" \"ingress\": [{\"type\": \"parse\", \"trust\": \"dscp\"},"
		" {\"type\": \"forward\"}],"
		" \"tm\": {\"ports\": [{\"port\": \"b\", \"rate_gbps\": 8.208,"
		" \"ecn\": {\"kmin_kb\": 50, \"kmax_kb\": 250, \"pmax\": 0.8}}]},"
		" \"incast\": [{\"name\": \"x\", \"port\": \"b\", \"priority\": 3,"
		" \"rate_gbps\": 8.208, \"frame_bytes\": 1002, \"mode\": \"on_off\","
		" \"on_us\": 9, \"off_us\": 1}]}");
	static const unsigned int depths[] = { 40, 100, 150, 200, 300 };
	const unsigned int n_per_band = 20000;
	const double kmin = 50 * 1024, kmax = 250 * 1024, pmax = 0.8;
	static const uint8_t mac_a[6] = { 2, 0, 0, 0, 0, 0xa }, mac_b[6] = { 2, 0, 0, 0, 0, 0xb };
	struct emu_switch *sw = test_switch(pool, pl);
	unsigned int seen[RTE_DIM(depths)] = { 0 }, marked[RTE_DIM(depths)] = { 0 };
	unsigned int band, i, held = 0, seq = 0, total = 0;
	uint64_t t = 0;

	(void)state;
	memset(ecn_band_of, 0xff, sizeof(ecn_band_of));
	for (band = 0; band < RTE_DIM(depths); band++) {
		struct emu_tm_prio_stats ps;

		/* at a cycle start: the incast frame due now joins first, then the backlog */
		ecn_drain(sw, t - (t > 0), seen, marked);
		while (held < depths[band]) {
			struct rte_mbuf *burst[32];
			unsigned int n = RTE_MIN(32u, depths[band] - held);

			for (i = 0; i < n; i++)
				burst[i] = test_roce_frame(pool, mac_b, mac_a, 1002, seq++, 26, 0);
			emu_switch_rx(sw, 0, burst, (uint16_t)n, t);
			held += n;
		}
		for (i = 0; i < n_per_band; i++) {
			uint64_t ta = t + 9000;
			struct rte_mbuf *m;

			ecn_drain(sw, ta - 1, seen, marked);
			/* it starts D x 1000 ns later: count it if that is within this band */
			if (i + depths[band] / 10 + 2 < n_per_band)
				ecn_band_of[seq] = (uint8_t)band;
			m = test_roce_frame(pool, mac_b, mac_a, 1002, seq++, 26, 2);
			emu_switch_rx(sw, 0, &m, 1, ta);
			if (i == 0) {
				ecn_drain(sw, ta, seen, marked);
				emu_tm_prio_stats(emu_switch_tm(sw), 1, 3, ta, &ps);
				assert_int_equal(ps.queue_bytes, (uint64_t)depths[band] * 1002);
			}
			t += 10000;
		}
	}
	ecn_drain(sw, t + 1000000, seen, marked);
	assert_true(seq < RTE_DIM(ecn_band_of));
	for (band = 0; band < RTE_DIM(depths); band++) {
		double q = (double)depths[band] * 1002, p, sigma, frac;

		if (q <= kmin)
			p = 0;
		else if (q > kmax)
			p = 1;
		else
			p = pmax * (q - kmin) / (kmax - kmin);
		sigma = sqrt(p * (1 - p) / seen[band]);
		frac = (double)marked[band] / seen[band];
		printf("band %u: depth %u frames (%.0f B): %u of %u real ECT frames marked (%.5f), "
		       "RED p %.5f, 3 sigma %.5f\n",
		       band, depths[band], q, marked[band], seen[band], frac, p, 3 * sigma);
		assert_int_equal(seen[band], n_per_band - depths[band] / 10 - 2);
		assert_true(fabs(frac - p) <= 3 * sigma + 1e-12);
		total += seen[band];
	}
	assert_true(total >= 90000);
	finish(sw, pl);
}

/*
 * A late runner (live mode: the lcore descheduled for 1 ms) catches up by generating the
 * frames of the missed time at their past times. Offered 50 Gb/s into a 100 Gb/s port, the
 * queue never holds more than a frame, so nothing may be dropped even with a 16 KB buffer:
 * the generator lets the TM drain as it catches up (it did not, and 1024 frames stamped in the
 * past filled the buffer at once).
 */
static void
test_incast_late_runner(void **state)
{
	struct emu_pipeline *pl = test_pipeline(
		"{\"ports\": [{\"name\": \"a\"}, {\"name\": \"b\"}],"
		" \"tm\": {\"ports\": [{\"port\": \"b\", \"rate_gbps\": 100, \"buffer_kb\": 16}]},"
		" \"incast\": [{\"name\": \"x\", \"port\": \"b\", \"priority\": 0, \"senders\": 1,"
		" \"rate_gbps\": 50, \"frame_bytes\": 1000}]}");
	struct emu_switch *sw = test_switch(pool, pl);
	struct rte_mbuf **pkts;
	uint64_t want;
	unsigned int calls = 0;
	uint16_t p, n;

	(void)state;
	/* frames every 163.84 ns (1024 wire bytes at 50 Gb/s): 0, 163.84, ... up to 1 ms */
	want = (uint64_t)(1000000 / 163.84) + 1;
	do {
		for (p = 0; p < 2; p++) {
			n = emu_switch_tx_prepare(sw, p, 1000000, &pkts);
			rte_pktmbuf_free_bulk(pkts, n);
			emu_switch_tx_done(sw, p, n);
		}
		calls++;
	} while ((uint64_t)ctr(sw, "generated") < want && calls < 100);
	assert_int_equal(ctr(sw, "generated"), want);
	assert_true(calls > 1);	/* the catch-up took several runner calls */
	assert_int_equal(ctr(sw, "tm_dropped"), 0);
	/* all but the frames still on the wire or queued at 1 ms were absorbed */
	assert_true(ctr(sw, "absorbed") >= (int64_t)want - 2);
	run_until(sw, 2000000, 0, NULL);
	finish(sw, pl);
}

/*
 * The closed-loop sender model alone (lib/tm/emu_incast_host.c), every value derived by hand:
 * two senders of 1000-byte frames at 8 Gb/s ((1000 + 24) x 8 = 8192 wire bits: 1024 ns a
 * frame), PFC xoff 3000 / xon 1500 bytes, DCQCN nvidia, CNPs 2 us after the marked frame.
 */
static void
test_incast_hosts_model(void **state)
{
	static struct emu_incast_hosts hs;
	struct emu_incast_cfg c = {
		.senders = 2, .rate_bps = 8000000000ULL, .frame_bytes = 1000, .enabled = true,
		.honour_pfc = true, .dcqcn = EMU_INCAST_DCQCN_NVIDIA, .cnp_delay_ns = 2000,
	};
	struct emu_incast_host_stats st;
	uint64_t t;
	int j, k;

	(void)state;
	emu_incast_hosts_init(&hs, &c, 3000, 1500);
	/* staggered by half a frame time: sender 0 at 0, sender 1 at 512 ns */
	assert_int_equal(emu_incast_hosts_next(&hs, &t), 0);
	assert_int_equal(t, 0);
	assert_int_equal(hs.h[1].next_ns, 512);
	/* sender 0 sends at 0, 1024, 2048, 3072: the fourth frame takes it to 4000 > 3000 bytes */
	for (k = 0; k < 4; k++) {
		t = (uint64_t)k * 1024;
		assert_int_equal(hs.h[0].next_ns, t);
		assert_true(emu_incast_hosts_poll(&hs, 0, 1000, t));
		emu_incast_hosts_check(&hs, 0, t);
	}
	assert_true(hs.h[0].paused);
	assert_int_equal(hs.h[0].next_ns, UINT64_MAX);
	assert_int_equal(hs.h[0].pauses, 1);
	/* departures: 4000 -> 3000 -> 2000 (still paused) -> 1000 < 1500: resumes at 9000 ns */
	emu_incast_hosts_left(&hs, 0, 1000, false, 5000);
	emu_incast_hosts_left(&hs, 0, 1000, false, 6000);
	assert_true(hs.h[0].paused);
	emu_incast_hosts_left(&hs, 0, 1000, false, 9000);
	assert_false(hs.h[0].paused);
	assert_int_equal(hs.h[0].paused_ns, 9000 - 3072);
	assert_int_equal(hs.h[0].next_ns, 9000); /* it would have sent at 4096: now */
	/* a CE-marked departure at 9100 sends a CNP (arrives at 11100); one at 9200 is inside
	 * min_time_between_cnps (4 us) and sends none */
	emu_incast_hosts_left(&hs, 0, 1000, true, 9100);
	emu_incast_hosts_left(&hs, 1, 0, true, 9200); /* sender 1: its own NP pacing: one CNP */
	hs.h[1].queued_bytes = 0;
	emu_incast_hosts_left(&hs, 0, 0, true, 9200);
	assert_int_equal(hs.h[0].cnp_tail - hs.h[0].cnp_head, 1);
	assert_int_equal(hs.h[0].cnp_at[0], 11100);
	assert_int_equal(hs.h[0].marked, 2);
	/* sender 0 sends at 9000 (no CNP yet: line rate) and is due at 10024 */
	assert_true(emu_incast_hosts_poll(&hs, 0, 1000, 9000));
	emu_incast_hosts_check(&hs, 0, 9000);
	assert_int_equal(hs.h[0].next_ns, 10024);
	assert_true(emu_incast_hosts_poll(&hs, 0, 1000, 10024));
	assert_int_equal(hs.h[0].next_ns, 11048);
	assert_true(emu_incast_hosts_poll(&hs, 0, 1000, 11048));
	/* at 12072 it has taken the CNP of 11100: the first CNP starts the monitor grid there,
	 * the cut comes at 11100 + 4000 = 15100; until then the rate is the line rate */
	assert_true(emu_incast_hosts_poll(&hs, 0, 1000, 12072));
	assert_int_equal(hs.h[0].cnps, 1);
	assert_int_equal(hs.h[0].rp.decreases, 0);
	assert_int_equal(hs.h[0].next_ns, 13096);
	assert_true(emu_incast_hosts_poll(&hs, 0, 1000, 13096));
	assert_true(emu_incast_hosts_poll(&hs, 0, 1000, 14120));
	/* at 15144 the cut has happened: Rc = 8000 (1 - alpha / 2) Mb/s; the frame due at
	 * 15144 at the old rate is now due one wire time at Rc after the last (14120) */
	assert_false(emu_incast_hosts_poll(&hs, 0, 1000, 15144));
	assert_int_equal(hs.h[0].rp.decreases, 1);
	{
		double rc = hs.h[0].rp.rc_mbps;
		uint64_t due = (uint64_t)ceil(14120.0 + 8192.0 * 1000.0 / rc);

		assert_true(rc < 8000.0 * 0.6 && rc >= 4000.0);
		assert_int_equal(hs.h[0].next_ns, due);
		assert_true(emu_incast_hosts_poll(&hs, 0, 1000, due));
	}
	emu_incast_host_stats(&hs, 0, 20000, &st);
	assert_int_equal(st.cnps, 1);
	assert_int_equal(st.rate_cuts, 1);
	assert_int_equal(st.pauses, 1);
	assert_int_equal(st.paused_ns, 9000 - 3072);
	assert_true(st.rate_mbps < 5000.0);
	/* sender 1 never sent: its first frame is due at 512 */
	j = emu_incast_hosts_next(&hs, &t);
	assert_int_equal(j, 1);
	assert_int_equal(t, 512);
	/* disabled: every sender stops and keeps its state for the reports */
	c.enabled = false;
	emu_incast_hosts_start(&hs, &c, 30000);
	assert_int_equal(emu_incast_hosts_next(&hs, &t), -1);
	assert_int_equal(hs.h[0].rp.decreases, 1);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_incast_queue_growth),
		cmocka_unit_test(test_incast_late_runner),
		cmocka_unit_test(test_incast_on_off_sink),
		cmocka_unit_test(test_incast_bursts),
		cmocka_unit_test(test_incast_profile),
		cmocka_unit_test(test_incast_profile_invalid),
		cmocka_unit_test(test_incast_ecn_bands),
		cmocka_unit_test(test_incast_hosts_model),
	};

	pool = test_eal_pool("test_incast", POOL_N);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
