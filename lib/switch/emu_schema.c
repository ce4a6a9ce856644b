/* SPDX-License-Identifier: BSD-3-Clause */
/* The pipeline's JSON Schema from the loaders' key tables. */
#include <errno.h>

#include "lib/switch/emu_schema.h"
#include "lib/switch/emu_switch.h"

/* One stage type: its key table plus "type" (the discriminator) and "name". */
static json_t *
emu_schema_stage(const struct emu_stage_ops *ops, struct emu_err *err)
{
	json_t *s, *props, *req;

	if (ops->key_table == NULL) {
		emu_err_set(err, "stage type \"%s\": internal error: no key table", ops->type);
		return NULL;
	}
	s = emu_keys_schema(ops->key_table, err);
	if (s == NULL)
		return NULL;
	props = json_object_get(s, "properties");
	json_object_set_new(props, "type", json_pack("{s:s, s:s}", "const", ops->type,
						     "description", "the stage type"));
	json_object_set_new(props, "name", json_pack("{s:s, s:i, s:i, s:s}", "type", "string",
						     "minLength", 1, "maxLength", 31,
						     "description", "the stage's name (unique), as "
						     "profiles name it; default: its type"));
	req = json_object_get(s, "required");
	if (req == NULL) {
		req = json_array();
		json_object_set_new(s, "required", req);
	}
	json_array_insert_new(req, 0, json_string("type"));
	return s;
}

static json_t *
emu_schema_stage_list(const char *desc, struct emu_err *err)
{
	json_t *alts = json_array(), *st;
	unsigned int i;

	for (i = 0; alts != NULL && emu_stage_registry[i] != NULL; i++) {
		st = emu_schema_stage(emu_stage_registry[i], err);
		if (st == NULL) {
			json_decref(alts);
			return NULL;
		}
		json_array_append_new(alts, st);
	}
	if (alts == NULL) {
		emu_err_setrc(err, -ENOMEM, "out of memory");
		return NULL;
	}
	return json_pack("{s:s, s:s, s:{s:s, s:[s], s:o}}", "type", "array", "description", desc,
			 "items", "type", "object", "required", "type", "oneOf", alts);
}

json_t *
emu_pipeline_schema(struct emu_err *err)
{
	json_t *s = emu_keys_schema(&emu_pipeline_table, err), *props, *l;
	static const char *const lists[][2] = {
		{ "ingress", "stages run on the way in, in order (parse first, forward before the "
			     "stages that need the egress port)" },
		{ "egress", "stages run on the way out, after the TM, in order" },
	};
	unsigned int i;

	if (s == NULL)
		return NULL;
	props = json_object_get(s, "properties");
	for (i = 0; i < 2; i++) {
		l = emu_schema_stage_list(lists[i][1], err);
		if (l == NULL) {
			json_decref(s);
			return NULL;
		}
		json_object_set_new(props, lists[i][0], l);
	}
	json_object_set_new(s, "$schema", json_string(EMU_KEYS_SCHEMA_DIALECT));
	return s;
}

json_t *
emu_stage_set_schema(struct emu_err *err)
{
	json_t *alts = json_array(), *st;
	unsigned int i;

	for (i = 0; alts != NULL && emu_stage_registry[i] != NULL; i++) {
		if (emu_stage_registry[i]->set_table == NULL)
			continue;
		st = emu_keys_schema(emu_stage_registry[i]->set_table, err);
		if (st == NULL) {
			json_decref(alts);
			return NULL;
		}
		json_array_append_new(alts, st);
	}
	if (alts == NULL) {
		emu_err_setrc(err, -ENOMEM, "out of memory");
		return NULL;
	}
	return json_pack("{s:o, s:s}", "anyOf", alts, "description",
			 "changes to one stage, by its name: capture {\"enabled\": bool}; impair "
			 "EVENT: {\"enabled\": bool, \"p\": number}");
}
