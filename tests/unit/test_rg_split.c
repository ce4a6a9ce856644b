/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rocegen's NCCL_IB_SPLIT_DATA_ON_QPS (rg_qp_share): which QP of a connection carries which
 * bytes of a message. Split: nq parts of DIVUP(DIVUP(size, nq), 128) x 128 bytes, in QP order,
 * the last ones shorter or empty (net_ib's chunking); round robin: the whole message on QP
 * seq mod nq. Either way the parts are disjoint and cover the message exactly.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "rg_sched.h"

struct share {
	uint64_t off, len;
};

static void
shares(uint64_t len, unsigned int nq, bool split, uint64_t seq, struct share *out)
{
	unsigned int q;

	for (q = 0; q < nq; q++)
		rg_qp_share(len, nq, split, seq, q, &out[q].off, &out[q].len);
}

/* The non-empty parts, in QP order, tile [0, len). */
static void
check_cover(uint64_t len, unsigned int nq, bool split, uint64_t seq)
{
	struct share s[16];
	uint64_t at = 0;
	unsigned int q;

	shares(len, nq, split, seq, s);
	for (q = 0; q < nq; q++) {
		if (s[q].len == 0)
			continue;
		assert_int_equal(s[q].off, at);
		at += s[q].len;
	}
	assert_int_equal(at, len);
}

static void
test_split(void **state)
{
	struct share s[16];
	static const uint64_t lens[] = { 4, 128, 256, 1000, 4096, 65536, 1048576, 3 * 1048576 + 4,
					 16777216 - 64 };
	unsigned int i, nq;

	(void)state;
	/* 1 MB over 4 QPs: four quarters */
	shares(1 << 20, 4, true, 0, s);
	for (i = 0; i < 4; i++) {
		assert_int_equal(s[i].off, i * 262144);
		assert_int_equal(s[i].len, 262144);
	}
	/* 1000 B over 4: DIVUP(250, 128) x 128 = 256 B parts, the last 232 B */
	shares(1000, 4, true, 0, s);
	assert_int_equal(s[0].off, 0);
	assert_int_equal(s[0].len, 256);
	assert_int_equal(s[1].off, 256);
	assert_int_equal(s[2].off, 512);
	assert_int_equal(s[3].off, 768);
	assert_int_equal(s[3].len, 232);
	/* 256 B over 4: 128 B parts, QPs 2 and 3 carry nothing */
	shares(256, 4, true, 0, s);
	assert_int_equal(s[0].len, 128);
	assert_int_equal(s[1].off, 128);
	assert_int_equal(s[1].len, 128);
	assert_int_equal(s[2].len, 0);
	assert_int_equal(s[3].len, 0);
	/* 4 B over 3: all on QP 0 */
	shares(4, 3, true, 7, s);
	assert_int_equal(s[0].len, 4);
	assert_int_equal(s[1].len + s[2].len, 0);
	/* every part but the last is a multiple of 128 bytes */
	shares(3 * 1048576 + 4, 16, true, 0, s);
	for (i = 0; i < 15; i++)
		assert_int_equal(s[i].len % 128, 0);
	for (i = 0; i < sizeof(lens) / sizeof(lens[0]); i++)
		for (nq = 1; nq <= 16; nq++)
			check_cover(lens[i], nq, true, 0);
}

static void
test_round_robin(void **state)
{
	struct share s[16];
	unsigned int q, seq, nq;

	(void)state;
	/* message seq goes whole on QP seq mod nq */
	for (seq = 0; seq < 9; seq++) {
		shares(65536, 4, false, seq, s);
		for (q = 0; q < 4; q++) {
			assert_int_equal(s[q].off, 0);
			assert_int_equal(s[q].len, q == seq % 4 ? 65536 : 0);
		}
	}
	for (nq = 1; nq <= 16; nq++)
		for (seq = 0; seq < 20; seq++)
			check_cover(12345 * 4, nq, false, seq);
	/* one QP: split or not, it carries everything */
	rg_qp_share(1000, 1, true, 3, 0, &s[0].off, &s[0].len);
	assert_int_equal(s[0].len, 1000);
	rg_qp_share(1000, 1, false, 3, 0, &s[0].off, &s[0].len);
	assert_int_equal(s[0].len, 1000);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_split),
		cmocka_unit_test(test_round_robin),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
