/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "lib/base/emu_err.h"

/* A message cut at the buffer's end says so with "..." */
static void
emu_err_mark_cut(struct emu_err *err, size_t wanted)
{
	if (wanted >= sizeof(err->msg))
		memcpy(err->msg + sizeof(err->msg) - 4, "...", 4);
}

static void
emu_err_vset(struct emu_err *err, const char *fmt, va_list ap)
{
	int n;

	if (err == NULL)
		return;
	err->names_file = false;
	n = vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	emu_err_mark_cut(err, n < 0 ? 0 : (size_t)n);
}

int
emu_err_set(struct emu_err *err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	emu_err_vset(err, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

int
emu_err_file(struct emu_err *err, int rc, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	emu_err_vset(err, fmt, ap);
	va_end(ap);
	if (err != NULL)
		err->names_file = true;
	return rc;
}

int
emu_err_setrc(struct emu_err *err, int rc, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	emu_err_vset(err, fmt, ap);
	va_end(ap);
	return rc;
}

void
emu_err_prefix(struct emu_err *err, const char *prefix)
{
	char tmp[EMU_ERR_LEN];
	int n;

	if (err == NULL)
		return;
	n = snprintf(tmp, sizeof(tmp), "%s: %s", prefix, err->msg);
	memcpy(err->msg, tmp, sizeof(tmp));
	err->names_file = false; /* it starts with the prefix now */
	emu_err_mark_cut(err, n < 0 ? 0 : (size_t)n);
}

void
emu_err_suffix(struct emu_err *err, const char *suffix)
{
	size_t used, add;

	if (err == NULL)
		return;
	used = strlen(err->msg);
	add = strlen(suffix);
	if (add + 4 > sizeof(err->msg))
		add = sizeof(err->msg) - 4; /* a suffix longer than any message: its start */
	if (used + add >= sizeof(err->msg)) {
		/* the message cut short, said with "...", and the suffix whole */
		used = sizeof(err->msg) - 1 - add - 3;
		memcpy(err->msg + used, "...", 3);
		used += 3;
	}
	memcpy(err->msg + used, suffix, add);
	err->msg[used + add] = '\0';
}
