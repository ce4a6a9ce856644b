/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The fabric runner's bulk merge of a level's departures (lib/switch/emu_switch_fabric.c
 * emu_fab_merge_plain()) against the one-departure-at-a-time merge it replaces, on random
 * traffic (as unit-tm's test_enqueue_burst_same does for the TM's burst enqueue): two copies
 * of one leaf-leaf fabric switch, one told to merge one at a time (fab_rt.one_by_one), get the
 * same frames at the same times and are drained alike; every port must send the same frames
 * with the same bytes, times and traces at every step, with the same drops in the same order
 * and the same counters.
 */
#include <inttypes.h>

#include "lib/switch/emu_switch_int.h"
#include "lib/tm/emu_tm.h"
#include "tests/unit/test_common.h"

static struct rte_mempool *pool;
static const uint8_t mac_a[6] = { 0x02, 0, 0, 0, 0, 0x0a };
static const uint8_t mac_b[6] = { 0x02, 0, 0, 0, 0, 0x0b };
static uint64_t rs = 0x9E3779B97F4A7C15ULL;

static uint32_t
rnd(void)
{
	rs ^= rs << 13;
	rs ^= rs >> 7;
	rs ^= rs << 17;
	return (uint32_t)(rs >> 11);
}

/*
 * p0 on leaf0, p1 on leaf1, four parallel links from leaf0 to leaf1 (two at 25 Gb/s both ways,
 * two one way at 10 Gb/s with a long delay; lossless 3 with PFC between hops, ECN, a buffer
 * of their own): ECMP over links of one level, merged by the runner level by level (the fabric
 * bench_fabric measures; a fabric with spines is run event by event). p1 is slower than the
 * links together, so its queue builds, pauses the links (PFC between hops), their queues
 * build and pause p0's sender (real PFC), packets are dropped (a lossy priority) and
 * ECN-marked. (A delay line is sized for the port's queue as well as its delay, so none fills
 * here: the merge's fallback for a full one is not reached by this test.)
 */
#define FAB_ECN "\"ecn\": {\"kmin_kb\": 4, \"kmax_kb\": 16, \"pmax\": 0.3}"
#define FAB_TM_PORT(GBPS) "\"rate_gbps\": " GBPS ", \"buffer_kb\": 48, \"lossless\": [3], " \
	FAB_ECN ", \"pfc\": {\"cable_m\": 3}"
#define FAB_LINK "\"from\": \"leaf0\", \"to\": \"leaf1\", \"buffer_kb\": 32, \"lossless\": [3], " \
	FAB_ECN ", \"pfc\": {\"cable_m\": 3}"
#define FAB_SLOW(NAME) "{" FAB_LINK ", \"name\": \"" NAME "\", \"both_ways\": false," \
	" \"rate_gbps\": 10, \"delay_us\": 3}"

static const char *const fab_json =
	"{\"ports\": [{\"name\": \"p0\"}, {\"name\": \"p1\"}],"
	" \"ingress\": [{\"type\": \"parse\"}, {\"type\": \"forward\"}],"
	" \"tm\": {\"buffer\": {\"total_kb\": 256, \"mode\": \"dynamic\", \"alpha\": 1,"
	" \"cell_bytes\": 256}, \"ports\": [{\"port\": \"p0\", " FAB_TM_PORT("100") "},"
	" {\"port\": \"p1\", " FAB_TM_PORT("25") "}]},"
	" \"fabric\": {\"switches\": [{\"name\": \"leaf0\", \"ports\": [\"p0\"]},"
	" {\"name\": \"leaf1\", \"ports\": [\"p1\"]}],"
	" \"links\": [{" FAB_LINK ", \"count\": 2, \"rate_gbps\": 25}, " FAB_SLOW("slow0") ", "
	FAB_SLOW("slow1") "]}}";

/* The PSN of a frame fab_frame() built: its sequence number. */
static uint32_t
fab_seq(struct rte_mbuf *m)
{
	const uint8_t *b = rte_pktmbuf_mtod_offset(m, const uint8_t *, 14 + 20 + 8 + 9);

	return (uint32_t)b[0] << 16 | (uint32_t)b[1] << 8 | b[2];
}

static unsigned int fab_drops_seen[2];
static uint32_t fab_drop_log[2][4096];

