/* SPDX-License-Identifier: BSD-3-Clause */
/* The runner (conservation accounting, flooding, emitted frames) and the learning bridge. */
#include "test_common.h"
#include "lib/ctl/emu_profile.h"

static struct rte_mempool *pool;
static const uint8_t mac_a[6] = { 2, 0, 0, 0, 0, 0xa };
static const uint8_t mac_b[6] = { 2, 0, 0, 0, 0, 0xb };
static const uint8_t mac_c[6] = { 2, 0, 0, 0, 0, 0xc };
static const uint8_t bcast[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };

struct tx_log {
	unsigned int n[EMU_MAX_PORTS];
	uint32_t seq[EMU_MAX_PORTS][256];
};

/* Run the switch's clock forward to @p until, transmitting everything released. */
static void
run_until(struct emu_switch *sw, unsigned int n_ports, uint64_t until, struct tx_log *log)
{
	struct rte_mbuf **pkts;
	uint64_t t;
	unsigned int p;
	uint16_t n, i;

	while ((t = emu_switch_next_event_ns(sw)) <= until) {
		for (p = 0; p < n_ports; p++) {
			n = emu_switch_tx_prepare(sw, (uint16_t)p, t, &pkts);
			for (i = 0; i < n; i++) {
				if (log != NULL && log->n[p] < 256)
					log->seq[p][log->n[p]++] = test_frame_seq(pkts[i]);
				rte_pktmbuf_free(pkts[i]);
			}
			emu_switch_tx_done(sw, (uint16_t)p, n);
		}
	}
}

/*
 * emu_switch_next_change_ns(): the next event but departures off a port's delay line, which
 * replay takes late; taken late, the packets leave as they would event by event (same order,
 * same times). With an egress stage a departure is an event like any other.
 */
static void
test_next_change_split(void **state)
{
	static const char *const pipe =
		"{\"ports\": [{\"name\": \"a\"}, {\"name\": \"b\"}],"
		" \"ingress\": [{\"type\": \"parse\"}, {\"type\": \"forward\"}],"
		" \"tm\": {\"ports\": [{\"port\": \"b\", \"rate_gbps\": 1, \"delay_us\": 100}]}}";
	struct emu_pipeline *pl = test_pipeline(pipe);
	struct emu_switch *late = test_switch(pool, pl), *exact = test_switch(pool, pl);
	uint64_t wire_ns, t, ts_exact[3], chg;
	struct rte_mbuf *burst[3], **pkts;
	unsigned int n_wire, i, got = 0;
	uint16_t n;

	(void)state;
	for (i = 0; i < 3; i++)
		burst[i] = test_frame(pool, mac_b, mac_a, 1000, i);
	emu_switch_rx(late, 0, burst, 3, 0);
	for (i = 0; i < 3; i++)
		burst[i] = test_frame(pool, mac_b, mac_a, 1000, i);
	emu_switch_rx(exact, 0, burst, 3, 0);
	/* 1024 B on the wire at 1 Gb/s: 8192 ns each, then 100 us on the line */
	chg = emu_switch_next_change_ns(late, &wire_ns, &n_wire);
	assert_int_equal(chg, 0); /* the first starts now */
	assert_int_equal(wire_ns, UINT64_MAX);
	assert_int_equal(n_wire, 0);
	assert_int_equal(emu_switch_tx_prepare(late, 1, 0, &pkts), 0);
	chg = emu_switch_next_change_ns(late, &wire_ns, &n_wire);
	assert_int_equal(chg, 8192);        /* the second starts */
	assert_int_equal(wire_ns, 108192);  /* the first leaves */
	assert_int_equal(n_wire, 1);
	assert_int_equal(RTE_MIN(chg, wire_ns), emu_switch_next_event_ns(late));
	assert_int_equal(emu_switch_tx_prepare(late, 1, 8192, &pkts), 0);
	assert_int_equal(emu_switch_tx_prepare(late, 1, 16384, &pkts), 0);
	chg = emu_switch_next_change_ns(late, &wire_ns, &n_wire);
	assert_int_equal(chg, UINT64_MAX); /* all three on the line: nothing but departures */
	assert_int_equal(wire_ns, 108192);
	assert_int_equal(n_wire, 1);

	/* event by event */
	while ((t = emu_switch_next_event_ns(exact)) != UINT64_MAX) {
		n = emu_switch_tx_prepare(exact, 1, t, &pkts);
		for (i = 0; i < n; i++) {
			assert_true(got < 3);
			assert_int_equal(test_frame_seq(pkts[i]), got);
			ts_exact[got++] = emu_meta(pkts[i])->ts_ns;
			rte_pktmbuf_free(pkts[i]);
		}
		emu_switch_tx_done(exact, 1, n);
	}
	assert_int_equal(got, 3);
	assert_int_equal(ts_exact[0], 108192);
	/* all at once, late: the same packets, order and times */
	n = emu_switch_tx_prepare(late, 1, 1000000, &pkts);
	assert_int_equal(n, 3);
	for (i = 0; i < 3; i++) {
		assert_int_equal(test_frame_seq(pkts[i]), i);
		assert_int_equal(emu_meta(pkts[i])->ts_ns, ts_exact[i]);
		rte_pktmbuf_free(pkts[i]);
	}
	emu_switch_tx_done(late, 1, n);
	assert_int_equal(emu_switch_next_event_ns(late), UINT64_MAX);
	emu_switch_free(late);
	emu_switch_free(exact);
	emu_pipeline_free(pl);

	/* an egress stage runs as packets leave: no departure is set apart */
	pl = test_pipeline(
		"{\"ports\": [{\"name\": \"a\"}, {\"name\": \"b\"}, {\"name\": \"mon\"}],"
		" \"ingress\": [{\"type\": \"parse\"},"
		" {\"type\": \"forward\", \"mode\": \"pairs\", \"pairs\": [[\"a\", \"b\"]]}],"
		" \"egress\": [{\"type\": \"mirror\", \"name\": \"m\", \"to\": \"mon\"}],"
		" \"tm\": {\"ports\": [{\"port\": \"b\", \"rate_gbps\": 1, \"delay_us\": 100}]}}");
	late = test_switch(pool, pl);
	burst[0] = test_frame(pool, mac_b, mac_a, 1000, 0);
	emu_switch_rx(late, 0, burst, 1, 0);
	assert_int_equal(emu_switch_tx_prepare(late, 1, 0, &pkts), 0);
	chg = emu_switch_next_change_ns(late, &wire_ns, &n_wire);
	assert_int_equal(wire_ns, UINT64_MAX);
	assert_int_equal(n_wire, 0);
	assert_int_equal(chg, emu_switch_next_event_ns(late));
	assert_int_equal(chg, 108192);
	emu_switch_discard_held(late);
	emu_switch_free(late);
	emu_pipeline_free(pl);
}

static void
test_conservation_with_drops(void **state)
{
	struct emu_pipeline *pl = test_pipeline(
		"{\"ports\": [{\"name\": \"a\"}, {\"name\": \"b\"}],"
		" \"ingress\": [{\"type\": \"parse\"}, {\"type\": \"forward\"}],"
		" \"tm\": {\"ports\": [{\"port\": \"b\", \"rate_gbps\": 1, \"buffer_kb\": 10}]}}");
	struct emu_switch *sw = test_switch(pool, pl);
	struct emu_conservation c;
	struct rte_mbuf *burst[32];
	struct tx_log log;
	char line[256];
	unsigned int i;

	(void)state;
	memset(&log, 0, sizeof(log));
	/* 32 x 1000 B at once into a 10 KB queue: 10 fit (10240 B), 22 tail-drop. */
	for (i = 0; i < 32; i++)
		burst[i] = test_frame(pool, mac_b, mac_a, 1000, i);
	emu_switch_rx(sw, 0, burst, 32, 0);
	emu_switch_conservation(sw, &c);
	assert_int_equal(c.rx, 32);
	assert_int_equal(c.drops, 22);
	assert_int_equal(c.held, 10);
	assert_int_equal(c.unaccounted, 0);
	run_until(sw, 2, 5000, &log); /* 1024 B wire = 8192 ns each: none left by 5 us */
	assert_int_equal(log.n[1], 0);
	run_until(sw, 2, UINT64_MAX - 1, &log);
	assert_int_equal(log.n[1], 10);
	for (i = 0; i < 10; i++)
		assert_int_equal(log.seq[1][i], i);
	emu_switch_conservation(sw, &c);
	assert_int_equal(c.tx, 10);
	assert_int_equal(c.held, 0);
	assert_int_equal(c.unaccounted, 0);
	emu_switch_conservation_line(sw, line, sizeof(line));
	assert_string_equal(line, "conservation: rx 32 + created 0 = tx 10 + drops 22 + held 0 + consumed 0: OK");
	emu_switch_free(sw);
	emu_pipeline_free(pl);
}

