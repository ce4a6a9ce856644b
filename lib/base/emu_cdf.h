/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef EMU_CDF_H
#define EMU_CDF_H

#include "lib/base/emu_err.h"

/**
 * Load a cumulative distribution table from @p file: lines "delay_us probability", both
 * non-decreasing, the last probability 1, '#' comments; at most @p max points. Fills *@p ns
 * (delays in ns) and *@p prob (allocated; the caller frees both, also on error) and *@p n.
 * Messages start with @p path (the JSON path of the key naming the file).
 */
int emu_cdf_load(const char *file, unsigned int max, double **ns, double **prob, unsigned int *n,
		 const char *path, struct emu_err *err);

#endif
