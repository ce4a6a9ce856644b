/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef EMU_KEYS_H
#define EMU_KEYS_H

/**
 * @file
 * Key tables: one description of the keys a JSON object may have (type, range, default,
 * allowed strings, description, nested objects), read by the loaders through the
 * emu_key_* readers below and turned into a JSON Schema by emu_keys_schema(), so that what
 * `rocemu check` refuses and what an editor flags come from the same place.
 *
 * The readers give exactly the messages of emu_json.h (the path first); a key the table
 * does not list is a programming error, reported as "PATH: internal error: ...".
 * Rules across keys (xon_kb < xoff_kb, names that must exist) stay in the loaders.
 */

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "lib/base/emu_err.h"

enum emu_key_type {
	EMU_KEY_INT,  /**< JSON integer in [imin, imax] */
	EMU_KEY_NUM,  /**< number in [min, max], or (min, max] with min_exclusive; finite */
	EMU_KEY_BOOL,
	EMU_KEY_STR,  /**< non-empty string; one of enum_vals when given */
	EMU_KEY_OBJ,  /**< object described by sub */
	EMU_KEY_MAP,  /**< object of free names (ports, stages), each value described by sub */
	EMU_KEY_ARR,  /**< array of `item` values (objects of sub when item is EMU_KEY_OBJ) */
	EMU_KEY_ANY,  /**< polymorphic: the JSON schema text in `schema`, or that or sub */
};

struct emu_key_table;

struct emu_key {
	const char *name;
	enum emu_key_type type;
	bool required;     /**< always required (a key required only with another is not) */
	bool has_def;      /**< a fixed default, given in the schema */
	int64_t imin, imax, idef;
	double min, max, def;
	bool min_exclusive;
	const char *sdef;  /**< default of a string (a bool's is idef) */
	const char *const *enum_vals; /**< NULL-terminated allowed strings */
	const struct emu_key_table *sub;
	/** EMU_KEY_ANY: NULL-terminated alternatives, written as "oneOf" */
	const struct emu_key_table *const *one_of;
	enum emu_key_type item; /**< EMU_KEY_ARR: the type of the items */
	/** EMU_KEY_ANY: the whole schema; otherwise extra keywords merged in ("minItems"...) */
	const char *schema;
	const char *desc;
	/** accepted and in the schema, but not named in "unknown key (known: ...)" ("$schema") */
	bool unlisted;
};

/**
 * A rule across keys, for the schema only (the loader states it in its own words): when
 * @c key has one of @c vals (a string key; its default counts when it is absent) or, with
 * @c vals NULL, when @c key is present, the keys @c required must be there and the keys
 * @c forbidden must not. Written as "if"/"then".
 */
struct emu_key_rule {
	const char *key;
	const char *const *vals;
	const char *const *required;
	const char *const *forbidden;
};

/** A numeric macro as text, for schema text: "{\"maxItems\": " EMU_KEYS_STR(N) "}". */
#define EMU_KEYS_STR(x) EMU_KEYS_STR_(x)
#define EMU_KEYS_STR_(x) #x

#define EMU_KEY_LIST(...) ((const char *const[]){ __VA_ARGS__, NULL })

struct emu_key_table {
	const char *title;
	const char *desc;
	const struct emu_key *keys;
	unsigned int n_keys;
	/**
	 * Optional: the same names, NULL-terminated, for code that takes a plain list (a
	 * stage's ops->keys); emu_keys_table_check() holds the two together.
	 */
	const char *const *names;
	/** Keys the loader itself allows besides these (a stage's "type" and "name") */
	const char *const *extra_names;
	/** Optional: keys not listed are free names (events) whose values follow this table */
	const struct emu_key_table *any_key;
	/** Optional: rules across keys (schema only), and schema text merged into the object's */
	const struct emu_key_rule *rules;
	unsigned int n_rules;
	const char *schema;
};

#define EMU_KEY_TABLE(t, d, k) \
	{ .title = (t), .desc = (d), .keys = (k), .n_keys = sizeof(k) / sizeof((k)[0]) }

/* Entries. _REQ: required; _DYN: optional with a default computed by the loader (in desc). */
#define EMU_K_INT(n, d, lo, hi, ds) { .name = (n), .type = EMU_KEY_INT, .has_def = true, \
	.idef = (d), .imin = (lo), .imax = (hi), .desc = (ds) }
#define EMU_K_INT_REQ(n, lo, hi, ds) { .name = (n), .type = EMU_KEY_INT, .required = true, \
	.imin = (lo), .imax = (hi), .desc = (ds) }
#define EMU_K_INT_DYN(n, lo, hi, ds) { .name = (n), .type = EMU_KEY_INT, \
	.imin = (lo), .imax = (hi), .desc = (ds) }
#define EMU_K_NUM(n, d, lo, lox, hi, ds) { .name = (n), .type = EMU_KEY_NUM, .has_def = true, \
	.def = (d), .min = (lo), .min_exclusive = (lox), .max = (hi), .desc = (ds) }
#define EMU_K_NUM_REQ(n, lo, lox, hi, ds) { .name = (n), .type = EMU_KEY_NUM, .required = true, \
	.min = (lo), .min_exclusive = (lox), .max = (hi), .desc = (ds) }
#define EMU_K_NUM_DYN(n, lo, lox, hi, ds) { .name = (n), .type = EMU_KEY_NUM, \
	.min = (lo), .min_exclusive = (lox), .max = (hi), .desc = (ds) }
#define EMU_K_BOOL(n, d, ds) { .name = (n), .type = EMU_KEY_BOOL, .has_def = true, \
	.idef = (d), .desc = (ds) }
