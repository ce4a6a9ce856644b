/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <stdbool.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "lib/base/emu_json.h"

/*
 * The JSON path of the key that ends before byte @p pos of @p text (text that parsed up to
 * there): jansson refuses a duplicate key with its line and column only (it keeps no path). A
 * scanner of JSON's structure (strings, brackets, commas): each open object keeps its current
 * key, each open array its index. Returns false (no path) for what it cannot name exactly: an
 * empty key, a key with an escape or longer than 127 bytes, nesting deeper than 32, text that
 * does not nest; the caller then gives jansson's own message.
 */
static bool
emu_json_path_at(const char *text, size_t pos, char *out, size_t len)
{
	struct {
		bool obj, want_key;
		size_t idx;
		char key[128];
	} st[32];
	int d = -1;
	size_t i, at = 0;

	out[0] = '\0';
	for (i = 0; i < pos; i++) {
		const char c = text[i];

		if (c == '"') {
			size_t j, k = 0;
			bool plain = true; /* no escape, not too long */
			char buf[128];

			for (j = i + 1; j < pos && text[j] != '"'; j++) {
				if (text[j] == '\\') {
					plain = false;
					j++; /* the escaped character: never the string's end */
				} else if (k < sizeof(buf) - 1) {
					buf[k++] = text[j];
				} else {
					plain = false;
				}
			}
			buf[k] = '\0';
			if (d >= 0 && st[d].obj && st[d].want_key) {
				if (!plain || k == 0)
					return false;
				memcpy(st[d].key, buf, k + 1);
				st[d].want_key = false;
			}
			i = j;
		} else if (c == '{' || c == '[') {
			if (++d >= 32)
				return false;
			st[d].obj = c == '{';
			st[d].want_key = st[d].obj;
			st[d].idx = 0;
			st[d].key[0] = '\0';
		} else if (c == '}' || c == ']') {
			if (d < 0)
				return false;
			d--;
		} else if (c == ',' && d >= 0) {
			if (st[d].obj)
				st[d].want_key = true;
			else
				st[d].idx++;
		}
	}
	/* the duplicate is the innermost object's current key */
	if (d < 0 || !st[d].obj || st[d].key[0] == '\0')
		return false;
	for (i = 0; (int)i <= d; i++) {
		int w;

		if (!st[i].obj)
			w = snprintf(out + at, len - at, "[%zu]", st[i].idx);
		else
			w = snprintf(out + at, len - at, "%s%s", at > 0 ? "." : "", st[i].key);
		if (w < 0 || (size_t)w >= len - at)
			return false;
		at += (size_t)w;
	}
	return true;
}

/* The whole of regular file @p f (its size @p size when opened) in a buffer of its own. */
static char *
emu_json_read(FILE *f, off_t size, size_t *len)
{
	size_t cap = size > 0 ? (size_t)size + 1 : 4096, n = 0, got;
	char *buf = malloc(cap), *nb;

	while (buf != NULL && (got = fread(buf + n, 1, cap - n, f)) > 0) {
		n += got;
		if (n == cap) { /* it grew since: read on */
			nb = realloc(buf, cap * 2);
			if (nb == NULL) {
				free(buf);
				return NULL;
			}
			buf = nb;
			cap *= 2;
		}
	}
	if (buf != NULL && ferror(f)) {
		free(buf);
		return NULL;
	}
	*len = n;
	return buf;
}

