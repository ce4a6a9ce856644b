/* SPDX-License-Identifier: BSD-3-Clause */
/* Key tables: the readers the loaders use (the schema writer is emu_keys_schema.c). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "lib/base/emu_json.h"
#include "lib/base/emu_keys.h"

const struct emu_key *
emu_key_find(const struct emu_key_table *t, const char *name)
{
	unsigned int i;

	for (i = 0; i < t->n_keys; i++)
		if (strcmp(t->keys[i].name, name) == 0)
			return &t->keys[i];
	return NULL;
}

static bool
emu_keys_extra(const struct emu_key_table *t, const char *name)
{
	unsigned int i;

	for (i = 0; t->extra_names != NULL && t->extra_names[i] != NULL; i++)
		if (strcmp(t->extra_names[i], name) == 0)
			return true;
	return false;
}

int
emu_keys_unknown(const char *path, const struct emu_key_table *t, struct emu_err *err)
{
	char list[256];
	size_t used = 0;
	unsigned int i, n = 0;

	list[0] = '\0';
	for (i = 0; t->extra_names != NULL && t->extra_names[i] != NULL && used < sizeof(list);
	     i++)
		used += snprintf(list + used, sizeof(list) - used, "%s%s", n++ ? ", " : "",
				 t->extra_names[i]);
	for (i = 0; i < t->n_keys && used < sizeof(list); i++)
		if (!t->keys[i].unlisted)
			used += snprintf(list + used, sizeof(list) - used, "%s%s", n++ ? ", " : "",
				 t->keys[i].name);
	return emu_err_set(err, "%s: unknown key (known: %s)", path, list);
}

int
emu_keys_check(const json_t *obj, const char *path, const struct emu_key_table *t,
	       struct emu_err *err)
{
	char p[EMU_JSON_PATH_LEN];
	const char *key;
	json_t *v;

	json_object_foreach((json_t *)(uintptr_t)obj, key, v) {
		if (emu_key_find(t, key) != NULL || emu_keys_extra(t, key))
			continue;
		emu_json_path(p, sizeof(p), path, key);
		return emu_keys_unknown(p, t, err);
	}
	return 0;
}

/* The entry of @p name, or NULL with "PATH.NAME: internal error" in @p err. */
static const struct emu_key *
emu_key_entry(const struct emu_key_table *t, const char *path, const char *name,
	      enum emu_key_type type, struct emu_err *err)
{
	const struct emu_key *k = emu_key_find(t, name);
	char p[EMU_JSON_PATH_LEN];

	if (k != NULL && (k->type == type || (k->type == EMU_KEY_ARR && k->item == type)))
		return k;
	emu_json_path(p, sizeof(p), path, name);
	emu_err_set(err, "%s: internal error: %s in the key table \"%s\"", p,
		    k == NULL ? "not" : "of another type", t->title);
	return NULL;
}

enum emu_key_mode { EMU_KEY_TABLE_MODE, EMU_KEY_DEF_MODE, EMU_KEY_REQ_MODE };

static int
emu_key_read_int(const json_t *obj, const char *path, const struct emu_key_table *t,
		 const char *name, enum emu_key_mode m, int64_t def, int64_t *out,
		 struct emu_err *err)
{
	const struct emu_key *k = emu_key_entry(t, path, name, EMU_KEY_INT, err);

	if (k == NULL)
		return -EINVAL;
	return emu_json_get_int(obj, path, name, m == EMU_KEY_REQ_MODE ||
				(m == EMU_KEY_TABLE_MODE && k->required),
				m == EMU_KEY_DEF_MODE ? def : k->idef, k->imin, k->imax, out, err);
}

int
emu_key_int(const json_t *obj, const char *path, const struct emu_key_table *t,
	    const char *name, int64_t *out, struct emu_err *err)
{
	return emu_key_read_int(obj, path, t, name, EMU_KEY_TABLE_MODE, 0, out, err);
}

int
emu_key_int_def(const json_t *obj, const char *path, const struct emu_key_table *t,
		const char *name, int64_t def, int64_t *out, struct emu_err *err)
{
	return emu_key_read_int(obj, path, t, name, EMU_KEY_DEF_MODE, def, out, err);
}

int
emu_key_int_req(const json_t *obj, const char *path, const struct emu_key_table *t,
		const char *name, int64_t *out, struct emu_err *err)
{
	return emu_key_read_int(obj, path, t, name, EMU_KEY_REQ_MODE, 0, out, err);
}

static int
emu_key_read_num(const json_t *obj, const char *path, const struct emu_key_table *t,
		 const char *name, enum emu_key_mode m, double def, double *out,
		 struct emu_err *err)
{
	const struct emu_key *k = emu_key_entry(t, path, name, EMU_KEY_NUM, err);

