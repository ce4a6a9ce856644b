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
 * usage: bench_xcore [EAL options, two lcores on two CPUs: -l 0-1] [-- --rounds N]
 * Prints one RESULT line. A benchmark: it never fails on time.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_common.h>
#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_pause.h>
#include <rte_prefetch.h>

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

int
main(int argc, char **argv)
{
	uint64_t rounds = 200000, t0, t1, hz, r, i;
	unsigned int lcore_b, f, l;
	double line_ns, frame_ns;
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

	printf("one cache line, one way between lcores %u and %u: %.1f ns (ping-pong / 2)\n",
	       rte_lcore_id(), lcore_b, line_ns);
	printf("a frame's %d lines there and back, bursts of %d, prefetched: %.1f ns a frame\n",
	       LINES, BURST, frame_ns);
	printf("RESULT bench=xcore line_oneway_ns=%.1f frame_lines_roundtrip_ns=%.1f sink=%u\n",
	       line_ns, frame_ns, (unsigned int)(x->sink & 1));
	free(x);
	rte_eal_cleanup();
	return 0;
}
