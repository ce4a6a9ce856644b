/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The fabric's bulk paths against its packet-by-packet ones. Two switches from one pipeline
 * with a fabric (fs_pipeline(): two leaves or a leaf-spine) get the same frames at the same
 * times: A with emu_switch_set_general_only() (every
 * packet onto its link and into its port's TM one at a time, the TM's general steps), B as it
 * runs (bursts onto the links, the last level's departures merged and delivered in bulk while
 * nothing they do can reach beyond their port). Every port must send the same frames, byte
 * for byte, at the same times, the next event must be the same after every step, and at the
 * end every counter (the stats JSON, with every TM port and link). The traffic goes from calm
 * (the bulk paths run) to incasts that queue, mark, drop and pause inside the fabric (they
 * must not, or must hand over at the right moment), so the test fails if either is wrong.
 */
#include "test_common.h"
#include "lib/proto/roce_build.h"

static struct rte_mempool *pool;

#define FS_PORTS 4
static const uint8_t fs_mac[FS_PORTS][6] = {
	{ 2, 0, 0, 0, 0, 0xa }, { 2, 0, 0, 0, 0, 0xb }, { 2, 0, 0, 0, 0, 0xc }, { 2, 0, 0, 0, 0, 0xd },
};

/* The pipeline of @p mode: two leaves joined by four links; 0, ECN on the ports and links (its
 * kmin binds first); 1, no ECN on the ports and low XOFF thresholds on the links (PFC binds);
 * 2, no ECN on the ports, a static buffer; 3, as 1 in a leaf-spine (two spines, two links
 * between each leaf and spine, spine1 spraying at random, its links to leaf1 losing 2 %): two
 * levels; 4, as 3 with spine0 routing adaptively (by queue depth). */
static struct emu_pipeline *
fs_pipeline(unsigned int mode)
{
	static char json[4096];
	const char *ecn = mode == 0 ? ", \"ecn\": {\"kmin_kb\": 8, \"kmax_kb\": 40, \"pmax\": 0.5}" : "";
	const char *buffer = mode == 2 ? "\"mode\": \"static\"" : "\"mode\": \"dynamic\", \"alpha\": 1";
	const char *spines = mode == 4 ?
		", {\"name\": \"spine0\", \"route\": \"adaptive\"}, {\"name\": \"spine1\","
		" \"route\": \"random\"}" :
		", {\"name\": \"spine0\"}, {\"name\": \"spine1\", \"route\": \"random\"}";
	char port[512], link[256], links[2048];
	int n;

	snprintf(port, sizeof(port), "\"rate_gbps\": 10, \"lossless\": [3], \"pfc\": {\"xoff_kb\": 24, "
		 "\"xon_kb\": 12, \"quanta\": 200}%s%s", ecn, mode == 2 ? ", \"queue_kb\": 48" : "");
	snprintf(link, sizeof(link), "\"rate_gbps\": 5, \"buffer_kb\": 96, \"lossless\": [3],"
		 " \"pfc\": {\"xoff_kb\": %s, \"quanta\": 100},"
		 " \"ecn\": {\"kmin_kb\": 6, \"kmax_kb\": 30, \"pmax\": 0.5}",
		 mode == 1 || mode == 3 ? "6, \"xon_kb\": 3" : "20, \"xon_kb\": 10");
	if (mode >= 3) /* leaf-spine: two levels, up then down (the last) */
		snprintf(links, sizeof(links),
			 "{\"from\": \"leaf0\", \"to\": \"spine0\", \"delay_us\": 1, \"count\": 2, %s},"
			 " {\"from\": \"leaf0\", \"to\": \"spine1\", \"delay_us\": 2, \"count\": 2, %s},"
			 " {\"from\": \"leaf1\", \"to\": \"spine0\", \"delay_us\": 0.5, \"count\": 2, %s},"
			 " {\"from\": \"leaf1\", \"to\": \"spine1\", \"delay_us\": 3, \"count\": 2,"
			 " \"loss\": 0.02, %s}",
			 link, link, link, link);
	else /* two leaves: one level */
		snprintf(links, sizeof(links),
			 "{\"from\": \"leaf0\", \"to\": \"leaf1\", \"delay_us\": 1, \"count\": 4, %s}",
			 link);
	n = snprintf(json, sizeof(json),
		"{\"ports\": [{\"name\": \"a\"}, {\"name\": \"b\"}, {\"name\": \"c\"}, {\"name\": \"d\"}],"
		" \"ingress\": [{\"type\": \"parse\"}, {\"type\": \"forward\", \"mode\": \"static\","
		"   \"unknown\": \"drop\", \"macs\": [{\"mac\": \"02:00:00:00:00:0a\", \"port\": \"a\"},"
		"   {\"mac\": \"02:00:00:00:00:0b\", \"port\": \"b\"},"
		"   {\"mac\": \"02:00:00:00:00:0c\", \"port\": \"c\"},"
		"   {\"mac\": \"02:00:00:00:00:0d\", \"port\": \"d\"}]}],"
		" \"tm\": {\"buffer\": {\"total_kb\": 256, %s,"
		"   \"cell_bytes\": 256}, \"ports\": ["
		"   {\"port\": \"a\", %s}, {\"port\": \"b\", %s},"
		"   {\"port\": \"c\", %s}, {\"port\": \"d\", %s}]},"
		" \"fabric\": {\"switches\": [{\"name\": \"leaf0\", \"ports\": [\"a\", \"b\"]},"
		"   {\"name\": \"leaf1\", \"ports\": [\"c\", \"d\"], \"route\": \"round_robin\"}%s],"
		"  \"links\": [%s]}}",
		buffer, port, port, port, port, mode >= 3 ? spines : "", links);
	assert_true(n > 0 && (size_t)n < sizeof(json));
	return test_pipeline(json);
}

