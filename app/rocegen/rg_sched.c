/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Collective schedules (see rg_sched.h). The algorithms are NCCL's: ring all-reduce as a
 * reduce-scatter then an all-gather (2(R - 1) steps), the double binary tree of ncclGetDtree
 * (each half of the buffer reduced up one tree and broadcast down it, the two trees at once),
 * ring all-gather and reduce-scatter (R - 1 steps), a broadcast pipelined in 8 chunks along the
 * ring from the root, and all-to-all as one step of R(R - 1) writes. NCCL pipelines tree and
 * ring steps in small slices; here a step moves whole chunks, which keeps the wire pattern
 * (who sends what to whom, how much) and makes every step a clear unit to check.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "rg_sched.h"

#define RG_BCAST_CHUNKS 8

static const char *const rg_coll_names[RG_COLL_MAX] = {
	[RG_COLL_P2P] = "p2p",
	[RG_COLL_ALLREDUCE] = "allreduce",
	[RG_COLL_ALLGATHER] = "allgather",
	[RG_COLL_REDUCESCATTER] = "reducescatter",
	[RG_COLL_BROADCAST] = "broadcast",
	[RG_COLL_ALLTOALL] = "alltoall",
	[RG_COLL_INCAST] = "incast",
};

const char *
rg_coll_name(enum rg_coll c)
{
	return c < RG_COLL_MAX ? rg_coll_names[c] : "?";
}

const char *
rg_algo_name(enum rg_algo a)
{
	return a == RG_ALGO_TREE ? "tree" : a == RG_ALGO_HIER ? "hier" : "ring";
}

int
rg_coll_by_name(const char *name)
{
	int c;

	for (c = 0; c < RG_COLL_MAX; c++)
		if (strcmp(name, rg_coll_names[c]) == 0)
			return c;
	return -1;
}

uint64_t
rg_sched_round(uint64_t size, unsigned int n_ranks)
{
	uint64_t unit = 64ULL * n_ranks;

	return n_ranks == 0 ? 0 : size - size % unit;
}

bool
rg_coll_reduces(enum rg_coll coll)
{
	return coll == RG_COLL_ALLREDUCE || coll == RG_COLL_REDUCESCATTER;
}

double
rg_busbw_factor(enum rg_coll coll, unsigned int n_ranks)
{
	double r = n_ranks;

	switch (coll) {
	case RG_COLL_ALLREDUCE:
		return 2.0 * (r - 1) / r;
	case RG_COLL_ALLGATHER:
	case RG_COLL_REDUCESCATTER:
	case RG_COLL_ALLTOALL:
		return (r - 1) / r;
	case RG_COLL_INCAST:
		return r - 1;
	default:
		return 1.0;
	}
}

/* NCCL's ncclGetBtree: a binary tree over ranks by their lowest set bit. */
static void
rg_btree(int n, int rank, int *u, int *d0, int *d1)
{
	int bit, up, lowbit;

	for (bit = 1; bit < n; bit <<= 1)
		if (bit & rank)
			break;
	if (rank == 0) {
		*u = -1;
		*d0 = -1;
		*d1 = n > 1 ? bit >> 1 : -1;
		return;
	}
	up = (rank ^ bit) | (bit << 1);
	if (up >= n)
		up = rank ^ bit;
	*u = up;
	lowbit = bit >> 1;
	*d0 = lowbit == 0 ? -1 : rank - lowbit;
	*d1 = lowbit == 0 ? -1 : rank + lowbit;
	while (*d1 >= n) {
		*d1 = lowbit == 0 ? -1 : rank + lowbit;
		lowbit >>= 1;
	}
}

void
rg_dtree(unsigned int n_ranks, unsigned int rank, unsigned int t, int *up, int *down0, int *down1)
{
	int n = (int)n_ranks, r = (int)rank, u, d0, d1;

	if (t == 0) {
		rg_btree(n, r, up, down0, down1);
		return;
	}
	if (n % 2 == 1) {	/* second tree: the first shifted by one */
		rg_btree(n, (r - 1 + n) % n, &u, &d0, &d1);
		*up = u == -1 ? -1 : (u + 1) % n;
		*down0 = d0 == -1 ? -1 : (d0 + 1) % n;
		*down1 = d1 == -1 ? -1 : (d1 + 1) % n;
	} else {		/* or mirrored */
		rg_btree(n, n - 1 - r, &u, &d0, &d1);
		*up = u == -1 ? -1 : n - 1 - u;
		*down0 = d0 == -1 ? -1 : n - 1 - d0;
		*down1 = d1 == -1 ? -1 : n - 1 - d1;
	}
}

