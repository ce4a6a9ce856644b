/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The fabric runner's burst paths against the per-packet ones they replace, on random traffic
 * (as unit-tm's test_enqueue_burst_same does for the TM's burst enqueue):
 * - emu_tm_enqueue_each() against emu_tm_advance() + emu_tm_enqueue() per packet with the PFC
 *   frames collected after each packet that left one pending (what a fabric hop's arrivals
 *   at one instant did), and emu_tm_pfc_idle() against what emu_tm_pfc_collect() finds;
 * - a whole leaf-spine switch whose levels are merged in bulk (lib/switch/emu_switch_fabric.c
 *   emu_fab_merge_plain()) against the same switch merging one departure at a time
 *   (fab_rt.one_by_one): the same frames out of every port at the same steps, with the same
 *   bytes, times and traces, the same drops in the same order, the same counters.
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

/* Three ports: 0 and 1 are the ingress sides (lossless 3 with PFC, headroom), 2 the egress
 * (a small buffer: drops, headroom, XOFF, ECN marks at dequeue). */
static void
each_cfg(struct emu_tm_cfg *cfg, bool dynamic)
{
	unsigned int i;

	cfg->buffer.total_bytes = 48 * 1024;
	cfg->buffer.dynamic = dynamic;
	cfg->buffer.alpha = 1;
	cfg->buffer.cell_bytes = 256;
	for (i = 0; i < 3; i++) {
		cfg->ports[i].rate_bps = 10000000000ULL;
		cfg->ports[i].queue_pkts = 64;
		cfg->ports[i].limit_bytes = 40 * 1024;
		cfg->ports[i].queue_limit_bytes = 24 * 1024;
		cfg->ports[i].headroom_bytes = 6 * 1024;
		cfg->ports[i].lossless_mask = 1u << 3;
		cfg->ports[i].pfc.enabled = true;
		cfg->ports[i].pfc.xoff_bytes = 12 * 1024;
		cfg->ports[i].pfc.xon_bytes = 6 * 1024;
		cfg->ports[i].pfc.quanta = 500; /* refreshes every 12.8 us */
		cfg->ports[i].ecn.enabled = true;
		cfg->ports[i].ecn.kmin_bytes = 4 * 1024;
		cfg->ports[i].ecn.kmax_bytes = 16 * 1024;
		cfg->ports[i].ecn.pmax = 0.2;
	}
}

static struct emu_tm *
each_tm(bool dynamic)
{
	struct emu_tm_cfg cfg;
	struct emu_err err;
	struct emu_tm *tm;

	emu_tm_cfg_default(&cfg, 3);
	each_cfg(&cfg, dynamic);
	tm = emu_tm_create(&cfg, &err);
	assert_non_null(tm);
	return tm;
}

/* Dequeue port @p port of both TMs at @p t and compare what leaves. */
static unsigned int
each_take(struct emu_tm *a, struct emu_rng *ra, struct emu_tm *b, struct emu_rng *rb,
	  uint16_t port, uint64_t t)
{
	struct rte_mbuf *oa[32], *ob[32];
	unsigned int left = 0;
	uint16_t na, nb, i;

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
					    rte_pktmbuf_mtod(ob[i], void *), rte_pktmbuf_pkt_len(oa[i]));
			rte_pktmbuf_free(oa[i]);
			rte_pktmbuf_free(ob[i]);
			left++;
		}
	} while (na > 0);
	return left;
}

/* PFC frames of both TMs at @p t: the same, and none when emu_tm_pfc_idle() said so. */
static unsigned int each_busy; /* collections emu_tm_pfc_idle() said had work */

static unsigned int
each_pfc(struct emu_tm *a, struct emu_tm *b, uint64_t t, unsigned int *idle)
{
	struct emu_tm_pfc_frame fa[8], fb[8];
	bool ia = emu_tm_pfc_idle(a, t);
	unsigned int na, nb;

	assert_int_equal(ia, emu_tm_pfc_idle(b, t));
	na = emu_tm_pfc_collect(a, t, fa, 8);
	nb = emu_tm_pfc_collect(b, t, fb, 8);
	assert_int_equal(na, nb);
	assert_memory_equal(fa, fb, na * sizeof(fa[0]));
	if (ia) {
		assert_int_equal(na, 0);
		*idle += 1;
	} else {
		each_busy++;
	}
	return na;
}

