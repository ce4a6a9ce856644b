/* SPDX-License-Identifier: BSD-3-Clause */
/* Distribution tables from files: read on the control path (stage init), never on a worker. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/base/emu_cdf.h"

int
emu_cdf_load(const char *file, unsigned int max, double **ns, double **prob, unsigned int *n,
	     const char *path, struct emu_err *err)
{
	double d, p, last_d = 0, last_p = 0;
	unsigned int line = 0;
	char buf[256];
	FILE *f;
	int rc = 0;

	f = fopen(file, "r");
	if (f == NULL)
		return emu_err_set(err, "%s: cannot open \"%s\": %s", path, file, strerror(errno));
	*ns = calloc(max, sizeof(double));
	*prob = calloc(max, sizeof(double));
	if (*ns == NULL || *prob == NULL) {
		fclose(f);
		return emu_err_setrc(err, -ENOMEM, "%s: out of memory", path);
	}
	while (fgets(buf, sizeof(buf), f) != NULL) {
		char *s = buf, extra;

		line++;
		while (*s == ' ' || *s == '\t')
			s++;
		if (*s == '#' || *s == '\n' || *s == '\0')
			continue;
		if (sscanf(s, "%lf %lf %c", &d, &p, &extra) != 2 || !isfinite(d) || !isfinite(p)) {
			rc = emu_err_set(err, "%s: %s line %u: want \"delay_us probability\"", path,
					 file, line);
			break;
		}
		if (d < 0 || p < 0 || p > 1 || d < last_d || p < last_p) {
			rc = emu_err_set(err, "%s: %s line %u: delays >= 0 and probabilities in "
					 "[0, 1] must not decrease", path, file, line);
			break;
		}
		if (*n == max) {
			rc = emu_err_set(err, "%s: %s: more than %u points", path, file, max);
			break;
		}
		(*ns)[*n] = d * 1000.0;
		(*prob)[*n] = p;
		(*n)++;
		last_d = d;
		last_p = p;
	}
	fclose(f);
	if (rc == 0 && (*n < 2 || last_p != 1.0))
		rc = emu_err_set(err, "%s: %s: need at least 2 points and a last probability of 1",
				 path, file);
	return rc;
}

