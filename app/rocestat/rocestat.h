/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef ROCESTAT_H
#define ROCESTAT_H

/**
 * @file
 * rocestat's parts: main.c reads the options and runs the analysis; rs_read.c reads the
 * capture; rs_out.c writes what it found (every file through lib/base/emu_out, refused before
 * anything is read when it names the same file as an input or another output).
 */

#include <stdbool.h>
#include <stdio.h>

#include <jansson.h>

#include "lib/analysis/ana.h"
#include "lib/base/emu_out.h"

struct rs_opts {
	struct ana_opts ana;
	const char *dcqcn;
	const char *json_path;
	const char *csv_dir;
	const char *app_log;
	const char *nccl_log;
	const char *rocegen_json;
	const char *capture;
	const char *report_dir;
	unsigned int png_w, png_h;
	bool quiet;
	bool window_given;      /* --window-us given: the rate plot uses it too */
};

/**
 * Read the capture at @p path into @p a (rs_read.c): 0, or -errno after one line on stderr
 * (libpcap's message for a file it cannot read).
 */
int rs_read(struct ana *a, const char *path);

/**
 * Before anything is read: refuse (one line on stderr, -1) an output naming the same file as
 * an input or another output, or one that could not be created.
 */
int rs_check_files(const struct rs_opts *o);

/* The output files of one run: written first, then all put in place together. */
#define RS_BATCH_MAX 16
struct rs_batch {
	struct emu_out o[RS_BATCH_MAX];
	unsigned int n;
};

/**
 * The JSON report into @p path ("-": standard output), added to @p b; @p role names it in
 * messages. Each writer returns 0, or -errno after one line on stderr (@p b then holds the
 * files written before, for rs_batch_abort()).
 */
int rs_write_json(struct rs_batch *b, struct ana *a, const char *role, const char *path);

/** The text report into @p path, added to @p b. */
int rs_write_text(struct rs_batch *b, struct ana *a, const char *role, const char *path);

/** The CSV time series into directory @p dir (created if missing), added to @p b. */
int rs_write_csv(struct rs_batch *b, struct ana *a, const char *role, const char *dir);

/** Rename every file of @p b over its target: 0, or -errno after one line on stderr (the
 *  files not yet renamed are removed). */
int rs_batch_commit(struct rs_batch *b);

/** rocestat's version, git commit and libraries: one line for --version. */
void rs_print_version(FILE *f);

/** The same as a JSON object (report.json's "version"); NULL on allocation failure. */
json_t *rs_version_json(void);

/**
 * The summary `rocestat report` prints on @p f: the text report's first line, its FAIL lines
 * and its verdict, then where the report went (@p written: whether it was written).
 */
void rs_print_summary(struct ana *a, const char *dir, bool written, FILE *f);

/** Remove the temporary files of @p b: the targets stay as they were. */
void rs_batch_abort(struct rs_batch *b);

#endif
