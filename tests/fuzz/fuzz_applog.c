/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Fuzz rocestat's --app-log parser (lib/analysis ana_app_log(): nccl-tests or rocegen result
 * rows, the largest size kept). A refusal is a negative errno with a message that starts with
 * "--app-log PATH"; an accepted log then goes through the report as rocestat writes it
 * (ana_finish, the JSON document, the text report), which must not fail on the values it took.
 */
#include <jansson.h>

#include "lib/analysis/ana.h"
#include "fuzz_file.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ana_opts o;
	struct ana *a;
	char path[64], err[512];
	json_t *j;
	char *s;
	FILE *out;
	int fd, rc;

	fd = fuzz_file(data, size, path, sizeof(path));
	if (fd < 0)
		return 0;
	ana_opts_default(&o);
	snprintf(o.collective, sizeof(o.collective), "allreduce");
	o.ranks = 8;
	o.qp_pairs_max = 256;	/* as fuzz_rocestat: not 4 MB cleared per input */
	a = ana_create(&o, err, sizeof(err));
	FUZZ_CHECK(a != NULL);
	err[0] = '\0';
	rc = ana_app_log(a, path, err, sizeof(err));
	close(fd);
	if (rc != 0) {
		FUZZ_CHECK(rc < 0);
		FUZZ_CHECK(strncmp(err, "--app-log /proc/self/fd/", 24) == 0);
		ana_free(a);
		return 0;
	}
	ana_finish(a);
	j = ana_json(a);
	FUZZ_CHECK(j != NULL);
	s = json_dumps(j, JSON_COMPACT);
	FUZZ_CHECK(s != NULL);
	free(s);
	json_decref(j);
	out = fopen("/dev/null", "w");
	FUZZ_CHECK(out != NULL);
	FUZZ_CHECK(ana_write_text(a, out) == 0);
	fclose(out);
	ana_free(a);
	return 0;
}
