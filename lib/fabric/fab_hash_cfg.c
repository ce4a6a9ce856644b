/* SPDX-License-Identifier: BSD-3-Clause */
/* ECMP hash configuration: the JSON hash object (control path only). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "lib/base/emu_json.h"

#include "lib/fabric/fab_hash.h"

/* "a, b, c" of a name list, for messages. */
static void
fab_names(char *buf, size_t len, const char *(*name)(unsigned int), unsigned int n)
{
	size_t used = 0;
	unsigned int i;

	buf[0] = '\0';
	for (i = 0; i < n && used < len; i++)
		used += (size_t)snprintf(buf + used, len - used, "%s%s", i ? ", " : "", name(i));
}

static const char *
fab_fn_name_u(unsigned int i)
{
	return fab_hash_fn_name((enum fab_hash_fn)i);
}

static int
fab_parse_fields(const json_t *arr, const char *path, uint32_t *out, struct emu_err *err)
{
	char p[EMU_JSON_PATH_LEN], known[128];
	const json_t *v;
	uint32_t fields = 0;
	size_t idx;

	if (emu_json_expect_array(arr, path, err) != 0)
		return -EINVAL;
	if (json_array_size(arr) == 0)
		return emu_err_set(err, "%s: must name at least one field", path);
	json_array_foreach(arr, idx, v) {
		unsigned int i;

		emu_json_path_idx(p, sizeof(p), path, idx);
		if (!json_is_string(v))
			return emu_err_set(err, "%s: must be a string, got %s", p,
				emu_json_type_name(v));
		for (i = 0; i < FAB_HASH_N_FIELDS; i++)
			if (strcmp(json_string_value(v), fab_hash_field_name(i)) == 0)
				break;
		if (i == FAB_HASH_N_FIELDS) {
			fab_names(known, sizeof(known), fab_hash_field_name, FAB_HASH_N_FIELDS);
			return emu_err_set(err, "%s: unknown field \"%s\" (known: %s)", p,
				json_string_value(v), known);
		}
		if (fields & (1u << i))
			return emu_err_set(err, "%s: field \"%s\" given twice", p,
				json_string_value(v));
		fields |= 1u << i;
	}
	*out = fields;
	return 0;
}

int
fab_hash_parse(const json_t *obj, const char *path, struct fab_hash_cfg *out,
	struct emu_err *err)
{
	static const char *const keys[] = { "function", "fields", "seed", "bit_offset",
					    "resilient_buckets", NULL };
	char p[EMU_JSON_PATH_LEN], known[128];
	const char *name = NULL;
	uint32_t fields = FAB_HASH_F_5TUPLE;
	int64_t seed, off, buckets;
	const json_t *v;
	int fn = FAB_HASH_CRC16_CCITT;

	if (emu_json_expect_object(obj, path, err) != 0 ||
			emu_json_check_keys(obj, path, keys, err) != 0 ||
			emu_json_get_str(obj, path, "function", false, NULL, &name, err) != 0)
		return -EINVAL;
	if (name != NULL && (fn = fab_hash_fn_from_name(name)) < 0) {
		emu_json_path(p, sizeof(p), path, "function");
		fab_names(known, sizeof(known), fab_fn_name_u, FAB_HASH_FN_MAX);
		return emu_err_set(err, "%s: unknown hash function \"%s\" (known: %s)", p, name,
			known);
	}
	v = json_object_get(obj, "fields");
	if (v != NULL) {
		emu_json_path(p, sizeof(p), path, "fields");
		if (fab_parse_fields(v, p, &fields, err) != 0)
			return -EINVAL;
	}
	if (emu_json_get_int(obj, path, "seed", false, 0, 0, UINT32_MAX, &seed, err) != 0 ||
			emu_json_get_int(obj, path, "bit_offset", false, 0, 0,
				fab_hash_width((enum fab_hash_fn)fn) - 1, &off, err) != 0 ||
			emu_json_get_int(obj, path, "resilient_buckets", false, 0, 1,
				FAB_HASH_MAX_BUCKETS, &buckets, err) != 0)
		return -EINVAL;
	if (fab_hash_cfg_init(out, (enum fab_hash_fn)fn, fields, (uint32_t)seed) != 0)
		return emu_err_set(err, "%s: bad hash configuration", path);
	out->bit_offset = (uint8_t)off;
	out->res_buckets = (uint16_t)buckets;
	return 0;
}