static uint64_t fs_rs = 0x2545F4914F6CDD1DULL;

static uint32_t
fs_rnd(void)
{
	fs_rs ^= fs_rs << 13;
	fs_rs ^= fs_rs >> 7;
	fs_rs ^= fs_rs << 17;
	return (uint32_t)(fs_rs >> 11);
}

/* An RC RDMA WRITE ONLY frame of @p len bytes from port @p src to @p dst, unparsed (the
 * switch's parse stage reads it), its UDP source port @p sport (the ECMP hash's entropy). */
static struct rte_mbuf *
fs_frame(unsigned int src, unsigned int dst, uint32_t len, uint32_t seq, uint16_t sport,
	 uint8_t dscp)
{
	struct roce_hdr_params hp = roce_hdr_params_default();
	struct rte_mbuf *m = rte_pktmbuf_alloc(pool);
	char *p;

	assert_non_null(m);
	p = rte_pktmbuf_append(m, (uint16_t)len);
	assert_non_null(p);
	memcpy(hp.dst_mac, fs_mac[dst], 6);
	memcpy(hp.src_mac, fs_mac[src], 6);
	hp.src_ip[3] = (uint8_t)(1 + src);
	hp.dst_ip[3] = (uint8_t)(1 + dst);
	hp.opcode = 0x0A;
	hp.dscp = dscp;
	hp.ecn = 2;
	hp.psn = seq;
	hp.dest_qp = 0x40 + src;
	hp.udp_sport = sport;
	assert_int_equal(roce_build((uint8_t *)p, len, &hp, NULL, len - 74), (int)len);
	memset(emu_meta(m), 0, sizeof(struct emu_pkt_meta));
	return m;
}

/* Both switches transmit what every port has for @p t: the same frames, the same times. */
static unsigned int
fs_tx(struct emu_switch *a, struct emu_switch *b, uint64_t t)
{
	unsigned int p, sent = 0;
	uint16_t na, nb, i;

	for (p = 0; p < FS_PORTS; p++) {
		struct rte_mbuf **pa, **pb;

		na = emu_switch_tx_prepare(a, (uint16_t)p, t, &pa);
		nb = emu_switch_tx_prepare(b, (uint16_t)p, t, &pb);
		assert_int_equal(na, nb);
		for (i = 0; i < na; i++) {
			assert_int_equal(rte_pktmbuf_pkt_len(pa[i]), rte_pktmbuf_pkt_len(pb[i]));
			assert_memory_equal(rte_pktmbuf_mtod(pa[i], void *),
					    rte_pktmbuf_mtod(pb[i], void *), rte_pktmbuf_pkt_len(pa[i]));
			assert_int_equal(emu_meta(pa[i])->ts_ns, emu_meta(pb[i])->ts_ns);
			rte_pktmbuf_free(pa[i]);
			rte_pktmbuf_free(pb[i]);
		}
		emu_switch_tx_done(a, (uint16_t)p, na);
		emu_switch_tx_done(b, (uint16_t)p, nb);
		sent += na;
	}
	return sent;
}

/* Run both to @p until event by event; their next events must agree at every step. */
static unsigned int
fs_run(struct emu_switch *a, struct emu_switch *b, uint64_t until)
{
	unsigned int sent = 0;
	uint64_t t;

	for (;;) {
		t = emu_switch_next_event_ns(a);
		assert_int_equal(t, emu_switch_next_event_ns(b));
		if (t > until)
			return sent;
		sent += fs_tx(a, b, t);
	}
}

