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
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_lcore.h>
#include <rte_log.h>

#include <rte_version.h>

#include "app.h"
#include "app/rocemu/version.h"
#include "lib/base/emu_prom.h"
#include "lib/base/emu_rundir.h"

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

	snprintf(dir, sizeof(dir), "%s", rte_eal_get_runtime_dir());
	rte_eal_cleanup();
	emu_runtime_dir_remove(dir);
}

uint64_t
app_mem_mb_needed(const struct emu_pipeline *pl)
{
	struct emu_pipeline_needs nd;

	/* the pools from EAL memory, and EAL's own needs */
	if (emu_pipeline_needs(pl, &nd, NULL) != 0)
		return 512;
	return nd.eal_bytes / (1024 * 1024) + 256;
}

volatile int app_stop_signal;

static void
app_on_stop_signal(int sig)
{
	if (app_stop_signal != 0) {
		static const char msg[] = "rocemu: second signal, exiting at once\n";

		if (write(STDERR_FILENO, msg, sizeof(msg) - 1) < 0) {
			/* nothing to do */
		}
		_exit(APP_EXIT_SIGNAL + sig);
	}
	app_stop_signal = sig;
}

void
app_install_stop_signals(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = app_on_stop_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
}

int
app_prepare(struct app_ctx *ctx, const struct app_opts *o, const struct emu_file_ref *refs,
	    unsigned int n_refs, struct app_prep *prep)
{
	struct emu_file_ref all[EMU_PIPELINE_MAX_FILES + 64];
	struct emu_err err;
	unsigned int n = 0, i;

	if (emu_pipeline_needs(ctx->pl, &prep->needs, &err) != 0) {
		fprintf(stderr, "%s: %s (in %s)\n", app_prog, err.msg, ctx->pl->file);
		return -1;
	}
	if (emu_pipeline_check_mem(&prep->needs, emu_mem_limit_bytes(o->max_mem_mb),
				   o->max_mem_mb != 0, &err) != 0) {
		fprintf(stderr, "%s: %s (in %s)\n", app_prog, err.msg, ctx->pl->file);
		return -1;
	}
	for (i = 0; i < n_refs && n < RTE_DIM(all); i++)
		all[n++] = refs[i];
	if (o->pipeline != NULL)
		all[n++] = (struct emu_file_ref){ "--pipeline", o->pipeline, true };
	if (o->profile != NULL)
		all[n++] = (struct emu_file_ref){ "--profile", o->profile, true };
	if (o->stats_file != NULL)
		all[n++] = (struct emu_file_ref){ "--stats", o->stats_file, false };
	if (o->prom_file != NULL)
		all[n++] = (struct emu_file_ref){ "--prometheus", o->prom_file, false };
	if (o->timeline_file != NULL)
		all[n++] = (struct emu_file_ref){ "--timeline", o->timeline_file, false };
	for (i = 0; i < prep->needs.n_files && n < RTE_DIM(all); i++)
		all[n++] = (struct emu_file_ref){ prep->needs.file_roles[i], prep->needs.files[i],
						  prep->needs.file_input[i],
						  prep->needs.file_rotates[i] };
	if (emu_files_check(all, n, &err) != 0) {
		fprintf(stderr, "%s: %s\n", app_prog, err.msg);
		return -1;
	}
	/* an output on standard output keeps it to itself: the summary goes to stderr */
	ctx->summary = stdout;
	for (i = 0; i < n; i++)
		if (!all[i].input && emu_out_names_stdout(all[i].path))
			ctx->summary = stderr;
	if (o->stats_file != NULL && emu_out_probe(o->stats_file, &err) != 0) {
		fprintf(stderr, "%s: --stats %s\n", app_prog, err.msg);
		return -1;
	}
	if (o->prom_file != NULL && emu_out_probe(o->prom_file, &err) != 0) {
		fprintf(stderr, "%s: --prometheus %s\n", app_prog, err.msg);
		return -1;
	}
	return 0;
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
	char in[EMU_ERR_LEN];

	if (err->names_file)
		return; /* a syntax error already starts with the file */
	snprintf(in, sizeof(in), " (in %s)", file);
	emu_err_suffix(err, in);
}