#define EMU_K_STR(n, d, ds) { .name = (n), .type = EMU_KEY_STR, .has_def = (d) != NULL, \
	.sdef = (d), .desc = (ds) }
#define EMU_K_STR_REQ(n, ds) { .name = (n), .type = EMU_KEY_STR, .required = true, .desc = (ds) }
#define EMU_K_ENUM(n, d, vals, ds) { .name = (n), .type = EMU_KEY_STR, .has_def = (d) != NULL, \
	.sdef = (d), .enum_vals = (vals), .desc = (ds) }
#define EMU_K_OBJ(n, t, ds) { .name = (n), .type = EMU_KEY_OBJ, .sub = (t), .desc = (ds) }
#define EMU_K_MAP(n, t, ds) { .name = (n), .type = EMU_KEY_MAP, .sub = (t), .desc = (ds) }
#define EMU_K_ARR(n, it, t, extra, ds) { .name = (n), .type = EMU_KEY_ARR, .item = (it), \
	.sub = (t), .schema = (extra), .desc = (ds) }
#define EMU_K_ARR_REQ(n, it, t, extra, ds) { .name = (n), .type = EMU_KEY_ARR, .item = (it), \
	.sub = (t), .schema = (extra), .required = true, .desc = (ds) }
#define EMU_K_ARR_INT(n, lo, hi, extra, ds) { .name = (n), .type = EMU_KEY_ARR, \
	.item = EMU_KEY_INT, .imin = (lo), .imax = (hi), .schema = (extra), .desc = (ds) }
#define EMU_K_ANY(n, s, ds) { .name = (n), .type = EMU_KEY_ANY, .schema = (s), .desc = (ds) }
#define EMU_K_ANY_OR(n, s, t, ds) { .name = (n), .type = EMU_KEY_ANY, .schema = (s), .sub = (t), \
	.desc = (ds) }

/** "$schema", accepted at the top of pipelines and profiles (editors read it; we do not). */
#define EMU_K_SCHEMA_URI { .name = "$schema", .type = EMU_KEY_STR, .unlisted = true, \
	.desc = "the JSON Schema of this file (rocemu schema), for editors; not read" }

/** The entry of @p name in @p t, or NULL. */
const struct emu_key *emu_key_find(const struct emu_key_table *t, const char *name);

/** Fail on the first key of @p obj that @p t (and its extra_names) does not list. */
int emu_keys_check(const json_t *obj, const char *path, const struct emu_key_table *t,
		   struct emu_err *err);

/** "PATH: unknown key (known: a, b, c)" with the names of @p t; returns -EINVAL. */
int emu_keys_unknown(const char *path, const struct emu_key_table *t, struct emu_err *err);

/*
 * Readers of key @p name of @p obj (@p path names obj) as its entry in @p t says: its range,
 * its allowed strings, and when missing its default or "required key is missing".
 * _def: optional here with the default @p def (a default the loader computes);
 * _req: required here (a key required only in some mode).
 */
int emu_key_int(const json_t *obj, const char *path, const struct emu_key_table *t,
		const char *name, int64_t *out, struct emu_err *err);
int emu_key_int_def(const json_t *obj, const char *path, const struct emu_key_table *t,
		    const char *name, int64_t def, int64_t *out, struct emu_err *err);
int emu_key_int_req(const json_t *obj, const char *path, const struct emu_key_table *t,
		    const char *name, int64_t *out, struct emu_err *err);
int emu_key_num(const json_t *obj, const char *path, const struct emu_key_table *t,
		const char *name, double *out, struct emu_err *err);
int emu_key_num_def(const json_t *obj, const char *path, const struct emu_key_table *t,
		    const char *name, double def, double *out, struct emu_err *err);
int emu_key_num_req(const json_t *obj, const char *path, const struct emu_key_table *t,
		    const char *name, double *out, struct emu_err *err);
int emu_key_bool(const json_t *obj, const char *path, const struct emu_key_table *t,
		 const char *name, bool *out, struct emu_err *err);
int emu_key_bool_req(const json_t *obj, const char *path, const struct emu_key_table *t,
		     const char *name, bool *out, struct emu_err *err);
/** Strings: the pointer lives as long as @p obj; NULL when missing without a default. */
int emu_key_str(const json_t *obj, const char *path, const struct emu_key_table *t,
		const char *name, const char **out, struct emu_err *err);
int emu_key_str_req(const json_t *obj, const char *path, const struct emu_key_table *t,
		    const char *name, const char **out, struct emu_err *err);

/** Value readers (a profile change, an array item): @p path names the value itself. */
int emu_key_int_value(const json_t *v, const char *path, const struct emu_key_table *t,
		      const char *name, int64_t *out, struct emu_err *err);
int emu_key_num_value(const json_t *v, const char *path, const struct emu_key_table *t,
		      const char *name, double *out, struct emu_err *err);

/** Check that @p s is one of @p vals: "PATH: must be \"a\", \"b\" or \"c\", got \"s\"". */
int emu_key_enum_check(const char *s, const char *const *vals, const char *path,
		       struct emu_err *err);

/**
 * The JSON Schema (draft 2020-12 keywords) of an object described by @p t: properties,
 * required, additionalProperties false. New reference, NULL on a table fault (then @p err
 * says which: a names list out of step with the keys, an unparsable schema text).
 */
json_t *emu_keys_schema(const struct emu_key_table *t, struct emu_err *err);

/** The schema of the value of one entry. New reference or NULL (see emu_keys_schema()). */
json_t *emu_key_schema(const struct emu_key *k, struct emu_err *err);

/** The URI of the JSON Schema dialect emu_keys_schema() writes. */
#define EMU_KEYS_SCHEMA_DIALECT "https://json-schema.org/draft/2020-12/schema"

#endif
