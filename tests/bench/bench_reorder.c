/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bench_reorder: per-packet cost of the switch with an egress reorder stage (defaults: 100 us
 * timeout, 16384 held packets, 4096 QPs) on in-order RoCE traffic of 64 QPs (every packet is
 * looked up and passes in order: the stage's common case) against bump-in-wire (parse +
 * forward), both driven like replay (rx and tx on a virtual clock, no ports), in one process,
 * alternating the two in short epochs. Reports the median ns/packet of each and the ratio (the
 * goal: under 1.30); fails only when packets are unaccounted or the stage did not see them
 * all in order.
 *
 * Usage: bench_reorder [--epochs N] [--epoch-pkts N] [--quick]   (defaults 21 x 200000
 *        packets; --quick: 3 x 20000, a smoke test of the same checks)
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>
#include <rte_eal.h>
#include <rte_mbuf.h>

#include "lib/base/emu_err.h"
#include "lib/stage/emu_stage.h"
#include "lib/switch/emu_switch.h"
#include "lib/proto/roce_proto.h"

#define BENCH_QPS 64
#define BENCH_MAX_EPOCHS 999

static const char *const bench_base_json =
	"{\"ports\": [{\"name\": \"p0\"}, {\"name\": \"p1\"}],"
	" \"ingress\": [{\"type\": \"parse\"}, {\"type\": \"forward\"}],"
	" \"tm\": {\"ports\": [{\"port\": \"p0\", \"rate_gbps\": 1600},"
	" {\"port\": \"p1\", \"rate_gbps\": 1600}]}}";

static struct emu_pipeline *
bench_pipeline(bool reorder)
{
	json_t *root = json_loads(bench_base_json, JSON_REJECT_DUPLICATES, NULL);
	struct emu_pipeline *pl = NULL;
	struct emu_err err;

	if (reorder)
		json_object_set_new(root, "egress", json_pack("[{s:s}]", "type", "reorder"));
	if (emu_pipeline_from_json(root, "bench_reorder.json", &pl, &err) != 0) {
		fprintf(stderr, "bench_reorder: %s\n", err.msg);
		exit(1);
	}
	json_decref(root);
	return pl;
}

