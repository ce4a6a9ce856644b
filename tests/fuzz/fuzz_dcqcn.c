/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Fuzz rocestat's --dcqcn parameter file parser (lib/analysis ana_dcqcn_load(): a JSON object
 * or `name value` lines in NVIDIA's names). A refusal is a negative errno with a message that
 * starts with "--dcqcn PATH"; an accepted file leaves every parameter in its documented range
 * (finite; times at most 10^9 us and byte counters at most 10^12, so that no conversion from
 * the double read overflows); loading the same file again from the
 * same start gives the same parameters and the same answer.
 */
#include <math.h>

#include "lib/analysis/ana.h"
#include "fuzz_file.h"

#define FUZZ_MAX 1000000000000ULL	/* 10^9 us in ns, 10^12 bytes */

static int
load(const uint8_t *data, size_t size, struct dcqcn_params *p, char *err, size_t err_len)
{
	char path[64];
	int fd = fuzz_file(data, size, path, sizeof(path)), rc;

	if (fd < 0)
		return 1;
	dcqcn_params_nvidia(p, 100000);
	err[0] = '\0';
	rc = ana_dcqcn_load(p, path, err, err_len);
	close(fd);
	if (rc != 0) {
		FUZZ_CHECK(rc < 0);
		FUZZ_CHECK(strncmp(err, "--dcqcn /proc/self/fd/", 22) == 0);
	}
	return rc;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct dcqcn_params p, q;
	char err[512], err2[512];
	int rc;

	memset(&p, 0, sizeof(p));
	memset(&q, 0, sizeof(q));
	rc = load(data, size, &p, err, sizeof(err));
	if (rc == 1)
		return 0;
	FUZZ_CHECK(load(data, size, &q, err2, sizeof(err2)) == rc);
	if (rc != 0) {
		/* the message names the same line and value (the descriptor may differ) */
		FUZZ_CHECK(strchr(err, ':') != NULL && strchr(err2, ':') != NULL);
		FUZZ_CHECK(strcmp(strchr(err, ':'), strchr(err2, ':')) == 0);
		return 0;
	}
	FUZZ_CHECK(memcmp(&p, &q, sizeof(p)) == 0);
	FUZZ_CHECK(isfinite(p.line_rate_mbps) && p.line_rate_mbps >= 0);
	FUZZ_CHECK(isfinite(p.rpg_ai_rate_mbps) && p.rpg_ai_rate_mbps >= 0);
	FUZZ_CHECK(isfinite(p.rpg_hai_rate_mbps) && p.rpg_hai_rate_mbps >= 0);
	FUZZ_CHECK(isfinite(p.rpg_min_rate_mbps) && p.rpg_min_rate_mbps >= 0);
	FUZZ_CHECK(p.g >= 0 && p.g <= 1 && p.initial_alpha >= 0 && p.initial_alpha <= 1);
	FUZZ_CHECK(p.rpg_threshold >= 1 && p.rpg_threshold <= 1000);
	FUZZ_CHECK(p.rpg_min_dec_fac_pct <= 100);
	FUZZ_CHECK(p.rpg_time_reset_ns > 0 && p.alpha_period_ns > 0 &&
		   p.rate_reduce_monitor_period_ns > 0);
	/* times at most 10^9 us, byte counters at most 10^12 (ana_params.c) */
	FUZZ_CHECK(p.rpg_time_reset_ns <= FUZZ_MAX && p.alpha_period_ns <= FUZZ_MAX &&
		   p.rate_reduce_monitor_period_ns <= FUZZ_MAX &&
		   p.min_time_between_cnps_ns <= FUZZ_MAX);
	FUZZ_CHECK(p.rpg_byte_reset <= FUZZ_MAX);
	return 0;
}