static void
test_discard_held_counts(void **state)
{
	struct emu_pipeline *pl = test_pipeline(
		"{\"ports\": [{\"name\": \"a\"}, {\"name\": \"b\"}],"
		" \"ingress\": [{\"type\": \"forward\"}],"
		" \"tm\": {\"ports\": [{\"port\": \"b\", \"rate_gbps\": 0.001}]}}");
	struct emu_switch *sw = test_switch(pool, pl);
	struct emu_conservation c;
	struct rte_mbuf *burst[4];
	unsigned int i;

	(void)state;
	for (i = 0; i < 4; i++)
		burst[i] = test_frame(pool, mac_b, mac_a, 100, i);
	emu_switch_rx(sw, 0, burst, 4, 0);
	assert_int_equal(emu_switch_held(sw), 4);
	emu_switch_discard_held(sw);
	emu_switch_conservation(sw, &c);
	assert_int_equal(c.held, 0);
	assert_int_equal(c.drops, 4);
	assert_int_equal(c.unaccounted, 0);
	emu_switch_free(sw);
	emu_pipeline_free(pl);
}

/*
 * A learning table shared by two replicas of the switch (live --workers: one per worker; here
 * driven from one thread): a MAC learned on one is known to the other at once; an entry ages
 * once (marked, not deleted, counted by the replica that found it), and a frame from the MAC
 * brings it back; within the ageing time a MAC seen every 10 ms stays known, though its
 * last-seen time is refreshed at most every 100 ms.
 */
static void
test_learning_shared(void **state)
{
	const uint64_t t0 = 1700000000000000000ULL; /* live times: since the epoch */
	struct emu_pipeline *pl = test_pipeline(
		"{\"ports\": [{\"name\": \"p0\"}, {\"name\": \"p1\"}, {\"name\": \"p2\"}],"
		" \"ingress\": [{\"type\": \"forward\", \"mode\": \"learning\", \"ageing_s\": 1}]}");
	struct emu_switch *sw = test_switch(pool, pl), *rep;
	struct rte_mbuf *m;
	struct tx_log log, rlog;
	struct emu_err err;
	unsigned int k;

	(void)state;
	rep = emu_switch_create_replica(pl, pool, 7, sw, &err);
	assert_non_null(rep);
	memset(&log, 0, sizeof(log));
	memset(&rlog, 0, sizeof(rlog));
	/* A -> B on the first replica: B unknown, flooded; A learned */
	m = test_frame(pool, mac_b, mac_a, 64, 1);
	emu_switch_rx(sw, 0, &m, 1, t0);
	run_until(sw, 3, UINT64_MAX - 1, &log);
	assert_int_equal(log.n[1] + log.n[2], 2);
	/* B -> A on the other: A is known there (the first one learned it): p0 only */
	m = test_frame(pool, mac_a, mac_b, 64, 2);
	emu_switch_rx(rep, 1, &m, 1, t0 + 1000);
	run_until(rep, 3, UINT64_MAX - 1, &rlog);
	assert_int_equal(rlog.n[0], 1);
	assert_int_equal(rlog.n[2], 0);
	assert_int_equal(emu_switch_stage_counter(rep, "forward", "flooded"), 0);
	/* and B, learned by the second, is known to the first: A -> B to p1 only */
	m = test_frame(pool, mac_b, mac_a, 64, 3);
	emu_switch_rx(sw, 0, &m, 1, t0 + 2000);
	run_until(sw, 3, UINT64_MAX - 1, &log);
	assert_int_equal(log.n[1], 2);
	assert_int_equal(log.n[2], 1);
	/* B sends every 10 ms for 2.5 s on the second replica, A -> B every 10 ms on the
	 * first: B never ages (seen within the ageing time, refreshed every 100 ms at most) */
	for (k = 1; k <= 250; k++) {
		m = test_frame(pool, mac_c, mac_b, 64, 100);
		emu_switch_rx(rep, 1, &m, 1, t0 + k * 10000000ULL);
		run_until(rep, 3, UINT64_MAX - 1, NULL);
		m = test_frame(pool, mac_b, mac_a, 64, 101);
		emu_switch_rx(sw, 0, &m, 1, t0 + k * 10000000ULL + 5000);
		run_until(sw, 3, UINT64_MAX - 1, &log);
	}
	assert_int_equal(log.n[1], 252);
	assert_int_equal(emu_switch_stage_counter(sw, "forward", "aged"), 0);
	/* 3 s without B: the first replica finds it aged (counted once), the second too (not
	 * counted again) */
	m = test_frame(pool, mac_b, mac_a, 64, 4);
	emu_switch_rx(sw, 0, &m, 1, t0 + 5500000000ULL);
	run_until(sw, 3, UINT64_MAX - 1, &log);
	assert_int_equal(emu_switch_stage_counter(sw, "forward", "aged"), 1);
	m = test_frame(pool, mac_b, mac_c, 64, 5);
	emu_switch_rx(rep, 2, &m, 1, t0 + 5500001000ULL);
	run_until(rep, 3, UINT64_MAX - 1, NULL);
	assert_int_equal(emu_switch_stage_counter(rep, "forward", "aged"), 0);
	assert_int_equal(emu_switch_stage_counter(rep, "forward", "flooded"), 1 + 250);
	/* B speaks again (on the first replica): known again to the second, p1 only */
	m = test_frame(pool, mac_a, mac_b, 64, 6);
	emu_switch_rx(sw, 1, &m, 1, t0 + 5600000000ULL);
	run_until(sw, 3, UINT64_MAX - 1, &log);
	k = rlog.n[1];
	m = test_frame(pool, mac_b, mac_a, 64, 7);
	emu_switch_rx(rep, 0, &m, 1, t0 + 5600001000ULL);
	run_until(rep, 3, UINT64_MAX - 1, &rlog);
	assert_int_equal(rlog.n[1], k + 1);
	assert_int_equal(emu_switch_stage_counter(rep, "forward", "flooded"), 1 + 250);
	emu_switch_free(rep);
	emu_switch_free(sw);
	emu_pipeline_free(pl);
}

static void
test_learning_bridge(void **state)
{
	struct emu_pipeline *pl = test_pipeline(
		"{\"ports\": [{\"name\": \"p0\"}, {\"name\": \"p1\"}, {\"name\": \"p2\"}],"
		" \"ingress\": [{\"type\": \"forward\", \"mode\": \"learning\", \"ageing_s\": 1}]}");
	struct emu_switch *sw = test_switch(pool, pl);
	struct emu_conservation c;
	struct rte_mbuf *m;
	struct tx_log log;

	(void)state;
	memset(&log, 0, sizeof(log));
	/* A -> B unknown: flooded to p1 and p2 (one copy); A learned on p0. */
	m = test_frame(pool, mac_b, mac_a, 64, 1);
	emu_switch_rx(sw, 0, &m, 1, 0);
	run_until(sw, 3, UINT64_MAX - 1, &log);
	assert_int_equal(log.n[0], 0);
	assert_int_equal(log.n[1], 1);
	assert_int_equal(log.n[2], 1);
	/* B (on p1) -> A: known, only p0. B learned on p1. */
	m = test_frame(pool, mac_a, mac_b, 64, 2);
	emu_switch_rx(sw, 1, &m, 1, 1000);
	run_until(sw, 3, UINT64_MAX - 1, &log);
	assert_int_equal(log.n[0], 1);
	assert_int_equal(log.seq[0][0], 2);
	assert_int_equal(log.n[2], 1);
	/* A -> B now known: only p1. */
	m = test_frame(pool, mac_b, mac_a, 64, 3);
	emu_switch_rx(sw, 0, &m, 1, 2000);
	run_until(sw, 3, UINT64_MAX - 1, &log);
	assert_int_equal(log.n[1], 2);
	assert_int_equal(log.seq[1][1], 3);
	assert_int_equal(log.n[2], 1);
	/* C on p0 -> A (behind p0 too): filtered. */
	m = test_frame(pool, mac_a, mac_c, 64, 4);
	emu_switch_rx(sw, 0, &m, 1, 3000);
	run_until(sw, 3, UINT64_MAX - 1, &log);
	assert_int_equal(emu_switch_stage_counter(sw, "forward", "drop_same_port"), 1);
	/* Broadcast from B: p0 and p2. */
	m = test_frame(pool, bcast, mac_b, 64, 5);
	emu_switch_rx(sw, 1, &m, 1, 4000);
	run_until(sw, 3, UINT64_MAX - 1, &log);
	assert_int_equal(log.n[0], 2);
	assert_int_equal(log.n[2], 2);
	/* 2 s later B's entry (last seen at 4 us) has aged out: A -> B floods again. */
	m = test_frame(pool, mac_b, mac_a, 64, 6);
	emu_switch_rx(sw, 0, &m, 1, 2000000000ULL);
	run_until(sw, 3, UINT64_MAX - 1, &log);
	assert_int_equal(log.n[1], 3);
	assert_int_equal(log.n[2], 3);
	assert_int_equal(emu_switch_stage_counter(sw, "forward", "aged"), 1);
	assert_int_equal(emu_switch_stage_counter(sw, "forward", "learned"), 3);
	assert_int_equal(emu_switch_stage_counter(sw, "forward", "flooded"), 3);
	/* Station move: A appears on p2; its destination C (seen 2 s ago) has aged: flood. */
	m = test_frame(pool, mac_c, mac_a, 64, 7);
	emu_switch_rx(sw, 2, &m, 1, 2000001000ULL);
	run_until(sw, 3, UINT64_MAX - 1, &log);
	assert_int_equal(emu_switch_stage_counter(sw, "forward", "moved"), 1);
	assert_int_equal(emu_switch_stage_counter(sw, "forward", "aged"), 2);
	assert_int_equal(log.n[0], 3);
	assert_int_equal(log.n[1], 4);
	emu_switch_conservation(sw, &c);
	assert_int_equal(c.rx, 7);
	assert_int_equal(c.created, 4); /* one extra copy per flood */
	assert_int_equal(c.tx, 10);
	assert_int_equal(c.drops, 1);
	assert_int_equal(c.unaccounted, 0);
	emu_switch_free(sw);
	emu_pipeline_free(pl);
}