static uint64_t
bench_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* Push @p n packets through @p sw (bursts of 32); returns wall ns per packet. */
static double
bench_epoch(struct emu_switch *sw, struct rte_mempool *mp, uint8_t frames[][128], int len,
	    uint64_t n, uint64_t *clock_ns, uint64_t *psn_next)
{
	struct rte_mbuf *burst[32], **out;
	uint64_t t0 = bench_ns(), done = 0, psn = *psn_next;
	uint16_t k, i;

	while (done < n) {
		if (rte_pktmbuf_alloc_bulk(mp, burst, 32) != 0) {
			fprintf(stderr, "bench_reorder: out of mbufs\n");
			exit(1);
		}
		for (i = 0; i < 32; i++, psn++) {
			uint8_t *d = (uint8_t *)rte_pktmbuf_append(burst[i], (uint16_t)len);

			/* One frame per QP; the PSN advances (the ICRC is not checked). */
			memcpy(d, frames[psn % BENCH_QPS], (size_t)len);
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
	*psn_next = psn; /* the next epoch goes on in sequence */
	return (double)(bench_ns() - t0) / (double)n;
}

static int
bench_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

int
main(int argc, char **argv)
{
	char prefix[64], rundir[256];
	char *eal[] = { argv[0], "--no-huge", "--no-pci", "--no-shconf", prefix,
			"--no-telemetry", "-l", "0", "--log-level=lib.eal:error", "-m", "512",
			NULL };
	static double ns[2][BENCH_MAX_EPOCHS];
	static uint8_t frames[BENCH_QPS][128];
	uint64_t epoch_pkts = 200000, clock_ns[2] = { 0, 0 }, psn_next[2] = { 0, 0 };
	struct emu_pipeline *pl[2];
	struct emu_switch *sw[2];
	struct emu_conservation c;
	struct rte_mempool *mp;
	struct emu_err err;
	int epochs = 21, opt, e, s, len = 0, rc = 0;
	static const struct option opts[] = { { "epochs", required_argument, NULL, 'e' },
					      { "epoch-pkts", required_argument, NULL, 'n' },
					      { "quick", no_argument, NULL, 'q' },
					      { NULL, 0, NULL, 0 } };

	while ((opt = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (opt == 'e')
			epochs = atoi(optarg);
		else if (opt == 'n')
			epoch_pkts = strtoull(optarg, NULL, 10);
		else if (opt == 'q')
			epochs = 3, epoch_pkts = 20000;
		else
			return 2;
	}
	if (epochs < 1 || epochs > BENCH_MAX_EPOCHS || epoch_pkts < 32)
		return 2;
	snprintf(prefix, sizeof(prefix), "--file-prefix=bench_reorder_%d", (int)getpid());
	optind = 1;
	if (rte_eal_init(11, eal) < 0) {
		fprintf(stderr, "bench_reorder: EAL init failed\n");
		return 1;
	}
	mp = emu_pool_create("bench_reorder", 8192, 2048 + RTE_PKTMBUF_HEADROOM, 0, &err);
	if (mp == NULL) {
		fprintf(stderr, "bench_reorder: %s\n", err.msg);
		return 1;
	}
	for (e = 0; e < BENCH_QPS; e++) {
		struct roce_hdr_params hp = roce_hdr_params_default();
		uint8_t payload[32] = { 0 };

		hp.src_ip[0] = 10;
		hp.src_ip[3] = 1;
		hp.dst_ip[0] = 10;
		hp.dst_ip[3] = 2;
		hp.opcode = 0x07;
		hp.dest_qp = 0x100 + (uint32_t)e;
		len = roce_build(frames[e], sizeof(frames[e]), &hp, payload, sizeof(payload));
		if (len <= 0)
			return 1;
	}
	for (s = 0; s < 2; s++) {
		pl[s] = bench_pipeline(s == 1);
		sw[s] = emu_switch_create(pl[s], mp, 1, &err);
		if (sw[s] == NULL) {
			fprintf(stderr, "bench_reorder: %s\n", err.msg);
			return 1;
		}
	}
	for (e = 0; e < epochs; e++)
		for (s = 0; s < 2; s++)
			ns[s][e] = bench_epoch(sw[s], mp, frames, len, epoch_pkts, &clock_ns[s],
					       &psn_next[s]);
	/* every packet passed in order, but those the TM still holds (the last burst) */
	if (emu_switch_stage_counter(sw[1], "reorder", "passed_in_order") +
	    (int64_t)emu_switch_held(sw[1]) !=
	    (int64_t)((uint64_t)epochs * ((epoch_pkts + 31) / 32 * 32))) {
		fprintf(stderr, "bench_reorder: the stage passed %" PRId64 " packets in order, "
			"want %" PRIu64 " - %" PRIu64 " still in the TM\n",
			emu_switch_stage_counter(sw[1], "reorder", "passed_in_order"),
			(uint64_t)epochs * ((epoch_pkts + 31) / 32 * 32), emu_switch_held(sw[1]));
		rc = 1;
	}
	for (s = 0; s < 2; s++) {
		qsort(ns[s], (size_t)epochs, sizeof(double), bench_cmp);
		emu_switch_conservation(sw[s], &c);
		if (c.unaccounted != 0 || c.rx == 0) {
			fprintf(stderr, "bench_reorder: %s: %" PRId64 " packets unaccounted\n",
				s ? "reorder" : "bump-in-wire", c.unaccounted);
			rc = 1;
		}
	}
	printf("bench_reorder: %d epochs x %" PRIu64 " packets of %d B, median ns/packet (rx + tx "
	       "on the virtual clock)\n", epochs, epoch_pkts, len);
	printf("  bump-in-wire (parse + forward):            %.1f ns\n", ns[0][epochs / 2]);
	printf("  + egress reorder (64 QPs, in order):       %.1f ns\n", ns[1][epochs / 2]);
	printf("  ratio reorder / bump-in-wire:              %.2f (goal < 1.30)\n",
	       ns[1][epochs / 2] / ns[0][epochs / 2]);
	for (s = 0; s < 2; s++) {
		emu_switch_free(sw[s]);
		emu_pipeline_free(pl[s]);
	}
	rte_mempool_free(mp);
	snprintf(rundir, sizeof(rundir), "%s", rte_eal_get_runtime_dir());
	rte_eal_cleanup();
	rmdir(rundir); /* EAL leaves an empty runtime directory behind */
	return rc;
}
