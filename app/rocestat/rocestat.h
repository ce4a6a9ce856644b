/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef ROCESTAT_H
#define ROCESTAT_H

/**
 * @file
 * rocestat's parts: main.c reads the options and the capture and runs the analysis; rs_out.c
 * writes what it found (every file through lib/base/emu_out, refused before anything is read
 * when it names the same file as an input or another output).
 */

#include <stdbool.h>

#include "lib/analysis/ana.h"

struct rs_opts {
	struct ana_opts ana;
	const char *dcqcn;
	const char *json_path;
	const char *csv_dir;
	const char *app_log;
	const char *capture;
	const char *report_dir;
	unsigned int png_w, png_h;
	bool quiet;
};

/**
 * Before anything is read: refuse (one line on stderr, -1) an output naming the same file as
 * an input or another output, or one that could not be created.
 */
int rs_check_files(const struct rs_opts *o);

/** The JSON report into @p path ("-": standard output); @p role names it in messages. */
int rs_write_json(struct ana *a, const char *role, const char *path);

/** The text report into @p path. */
int rs_write_text(struct ana *a, const char *role, const char *path);

/** The CSV time series into directory @p dir (created if missing). */
int rs_write_csv(struct ana *a, const char *role, const char *dir);

#endif
