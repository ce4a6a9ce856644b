/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef EMU_RUNDIR_H
#define EMU_RUNDIR_H

/**
 * @file
 * EAL's runtime directory (/var/run/dpdk/PREFIX, or under $XDG_RUNTIME_DIR): rte_eal_cleanup()
 * leaves it behind, and an EAL that failed part way may have made it; with a prefix per
 * process they pile up. No EAL needed (rocegen, the fuzzers and the benchmarks use it too).
 */

/**
 * Empty and remove @p dir, unless another process holds the lock a DPDK primary keeps on its
 * "config" file (another program on the same --file-prefix: its files are not ours).
 * Accepts NULL and "".
 */
void emu_runtime_dir_remove(const char *dir);

#endif
