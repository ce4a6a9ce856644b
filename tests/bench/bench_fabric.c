/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bench_fabric: per-packet cost of one hop of an emulated fabric (p0 on leaf0, p1 on leaf1,
 * four parallel links between them, ECMP on the 5-tuple over 64 QPs) against the single-link
 * switch with the same TM (ECN, PFC, dynamic buffer), both driven like replay (rx and tx on a
 * virtual clock, no ports), in one process, alternating in short epochs; and, for scale, a
 * leaf-spine (four spines, two hops: up and down). Every rate is 1600 Gb/s so queues stay
 * empty: what is measured is the fabric's own work per packet (route, one more TM enqueue and
 * dequeue per hop, the hop events). Reports the median ns/packet of each and the ratios to
 * the single link (issue 14's goal: one hop < 1.5); fails only when packets are unaccounted.
 *
 * Usage: bench_fabric [--epochs N] [--epoch-pkts N] [--quick]   (defaults 21 x 200000 packets;
 *        --quick: 3 x 20000, a smoke test of the same checks)
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
#include "tests/bench/bench_vclock.h"


#define BENCH_TM_PORT "\"rate_gbps\": 1600, \"buffer_kb\": 4096, \"lossless\": [3]," \
	" \"ecn\": {\"kmin_kb\": 100, \"kmax_kb\": 400, \"pmax\": 0.2}, \"pfc\": {\"cable_m\": 3}"

static const char *const bench_base_json =
	"{\"ports\": [{\"name\": \"p0\"}, {\"name\": \"p1\"}],"
	" \"ingress\": [{\"type\": \"parse\"}, {\"type\": \"forward\"}],"
	" \"tm\": {\"buffer\": {\"total_kb\": 8192, \"mode\": \"dynamic\", \"alpha\": 1,"
	" \"cell_bytes\": 256}, \"ports\": [{\"port\": \"p0\", " BENCH_TM_PORT "},"
	" {\"port\": \"p1\", " BENCH_TM_PORT "}]}}";

static const char *const bench_fabric_json =
	"{\"switches\": [{\"name\": \"leaf0\", \"ports\": [\"p0\"]},"
	" {\"name\": \"leaf1\", \"ports\": [\"p1\"]}],"
	" \"links\": [{\"from\": \"leaf0\", \"to\": \"leaf1\", \"count\": 4, " BENCH_TM_PORT "}]}";

/* A leaf-spine: p0 on leaf0, p1 on leaf1, four spines, one link each way between each leaf
 * and each spine (two hops: up, then down), ECMP at the leaves. */
#define BENCH_UP(l, s) " {\"from\": \"" l "\", \"to\": \"" s "\", " BENCH_TM_PORT "}"
static const char *const bench_leafspine_json =
	"{\"switches\": [{\"name\": \"leaf0\", \"ports\": [\"p0\"]},"
	" {\"name\": \"leaf1\", \"ports\": [\"p1\"]}, {\"name\": \"s0\"}, {\"name\": \"s1\"},"
	" {\"name\": \"s2\"}, {\"name\": \"s3\"}],"
	" \"links\": [" BENCH_UP("leaf0", "s0") "," BENCH_UP("leaf0", "s1") ","
	BENCH_UP("leaf0", "s2") "," BENCH_UP("leaf0", "s3") "," BENCH_UP("leaf1", "s0") ","
	BENCH_UP("leaf1", "s1") "," BENCH_UP("leaf1", "s2") "," BENCH_UP("leaf1", "s3") "]}";

/* @p kind: 0 the single link, 1 one hop, 2 the leaf-spine */
static struct emu_pipeline *
bench_pipeline(int kind)
{
	json_t *root = json_loads(bench_base_json, JSON_REJECT_DUPLICATES, NULL);
	struct emu_pipeline *pl = NULL;
	struct emu_err err;

	if (kind > 0)
		json_object_set_new(root, "fabric", json_loads(kind == 1 ? bench_fabric_json :
							       bench_leafspine_json, 0, NULL));
	if (emu_pipeline_from_json(root, "bench_fabric.json", &pl, &err) != 0) {
		fprintf(stderr, "bench_fabric: %s\n", err.msg);
		exit(1);
	}
	json_decref(root);
	return pl;
}

/* callgrind: --toggle-collect=bench_epoch_single, bench_epoch_fabric or bench_epoch_leafspine
 * (bench_vclock.h) */
BENCH_VCLOCK_EPOCH_FN(bench_epoch_single)
BENCH_VCLOCK_EPOCH_FN(bench_epoch_fabric)
BENCH_VCLOCK_EPOCH_FN(bench_epoch_leafspine)

int
main(int argc, char **argv)
{
	static const char *const side[3] = { "single link", "fabric", "leaf-spine" };
	static double ns[3][BENCH_MAX_EPOCHS];
	static struct bench_vclock v;
	uint64_t clock_ns[3] = { 0, 0, 0 };
	struct emu_pipeline *pl[3];
	struct emu_switch *sw[3];
	struct emu_conservation c;
	struct emu_err err;
	double med[3];
	int e, s, rc;

	/* UDP source ports that differ (ECMP entropy, as NICs set them), DSCP 26 (lossless 3) */
	rc = bench_vclock_init(&v, "bench_fabric", argc, argv, 977, 26);
	if (rc != 0)
		return rc;
	for (s = 0; s < 3; s++) {
		pl[s] = bench_pipeline(s);
		sw[s] = emu_switch_create(pl[s], v.mp, 1, &err);
		if (sw[s] == NULL) {
			fprintf(stderr, "bench_fabric: %s\n", err.msg);
			return 1;
		}
	}
	for (e = 0; e < v.epochs; e++)
		for (s = 0; s < 3; s++)
			ns[s][e] = s == 2 ? bench_epoch_leafspine(&v, sw[s], &clock_ns[s], NULL) :
				   s ? bench_epoch_fabric(&v, sw[s], &clock_ns[s], NULL) :
				       bench_epoch_single(&v, sw[s], &clock_ns[s], NULL);
	for (s = 0; s < 3; s++) {
		med[s] = bench_median(ns[s], v.epochs);
		emu_switch_conservation(sw[s], &c);
		if (c.unaccounted != 0 || c.rx == 0) {
			fprintf(stderr, "bench_fabric: %s: %" PRId64 " packets unaccounted\n",
				side[s], c.unaccounted);
			rc = 1;
		}
		/* everything sent but the last burst, which the TM may still hold */
		if (c.tx + c.held != c.rx || c.drops != 0) {
			fprintf(stderr, "bench_fabric: %s: sent %" PRIu64 " + held %" PRIu64 " of %"
				PRIu64 ", %" PRIu64 " dropped\n", side[s], c.tx,
				c.held, c.rx, c.drops);
			rc = 1;
		}
	}
	printf("bench_fabric: %d epochs x %" PRIu64 " packets of %d B, median ns/packet (rx + tx "
	       "on the virtual clock)\n", v.epochs, v.epoch_pkts, v.len);
	printf("  single link (parse + forward + full TM):   %.1f ns\n", med[0]);
	printf("  one fabric hop (ECMP over 4 links):        %.1f ns\n", med[1]);
	printf("  ratio fabric / single link:                %.2f\n", med[1] / med[0]);
	printf("  leaf-spine, two hops (ECMP over 4 spines): %.1f ns, %.2f x the single link\n",
	       med[2], med[2] / med[0]);
	printf("RESULT bench=fabric single_ns=%.1f fabric_ns=%.1f ratio=%.3f leafspine_ns=%.1f "
	       "leafspine_ratio=%.3f\n", med[0], med[1], med[1] / med[0], med[2], med[2] / med[0]);
	for (s = 0; s < 3; s++) {
		emu_switch_free(sw[s]);
		emu_pipeline_free(pl[s]);
	}
	bench_vclock_done(&v);
	return rc;
}
