/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef EMU_PROGRAM_H
#define EMU_PROGRAM_H

/**
 * @file
 * What the worker runs of a profile: typed changes on a timeline. The control layer
 * (lib/ctl, profiles) compiles a document into a program on the main lcore, validating every
 * change there (emu_switch_compile()); the switch applies the due actions between bursts,
 * with no strings, no JSON and nothing that can fail. The switch knows nothing of profiles.
 */

#include <stdint.h>

#include "lib/base/emu_set.h"

/** Who owns the key an action changes. */
enum emu_target { EMU_TARGET_TM, EMU_TARGET_STAGE, EMU_TARGET_INCAST };

struct emu_action {
	uint64_t at_ns;   /**< relative to the program's time zero */
	uint8_t target;   /**< enum emu_target */
	uint16_t index;   /**< TM port, stage or incast source index */
	struct emu_set set;
};

struct emu_program {
	const struct emu_action *actions; /**< sorted by at_ns (stable) */
	unsigned int n;
	unsigned int next;                /**< first action not yet applied (the worker's) */
	void *owner;                      /**< the control layer's object (its profile) */
};

/** Time (relative) of the next action, or UINT64_MAX. */
static inline uint64_t
emu_program_next_ns(const struct emu_program *p)
{
	return p->next < p->n ? p->actions[p->next].at_ns : UINT64_MAX;
}

#endif