static void
test_enqueue_each_same(void **state)
{
	uint64_t totals[EMU_TM_CTR_MAX] = { 0 };
	unsigned int mode, it, i, p, c, sent = 0, left = 0, calls = 0, stops = 0, idle = 0;
	unsigned int frames = 0;

	(void)state;
	for (mode = 0; mode < 2; mode++) {
		struct emu_tm *a = each_tm(mode == 1), *b = each_tm(mode == 1);
		struct emu_rng ra, rb;
		uint64_t t = 1000;

		emu_rng_seed(&ra, 7, 7);
		emu_rng_seed(&rb, 7, 7);
		for (it = 0; it < 6000; it++) {
			struct emu_tm_pfc_frame fa[33 * 8], fb[33 * 8];
			struct rte_mbuf *ba[32], *bb[32];
			unsigned int n = 1 + rnd() % 32, nfa, nfb;
			uint16_t k;

			for (i = 0; i < n; i++) {
				uint32_t len = 74 + 4 * (rnd() % 360);
				uint8_t prio = (rnd() % 4) ? 3 : 0, ecn = (uint8_t)(rnd() % 3);
				uint16_t in = (uint16_t)(rnd() % 3); /* 2: no lossless ingress */
				bool hop = rnd() % 2;

				ba[i] = test_roce_frame(pool, mac_b, mac_a, len, sent, 26, ecn);
				bb[i] = test_roce_frame(pool, mac_b, mac_a, len, sent, 26, ecn);
				emu_meta(ba[i])->prio = emu_meta(bb[i])->prio = prio;
				/* as a fabric hop marks it, or as from a real port */
				if (hop) {
					emu_meta(ba[i])->hop_in = emu_meta(bb[i])->hop_in = in;
					emu_meta(ba[i])->flags |= EMU_META_HOP;
					emu_meta(bb[i])->flags |= EMU_META_HOP;
					emu_meta(ba[i])->in_port = emu_meta(bb[i])->in_port = 2;
				} else {
					emu_meta(ba[i])->in_port = emu_meta(bb[i])->in_port = in;
				}
				sent++;
			}
			/* a: the hop's arrivals one by one, the PFC frames collected after each
			 * that left some due (lib/switch emu_fab_arrive() and the merge's check) */
			nfa = nfb = 0;
			for (i = 0; i < n; i++) {
				emu_tm_advance(a, 2, t, &ra);
				emu_tm_enqueue(a, 2, ba[i], t, &ra);
				if (emu_tm_pfc_pending(a))
					nfa += emu_tm_pfc_collect(a, t, fa + nfa, 8);
			}
			/* b: the same arrivals in runs, the same collection after each call that
			 * stopped with some due */
			for (i = 0; i < n; i += k) {
				k = emu_tm_enqueue_each(b, 2, bb + i, (uint16_t)(n - i), t, &rb);
				assert_true(k >= 1 && k <= n - i);
				calls++;
				if (i + k < n)
					stops++;
				if (emu_tm_pfc_pending(b))
					nfb += emu_tm_pfc_collect(b, t, fb + nfb, 8);
			}
			assert_int_equal(nfa, nfb);
			assert_memory_equal(fa, fb, nfa * sizeof(fa[0]));
			frames += nfa;
			each_pfc(a, b, t, &idle);
			for (p = 0; p < 3; p++)
				assert_memory_equal(emu_tm_port_ctrs(a, (uint16_t)p),
						    emu_tm_port_ctrs(b, (uint16_t)p),
						    sizeof(uint64_t) * EMU_TM_CTR_MAX);
			/* runs at one instant, then the next at most a few frames' time later:
			 * the link is sometimes idle, sometimes busy past it */
			t += rnd() % 4 == 0 ? rnd() % 20000 : rnd() % 200;
			if (rnd() % 3 == 0) {
				left += each_take(a, &ra, b, &rb, 2, t);
				frames += each_pfc(a, b, t, &idle); /* refreshes, XON */
			}
		}
		left += each_take(a, &ra, b, &rb, 2, UINT64_MAX / 2);
		for (p = 0; p < 3; p++) {
			const uint64_t *ca = emu_tm_port_ctrs(a, (uint16_t)p);

			assert_memory_equal(ca, emu_tm_port_ctrs(b, (uint16_t)p),
					    sizeof(uint64_t) * EMU_TM_CTR_MAX);
			for (c = 0; c < EMU_TM_CTR_MAX; c++)
				totals[c] += ca[c];
		}
		emu_tm_free(a);
		emu_tm_free(b);
	}
	print_message("enqueue_each: %u frames in %u calls (%u stopped for PFC), %u queued, %"
		      PRIu64 " dropped, %" PRIu64 " into headroom, %" PRIu64 " ECN marks, %"
		      PRIu64 " XOFF, %" PRIu64 " XON, %u PFC frames, %u + %u collections idle + not: same\n",
		      sent, calls, stops, left,
		      totals[EMU_TM_CTR_DROP_QUEUE_FULL] + totals[EMU_TM_CTR_DROP_BUFFER_FULL] +
			      totals[EMU_TM_CTR_DROP_HEADROOM_OVERFLOW],
		      totals[EMU_TM_CTR_HEADROOM_PKTS], totals[EMU_TM_CTR_ECN_MARKED],
		      totals[EMU_TM_CTR_PFC_TX_XOFF], totals[EMU_TM_CTR_PFC_TX_XON], frames, idle,
		      each_busy);
	assert_true(stops > 0);
	assert_true(calls < sent / 2);
	assert_true(totals[EMU_TM_CTR_DROP_QUEUE_FULL] > 0);
	assert_true(totals[EMU_TM_CTR_HEADROOM_PKTS] > 0);
	assert_true(totals[EMU_TM_CTR_ECN_MARKED] > 0);
	assert_true(totals[EMU_TM_CTR_PFC_TX_XOFF] > 0);
	assert_true(totals[EMU_TM_CTR_PFC_TX_XON] > 0);
	assert_true(idle > 0);
	assert_true(each_busy > 0);
}