static void
fab_drop_hook(void *arg, struct rte_mbuf *m, uint32_t reason)
{
	unsigned int s = (unsigned int)(uintptr_t)arg;

	if (fab_drops_seen[s] < RTE_DIM(fab_drop_log[s]))
		fab_drop_log[s][fab_drops_seen[s]] = fab_seq(m) ^ reason << 24;
	fab_drops_seen[s]++;
}

/* A RoCEv2 WRITE ONLY from p0's or p1's side with its own UDP source port and DestQP (ECMP
 * entropy), DSCP 26 (lossless 3) or 0, its sequence number in the PSN. */
static struct rte_mbuf *
fab_frame(uint32_t len, uint32_t seq, uint16_t sport, uint32_t qp, uint8_t dscp, bool back)
{
	struct roce_hdr_params hp = roce_hdr_params_default();
	struct rte_mbuf *m = rte_pktmbuf_alloc(pool);
	char *d;

	assert_non_null(m);
	d = rte_pktmbuf_append(m, (uint16_t)len);
	assert_non_null(d);
	memcpy(hp.dst_mac, back ? mac_a : mac_b, 6);
	memcpy(hp.src_mac, back ? mac_b : mac_a, 6);
	hp.opcode = 0x0A;
	hp.dscp = dscp;
	hp.ecn = 2;
	hp.psn = seq;
	hp.dest_qp = qp;
	hp.udp_sport = sport;
	assert_int_equal(roce_build((uint8_t *)d, len, &hp, NULL, len - 74), (int)len);
	memset(emu_meta(m), 0, sizeof(struct emu_pkt_meta));
	return m;
}

static void
fab_tx(struct emu_switch *sw[2], uint16_t port, uint64_t t, unsigned int *out)
{
	struct rte_mbuf **pa, **pb;
	uint16_t na, nb, i, take;

	na = emu_switch_tx_prepare(sw[0], port, t, &pa);
	nb = emu_switch_tx_prepare(sw[1], port, t, &pb);
	assert_int_equal(na, nb);
	take = (uint16_t)(rnd() % 4 == 0 ? na / 2 : na); /* now and then a full TX ring */
	for (i = 0; i < take; i++) {
		const struct emu_pkt_meta *ma = emu_meta(pa[i]), *mb = emu_meta(pb[i]);

		assert_int_equal(rte_pktmbuf_pkt_len(pa[i]), rte_pktmbuf_pkt_len(pb[i]));
		assert_memory_equal(rte_pktmbuf_mtod(pa[i], void *), rte_pktmbuf_mtod(pb[i], void *),
				    rte_pktmbuf_pkt_len(pa[i]));
		assert_int_equal(ma->ts_ns, mb->ts_ns);
		assert_memory_equal(&ma->trace, &mb->trace, sizeof(ma->trace));
	}
	rte_pktmbuf_free_bulk(pa, take);
	rte_pktmbuf_free_bulk(pb, take);
	emu_switch_tx_done(sw[0], port, take);
	emu_switch_tx_done(sw[1], port, take);
	*out += take;
}

