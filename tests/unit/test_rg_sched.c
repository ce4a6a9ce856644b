/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rocegen's collective schedules run in memory: every collective over 1..16 ranks, executed as
 * rocegen executes it (a step's transfers copy the sources' data as it is at the step's start
 * into the destinations' landing areas, then each destination applies them), leaves exactly
 * what the collective must (rg_sched_verify, itself checked against a corrupted float); landing
 * areas never overlap within an iteration; every rank's bytes on the wire are what nccl-tests'
 * bus-bandwidth factor assumes; NCCL's double binary tree has each rank interior in at most one
 * of the two trees (power-of-two rank counts, as NCCL states); the hierarchical all-reduce puts
 * only its rails' bytes across nodes.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "rg_sched.h"

static const unsigned int rank_counts[] = { 1, 2, 3, 4, 5, 6, 8, 16 };

/* Run s over R ranks in memory; returns the number of wrong floats over all ranks. */
static uint64_t
run_in_memory(const struct rg_sched *s, bool corrupt)
{
	unsigned int R = s->n_ranks, g, st;
	uint64_t n = s->size / 4, i, bad = 0, first;
	float *data[RG_MAX_RANKS], *land[RG_MAX_RANKS];
	uint8_t *used[RG_MAX_RANKS];
	uint32_t k;

	for (g = 0; g < R; g++) {
		data[g] = malloc(s->size);
		land[g] = calloc(1, s->land_len[g] + 4);
		used[g] = calloc(1, s->land_len[g] + 1);
		assert_non_null(data[g]);
		assert_non_null(land[g]);
		assert_non_null(used[g]);
		for (i = 0; i < n; i++)
			data[g][i] = rg_init_value(s->coll, R, s->root, s->size, g, i);
	}
	for (st = 0; st < s->n_steps; st++) {
		for (k = s->step_first[st]; k < s->step_first[st + 1]; k++) {
			const struct rg_xfer *x = &s->x[k];

			assert_int_equal(x->step, st);
			assert_true(x->src != x->dst);
			assert_true(x->src_off + x->len <= s->size);
			assert_true(x->land_off + x->len <= s->land_len[x->dst]);
			for (i = 0; i < x->len; i++) { /* landing bytes written once per iteration */
				assert_int_equal(used[x->dst][x->land_off + i], 0);
				used[x->dst][x->land_off + i] = 1;
			}
			memcpy((uint8_t *)land[x->dst] + x->land_off,
			       (uint8_t *)data[x->src] + x->src_off, x->len);
		}
		for (k = s->step_first[st]; k < s->step_first[st + 1]; k++) {
			const struct rg_xfer *x = &s->x[k];
			float *d = data[x->dst] + x->dst_off / 4;
			const float *l = land[x->dst] + x->land_off / 4;

			assert_true(x->kind == RG_LAND || x->dst_off + x->len <= s->size);
			if (x->kind == RG_COPY)
				memcpy(d, l, x->len);
			else if (x->kind == RG_REDUCE)
				for (i = 0; i < x->len / 4; i++)
					d[i] += l[i];
		}
	}
	if (corrupt)
		data[R - 1][n - 1] += 0.5f; /* in every rank's checked part */
	for (g = 0; g < R; g++) {
		bad += rg_sched_verify(s, g, data[g], land[g], &first);
		free(data[g]);
		free(land[g]);
		free(used[g]);
	}
	return bad;
}

static void
check_coll(enum rg_coll c, enum rg_algo a)
{
	unsigned int t;

	for (t = 0; t < sizeof(rank_counts) / sizeof(rank_counts[0]); t++) {
		unsigned int R = rank_counts[t], root;
		struct rg_sched s;
		uint64_t sent[RG_MAX_RANKS] = { 0 }, g;
		double want;
		uint32_t k;

		if (c == RG_COLL_P2P && R % 2 != 0) {
			assert_int_equal(rg_sched_build(&s, c, a, R, 0, 1 << 20), -EINVAL);
			continue;
		}
		root = (c == RG_COLL_BROADCAST || c == RG_COLL_INCAST) ? R / 2 : 0;
		/* a size that is not a multiple of the ranks: rounded down like nccl-tests */
		assert_int_equal(rg_sched_build(&s, c, a, R, root, (1 << 16) + 100), 0);
		assert_int_equal(s.size % (64 * R), 0);
		assert_true(s.size <= (1 << 16) + 100 && s.size > (1 << 16) + 100 - 64 * R);
		assert_int_equal(run_in_memory(&s, false), 0);
		if (R > 1 && c != RG_COLL_P2P && c != RG_COLL_INCAST)
			assert_int_not_equal(run_in_memory(&s, true), 0);
		for (k = 0; k < s.n; k++)
			sent[s.x[k].src] += s.x[k].len;
		/* bytes each rank puts on the wire, against the busbw factor */
		for (g = 0; g < R && R > 1; g++) {
			switch (c) {
			case RG_COLL_ALLREDUCE:
				if (a == RG_ALGO_RING) {
					want = rg_busbw_factor(c, R) * (double)s.size;
					assert_true((double)sent[g] == want);
				}
				break;
			case RG_COLL_ALLGATHER:
			case RG_COLL_REDUCESCATTER:
			case RG_COLL_ALLTOALL:
				want = rg_busbw_factor(c, R) * (double)s.size;
				assert_true((double)sent[g] == want);
				break;
			case RG_COLL_P2P:
				assert_int_equal(sent[g], s.size);
				break;
			case RG_COLL_INCAST:
				assert_int_equal(sent[g], g == root ? 0 : s.size);
				break;
			default:
				break;
			}
		}
		if (c == RG_COLL_ALLREDUCE && a == RG_ALGO_RING)
			assert_int_equal(s.n_steps, 2 * (R - 1));
		if ((c == RG_COLL_ALLGATHER || c == RG_COLL_REDUCESCATTER))
			assert_int_equal(s.n_steps, R - 1);
		rg_sched_free(&s);
	}
}

static void test_p2p(void **st) { (void)st; check_coll(RG_COLL_P2P, RG_ALGO_RING); }
static void test_ring_allreduce(void **st) { (void)st; check_coll(RG_COLL_ALLREDUCE, RG_ALGO_RING); }
static void test_tree_allreduce(void **st) { (void)st; check_coll(RG_COLL_ALLREDUCE, RG_ALGO_TREE); }
static void test_allgather(void **st) { (void)st; check_coll(RG_COLL_ALLGATHER, RG_ALGO_RING); }
static void test_reducescatter(void **st) { (void)st; check_coll(RG_COLL_REDUCESCATTER, RG_ALGO_RING); }
static void test_broadcast(void **st) { (void)st; check_coll(RG_COLL_BROADCAST, RG_ALGO_RING); }
static void test_alltoall(void **st) { (void)st; check_coll(RG_COLL_ALLTOALL, RG_ALGO_RING); }
static void test_incast(void **st) { (void)st; check_coll(RG_COLL_INCAST, RG_ALGO_RING); }

/* NCCL's double binary tree: both trees span all ranks; for power-of-two counts no rank is
 * interior (has children) in both; the tree all-reduce takes 2 x depth steps, depth log2(R). */
static void
test_double_tree_shape(void **state)
{
	unsigned int R, r, t;

	(void)state;
	for (R = 2; R <= 64; R *= 2) {
		unsigned int interior[2][RG_MAX_RANKS] = { { 0 } }, roots[2] = { 0, 0 };
		struct rg_sched s;

		for (t = 0; t < 2; t++)
			for (r = 0; r < R; r++) {
				int up, d0, d1;

				rg_dtree(R, r, t, &up, &d0, &d1);
				if (up < 0)
					roots[t]++;
				else
					interior[t][up] = 1;
			}
		assert_int_equal(roots[0], 1);
		assert_int_equal(roots[1], 1);
		for (r = 0; r < R && R > 2; r++)
			assert_false(interior[0][r] && interior[1][r]);
		assert_int_equal(rg_sched_build(&s, RG_COLL_ALLREDUCE, RG_ALGO_TREE, R, 0, 64 * R), 0);
		for (t = 0; (1u << t) < R; t++)
			;
		assert_true(s.n_steps <= 2 * t && s.n_steps >= 2);
		rg_sched_free(&s);
	}
}

static void
test_names_and_errors(void **state)
{
	struct rg_sched s;
	int c;

	(void)state;
	for (c = 0; c < RG_COLL_MAX; c++)
		assert_int_equal(rg_coll_by_name(rg_coll_name((enum rg_coll)c)), c);
	assert_int_equal(rg_coll_by_name("allreduc"), -1);
	assert_int_equal(rg_sched_build(&s, RG_COLL_ALLREDUCE, RG_ALGO_RING, 0, 0, 1024), -EINVAL);
	assert_int_equal(rg_sched_build(&s, RG_COLL_ALLREDUCE, RG_ALGO_RING, 65, 0, 1 << 20),
			 -EINVAL);
	assert_int_equal(rg_sched_build(&s, RG_COLL_BROADCAST, RG_ALGO_RING, 4, 4, 1 << 20),
			 -EINVAL);
	/* smaller than one unit of 64 bytes per rank */
	assert_int_equal(rg_sched_build(&s, RG_COLL_ALLREDUCE, RG_ALGO_RING, 8, 0, 511), -EINVAL);
}

/* The hierarchical all-reduce: right result for every split of 1..16 ranks into nodes, and only
 * the rails' transfers cross nodes: 2 S (P - 1) / P bytes out of each node of G ranks (P
 * nodes), against the flat ring's 2 S (R - 1) / R out of each node (rank G - 1 to the next
 * node's rank 0); the wire messages are S / R bytes each. */
static void
test_hier_allreduce(void **state)
{
	static const unsigned int splits[][2] = { { 1, 1 }, { 2, 1 }, { 1, 4 }, { 2, 4 },
						  { 4, 2 }, { 3, 2 }, { 2, 8 }, { 4, 4 } };
	unsigned int t;

	(void)state;
	for (t = 0; t < sizeof(splits) / sizeof(splits[0]); t++) {
		unsigned int P = splits[t][0], G = splits[t][1], R = P * G, a;
		uint64_t S = (uint64_t)64 * R * 16;

		for (a = 0; a < 2; a++) {
			struct rg_sched s;
			uint64_t out[RG_MAX_RANKS] = { 0 };
			uint32_t k;

			if (a == 0)
				assert_int_equal(rg_sched_build_hier(&s, R, G, S), 0);
			else
				assert_int_equal(rg_sched_build(&s, RG_COLL_ALLREDUCE, RG_ALGO_RING,
								R, 0, S), 0);
			assert_int_equal(run_in_memory(&s, false), 0);
			assert_true(R == 1 || run_in_memory(&s, true) > 0);
			for (k = 0; k < s.n; k++)
				if (s.x[k].src / G != s.x[k].dst / G) {
					out[s.x[k].src / G] += s.x[k].len;
					if (a == 0)
						assert_int_equal(s.x[k].len, S / R);
				}
			for (k = 0; k < P; k++)
				assert_int_equal(out[k], P == 1 ? 0 :
						 a == 0 ? 2 * S * (P - 1) / P :
						 2 * S * (R - 1) / R);
			rg_sched_free(&s);
		}
	}
	{
		struct rg_sched s;

		assert_int_equal(rg_sched_build_hier(&s, 6, 4, 1 << 16), -EINVAL);
		assert_int_equal(rg_sched_build_hier(&s, 4, 0, 1 << 16), -EINVAL);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_p2p),
		cmocka_unit_test(test_ring_allreduce),
		cmocka_unit_test(test_tree_allreduce),
		cmocka_unit_test(test_hier_allreduce),
		cmocka_unit_test(test_allgather),
		cmocka_unit_test(test_reducescatter),
		cmocka_unit_test(test_broadcast),
		cmocka_unit_test(test_alltoall),
		cmocka_unit_test(test_incast),
		cmocka_unit_test(test_double_tree_shape),
		cmocka_unit_test(test_names_and_errors),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
