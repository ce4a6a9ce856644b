/* SPDX-License-Identifier: BSD-3-Clause */
/* The runner (conservation accounting, flooding, emitted frames) and the learning bridge. */
#include "test_common.h"
#include "lib/core/emu_profile.h"

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

static struct emu_switch *
make_switch(struct emu_pipeline *pl)
{
	struct emu_err err;
	struct emu_switch *sw = emu_switch_create(pl, pool, 1, &err);

	if (sw == NULL)
		fprintf(stderr, "switch: %s\n", err.msg);
	assert_non_null(sw);
	return sw;
}

static void
test_conservation_with_drops(void **state)
{
	struct emu_pipeline *pl = test_pipeline(
		"{\"ports\": [{\"name\": \"a\"}, {\"name\": \"b\"}],"
		" \"ingress\": [{\"type\": \"parse\"}, {\"type\": \"forward\"}],"
		" \"tm\": {\"ports\": [{\"port\": \"b\", \"rate_gbps\": 1, \"buffer_kb\": 10}]}}");
	struct emu_switch *sw = make_switch(pl);
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
	struct emu_switch *sw = make_switch(pl);
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

static void
test_learning_bridge(void **state)
{
	struct emu_pipeline *pl = test_pipeline(
		"{\"ports\": [{\"name\": \"p0\"}, {\"name\": \"p1\"}, {\"name\": \"p2\"}],"
		" \"ingress\": [{\"type\": \"forward\", \"mode\": \"learning\", \"ageing_s\": 1}]}");
	struct emu_switch *sw = make_switch(pl);
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
	struct emu_switch *sw = make_switch(pl);
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
	emu_switch_set_profile(sw, prof, 1000000); /* t0 = 1 ms */
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

static void
test_mirror_emits(void **state)
{
	struct emu_pipeline *pl = test_pipeline(
		"{\"ports\": [{\"name\": \"p0\"}, {\"name\": \"p1\"}, {\"name\": \"mon\"}],"
		" \"ingress\": [{\"type\": \"forward\", \"pairs\": [[\"p0\", \"p1\"]]},"
		"               {\"type\": \"mirror\", \"to\": \"mon\", \"ports\": [\"p0\"]}],"
		" \"egress\": [{\"type\": \"mirror\", \"name\": \"egress_mirror\", \"to\": \"mon\"}]}");
	struct emu_switch *sw = make_switch(pl);
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

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_conservation_with_drops),
		cmocka_unit_test(test_discard_held_counts),
		cmocka_unit_test(test_learning_bridge),
		cmocka_unit_test(test_profile_changes_rate),
		cmocka_unit_test(test_mirror_emits),
	};

	pool = test_eal_pool("test_switch", 4096);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
