/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef TEST_TM_COMMON_H
#define TEST_TM_COMMON_H
/* What test_tm.c and test_tm_same.c share: TMs of n ports at a rate that makes frame times
 * round. */
#include "tests/unit/test_common.h"
#include "lib/tm/emu_tm.h"

#define R_1US 8176000000ULL /* a 998-byte frame (1022 B on the wire) takes exactly 1000 ns */
#define LEN_1US 998

static inline struct emu_tm *
tm_ports(unsigned int n, void (*tweak)(struct emu_tm_cfg *))
{
	struct emu_tm_cfg cfg;
	struct emu_err err;
	struct emu_tm *tm;
	unsigned int i;

	emu_tm_cfg_default(&cfg, n);
	for (i = 0; i < n; i++)
		cfg.ports[i].rate_bps = R_1US;
	if (tweak != NULL)
		tweak(&cfg);
	tm = emu_tm_create(&cfg, &err);
	assert_non_null(tm);
	return tm;
}

#endif
