/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What moving a frame's cache lines between two lcores costs on this machine, with no switch
 * work: the floor under bench_workers.sh's handoff figure (issue 32 asks for <= 30 ns).
 *
 * A handoff moves, per frame, the mbuf's header line, its metadata line (rocemu's private
 * area) and, when the owner touches it, a line of the frame, from the receiving worker's cache
 * to the owner's, which writes some of them (the TM's departure time, the refcount on free);
 * they move back when the receiving worker reuses the mbuf. Here lcore A writes LINES lines of
 * each of BURST "frames" and publishes the burst (a release store); lcore B waits for it,
 * prefetches every line of the burst, reads them all and writes one line of each, then answers;
 * A then writes them again (their lines come back). The time of a round over BURST is the
 * cost per frame of the lines' two trips, overlapped as the owner's prefetch overlaps them.
 * Also the one-way latency of one line (a ping-pong, half the round trip).
 *
 * Then the same measure bench_workers takes, with DPDK's parts and no switch work: both lcores
 * receive (allocate a burst of mbufs from one pool with per-lcore caches, write the frame's
 * 64 bytes, its lengths and a line of metadata in the private area, as net_null and rocemu's
 * RX do) and transmit (read the metadata and the frame, free the burst); "none": each lcore
 * transmits what it received, "ring": each hands its bursts to the other through an SPSC
 * rte_ring and transmits the other's. CPU ns a frame (2 busy lcores / frames a second), ring
 * minus none: what DPDK's ring, the pool's caches and the frames' lines cost a handoff here.
 *
 * usage: bench_xcore [EAL options, two lcores on two CPUs: -l 0-1] [-- --rounds N]
 * Prints one RESULT line. A benchmark: it never fails on time.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_common.h>
#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_pause.h>
#include <rte_prefetch.h>
#include <rte_ring.h>

#define BURST 32
#define LINES 3
#define LINE 64

struct xcore {
	uint64_t ping __rte_cache_aligned;   /* ping-pong: odd from A, even from B */
	uint64_t posted __rte_cache_aligned; /* the round A published */
	uint64_t done __rte_cache_aligned;   /* the round B finished */
	uint64_t rounds;
	uint64_t sink;
	uint8_t frames[BURST][LINES][LINE] __rte_cache_aligned;
};

static struct xcore *x;

/* lcore B: answer the ping-pong, then take and give back the bursts */
static int
xcore_b(void *arg)
{
	uint64_t i, r, sum = 0;
	unsigned int f, l;

	(void)arg;
	for (i = 0; i < x->rounds; i++) {
		while (__atomic_load_n(&x->ping, __ATOMIC_ACQUIRE) != 2 * i + 1)
			rte_pause();
		__atomic_store_n(&x->ping, 2 * i + 2, __ATOMIC_RELEASE);
	}
	for (r = 1; r <= x->rounds; r++) {
		while (__atomic_load_n(&x->posted, __ATOMIC_ACQUIRE) != r)
			rte_pause();
		for (f = 0; f < BURST; f++)
			for (l = 0; l < LINES; l++)
				rte_prefetch0(x->frames[f][l]);
		for (f = 0; f < BURST; f++) {
			for (l = 0; l < LINES; l++)
				sum += x->frames[f][l][0];
			x->frames[f][1][8] = (uint8_t)sum; /* the owner writes the metadata */
		}
		__atomic_store_n(&x->done, r, __ATOMIC_RELEASE);
	}
	x->sink = sum;
	return 0;
}

/* The DPDK handoff floor (see the header): one lcore's side. */
struct dpdk_side {
	struct rte_ring *out, *in; /* NULL: "none", the lcore keeps its own frames */
	uint64_t frames;           /* to receive, and to transmit */
	uint64_t sink;
};

static struct rte_mempool *pool;
static volatile int go;

