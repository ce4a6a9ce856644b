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
 * Have the parse stage instance @p priv fill only what @p need says is read
 * (roce_parse_partial_min(), _qp() or _dp() instead of the full parse) in its default
 * configuration (nothing dropped, no ICRC check). The switch calls it with what every stage,
 * fabric and incast source reads; the fields it does fill and every counter are the same as
 * with the full parse. Until it is called, the full parse.
 */
void emu_stage_parse_need(void *priv, enum emu_parse_need need);

#endif
