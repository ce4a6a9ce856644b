/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef FAB_H
#define FAB_H

/**
 * @file
 * An emulated fabric between the real ports (pipelines/README.md, "fabric"): switches (leaves,
 * to which real ports attach, and spines or any other tier) joined by links. Every link is a
 * TM port of its own (index EMU_MAX_PORTS-free: after the real ports), with rate, propagation
 * delay, buffer, per-priority queues, ECN and PFC, so a packet's crossing of the fabric is
 * exact on the virtual clock hop by hop. At each switch the next hop towards the packet's
 * egress leaf is chosen among the links on a shortest path that are up: ECMP (lib/fabric
 * fab_hash), round robin, random, adaptive (least queued) or flowlet. A lossless priority stays
 * lossless across it: a link's ingress accounting pauses the link before it (PFC without a
 * frame), and at the first hop the real NIC is paused by real PFC frames.
 *
 * fab_cfg.c: the configuration and the routes (pure: no EAL); fab_route.c: the choice per
 * packet. The runner side (which packets enter, hop events, PFC between hops) is
 * lib/switch/emu_switch_fabric.c.
 */

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <jansson.h>

#include "lib/base/emu_err.h"
#include "lib/base/emu_keys.h"
#include "lib/base/emu_rng.h"
#include "lib/fabric/fab_hash.h"
#include "lib/stage/emu_match.h"
#include "lib/pkt/emu_pkt.h"
#include "lib/tm/emu_tm.h"

#define FAB_MAX_SWITCHES 32
#define FAB_MAX_LINKS (EMU_TM_MAX_PORTS - EMU_MAX_PORTS)
#define FAB_MAX_NEXT 16   /**< equal-cost next hops of one switch towards one leaf */
#define FAB_NAME_LEN 40
#define FAB_NONE 0xffff
#define FAB_FLOWLET_SLOTS 4096

enum fab_route_mode {
	FAB_ROUTE_ECMP,        /**< "ecmp": hash of the packet's fields (default) */
	FAB_ROUTE_RR,          /**< "round_robin": per packet, in turn */
	FAB_ROUTE_RANDOM,      /**< "random": per packet, uniformly */
	FAB_ROUTE_ADAPTIVE,    /**< "adaptive": per packet, the least queued next hop */
	FAB_ROUTE_FLOWLET,     /**< "flowlet": a flow keeps its hop until a gap, then random */
	FAB_ROUTE_STATIC,      /**< "static": always the first next hop listed */
	FAB_ROUTE_MAX
};

/* Per-link counters (reasons "fabric.LINK.NAME") */
#define FAB_LINK_FOREACH_CTR(_) \
	_(ROUTED, "routed") \
	_(DROP_LOSS, "drop_link_loss")

enum fab_link_ctr {
#define FAB_LINK_CTR_ENUM(e, s) FAB_LINK_CTR_##e,
	FAB_LINK_FOREACH_CTR(FAB_LINK_CTR_ENUM)
#undef FAB_LINK_CTR_ENUM
	FAB_LINK_CTR_MAX
};
extern const char *const fab_link_ctr_names[FAB_LINK_CTR_MAX];

/* Per-switch counters (reasons "fabric.SWITCH.NAME") */
#define FAB_SW_FOREACH_CTR(_) \
	_(DROP_NO_PATH, "drop_no_path") \
	_(BUCKETS_MOVED, "buckets_moved")

enum fab_sw_ctr {
#define FAB_SW_CTR_ENUM(e, s) FAB_SW_CTR_##e,
	FAB_SW_FOREACH_CTR(FAB_SW_CTR_ENUM)
#undef FAB_SW_CTR_ENUM
	FAB_SW_CTR_MAX
};
extern const char *const fab_sw_ctr_names[FAB_SW_CTR_MAX];

struct fab_switch_cfg {
	char name[FAB_NAME_LEN];
	enum fab_route_mode mode;
	struct fab_hash_cfg hash;  /**< ecmp, and the packets spray_match leaves out */
	uint64_t flowlet_gap_ns;   /**< flowlet */
	bool has_spray_match;      /**< only matching packets follow mode; the rest: ECMP */
	struct emu_match spray_match;
};

struct fab_link_cfg {
	char name[FAB_NAME_LEN];   /**< "FROM-TO", ".K" appended for parallel links */
	uint16_t from, to;         /**< switch indexes */
	double loss;               /**< probability a packet is lost on the link */
	struct emu_tm_port_cfg tm; /**< its queues and wire (own_buffer set) */
};