/*
 * p0 on leaf0, p1 on leaf1, four parallel links from leaf0 to leaf1 (two at 25 Gb/s both ways,
 * two one way at 10 Gb/s with a long delay; lossless 3 with PFC between hops, ECN, a buffer
 * of their own): ECMP over links of one level, merged by the runner level by level (the fabric
 * bench_fabric measures; a fabric with spines is run event by event). p1 is slower than the
 * links together, so its queue builds, pauses the links (PFC between hops), their queues
 * build and pause p0's sender (real PFC), wires fill, packets are dropped (a lossy priority)
 * and ECN-marked.
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
	" {\"port\": \"p1\", " FAB_TM_PORT("40") "}]},"
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
			 * the same ns (ties merged by link order, runs at one instant) */
			uint32_t one_len = rnd() % 2 ? 74 + 4 * (rnd() % 256) : 0;

			for (i = 0; i < n; i++) {
				uint32_t len = one_len ? one_len : 74 + 4 * (rnd() % 256);
				uint32_t qp = 0x100 + rnd() % 16;
				uint8_t dscp = rnd() % 4 ? 26 : 0;

				ba[i] = fab_frame(len, sent, (uint16_t)(0xC000 + qp * 977), qp, dscp,
						  port == 1);
				bb[i] = fab_frame(len, sent, (uint16_t)(0xC000 + qp * 977), qp, dscp,
						  port == 1);
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
		cmocka_unit_test(test_enqueue_each_same),
		cmocka_unit_test(test_fabric_bulk_same),
	};

	pool = test_eal_pool("test_fabric", 16384);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
