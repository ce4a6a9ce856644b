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
#include "tests/bench/bench_vclock.h"


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

/* callgrind: --toggle-collect=bench_epoch_bump or bench_epoch_reorder (bench_vclock.h) */
BENCH_VCLOCK_EPOCH_FN(bench_epoch_bump)
BENCH_VCLOCK_EPOCH_FN(bench_epoch_reorder)

int
main(int argc, char **argv)
{
	static double ns[2][BENCH_MAX_EPOCHS];
	static struct bench_vclock v;
	uint64_t clock_ns[2] = { 0, 0 }, psn_next[2] = { 0, 0 };
	struct emu_pipeline *pl[2];
	struct emu_switch *sw[2];
	struct emu_conservation c;
	struct emu_err err;
	int e, s, rc;

	rc = bench_vclock_init(&v, "bench_reorder", argc, argv, 0, 0);
	if (rc != 0)
		return rc;
	for (s = 0; s < 2; s++) {
		pl[s] = bench_pipeline(s == 1);
		sw[s] = emu_switch_create(pl[s], v.mp, 1, &err);
		if (sw[s] == NULL) {
			fprintf(stderr, "bench_reorder: %s\n", err.msg);
			return 1;
		}
	}
	for (e = 0; e < v.epochs; e++)
		for (s = 0; s < 2; s++)
			ns[s][e] = s ? bench_epoch_reorder(&v, sw[s], &clock_ns[s], &psn_next[s]) :
					 bench_epoch_bump(&v, sw[s], &clock_ns[s], &psn_next[s]);
	/* every packet passed in order, but those the TM still holds (the last burst) */
	if (emu_switch_stage_counter(sw[1], "reorder", "passed_in_order") +
	    (int64_t)emu_switch_held(sw[1]) !=
	    (int64_t)((uint64_t)v.epochs * ((v.epoch_pkts + 31) / 32 * 32))) {
		fprintf(stderr, "bench_reorder: the stage passed %" PRId64 " packets in order, "
			"want %" PRIu64 " - %" PRIu64 " still in the TM\n",
			emu_switch_stage_counter(sw[1], "reorder", "passed_in_order"),
			(uint64_t)v.epochs * ((v.epoch_pkts + 31) / 32 * 32), emu_switch_held(sw[1]));
		rc = 1;
	}
	for (s = 0; s < 2; s++) {
		qsort(ns[s], (size_t)v.epochs, sizeof(double), bench_cmp);
		emu_switch_conservation(sw[s], &c);
		if (c.unaccounted != 0 || c.rx == 0) {
			fprintf(stderr, "bench_reorder: %s: %" PRId64 " packets unaccounted\n",
				s ? "reorder" : "bump-in-wire", c.unaccounted);
			rc = 1;
		}
	}
	printf("bench_reorder: %d epochs x %" PRIu64 " packets of %d B, median ns/packet (rx + tx "
	       "on the virtual clock)\n", v.epochs, v.epoch_pkts, v.len);
	printf("  bump-in-wire (parse + forward):            %.1f ns\n", ns[0][v.epochs / 2]);
	printf("  + egress reorder (64 QPs, in order):       %.1f ns\n", ns[1][v.epochs / 2]);
	printf("  ratio reorder / bump-in-wire:              %.2f (goal < 1.30)\n",
	       ns[1][v.epochs / 2] / ns[0][v.epochs / 2]);
	for (s = 0; s < 2; s++) {
		emu_switch_free(sw[s]);
		emu_pipeline_free(pl[s]);
	}
	bench_vclock_done(&v);
	return rc;
}
