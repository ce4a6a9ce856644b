/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef EMU_PROFILE_INT_H
#define EMU_PROFILE_INT_H

/* Shared by lib/ctl's files (emu_profile.c, emu_profile_names.c); not for use outside. */

#include <stddef.h>

#include "lib/switch/emu_switch.h"

/* Index of TM port @p name (a port, then the fabric's links) of @p sw's pipeline, or -1. */
int emu_profile_port_index(const struct emu_switch *sw, const char *name);

/* Why @p name is no TM port of @p pl: a hint for the message, starting with "; " (a link name
 * written with "_", a fabric switch's name and its links, else the names there are). */
void emu_profile_port_hint(const struct emu_pipeline *pl, const char *name, char *buf,
			   size_t len);

#endif
