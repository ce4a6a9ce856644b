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
 *
 * A phase with "duration_s" D sets its keys at at_s and puts each back at at_s + D. The value
 * put back is computed when the profile loads, not read on the worker: the loader replays
 * every change in time order from the switch's values at load time (read through the get
 * functions of the TM, the stages and the incast sources) and records, for every key of a
 * timed phase, the value in force just before it, as a "restore" action at at_s + D. So the
 * worker allocates nothing and a restore is applied like any other change. A key that a timed
 * phase holds must not be set by any other change before the phase ends (refused at load
 * with the later change's path): there is never more than one value to go back to. At one
 * instant, restores come before the changes of the phases that start then.
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
	json_t *val; /**< borrowed from the document (or the profile's restore values) */
	uint64_t end_ns;  /**< phase with duration_s: time its keys go back; else UINT64_MAX */
	uint32_t seq;     /**< order of creation: keeps the sort stable */
	bool restore;     /**< puts the key back at the end of a timed phase (at_ns = its end) */
	char path[160];   /**< the value's JSON path (a restore: the timed phase's key) */
};

struct emu_profile {
	json_t *root;
	json_t *restore_vals; /**< owns the values of the restore actions */
	bool has_seed;
	uint64_t seed;
	unsigned int n_actions;
	struct emu_profile_action *actions; /**< sorted by at_ns, restores first, then creation */
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
