/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Fuzz rocestat end to end but for its files: the input is a whole capture (pcap or pcapng),
 * read by rocestat's own reader (app/rocestat/rs_read.c: libpcap, the pcapng comment walker,
 * Linux cooked captures) into lib/analysis, then ana_finish() (QP pairing, PFC, collectives,
 * the DCQCN validation) and every output rocestat writes: the JSON document (which must
 * serialise), the text report and each CSV series (written to /dev/null without error).
 * A refused capture is a negative errno. Two sizes are smaller than rocestat's, for speed:
 * the QP pairing table has 256 entries instead of 65536 (4 MB cleared per input) and a time
 * series coarsens beyond 1024 bins instead of 2^18 (2 MB per series and flow once a mutated
 * capture spans seconds); under ASan those page faults were most of the time (20-100 runs/s).
 * Both also make eviction and coarsening happen on small inputs.
 */
#include <jansson.h>

#include "app/rocestat/rocestat.h"
#include "lib/analysis/ana.h"
#include "fuzz_file.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ana_opts o;
	struct ana *a;
	char path[64], err[512];
	unsigned int i;
	json_t *j;
	FILE *out;
	char *s;
	int fd, rc;

	fd = fuzz_file(data, size, path, sizeof(path));
	if (fd < 0)
		return 0;
	ana_opts_default(&o);
	o.qp_pairs_max = 256;
	o.series_max_bins = 1024;
	a = ana_create(&o, err, sizeof(err));
	FUZZ_CHECK(a != NULL);
	rc = rs_read(a, path);
	close(fd);
	FUZZ_CHECK(rc <= 0);
	if (rc == 0) {
		ana_finish(a);
		(void)ana_failures(a);
		j = ana_json(a);
		FUZZ_CHECK(j != NULL);
		s = json_dumps(j, JSON_COMPACT);
		FUZZ_CHECK(s != NULL);
		free(s);
		json_decref(j);
		out = fopen("/dev/null", "w");
		FUZZ_CHECK(out != NULL);
		FUZZ_CHECK(ana_write_text(a, out) == 0);
		for (i = 0; ana_csv_files[i] != NULL; i++)
			FUZZ_CHECK(ana_write_csv_file(a, ana_csv_files[i], out) == 0);
		fclose(out);
	}
	ana_free(a);
	return 0;
}