static void
test_profile_changes_rate(void **state)
{
	struct emu_pipeline *pl = test_pipeline(
		"{\"ports\": [{\"name\": \"a\"}, {\"name\": \"b\"}],"
		" \"ingress\": [{\"type\": \"forward\"}],"
		" \"tm\": {\"ports\": [{\"port\": \"b\", \"rate_gbps\": 10}]}}");
	struct emu_switch *sw = test_switch(pool, pl);
	json_error_t jerr;
	json_t *doc = json_loads("{\"phases\": [{\"at_s\": 0.001, \"tm\": {\"b\": {\"rate_gbps\": 1}}}]}",
				 0, &jerr);
	struct emu_profile *prof = NULL;
	struct emu_err err;
	struct rte_mbuf *m, **pkts;
	uint64_t t;
	uint16_t n;

	(void)state;
	assert_int_equal(emu_profile_from_json(doc, sw, &prof, &err), 0);
	emu_switch_set_program(sw, emu_profile_prog(prof), 1000000); /* t0 = 1 ms */
	/* before the phase (t = 1.5 ms): 1226 B takes 1 us at 10G */
	m = test_frame(pool, mac_b, mac_a, 1226, 0);
	emu_switch_rx(sw, 0, &m, 1, 1500000);
	while ((t = emu_switch_next_event_ns(sw)) != UINT64_MAX) {
		n = emu_switch_tx_prepare(sw, 1, t, &pkts);
		if (n > 0) {
			assert_int_equal(emu_meta(pkts[0])->ts_ns, 1501000);
			rte_pktmbuf_free_bulk(pkts, n);
			emu_switch_tx_done(sw, 1, n);
			break;
		}
	}
	/* after the phase (t0 + 1 ms = 2 ms): 10 us at 1G */
	m = test_frame(pool, mac_b, mac_a, 1226, 1);
	emu_switch_rx(sw, 0, &m, 1, 2500000);
	while ((t = emu_switch_next_event_ns(sw)) != UINT64_MAX) {
		n = emu_switch_tx_prepare(sw, 1, t, &pkts);
		if (n > 0) {
			assert_int_equal(emu_meta(pkts[0])->ts_ns, 2510000);
			rte_pktmbuf_free_bulk(pkts, n);
			emu_switch_tx_done(sw, 1, n);
		}
	}
	assert_int_equal(emu_profile_next_ns(prof), UINT64_MAX);
	emu_profile_free(prof);
	json_decref(doc);
	emu_switch_free(sw);
	emu_pipeline_free(pl);
}

/* Transmit what port 1 releases up to @p until; PFC frames are checked and counted, the
 * departure times of the others are recorded. */
static void
storm_run(struct emu_switch *sw, uint64_t until, unsigned int *n_pfc, uint64_t *pfc_deps,
	  uint64_t *data_deps, unsigned int *n_data)
{
	struct rte_mbuf **pkts;
	uint64_t t;
	uint16_t n, k;

	while ((t = emu_switch_next_event_ns(sw)) <= until) {
		n = emu_switch_tx_prepare(sw, 1, t, &pkts);
		for (k = 0; k < n; k++) {
			const uint8_t *b = rte_pktmbuf_mtod(pkts[k], const uint8_t *);

			if (b[12] == 0x88 && b[13] == 0x08) {
				assert_int_equal(rte_pktmbuf_pkt_len(pkts[k]), 60);
				assert_int_equal(b[14] << 8 | b[15], 0x0101);
				assert_int_equal(b[16] << 8 | b[17], 1u << 3); /* vector */
				assert_int_equal(b[18 + 6] << 8 | b[18 + 7], 1000); /* quanta[3] */
				assert_int_equal(b[18] << 8 | b[19], 0);
				assert_true(*n_pfc < 16);
				pfc_deps[(*n_pfc)++] = emu_meta(pkts[k])->ts_ns;
			} else {
				data_deps[(*n_data)++] = emu_meta(pkts[k])->ts_ns;
			}
			rte_pktmbuf_free(pkts[k]);
		}
		emu_switch_tx_done(sw, 1, n);
	}
}

static void
test_profile_pfc_storm_and_link(void **state)
{
	struct emu_pipeline *pl = test_pipeline(
		"{\"ports\": [{\"name\": \"a\"}, {\"name\": \"b\"}],"
		" \"ingress\": [{\"type\": \"forward\"}],"
		" \"tm\": {\"ports\": [{\"port\": \"b\", \"rate_gbps\": 10}]}}");
	struct emu_switch *sw = test_switch(pool, pl);
	json_error_t jerr;
	json_t *doc = json_loads(
		"{\"phases\": ["
		" {\"at_s\": 0, \"tm\": {\"b\": {\"pfc_storm\": {\"priorities\": [3],"
		"  \"quanta\": 1000, \"rate_pps\": 100000}}}},"
		" {\"at_s\": 0.0001, \"tm\": {\"b\": {\"pfc_storm\": false, \"link\": \"down\"}}},"
		" {\"at_s\": 0.0002, \"tm\": {\"b\": {\"link\": \"up\"}}}]}", 0, &jerr);
	uint64_t pfc_deps[16], data_deps[4];
	unsigned int n_pfc = 0, n_data = 0, k;
	struct emu_profile *prof = NULL;
	struct emu_err err;
	struct rte_mbuf *m;
	char line[256];

	(void)state;
	assert_non_null(doc);
	assert_int_equal(emu_profile_from_json(doc, sw, &prof, &err), 0);
	emu_switch_set_program(sw, emu_profile_prog(prof), 0);
	/* 10 storm frames, due every 10 us from 0; 60 B take 67.2 ns at 10G. The storm stops at
	 * 100 us, before its 11th frame. */
	storm_run(sw, 150000, &n_pfc, pfc_deps, data_deps, &n_data);
	assert_int_equal(n_pfc, 10);
	for (k = 0; k < n_pfc; k++)
		assert_int_equal(pfc_deps[k], 10000ULL * k + 68);
	assert_int_equal(emu_tm_port_ctrs(emu_switch_tm(sw), 1)[EMU_TM_CTR_PFC_STORM_TX], 10);
	/* The link is down from 100 us to 200 us: a frame at 150 us is dropped. */
	m = test_frame(pool, mac_b, mac_a, 1226, 0);
	emu_switch_rx(sw, 0, &m, 1, 150000);
	storm_run(sw, 250000, &n_pfc, pfc_deps, data_deps, &n_data);
	assert_int_equal(emu_tm_port_ctrs(emu_switch_tm(sw), 1)[EMU_TM_CTR_DROP_LINK_DOWN], 1);
	m = test_frame(pool, mac_b, mac_a, 1226, 1);
	emu_switch_rx(sw, 0, &m, 1, 250000);
	storm_run(sw, UINT64_MAX - 1, &n_pfc, pfc_deps, data_deps, &n_data);
	assert_int_equal(n_pfc, 10);
	assert_int_equal(n_data, 1);
	assert_int_equal(data_deps[0], 251000); /* 1250 B on the wire at 10G */
	emu_switch_conservation_line(sw, line, sizeof(line));
	assert_string_equal(line, "conservation: rx 2 + created 10 = tx 11 + drops 1 + held 0 + "
				  "consumed 0: OK");
	emu_profile_free(prof);
	json_decref(doc);
	emu_switch_free(sw);
	emu_pipeline_free(pl);
}

