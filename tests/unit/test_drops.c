/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The one drop path: every drop, whoever makes it (a stage, the TM, the runner), reaches the
 * switch's drop hook with the reason id of the counter it is counted in, before the packet is
 * freed. Each scenario below forces one reason with real frames; the hook's count for every
 * reason must equal that reason's counter, the forced reason must be the one named, and the
 * mempool must be full again at the end (the hook saw each packet once, nothing leaked).
 * Not forced here (they go through the same emu_drop() call, but need conditions a unit test
 * cannot make cheaply): tm.drop_headroom_overflow (test_tm.c forces it without a hook),
 * runner.drop_bad_port (no stage sets an out-of-range port), runner.drop_flood_nombuf (an empty
 * pool during a flood) and incast.drop_sink_full (a full TX staging towards a sink port).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "test_common.h"

#define MAX_REASONS 4096

static struct rte_mempool *pool;
static const uint8_t mac_a[6] = { 2, 0, 0, 0, 0, 0xa }, mac_b[6] = { 2, 0, 0, 0, 0, 0xb };
static const uint8_t mac_x[6] = { 2, 0, 0, 0, 0, 0x77 };

struct hook_log {
	uint64_t by_reason[MAX_REASONS];
	uint64_t total;
	bool bad_mbuf;
};

static void
hook(void *arg, struct rte_mbuf *m, uint32_t reason)
{
	struct hook_log *log = arg;

	if (m == NULL || rte_pktmbuf_pkt_len(m) == 0)
		log->bad_mbuf = true;
	if (reason < MAX_REASONS)
		log->by_reason[reason]++;
	log->total++;
}

/* Every reason's hook count equals its counter; returns the hook count of reason @p want. */
static uint64_t
check_reasons(struct emu_switch *sw, const struct hook_log *log, const char *want)
{
	uint32_t n = emu_switch_n_reasons(sw), id;
	uint64_t got = 0, sum = 0;
	char name[128];

	assert_true(n < MAX_REASONS);
	assert_false(log->bad_mbuf);
	for (id = 0; id < n; id++) {
		bool drop = emu_switch_reason_name(sw, id, name, sizeof(name));

		if (log->by_reason[id] != 0 && !drop)
			fail_msg("reason %u (%s) is not a drop counter but the hook saw %" PRIu64, id,
				 name, log->by_reason[id]);
		if (drop && log->by_reason[id] != emu_switch_reason_count(sw, id))
			fail_msg("%s: counter %" PRIu64 ", hook saw %" PRIu64, name,
				 emu_switch_reason_count(sw, id), log->by_reason[id]);
		if (strcmp(name, want) == 0)
			got = log->by_reason[id];
		sum += log->by_reason[id];
	}
	assert_int_equal(sum, log->total);
	return got;
}

/* Build the switch, send @p n frames made by @p mk into port @p in_port at t = 0, run it
 * until empty (or discard what it holds when @p discard), and check reason @p want fired
 * @p times (0 = at least once). */
static void
scenario(const char *json, struct rte_mbuf *(*mk)(uint32_t i), uint32_t n, uint16_t in_port,
	 const char *want, uint64_t times, bool discard, void (*before)(struct emu_switch *))
{
	struct emu_pipeline *pl = test_pipeline(json);
	struct emu_switch *sw = test_switch(pool, pl);
	struct hook_log *log = calloc(1, sizeof(*log));
	struct rte_mbuf *burst[EMU_BURST], **tx;
	uint64_t t = 1000, got;
	uint32_t i = 0;
	unsigned int p, rounds = 0;
	uint16_t k, c;

	assert_non_null(log);
	emu_switch_add_drop_hook(sw, hook, log);
	if (before != NULL)
		before(sw);
	while (i < n) {
		for (k = 0; k < EMU_BURST && i < n; k++)
			burst[k] = mk(i++);
		emu_switch_rx(sw, in_port, burst, k, t);
	}
	if (discard) {
		emu_switch_discard_held(sw);
	} else {
		while (emu_switch_held(sw) > 0 && rounds++ < 100000) {
			uint64_t next = emu_switch_next_event_ns(sw);

			t = next == UINT64_MAX ? t + 1000 : (next > t ? next : t);
			for (p = 0; p < emu_switch_pipeline(sw)->n_ports; p++) {
				c = emu_switch_tx_prepare(sw, (uint16_t)p, t, &tx);
				rte_pktmbuf_free_bulk(tx, c);
				emu_switch_tx_done(sw, (uint16_t)p, c);
			}
		}
	}
	got = check_reasons(sw, log, want);
	if (times != 0 ? got != times : got == 0)
		fail_msg("%s: the hook saw %" PRIu64 " drops, want %s%" PRIu64, want, got,
			 times ? "" : "> ", times);
	emu_switch_free(sw);
	emu_pipeline_free(pl);
	free(log);
	assert_int_equal(rte_mempool_in_use_count(pool), 0);
}