int
emu_json_load_file(const char *file, json_t **out, struct emu_err *err)
{
	char path[EMU_JSON_PATH_LEN];
	json_error_t jerr;
	struct stat st;
	json_t *root;
	size_t len = 0;
	char *text;
	FILE *f;
	int rc;

	if (file[0] == '\0')
		return emu_err_file(err, -EINVAL, "empty file name");
	if (stat(file, &st) != 0)
		return emu_err_file(err, -errno, "%s: %s", file, strerror(errno));
	if (!S_ISREG(st.st_mode))
		return emu_err_file(err, -EINVAL, "%s: %s, not a JSON file", file,
				    S_ISDIR(st.st_mode) ? "is a directory" : "not a regular file");
	/* read once: a duplicate key's path is found in the very text jansson parsed */
	f = fopen(file, "rb");
	if (f == NULL)
		return emu_err_file(err, -errno, "%s: %s", file, strerror(errno));
	text = emu_json_read(f, st.st_size, &len);
	rc = errno;
	fclose(f);
	if (text == NULL)
		return emu_err_file(err, -rc, "%s: cannot read it: %s", file, strerror(rc));
	root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
	if (root == NULL && json_error_code(&jerr) == json_error_duplicate_key && jerr.position > 0 &&
	    (size_t)jerr.position <= len &&
	    emu_json_path_at(text, (size_t)jerr.position, path, sizeof(path))) {
		free(text);
		return emu_err_set(err, "%s: given twice, at line %d column %d", path, jerr.line,
				   jerr.column);
	}
	free(text);
	if (root == NULL) {
		if (jerr.line < 0)
			return emu_err_file(err, -EINVAL, "%s: %s", file, jerr.text);
		return emu_err_file(err, -EINVAL, "%s:%d:%d: %s", file, jerr.line, jerr.column,
				    jerr.text);
	}
	*out = root;
	return 0;
}

void
emu_json_path(char *buf, size_t len, const char *path, const char *key)
{
	if (path == NULL || path[0] == '\0')
		snprintf(buf, len, "%s", key);
	else
		snprintf(buf, len, "%s.%s", path, key);
}

void
emu_json_path_idx(char *buf, size_t len, const char *path, size_t idx)
{
	snprintf(buf, len, "%s[%zu]", path, idx);
}

const char *
emu_json_type_name(const json_t *v)
{
	switch (json_typeof(v)) {
	case JSON_OBJECT:
		return "an object";
	case JSON_ARRAY:
		return "an array";
	case JSON_STRING:
		return "a string";
	case JSON_INTEGER:
		return "an integer";
	case JSON_REAL:
		return "a real";
	case JSON_TRUE:
	case JSON_FALSE:
		return "a boolean";
	case JSON_NULL:
		return "null";
	}
	return "unknown";
}

static const char *
emu_json_root_name(const char *path)
{
	return (path == NULL || path[0] == '\0') ? "(document)" : path;
}

int
emu_json_expect_object(const json_t *v, const char *path, struct emu_err *err)
{
	if (!json_is_object(v))
		return emu_err_set(err, "%s: must be an object, got %s", emu_json_root_name(path),
				   emu_json_type_name(v));
	return 0;
}

int
emu_json_expect_array(const json_t *v, const char *path, struct emu_err *err)
{
	if (!json_is_array(v))
		return emu_err_set(err, "%s: must be an array, got %s", emu_json_root_name(path),
				   emu_json_type_name(v));
	return 0;
}

int
emu_json_check_keys(const json_t *obj, const char *path, const char *const *allowed,
		    struct emu_err *err)
{
	const char *key;
	json_t *v;
	char p[EMU_JSON_PATH_LEN];
	char list[256];
	size_t used;
	unsigned int i;

	json_object_foreach((json_t *)(uintptr_t)obj, key, v) {
		for (i = 0; allowed[i] != NULL; i++)
			if (strcmp(allowed[i], key) == 0)
				break;
		if (allowed[i] != NULL)
			continue;
		list[0] = '\0';
		used = 0;
		for (i = 0; allowed[i] != NULL && used < sizeof(list); i++)
			used += snprintf(list + used, sizeof(list) - used, "%s%s", i ? ", " : "",
					 allowed[i]);
		emu_json_path(p, sizeof(p), path, key);
		return emu_err_set(err, "%s: unknown key (known: %s)", p, list);
	}
	return 0;
}

int
emu_json_int_value(const json_t *v, const char *path, int64_t min, int64_t max, int64_t *out,
		   struct emu_err *err)
{
	json_int_t x;

