/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The next hop of a packet at one fabric switch: among the links on a shortest path to its
 * egress leaf that are up, by the switch's mode. Per packet, on the worker: no allocation.
 */
#include <string.h>

#include "lib/base/emu_hash.h"
#include "lib/fabric/fab.h"

/* The flow of a packet for flowlets: its IPs, UDP source port and DestQP, never 0. */
static uint32_t
fab_flow_sig(const struct emu_pkt_meta *meta)
{
	const struct roce_pkt *p = &meta->pkt;
	uint8_t key[16];
	uint32_t h;

	if (!(meta->flags & EMU_META_PARSED))
		return 1;
	h = emu_ip_qpn_sig(p->src_ip, p->dest_qp ^ ((uint32_t)p->udp_sport << 8));
	memcpy(key, p->dst_ip, 16);
	return emu_ip_qpn_sig(key, h);
}

/* The ECMP hash of packet @p p at switch @p s (configuration @p hc), from the memo when the
 * flow was seen there last (struct fab_hash_memo). */
static uint32_t
fab_ecmp_hash(struct fab_rt *rt, unsigned int s, const struct fab_hash_cfg *hc,
	      const struct roce_pkt *p)
{
	struct fab_hash_memo *e;
	uint64_t k[6];
	bool hit;

	if (rt->hash_memo == NULL)
		return fab_hash(hc, p);
	fab_memo_key(p, s, k);
	e = fab_memo_slot(rt, k, &hit);
	if (!hit) {
		memcpy(e->key, k, sizeof(k));
		e->hash = fab_hash(hc, p);
	}
	return e->hash;
}

void
fab_rt_init(struct fab_rt *rt)
{
	unsigned int s, d;

	for (s = 0; s < FAB_MAX_SWITCHES; s++)
		for (d = 0; d < FAB_MAX_SWITCHES; d++)
			rt->up_of[s][d] = UINT64_MAX;
}

/* The next hops from @p s towards @p d whose link is up, in the order of cfg->next[s][d]. */
static void
fab_route_up(const struct fab_cfg *cfg, struct fab_rt *rt, unsigned int s, unsigned int d)
{
	const uint8_t *next = cfg->next[s][d];
	uint64_t links_up = rt->links_up;
	unsigned int i, n = 0;

	for (i = 0; i < cfg->n_next[s][d]; i++)
		if ((links_up >> next[i]) & 1)
			rt->up[s][d][n++] = next[i];
	rt->n_up[s][d] = (uint8_t)n;
	rt->up_of[s][d] = links_up;
	if (cfg->sw[s].hash.res_buckets != 0) {
		unsigned int moved = fab_res_update(cfg, rt, s, d);

		if (rt->sw_ctr != NULL)
			rt->sw_ctr[s][FAB_SW_CTR_BUCKETS_MOVED] += moved;
	}
}

/* An ECMP switch's choice by hash @p h: its resilient table's bucket, or hash mod the @p n
 * next hops up @p up. */
static inline uint16_t
fab_ecmp_pick(const struct fab_cfg *cfg, const struct fab_rt *rt, unsigned int s, unsigned int d,
	      uint32_t h, const uint8_t *up, unsigned int n)
{
	const unsigned int b = cfg->sw[s].hash.res_buckets;

	if (b != 0)
		return rt->res[rt->res_at[s] + (size_t)d * b + fab_hash_pick(h, b)];
	return up[fab_hash_pick(h, n)];
}

/* fab_route() past the common case: every mode, spray_match, unparsed packets. */
static __attribute__((noinline)) uint16_t
fab_route_mode(const struct fab_cfg *cfg, struct fab_rt *rt, const struct emu_tm *tm,
	       unsigned int s, unsigned int d, const struct emu_pkt_meta *meta, uint64_t now_ns,
	       struct emu_rng *rng, const uint8_t *up, unsigned int n)
{
	const struct fab_switch_cfg *sw = &cfg->sw[s];
	unsigned int i, best;
	uint64_t q, best_q;

	/* spray_match: what it leaves out is hashed as at an ECMP switch (unparsed: up[0]) */
	if (unlikely(sw->has_spray_match) &&
	    (!(meta->flags & EMU_META_PARSED) ||
	     !emu_match_test(&rt->spray_match[s], &meta->pkt, meta->in_port, meta->out_port,
			     meta->prio, 0, now_ns)))
		goto ecmp;
	switch (sw->mode) {
	case FAB_ROUTE_ECMP:
	ecmp:
		if (!(meta->flags & EMU_META_PARSED))
			return up[0];
		/* over the links that are up: a link down rehashes every flow over the rest
		 * (resilient: only its own) */
		return fab_ecmp_pick(cfg, rt, s, d, fab_ecmp_hash(rt, s, &sw->hash, &meta->pkt),
				     up, n);
	case FAB_ROUTE_RR:
		return up[rt->rr[s][d]++ % n];
	case FAB_ROUTE_RANDOM:
		return up[emu_rng_u64(rng) % n];
	case FAB_ROUTE_ADAPTIVE:
		/* the least queued for the packet's priority; ties go round robin */
		best = rt->rr[s][d]++ % n;
		best_q = emu_tm_queue_bytes(tm, fab_link_port(cfg, up[best]), meta->prio);
		for (i = 1; i < n; i++) {
			unsigned int k = (best + i) % n;

			q = emu_tm_queue_bytes(tm, fab_link_port(cfg, up[k]), meta->prio);
			if (q < best_q) {
				best_q = q;
				best = k;
			}
		}
		return up[best];
	case FAB_ROUTE_FLOWLET: {
		uint32_t sig = fab_flow_sig(meta);
		struct fab_flowlet *f = &rt->flowlets[(size_t)s * FAB_FLOWLET_SLOTS +
						      (sig & (FAB_FLOWLET_SLOTS - 1))];

		if (f->sig == sig && now_ns - f->last_ns <= sw->flowlet_gap_ns)
			for (i = 0; i < n; i++)
				if (up[i] == f->link) {
					f->last_ns = now_ns;
					return f->link;
				}
		/* a new flowlet (or its hop went down): a new hop at random */
		f->sig = sig;
		f->link = up[emu_rng_u64(rng) % n];
		f->last_ns = now_ns;
		return f->link;
	}
	case FAB_ROUTE_STATIC:
	default:
		return up[0];
	}
}

uint16_t
fab_route_any(const struct fab_cfg *cfg, struct fab_rt *rt, const struct emu_tm *tm,
	      unsigned int s, unsigned int d, const struct emu_pkt_meta *meta, uint64_t now_ns,
	      struct emu_rng *rng)
{
	const struct fab_switch_cfg *sw = &cfg->sw[s];
	const uint8_t *up;
	unsigned int n;

	if (unlikely(rt->up_of[s][d] != rt->links_up))
		fab_route_up(cfg, rt, s, d);
	up = rt->up[s][d];
	n = rt->n_up[s][d];
	if (n <= 1)
		return n == 0 ? FAB_NONE : up[0];
	/* the common case: ECMP of a parsed packet, everything sent through */
	if (likely(sw->mode == FAB_ROUTE_ECMP && !sw->has_spray_match &&
		   (meta->flags & EMU_META_PARSED)))
		return fab_ecmp_pick(cfg, rt, s, d, fab_ecmp_hash(rt, s, &sw->hash, &meta->pkt),
				     up, n);
	return fab_route_mode(cfg, rt, tm, s, d, meta, now_ns, rng, up, n);
}