static void
test_fabric_bulk_same(void **state)
{
	struct emu_pipeline *pl[2];
	struct emu_switch *sw[2];
	struct emu_conservation c[2];
	unsigned int it, i, s, out = 0, sent = 0;
	uint64_t t = 1000000;
	char *ja, *jb;

	(void)state;
	for (s = 0; s < 2; s++) {
		pl[s] = test_pipeline(fab_json);
		sw[s] = test_switch(pool, pl[s]);
		assert_int_equal(emu_switch_add_drop_hook(sw[s], fab_drop_hook,
							  (void *)(uintptr_t)s), 0);
	}
	assert_non_null(sw[0]->fab_rt);
	assert_true(sw[0]->fab->levels_exact);
	sw[0]->fab_rt->one_by_one = true;
	for (it = 0; it < 4000; it++) {
		for (s = 0; s < 2; s++) {
			/* p0 sends most; p1 a little back (through the spine) */
			uint16_t port = (uint16_t)(rnd() % 5 == 0);
			unsigned int n = 1 + rnd() % 32;
			struct rte_mbuf *ba[32], *bb[32];

			/* half the bursts of one length: frames that leave parallel links at
			 * the same ns (ties merged by link order); some of minimum-size frames
			 * that are not RoCE (priority 0, all of one ECMP hash) */
			uint32_t one_len = rnd() % 2 ? 74 + 4 * (rnd() % 256) : 0;
			bool tiny = rnd() % 6 == 0;

			for (i = 0; i < n; i++) {
				uint32_t len = one_len ? one_len : 74 + 4 * (rnd() % 256);
				uint32_t qp = 0x100 + rnd() % 16;
				uint8_t dscp = rnd() % 4 ? 26 : 0;

				if (tiny) {
					const uint8_t *dst = port == 1 ? mac_a : mac_b;
					const uint8_t *src = port == 1 ? mac_b : mac_a;

					ba[i] = test_frame(pool, dst, src, 60, sent);
					bb[i] = test_frame(pool, dst, src, 60, sent);
				} else {
					ba[i] = fab_frame(len, sent, (uint16_t)(0xC000 + qp * 977), qp,
							  dscp, port == 1);
					bb[i] = fab_frame(len, sent, (uint16_t)(0xC000 + qp * 977), qp,
							  dscp, port == 1);
				}
				sent++;
			}
			emu_switch_rx(sw[0], port, ba, (uint16_t)n, t);
			emu_switch_rx(sw[1], port, bb, (uint16_t)n, t);
			assert_int_equal(emu_switch_next_event_ns(sw[0]),
					 emu_switch_next_event_ns(sw[1]));
			/* what arrives at one instant; then a step of 0 to 3.5 us (about 90 Gb/s
			 * from p0 on average, in bursts) */
			if (rnd() % 2)
				t += rnd() % 7000;
		}
		fab_tx(sw, 0, t, &out);
		fab_tx(sw, 1, t, &out);
		if (rnd() % 8 == 0) {
			/* the next event, as replay would call it */
			uint64_t nx = emu_switch_next_event_ns(sw[0]);

			if (nx != UINT64_MAX && nx > t && nx - t < 100000) {
				t = nx;
				fab_tx(sw, 0, t, &out);
				fab_tx(sw, 1, t, &out);
			}
		}
	}
	for (i = 0; i < 200; i++) {
		t += 5000;
		fab_tx(sw, 0, t, &out);
		fab_tx(sw, 1, t, &out);
	}
	ja = json_dumps(emu_switch_stats_json(sw[0]), JSON_SORT_KEYS | JSON_COMPACT);
	jb = json_dumps(emu_switch_stats_json(sw[1]), JSON_SORT_KEYS | JSON_COMPACT);
	assert_non_null(ja);
	assert_non_null(jb);
	assert_string_equal(ja, jb);
	if (getenv("FAB_DEBUG")) puts(ja);
	for (s = 0; s < 2; s++)
		emu_switch_conservation(sw[s], &c[s]);
	assert_memory_equal(&c[0], &c[1], sizeof(c[0]));
	assert_int_equal(c[0].unaccounted, 0);
	assert_int_equal(fab_drops_seen[0], fab_drops_seen[1]);
	assert_memory_equal(fab_drop_log[0], fab_drop_log[1],
			    RTE_MIN(fab_drops_seen[0], RTE_DIM(fab_drop_log[0])) * sizeof(uint32_t));
	print_message("fabric bulk merge: %u frames in, %u out, %" PRIu64 " dropped, %" PRIu64
		      " held: same as one departure at a time\n", sent, out, c[0].drops, c[0].held);
	assert_true(c[0].drops > 0);
	{
		struct emu_tm *tm = emu_switch_tm(sw[0]);
		uint64_t xoff[2] = { 0, 0 }, marks = 0;
		unsigned int p;

		for (p = 0; p < 2 + 6; p++) {
			xoff[p >= 2] += emu_tm_port_ctrs(tm, (uint16_t)p)[EMU_TM_CTR_PFC_TX_XOFF];
			marks += emu_tm_port_ctrs(tm, (uint16_t)p)[EMU_TM_CTR_ECN_MARKED];
		}
		print_message("  XOFF %" PRIu64 " to the real ports, %" PRIu64 " between hops, ECN "
			      "marks %" PRIu64 "\n", xoff[0], xoff[1], marks);
		assert_true(xoff[0] > 0);
		assert_true(xoff[1] > 0);
		assert_true(marks > 0);
	}
	free(ja);
	free(jb);
	for (s = 0; s < 2; s++) {
		emu_switch_free(sw[s]);
		emu_pipeline_free(pl[s]);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fabric_bulk_same),
	};

	pool = test_eal_pool("test_fabric", 16384);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
