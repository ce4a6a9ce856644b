/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "lib/base/emu_err.h"

static void
emu_err_vset(struct emu_err *err, const char *fmt, va_list ap)
{
	if (err == NULL)
		return;
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
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
	size_t n;

	if (err == NULL)
		return;
	n = strnlen(prefix, EMU_ERR_LEN - 3);
	memcpy(tmp, prefix, n);
	memcpy(tmp + n, ": ", 2);
	n += 2;
	memcpy(tmp + n, err->msg, EMU_ERR_LEN - n - 1);
	tmp[EMU_ERR_LEN - 1] = '\0';
	memcpy(err->msg, tmp, sizeof(tmp));
}