static int
profile_try(struct emu_switch *sw, const char *json, struct emu_profile **prof, struct emu_err *err)
{
	json_error_t jerr;
	json_t *doc = json_loads(json, 0, &jerr);
	int rc;

	assert_non_null(doc);
	*prof = NULL;
	rc = emu_profile_from_json(doc, sw, prof, err);
	json_decref(doc);
	return rc;
}

/* Send one frame a -> b at @p t (*@p rate_bps: port b's rate then) and run the clock to
 * t + 1 us: true when it reached b. */
static bool
duration_probe(struct emu_switch *sw, uint64_t t, uint32_t seq, struct tx_log *log,
	       uint64_t *rate_bps)
{
	struct rte_mbuf *m = test_frame(pool, mac_b, mac_a, 100, seq);
	unsigned int before;

	emu_switch_rx(sw, 0, &m, 1, t);
	*rate_bps = emu_tm_port_cfg(emu_switch_tm(sw), 1)->rate_bps;
	before = log->n[1];
	run_until(sw, 2, t + 1000, log); /* 124 B at 10 Gb/s or 1 Gb/s: gone within 1 us */
	return log->n[1] == before + 1 && log->seq[1][before] == seq;
}

static void
test_profile_duration(void **state)
{
	struct emu_pipeline *pl = test_pipeline(
		"{\"ports\": [{\"name\": \"a\"}, {\"name\": \"b\"}],"
		" \"ingress\": [{\"type\": \"parse\"}, {\"type\": \"forward\"},"
		"  {\"type\": \"impair\", \"events\": [{\"name\": \"cut\", \"action\": \"drop\","
		"   \"enabled\": false}]}],"
		" \"tm\": {\"ports\": [{\"port\": \"b\", \"rate_gbps\": 10}]}}");
	struct emu_switch *sw = test_switch(pool, pl);
	/* dropped exactly in [1 s, 1.5 s): probes 1 ns either side of both edges */
	static const uint64_t probe_ns[] = {
		999999999, 1000000000, 1000000001, 1250000000, 1499999999, 1500000000, 1500000001,
	};
	static const bool probe_passes[] = { true, false, false, false, false, true, true };
	const struct emu_tm *tm;
	struct emu_profile *prof;
	struct emu_conservation c;
	struct tx_log log;
	struct emu_err err;
	uint64_t rate_bps;
	unsigned int k;

	(void)state;
	memset(&log, 0, sizeof(log));
	tm = emu_switch_tm(sw);
	assert_int_equal(profile_try(sw,
		"{\"phases\": [{\"at_s\": 0.5, \"tm\": {\"b\": {\"rate_gbps\": 5}}},"
		" {\"at_s\": 1, \"duration_s\": 0.5, \"stages\": {\"impair\": {\"cut\": {\"enabled\": true}}},"
		"  \"tm\": {\"b\": {\"rate_gbps\": 1}}}]}", &prof, &err), 0);
	/* 3 changes and 2 restores, restores at 1.5 s with the values in force before 1 s */
	assert_int_equal(prof->n_actions, 5);
	assert_true(prof->actions[3].restore);
	assert_int_equal(prof->actions[3].at_ns, 1500000000);
	assert_true(prof->actions[4].restore);
	emu_switch_set_program(sw, emu_profile_prog(prof), 0);
	for (k = 0; k < RTE_DIM(probe_ns); k++) {
		assert_int_equal(duration_probe(sw, probe_ns[k], k, &log, &rate_bps),
				 probe_passes[k]);
		/* the rate: 5 Gb/s from 0.5 s, 1 Gb/s in [1, 1.5), then 5 again (not the pipeline's 10) */
		assert_int_equal(rate_bps, probe_passes[k] ? 5000000000ULL : 1000000000ULL);
	}
	assert_int_equal(emu_switch_stage_counter(sw, "impair", "drop_cut"), 4);
	assert_int_equal(emu_switch_stage_counter(sw, "impair", "cut_matched"), 4);
	assert_int_equal(emu_profile_next_ns(prof), UINT64_MAX);
	emu_switch_conservation(sw, &c);
	assert_int_equal(c.unaccounted, 0);
	emu_profile_free(prof);

	/* A phase that starts when a timed one ends wins over the restore; repeat blocks. The
	 * switch keeps its state: rate 5 Gb/s, cut disabled. */
	assert_int_equal(profile_try(sw,
		"{\"phases\": [{\"at_s\": 1, \"duration_s\": 1, \"tm\": {\"b\": {\"rate_gbps\": 1}}},"
		" {\"at_s\": 2, \"tm\": {\"b\": {\"rate_gbps\": 2}}},"
		" {\"at_s\": 3, \"repeat\": 3, \"every_s\": 1, \"phases\": ["
		"  {\"at_s\": 0.5, \"duration_s\": 0.25, \"tm\": {\"b\": {\"link\": \"down\"}}}]}]}",
		&prof, &err), 0);
	emu_switch_set_program(sw, emu_profile_prog(prof), 10000000000ULL); /* t0 = 10 s */
	run_until(sw, 2, 11999999999ULL, NULL);
	assert_int_equal(emu_tm_port_cfg(tm, 1)->rate_bps, 1000000000ULL);
	run_until(sw, 2, 12000000000ULL, NULL);
	assert_int_equal(emu_tm_port_cfg(tm, 1)->rate_bps, 2000000000ULL);
	for (k = 0; k < 3; k++) {
		uint64_t down = 13500000000ULL + k * 1000000000ULL;

		run_until(sw, 2, down - 1, NULL);
		assert_true(emu_tm_link_up(tm, 1));
		run_until(sw, 2, down, NULL);
		assert_false(emu_tm_link_up(tm, 1));
		run_until(sw, 2, down + 249999999, NULL);
		assert_false(emu_tm_link_up(tm, 1));
		run_until(sw, 2, down + 250000000, NULL);
		assert_true(emu_tm_link_up(tm, 1));
	}
	assert_int_equal(emu_tm_port_cfg(tm, 1)->rate_bps, 2000000000ULL);
	assert_int_equal(emu_profile_next_ns(prof), UINT64_MAX);
	emu_profile_free(prof);

	/* Refused: a change to a key a timed phase holds; a zero duration */
	assert_int_not_equal(profile_try(sw,
		"{\"phases\": [{\"at_s\": 1, \"duration_s\": 1, \"stages\": {\"impair\": {\"cut\":"
		" {\"enabled\": true}}}}, {\"at_s\": 1.999, \"stages\": {\"impair\": {\"cut\":"
		" {\"enabled\": false}}}}]}", &prof, &err), 0);
	assert_string_equal(err.msg, "phases[1].stages.impair.cut: set at 1.999 s while "
			    "phases[0].stages.impair.cut holds it until 2 s (its phase's duration_s); "
			    "a timed phase's keys must not change before it ends");
	assert_int_not_equal(profile_try(sw,
		"{\"phases\": [{\"at_s\": 1, \"duration_s\": 0}]}", &prof, &err), 0);
	assert_string_equal(err.msg, "phases[0].duration_s: must be > 0, got 0");
	emu_switch_free(sw);
	emu_pipeline_free(pl);
}

