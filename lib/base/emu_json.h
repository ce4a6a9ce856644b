/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef EMU_JSON_H
#define EMU_JSON_H

/**
 * @file
 * Strict JSON readers on top of jansson 2.14. Every error message starts with
 * the JSON path of the offending value. Unknown keys are rejected (a typo must
 * not be silently ignored), integers are read as json_int_t and range-checked,
 * reals reject NaN and infinities, and files are loaded with
 * JSON_REJECT_DUPLICATES.
 */

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "lib/base/emu_err.h"

#define EMU_JSON_PATH_LEN 256

/** Load @p file; on error the message is "FILE:LINE:COL: jansson's text", or for a key given
 * twice in one object "PATH: given twice, at line L column C" (its JSON path). */
int emu_json_load_file(const char *file, json_t **out, struct emu_err *err);

/** Write "path.key" (or "key" when @p path is empty) into @p buf. */
void emu_json_path(char *buf, size_t len, const char *path, const char *key);

/** Write "path[idx]" into @p buf. */
void emu_json_path_idx(char *buf, size_t len, const char *path, size_t idx);

/** The JSON type of @p v as a word for messages ("object", "string", ...). */
const char *emu_json_type_name(const json_t *v);

/** Fail unless @p v is an object; @p path names it. */
int emu_json_expect_object(const json_t *v, const char *path, struct emu_err *err);

/** Fail unless @p v is an array; @p path names it. */
int emu_json_expect_array(const json_t *v, const char *path, struct emu_err *err);

/** Fail on the first key of @p obj that is not in the NULL-terminated list @p allowed. */
int emu_json_check_keys(const json_t *obj, const char *path, const char *const *allowed,
			struct emu_err *err);

/**
 * Read integer @p key of @p obj into @p out, within [@p min, @p max]. A missing key
 * gives @p def, or an error when @p required.
 */
int emu_json_get_int(const json_t *obj, const char *path, const char *key, bool required,
		     int64_t def, int64_t min, int64_t max, int64_t *out, struct emu_err *err);

/** Check an integer value @p v named by @p path against [min, max]. */
int emu_json_int_value(const json_t *v, const char *path, int64_t min, int64_t max, int64_t *out,
		       struct emu_err *err);

/**
 * Read number @p key (integer or real) into @p out. The value must be > @p min when
 * @p min_exclusive, else >= @p min; and <= @p max.
 */
int emu_json_get_num(const json_t *obj, const char *path, const char *key, bool required,
		     double def, double min, bool min_exclusive, double max, double *out,
		     struct emu_err *err);

/** Check a number value @p v named by @p path; bounds as emu_json_get_num(). */
int emu_json_num_value(const json_t *v, const char *path, double min, bool min_exclusive,
		       double max, double *out, struct emu_err *err);

/** Read boolean @p key. */
int emu_json_get_bool(const json_t *obj, const char *path, const char *key, bool required,
		      bool def, bool *out, struct emu_err *err);

/** Read string @p key (non-empty); the pointer stays valid as long as @p obj. */
int emu_json_get_str(const json_t *obj, const char *path, const char *key, bool required,
		     const char *def, const char **out, struct emu_err *err);

/** Parse "aa:bb:cc:dd:ee:ff" into @p mac; returns 0 or -EINVAL. */
int emu_parse_mac(const char *s, uint8_t mac[6]);

#endif