struct fab_cfg {
	unsigned int n_switches, n_links;
	struct fab_switch_cfg sw[FAB_MAX_SWITCHES];
	struct fab_link_cfg links[FAB_MAX_LINKS];
	unsigned int n_ports;               /**< the pipeline's real ports */
	uint16_t port_leaf[EMU_MAX_PORTS];  /**< switch a real port attaches to, or FAB_NONE */
	/** next[s][d]: the links out of switch s on a shortest path to switch d */
	uint8_t n_next[FAB_MAX_SWITCHES][FAB_MAX_SWITCHES];
	uint8_t next[FAB_MAX_SWITCHES][FAB_MAX_SWITCHES][FAB_MAX_NEXT];
	uint8_t hops[FAB_MAX_SWITCHES][FAB_MAX_SWITCHES]; /**< links on that path; 0xff none */
	bool needs_flow_table;              /**< a flowlet switch */
	/**
	 * Levels: a link fed only by real ports is level 0, a link fed only by links of level
	 * k is level k + 1 (routes are shortest paths, so there is no loop; only the routes
	 * towards leaves with real ports count, as no packet heads anywhere else). When every
	 * link's feeders are of one level (leaf-spine, and any fabric where paths do not merge
	 * from different depths), the runner processes the fabric level by level, merging each
	 * level's departures in time order (levels_exact); otherwise event by event.
	 */
	uint8_t level[FAB_MAX_LINKS];
	uint8_t n_levels;
	bool levels_exact;
	/** Level k's links all end where the packets leave for their real port (no link
	 * follows them on any route): the last level of a leaf-spine. */
	bool level_last[FAB_MAX_LINKS];
};

/** The key tables of "fabric", its switches and links (fab_keys.c). */
extern const struct emu_key_table fab_table, fab_switch_table;
extern struct emu_key_table fab_link_table; /* completed at start with the tm.ports[] keys */

/**
 * Parse the pipeline's "fabric" object (path "fabric") for ports @p names (@p n_ports, MTUs
 * @p mtus) into a new *@p out. Every real port attached to a switch, every leaf pair
 * connected, names unique (switches, links and ports), at most FAB_MAX_LINKS links.
 */
int fab_cfg_parse(const json_t *o, unsigned int n_ports, const char *const *names,
		  const uint32_t *mtus, struct fab_cfg **out, struct emu_err *err);

/** Free; accepts NULL. */
void fab_cfg_free(struct fab_cfg *cfg);

/** TM port index of link @p l (after the @p n_ports real ports). */
static inline uint16_t
fab_link_port(const struct fab_cfg *cfg, unsigned int l)
{
	return (uint16_t)(cfg->n_ports + l);
}

/** The runtime state of the choices (round-robin turns, flowlet table), zeroed to start. */
struct fab_flowlet {
	uint32_t sig;      /**< 0: empty */
	uint16_t link;
	uint64_t last_ns;
};

/**
 * A flow's ECMP hash at one switch, remembered (direct-mapped, FAB_HASH_CACHE_SLOTS): the
 * hash is a pure function of the switch's hash configuration and the packet fields in @p key,
 * so a hit gives exactly what fab_hash() would. The key: source and destination address,
 * UDP ports, class and IP version, DestQP and the switch (with a bit that no zeroed entry has).
 */
#define FAB_HASH_CACHE_SLOTS 4096
struct fab_hash_memo {
	uint64_t key[6];
	uint32_t hash;
} __attribute__((aligned(64)));

struct fab_rt {
	uint32_t rr[FAB_MAX_SWITCHES][FAB_MAX_SWITCHES];
	struct fab_flowlet *flowlets; /**< FAB_FLOWLET_SLOTS per flowlet switch, or NULL */
	struct fab_hash_memo *hash_memo; /**< FAB_HASH_CACHE_SLOTS, or NULL: always computed */
	/**
	 * Bit l: link l is up, as the TM says. The runner sets it again whenever a link may
	 * have changed (lib/switch: before each burst's fabric work and after every TM change
	 * of a link), so fab_route() reads one word instead of asking the TM per next hop.
	 */
	uint64_t links_up;
	/** Each switch's spray_match with its own counting state (copied at start). */
	struct emu_match spray_match[FAB_MAX_SWITCHES];
	/**
	 * The next hops of cfg->next[s][d] that are up (n_up, up), as of links_up == up_of[s][d]:
	 * fab_route() rebuilds a pair's list when links_up has changed since (fab_rt_init() sets
	 * a value links_up never has: it has at most FAB_MAX_LINKS bits).
	 */
	uint64_t up_of[FAB_MAX_SWITCHES][FAB_MAX_SWITCHES];
	uint8_t n_up[FAB_MAX_SWITCHES][FAB_MAX_SWITCHES];
	uint8_t up[FAB_MAX_SWITCHES][FAB_MAX_SWITCHES][FAB_MAX_NEXT];
	/**
	 * Resilient hashing (fab_res.c): switch s with hash.res_buckets B has a table of B
	 * buckets towards each switch d at res[res_at[s] + d * B], each holding a link. It is
	 * brought up to date with the pair's list of next hops up (fab_route_up()), moving only
	 * the buckets it must; the moves are counted in sw_ctr[s][FAB_SW_CTR_BUCKETS_MOVED]
	 * when sw_ctr is set (the runner's counters).
	 */
	uint8_t *res;
	uint32_t res_at[FAB_MAX_SWITCHES];
	uint64_t (*sw_ctr)[FAB_SW_CTR_MAX];
};

/** The bytes of the resilient tables of @p cfg's switches (0: none has one). */
size_t fab_res_bytes(const struct fab_cfg *cfg);