static void
test_profile_repeat(void **state)
{
	struct emu_pipeline *pl = test_pipeline(
		"{\"ports\": [{\"name\": \"a\"}, {\"name\": \"b\"}],"
		" \"ingress\": [{\"type\": \"forward\"}],"
		" \"tm\": {\"ports\": [{\"port\": \"b\", \"rate_gbps\": 10}]}}");
	struct emu_switch *sw = test_switch(pool, pl);
	static const uint64_t want_ns[11] = {
		500000000, 1000000000, 1100000000, 1100000000, 1250000000, 1350000000,
		1350000000, 1500000000, 1600000000, 1600000000, 2000000000
	};
	static const char *const want_key[11] = {
		"rate_gbps", "link", "link", "rate_gbps", "link", "link", "rate_gbps", "link",
		"link", "rate_gbps", "rate_gbps"
	};
	struct emu_profile *prof;
	struct emu_err err;
	unsigned int k;

	(void)state;
	assert_int_equal(profile_try(sw,
		"{\"phases\": [{\"at_s\": 0.5, \"tm\": {\"b\": {\"rate_gbps\": 5}}},"
		" {\"name\": \"flaps\", \"at_s\": 1, \"repeat\": 3, \"every_s\": 0.25,"
		"  \"phases\": ["
		"  {\"at_s\": 0, \"tm\": {\"b\": {\"link\": \"down\"}}},"
		"  {\"at_s\": 0.1, \"tm\": {\"b\": {\"link\": \"up\", \"rate_gbps\": 1}}}]},"
		" {\"at_s\": 2, \"tm\": {\"b\": {\"rate_gbps\": 100}}}]}", &prof, &err), 0);
	assert_int_equal(prof->n_actions, 11);
	for (k = 0; k < 11; k++) {
		assert_int_equal(prof->actions[k].at_ns, want_ns[k]);
		assert_string_equal(prof->actions[k].key, want_key[k]);
	}
	assert_string_equal(prof->actions[9].path, "phases[1].phases[1].tm.b.rate_gbps");
	/* applied at the right virtual times */
	emu_switch_set_program(sw, emu_profile_prog(prof), 0);
	run_until(sw, 2, 1100000000 - 1, NULL);
	assert_false(emu_tm_link_up(emu_switch_tm(sw), 1));
	run_until(sw, 2, 1100000000, NULL);
	assert_true(emu_tm_link_up(emu_switch_tm(sw), 1));
	assert_int_equal(emu_tm_port_cfg(emu_switch_tm(sw), 1)->rate_bps, 1000000000);
	run_until(sw, 2, 1500000000, NULL);
	assert_false(emu_tm_link_up(emu_switch_tm(sw), 1));
	run_until(sw, 2, UINT64_MAX - 1, NULL);
	assert_true(emu_tm_link_up(emu_switch_tm(sw), 1));
	assert_int_equal(emu_tm_port_cfg(emu_switch_tm(sw), 1)->rate_bps, 100000000000ULL);
	assert_int_equal(emu_profile_next_ns(prof), UINT64_MAX);
	emu_profile_free(prof);

	/* Refused */
	assert_int_not_equal(profile_try(sw,
		"{\"phases\": [{\"at_s\": 1, \"repeat\": 3, \"every_s\": 0.25, \"phases\": ["
		" {\"at_s\": 0.1}]}, {\"at_s\": 1.5}]}", &prof, &err), 0);
	assert_string_equal(err.msg,
			    "phases[1].at_s: phases must be in time order, got 1.5 after 1.6");
	assert_int_not_equal(profile_try(sw,
		"{\"phases\": [{\"at_s\": 1, \"repeat\": 3, \"every_s\": 0.25, \"phases\": ["
		" {\"at_s\": 0.25}]}]}", &prof, &err), 0);
	assert_string_equal(err.msg, "phases[0].phases[0].at_s: must be < the block's every_s "
				  "(0.25), got 0.25");
	assert_int_not_equal(profile_try(sw,
		"{\"phases\": [{\"at_s\": 1, \"repeat\": 3, \"every_s\": 1, \"phases\": ["
		" {\"at_s\": 0, \"repeat\": 2, \"every_s\": 0.1, \"phases\": []}]}]}", &prof, &err),
		0);
	assert_string_equal(err.msg, "phases[0].phases[0].repeat: repeat blocks do not nest");
	assert_int_not_equal(profile_try(sw,
		"{\"phases\": [{\"at_s\": 1, \"repeat\": 0, \"every_s\": 1, \"phases\": []}]}",
		&prof, &err), 0);
	assert_string_equal(err.msg, "phases[0].repeat: must be in [1, 1000000], got 0");
	assert_int_not_equal(profile_try(sw,
		"{\"phases\": [{\"at_s\": 1, \"repeat\": 2, \"every_s\": 1, \"phases\": []}]}",
		&prof, &err), 0);
	assert_string_equal(err.msg, "phases[0].phases: must have at least one phase");
	assert_int_not_equal(profile_try(sw,
		"{\"phases\": [{\"at_s\": 1, \"repeat\": 2, \"every_s\": 1, \"tm\": {}}]}", &prof,
		&err), 0);
	assert_string_equal(err.msg, "phases[0].tm: unknown key (known: name, at_s, repeat, "
			    "every_s, phases)");
	assert_int_not_equal(profile_try(sw,
		"{\"phases\": [{\"at_s\": 1, \"repeat\": 2, \"every_s\": 1, \"phases\": ["
		" {\"at_s\": 0, \"tm\": {\"b\": {\"link\": 1}}}]}]}", &prof, &err), 0);
	assert_string_equal(err.msg, "phases[0].phases[0].tm.b.link: must be \"down\" or \"up\", "
			    "got an integer");
	emu_switch_free(sw);
	emu_pipeline_free(pl);
}

static void
test_mirror_emits(void **state)
{
	struct emu_pipeline *pl = test_pipeline(
		"{\"ports\": [{\"name\": \"p0\"}, {\"name\": \"p1\"}, {\"name\": \"mon\"}],"
		" \"ingress\": [{\"type\": \"forward\", \"pairs\": [[\"p0\", \"p1\"]]},"
		"               {\"type\": \"mirror\", \"to\": \"mon\", \"ports\": [\"p0\"]}],"
		" \"egress\": [{\"type\": \"mirror\", \"name\": \"egress_mirror\", \"to\": \"mon\"}]}");
	struct emu_switch *sw = test_switch(pool, pl);
	struct emu_conservation c;
	struct rte_mbuf *burst[5];
	struct tx_log log;
	unsigned int i;

	(void)state;
	memset(&log, 0, sizeof(log));
	for (i = 0; i < 5; i++)
		burst[i] = test_frame(pool, mac_b, mac_a, 100, i);
	emu_switch_rx(sw, 0, burst, 5, 0);
	burst[0] = test_frame(pool, mac_a, mac_b, 100, 100);
	emu_switch_rx(sw, 1, burst, 1, 0);
	run_until(sw, 3, UINT64_MAX - 1, &log);
	/* p0 -> p1 five times, p1 -> p0 once; the ingress mirror copies what p0 received (5),
	 * the egress mirror copies what left p0 and p1 (6), and not its own copies. */
	assert_int_equal(log.n[1], 5);
	assert_int_equal(log.n[0], 1);
	assert_int_equal(log.n[2], 11);
	for (i = 0; i < 5; i++)
		assert_int_equal(log.seq[2][i], i);
	assert_int_equal(emu_switch_stage_counter(sw, "mirror", "mirrored"), 5);
	assert_int_equal(emu_switch_stage_counter(sw, "egress_mirror", "mirrored"), 6);
	emu_switch_conservation(sw, &c);
	assert_int_equal(c.rx, 6);
	assert_int_equal(c.created, 11);
	assert_int_equal(c.tx, 17);
	assert_int_equal(c.unaccounted, 0);
	emu_switch_free(sw);
	emu_pipeline_free(pl);
}

/* ---- TM v2 through the runner: PFC generation and honouring, lossy fan-in ---- */

#define LEN_1US 998 /* 1022 B on the wire: 1000 ns at 8.176 Gb/s */

static const uint8_t mac_d[6] = { 2, 0, 0, 0, 0, 0xd };

static bool
is_mac_control(struct rte_mbuf *m, struct roce_pkt *pk)
{
	return roce_parse_mbuf(m, 4791, pk) == ROCE_CLASS_MAC_CONTROL;
}

