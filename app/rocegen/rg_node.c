/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rocegen's node options (docs/node.md): --node FILE and the flags for its common keys, read
 * through lib/node's loader into rg_opts, and `rocegen node ...`, which prints the model.
 */
#include <errno.h>
#include <inttypes.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/node/node_load.h"
#include "lib/node/node_tune.h"
#include "rg_main.h"

/* A node flag (--pcie, --gdr, ...) as the node-file key it stands for, over the file's: the
 * loader checks it with the file's rules and names it by its JSON path. */
int
rg_node_flag(struct rg_opts *o, int c, const char *arg)
{
	static const char *const keys[] = { "pcie", "gdr", "gpus", "nics", "fabric", "gpu",
					    "cpu", "host_mem_GBps" };
	unsigned long v;
	unsigned int gen, lanes;
	json_t *val = NULL;
	char *end, tail;
	double d;

	switch (c) {
	case 257:
		if (sscanf(arg, "%ux%u%c", &gen, &lanes, &tail) != 2) {
			fprintf(stderr, "rocegen: --pcie: GENxLANES (generation x width, e.g. "
				"4x16), got \"%s\"\n", arg);
			return -1;
		}
		val = json_pack("{s:i, s:i}", "gen", (int)gen, "lanes", (int)lanes);
		break;
	case 258:
		if (strcmp(arg, "on") != 0 && strcmp(arg, "off") != 0) {
			fprintf(stderr, "rocegen: --gdr: on or off, got \"%s\"\n", arg);
			return -1;
		}
		val = json_boolean(strcmp(arg, "on") == 0);
		break;
	case 259:
	case 260:
		if (rg_parse_uint(c == 259 ? "--gpus" : "--nics", arg, 0, 1000000, &v) != 0)
			return -1;
		val = json_integer((json_int_t)v);
		if (c == 259) {
			o->n_ranks = (unsigned int)(v >= 1 && v <= RG_MAX_LOCAL ? v : 1);
			o->ranks_set = false;	/* the node's gpus, checked by the loader */
		}
		break;
	case 264:
		errno = 0;
		d = strtod(arg, &end);
		if (errno != 0 || end == arg || *end != '\0') {
			fprintf(stderr, "rocegen: --host-mem-GBps: a number, got \"%s\"\n", arg);
			return -1;
		}
		val = json_real(d);
		break;
	default:
		val = json_string(arg);
		break;
	}
	if (o->node_flags == NULL)
		o->node_flags = json_object();
	if (val == NULL || o->node_flags == NULL ||
	    json_object_set_new(o->node_flags, keys[c - 257], val) != 0) {
		fprintf(stderr, "rocegen: out of memory\n");
		return -1;
	}
	return 0;
}

/* The node file with the flags over it, read into o->node: its GPUs become --ranks, its NIC's
 * line rate --line-rate-mbps (either flag, given, wins over the file). */
int
rg_node_setup(struct rg_opts *o)
{
	struct emu_err err;
	json_t *doc = NULL, *flags = o->node_flags != NULL ? o->node_flags : json_object();
	int rc = 0;

	if (o->node_file != NULL) {
		rc = node_load_file(o->node_file, &doc, &err);
		if (rc != 0) {
			fprintf(stderr, "rocegen: --node: %s\n", err.msg);
			goto out;
		}
	} else {
		doc = json_object();
	}
	if (o->ranks_set)
		json_object_set_new(flags, "gpus", json_integer(o->n_ranks));
	if (o->line_set)
		json_object_set_new(flags, "nic_gbps", json_real(o->line_mbps / 1000));
	node_cfg_default(&o->node);
	o->node.gpus = o->n_ranks;
	o->node.nic_gbps = o->line_mbps / 1000;
	if (json_is_object(doc) && json_object_update_recursive(doc, flags) != 0) {
		fprintf(stderr, "rocegen: out of memory\n");
		rc = -1;
		goto out;
	}
	rc = node_load_json(doc, "node", &o->node, &err);
	if (rc != 0) {
		if (o->node_file != NULL)
			fprintf(stderr, "%s (in %s%s)\n", err.msg, o->node_file,
				json_object_size(flags) > 0 ? " with the node flags over it" : "");
		else
			fprintf(stderr, "%s (from the node flags)\n", err.msg);
		goto out;
	}
	o->n_ranks = o->node.gpus;
	o->line_mbps = o->node.nic_gbps * 1000;
	node_model_eval(&o->node, &o->node_eval);
	o->node_on = true;
out:
	json_decref(doc);
	if (flags != o->node_flags)
		json_decref(flags);
	return rc != 0 ? -1 : 0;
}

int
rg_node_main(int argc, char **argv)
{
	struct rg_opts *o = calloc(1, sizeof(*o));
	json_t *j;
	int rc;

	if (o == NULL)
		return 1;
	optind = 0;
	rc = rg_parse_args(argc, argv, o, true);
	if (rc != 0) {
		json_decref(o->node_flags);
		free(o);
		return rc > 0 ? 0 : 1;
	}
	j = node_json(&o->node, &o->node_eval);
	rc = j == NULL || json_dumpf(j, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER) != 0 ||
	     fputc('\n', stdout) == EOF || fflush(stdout) != 0;
	json_decref(j);
	json_decref(o->node_flags);
	free(o);
	return rc;
}

void
rg_algo_auto(struct rg_opts *o)
{
	struct node_cfg c;
	struct node_eval e;
	struct node_tune_in in = { .nodes = o->n_procs, .ppn = o->n_ranks, .node = &c, .eval = &e };
	enum node_algo a;
	enum node_proto p;

	if (o->node_on) {
		c = o->node;
	} else {
		node_cfg_default(&c);
		c.gpus = c.nics = o->n_ranks;
		c.nic_gbps = o->line_mbps / 1000;
	}
	node_model_eval(&c, &e);
	if (o->coll != RG_COLL_ALLREDUCE) {
		o->algo = RG_ALGO_RING;	/* NCCL: the other collectives here are ring-only */
		return;
	}
	node_tune_pick(&in, o->size, &a, &p, o->auto_times_us);
	o->algo = a == NODE_ALGO_TREE ? RG_ALGO_TREE : RG_ALGO_RING;
	if (o->proto == RG_PROTO_NONE && !o->srd)
		o->proto = p == NODE_PROTO_LL ? RG_PROTO_LL : p == NODE_PROTO_LL128 ?
			   RG_PROTO_LL128 : RG_PROTO_SIMPLE;
	printf("rocegen: --algo auto: %s/%s for %" PRIu64 " bytes over %u nodes x %u (NCCL's "
	       "tuning, us: tree ll %.1f ll128 %.1f simple %.1f, ring ll %.1f ll128 %.1f simple "
	       "%.1f; < 0: not enabled)\n", node_algo_name(a), node_proto_name(p), o->size,
	       o->n_procs, o->n_ranks, o->auto_times_us[0][0], o->auto_times_us[0][1],
	       o->auto_times_us[0][2], o->auto_times_us[1][0], o->auto_times_us[1][1],
	       o->auto_times_us[1][2]);
}
