/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bench_impair: per-packet cost of the switch with an impair stage of 16 events (15 targeted
 * QP/PSN/iteration drops that almost never hit, 1 Gilbert-Elliott loss on data) against
 * bump-in-wire (parse + forward), both driven like replay (rx and tx on a virtual clock, no
 * ports), in one process, alternating the two in short epochs. Reports the median ns/packet of
 * each and the ratio; fails only when packets are unaccounted.
 *
 * Usage: bench_impair [--epochs N] [--epoch-pkts N] [--quick]   (defaults 21 x 200000 packets;
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


static const char *const bench_base_json =
	"{\"ports\": [{\"name\": \"p0\"}, {\"name\": \"p1\"}],"
	" \"ingress\": [{\"type\": \"parse\"}, {\"type\": \"forward\"}],"
	" \"tm\": {\"ports\": [{\"port\": \"p0\", \"rate_gbps\": 1600},"
	" {\"port\": \"p1\", \"rate_gbps\": 1600}]}}";

static struct emu_pipeline *
bench_pipeline(bool impair)
{
	json_t *root = json_loads(bench_base_json, JSON_REJECT_DUPLICATES, NULL);
	json_t *events = json_array();
	struct emu_pipeline *pl = NULL;
	struct emu_err err;
	char name[32];
	int i;

	if (impair) {
		for (i = 0; i < 15; i++) {
			snprintf(name, sizeof(name), "t%d", i);
			json_array_append_new(events, json_pack(
				"{s:s, s:s, s:{s:i, s:i, s:i}}", "name", name, "action", "drop",
				"match", "dest_qp", 0x100 + i, "psn", 1000 + i, "iteration", 2));
		}
		json_array_append_new(events, json_pack(
			"{s:s, s:s, s:{s:s}, s:{s:s, s:f, s:f}}", "name", "ge", "action", "drop",
			"match", "opcode", "data", "loss", "model", "gilbert", "p", 0.0003, "r",
			0.3));
		json_array_append_new(json_object_get(root, "ingress"),
				      json_pack("{s:s, s:o}", "type", "impair", "events", events));
	} else {
		json_decref(events);
	}
	if (emu_pipeline_from_json(root, "bench_impair.json", &pl, &err) != 0) {
		fprintf(stderr, "bench_impair: %s\n", err.msg);
		exit(1);
	}
	json_decref(root);
	return pl;
}

int
main(int argc, char **argv)
{
	static double ns[2][BENCH_MAX_EPOCHS];
	static struct bench_vclock v;
	uint64_t clock_ns[2] = { 0, 0 };
	struct emu_pipeline *pl[2];
	struct emu_switch *sw[2];
	struct emu_conservation c;
	struct emu_err err;
	int e, s, rc;

	rc = bench_vclock_init(&v, "bench_impair", argc, argv, 0, 0);
	if (rc != 0)
		return rc;
	for (s = 0; s < 2; s++) {
		pl[s] = bench_pipeline(s == 1);
		sw[s] = emu_switch_create(pl[s], v.mp, 1, &err);
		if (sw[s] == NULL) {
			fprintf(stderr, "bench_impair: %s\n", err.msg);
			return 1;
		}
	}
	for (e = 0; e < v.epochs; e++)
		for (s = 0; s < 2; s++)
			ns[s][e] = bench_vclock_epoch(&v, sw[s], &clock_ns[s], NULL);
	for (s = 0; s < 2; s++) {
		qsort(ns[s], (size_t)v.epochs, sizeof(double), bench_cmp);
		emu_switch_conservation(sw[s], &c);
		if (c.unaccounted != 0 || c.rx == 0) {
			fprintf(stderr, "bench_impair: %s: %" PRId64 " packets unaccounted\n",
				s ? "impair" : "bump-in-wire", c.unaccounted);
			rc = 1;
		}
	}
	printf("bench_impair: %d epochs x %" PRIu64 " packets of %d B, median ns/packet (rx + tx "
	       "on the virtual clock)\n", v.epochs, v.epoch_pkts, v.len);
	printf("  bump-in-wire (parse + forward):            %.1f ns\n", ns[0][v.epochs / 2]);
	printf("  + impair, 16 events (15 targeted + GE):    %.1f ns\n", ns[1][v.epochs / 2]);
	printf("  ratio impair / bump-in-wire:               %.2f\n",
	       ns[1][v.epochs / 2] / ns[0][v.epochs / 2]);
	for (s = 0; s < 2; s++) {
		emu_switch_free(sw[s]);
		emu_pipeline_free(pl[s]);
	}
	bench_vclock_done(&v);
	return rc;
}
