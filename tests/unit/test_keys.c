/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lib/base/emu_keys: the readers give emu_json's messages with ranges and defaults from the
 * table (and the _def/_req variants override them), enums and unknown keys are worded as the
 * loaders always worded them, and the schema writer turns a table into the JSON Schema
 * keywords an editor needs (and refuses a names list out of step with the table); emu_err
 * marks a message it had to cut.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "lib/base/emu_keys.h"

static const char *const colours[] = { "red", "green", "blue", NULL };
static const char *const names[] = { "n", "x", "colour", "on", "ratio", NULL };
static const struct emu_key entries[] = {
	EMU_K_INT_REQ("n", 1, 10, "a count"),
	EMU_K_INT("x", 5, 0, 100, "with a default"),
	EMU_K_ENUM("colour", "red", colours, "a colour"),
	EMU_K_BOOL("on", true, "a switch"),
	EMU_K_NUM("ratio", 0.5, 0.0, true, 1.0, "in (0, 1]"),
	EMU_K_SCHEMA_URI,
};
static const struct emu_key_rule rules[] = {
	{ "colour", EMU_KEY_LIST("blue"), EMU_KEY_LIST("x"), EMU_KEY_LIST("on") },
};
static const struct emu_key_table table = {
	.title = "t", .keys = entries, .n_keys = 6, .extra_names = (const char *const[]){ "type",
	NULL }, .rules = rules, .n_rules = 1,
};

static json_t *
doc(const char *text)
{
	json_t *j = json_loads(text, 0, NULL);

	assert_non_null(j);
	return j;
}

static void
test_readers(void **state)
{
	struct emu_err err;
	const char *s;
	json_t *o = doc("{\"n\": 3}");
	int64_t v;
	double d;
	bool b;

	(void)state;
	assert_int_equal(emu_key_int(o, "p", &table, "n", &v, &err), 0);
	assert_int_equal(v, 3);
	assert_int_equal(emu_key_int(o, "p", &table, "x", &v, &err), 0);
	assert_int_equal(v, 5);
	assert_int_equal(emu_key_int_def(o, "p", &table, "x", 7, &v, &err), 0);
	assert_int_equal(v, 7);
	assert_int_not_equal(emu_key_int_req(o, "p", &table, "x", &v, &err), 0);
	assert_string_equal(err.msg, "p.x: required key is missing");
	assert_int_equal(emu_key_str(o, "p", &table, "colour", &s, &err), 0);
	assert_string_equal(s, "red");
	assert_int_equal(emu_key_bool(o, "p", &table, "on", &b, &err), 0);
	assert_true(b);
	assert_int_equal(emu_key_num(o, "p", &table, "ratio", &d, &err), 0);
	assert_true(d == 0.5);
	json_decref(o);

	o = doc("{\"n\": 11, \"colour\": \"pink\", \"ratio\": 0}");
	assert_int_not_equal(emu_key_int(o, "p", &table, "n", &v, &err), 0);
	assert_string_equal(err.msg, "p.n: must be in [1, 10], got 11");
	assert_int_not_equal(emu_key_str(o, "p", &table, "colour", &s, &err), 0);
	assert_string_equal(err.msg,
			    "p.colour: must be \"red\", \"green\" or \"blue\", got \"pink\"");
	assert_int_not_equal(emu_key_num(o, "p", &table, "ratio", &d, &err), 0);
	assert_string_equal(err.msg, "p.ratio: must be > 0, got 0");
	/* a key the table does not have is the caller's bug, said so */
	assert_int_not_equal(emu_key_int(o, "p", &table, "nope", &v, &err), 0);
	assert_non_null(strstr(err.msg, "internal error"));
	json_decref(o);

	o = doc("{\"$schema\": \"s.json\", \"type\": 1, \"colur\": 1}");
	assert_int_not_equal(emu_keys_check(o, "p", &table, &err), 0);
	/* "$schema" is accepted but not named among the known keys */
	assert_string_equal(err.msg, "p.colur: unknown key (known: type, n, x, colour, on, ratio)");
	json_decref(o);
	assert_int_equal(emu_key_enum_check("a", (const char *const[]){ "a", "b", NULL }, "q",
					    &err), 0);
	assert_int_not_equal(emu_key_enum_check("c", (const char *const[]){ "a", "b", NULL },
						"q", &err), 0);
	assert_string_equal(err.msg, "q: must be \"a\" or \"b\", got \"c\"");
}

