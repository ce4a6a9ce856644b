/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef EMU_STAGES_H
#define EMU_STAGES_H

/* Every stage's ops table; registry.c lists them (explicitly: constructors in a static
 * library get dropped at link time). */

#include "lib/stage/emu_stage.h"

extern const struct emu_stage_ops emu_stage_parse;
extern const struct emu_stage_ops emu_stage_forward;
extern const struct emu_stage_ops emu_stage_capture;
extern const struct emu_stage_ops emu_stage_mirror;
extern const struct emu_stage_ops emu_stage_cnp;
extern const struct emu_stage_ops emu_stage_impair;
extern const struct emu_stage_ops emu_stage_delay;
extern const struct emu_stage_ops emu_stage_reorder;

#endif
