/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The profile's key tables (read by emu_profile.c through them) and its JSON Schema: the top
 * level, a phase, a repeat block, and what a phase may change (the TM's, the stages' and the
 * incast sources' tables).
 */
#include <errno.h>
#include <stdint.h>

#include "lib/ctl/emu_profile.h"
#include "lib/switch/emu_schema.h"
#include "lib/tm/emu_tm_keys.h"

#define EMU_PROFILE_MAX_S 1e6
#define DIM(a) (sizeof(a) / sizeof((a)[0]))

static const struct emu_key emu_phase_entries[] = {
	{ .name = "name", .type = EMU_KEY_STR, .schema = "{\"minLength\": 0}",
	  .desc = "free text, for people" },
	EMU_K_NUM_REQ("at_s", 0, false, EMU_PROFILE_MAX_S,
		      "start (s from the run's start, or from the repeat block's copy); phases "
		      "in time order"),
	EMU_K_NUM_DYN("duration_s", 0, true, EMU_PROFILE_MAX_S,
		      "optional: after this long (s, at least 1e-9) the keys the phase set are put "
		      "back to what they were"),
	EMU_K_MAP("tm", &emu_tm_set_table, "changes to TM ports, by port name"),
	EMU_K_ANY("stages", "{\"type\": \"object\"}", "changes to stages, by stage name"),
	EMU_K_MAP("incast", &emu_incast_set_table, "changes to incast sources, by name"),
};
const struct emu_key_table emu_phase_table = EMU_KEY_TABLE("phase",
	"changes applied at at_s (for duration_s when given)", emu_phase_entries);

static const struct emu_key emu_repeat_entries[] = {
	{ .name = "name", .type = EMU_KEY_STR, .schema = "{\"minLength\": 0}",
	  .desc = "free text, for people" },
	EMU_K_NUM_REQ("at_s", 0, false, EMU_PROFILE_MAX_S, "start of the first copy (s)"),
	EMU_K_INT_REQ("repeat", 1, 1000000, "number of copies"),
	EMU_K_NUM_REQ("every_s", 0, true, EMU_PROFILE_MAX_S,
		      "copy i starts at at_s + i x every_s; each phase's at_s < every_s"),
	EMU_K_ANY("phases", "{\"type\": \"array\", \"minItems\": 1}",
		  "the block's phases (at_s relative to the copy; blocks do not nest); required"),
};
const struct emu_key_table emu_repeat_table = EMU_KEY_TABLE("repeat block",
	"phases repeated: repeat copies, every every_s", emu_repeat_entries);

static const struct emu_key emu_profile_entries[] = {
	EMU_K_SCHEMA_URI,
	{ .name = "description", .type = EMU_KEY_STR, .schema = "{\"minLength\": 0}",
	  .desc = "free text" },
	EMU_K_INT_DYN("seed", 0, INT64_MAX, "the run's RNG seed (--seed wins over it)"),
	{ .name = "phases", .type = EMU_KEY_ANY, .required = true,
	  .schema = "{\"type\": \"array\"}",
	  .desc = "phases and repeat blocks, in time order" },
};
const struct emu_key_table emu_profile_table = EMU_KEY_TABLE("rocemu profile",
	"a scenario: timed changes to a pipeline's TM ports, stages and incast sources",
	emu_profile_entries);

json_t *
emu_profile_schema(struct emu_err *err)
{
	json_t *s = emu_keys_schema(&emu_profile_table, err);
	json_t *phase = emu_keys_schema(&emu_phase_table, err);
	json_t *block = emu_keys_schema(&emu_repeat_table, err);
	json_t *stages = emu_stage_set_schema(err);
	json_t *p;

	if (s == NULL || phase == NULL || block == NULL || stages == NULL)
		goto fail;
	p = json_object_get(json_object_get(phase, "properties"), "stages");
	json_object_set_new(p, "additionalProperties", stages);
	stages = NULL;
	p = json_object_get(json_object_get(block, "properties"), "phases");
	json_object_set(p, "items", phase);
	p = json_object_get(json_object_get(s, "properties"), "phases");
	json_object_set_new(p, "items", json_pack("{s:[o,o]}", "oneOf", phase, block));
	json_object_set_new(s, "$schema", json_string(EMU_KEYS_SCHEMA_DIALECT));
	return s;
fail:
	json_decref(s);
	json_decref(phase);
	json_decref(block);
	json_decref(stages);
	return NULL;
}