static void
test_pfc_lossless_fan_in(void **state)
{
	struct emu_pipeline *pl = test_pipeline(
		"{\"ports\": [{\"name\": \"a\"}, {\"name\": \"b\"}, {\"name\": \"c\"}],"
		" \"ingress\": [{\"type\": \"parse\"}, {\"type\": \"forward\", \"mode\": \"static\","
		"   \"unknown\": \"drop\", \"macs\": [{\"mac\": \"02:00:00:00:00:0c\", \"port\": \"c\"}]}],"
		" \"tm\": {\"ports\": ["
		"   {\"port\": \"a\", \"rate_gbps\": 8.176, \"pfc\": {\"xoff_kb\": 10, \"xon_kb\": 5,"
		"    \"quanta\": 100}},"
		"   {\"port\": \"b\", \"rate_gbps\": 8.176, \"pfc\": {\"xoff_kb\": 10, \"xon_kb\": 5,"
		"    \"quanta\": 100}},"
		"   {\"port\": \"c\", \"rate_gbps\": 8.176}]}}");
	struct emu_switch *sw = test_switch(pool, pl);
	const unsigned int n_per = 300;
	uint64_t next_send[2] = { 0, 0 }, paused_until[2] = { 0, 0 };
	unsigned int sent[2] = { 0, 0 }, got[2] = { 0, 0 }, xoff_seen[2] = { 0, 0 };
	unsigned int xon_seen[2] = { 0, 0 }, i, p;
	struct emu_tm_prio_stats ps;
	struct emu_conservation c;
	const uint64_t *tc;
	char line[256];

	(void)state;
	/* Two senders at line rate into one port at the same rate, priority 3 (DSCP 26),
	 * both honouring the PFC frames the switch sends them: nothing may be lost. */
	for (;;) {
		uint64_t t = emu_switch_next_event_ns(sw), ts;
		struct rte_mbuf **pkts;
		uint16_t n, k;

		for (i = 0; i < 2; i++)
			if (sent[i] < n_per)
				t = RTE_MIN(t, RTE_MAX(next_send[i], paused_until[i]));
		if (t == UINT64_MAX)
			break;
		for (p = 0; p < 3; p++) {
			n = emu_switch_tx_prepare(sw, (uint16_t)p, t, &pkts);
			for (k = 0; k < n; k++) {
				struct roce_pkt pk;

				ts = emu_meta(pkts[k])->ts_ns;
				if (is_mac_control(pkts[k], &pk)) {
					assert_true(p < 2);
					assert_int_equal(pk.macctl_opcode, 0x0101);
					assert_int_equal(pk.pfc_enable, 1u << 3);
					if (pk.pause_quanta[3] != 0) {
						assert_int_equal(pk.pause_quanta[3], 100);
						paused_until[p] = ts + emu_tm_pause_ns(100, 8176000000ULL);
						xoff_seen[p]++;
					} else {
						paused_until[p] = ts;
						xon_seen[p]++;
					}
				} else {
					assert_int_equal(p, 2);
					assert_int_equal(pk.dscp, 26);
					/* per-sender order kept: the source MAC's last byte names it */
					i = rte_pktmbuf_mtod(pkts[k], uint8_t *)[11] - 0xa;
					assert_true(i < 2);
					assert_int_equal(pk.psn, got[i]);
					got[i]++;
				}
				rte_pktmbuf_free(pkts[k]);
			}
			emu_switch_tx_done(sw, (uint16_t)p, n);
		}
		for (i = 0; i < 2; i++) {
			struct rte_mbuf *m;

			if (sent[i] >= n_per || RTE_MAX(next_send[i], paused_until[i]) > t)
				continue;
			m = test_roce_frame(pool, mac_c, i == 0 ? mac_a : mac_b, LEN_1US, sent[i],
					    26, 2);
			emu_switch_rx(sw, (uint16_t)i, &m, 1, t);
			sent[i]++;
			next_send[i] = t + 1000;
		}
	}
	assert_int_equal(got[0], n_per);
	assert_int_equal(got[1], n_per);
	for (i = 0; i < 2; i++) {
		tc = emu_tm_port_ctrs(emu_switch_tm(sw), (uint16_t)i);
		assert_true(xoff_seen[i] >= 2); /* at least one refresh */
		assert_true(xon_seen[i] >= 1);
		assert_int_equal(tc[EMU_TM_CTR_PFC_TX_XOFF], xoff_seen[i]);
		assert_int_equal(tc[EMU_TM_CTR_PFC_TX_XON], xon_seen[i]);
		assert_int_equal(tc[EMU_TM_CTR_PFC_QUANTA_SENT], 100 * xoff_seen[i]);
		emu_tm_prio_stats(emu_switch_tm(sw), (uint16_t)i, 3, UINT64_MAX / 2, &ps);
		assert_false(ps.xoff);
		assert_true(ps.xoff_ns > 0);
		assert_int_equal(ps.ingress_bytes, 0);
	}
	emu_switch_conservation(sw, &c);
	assert_int_equal(c.drops, 0);
	assert_int_equal(c.held, 0);
	assert_int_equal(c.unaccounted, 0);
	assert_int_equal(c.created, xoff_seen[0] + xoff_seen[1] + xon_seen[0] + xon_seen[1]);
	emu_switch_conservation_line(sw, line, sizeof(line));
	printf("%s\n", line);
	emu_switch_free(sw);
	emu_pipeline_free(pl);
}

/* A PFC frame for priority 3 (quanta[3]) arriving on port b at t = 0, then one data frame
 * of each priority from a to b; returns the departures of the priority 0 and 3 frames. */
static void
pfc_rx_case(const char *pipeline, uint64_t *dep0, uint64_t *dep3)
{
	struct emu_pipeline *pl = test_pipeline(pipeline);
	struct emu_switch *sw = test_switch(pool, pl);
	uint16_t quanta[8] = { 0, 0, 0, 100, 0, 0, 0, 0 };
	struct rte_mbuf *m, **pkts;
	struct emu_tm_prio_stats ps;
	struct emu_conservation c;
	char line[256];
	uint64_t t;
	uint16_t n, k;

	*dep0 = *dep3 = 0;
	m = rte_pktmbuf_alloc(pool);
	assert_non_null(m);
	assert_int_equal(roce_build_pfc((uint8_t *)rte_pktmbuf_append(m, 60), 60, mac_d, 1u << 3,
					quanta), 60);
	emu_switch_rx(sw, 1, &m, 1, 0);
	m = test_roce_frame(pool, mac_b, mac_a, LEN_1US, 3, 26, 2);
	emu_switch_rx(sw, 0, &m, 1, 0);
	m = test_roce_frame(pool, mac_b, mac_a, LEN_1US, 0, 0, 2);
	emu_switch_rx(sw, 0, &m, 1, 0);
	while ((t = emu_switch_next_event_ns(sw)) != UINT64_MAX) {
		n = emu_switch_tx_prepare(sw, 1, t, &pkts);
		for (k = 0; k < n; k++) {
			struct roce_pkt pk;

			roce_parse_mbuf(pkts[k], 4791, &pk);
			if (pk.psn == 3)
				*dep3 = emu_meta(pkts[k])->ts_ns;
			else
				*dep0 = emu_meta(pkts[k])->ts_ns;
			rte_pktmbuf_free(pkts[k]);
		}
		emu_switch_tx_done(sw, 1, n);
	}
	assert_int_equal(emu_tm_port_ctrs(emu_switch_tm(sw), 1)[EMU_TM_CTR_PFC_RX], 1);
	emu_tm_prio_stats(emu_switch_tm(sw), 1, 3, 1000000, &ps);
	assert_int_equal(ps.paused_ns, 6263);
	emu_tm_prio_stats(emu_switch_tm(sw), 1, 0, 1000000, &ps);
	assert_int_equal(ps.paused_ns, 0);
	emu_switch_conservation(sw, &c);
	assert_int_equal(c.consumed, 1);
	emu_switch_conservation_line(sw, line, sizeof(line));
	assert_string_equal(line,
			    "conservation: rx 3 + created 0 = tx 2 + drops 0 + held 0 + consumed 1: OK");
	/* forward saw the PFC frame too; the runner consumed it after the ingress stages */
	assert_int_equal(emu_switch_stage_counter(sw, "forward", "forwarded"), 3);
	emu_switch_free(sw);
	emu_pipeline_free(pl);
}

static void
test_pfc_rx_consumed(void **state)
{
	uint64_t d0, d3;

	(void)state;
	/* With a parse stage (DSCP trust) ... */
	pfc_rx_case("{\"ports\": [{\"name\": \"a\"}, {\"name\": \"b\"}],"
		    " \"ingress\": [{\"type\": \"parse\"}, {\"type\": \"forward\"}],"
		    " \"tm\": {\"ports\": [{\"port\": \"b\", \"rate_gbps\": 8.176}]}}",
		    &d0, &d3);
	assert_int_equal(d0, 1000);        /* priority 0 is not paused */
	assert_int_equal(d3, 6263 + 1000); /* 100 quanta x 512 bits at 8.176 Gb/s, then its own */
	/* ... and without one (the runner recognises MAC control itself; PCP trust then,
	 * untagged: both frames are priority 0 and nothing is held back). */
	pfc_rx_case("{\"ports\": [{\"name\": \"a\"}, {\"name\": \"b\"}],"
		    " \"ingress\": [{\"type\": \"forward\"}],"
		    " \"tm\": {\"ports\": [{\"port\": \"b\", \"rate_gbps\": 8.176}]}}",
		    &d0, &d3);
	assert_int_equal(d3, 1000);
	assert_int_equal(d0, 2000);
}