static int
rg_add(struct rg_sched *s, unsigned int step, unsigned int src, unsigned int dst,
       enum rg_kind kind, uint64_t src_off, uint64_t dst_off, uint64_t len)
{
	struct rg_xfer *x;

	if (s->n == s->cap) {
		uint32_t cap = s->cap ? 2 * s->cap : 64;

		x = realloc(s->x, cap * sizeof(*x));
		if (x == NULL)
			return -ENOMEM;
		s->x = x;
		s->cap = cap;
	}
	x = &s->x[s->n];
	memset(x, 0, sizeof(*x));
	x->step = step;
	x->seq = s->n++;
	x->src = (uint16_t)src;
	x->dst = (uint16_t)dst;
	x->kind = (uint8_t)kind;
	x->src_off = src_off;
	x->dst_off = dst_off;
	x->len = len;
	if (step + 1 > s->n_steps)
		s->n_steps = step + 1;
	return 0;
}

static int rg_sched_finish(struct rg_sched *s);

static int
rg_xfer_cmp(const void *a, const void *b)
{
	const struct rg_xfer *x = a, *y = b;

	if (x->step != y->step)
		return x->step < y->step ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Depth of every rank in tree t; returns the largest, or -1 if the parents do not form a tree. */
static int
rg_tree_depths(unsigned int R, unsigned int t, int *parent, int *depth)
{
	unsigned int r, k;
	int d0, d1, max = 0;

	for (r = 0; r < R; r++)
		rg_dtree(R, r, t, &parent[r], &d0, &d1);
	for (r = 0; r < R; r++) {
		int p = (int)r;

		depth[r] = 0;
		for (k = 0; parent[p] != -1; k++) {
			if (k >= R || parent[p] < 0 || parent[p] >= (int)R)
				return -1;
			p = parent[p];
			depth[r]++;
		}
		if (depth[r] > max)
			max = depth[r];
	}
	return max;
}

static int
rg_build_tree(struct rg_sched *s)
{
	unsigned int R = s->n_ranks, t, r;
	int parent[2][RG_MAX_RANKS], depth[2][RG_MAX_RANKS], dmax = 0, d;
	uint64_t half = s->size / 2;
	int rc = 0;

	for (t = 0; t < 2; t++) {
		d = rg_tree_depths(R, t, parent[t], depth[t]);
		if (d < 0)
			return -EINVAL;
		if (d > dmax)
			dmax = d;
	}
	/* reduce up: the deepest ranks first, so a parent sends only after its children's
	 * contributions are applied; then broadcast down, the root's children first */
	for (t = 0; t < 2 && rc == 0; t++)
		for (r = 0; r < R && rc == 0; r++) {
			if (parent[t][r] < 0)
				continue;
			rc = rg_add(s, (unsigned int)(dmax - depth[t][r]), r,
				    (unsigned int)parent[t][r], RG_REDUCE, t * half, t * half, half);
			if (rc == 0)
				rc = rg_add(s, (unsigned int)(dmax + depth[t][r] - 1),
					    (unsigned int)parent[t][r], r, RG_COPY, t * half,
					    t * half, half);
		}
	return rc;
}

int
rg_sched_build(struct rg_sched *s, enum rg_coll coll, enum rg_algo algo, unsigned int n_ranks,
	       unsigned int root, uint64_t size)
{
	unsigned int R = n_ranks, g, j, st, c;
	uint64_t cb;
	int rc = 0;

	memset(s, 0, sizeof(*s));
	if (R < 1 || R > RG_MAX_RANKS || root >= R || coll >= RG_COLL_MAX ||
	    (coll == RG_COLL_P2P && R % 2 != 0))
		return -EINVAL;
	s->coll = coll;
	s->algo = coll == RG_COLL_ALLREDUCE ? algo : RG_ALGO_RING;
	s->n_ranks = R;
	s->root = root;
	s->size = rg_sched_round(size, R);
	if (s->size == 0)
		return -EINVAL;
	cb = s->size / R;
	switch (coll) {
	case RG_COLL_P2P:
		for (g = 0; g < R && rc == 0; g++)
			rc = rg_add(s, 0, g, (g + R / 2) % R, RG_LAND, 0, 0, s->size);
		break;
	case RG_COLL_ALLREDUCE:
		if (s->algo == RG_ALGO_TREE) {
			rc = R > 1 ? rg_build_tree(s) : 0;
			break;
		}
		/* the ring all-reduce is a reduce-scatter then an all-gather */
		/* fall through */
	case RG_COLL_REDUCESCATTER:
		/* step s: rank g adds chunk g - s - 1 into rank g + 1; g ends owning chunk g */
		for (st = 0; st + 1 < R && rc == 0; st++)
			for (g = 0; g < R && rc == 0; g++) {
				c = (g + 2 * R - st - 1) % R;
				rc = rg_add(s, st, g, (g + 1) % R, RG_REDUCE, c * cb, c * cb, cb);
			}
		if (coll == RG_COLL_REDUCESCATTER)
			break;
		/* fall through */
	case RG_COLL_ALLGATHER:
		/* step s: rank g passes chunk g - s on to rank g + 1 */
		for (st = 0; st + 1 < R && rc == 0; st++)
			for (g = 0; g < R && rc == 0; g++) {
				c = (g + R - st) % R;
				rc = rg_add(s, (coll == RG_COLL_ALLREDUCE ? R - 1 : 0) + st, g,
					    (g + 1) % R, RG_COPY, c * cb, c * cb, cb);
			}
		break;
	case RG_COLL_BROADCAST:
		/* the ring from the root; chunk c leaves position j - 1 at step c + j - 1 */
		for (j = 1; j < R && rc == 0; j++)
			for (c = 0; c < RG_BCAST_CHUNKS && rc == 0; c++) {
				uint64_t ck = s->size / RG_BCAST_CHUNKS;

				rc = rg_add(s, c + j - 1, (root + j - 1) % R, (root + j) % R, RG_COPY,
					    c * ck, c * ck, ck);
			}
		break;
	case RG_COLL_ALLTOALL:
		for (g = 0; g < R && rc == 0; g++)
			for (j = 0; j < R && rc == 0; j++)
				if (j != g)
					rc = rg_add(s, 0, g, j, RG_COPY, j * cb, g * cb, cb);
		break;
	case RG_COLL_INCAST:
		for (g = 0; g < R && rc == 0; g++)
			if (g != root)
				rc = rg_add(s, 0, g, root, RG_LAND, 0, 0, s->size);
		break;
	default:
		rc = -EINVAL;
	}
	if (rc != 0)
		goto fail;
	rc = rg_sched_finish(s);
	if (rc != 0)
		goto fail;
	return 0;
fail:
	rg_sched_free(s);
	return rc;
}

int
rg_sched_build_hier(struct rg_sched *s, unsigned int n_ranks, unsigned int per_node,
		    uint64_t size)
{
	unsigned int R = n_ranks, G = per_node, P, p, k, st, c, base;
	uint64_t cb, nb;
	int rc = 0;

	memset(s, 0, sizeof(*s));
	if (R < 1 || R > RG_MAX_RANKS || G < 1 || R % G != 0)
		return -EINVAL;
	P = R / G;
	s->coll = RG_COLL_ALLREDUCE;
	s->algo = RG_ALGO_HIER;
	s->n_ranks = R;
	s->size = rg_sched_round(size, R);
	if (s->size == 0)
		return -EINVAL;
	nb = s->size / G;	/* a node chunk: rank k of a node ends up owning chunk k */
	cb = s->size / R;	/* a rail chunk: a part of a node chunk */
	for (p = 0; p < P && rc == 0; p++) {
		base = p * G;
		/* intra-node reduce-scatter, steps 0 .. G - 2 */
		for (st = 0; st + 1 < G && rc == 0; st++)
			for (k = 0; k < G && rc == 0; k++) {
				c = (k + 2 * G - st - 1) % G;
				rc = rg_add(s, st, base + k, base + (k + 1) % G, RG_REDUCE, c * nb,
					    c * nb, nb);
			}
		/* intra-node all-gather, after the rails' 2 (P - 1) steps */
		for (st = 0; st + 1 < G && rc == 0; st++)
			for (k = 0; k < G && rc == 0; k++) {
				c = (k + G - st) % G;
				rc = rg_add(s, G - 1 + 2 * (P - 1) + st, base + k,
					    base + (k + 1) % G, RG_COPY, c * nb, c * nb, nb);
			}
	}
	/* rail k: a ring all-reduce of node chunk k over the nodes */
	for (k = 0; k < G && rc == 0; k++)
		for (st = 0; st + 1 < P && rc == 0; st++)
			for (p = 0; p < P && rc == 0; p++) {
				uint64_t o = k * nb + (uint64_t)((p + 2 * P - st - 1) % P) * cb;

				rc = rg_add(s, G - 1 + st, p * G + k, ((p + 1) % P) * G + k,
					    RG_REDUCE, o, o, cb);
				o = k * nb + (uint64_t)((p + P - st) % P) * cb;
				if (rc == 0)
					rc = rg_add(s, G - 1 + P - 1 + st, p * G + k,
						    ((p + 1) % P) * G + k, RG_COPY, o, o, cb);
			}
	if (rc == 0)
		rc = rg_sched_finish(s);
	if (rc != 0)
		rg_sched_free(s);
	return rc;
}

/* Sort the transfers into steps and give each a landing offset of its own. */
static int
rg_sched_finish(struct rg_sched *s)
{
	uint64_t land[RG_MAX_RANKS];
	uint32_t i;
	unsigned int st;

	if (s->n > 0)	/* one rank: nothing to move */
		qsort(s->x, s->n, sizeof(*s->x), rg_xfer_cmp);
	s->step_first = calloc(s->n_steps + 1, sizeof(*s->step_first));
	if (s->step_first == NULL)
		return -ENOMEM;
	memset(land, 0, sizeof(land));
	for (i = 0, st = 0; i < s->n; i++) {
		while (st <= s->x[i].step)
			s->step_first[st++] = i;
		s->x[i].land_off = land[s->x[i].dst];
		land[s->x[i].dst] += s->x[i].len;
	}
	while (st <= s->n_steps)
		s->step_first[st++] = s->n;
	memcpy(s->land_len, land, sizeof(land));
	return 0;
}

void
rg_sched_free(struct rg_sched *s)
{
	free(s->x);
	free(s->step_first);
	s->x = NULL;
	s->step_first = NULL;
	s->n = s->cap = 0;
}

float
rg_init_value(enum rg_coll coll, unsigned int R, unsigned int root, uint64_t size,
	      unsigned int g, uint64_t i)
{
	uint64_t per = size / 4 / R;	/* floats per chunk */

	switch (coll) {
	case RG_COLL_ALLGATHER:
		return i / per == g ? (float)(g + 1) + (float)(i % 7) : -1.0f;
	case RG_COLL_BROADCAST:
		return g == root ? (float)(g + 1) + (float)(i % 7) : -1.0f;
	case RG_COLL_ALLTOALL:
		return (float)(g * R + i / per + 1) + (float)(i % per % 7);
	default:
		return (float)(g + 1) + (float)(i % 7);
	}
}

/* What rank g's data must hold at float i after the collective; NAN-free: returns false when
 * the collective leaves i unspecified. */
static bool
rg_want(const struct rg_sched *s, unsigned int g, uint64_t i, float *want)
{
	unsigned int R = s->n_ranks;
	uint64_t per = s->size / 4 / R;
	float sum = (float)(R * (R + 1) / 2) + (float)R * (float)(i % 7);

	switch (s->coll) {
	case RG_COLL_ALLREDUCE:
		*want = sum;
		return true;
	case RG_COLL_REDUCESCATTER:
		*want = sum;
		return i / per == g;
	case RG_COLL_ALLGATHER:
		*want = (float)(i / per + 1) + (float)(i % 7);
		return true;
	case RG_COLL_BROADCAST:
		*want = (float)(s->root + 1) + (float)(i % 7);
		return true;
	case RG_COLL_ALLTOALL:
		*want = (float)((i / per) * R + g + 1) + (float)(i % per % 7);
		return true;
	default:	/* p2p, incast: data is only read */
		*want = rg_init_value(s->coll, R, s->root, s->size, g, i);
		return true;
	}
}

uint64_t
rg_sched_verify(const struct rg_sched *s, unsigned int g, const float *data, const float *land,
		uint64_t *first_bad)
{
	uint64_t i, n = s->size / 4, bad = 0;
	uint32_t k;
	float want;

	*first_bad = UINT64_MAX;
	for (i = 0; i < n; i++)
		if (rg_want(s, g, i, &want) && data[i] != want) {
			if (bad++ == 0)
				*first_bad = i;
		}
	/* what was only landed (p2p, incast): the sender's initial data */
	for (k = 0; k < s->n; k++) {
		const struct rg_xfer *x = &s->x[k];

		if (x->dst != g || x->kind != RG_LAND)
			continue;
		for (i = 0; i < x->len / 4; i++)
			if (land[x->land_off / 4 + i] !=
			    rg_init_value(s->coll, s->n_ranks, s->root, s->size, x->src,
					  x->src_off / 4 + i))
				bad++;
	}
	return bad;
}

void
rg_qp_share(uint64_t len, unsigned int nq, bool split, uint64_t seq, unsigned int q,
	    uint64_t *off, uint64_t *plen)
{
	uint64_t chunk, end;

	if (nq <= 1) {
		*off = 0;
		*plen = q == 0 ? len : 0;
		return;
	}
	if (!split) {
		*off = 0;
		*plen = seq % nq == q ? len : 0;
		return;
	}
	chunk = ((len + nq - 1) / nq + 127) / 128 * 128;
	*off = (uint64_t)q * chunk < len ? (uint64_t)q * chunk : len;
	end = *off + chunk < len ? *off + chunk : len;
	*plen = end - *off;
}
