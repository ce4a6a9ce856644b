/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef BENCH_VCLOCK_H
#define BENCH_VCLOCK_H

/*
 * What the virtual-clock benchmarks share (bench_impair, bench_reorder, bench_fabric): their
 * options (--epochs N, --epoch-pkts N, --quick), EAL without hugepages or PCI and a pool with
 * rocemu's private area, 64 RoCE frames (one per QP), epochs that push bursts of 32 through a
 * switch the way replay does (rx on p0, tx on p1, the clock 1 us further per burst), medians,
 * and the teardown that leaves no runtime directory behind.
 */

#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rte_eal.h>
#include <rte_mbuf.h>

#include "lib/base/emu_err.h"
#include "lib/proto/roce_build.h"
#include "lib/switch/emu_switch.h"

#define BENCH_QPS 64
#define BENCH_MAX_EPOCHS 999

struct bench_vclock {
	const char *name;
	int epochs;
	uint64_t epoch_pkts;
	struct rte_mempool *mp;
	uint8_t frames[BENCH_QPS][128];
	int len;
};

static inline uint64_t
bench_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static inline int
bench_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* The median of @p v (sorted in place). */
static inline double
bench_median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(double), bench_cmp);
	return v[n / 2];
}

/*
 * Options, EAL, pool and frames: RC RDMA WRITE MIDDLE 10.0.0.1 -> 10.0.0.2, 32 B of payload,
 * DestQP 0x100 + k; @p sport_step != 0 gives QP k the UDP source port 0xC000 + k x step and
 * @p dscp its DSCP (ECMP entropy and a lossless priority, as NICs set them). 0, 2 on a bad
 * option, 1 on a failure (said on stderr).
 */