static void
test_pfc_thresholds_from_cable(void **state)
{
	struct emu_pipeline *pl = test_pipeline(
		"{\"ports\": [{\"name\": \"a\"}, {\"name\": \"b\", \"mtu\": 4200}],"
		" \"tm\": {\"ports\": [{\"port\": \"a\", \"pfc\": {\"cable_m\": 3}},"
		"  {\"port\": \"b\", \"rate_gbps\": 25, \"pfc\": {\"cable_m\": 100, \"quanta\": 1000},"
		"   \"headroom_kb\": 200}]}}");
	const struct emu_tm_port_cfg *a = &pl->tm.ports[0], *b = &pl->tm.ports[1];

	(void)state;
	/* (301 + 2.16 * 3) * 100 + 2.72 * 9216 = 55815.52 -> 55816; XON = XOFF - MTU */
	assert_int_equal(a->pfc.xoff_bytes, 55816);
	assert_int_equal(a->pfc.xon_bytes, 55816 - 9216);
	assert_int_equal(a->pfc.quanta, 0xFFFF);
	assert_int_equal(a->headroom_bytes, 55 * 1024); /* default: XOFF rounded up to KiB */
	/* (301 + 216) * 25 + 2.72 * 4200 = 12925 + 11424 = 24349 */
	assert_int_equal(b->pfc.xoff_bytes, 24349);
	assert_int_equal(b->pfc.xon_bytes, 24349 - 4200);
	assert_int_equal(b->headroom_bytes, 200 * 1024);
	/* one quantum = 512 bit times: 20.48 ns at 25G, so 1000 quanta = 20480 ns */
	assert_int_equal(emu_tm_pause_ns(1000, b->rate_bps), 20480);
	assert_int_equal(emu_tm_pause_ns(1, 400000000000ULL), 2); /* 1.28 ns, rounded up */
	emu_pipeline_free(pl);
}

static void
test_lossy_fan_in_8to1(void **state)
{
	struct emu_pipeline *pl = test_pipeline(
		"{\"ports\": [{\"name\": \"p0\"}, {\"name\": \"p1\"}, {\"name\": \"p2\"},"
		"  {\"name\": \"p3\"}, {\"name\": \"p4\"}, {\"name\": \"p5\"}, {\"name\": \"p6\"},"
		"  {\"name\": \"p7\"}, {\"name\": \"out\"}],"
		" \"ingress\": [{\"type\": \"parse\", \"dscp_map\": {\"10\": 1}},"
		"  {\"type\": \"forward\", \"mode\": \"static\", \"unknown\": \"drop\","
		"   \"macs\": [{\"mac\": \"02:00:00:00:00:0c\", \"port\": \"out\"}]}],"
		" \"tm\": {\"buffer\": {\"total_kb\": 48, \"cell_bytes\": 256},"
		"  \"ports\": [{\"port\": \"out\", \"rate_gbps\": 8.176, \"queue_kb\": 30}]}}");
	unsigned int avail0 = rte_mempool_avail_count(pool);
	struct emu_switch *sw = test_switch(pool, pl);
	const unsigned int n_per = 200;
	struct emu_conservation c;
	const uint64_t *tc;
	unsigned int k, p, tx = 0;
	uint64_t t;
	char line[256];

	(void)state;
	/* Eight senders at line rate, alternating DSCP 0 (priority 0) and 10 (priority 1),
	 * lossy (only priority 3 is lossless). */
	for (k = 0; k < n_per; k++) {
		t = (uint64_t)k * 1000;
		for (p = 0; p < 8; p++) {
			struct rte_mbuf *m = test_roce_frame(pool, mac_c, mac_a, LEN_1US, k,
							     (k + p) % 2 ? 10 : 0, 2);

			emu_switch_rx(sw, (uint16_t)p, &m, 1, t);
		}
		while (emu_switch_next_event_ns(sw) <= t) {
			struct rte_mbuf **pkts;
			uint16_t n = emu_switch_tx_prepare(sw, 8, emu_switch_next_event_ns(sw), &pkts);

			rte_pktmbuf_free_bulk(pkts, n);
			emu_switch_tx_done(sw, 8, n);
			tx += n;
		}
	}
	tc = emu_tm_port_ctrs(emu_switch_tm(sw), 8);
	assert_true(tc[EMU_TM_CTR_DROP_QUEUE_FULL] > 0);
	assert_true(tc[EMU_TM_CTR_DROP_BUFFER_FULL] > 0);
	assert_int_equal(tc[EMU_TM_CTR_DROP_HEADROOM_OVERFLOW], 0);
	emu_switch_conservation(sw, &c);
	assert_int_equal(c.rx, 8 * n_per);
	assert_int_equal(c.drops, tc[EMU_TM_CTR_DROP_QUEUE_FULL] + tc[EMU_TM_CTR_DROP_BUFFER_FULL]);
	assert_int_equal(c.tx, tx);
	assert_int_equal(c.unaccounted, 0);
	/* what was still held goes at exit, counted; the pool is full again */
	emu_switch_discard_held(sw);
	emu_switch_conservation(sw, &c);
	assert_int_equal(c.held, 0);
	assert_int_equal(c.unaccounted, 0);
	emu_switch_conservation_line(sw, line, sizeof(line));
	printf("%s\n", line);
	emu_switch_print_summary(sw, stdout);
	emu_switch_free(sw);
	emu_pipeline_free(pl);
	assert_int_equal(rte_mempool_avail_count(pool), avail0);
}

/* A RoCEv2 frame host .@p src -> host .@p dst (10.0.0.x, MAC 02:..:x) to QP @p qpn. */
static struct rte_mbuf *
cnp_test_frame(uint8_t src, uint8_t dst, uint8_t opcode, uint32_t qpn, uint8_t ecn)
{
	struct roce_hdr_params hp = roce_hdr_params_default();
	struct rte_mbuf *m = rte_pktmbuf_alloc(pool);
	uint8_t buf[256];
	int len;

	hp.dst_mac[0] = 2;
	hp.dst_mac[5] = dst;
	hp.src_mac[0] = 2;
	hp.src_mac[5] = src;
	hp.src_ip[0] = 10;
	hp.src_ip[3] = src;
	hp.dst_ip[0] = 10;
	hp.dst_ip[3] = dst;
	hp.udp_sport = 49152;
	hp.opcode = opcode;
	hp.dest_qp = qpn;
	hp.ecn = ecn;
	hp.deth_src_qp = 0x777;
	len = roce_build(buf, sizeof(buf), &hp, NULL, 64);
	assert_true(len > 0);
	assert_non_null(m);
	memcpy(rte_pktmbuf_append(m, (uint16_t)len), buf, (size_t)len);
	return m;
}

/* Receive one frame on @p port at @p t_ns and send everything out. */
static void
cnp_test_rx(struct emu_switch *sw, uint16_t port, struct rte_mbuf *m, uint64_t t_ns,
	    struct tx_log *log)
{
	emu_switch_rx(sw, port, &m, 1, t_ns);
	run_until(sw, 2, UINT64_MAX - 1, log);
}

