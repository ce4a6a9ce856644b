/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rocemu: a RoCE switch fabric emulator on DPDK. This file: mode dispatch and
 * what the live, replay and check modes share (EAL for port-less modes, building
 * the switch, the stats file).
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_lcore.h>
#include <rte_log.h>

#include "app.h"

#ifndef ROCEMU_SOURCE_DIR
#define ROCEMU_SOURCE_DIR "."
#endif

const char *
app_default_pipeline(void)
{
	static const char *rel = "pipelines/bump-in-wire.json";

	if (access(rel, R_OK) == 0)
		return rel;
	return ROCEMU_SOURCE_DIR "/pipelines/bump-in-wire.json";
}

void
app_eal_cleanup(void)
{
	char dir[PATH_MAX];
	struct dirent *de;
	DIR *d;

	snprintf(dir, sizeof(dir), "%s", rte_eal_get_runtime_dir());
	rte_eal_cleanup();
	/* EAL leaves /var/run/dpdk/<prefix>/ behind; with a prefix per process they pile up. */
	d = opendir(dir);
	if (d == NULL)
		return;
	while ((de = readdir(d)) != NULL) {
		char path[PATH_MAX + 256];

		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		unlink(path);
	}
	closedir(d);
	rmdir(dir);
}

uint64_t
app_mem_mb_needed(const struct emu_pipeline *pl)
{
	uint64_t n = emu_pipeline_mbufs_needed(pl, 1024, 1024);
	uint64_t per = emu_pipeline_data_room(pl) + EMU_MBUF_PRIV_SIZE + 128 + 64;

	/* pool + capture pools and rings + EAL's own needs */
	return n * per / (1024 * 1024) + 256;
}

int
app_eal_init_portless(const char *prog, uint64_t mem_mb, struct emu_err *err)
{
	char mem[32], prefix[64];
	char *argv[] = {
		(char *)(uintptr_t)prog, "--no-huge", "--no-pci", "--no-shconf", prefix,
		"--no-telemetry", "-l", "0", "--log-level=lib.eal:error", "-m", mem, NULL,
	};
	int argc = (int)RTE_DIM(argv) - 1;

	/* --in-memory is refused with --no-huge; a per-process prefix keeps runs apart. */
	snprintf(prefix, sizeof(prefix), "--file-prefix=rocemu_offline_%d", (int)getpid());
	snprintf(mem, sizeof(mem), "%lu", (unsigned long)mem_mb);
	if (rte_eal_init(argc, argv) < 0)
		return emu_err_setrc(err, -rte_errno, "EAL initialisation failed: %s",
				     rte_strerror(rte_errno));
	return 0;
}

/* Messages start with the JSON path; the file goes at the end. */
static void
app_err_in(struct emu_err *err, const char *file)
{
	size_t used = strlen(err->msg);

	snprintf(err->msg + used, sizeof(err->msg) - used, " (in %s)", file);
}

int
app_build(struct app_ctx *ctx, const struct app_opts *o, struct emu_err *err)
{
	uint32_t n = emu_pipeline_mbufs_needed(ctx->pl, 1024, 1024);
	int rc;

	ctx->pool = emu_pool_create("emu_pkts", n, emu_pipeline_data_room(ctx->pl),
				    (int)rte_socket_id(), err);
	if (ctx->pool == NULL)
		return -ENOMEM;
	ctx->seed = o->seed_given ? o->seed : 1;
	if (o->profile != NULL && !o->seed_given) {
		/* The profile's seed applies unless --seed overrides it: peek at it first. */
		json_error_t jerr;
		json_t *root = json_load_file(o->profile, JSON_REJECT_DUPLICATES, &jerr);
		json_t *s = root != NULL ? json_object_get(root, "seed") : NULL;

		if (json_is_integer(s) && json_integer_value(s) >= 0)
			ctx->seed = (uint64_t)json_integer_value(s);
		json_decref(root);
	}
	ctx->sw = emu_switch_create(ctx->pl, ctx->pool, ctx->seed, err);
	if (ctx->sw == NULL) {
		app_err_in(err, ctx->pl->file);
		return -EINVAL;
	}
	if (o->profile != NULL) {
		rc = emu_profile_load(o->profile, ctx->sw, &ctx->prof, err);
		if (rc != 0) {
			app_err_in(err, o->profile);
			return rc;
		}
	}
	return 0;
}

void
app_teardown(struct app_ctx *ctx)
{
	emu_switch_free(ctx->sw);
	emu_profile_free(ctx->prof);
	rte_mempool_free(ctx->pool);
	emu_pipeline_free(ctx->pl);
	memset(ctx, 0, sizeof(*ctx));
}

int
app_write_stats(const struct app_ctx *ctx, const char *file, struct emu_err *err)
{
	json_t *stats = emu_switch_stats_json(ctx->sw);
	int rc;

	json_object_set_new(stats, "pipeline", json_string(ctx->pl->file));
	json_object_set_new(stats, "seed", json_integer((json_int_t)ctx->seed));
	rc = json_dump_file(stats, file, JSON_INDENT(2) | JSON_SORT_KEYS);
	json_decref(stats);
	if (rc != 0)
		return emu_err_setrc(err, -EIO, "%s: cannot write the stats file", file);
	return 0;
}

int
main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "replay") == 0)
		return app_replay_main(argc - 1, argv + 1);
	if (argc > 1 && strcmp(argv[1], "check") == 0)
		return app_check_main(argc - 1, argv + 1);
	return app_live_main(argc, argv);
}

int
app_parse_seconds(const char *opt, const char *arg, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(arg, &end);
	if (errno != 0 || end == arg || *end != '\0' || !(v >= 0) || v > 1e9) {
		fprintf(stderr, "rocemu: %s: must be a number of seconds >= 0, got \"%s\"\n", opt,
			arg);
		return -1;
	}
	*out = v;
	return 0;
}

int
app_common_opt(struct app_opts *o, int c, const char *arg)
{
	char *end;

	switch (c) {
	case APP_OPT_PIPELINE:
		o->pipeline = arg;
		return 1;
	case APP_OPT_PROFILE:
		o->profile = arg;
		return 1;
	case APP_OPT_STATS:
		o->stats_file = arg;
		return 1;
	case APP_OPT_SEED:
		errno = 0;
		o->seed = strtoull(arg, &end, 0);
		if (errno != 0 || end == arg || *end != '\0' || arg[0] == '-') {
			fprintf(stderr, "rocemu: --seed: must be an unsigned integer, got \"%s\"\n",
				arg);
			return -1;
		}
		o->seed_given = true;
		return 1;
	default:
		return 0;
	}
}

int
app_load_pipeline(struct app_ctx *ctx, struct app_opts *o)
{
	struct emu_err err;

	if (o->pipeline == NULL)
		o->pipeline = app_default_pipeline();
	if (emu_pipeline_load(o->pipeline, &ctx->pl, &err) != 0) {
		if (strncmp(err.msg, o->pipeline, strlen(o->pipeline)) == 0)
			fprintf(stderr, "%s\n", err.msg); /* a JSON syntax error names the file */
		else
			fprintf(stderr, "%s (in %s)\n", err.msg, o->pipeline);
		return -1;
	}
	return 0;
}
