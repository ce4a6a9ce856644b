/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef EMU_TIMELINE_H
#define EMU_TIMELINE_H

/**
 * @file
 * --timeline FILE.csv: the switch's state over time for plots and rocestat, one row per port
 * and priority each time it changed, on a grid (10 us by default in replay, each main-loop
 * pass live). Columns:
 *   t_ns       the grid time (ns; the virtual clock in replay, the epoch live)
 *   port       the port name
 *   prio       0-7 for a queue's row, "all" for the port's row
 *   queue_bytes, queue_pkts, max_queue_bytes   the queue now (prio rows), the port's largest
 *                                              (all row: max_queue_bytes only)
 *   paused, xoff                               prio rows: 1 while paused by PFC received /
 *                                              holding its sender in XOFF
 *   tx_pkts, tx_bytes, ecn_marked, drops       all rows: the port's counters so far (rates
 *                                              are their differences over t_ns)
 * Written atomically (emu_out), every write checked.
 */

#include <stdint.h>

#include "lib/base/emu_err.h"

struct emu_switch;
struct emu_snap;
struct emu_timeline;

/** Open @p path for @p sw; NULL with a message. */
struct emu_timeline *emu_timeline_open(const char *path, const struct emu_switch *sw,
				       struct emu_err *err);

/** Rows for the ports and priorities that changed since the last sample, stamped @p t_ns. */
void emu_timeline_sample(struct emu_timeline *tl, const struct emu_switch *sw,
			 const struct emu_snap *sn, uint64_t t_ns);

/** Write out, close and put in place; 0 or -errno with the message. Frees @p tl; accepts NULL. */
int emu_timeline_close(struct emu_timeline *tl, struct emu_err *err);

/** A refused or failed run: remove the temporary file; frees @p tl; accepts NULL. */
void emu_timeline_abort(struct emu_timeline *tl);

/** Rows written so far. */
uint64_t emu_timeline_rows(const struct emu_timeline *tl);

#endif