static void
test_schema(void **state)
{
	struct emu_err err;
	json_t *s = emu_keys_schema(&table, &err), *p, *want;
	struct emu_key_table bad = table;

	(void)state;
	assert_non_null(s);
	p = json_object_get(s, "properties");
	want = doc("{\"type\": \"integer\", \"minimum\": 1, \"maximum\": 10, \"description\": "
		   "\"a count\"}");
	assert_true(json_equal(json_object_get(p, "n"), want));
	json_decref(want);
	want = doc("{\"type\": \"string\", \"enum\": [\"red\", \"green\", \"blue\"], \"default\": "
		   "\"red\", \"description\": \"a colour\"}");
	assert_true(json_equal(json_object_get(p, "colour"), want));
	json_decref(want);
	assert_true(json_is_real(json_object_get(json_object_get(p, "ratio"),
						 "exclusiveMinimum")));
	assert_true(json_is_true(json_object_get(json_object_get(p, "on"), "default")));
	want = doc("[\"n\"]");
	assert_true(json_equal(json_object_get(s, "required"), want));
	json_decref(want);
	assert_true(json_is_false(json_object_get(s, "additionalProperties")));
	/* the rule: colour "blue" (not the default: so "required") needs x and refuses on */
	want = doc("[{\"if\": {\"properties\": {\"colour\": {\"enum\": [\"blue\"]}}, \"required\": "
		   "[\"colour\"]}, \"then\": {\"required\": [\"x\"], \"properties\": {\"on\": "
		   "false}}}]");
	assert_true(json_equal(json_object_get(s, "allOf"), want));
	json_decref(want);
	json_decref(s);

	bad.names = names; /* lacks "$schema" */
	assert_null(emu_keys_schema(&bad, &err));
	assert_non_null(strstr(err.msg, "names list"));
}

/* lib/base/emu_err: a message too long for the buffer (two long file names) ends in "...",
 * also after a prefix; one that fits is kept whole. */
static void
test_err_cut(void **state)
{
	char name[3000];
	struct emu_err err;
	size_t n;

	(void)state;
	memset(name, 'a', sizeof(name) - 1);
	name[sizeof(name) - 1] = '\0';
	assert_int_equal(emu_err_set(&err, "--out %s: is the same file as --in %s", name, name),
			 -EINVAL);
	n = strlen(err.msg);
	assert_int_equal(n, EMU_ERR_LEN - 1);
	assert_string_equal(err.msg + n - 3, "...");
	assert_int_equal(emu_err_setrc(&err, -ENOENT, "x.json: %s", "short"), -ENOENT);
	emu_err_prefix(&err, name);
	assert_int_equal(strlen(err.msg), strlen(name) + strlen(": x.json: short"));
	assert_string_equal(err.msg + strlen(name), ": x.json: short");
	emu_err_prefix(&err, name);
	assert_int_equal(strlen(err.msg), EMU_ERR_LEN - 1);
	assert_string_equal(err.msg + EMU_ERR_LEN - 4, "...");
	assert_memory_equal(err.msg, name, 100);
	/* a suffix is kept whole: the message before it is cut, with "..." */
	emu_err_set(&err, "tm.ports[0]: %s", name);
	emu_err_suffix(&err, " (in x.json)");
	n = strlen(err.msg);
	assert_int_equal(n, strlen("tm.ports[0]: ") + strlen(name) + strlen(" (in x.json)"));
	emu_err_prefix(&err, name); /* now nearly full */
	emu_err_suffix(&err, " (in x.json)");
	n = strlen(err.msg);
	assert_int_equal(n, EMU_ERR_LEN - 1);
	assert_string_equal(err.msg + n - strlen("... (in x.json)"), "... (in x.json)");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_readers),
		cmocka_unit_test(test_schema),
		cmocka_unit_test(test_err_cut),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