	if (k == NULL)
		return -EINVAL;
	return emu_json_get_num(obj, path, name, m == EMU_KEY_REQ_MODE ||
				(m == EMU_KEY_TABLE_MODE && k->required),
				m == EMU_KEY_DEF_MODE ? def : k->def, k->min, k->min_exclusive,
				k->max, out, err);
}

int
emu_key_num(const json_t *obj, const char *path, const struct emu_key_table *t,
	    const char *name, double *out, struct emu_err *err)
{
	return emu_key_read_num(obj, path, t, name, EMU_KEY_TABLE_MODE, 0, out, err);
}

int
emu_key_num_def(const json_t *obj, const char *path, const struct emu_key_table *t,
		const char *name, double def, double *out, struct emu_err *err)
{
	return emu_key_read_num(obj, path, t, name, EMU_KEY_DEF_MODE, def, out, err);
}

int
emu_key_num_req(const json_t *obj, const char *path, const struct emu_key_table *t,
		const char *name, double *out, struct emu_err *err)
{
	return emu_key_read_num(obj, path, t, name, EMU_KEY_REQ_MODE, 0, out, err);
}

static int
emu_key_read_bool(const json_t *obj, const char *path, const struct emu_key_table *t,
		  const char *name, bool req, bool *out, struct emu_err *err)
{
	const struct emu_key *k = emu_key_entry(t, path, name, EMU_KEY_BOOL, err);

	if (k == NULL)
		return -EINVAL;
	return emu_json_get_bool(obj, path, name, req || k->required, k->idef != 0, out, err);
}

int
emu_key_bool(const json_t *obj, const char *path, const struct emu_key_table *t,
	     const char *name, bool *out, struct emu_err *err)
{
	return emu_key_read_bool(obj, path, t, name, false, out, err);
}

int
emu_key_bool_req(const json_t *obj, const char *path, const struct emu_key_table *t,
		 const char *name, bool *out, struct emu_err *err)
{
	return emu_key_read_bool(obj, path, t, name, true, out, err);
}

int
emu_key_enum_check(const char *s, const char *const *vals, const char *path,
		   struct emu_err *err)
{
	char list[256];
	size_t used = 0;
	unsigned int i, n;

	for (n = 0; vals[n] != NULL; n++)
		if (strcmp(vals[n], s) == 0)
			return 0;
	list[0] = '\0';
	for (i = 0; i < n && used < sizeof(list); i++)
		used += snprintf(list + used, sizeof(list) - used, "%s\"%s\"",
				 i == 0 ? "" : i + 1 == n ? " or " : ", ", vals[i]);
	return emu_err_set(err, "%s: must be %s, got \"%s\"", path, list, s);
}

static int
emu_key_read_str(const json_t *obj, const char *path, const struct emu_key_table *t,
		 const char *name, bool req, const char **out, struct emu_err *err)
{
	const struct emu_key *k = emu_key_entry(t, path, name, EMU_KEY_STR, err);
	char p[EMU_JSON_PATH_LEN];
	int rc;

	if (k == NULL)
		return -EINVAL;
	rc = emu_json_get_str(obj, path, name, req || k->required, k->sdef, out, err);
	if (rc != 0 || k->enum_vals == NULL || *out == NULL)
		return rc;
	emu_json_path(p, sizeof(p), path, name);
	return emu_key_enum_check(*out, k->enum_vals, p, err);
}

int
emu_key_str(const json_t *obj, const char *path, const struct emu_key_table *t,
	    const char *name, const char **out, struct emu_err *err)
{
	return emu_key_read_str(obj, path, t, name, false, out, err);
}

int
emu_key_str_req(const json_t *obj, const char *path, const struct emu_key_table *t,
		const char *name, const char **out, struct emu_err *err)
{
	return emu_key_read_str(obj, path, t, name, true, out, err);
}

int
emu_key_int_value(const json_t *v, const char *path, const struct emu_key_table *t,
		  const char *name, int64_t *out, struct emu_err *err)
{
	const struct emu_key *k = emu_key_entry(t, path, name, EMU_KEY_INT, err);

	if (k == NULL)
		return -EINVAL;
	return emu_json_int_value(v, path, k->imin, k->imax, out, err);
}

int
emu_key_num_value(const json_t *v, const char *path, const struct emu_key_table *t,
		  const char *name, double *out, struct emu_err *err)
{
	const struct emu_key *k = emu_key_entry(t, path, name, EMU_KEY_NUM, err);

	if (k == NULL)
		return -EINVAL;
	return emu_json_num_value(v, path, k->min, k->min_exclusive, k->max, out, err);
}
