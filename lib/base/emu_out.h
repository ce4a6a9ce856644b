/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef EMU_OUT_H
#define EMU_OUT_H

/**
 * @file
 * Output files that never lose data (no EAL, control path and main lcore only).
 *
 * - A regular file (or a name that does not exist yet) is written under a temporary name in
 *   the same directory, "NAME.rocemu-XXXXXX", and renamed over NAME only by
 *   emu_out_commit() after every byte was written: a refused, failed or killed run leaves an
 *   existing NAME as it was. A killed run leaves its data in the temporary file.
 * - A character device, a FIFO or "-" (standard output; also /dev/stdout, /dev/fd/1) is
 *   written as a stream, never replaced. A symbolic link is followed: the temporary file is
 *   made beside the file it leads to and renamed over that file, the link left a link.
 * - Every write is checked. The first error stops the output (later writes are refused), is
 *   kept with its errno, and is reported by emu_out_commit(), which then keeps the temporary
 *   file (readable up to the last complete record) instead of replacing NAME.
 * - A regular file's blocks are reserved ahead of the writes (fallocate(FALLOC_FL_KEEP_SIZE),
 *   as much again as was written, 1-16 MB at a time): on ext4 this VM wrote a new file at
 *   3.3-4.1 GB/s against 1.4-2.3 GB/s without (tests/bench/README.md, bench_capture). When
 *   the filesystem refuses (no support, ENOSPC, EFBIG) the output goes on without, the
 *   writes reporting their own errors. The file's size is always what was written; blocks
 *   reserved past it are given back by emu_out_commit() and emu_out_truncate() (a killed
 *   run's temporary file may keep up to 16 MB of them).
 *
 * And before anything is opened, emu_files_check() refuses any two paths of a run (inputs,
 * outputs, capture files, stats) that name the same file, by device and inode where the file
 * exists and by absolute path where it does not yet.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "lib/base/emu_err.h"

struct emu_out {
	char *path;       /**< as given */
	char *tmp;        /**< temporary name while writing (regular files), else NULL */
	char *target;     /**< path is a symbolic link: the file it leads to, renamed over */
	int fd;
	bool stream;      /**< device, FIFO or standard output: written in place */
	int error;        /**< first errno of a failed write, 0 while all went well */
	uint64_t bytes;   /**< bytes written */
	uint64_t reserved; /**< blocks reserved up to here (regular files, emu_out_write) */
	bool no_reserve;  /**< the filesystem refused to reserve: plain writes */
};

/**
 * Open @p path for writing as described above. The directory must exist and be writable.
 * Returns 0 or -errno with a message naming the file.
 */
int emu_out_open(struct emu_out *o, const char *path, struct emu_err *err);

/** Whether @p path names standard output ("-", /dev/stdout, /dev/fd/1, /proc/self/fd/1):
 * a program writing an output there prints its summary to standard error instead. */
bool emu_out_names_stdout(const char *path);

/** Check, without creating anything, that emu_out_open(@p path) would succeed. */
int emu_out_probe(const char *path, struct emu_err *err);

/**
 * Write all of @p len bytes (retrying short writes and EINTR). Returns 0, or -errno on the
 * first failure; after a failure every later call fails at once with the same error.
 */
int emu_out_write(struct emu_out *o, const void *buf, size_t len);

/** After a failed write: cut a regular file back to @p size bytes (a record boundary). */
void emu_out_truncate(struct emu_out *o, uint64_t size);

/**
 * The first half of emu_out_commit(): give back the blocks reserved past the end and close
 * (a regular file's close can still fail: a quota, NFS). The output keeps its temporary name
 * until emu_out_commit() or emu_out_abort(). Returns 0, or -errno of the first failure of any
 * write or of the close. For the files of a run that are put in place together: finish all,
 * then commit all (only renames are left).
 */
int emu_out_finish(struct emu_out *o);

/**
 * Finish (emu_out_finish(), when not done) and rename the temporary file over the path when
 * everything was written.
 * When a write failed, NAME is left as it was and the temporary file kept; the message says
 * where the data is. Returns 0 or -errno with the message.
 */
int emu_out_commit(struct emu_out *o, struct emu_err *err);

/** Abandon a refused run's output: close and remove the temporary file; accepts a closed one. */
void emu_out_abort(struct emu_out *o);

/** Whether emu_out_open() succeeded and the output is not yet committed or aborted. */
static inline bool
emu_out_is_open(const struct emu_out *o)
{
	return o->fd >= 0 && o->path != NULL;
}

/** One path of a run and its role, as shown in messages ("--in", "stages.egress[0].file"). */
struct emu_file_ref {
	const char *role;
	const char *path;
	bool input; /**< inputs may repeat each other; nothing may repeat an output */
	/** An output that rotates (a capture's "rotate_mb"): it also writes the names
	 * emu_out_rotated_name() gives for 1 .. rotates - 1 (UINT32_MAX: without end); 0: none. */
	uint32_t rotates;
};

/** The name of file @p idx of a rotation of @p file: @p file itself for 0, else "STEM-IDX.EXT"
 * (or "FILE-IDX" without an extension), as tcpdump -C/-W numbers them. */
void emu_out_rotated_name(const char *file, uint32_t idx, char *buf, size_t len);

/**
 * Refuse two refs naming the same file where one of them is an output: "ROLE2 PATH2: is the
 * same file as ROLE1 PATH1 (...)". Standard output ("-") counts as one file. A rotating
 * output's later names count as its own: no other path may be one of them.
 */
int emu_files_check(const struct emu_file_ref *refs, unsigned int n, struct emu_err *err);

#endif