static void
test_cnp_pacing_edges(void **state)
{
	static const char *const fmt =
		"{\"ports\": [{\"name\": \"a\"}, {\"name\": \"b\"}],"
		" \"ingress\": [{\"type\": \"parse\"}, {\"type\": \"forward\"}],"
		" \"egress\": [{\"type\": \"cnp\", \"interval_us\": %s}]}";
	char json[512];
	struct emu_pipeline *pl;
	struct emu_switch *sw;
	struct emu_conservation c;
	struct tx_log log;
	uint64_t t;

	(void)state;
	/* interval 1 us: CE data A(1) -> B(2) on QP 0x22; B's ACKs name A's QP 0x11. */
	snprintf(json, sizeof(json), fmt, "1");
	pl = test_pipeline(json);
	sw = test_switch(pool, pl);
	memset(&log, 0, sizeof(log));
	/* Before any ACK: unknown sender, nothing sent back. */
	cnp_test_rx(sw, 0, cnp_test_frame(1, 2, 0x04, 0x22, 3), 0, &log);
	assert_int_equal(emu_switch_stage_counter(sw, "cnp", "unknown_qp"), 1);
	assert_int_equal(log.n[0], 0);
	cnp_test_rx(sw, 1, cnp_test_frame(2, 1, 0x11, 0x11, 2), 10000, &log);
	assert_int_equal(log.n[0], 1);
	/* Same-size frames on an idle link keep their arrival gaps on the egress clock. */
	t = 20000;
	cnp_test_rx(sw, 0, cnp_test_frame(1, 2, 0x04, 0x22, 3), t, &log);        /* CNP */
	cnp_test_rx(sw, 0, cnp_test_frame(1, 2, 0x04, 0x22, 3), t + 999, &log);  /* 999: paced */
	cnp_test_rx(sw, 0, cnp_test_frame(1, 2, 0x04, 0x22, 3), t + 1999, &log); /* CNP */
	cnp_test_rx(sw, 0, cnp_test_frame(1, 2, 0x04, 0x22, 3), t + 2999, &log); /* 1000: CNP */
	assert_int_equal(emu_switch_stage_counter(sw, "cnp", "generated"), 3);
	assert_int_equal(emu_switch_stage_counter(sw, "cnp", "suppressed_pacing"), 1);
	assert_int_equal(log.n[0], 4);
	/* Not answered even when CE: ACK, RDMA READ request, UD SEND (not RC/UC data), not-CE. */
	cnp_test_rx(sw, 0, cnp_test_frame(1, 2, 0x11, 0x22, 3), t + 10000, &log);
	cnp_test_rx(sw, 0, cnp_test_frame(1, 2, 0x0C, 0x22, 3), t + 20000, &log);
	cnp_test_rx(sw, 0, cnp_test_frame(1, 2, 0x64, 0x22, 3), t + 30000, &log);
	cnp_test_rx(sw, 0, cnp_test_frame(1, 2, 0x04, 0x22, 2), t + 40000, &log);
	assert_int_equal(emu_switch_stage_counter(sw, "cnp", "generated"), 3);
	assert_int_equal(emu_switch_stage_counter(sw, "cnp", "suppressed_pacing"), 1);
	assert_int_equal(emu_switch_stage_counter(sw, "cnp", "unknown_qp"), 1);
	emu_switch_conservation(sw, &c);
	assert_int_equal(c.created, 3);
	assert_int_equal(c.unaccounted, 0);
	emu_switch_free(sw);
	emu_pipeline_free(pl);

	/* interval 0: every CE data packet is answered, even back to back in one burst. */
	snprintf(json, sizeof(json), fmt, "0");
	pl = test_pipeline(json);
	sw = test_switch(pool, pl);
	memset(&log, 0, sizeof(log));
	cnp_test_rx(sw, 1, cnp_test_frame(2, 1, 0x11, 0x11, 2), 0, &log);
	{
		struct rte_mbuf *burst[4];
		unsigned int i;

		for (i = 0; i < 4; i++)
			burst[i] = cnp_test_frame(1, 2, 0x07, 0x22, 3);
		emu_switch_rx(sw, 0, burst, 4, 1000);
		run_until(sw, 2, UINT64_MAX - 1, &log);
	}
	assert_int_equal(emu_switch_stage_counter(sw, "cnp", "generated"), 4);
	assert_int_equal(emu_switch_stage_counter(sw, "cnp", "suppressed_pacing"), 0);
	assert_int_equal(log.n[0], 5);
	emu_switch_free(sw);
	emu_pipeline_free(pl);
}

/*
 * Which parse the switch chooses (emu_switch_choose_parse()): the class-only parse
 * (roce_parse_partial_min(), dp_only = 2 in the result) when no stage reads a parse field,
 * the QP parse (roce_parse_partial_qp(), 3) for a reorder stage, the datapath parse
 * (roce_parse_partial_dp(), 1) when no stage reads a field it leaves out, else the full
 * parse (0). One RoCEv2 WRITE through each pipeline; the frame arrives with a full parse in
 * its metadata (dp_only = 0), so the result says which parser ran last.
 */
static int
dp_parse_of_eg(const char *stages, const char *egress)
{
	char json[1024];
	struct emu_pipeline *pl;
	struct emu_switch *sw;
	struct rte_mbuf *m, **pkts;
	uint64_t t;
	int dp = -1;
	uint16_t n, i;
	unsigned int p;

	snprintf(json, sizeof(json),
		 "{\"ports\": [{\"name\": \"p0\"}, {\"name\": \"p1\"}, {\"name\": \"mon\"}],"
		 " \"ingress\": [{\"type\": \"parse\"}, %s"
		 "  {\"type\": \"forward\", \"pairs\": [[\"p0\", \"p1\"]]}],"
		 " \"egress\": [%s]}", stages, egress);
	pl = test_pipeline(json);
	sw = test_switch(pool, pl);
	m = test_roce_frame(pool, mac_b, mac_a, 138, 7, 26, 2);
	assert_int_equal(emu_meta(m)->pkt.dp_only, 0);
	emu_switch_rx(sw, 0, &m, 1, 0);
	while ((t = emu_switch_next_event_ns(sw)) != UINT64_MAX) {
		for (p = 0; p < 3; p++) {
			n = emu_switch_tx_prepare(sw, (uint16_t)p, t, &pkts);
			for (i = 0; i < n; i++) {
				if (p == 1) {
					assert_true(emu_meta(pkts[i])->flags & EMU_META_PARSED);
					assert_int_equal(emu_meta(pkts[i])->pkt.psn, 7);
					dp = emu_meta(pkts[i])->pkt.dp_only;
				}
				rte_pktmbuf_free(pkts[i]);
			}
			emu_switch_tx_done(sw, (uint16_t)p, n);
		}
	}
	emu_switch_service(sw, true); /* a capture stage writes and closes its file */
	emu_switch_free(sw);
	emu_pipeline_free(pl);
	return dp;
}

static int
dp_parse_of(const char *stages)
{
	return dp_parse_of_eg(stages, "");
}

static void
test_dp_parse_choice(void **state)
{
	(void)state;
	assert_int_equal(dp_parse_of(""), 2);
	assert_int_equal(dp_parse_of("{\"type\": \"mirror\", \"to\": \"mon\"},"), 2);
	assert_int_equal(dp_parse_of("{\"type\": \"delay\", \"rules\": [{\"delay_us\": 1,"
				     " \"match\": {\"psn\": [0, 100], \"opcode\": \"data\","
				     " \"dst_ip\": \"0.0.0.0/0\"}}]},"), 1);
	{
		char dir[] = "/tmp/test_switch_dp.XXXXXX", stage[256], file[128];

		assert_non_null(mkdtemp(dir));
		snprintf(file, sizeof(file), "%s/c.pcapng", dir);
		snprintf(stage, sizeof(stage),
			 "{\"type\": \"capture\", \"file\": \"%s\", \"annotate\": \"all\"},", file);
		assert_int_equal(dp_parse_of(stage), 2);
		/* with a stage that reads the datapath fields after it */
		assert_int_equal(dp_parse_of_eg(stage, "{\"type\": \"reorder\"}"), 3);
		assert_int_equal(unlink(file), 0); /* written: one frame */
		assert_int_equal(rmdir(dir), 0);
	}
	/* the ack class reads the AETH syndrome, ackreq the BTH's A bit: the full parse */
	assert_int_equal(dp_parse_of("{\"type\": \"delay\", \"rules\": [{\"delay_us\": 1,"
				     " \"match\": {\"psn\": [0, 100]}},"
				     " {\"delay_us\": 2, \"match\": {\"opcode\": \"ack\"}}]},"), 0);
	assert_int_equal(dp_parse_of("{\"type\": \"delay\", \"rules\": [{\"delay_us\": 1,"
				     " \"match\": {\"ackreq\": true}}]},"), 0);
	/* impair: through its matches and the iteration tracker */
	assert_int_equal(dp_parse_of("{\"type\": \"impair\", \"events\": [{\"name\": \"d\","
				     " \"action\": \"drop\", \"match\": {\"psn\": 1000}},"
				     " {\"name\": \"s\", \"action\": \"rewrite\","
				     " \"rewrite\": {\"udp_sport\": 5}}]},"), 1);
	assert_int_equal(dp_parse_of("{\"type\": \"impair\", \"events\": [{\"name\": \"d\","
				     " \"action\": \"drop\", \"match\": {\"iteration\": 2}}]},"), 0);
	/* a stage that does not say what it reads (cnp: its QP map) gets the full parse */
	assert_int_equal(dp_parse_of_eg("", "{\"type\": \"cnp\"}"), 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_next_change_split),
		cmocka_unit_test(test_conservation_with_drops),
		cmocka_unit_test(test_discard_held_counts),
		cmocka_unit_test(test_learning_bridge),
		cmocka_unit_test(test_learning_shared),
		cmocka_unit_test(test_profile_changes_rate),
		cmocka_unit_test(test_profile_pfc_storm_and_link),
		cmocka_unit_test(test_profile_repeat),
		cmocka_unit_test(test_profile_duration),
		cmocka_unit_test(test_mirror_emits),
		cmocka_unit_test(test_pfc_lossless_fan_in),
		cmocka_unit_test(test_pfc_rx_consumed),
		cmocka_unit_test(test_pfc_thresholds_from_cable),
		cmocka_unit_test(test_lossy_fan_in_8to1),
		cmocka_unit_test(test_cnp_pacing_edges),
		cmocka_unit_test(test_dp_parse_choice),
	};

	pool = test_eal_pool("test_switch", 4096);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
