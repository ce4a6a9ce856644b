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

/**
 * Have the parse stage instance @p priv use roce_parse_partial_dp() (only the fields the
 * switch's datapath reads) in its default configuration (nothing dropped, no ICRC check).
 * The switch calls it when no stage, fabric or incast source after it reads more; the
 * result fields it does fill and every counter are the same as with the full parse.
 */
void emu_stage_parse_dp_fields(void *priv, bool on);

#endif