static struct rte_mbuf *
mk_roce(uint32_t i)
{
	return test_roce_frame(pool, mac_b, mac_a, 138, i, 26, 2);
}

static struct rte_mbuf *
mk_roce_to_x(uint32_t i)
{
	return test_roce_frame(pool, mac_x, mac_a, 138, i, 26, 2);
}

static struct rte_mbuf *
mk_roce_to_a(uint32_t i)
{
	return test_roce_frame(pool, mac_a, mac_b, 138, i, 26, 2);
}

/* A RoCEv2 frame cut after its UDP header: invalid (truncated BTH). */
static struct rte_mbuf *
mk_truncated(uint32_t i)
{
	struct rte_mbuf *m = mk_roce(i);

	rte_pktmbuf_trim(m, rte_pktmbuf_pkt_len(m) - 46);
	/* the IP and UDP lengths still say 124 bytes: the parser must not trust them */
	return m;
}

static struct rte_mbuf *
mk_bad_icrc(uint32_t i)
{
	struct rte_mbuf *m = mk_roce(i);

	*rte_pktmbuf_mtod_offset(m, uint8_t *, rte_pktmbuf_pkt_len(m) - 1) ^= 0xff;
	return m;
}

static struct rte_mbuf *
mk_cnp(uint32_t i)
{
	struct roce_cnp_params hp = roce_cnp_params_default();
	struct rte_mbuf *m = rte_pktmbuf_alloc(pool);
	char *p = rte_pktmbuf_append(m, 128);
	int n;

	hp.ip_version = 4;
	hp.src_ip[0] = 10;
	hp.dst_ip[0] = 11;
	memcpy(hp.dst_mac, mac_b, 6);
	memcpy(hp.src_mac, mac_a, 6);
	hp.dest_qp = 0x45 + i;
	n = roce_build_cnp((uint8_t *)p, 128, &hp);
	assert_true(n > 0);
	rte_pktmbuf_trim(m, (uint16_t)(128 - n));
	memset(emu_meta(m), 0, sizeof(struct emu_pkt_meta));
	return m;
}

#define TWO_PORTS "\"ports\": [{\"name\": \"p0\", \"mtu\": 1500}, {\"name\": \"p1\", \"mtu\": 1500}]"
#define TM_FAST "\"tm\": {\"ports\": [{\"port\": \"p0\", \"rate_gbps\": 100}, " \
	"{\"port\": \"p1\", \"rate_gbps\": 100}]}"

static void
test_parse_invalid(void **state)
{
	(void)state;
	scenario("{" TWO_PORTS ", \"ingress\": [{\"type\": \"parse\", \"drop_invalid\": true}, "
		 "{\"type\": \"forward\"}], " TM_FAST "}", mk_truncated, 10, 0,
		 "parse.drop_invalid", 10, false, NULL);
}

static void
test_parse_icrc(void **state)
{
	(void)state;
	scenario("{" TWO_PORTS ", \"ingress\": [{\"type\": \"parse\", \"verify_icrc\": true, "
		 "\"drop_bad_icrc\": true}, {\"type\": \"forward\"}], " TM_FAST "}", mk_bad_icrc, 7, 0,
		 "parse.drop_bad_icrc", 7, false, NULL);
}

static void
test_forward_no_pair(void **state)
{
	(void)state;
	scenario("{\"ports\": [{\"name\": \"p0\"}, {\"name\": \"p1\"}, {\"name\": \"p2\"}], "
		 "\"ingress\": [{\"type\": \"forward\", \"pairs\": [[\"p0\", \"p1\"]]}]}",
		 mk_roce, 5, 2, "forward.drop_no_pair", 5, false, NULL);
}

static void
test_forward_unknown(void **state)
{
	(void)state;
	scenario("{" TWO_PORTS ", \"ingress\": [{\"type\": \"forward\", \"mode\": \"static\", "
		 "\"unknown\": \"drop\", \"macs\": [{\"mac\": \"02:00:00:00:00:0b\", \"port\": "
		 "\"p1\"}]}], " TM_FAST "}", mk_roce_to_x, 6, 0, "forward.drop_unknown_dst", 6, false,
		 NULL);
}

static void
test_forward_same_port(void **state)
{
	(void)state;
	scenario("{" TWO_PORTS ", \"ingress\": [{\"type\": \"forward\", \"mode\": \"static\", "
		 "\"macs\": [{\"mac\": \"02:00:00:00:00:0a\", \"port\": \"p0\"}]}], " TM_FAST "}",
		 mk_roce_to_a, 4, 0, "forward.drop_same_port", 4, false, NULL);
}

