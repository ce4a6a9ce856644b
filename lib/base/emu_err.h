/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef EMU_ERR_H
#define EMU_ERR_H

/**
 * @file
 * Errors on the control path: a function returns 0 or -errno and fills a
 * struct emu_err whose message starts with the JSON path (or file) at fault,
 * e.g. "tm.ports[1].rate_gbps: must be >= 1e-06, got -5".
 */

#include <stddef.h>

/* room for two file names of some length and the JSON path; a message longer than this ends
 * in "..." (emu_err.c), never cut silently */
#include <stdbool.h>

#define EMU_ERR_LEN 4096

struct emu_err {
	char msg[EMU_ERR_LEN];
	bool names_file; /* the message starts with the file it is about (emu_err_file()) */
};

/** Fill @p err (may be NULL) with a printf-style message; returns -EINVAL for `return emu_err_set(...)`. */
int emu_err_set(struct emu_err *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/** Like emu_err_setrc(), for a message that starts with the name of the file it is about:
 * sets names_file, so that callers do not name the file again. */
int emu_err_file(struct emu_err *err, int rc, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/** Like emu_err_set() but returns @p rc (a negative errno) instead of -EINVAL. */
int emu_err_setrc(struct emu_err *err, int rc, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/** Prepend "prefix: " to the message already in @p err. */
void emu_err_prefix(struct emu_err *err, const char *prefix);

/** Append @p suffix to @p err's message; when both do not fit, the message is cut (ending in
 * "...") so that the suffix (a file name, say) is kept whole. */
void emu_err_suffix(struct emu_err *err, const char *suffix);

#endif