/**
 * Give @p rt the resilient tables in @p block (fab_res_bytes(), zeroed or not) and fill them
 * as with every link up: bucket i towards d holds next hop i mod n of cfg->next[s][d].
 */
void fab_res_init(const struct fab_cfg *cfg, struct fab_rt *rt, uint8_t *block);

/**
 * Bring switch @p s's table towards @p d up to date with rt->up[s][d] (its next hops up,
 * just rebuilt): the buckets of a link that is down go to the links up, and then the fewest
 * buckets move so that no two links up differ by more than one bucket. Returns how many
 * buckets moved.
 */
unsigned int fab_res_update(const struct fab_cfg *cfg, struct fab_rt *rt, unsigned int s,
			    unsigned int d);

/**
 * Real ports in groups such that no fabric link carries packets to ports of two groups
 * (fab_groups.c): @p group[p] in 0..n-1, numbered by their first port; returns n. Ports on one
 * leaf are in one group as soon as any link leads to that leaf.
 */
unsigned int fab_port_groups(const struct fab_cfg *c, uint8_t group[EMU_MAX_PORTS]);

/** A link that packets to real ports @p a and @p b can both take (the lowest), or FAB_NONE. */
uint16_t fab_shared_link(const struct fab_cfg *c, unsigned int a, unsigned int b);

/** Start @p rt (zeroed): no list of links up built yet. */
void fab_rt_init(struct fab_rt *rt);

/**
 * The link out of switch @p s towards switch @p d for packet @p meta at @p now_ns: among the
 * next hops whose link is up (@p rt links_up), by the switch's mode (adaptive reads the queues
 * in @p tm). FAB_NONE when none is up. fab_route() below is the same with its common case
 * inline.
 */
uint16_t fab_route_any(const struct fab_cfg *cfg, struct fab_rt *rt, const struct emu_tm *tm,
		       unsigned int s, unsigned int d, const struct emu_pkt_meta *meta,
		       uint64_t now_ns, struct emu_rng *rng);

/** The memo key of packet @p p at switch @p s (struct fab_hash_memo). */
static inline void
fab_memo_key(const struct roce_pkt *p, unsigned int s, uint64_t k[6])
{
	memcpy(&k[0], p->src_ip, 16);
	memcpy(&k[2], p->dst_ip, 16);
	k[4] = (uint64_t)p->udp_sport | (uint64_t)p->udp_dport << 16 | (uint64_t)p->cls << 32 |
	       (uint64_t)p->ip_version << 40;
	k[5] = (uint64_t)p->dest_qp | (uint64_t)s << 32 | 1ULL << 63;
}

/** The memo entry of key @p k, and in *@p hit whether it holds that key. */
static inline struct fab_hash_memo *
fab_memo_slot(const struct fab_rt *rt, const uint64_t k[6], bool *hit)
{
	uint64_t x = (k[0] ^ k[1] ^ k[2] ^ k[3] ^ k[4] ^ k[5]) * 0x9E3779B97F4A7C15ULL;
	struct fab_hash_memo *e = &rt->hash_memo[(x ^ x >> 29) >> 32 & (FAB_HASH_CACHE_SLOTS - 1)];

	*hit = ((e->key[0] ^ k[0]) | (e->key[1] ^ k[1]) | (e->key[2] ^ k[2]) |
		(e->key[3] ^ k[3]) | (e->key[4] ^ k[4]) | (e->key[5] ^ k[5])) == 0;
	return e;
}

/**
 * An ECMP switch @p s's choice among its @p n next hops up @p up (rt->up[s][d], current) for
 * packet @p p when the memo holds the flow, else FAB_NONE (then fab_route_any() decides).
 */
static inline uint16_t
fab_memo_pick(const struct fab_rt *rt, const struct roce_pkt *p, unsigned int s,
	      const uint8_t *up, unsigned int n)
{
	const struct fab_hash_memo *e;
	uint64_t k[6];
	bool hit;

	fab_memo_key(p, s, k);
	e = fab_memo_slot(rt, k, &hit);
	return likely(hit) ? up[fab_hash_pick(e->hash, n)] : FAB_NONE;
}

/** fab_route_any(), with an ECMP switch's choice for a flow the memo holds taken inline. */
static inline uint16_t
fab_route(const struct fab_cfg *cfg, struct fab_rt *rt, const struct emu_tm *tm,
	  unsigned int s, unsigned int d, const struct emu_pkt_meta *meta, uint64_t now_ns,
	  struct emu_rng *rng)
{
	const struct fab_switch_cfg *sw = &cfg->sw[s];
	unsigned int n = rt->n_up[s][d];

	if (likely(rt->up_of[s][d] == rt->links_up && n > 1 && sw->mode == FAB_ROUTE_ECMP &&
		   !sw->has_spray_match && sw->hash.res_buckets == 0 &&
		   (meta->flags & EMU_META_PARSED) &&
		   rt->hash_memo != NULL)) {
		uint16_t l = fab_memo_pick(rt, &meta->pkt, s, rt->up[s][d], n);

		if (likely(l != FAB_NONE))
			return l;
	}
	return fab_route_any(cfg, rt, tm, s, d, meta, now_ns, rng);
}

#endif