	if (!json_is_integer(v))
		return emu_err_set(err, "%s: must be an integer, got %s", path,
				   emu_json_type_name(v));
	x = json_integer_value(v);
	if (x < min || x > max) {
		if (max == INT64_MAX)
			return emu_err_set(err, "%s: must be >= %" PRId64 ", got %" PRId64, path, min,
					   (int64_t)x);
		return emu_err_set(err, "%s: must be in [%" PRId64 ", %" PRId64 "], got %" PRId64,
				   path, min, max, (int64_t)x);
	}
	*out = x;
	return 0;
}

int
emu_json_get_int(const json_t *obj, const char *path, const char *key, bool required,
		 int64_t def, int64_t min, int64_t max, int64_t *out, struct emu_err *err)
{
	char p[EMU_JSON_PATH_LEN];
	json_t *v = json_object_get(obj, key);

	emu_json_path(p, sizeof(p), path, key);
	if (v == NULL) {
		if (required)
			return emu_err_set(err, "%s: required key is missing", p);
		*out = def;
		return 0;
	}
	return emu_json_int_value(v, p, min, max, out, err);
}

int
emu_json_num_value(const json_t *v, const char *path, double min, bool min_exclusive, double max,
		   double *out, struct emu_err *err)
{
	double x;

	if (!json_is_number(v))
		return emu_err_set(err, "%s: must be a number, got %s", path,
				   emu_json_type_name(v));
	x = json_number_value(v);
	if (!isfinite(x))
		return emu_err_set(err, "%s: must be a finite number", path);
	if (min_exclusive ? !(x > min) : !(x >= min))
		return emu_err_set(err, "%s: must be %s %g, got %g", path, min_exclusive ? ">" : ">=",
				   min, x);
	if (x > max)
		return emu_err_set(err, "%s: must be <= %g, got %g", path, max, x);
	*out = x;
	return 0;
}

int
emu_json_get_num(const json_t *obj, const char *path, const char *key, bool required, double def,
		 double min, bool min_exclusive, double max, double *out, struct emu_err *err)
{
	char p[EMU_JSON_PATH_LEN];
	json_t *v = json_object_get(obj, key);

	emu_json_path(p, sizeof(p), path, key);
	if (v == NULL) {
		if (required)
			return emu_err_set(err, "%s: required key is missing", p);
		*out = def;
		return 0;
	}
	return emu_json_num_value(v, p, min, min_exclusive, max, out, err);
}

int
emu_json_get_bool(const json_t *obj, const char *path, const char *key, bool required, bool def,
		  bool *out, struct emu_err *err)
{
	char p[EMU_JSON_PATH_LEN];
	json_t *v = json_object_get(obj, key);

	emu_json_path(p, sizeof(p), path, key);
	if (v == NULL) {
		if (required)
			return emu_err_set(err, "%s: required key is missing", p);
		*out = def;
		return 0;
	}
	if (!json_is_boolean(v))
		return emu_err_set(err, "%s: must be a boolean, got %s", p, emu_json_type_name(v));
	*out = json_is_true(v);
	return 0;
}

int
emu_json_get_str(const json_t *obj, const char *path, const char *key, bool required,
		 const char *def, const char **out, struct emu_err *err)
{
	char p[EMU_JSON_PATH_LEN];
	json_t *v = json_object_get(obj, key);

	emu_json_path(p, sizeof(p), path, key);
	if (v == NULL) {
		if (required)
			return emu_err_set(err, "%s: required key is missing", p);
		*out = def;
		return 0;
	}
	if (!json_is_string(v))
		return emu_err_set(err, "%s: must be a string, got %s", p, emu_json_type_name(v));
	if (json_string_length(v) == 0)
		return emu_err_set(err, "%s: must not be empty", p);
	*out = json_string_value(v);
	return 0;
}

int
emu_parse_mac(const char *s, uint8_t mac[6])
{
	unsigned int b[6];
	char tail;
	int i;

	if (sscanf(s, "%2x:%2x:%2x:%2x:%2x:%2x%c", &b[0], &b[1], &b[2], &b[3], &b[4], &b[5],
		   &tail) != 6)
		return -EINVAL;
	for (i = 0; i < 6; i++)
		mac[i] = (uint8_t)b[i];
	return 0;
}
