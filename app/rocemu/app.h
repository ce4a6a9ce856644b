/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef ROCEMU_APP_H
#define ROCEMU_APP_H

#include <stdbool.h>
#include <stdio.h>
#include <stdint.h>

#include "lib/base/emu_err.h"
#include "lib/base/emu_out.h"
#include "lib/ctl/emu_profile.h"
#include "lib/switch/emu_switch.h"

/*
 * Exit codes (docs/running.md, "Files, memory and exit status"): 0 the run did all it was asked and accounted for every
 * packet; 1 it ran but something was lost or went wrong (a write error, a bad input record, a
 * conservation mismatch, frames not injected); 2 refused before it started (arguments,
 * configuration, files, memory); 128 + N stopped by signal N after finishing its files.
 */
#define APP_EXIT_OK 0
#define APP_EXIT_FAIL 1
#define APP_EXIT_CONFIG 2
#define APP_EXIT_SIGNAL 128

struct app_opts {
	const char *pipeline;
	const char *profile;
	const char *stats_file;
	double stats_interval_s;
	double duration_s;
	uint64_t seed;
	bool seed_given;
	double drain_s;
	uint64_t max_mem_mb;  /**< --max-mem: refuse pipelines that need more (0 = RAM) */
	const char *prom_file; /**< --prometheus: node_exporter textfile, rewritten atomically */
	bool stats_print;      /**< print the interval line (--stats-interval given) */
	const char *timeline_file; /**< --timeline: CSV of queues, pauses and counters over time */
	double timeline_us;        /**< --timeline-us: its resolution (replay; live: each pass) */
	uint32_t extra_mbufs;      /**< live: mbufs beyond one RX queue a port (more queues, the
				    *   rings between workers) */
};

/** What app_prepare() found: the pipeline's needs, for EAL's memory size. */
struct app_prep {
	struct emu_pipeline_needs needs;
};

/** The switch and what it needs, built from the options. */
struct app_ctx {
	struct emu_pipeline *pl;
	struct rte_mempool *pool;
	struct emu_switch *sw;
	struct emu_profile *prof;
	uint64_t seed;
	/* live mode: gaps over 1 ms between two polls of the switch's lcore, counted by live.c
	 * (--stats "polling") */
	bool live;
	uint64_t poll_gaps_over_1ms;
	uint64_t poll_gap_max_ns;
	/* where the text summary goes: stdout, or stderr when an output is standard output
	 * (set by app_prepare()) */
	FILE *summary;
	/* more members for --stats and --prometheus at exit (live: workers, the NIC's
	 * counters), merged into the switch's; NULL: none */
	json_t *(*extra_stats)(void *arg);
	void *extra_arg;
};

/** Default pipeline path: ./pipelines/bump-in-wire.json, else the source tree's. */
const char *app_default_pipeline(void);

/**
 * Before any memory is taken or file opened: the pipeline's needs against the memory limit,
 * and every path of the run (@p refs: inputs, outputs, stats, plus the pipeline's capture
 * files) against each other. Prints the one-line refusal; returns 0 or -1. Sets
 * @p ctx summary.
 */
int app_prepare(struct app_ctx *ctx, const struct app_opts *o, const struct emu_file_ref *refs,
		unsigned int n_refs, struct app_prep *prep);

/** Start EAL for the port-less modes (replay, check): --no-huge, in-memory, one lcore. */
int app_eal_init_portless(const char *prog, uint64_t mem_mb, struct emu_err *err);

/** rte_eal_cleanup(), then remove the (now unused) runtime directory EAL created. */
void app_eal_cleanup(void);

/** Memory (MB) the pool of pipeline @p pl needs, with margin. */
uint64_t app_mem_mb_needed(const struct emu_pipeline *pl);

/** Pool, switch and profile from an already loaded pipeline (a small pool when checking). */
int app_build(struct app_ctx *ctx, const struct app_opts *o, struct emu_err *err);

