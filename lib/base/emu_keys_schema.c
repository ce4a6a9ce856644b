/* SPDX-License-Identifier: BSD-3-Clause */
/* Key tables as JSON Schema (draft 2020-12 keywords that draft-07 shares, but for $schema). */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "lib/base/emu_keys.h"

/* Merge the JSON object text @p text into @p s; -EINVAL when it is not one. */
static int
emu_key_schema_merge(json_t *s, const char *text, const char *name, struct emu_err *err)
{
	json_error_t jerr;
	json_t *x = json_loads(text, JSON_REJECT_DUPLICATES, &jerr);
	int rc = 0;

	if (x == NULL || !json_is_object(x) || json_object_update(s, x) != 0)
		rc = emu_err_set(err, "%s: internal error: bad schema text in its key table: %s",
				 name, x == NULL ? jerr.text : "not an object");
	json_decref(x);
	return rc;
}

static json_t *
emu_key_schema_type(const struct emu_key *k, enum emu_key_type type, struct emu_err *err)
{
	json_t *s = json_object(), *e;
	unsigned int i;

	if (s == NULL) {
		emu_err_setrc(err, -ENOMEM, "out of memory");
		return NULL;
	}
	switch (type) {
	case EMU_KEY_INT:
		json_object_set_new(s, "type", json_string("integer"));
		json_object_set_new(s, "minimum", json_integer(k->imin));
		if (k->imax != INT64_MAX)
			json_object_set_new(s, "maximum", json_integer(k->imax));
		if (k->has_def && type == k->type)
			json_object_set_new(s, "default", json_integer(k->idef));
		break;
	case EMU_KEY_NUM:
		json_object_set_new(s, "type", json_string("number"));
		json_object_set_new(s, k->min_exclusive ? "exclusiveMinimum" : "minimum",
				    json_real(k->min));
		json_object_set_new(s, "maximum", json_real(k->max));
		if (k->has_def)
			json_object_set_new(s, "default", json_real(k->def));
		break;
	case EMU_KEY_BOOL:
		json_object_set_new(s, "type", json_string("boolean"));
		if (k->has_def)
			json_object_set_new(s, "default", json_boolean(k->idef != 0));
		break;
	case EMU_KEY_STR:
		json_object_set_new(s, "type", json_string("string"));
		if (k->enum_vals != NULL) {
			e = json_array();
			for (i = 0; k->enum_vals[i] != NULL; i++)
				json_array_append_new(e, json_string(k->enum_vals[i]));
			json_object_set_new(s, "enum", e);
		} else {
			json_object_set_new(s, "minLength", json_integer(1));
		}
		if (k->has_def && k->sdef != NULL)
			json_object_set_new(s, "default", json_string(k->sdef));
		break;
	case EMU_KEY_OBJ:
		json_decref(s);
		return emu_keys_schema(k->sub, err);
	case EMU_KEY_MAP:
		json_object_set_new(s, "type", json_string("object"));
		e = emu_keys_schema(k->sub, err);
		if (e == NULL) {
			json_decref(s);
			return NULL;
		}
		json_object_set_new(s, "additionalProperties", e);
		break;
	case EMU_KEY_ARR:
		json_object_set_new(s, "type", json_string("array"));
		e = k->item == EMU_KEY_OBJ ? emu_keys_schema(k->sub, err) :
					     emu_key_schema_type(k, k->item, err);
		if (e == NULL) {
			json_decref(s);
			return NULL;
		}
		json_object_set_new(s, "items", e);
		break;
	case EMU_KEY_ANY:
		/* the schema text, or with sub: either that or an object of sub */
		if (k->schema != NULL && emu_key_schema_merge(s, k->schema, k->name, err) != 0) {
			json_decref(s);
			return NULL;
		}
		if (k->one_of != NULL) {
			json_t *alts = json_array();
			unsigned int j;

			for (j = 0; alts != NULL && k->one_of[j] != NULL; j++) {
				e = emu_keys_schema(k->one_of[j], err);
				if (e == NULL) {
					json_decref(alts);
					json_decref(s);
					return NULL;
				}
				json_array_append_new(alts, e);
			}
			json_object_set_new(s, "oneOf", alts);
		}
		if (k->sub != NULL) {
			e = emu_keys_schema(k->sub, err);
			if (e == NULL) {
				json_decref(s);
				return NULL;
			}
			s = json_pack("{s:[o,o]}", "anyOf", s, e);
			if (s == NULL)
				emu_err_setrc(err, -ENOMEM, "out of memory");
		}
		break;
	}
	return s;
}

