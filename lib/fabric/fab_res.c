/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Resilient hashing at an ECMP switch ("hash": {"resilient_buckets": B}): the hash picks one
 * of B buckets, and each bucket holds a next hop. With plain ECMP the hash picks hash mod the
 * number of next hops up, so when a link fails or returns most flows move, also those the
 * link never carried. With a table only the buckets that must change do: a failed link's
 * buckets go to the links left, and a returning link takes just enough buckets from the
 * others to even the table out. This is the behaviour of Linux's resilient next-hop groups
 * (docs/ecmp-hash.md) without their idle timer: a returning link gets its buckets at once.
 *
 * The tables change only when the links up change (control-rate work, on the worker: no
 * allocation, at most B x next hops steps per pair of switches).
 */
#include <string.h>

#include "lib/fabric/fab.h"

size_t
fab_res_bytes(const struct fab_cfg *cfg)
{
	size_t n = 0;
	unsigned int s;

	for (s = 0; s < cfg->n_switches; s++)
		n += (size_t)cfg->sw[s].hash.res_buckets * cfg->n_switches;
	return n;
}

void
fab_res_init(const struct fab_cfg *cfg, struct fab_rt *rt, uint8_t *block)
{
	uint32_t at = 0;
	unsigned int s, d, i;

	rt->res = block;
	for (s = 0; s < cfg->n_switches; s++) {
		const unsigned int b = cfg->sw[s].hash.res_buckets;

		rt->res_at[s] = at;
		for (d = 0; d < cfg->n_switches && b > 0; d++) {
			const unsigned int n = cfg->n_next[s][d];

			for (i = 0; i < b; i++)
				block[at + d * b + i] = n > 0 ? cfg->next[s][d][i % n] : 0;
		}
		at += b * cfg->n_switches;
	}
}

unsigned int
fab_res_update(const struct fab_cfg *cfg, struct fab_rt *rt, unsigned int s, unsigned int d)
{
	const unsigned int b = cfg->sw[s].hash.res_buckets, n = rt->n_up[s][d];
	const uint8_t *up = rt->up[s][d];
	uint8_t *tbl = rt->res + rt->res_at[s] + (size_t)d * b;
	/* pos[link]: the link's position in up[] + 1 (0: not up) */
	uint8_t pos[FAB_MAX_LINKS];
	unsigned int cnt[FAB_MAX_NEXT], target[FAB_MAX_NEXT], i, k, extra, moved = 0;
	int j;

	if (b == 0 || n == 0)
		return 0; /* no table, or no link up: fab_route_any() says so before reading it */
	memset(pos, 0, sizeof(pos));
	memset(cnt, 0, sizeof(cnt));
	for (k = 0; k < n; k++)
		pos[up[k]] = (uint8_t)(k + 1);
	for (i = 0; i < b; i++)
		if (pos[tbl[i]] != 0)
			cnt[pos[tbl[i]] - 1]++;
	/* each link up gets b / n buckets; the b mod n left over go to those holding the most
	 * now (ties: the first in up[]), so that the fewest buckets move */
	for (k = 0; k < n; k++)
		target[k] = b / n;
	for (extra = b % n; extra > 0; extra--) {
		unsigned int best = FAB_MAX_NEXT;

		for (k = 0; k < n; k++)
			if (target[k] == b / n && (best == FAB_MAX_NEXT || cnt[k] > cnt[best]))
				best = k;
		target[best]++;
	}
	/* from the last bucket back, a link over its target gives the bucket up: marked by a
	 * link that is not up */
	for (j = (int)b - 1; j >= 0; j--) {
		uint8_t p = pos[tbl[j]];

		if (p != 0 && cnt[p - 1] > target[p - 1]) {
			cnt[p - 1]--;
			tbl[j] = FAB_MAX_LINKS; /* no link has that index */
		}
	}
	/* from the first bucket on, each bucket without a link up goes to the link furthest
	 * below its target (ties: the first in up[]) */
	for (i = 0; i < b; i++) {
		unsigned int best = 0;

		if (tbl[i] < FAB_MAX_LINKS && pos[tbl[i]] != 0)
			continue;
		for (k = 1; k < n; k++)
			if (target[k] - cnt[k] > target[best] - cnt[best])
				best = k;
		tbl[i] = up[best];
		cnt[best]++;
		moved++;
	}
	return moved;
}