static void
dpdk_rx(struct rte_mbuf **m, uint64_t seq)
{
	unsigned int i;

	for (i = 0; i < BURST; i++) {
		uint8_t *d = rte_pktmbuf_mtod(m[i], uint8_t *);
		uint64_t *meta = (uint64_t *)((uint8_t *)m[i] + sizeof(struct rte_mbuf));

		memset(d, (int)(seq + i), 64);
		m[i]->data_len = 64;
		m[i]->pkt_len = 64;
		meta[0] = seq + i;  /* the receive time */
		meta[1] = 1;        /* in port, flags */
	}
}

static uint64_t
dpdk_tx(struct rte_mbuf **m)
{
	uint64_t sum = 0;
	unsigned int i;

	for (i = 0; i < BURST; i++) {
		rte_prefetch0(m[i]);
		rte_prefetch0((uint8_t *)m[i] + sizeof(struct rte_mbuf));
	}
	for (i = 0; i < BURST; i++) {
		const uint64_t *meta = (const uint64_t *)((uint8_t *)m[i] + sizeof(struct rte_mbuf));

		sum += meta[0] + meta[1] + m[i]->pkt_len + rte_pktmbuf_mtod(m[i], uint8_t *)[63];
	}
	rte_pktmbuf_free_bulk(m, BURST);
	return sum;
}

static int
dpdk_side(void *arg)
{
	struct dpdk_side *s = arg;
	struct rte_mbuf *m[BURST];
	uint64_t rx = 0, tx = 0;

	while (!go)
		rte_pause();
	while (rx < s->frames || tx < s->frames) {
		if (rx < s->frames && (s->out == NULL || rte_ring_free_count(s->out) >= BURST) &&
		    rte_pktmbuf_alloc_bulk(pool, m, BURST) == 0) {
			dpdk_rx(m, rx);
			rx += BURST;
			if (s->out == NULL) {
				s->sink += dpdk_tx(m);
				tx += BURST;
			} else {
				rte_ring_sp_enqueue_bulk(s->out, (void **)m, BURST, NULL);
			}
		}
		if (s->in != NULL &&
		    rte_ring_sc_dequeue_bulk(s->in, (void **)m, BURST, NULL) == BURST) {
			s->sink += dpdk_tx(m);
			tx += BURST;
		}
	}
	return 0;
}

/* CPU ns a frame with both lcores busy: "none" or through rings; -1 when it cannot run. */
static double
dpdk_run(unsigned int lcore_b, bool rings, uint64_t frames)
{
	static struct dpdk_side a, b;
	struct rte_ring *ab = NULL, *ba = NULL;
	uint64_t t0, t1;

	if (rings) {
		ab = rte_ring_create("xc_ab", 1024, SOCKET_ID_ANY, RING_F_SP_ENQ | RING_F_SC_DEQ);
		ba = rte_ring_create("xc_ba", 1024, SOCKET_ID_ANY, RING_F_SP_ENQ | RING_F_SC_DEQ);
		if (ab == NULL || ba == NULL)
			return -1;
	}
	a = (struct dpdk_side){ .out = ab, .in = ba, .frames = frames };
	b = (struct dpdk_side){ .out = ba, .in = ab, .frames = frames };
	go = 0;
	rte_eal_remote_launch(dpdk_side, &b, lcore_b);
	t0 = rte_rdtsc();
	go = 1;
	dpdk_side(&a);
	rte_eal_wait_lcore(lcore_b);
	t1 = rte_rdtsc();
	x->sink += a.sink + b.sink;
	rte_ring_free(ab);
	rte_ring_free(ba);
	return 2.0 * (double)(t1 - t0) * 1e9 / (double)rte_get_tsc_hz() / (double)(2 * frames);
}

