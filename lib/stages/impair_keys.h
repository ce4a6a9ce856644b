/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef EMU_IMPAIR_KEYS_H
#define EMU_IMPAIR_KEYS_H

/* The impair stage's key tables (impair_keys.c), apart so that impair.c stays its packet path. */

#include "lib/base/emu_keys.h"

#define IMPAIR_MAX_EVENTS 16

extern const char *const impair_keys[];
extern const char *const impair_event_keys[];
/** The stage object, one event, its loss models, and what a profile may change on an event. */
extern const struct emu_key_table impair_key_table, impair_event_table;
extern const struct emu_key_table impair_bern_table, impair_ge_table, impair_s4_table;
extern const struct emu_key_table impair_rewrite_table, impair_set_table, impair_set_event_table;

#endif