json_t *
emu_key_schema(const struct emu_key *k, struct emu_err *err)
{
	json_t *s = emu_key_schema_type(k, k->type, err);

	if (s == NULL)
		return NULL;
	if (k->type != EMU_KEY_ANY && k->schema != NULL &&
	    emu_key_schema_merge(s, k->schema, k->name, err) != 0) {
		json_decref(s);
		return NULL;
	}
	if (k->desc != NULL && json_object_get(s, "description") == NULL)
		json_object_set_new(s, "description", json_string(k->desc));
	return s;
}

static json_t *
emu_keys_names(const char *const *names)
{
	json_t *a = json_array();
	unsigned int i;

	for (i = 0; names != NULL && names[i] != NULL; i++)
		json_array_append_new(a, json_string(names[i]));
	return a;
}

/* One rule as {"if": ..., "then": ...}. */
static json_t *
emu_keys_rule(const struct emu_key_table *t, const struct emu_key_rule *r)
{
	const struct emu_key *k = emu_key_find(t, r->key);
	json_t *cond = json_object(), *then = json_object(), *no;
	bool def_in = false;
	unsigned int i;

	if (r->vals != NULL) {
		for (i = 0; r->vals[i] != NULL; i++)
			if (k != NULL && k->sdef != NULL && strcmp(k->sdef, r->vals[i]) == 0)
				def_in = true;
		json_object_set_new(cond, "properties",
				    json_pack("{s:{s:o}}", r->key, "enum",
					      emu_keys_names(r->vals)));
	}
	/* "properties" holds when the key is absent: that is right only for its default */
	if (!def_in)
		json_object_set_new(cond, "required", json_pack("[s]", r->key));
	if (r->required != NULL)
		json_object_set_new(then, "required", emu_keys_names(r->required));
	if (r->forbidden != NULL) {
		no = json_object();
		for (i = 0; r->forbidden[i] != NULL; i++)
			json_object_set_new(no, r->forbidden[i], json_false());
		json_object_set_new(then, "properties", no);
	}
	return json_pack("{s:o, s:o}", "if", cond, "then", then);
}

json_t *
emu_keys_schema(const struct emu_key_table *t, struct emu_err *err)
{
	json_t *s = json_object(), *props = json_object(), *req = json_array(), *ks;
	unsigned int i;

	if (s == NULL || props == NULL || req == NULL) {
		emu_err_setrc(err, -ENOMEM, "out of memory");
		goto fail;
	}
	for (i = 0; t->names != NULL && (i < t->n_keys || t->names[i] != NULL); i++)
		if (i >= t->n_keys || t->names[i] == NULL ||
		    strcmp(t->names[i], t->keys[i].name) != 0) {
			emu_err_set(err, "%s: internal error: its names list and its key table "
				    "differ at entry %u", t->title, i);
			goto fail;
		}
	json_object_set_new(s, "type", json_string("object"));
	if (t->title != NULL)
		json_object_set_new(s, "title", json_string(t->title));
	if (t->desc != NULL)
		json_object_set_new(s, "description", json_string(t->desc));
	for (i = 0; i < t->n_keys; i++) {
		ks = emu_key_schema(&t->keys[i], err);
		if (ks == NULL)
			goto fail;
		json_object_set_new(props, t->keys[i].name, ks);
		if (t->keys[i].required)
			json_array_append_new(req, json_string(t->keys[i].name));
	}
	json_object_set_new(s, "properties", props);
	props = NULL;
	if (json_array_size(req) > 0)
		json_object_set(s, "required", req);
	json_decref(req);
	if (t->n_rules > 0) {
		json_t *all = json_array();

		for (i = 0; i < t->n_rules; i++)
			json_array_append_new(all, emu_keys_rule(t, &t->rules[i]));
		json_object_set_new(s, "allOf", all);
	}
	if (t->schema != NULL && emu_key_schema_merge(s, t->schema, t->title, err) != 0)
		goto fail;
	if (t->any_key != NULL) {
		ks = emu_keys_schema(t->any_key, err);
		if (ks == NULL)
			goto fail;
		json_object_set_new(s, "additionalProperties", ks);
	} else {
		json_object_set_new(s, "additionalProperties", json_false());
	}
	return s;
fail:
	json_decref(s);
	json_decref(props);
	json_decref(req);
	return NULL;
}
