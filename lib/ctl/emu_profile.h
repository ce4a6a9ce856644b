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
 * applying it on the worker cannot fail. Each change is compiled at load into a typed action
 * (lib/switch/emu_program.h) that the switch applies between bursts, with no strings or JSON.
 *
 * A phase with "duration_s" D sets its keys at at_s and puts each back at at_s + D. The value
 * put back is computed when the profile loads, not read on the worker: the loader replays
 * every change in time order from the values the pipeline gave the keys (a copy the switch
 * took when it was built, emu_switch_setting(): never the running switch's state) and records, for every key of a
 * timed phase, the value in force just before it, as a "restore" action at at_s + D. So the
 * worker allocates nothing and a restore is applied like any other change. A key that a timed
 * phase holds must not be set by any other change before the phase ends (refused at load
 * with the later change's path): there is never more than one value to go back to. At one
 * instant, restores come before the changes of the phases that start then.
 */

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <jansson.h>

#include "lib/base/emu_err.h"
#include "lib/base/emu_keys.h"
#include "lib/base/emu_set.h"
#include "lib/switch/emu_program.h"

struct emu_switch;

struct emu_profile_action {
	uint64_t at_ns;
	enum emu_target target;
	int index; /**< TM port index, stage index or incast source index */
	const char *key;
	json_t *val; /**< borrowed from the document (or the profile's restore values) */
	uint64_t end_ns;  /**< phase with duration_s: time its keys go back; else UINT64_MAX */
	uint32_t seq;     /**< order of creation: keeps the sort stable */
	bool restore;     /**< puts the key back at the end of a timed phase (at_ns = its end) */
	char path[160];   /**< the value's JSON path (a restore: the timed phase's key) */
	struct emu_set set; /**< the value compiled for the worker */
};

struct emu_profile {
	json_t *root;
	json_t *restore_vals; /**< owns the values of the restore actions */
	bool has_seed;
	uint64_t seed;
	unsigned int n_actions;
	struct emu_profile_action *actions; /**< sorted by at_ns, restores first, then creation */
	struct emu_program prog; /**< what the switch runs: the actions, typed */
};

/** Load @p file and validate every change against @p sw. */
int emu_profile_load(const char *file, struct emu_switch *sw, struct emu_profile **out,
		     struct emu_err *err);

/** Same from a parsed document (takes a reference). */
int emu_profile_from_json(json_t *root, struct emu_switch *sw, struct emu_profile **out,
			  struct emu_err *err);

/** Free; accepts NULL. */
void emu_profile_free(struct emu_profile *prof);

/** Time (relative) of the profile's next change not yet applied, or UINT64_MAX. */
static inline uint64_t
emu_profile_next_ns(const struct emu_profile *prof)
{
	return emu_program_next_ns(&prof->prog);
}

/** What the switch runs (emu_switch_set_program(), emu_switch_offer_program()). */
static inline struct emu_program *
emu_profile_prog(struct emu_profile *prof)
{
	return prof != NULL ? &prof->prog : NULL;
}

/**
 * Write to @p f a WARNING line for each time the profile's link changes leave a leaf of
 * @p sw's fabric with no path to another leaf, or with some of its paths ending at a switch
 * that has no link up towards that leaf (its flows hashed there are dropped: the fabric has
 * no routing protocol to withdraw the route), with the times it holds (emu_profile_paths.c).
 * Returns how many it found (at most a few are written, the rest summed up in one line).
 */
unsigned int emu_profile_path_warnings(const struct emu_profile *prof,
				       const struct emu_switch *sw, FILE *f);

/** The profile's key tables (emu_profile_schema.c): top level, a phase, a repeat block. */
extern const struct emu_key_table emu_profile_table, emu_phase_table, emu_repeat_table;

/** The JSON Schema of a profile file; new reference, or NULL with @p err filled. */
json_t *emu_profile_schema(struct emu_err *err);

#endif
