/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The TM's fast entries against its general steps, packet for packet: two TMs with the same
 * configuration get the same random traffic, A through the general steps
 * (emu_tm_set_general_only()) one packet at a time, B through the entry under test
 * (emu_tm_enqueue_burst(), emu_tm_enqueue_grouped(), emu_tm_arrive(), emu_tm_arrive_run())
 * with the inner loops for runs of alike packets; every departure, trace, counter and PFC
 * frame must be the same, and the traffic must reach drops, headroom, XOFF, XON and ECN marks.
 */
#include <inttypes.h>

#include "tests/unit/test_tm_common.h"

static struct rte_mempool *pool;
static const uint8_t mac_a[6] = { 2, 0, 0, 0, 0, 0xa };
static const uint8_t mac_b[6] = { 2, 0, 0, 0, 0, 0xb };

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
	/* mode 2 (test_arrive_run_same()): cells that are not a power of two */
	cfg->buffer.cell_bytes = burst_mode == 2 ? 200 : 256;
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
	for (mode = 0; mode < 3; mode++) {
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
			emu_tm_arrive_run(b, port, run, (uint16_t)n, false, &rb);
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
		cmocka_unit_test(test_enqueue_burst_same),
		cmocka_unit_test(test_enqueue_grouped_same),
		cmocka_unit_test(test_arrive_same),
		cmocka_unit_test(test_arrive_run_same),
	};

	pool = test_eal_pool("test_tm_same", 8192);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