int
app_build(struct app_ctx *ctx, const struct app_opts *o, struct emu_err *err)
{
	/* checking builds nothing that holds packets: a small pool will do */
	uint32_t n = ctx->pl->check_only ? 1024 :
		     emu_pipeline_mbufs_needed(ctx->pl, 1024, 1024) + o->extra_mbufs;
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

void
app_teardown_exit(struct app_ctx *ctx)
{
	/* the pool is left to rte_eal_cleanup(), which unmaps all of EAL's memory: freeing it
	 * first makes EAL's allocator zero the whole region (a 200 MB memset, a third of a
	 * short replay's time, most of it faulting in pages nothing had touched) */
	ctx->pool = NULL;
	app_teardown(ctx);
}

/* The switch's counters, with what the mode adds (ctx->extra_stats). */
static json_t *
app_stats_json(const struct app_ctx *ctx)
{
	json_t *stats = emu_switch_stats_json(ctx->sw);

	if (stats != NULL && ctx->extra_stats != NULL) {
		json_t *x = ctx->extra_stats(ctx->extra_arg);

		if (x != NULL)
			json_object_update(stats, x);
		json_decref(x);
	}
	return stats;
}

int
app_write_prom(const struct app_ctx *ctx, const char *file, struct emu_err *err)
{
	json_t *stats = app_stats_json(ctx);
	int rc = emu_prom_write(stats, file, err);

	json_decref(stats);
	return rc;
}

int
app_write_stats(const struct app_ctx *ctx, const char *file, struct emu_err *err)
{
	json_t *stats = app_stats_json(ctx);
	struct emu_out out;
	char *text;
	int rc;

	json_object_set_new(stats, "pipeline", json_string(ctx->pl->file));
	json_object_set_new(stats, "seed", json_integer((json_int_t)ctx->seed));
	json_object_set_new(stats, "version", json_string(app_version()));
	if (ctx->live)
		json_object_set_new(stats, "polling", json_pack("{s:I,s:I}", "gaps_over_1ms",
			(json_int_t)ctx->poll_gaps_over_1ms, "longest_gap_ns",
			(json_int_t)ctx->poll_gap_max_ns));
	text = json_dumps(stats, JSON_INDENT(2) | JSON_SORT_KEYS);
	json_decref(stats);
	if (text == NULL)
		return emu_err_setrc(err, -ENOMEM, "%s: out of memory", file);
	rc = emu_out_open(&out, file, err);
	if (rc == 0) {
		rc = emu_out_write(&out, text, strlen(text));
		if (rc == 0)
			rc = emu_out_write(&out, "\n", 1);
		rc = emu_out_commit(&out, err);
	}
	free(text);
	return rc;
}

const char *app_prog = "rocemu";

const char *
app_version(void)
{
	static char v[160];

	if (v[0] == '\0')
		snprintf(v, sizeof(v), "rocemu %s (git %s, %s)", ROCEMU_VERSION, ROCEMU_GIT,
			 rte_version());
	return v;
}

int
main(int argc, char **argv)
{
	static const char *const modes[][2] = {
		{ "replay", "rocemu replay" }, { "check", "rocemu check" },
		{ "schema", "rocemu schema" },
	};
	unsigned int i;

	/* a closed pipe on an output is a write error like any other (EPIPE: named, exit 1,
	 * the other files still written), not a silent death by SIGPIPE */
	signal(SIGPIPE, SIG_IGN);
	if (argc > 1 && (strcmp(argv[1], "--version") == 0 || strcmp(argv[1], "version") == 0)) {
		printf("%s\n", app_version());
		return fflush(stdout) == 0 && !ferror(stdout) ? APP_EXIT_OK : APP_EXIT_FAIL;
	}
	for (i = 0; argc > 1 && i < RTE_DIM(modes); i++) {
		if (strcmp(argv[1], modes[i][0]) != 0)
			continue;
		/* every error line of the mode starts "rocemu MODE:", getopt's too (argv[0]) */
		app_prog = modes[i][1];
		argv[1] = (char *)(uintptr_t)app_prog;
		switch (i) {
		case 0:
			return app_replay_main(argc - 1, argv + 1);
		case 1:
			return app_check_main(argc - 1, argv + 1);
		default:
			return app_schema_main(argc - 1, argv + 1);
		}
	}
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
		fprintf(stderr, "%s: %s: must be a number of seconds >= 0, got \"%s\"\n", app_prog,
			opt, arg);
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
		/* decimal only (no octal, hex or sign), and within a JSON integer */
		errno = 0;
		o->seed = strtoull(arg, &end, 10);
		if (errno != 0 || end == arg || *end != '\0' || arg[0] < '0' || arg[0] > '9' ||
		    o->seed > (uint64_t)INT64_MAX) {
			fprintf(stderr, "%s: --seed: must be a decimal integer from 0 to %" PRId64
				", got \"%s\"\n", app_prog, INT64_MAX, arg);
			return -1;
		}
		o->seed_given = true;
		return 1;
	case APP_OPT_PROM:
		o->prom_file = arg;
		return 1;
	case APP_OPT_TIMELINE:
		o->timeline_file = arg;
		return 1;
	case APP_OPT_TIMELINE_US:
		errno = 0;
		o->timeline_us = strtod(arg, &end);
		if (errno != 0 || end == arg || *end != '\0' || !(o->timeline_us >= 0.001) ||
		    o->timeline_us > 1e9) {
			fprintf(stderr, "%s: --timeline-us: must be a number of microseconds "
				"from 0.001 (1 ns) to 1e9, got \"%s\"\n", app_prog, arg);
			return -1;
		}
		return 1;
	case APP_OPT_MAX_MEM:
		errno = 0;
		o->max_mem_mb = strtoull(arg, &end, 10);
		if (errno != 0 || end == arg || *end != '\0' || arg[0] < '0' || arg[0] > '9' ||
		    o->max_mem_mb == 0 || o->max_mem_mb > (UINT64_C(1) << 40)) {
			fprintf(stderr, "%s: --max-mem: must be a number of MB from 1, got \"%s\"\n",
				app_prog, arg);
			return -1;
		}
		return 1;
	default:
		return 0;
	}
}