static void
test_impair_drop(void **state)
{
	(void)state;
	scenario("{" TWO_PORTS ", \"ingress\": [{\"type\": \"parse\"}, {\"type\": \"forward\"}, "
		 "{\"type\": \"impair\", \"name\": \"imp\", \"events\": [{\"name\": \"odd\", "
		 "\"action\": \"drop\", \"match\": {\"every_nth\": 2}}]}], " TM_FAST "}", mk_roce, 20, 0,
		 "imp.drop_odd", 10, false, NULL);
}

static void
test_impair_delay_full(void **state)
{
	(void)state;
	scenario("{" TWO_PORTS ", \"ingress\": [{\"type\": \"parse\"}, {\"type\": \"forward\"}, "
		 "{\"type\": \"impair\", \"max_held_pkts\": 64, \"events\": [{\"name\": \"slow\", "
		 "\"action\": \"delay\", \"delay_us\": 100}]}], " TM_FAST "}", mk_roce, 100, 0,
		 "impair.drop_delay_full", 36, false, NULL);
}

static void
test_delay_full(void **state)
{
	(void)state;
	scenario("{" TWO_PORTS ", \"ingress\": [{\"type\": \"parse\"}, {\"type\": \"forward\"}, "
		 "{\"type\": \"delay\", \"max_held_pkts\": 64, \"rules\": [{\"dist\": \"constant\", "
		 "\"delay_us\": 50}]}], " TM_FAST "}", mk_roce, 80, 0, "delay.drop_held_full", 16,
		 false, NULL);
}

static void
test_cnp_nic(void **state)
{
	(void)state;
	scenario("{" TWO_PORTS ", \"ingress\": [{\"type\": \"parse\"}, {\"type\": \"forward\"}], "
		 "\"egress\": [{\"type\": \"cnp\", \"drop_nic_cnps\": true}], " TM_FAST "}", mk_cnp, 3,
		 0, "cnp.drop_nic_cnp", 3, false, NULL);
}

static void
test_tm_queue_full(void **state)
{
	(void)state;
	scenario("{" TWO_PORTS ", \"ingress\": [{\"type\": \"forward\"}], \"tm\": {\"ports\": ["
		 "{\"port\": \"p1\", \"rate_gbps\": 1, \"queue_pkts\": 16}]}}", mk_roce, 50, 0,
		 "tm.p1.drop_queue_full", 34, false, NULL);
}

static void
test_tm_buffer_full(void **state)
{
	(void)state;
	scenario("{" TWO_PORTS ", \"ingress\": [{\"type\": \"forward\"}], \"tm\": {\"buffer\": "
		 "{\"total_kb\": 2}, \"ports\": [{\"port\": \"p1\", \"rate_gbps\": 1}]}}", mk_roce, 40,
		 0, "tm.p1.drop_buffer_full", 0, false, NULL);
}

static void
link_down(struct emu_switch *sw)
{
	struct emu_err err;
	json_t *v = json_string("down");

	assert_int_equal(emu_switch_tm_set(sw, 1, "link", v, true, 0, "t", &err), 0);
	json_decref(v);
}

static void
test_tm_link_down(void **state)
{
	(void)state;
	scenario("{" TWO_PORTS ", \"ingress\": [{\"type\": \"forward\"}], " TM_FAST "}", mk_roce, 9,
		 0, "tm.p1.drop_link_down", 9, false, link_down);
}

static void
test_runner_no_route(void **state)
{
	(void)state;
	scenario("{" TWO_PORTS ", \"ingress\": [{\"type\": \"parse\"}], " TM_FAST "}", mk_roce, 12,
		 0, "runner.drop_no_route", 12, false, NULL);
}

static void
test_runner_discard(void **state)
{
	(void)state;
	scenario("{" TWO_PORTS ", \"ingress\": [{\"type\": \"forward\"}], \"tm\": {\"ports\": ["
		 "{\"port\": \"p1\", \"rate_gbps\": 0.001}]}}", mk_roce, 20, 0,
		 "runner.drop_discarded_at_exit", 20, true, NULL);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_invalid),
		cmocka_unit_test(test_parse_icrc),
		cmocka_unit_test(test_forward_no_pair),
		cmocka_unit_test(test_forward_unknown),
		cmocka_unit_test(test_forward_same_port),
		cmocka_unit_test(test_impair_drop),
		cmocka_unit_test(test_impair_delay_full),
		cmocka_unit_test(test_delay_full),
		cmocka_unit_test(test_cnp_nic),
		cmocka_unit_test(test_tm_queue_full),
		cmocka_unit_test(test_tm_buffer_full),
		cmocka_unit_test(test_tm_link_down),
		cmocka_unit_test(test_runner_no_route),
		cmocka_unit_test(test_runner_discard),
	};

	pool = test_eal_pool("test_drops", 8192);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