/* One pipeline mode: 12 000 bursts through both switches; adds to @p totals and @p drops. */
static void
fs_mode(unsigned int mode, uint64_t totals[EMU_TM_CTR_MAX], uint64_t *drops)
{
	struct emu_pipeline *pl = fs_pipeline(mode);
	struct emu_switch *a = test_switch(pool, pl), *b = test_switch(pool, pl);
	unsigned int step, sent = 0, out = 0, phase = 0, p, c;
	struct emu_conservation ca;
	uint64_t t = 1000000;
	json_t *ja, *jb;
	char *sa, *sb;

	emu_switch_set_general_only(a, true);
	for (step = 0; step < 12000; step++) {
		struct rte_mbuf *ma[32], *mb[32];
		unsigned int src, dst, n, i;
		uint32_t len;

		if (step % 1500 == 0)
			phase = fs_rnd() % 3; /* 0: calm, 1: incast into one port, 2: all to all */
		if (phase == 1) {
			src = fs_rnd() % 2;
			dst = 2;
		} else {
			src = fs_rnd() % FS_PORTS;
			dst = (src + 1 + fs_rnd() % (FS_PORTS - 1)) % FS_PORTS;
		}
		n = 1 + fs_rnd() % (phase == 0 ? 8 : 32);
		len = 74 + 4 * (fs_rnd() % (phase == 0 ? 300 : 480));
		for (i = 0; i < n; i++) {
			uint16_t sport = (uint16_t)(0xC000 + fs_rnd() % 64);
			uint8_t dscp = fs_rnd() % 4 ? 26 : 0; /* priority 3 (lossless) or 0 */

			/* all to all: a burst's packets for several ports, some on its own leaf
			 * (the fabric's burst entry checks the ports of each) */
			if (phase == 2 && i > 0)
				dst = (src + 1 + fs_rnd() % (FS_PORTS - 1)) % FS_PORTS;
			ma[i] = fs_frame(src, dst, len, sent + i, sport, dscp);
			mb[i] = fs_frame(src, dst, len, sent + i, sport, dscp);
		}
		emu_switch_rx(a, (uint16_t)src, ma, (uint16_t)n, t);
		emu_switch_rx(b, (uint16_t)src, mb, (uint16_t)n, t);
		sent += n;
		/* calm: microseconds apart; incasts: about twice what the ports take */
		t += phase == 0 ? 2000 + fs_rnd() % 20000 : 2000 + fs_rnd() % 8000;
		/* replay steps from event to event; live mode polls now and then, and a poll
		 * finds many departures of different moments to merge */
		if (fs_rnd() % 2)
			out += fs_run(a, b, t);
		else if (emu_switch_next_event_ns(a) <= t)
			out += fs_tx(a, b, t);
	}
	out += fs_run(a, b, UINT64_MAX / 2);
	emu_switch_conservation(a, &ca);
	assert_int_equal(ca.unaccounted, 0);
	assert_int_equal(ca.held, 0);
	/* the same counters everywhere: TM ports and links, fabric, runner */
	ja = emu_switch_stats_json(a);
	jb = emu_switch_stats_json(b);
	sa = json_dumps(ja, JSON_SORT_KEYS | JSON_COMPACT);
	sb = json_dumps(jb, JSON_SORT_KEYS | JSON_COMPACT);
	assert_string_equal(sa, sb);
	for (p = 0; p < FS_PORTS + (mode >= 3 ? 16 : 8); p++) { /* the ports, then the links */
		const uint64_t *x = emu_tm_port_ctrs(emu_switch_tm(a), (uint16_t)p);

		assert_memory_equal(x, emu_tm_port_ctrs(emu_switch_tm(b), (uint16_t)p),
				    sizeof(uint64_t) * EMU_TM_CTR_MAX);
		for (c = 0; c < EMU_TM_CTR_MAX; c++)
			totals[c] += x[c];
	}
	*drops += ca.drops;
	print_message("fabric bulk, mode %u: %u frames in, %u out (with PFC), %" PRIu64
		      " dropped: the same\n", mode, sent, out, ca.drops);
	free(sa);
	free(sb);
	json_decref(ja);
	json_decref(jb);
	emu_switch_free(a);
	emu_switch_free(b);
	emu_pipeline_free(pl);
}

static void
test_fabric_bulk_same(void **state)
{
	uint64_t totals[EMU_TM_CTR_MAX] = { 0 }, drops = 0;
	unsigned int mode;

	(void)state;
	for (mode = 0; mode < 5; mode++)
		fs_mode(mode, totals, &drops);
	print_message("fabric bulk: %" PRIu64 " drops, %" PRIu64 " ECN marks, %" PRIu64 " XOFF, %"
		      PRIu64 " XON\n", drops, totals[EMU_TM_CTR_ECN_MARKED],
		      totals[EMU_TM_CTR_PFC_TX_XOFF], totals[EMU_TM_CTR_PFC_TX_XON]);
	/* the traffic reached what the bulk paths must stay out of */
	assert_true(drops > 0);
	assert_true(totals[EMU_TM_CTR_ECN_MARKED] > 0);
	assert_true(totals[EMU_TM_CTR_PFC_TX_XOFF] > 0 && totals[EMU_TM_CTR_PFC_TX_XON] > 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fabric_bulk_same),
	};

	pool = test_eal_pool("test_fabric_same", 16384);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