unsigned int
app_unpausable_warnings(const struct emu_pipeline *pl, const bool *fed, FILE *f)
{
	unsigned int i, n = 0, q;

	for (i = 0; i < pl->n_ports && i < EMU_TM_MAX_PORTS; i++) {
		const struct emu_tm_port_cfg *pc = &pl->tm.ports[i];
		char prios[32] = "";
		size_t u = 0;

		if ((fed != NULL && !fed[i]) || !pc->pfc.enabled || pc->lossless_mask == 0)
			continue;
		for (q = 0; q < EMU_TM_N_PRIO; q++)
			if (pc->lossless_mask & (1u << q))
				u += (size_t)snprintf(prios + u, sizeof(prios) - u, "%s%u",
						      u != 0 ? "," : "", q);
		fprintf(f, "%s: WARNING: port %s: lossless priority %s (PFC) %s, which PFC cannot "
			"pause: when the port's headroom fills, the frames a NIC would have held back "
			"are dropped (drop_headroom_overflow); live, the NIC behind the port is "
			"paused\n", app_prog, pl->port_names[i], prios,
			fed != NULL ? "is fed by a replayed --in" :
				      "in a replay is fed by its --in");
		n++;
	}
	return n;
}

int
app_load_pipeline(struct app_ctx *ctx, struct app_opts *o)
{
	struct emu_err err;

	if (o->pipeline == NULL)
		o->pipeline = app_default_pipeline();
	if (emu_pipeline_load(o->pipeline, &ctx->pl, &err) != 0) {
		if (err.names_file)
			/* a JSON syntax error names the file */
			fprintf(stderr, "%s: %s\n", app_prog, err.msg);
		else
			fprintf(stderr, "%s: %s (in %s)\n", app_prog, err.msg, o->pipeline);
		return -1;
	}
	return 0;
}
