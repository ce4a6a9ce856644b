/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rocemu schema pipeline|profile|node [--out FILE]: the JSON Schema (draft 2020-12) of pipeline,
 * profile or node (rocegen --node) files, written from the key tables the loaders read through.
 * No EAL.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app.h"
#include "lib/node/node_load.h"
#include "lib/switch/emu_schema.h"

static void
schema_usage(FILE *f)
{
	fprintf(f, "usage: rocemu schema pipeline|profile|node [--out FILE]\n"
		   "  writes the JSON Schema (draft 2020-12) of pipeline, profile or node files to\n"
		   "  stdout or FILE; point an editor at it with a top-level \"$schema\" key\n");
}

int
app_schema_main(int argc, char **argv)
{
	const char *what = NULL, *out_file = NULL;
	struct emu_out out;
	struct emu_err err;
	json_t *s;
	char *text;
	int i, rc;

	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
			schema_usage(stdout);
			return 0;
		} else if (strcmp(argv[i], "--out") == 0 && i + 1 < argc) {
			out_file = argv[++i];
		} else if (what == NULL && (strcmp(argv[i], "pipeline") == 0 ||
					    strcmp(argv[i], "profile") == 0 ||
					    strcmp(argv[i], "node") == 0)) {
			what = argv[i];
		} else {
			fprintf(stderr, "rocemu schema: unexpected argument \"%s\"\n", argv[i]);
			schema_usage(stderr);
			return 2;
		}
	}
	if (what == NULL) {
		schema_usage(stderr);
		return 2;
	}
	s = strcmp(what, "pipeline") == 0 ? emu_pipeline_schema(&err) :
	    strcmp(what, "node") == 0	  ? node_schema(&err) :
					    emu_profile_schema(&err);
	if (s == NULL) {
		fprintf(stderr, "rocemu schema: %s\n", err.msg);
		return 1;
	}
	text = json_dumps(s, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(17));
	json_decref(s);
	if (text == NULL) {
		fprintf(stderr, "rocemu schema: out of memory\n");
		return 1;
	}
	if (out_file == NULL) {
		rc = fputs(text, stdout) < 0 || fputc('\n', stdout) < 0 || fflush(stdout) != 0;
		free(text);
		if (rc != 0)
			fprintf(stderr, "rocemu schema: cannot write to stdout\n");
		return rc != 0;
	}
	rc = emu_out_open(&out, out_file, &err);
	if (rc == 0) {
		rc = emu_out_write(&out, text, strlen(text));
		if (rc == 0)
			rc = emu_out_write(&out, "\n", 1);
		rc = emu_out_commit(&out, &err);
	}
	free(text);
	if (rc != 0) {
		fprintf(stderr, "rocemu schema: %s\n", err.msg);
		return 1;
	}
	return 0;
}