int
main(int argc, char **argv)
{
	uint64_t rounds = 200000, t0, t1, hz, r, i;
	unsigned int lcore_b, f, l;
	double line_ns, frame_ns, dpdk_none = -1, dpdk_ring = -1;
	int n;

	n = rte_eal_init(argc, argv);
	if (n < 0) {
		fprintf(stderr, "bench_xcore: EAL init failed\n");
		return 1;
	}
	argc -= n;
	argv += n;
	if (argc >= 3 && strcmp(argv[1], "--rounds") == 0)
		rounds = strtoull(argv[2], NULL, 10);
	lcore_b = rte_get_next_lcore(-1, 1, 0);
	if (lcore_b >= RTE_MAX_LCORE) {
		fprintf(stderr, "bench_xcore: needs two lcores (-l 0-1)\n");
		return 1;
	}
	x = aligned_alloc(RTE_CACHE_LINE_SIZE, sizeof(*x));
	if (x == NULL)
		return 1;
	memset(x, 0, sizeof(*x));
	x->rounds = rounds;
	hz = rte_get_tsc_hz();
	rte_eal_remote_launch(xcore_b, NULL, lcore_b);

	t0 = rte_rdtsc();
	for (i = 0; i < rounds; i++) {
		__atomic_store_n(&x->ping, 2 * i + 1, __ATOMIC_RELEASE);
		while (__atomic_load_n(&x->ping, __ATOMIC_ACQUIRE) != 2 * i + 2)
			rte_pause();
	}
	t1 = rte_rdtsc();
	line_ns = (double)(t1 - t0) * 1e9 / (double)hz / (double)rounds / 2;

	t0 = rte_rdtsc();
	for (r = 1; r <= rounds; r++) {
		for (f = 0; f < BURST; f++)
			for (l = 0; l < LINES; l++)
				x->frames[f][l][0] = (uint8_t)r; /* A fills the frames again */
		__atomic_store_n(&x->posted, r, __ATOMIC_RELEASE);
		while (__atomic_load_n(&x->done, __ATOMIC_ACQUIRE) != r)
			rte_pause();
	}
	t1 = rte_rdtsc();
	frame_ns = (double)(t1 - t0) * 1e9 / (double)hz / (double)rounds / BURST;
	rte_eal_mp_wait_lcore();

	pool = rte_pktmbuf_pool_create("xc_pool", 8191, 256, 128, 2048 + RTE_PKTMBUF_HEADROOM,
				       SOCKET_ID_ANY);
	if (pool != NULL) {
		double none[5], ring[5], tmp;
		unsigned int k, j;

		for (k = 0; k < 5; k++) {
			none[k] = dpdk_run(lcore_b, false, rounds * 16);
			ring[k] = dpdk_run(lcore_b, true, rounds * 16);
		}
		for (k = 0; k < 5; k++)	/* medians */
			for (j = k + 1; j < 5; j++) {
				if (none[j] < none[k]) {
					tmp = none[k]; none[k] = none[j]; none[j] = tmp;
				}
				if (ring[j] < ring[k]) {
					tmp = ring[k]; ring[k] = ring[j]; ring[j] = tmp;
				}
			}
		dpdk_none = none[2];
		dpdk_ring = ring[2];
	}

	printf("one cache line, one way between lcores %u and %u: %.1f ns (ping-pong / 2)\n",
	       rte_lcore_id(), lcore_b, line_ns);
	printf("a frame's %d lines there and back, bursts of %d, prefetched: %.1f ns a frame\n",
	       LINES, BURST, frame_ns);
	if (dpdk_none > 0 && dpdk_ring > 0)
		printf("a handoff with DPDK's parts and no switch work (64 B frames, mbufs from one "
		       "pool, an SPSC ring each way): %.1f CPU ns a frame kept, %.1f handed over: "
		       "%.1f ns a handoff\n", dpdk_none, dpdk_ring, dpdk_ring - dpdk_none);
	else
		printf("a handoff with DPDK's parts: not measured (no mbuf pool or ring)\n");
	printf("RESULT bench=xcore line_oneway_ns=%.1f frame_lines_roundtrip_ns=%.1f "
	       "dpdk_handoff_ns=%.1f sink=%u\n", line_ns, frame_ns, dpdk_ring - dpdk_none,
	       (unsigned int)(x->sink & 1));
	free(x);
	rte_eal_cleanup();
	return 0;
}