static inline int
bench_vclock_init(struct bench_vclock *v, const char *name, int argc, char **argv,
		  uint16_t sport_step, uint8_t dscp)
{
	static char prefix[64];
	char *eal[] = { argv[0], "--no-huge", "--no-pci", "--no-shconf", prefix,
			"--no-telemetry", "-l", "0", "--log-level=lib.eal:error", "-m", "512",
			NULL };
	static const struct option opts[] = { { "epochs", required_argument, NULL, 'e' },
					      { "epoch-pkts", required_argument, NULL, 'n' },
					      { "quick", no_argument, NULL, 'q' },
					      { NULL, 0, NULL, 0 } };
	struct emu_err err;
	int opt, k;

	memset(v, 0, sizeof(*v));
	v->name = name;
	v->epochs = 21;
	v->epoch_pkts = 200000;
	while ((opt = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (opt == 'e')
			v->epochs = atoi(optarg);
		else if (opt == 'n')
			v->epoch_pkts = strtoull(optarg, NULL, 10);
		else if (opt == 'q')
			v->epochs = 3, v->epoch_pkts = 20000;
		else
			return 2;
	}
	if (v->epochs < 1 || v->epochs > BENCH_MAX_EPOCHS || v->epoch_pkts < 32)
		return 2;
	snprintf(prefix, sizeof(prefix), "--file-prefix=%s_%d", name, (int)getpid());
	optind = 1;
	if (rte_eal_init(11, eal) < 0) {
		fprintf(stderr, "%s: EAL init failed\n", name);
		return 1;
	}
	v->mp = emu_pool_create(name, 8192, 2048 + RTE_PKTMBUF_HEADROOM, 0, &err);
	if (v->mp == NULL) {
		fprintf(stderr, "%s: %s\n", name, err.msg);
		return 1;
	}
	for (k = 0; k < BENCH_QPS; k++) {
		struct roce_hdr_params hp = roce_hdr_params_default();
		uint8_t payload[32] = { 0 };

		hp.src_ip[0] = 10;
		hp.src_ip[3] = 1;
		hp.dst_ip[0] = 10;
		hp.dst_ip[3] = 2;
		hp.opcode = 0x07;
		hp.dest_qp = 0x100 + (uint32_t)k;
		if (sport_step != 0)
			hp.udp_sport = (uint16_t)(0xC000 + sport_step * k);
		if (dscp != 0)
			hp.dscp = dscp;
		v->len = roce_build(v->frames[k], sizeof(v->frames[k]), &hp, payload,
				    sizeof(payload));
		if (v->len <= 0)
			return 1;
	}
	return 0;
}

/*
 * Push v->epoch_pkts packets through @p sw (bursts of 32, one frame per QP in turn, the PSN
 * advancing); returns wall ns per packet. With @p psn_next the PSNs go on from the last epoch
 * (in sequence); without, each epoch starts again at 0 (retransmissions, as impair's iteration
 * tracking wants them).
 */
static inline double
bench_vclock_epoch(const struct bench_vclock *v, struct emu_switch *sw, uint64_t *clock_ns,
		   uint64_t *psn_next)
{
	struct rte_mbuf *burst[32], **out;
	uint64_t t0 = bench_ns(), done = 0, psn = psn_next != NULL ? *psn_next : 0;
	uint16_t k, i;

	while (done < v->epoch_pkts) {
		if (rte_pktmbuf_alloc_bulk(v->mp, burst, 32) != 0) {
			fprintf(stderr, "%s: out of mbufs\n", v->name);
			exit(1);
		}
		for (i = 0; i < 32; i++, psn++) {
			uint8_t *d = (uint8_t *)rte_pktmbuf_append(burst[i], (uint16_t)v->len);

			/* One frame per QP; the PSN advances (the ICRC is not checked). */
			memcpy(d, v->frames[psn % BENCH_QPS], (size_t)v->len);
			d[14 + 20 + 8 + 9] = (uint8_t)((psn / BENCH_QPS) >> 16);
			d[14 + 20 + 8 + 10] = (uint8_t)((psn / BENCH_QPS) >> 8);
			d[14 + 20 + 8 + 11] = (uint8_t)(psn / BENCH_QPS);
		}
		*clock_ns += 1000;
		emu_switch_rx(sw, 0, burst, 32, *clock_ns);
		k = emu_switch_tx_prepare(sw, 1, *clock_ns, &out);
		rte_pktmbuf_free_bulk(out, k);
		emu_switch_tx_done(sw, 1, k);
		done += 32;
	}
	if (psn_next != NULL)
		*psn_next = psn;
	return (double)(bench_ns() - t0) / (double)v->epoch_pkts;
}

/*
 * One side's epochs as a function of its own, NAME (noipa: never merged with the other side),
 * so that callgrind counts one side alone (valgrind --tool=callgrind --toggle-collect=NAME)
 * and perf record -g --call-graph dwarf gives each side's cycles (perf report --children).
 */
#if defined(__clang__) /* clang has no noipa; noinline alone does not stop it merging them */
#define BENCH_NOIPA __attribute__((noinline, optnone))
#else
#define BENCH_NOIPA __attribute__((noipa))
#endif
#define BENCH_VCLOCK_EPOCH_FN(NAME)                                                         \
	static BENCH_NOIPA double NAME(const struct bench_vclock *v,              \
						  struct emu_switch *sw, uint64_t *clock_ns, \
						  uint64_t *psn_next)                        \
	{                                                                                    \
		double r = bench_vclock_epoch(v, sw, clock_ns, psn_next);                    \
                                                                                             \
		/* a frame of its own (no tail call): perf sees it */                        \
		__asm__ volatile("" ::: "memory");                                           \
		return r;                                                                    \
	}

/* Free the pool and EAL (EAL leaves an empty runtime directory behind: removed). */
static inline void
bench_vclock_done(struct bench_vclock *v)
{
	char rundir[256];

	rte_mempool_free(v->mp);
	snprintf(rundir, sizeof(rundir), "%s", rte_eal_get_runtime_dir());
	rte_eal_cleanup();
	rmdir(rundir);
}

#endif
