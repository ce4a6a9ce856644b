/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef EMU_PROM_H
#define EMU_PROM_H

/**
 * @file
 * The counters of a run as a Prometheus textfile (node_exporter's textfile collector), in the
 * text exposition format 0.0.4: one "# HELP" and "# TYPE" line per metric family, then its
 * samples with labels (port, prio, stage, counter, reason, source). Counters end in _total;
 * queue depths, buffer use and pause state are gauges. Built from emu_switch_stats_json(), so
 * the file and --stats always agree. Written atomically (emu_out): a scraper never reads half a
 * file. No network listener.
 */

#include <jansson.h>

#include "lib/base/emu_err.h"

/** Write @p stats (emu_switch_stats_json()) to @p file; 0 or -errno with the message. */
int emu_prom_write(const json_t *stats, const char *file, struct emu_err *err);

/** The same into a malloc'ed string (NULL when out of memory). */
char *emu_prom_text(const json_t *stats);

#endif
