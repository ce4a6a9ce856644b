/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef EMU_PROFILE_H
#define EMU_PROFILE_H

/**
 * @file
 * Profiles: a scenario over time. A profile is a list of phases, each with a
 * start time relative to the start of the run; a phase changes TM parameters
 * (per port), stage parameters (by stage name) and incast sources (by name).
 * A phases[] entry may also be a repeat block ({"at_s", "repeat": K, "every_s": T,
 * "phases"}), expanded at load into K copies T apart (profiles/README.md).
 * Every value is validated against the switch when the profile is loaded, so
 * applying it on the worker cannot fail. The runner applies due phases between bursts.
 */

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "emu_err.h"

struct emu_switch;

enum emu_profile_target { EMU_PROFILE_TM, EMU_PROFILE_STAGE, EMU_PROFILE_INCAST };

struct emu_profile_action {
	uint64_t at_ns;
	enum emu_profile_target target;
	int index; /**< TM port index, stage index or incast source index */
	const char *key;
	json_t *val; /**< borrowed from the document */
	char path[160];
};

struct emu_profile {
	json_t *root;
	bool has_seed;
	uint64_t seed;
	unsigned int n_actions;
	struct emu_profile_action *actions; /**< sorted by at_ns (stable) */
	unsigned int next;                  /**< first action not yet applied */
};

/** Load @p file and validate every change against @p sw. */
int emu_profile_load(const char *file, struct emu_switch *sw, struct emu_profile **out,
		     struct emu_err *err);

/** Same from a parsed document (takes a reference). */
int emu_profile_from_json(json_t *root, struct emu_switch *sw, struct emu_profile **out,
			  struct emu_err *err);

/** Free; accepts NULL. */
void emu_profile_free(struct emu_profile *prof);

/**
 * Apply every action due at @p rel_ns (time since the profile's t0), which is @p now_ns on
 * the switch's clock; returns how many.
 */
unsigned int emu_profile_apply_due(struct emu_profile *prof, struct emu_switch *sw,
				   uint64_t rel_ns, uint64_t now_ns);

/** Time (relative) of the next action, or UINT64_MAX. */
uint64_t emu_profile_next_ns(const struct emu_profile *prof);

#endif