/** The signal number that stopped the run, 0 when none (replay and live). */
extern volatile int app_stop_signal;

/** Install SIGINT/SIGTERM handlers that set app_stop_signal; a second signal exits at once. */
void app_install_stop_signals(void);

/** Free what app_build() made (and the pipeline). */
void app_teardown(struct app_ctx *ctx);
/** app_teardown() for a process about to call app_eal_cleanup() and exit: the mbuf pool is
 * not freed on its own (EAL's cleanup unmaps it with the rest of its memory). */
void app_teardown_exit(struct app_ctx *ctx);

/** Rewrite the --prometheus textfile (atomically). */
int app_write_prom(const struct app_ctx *ctx, const char *file, struct emu_err *err);

/** Write the --stats JSON file. */
int app_write_stats(const struct app_ctx *ctx, const char *file, struct emu_err *err);

/** "rocemu MODE" ("rocemu replay", "rocemu check"; "rocemu" live): every error line starts with
 * it and a colon. */
extern const char *app_prog;

/** "rocemu 0.1.0 (git COMMIT, DPDK 22.11.x)": --version, the replay summary, --stats. */
const char *app_version(void);

int app_live_main(int argc, char **argv);
int app_replay_main(int argc, char **argv);
int app_check_main(int argc, char **argv);
/** rocemu schema pipeline|profile [--out FILE] (schema.c). */
int app_schema_main(int argc, char **argv);

#endif

/* Long options every mode shares; each mode appends its own. */
#define APP_OPT_PIPELINE 'p'
#define APP_OPT_PROFILE 'P'
#define APP_OPT_STATS 's'
#define APP_OPT_SEED 'S'
#define APP_OPT_HELP 'h'
#define APP_OPT_MAX_MEM 'M'
#define APP_OPT_PROM 'T'
#define APP_OPT_TIMELINE 'W'
#define APP_OPT_TIMELINE_US 'U'
#define APP_COMMON_LONGOPTS \
	{ "pipeline", required_argument, NULL, APP_OPT_PIPELINE }, \
	{ "profile", required_argument, NULL, APP_OPT_PROFILE }, \
	{ "stats", required_argument, NULL, APP_OPT_STATS }, \
	{ "seed", required_argument, NULL, APP_OPT_SEED }, \
	{ "help", no_argument, NULL, APP_OPT_HELP }, \
	{ "max-mem", required_argument, NULL, APP_OPT_MAX_MEM }, \
	{ "prometheus", required_argument, NULL, APP_OPT_PROM }, \
	{ "timeline", required_argument, NULL, APP_OPT_TIMELINE }, \
	{ "timeline-us", required_argument, NULL, APP_OPT_TIMELINE_US }

/**
 * Handle a shared option: returns 1 when handled, 0 when @p c is not a shared one,
 * -1 on a bad value (message printed).
 */
int app_common_opt(struct app_opts *o, int c, const char *arg);

/** Parse a non-negative number of seconds; -1 on error. */
int app_parse_seconds(const char *opt, const char *arg, double *out);

/**
 * A WARNING line for each port with lossless priorities under PFC that replay feeds (@p fed:
 * per port, true when an --in feeds it; NULL: every such port, as check says): a replayed
 * input cannot be paused. Returns how many.
 */
unsigned int app_unpausable_warnings(const struct emu_pipeline *pl, const bool *fed, FILE *f);

/**
 * rocemu check: a WARNING line for each capture stage of @p pipeline (its file; @p pl loaded
 * from it) that may write more than 1 GB over @p profile's length (NULL: a minute) at line
 * rate, unless max_mb or rotation bounds it (estimate.c). Returns how many.
 */
unsigned int app_capture_estimate(const struct emu_pipeline *pl, const char *pipeline,
				  const char *profile, FILE *f);

/** Load o->pipeline (or the default) into ctx->pl; prints the message. */
int app_load_pipeline(struct app_ctx *ctx, struct app_opts *o);
