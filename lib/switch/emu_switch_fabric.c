/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The runner's side of an emulated fabric (lib/fabric/fab.h). A unicast packet from a real
 * port whose egress port hangs off another leaf enters the fabric after the ingress stages:
 * its leaf picks the first link, and from then on the packet moves hop by hop, each link a
 * TM port (queues, ECN, PFC accounting, shaper, delay line). Link departures are processed
 * as discrete events in time order across all links (each link's next event is kept, and the
 * earliest is taken), so a packet arriving at the next hop is enqueued there at its exact
 * arrival time, after everything that happened before it; the last hop hands it to the TM
 * of its real egress port. PFC inside the fabric needs no frame: when a link's ingress side
 * (the next switch) crosses XOFF, the link itself is paused; at the first hop the ingress is
 * the real port, and the NIC gets real PFC frames (emu_switch_send_pfc()). Two fast ways,
 * each exact where it is taken (unit-fabric_same checks them against the packet-by-packet
 * ways, emu_switch_set_general_only()): a burst from a real port onto its links in one TM
 * call (emu_switch_fabric_enter_run()), and the last level's departures merged and delivered
 * to the real ports in bulk while nothing they do can reach beyond their port
 * (emu_fab_merge_last()).
 */
#include <errno.h>
#include <string.h>

#include <rte_malloc.h>

#include "lib/switch/emu_switch_int.h"

#define EMU_FAB_RNG_STREAM 0x466162ULL /* "Fab" */

/* a link's index is one bit of a word (links_up, fab_lossy, fab_dirty), and 1 + it a byte
 * (the trace's path) */
_Static_assert(FAB_MAX_LINKS <= 64, "links fit a 64-bit word");

/* Which links are up (fab_route() reads it): after any change of a link, before routing. */
static void
emu_fab_links_up(struct emu_switch *sw)
{
	uint64_t up = 0;
	unsigned int l;

	for (l = 0; l < sw->fab->n_links; l++)
		if (emu_tm_link_up(sw->tm, fab_link_port(sw->fab, l)))
			up |= 1ULL << l;
	sw->fab_rt->links_up = up;
}

int
emu_switch_fabric_init(struct emu_switch *sw, struct emu_err *err)
{
	const struct fab_cfg *fc = sw->pl->fabric;
	unsigned int l, lev, k;

	sw->fab = fc;
	sw->fab_reason_base = sw->n_reasons;
	if (fc == NULL)
		return 0;
	sw->n_reasons += fc->n_links * FAB_LINK_CTR_MAX + fc->n_switches * FAB_SW_CTR_MAX;
	sw->fab_rt = rte_zmalloc("emu_fabric", sizeof(*sw->fab_rt), RTE_CACHE_LINE_SIZE);
	if (sw->fab_rt == NULL)
		return emu_err_setrc(err, -ENOMEM, "fabric: out of memory");
	fab_rt_init(sw->fab_rt);
	for (l = 0; l < fc->n_switches; l++)
		sw->fab_rt->spray_match[l] = fc->sw[l].spray_match;
	if (fc->needs_flow_table) {
		sw->fab_rt->flowlets = rte_zmalloc("emu_flowlets", sizeof(struct fab_flowlet) *
						   FAB_MAX_SWITCHES * FAB_FLOWLET_SLOTS,
						   RTE_CACHE_LINE_SIZE);
		if (sw->fab_rt->flowlets == NULL)
			return emu_err_setrc(err, -ENOMEM, "fabric: out of memory (flowlet table)");
	}
	sw->fab_rt->hash_memo = rte_zmalloc("emu_fab_hash", sizeof(struct fab_hash_memo) *
					    FAB_HASH_CACHE_SLOTS, RTE_CACHE_LINE_SIZE);
	if (sw->fab_rt->hash_memo == NULL)
		return emu_err_setrc(err, -ENOMEM, "fabric: out of memory (ECMP hash memo)");
	if (fab_res_bytes(fc) > 0) {
		uint8_t *res = rte_malloc("emu_fab_res", fab_res_bytes(fc), RTE_CACHE_LINE_SIZE);

		if (res == NULL)
			return emu_err_setrc(err, -ENOMEM, "fabric: out of memory (resilient "
					     "hashing tables)");
		fab_res_init(fc, sw->fab_rt, res);
	}
	sw->fab_rt->sw_ctr = sw->fab_sw_ctr;
	emu_rng_seed(&sw->fab_rng, sw->seed, EMU_FAB_RNG_STREAM);
	/* PFC between hops only when a link or port has a lossless priority with PFC */
	for (l = 0; l < sw->pl->tm.n_ports; l++)
		if (sw->pl->tm.ports[l].pfc.enabled || sw->pl->tm.ports[l].lossless_mask)
			sw->fab_pfc = true;
	for (l = 0; l < FAB_MAX_LINKS; l++)
		sw->fab_ev[l] = UINT64_MAX;
	for (l = 0; l < fc->n_links; l++)
		if (fc->links[l].loss > 0)
			sw->fab_lossy |= 1ULL << l;
	/* each level's links in their order, and the ports the last level delivers to */
	for (lev = 0, k = 0; lev < fc->n_levels; lev++) {
		sw->fab_lvl_at[lev] = (uint8_t)k;
		for (l = 0; l < fc->n_links; l++)
			if (fc->level[l] == lev) {
				sw->fab_lvl_lk[k] = (uint16_t)l;
				sw->fab_lvl_port[k++] = fab_link_port(fc, l);
			}
	}
	sw->fab_lvl_at[fc->n_levels] = (uint8_t)k;
	for (l = 0; l < fc->n_ports && l < EMU_MAX_PORTS; l++)
		if (fc->port_leaf[l] != FAB_NONE)
			sw->fab_dests[sw->fab_n_dests++] = (uint16_t)l;
	emu_fab_links_up(sw);
	return 0;
}

void
emu_switch_fabric_free(struct emu_switch *sw)
{
	if (sw->fab_rt != NULL) {
		rte_free(sw->fab_rt->flowlets);
		rte_free(sw->fab_rt->hash_memo);
		rte_free(sw->fab_rt->res);
	}
	rte_free(sw->fab_rt);
	sw->fab_rt = NULL;
}

static inline void
emu_fab_update(struct emu_switch *sw, unsigned int l)
{
	sw->fab_ev[l] = emu_tm_port_next_event_ns(sw->tm, fab_link_port(sw->fab, l));
}

/* Link @p l changed (a packet enqueued, a pause): its next event is recomputed before the
 * event loop next looks at it. */
static inline void
emu_fab_dirty(struct emu_switch *sw, unsigned int l)
{
	sw->fab_dirty |= 1ULL << l;
}

static void
emu_fab_clean(struct emu_switch *sw)
{
	uint64_t d = sw->fab_dirty;

	while (d != 0) {
		unsigned int l = (unsigned int)__builtin_ctzll(d);

		d &= d - 1;
		emu_fab_update(sw, l);
	}
	sw->fab_dirty = 0;
}

/* Packet @p m goes onto link @p l at @p t_ns (its arrival at the link's switch). */
static inline void
emu_fab_hop(struct emu_switch *sw, unsigned int l, struct rte_mbuf *m, uint64_t t_ns)
{
	const struct fab_link_cfg *lc = &sw->fab->links[l];
	uint16_t port = fab_link_port(sw->fab, l);
	uint64_t *ctr = sw->fab_link_ctr[l];

	if (lc->loss > 0 && emu_rng_uniform(&sw->fab_rng) < lc->loss) {
		emu_drop(&sw->dropper, m, sw->fab_reason_base + l * FAB_LINK_CTR_MAX +
			 FAB_LINK_CTR_DROP_LOSS, &ctr[FAB_LINK_CTR_DROP_LOSS]);
		return;
	}
	ctr[FAB_LINK_CTR_ROUTED] += 1;
	/* nothing reaches the link earlier than t: its queue is exact at t (advance, enqueue) */
	emu_tm_arrive(sw->tm, port, m, t_ns, &sw->tm_rng);
	emu_fab_dirty(sw, l);
}

/* No link up towards the packet's leaf at fabric switch @p s. */
static void
emu_fab_no_path(struct emu_switch *sw, unsigned int s, struct rte_mbuf *m)
{
	const struct fab_cfg *fc = sw->fab;

	emu_drop(&sw->dropper, m, sw->fab_reason_base + fc->n_links * FAB_LINK_CTR_MAX +
		 s * FAB_SW_CTR_MAX + FAB_SW_CTR_DROP_NO_PATH,
		 &sw->fab_sw_ctr[s][FAB_SW_CTR_DROP_NO_PATH]);
}

/* Packet @p m enters the fabric at leaf @p a towards leaf @p b; @p hop_in its first hop's
 * ingress side (the real port: real PFC to the NIC; none for virtual senders). */
static void
emu_fab_enter_at(struct emu_switch *sw, struct rte_mbuf *m, unsigned int a, unsigned int b,
		 uint16_t hop_in, uint64_t now_ns)
{
	struct emu_pkt_meta *meta = emu_meta(m);
	uint16_t l;

	l = fab_route(sw->fab, sw->fab_rt, sw->tm, a, b, meta, now_ns, &sw->fab_rng);
	if (l == FAB_NONE) {
		emu_fab_no_path(sw, a, m);
		return;
	}
	meta->hop_in = hop_in;
	meta->flags |= EMU_META_HOP;
	meta->trace.path = (uint8_t)(l + 1u);
	emu_fab_hop(sw, l, m, now_ns);
}

bool
emu_switch_fabric_enter(struct emu_switch *sw, struct rte_mbuf *m, uint64_t now_ns)
{
	const struct fab_cfg *fc = sw->fab;
	struct emu_pkt_meta *meta = emu_meta(m);
	unsigned int a, b;

	/* frames rocemu creates and packets between ports of one leaf go straight to the port */
	if (fc == NULL || meta->in_port >= fc->n_ports || meta->out_port >= fc->n_ports)
		return false;
	a = fc->port_leaf[meta->in_port];
	b = fc->port_leaf[meta->out_port];
	if (a == FAB_NONE || b == FAB_NONE || a == b)
		return false;
	emu_fab_enter_at(sw, m, a, b, meta->in_port, now_ns);
	return true;
}

/*
 * The leading packets of @p pkts (@p n, all arrived at @p now_ns on one real port) that enter
 * the fabric at a leaf whose choice is ECMP, onto links without loss: routed, then handed to
 * the TM in one call that takes each link's packets together (emu_tm_enqueue_grouped()), when
 * the TM can prove that gives what emu_switch_fabric_enter() packet by packet would, else
 * packet by packet. Returns how many it took; 0 when the first is not such a packet.
 */
uint16_t
emu_switch_fabric_enter_run(struct emu_switch *sw, struct rte_mbuf **pkts, uint16_t n,
			    uint64_t now_ns)
{
	const struct fab_cfg *fc = sw->fab;
	uint16_t ports[EMU_BURST];
	uint16_t k;

	struct fab_rt *rt = sw->fab_rt;
	uint32_t pair = UINT32_MAX; /* the (in, out) ports the checks below were made for */
	const uint8_t *up = NULL;    /* their leaves' next hops up, when the memo may be used */
	unsigned int a = 0, b = 0, n_up = 0;

	if (fc == NULL || sw->general_only)
		return 0;
	for (k = 0; k < n && k < EMU_BURST; k++) {
		struct emu_pkt_meta *meta = emu_meta(pkts[k]);
		uint16_t l;

		/* what emu_switch_enqueue() hands to emu_switch_fabric_enter(), entering it */
		if ((meta->flags & (EMU_META_PARSED | EMU_META_MACCTL)) != EMU_META_PARSED ||
		    meta->pkt.cls == ROCE_CLASS_MAC_CONTROL)
			break;
		if (((uint32_t)meta->in_port | (uint32_t)meta->out_port << 16) != pair) {
			/* a burst's packets mostly share their ports: checked once per pair */
			if (meta->in_port >= fc->n_ports || meta->out_port >= fc->n_ports)
				break;
			a = fc->port_leaf[meta->in_port];
			b = fc->port_leaf[meta->out_port];
			if (a == FAB_NONE || b == FAB_NONE || a == b ||
			    fc->sw[a].mode != FAB_ROUTE_ECMP || fc->sw[a].has_spray_match ||
			    fc->sw[a].hash.res_buckets != 0)
				break;
			pair = (uint32_t)meta->in_port | (uint32_t)meta->out_port << 16;
			/* fab_route()'s inline case, as of now (links_up does not change here) */
			n_up = rt->n_up[a][b];
			up = rt->up_of[a][b] == rt->links_up && n_up > 1 && rt->hash_memo != NULL ?
			     rt->up[a][b] : NULL;
		}
		/* ECMP: a function of the packet alone, so routing them all first is exact */
		l = likely(up != NULL) ? fab_memo_pick(rt, &meta->pkt, a, up, n_up) : FAB_NONE;
		if (l == FAB_NONE)
			l = fab_route_any(fc, rt, sw->tm, a, b, meta, now_ns, &sw->fab_rng);
		if (l == FAB_NONE || (sw->fab_lossy >> l & 1))
			break;
		meta->hop_in = meta->in_port;
		meta->flags |= EMU_META_HOP;
		meta->trace.path = (uint8_t)(l + 1u);
		ports[k] = fab_link_port(fc, l);
	}
	if (k == 0)
		return 0;
	if (k < 2 || !emu_tm_enqueue_grouped(sw->tm, ports, pkts, k, now_ns, &sw->tm_rng)) {
		/* one by one, as emu_switch_enqueue() would (each enters: see the loop) */
		for (n = 0; n < k; n++)
			emu_switch_fabric_enter(sw, pkts[n], now_ns);
		return k;
	}
	for (n = 0; n < k; n++) {
		unsigned int l = ports[n] - fc->n_ports;

		sw->fab_link_ctr[l][FAB_LINK_CTR_ROUTED] += 1;
		emu_fab_dirty(sw, l);
	}
	return k;
}

void
emu_switch_fabric_enter_virtual(struct emu_switch *sw, struct rte_mbuf *m, unsigned int leaf,
				uint64_t now_ns)
{
	uint16_t out = emu_meta(m)->out_port;
	unsigned int b = sw->fab->port_leaf[out];

	if (b == leaf) {
		/* a sender beside the port: straight into its queue */
		emu_tm_arrive(sw->tm, out, m, now_ns, &sw->tm_rng);
		return;
	}
	emu_fab_enter_at(sw, m, leaf, b, EMU_PORT_NONE, now_ns);
}

/* Packet @p m left link @p l at its ts_ns: into the next link, or its real port's TM. */
static inline void
emu_fab_arrive(struct emu_switch *sw, unsigned int l, struct rte_mbuf *m)
{
	const struct fab_cfg *fc = sw->fab;
	struct emu_pkt_meta *meta = emu_meta(m);
	unsigned int s = fc->links[l].to, d = fc->port_leaf[meta->out_port];
	uint64_t t = meta->ts_ns;
	uint16_t next;

	meta->hop_in = fab_link_port(fc, l);
	meta->flags |= EMU_META_HOP;
	if (s == d) {
		emu_tm_arrive(sw->tm, meta->out_port, m, t, &sw->tm_rng);
		return;
	}
	next = fab_route(fc, sw->fab_rt, sw->tm, s, d, meta, t, &sw->fab_rng);
	if (next == FAB_NONE) {
		emu_fab_no_path(sw, s, m);
		return;
	}
	if (sw->trace) {
		/* the route after the first link, as far as the trace has room */
		unsigned int k = 0;

		while (k < RTE_DIM(meta->trace.via) && meta->trace.via[k] != 0)
			k++;
		if (k < RTE_DIM(meta->trace.via))
			meta->trace.via[k] = (uint8_t)(next + 1u);
	}
	emu_fab_hop(sw, next, m, t);
}

void
emu_switch_fabric_pause(struct emu_switch *sw, const struct emu_tm_pfc_frame *f, uint64_t now_ns)
{
	static const uint16_t opcode_pfc = 0x0101, opcode_pause = 0x0001;

	emu_tm_pause_rx(sw->tm, f->port, now_ns, f->pause ? opcode_pause : opcode_pfc,
			f->pause ? 0 : f->vector, f->quanta, &sw->tm_rng);
	emu_fab_dirty(sw, f->port - sw->fab->n_ports);
}

/*
 * Event by event (fabrics whose paths merge from different depths): the link with the
 * earliest event hands over what leaves it before any other link's next event (t2); until
 * then nothing else happens in the fabric, so each next hop, whose own next event is not
 * before t2, is exact at the packets' arrival.
 */
static void
emu_fab_advance_events(struct emu_switch *sw, uint64_t now_ns)
{
	const struct fab_cfg *fc = sw->fab;
	struct rte_mbuf *burst[EMU_BURST];
	unsigned int l, best;
	uint64_t t, t2, until;
	uint16_t n, i;

	for (;;) {
		emu_fab_clean(sw);
		t = t2 = UINT64_MAX;
		best = 0;
		for (l = 0; l < fc->n_links; l++) {
			if (sw->fab_ev[l] < t) {
				t2 = t;
				t = sw->fab_ev[l];
				best = l;
			} else if (sw->fab_ev[l] < t2) {
				t2 = sw->fab_ev[l];
			}
		}
		if (t > now_ns)
			break;
		until = RTE_MIN(now_ns, t2);
		n = emu_tm_dequeue(sw->tm, fab_link_port(fc, best), until, burst, EMU_BURST,
				   &sw->tm_rng);
		for (i = 0; i < n; i++)
			emu_fab_arrive(sw, best, burst[i]);
		/* queues that crossed XOFF or XON pause or resume the link before them now */
		if (sw->fab_pfc)
			emu_switch_send_pfc(sw, n > 0 ? emu_meta(burst[n - 1])->ts_ns : t);
		emu_fab_update(sw, best);
		/* an event that changed nothing (e.g. a PFC refresh already sent) is not taken
		 * again at the same time */
		if (sw->fab_ev[best] <= t && n == 0)
			sw->fab_ev[best] = t + 1;
	}
}

/*
 * The departures of one level's links @p lk (@p n, their ports @p ports) that left by @p now_ns,
 * in time order, ties by position in @p lk, each taken off its wire when its turn comes (when a
 * wire was full, that lets the next packet start: at that point). Only the links with such a
 * departure are compared: a link's wire gets no packet while its level is merged (nothing is
 * enqueued there, and what a taken departure lets start is seen at its head).
 */
static void
emu_fab_merge(struct emu_switch *sw, const uint16_t *lk, const uint16_t *ports, unsigned int n,
	      uint64_t now_ns)
{
	uint64_t head[FAB_MAX_LINKS], t;
	uint8_t act[FAB_MAX_LINKS]; /* positions in lk of the links in head[], in order */
	unsigned int i, k, na = 0;
	struct rte_mbuf *m;

	for (i = 0; i < n; i++) {
		t = emu_tm_head_departure_ns(sw->tm, ports[i]);
		if (t <= now_ns) {
			head[na] = t;
			act[na++] = (uint8_t)i;
		}
	}
	while (na > 0) {
		t = head[0];
		k = 0;
		for (i = 1; i < na; i++)
			if (head[i] < t) {
				t = head[i];
				k = i;
			}
		i = act[k];
		m = emu_tm_pop_departed(sw->tm, ports[i], now_ns, &sw->tm_rng);
		head[k] = emu_tm_head_departure_ns(sw->tm, ports[i]);
		if (head[k] > now_ns) {
			/* done with that link: the others keep their order */
			na--;
			memmove(&head[k], &head[k + 1], (na - k) * sizeof(head[0]));
			memmove(&act[k], &act[k + 1], (na - k) * sizeof(act[0]));
		}
		if (m == NULL)
			continue;
		emu_fab_arrive(sw, lk[i], m);
		if (sw->fab_pfc && emu_tm_pfc_pending(sw->tm))
			emu_switch_send_pfc(sw, emu_meta(m)->ts_ns);
	}
}

/* The arrivals out[0 .. @p got - 1] not yet delivered (NULL: delivered), cnt[p] of them for
 * real port p: each port's in their order, into its TM in one call, the ports in turn. */
static void
emu_fab_deliver(struct emu_switch *sw, struct rte_mbuf **out, const uint16_t *cnt,
		struct rte_mbuf **sorted, uint16_t *pos, unsigned int got)
{
	const unsigned int n_ports = sw->fab->n_ports;
	unsigned int p, k, at = 0;

	for (p = 0; p < n_ports; p++) {
		pos[p] = (uint16_t)at;
		at += cnt[p];
	}
	if (at == 0)
		return;
	for (k = 0; k < got; k++)
		if (out[k] != NULL) {
			uint16_t o = emu_meta(out[k])->out_port;

			sorted[pos[o]++] = out[k];
			out[k] = NULL;
		}
	for (p = 0, at = 0; p < n_ports; at += cnt[p], p++)
		if (cnt[p] > 0)
			emu_tm_arrive_run(sw->tm, (uint16_t)p, &sorted[at], cnt[p], true,
					  &sw->tm_rng);
}

/*
 * The departures of the last level's links @p lk (@p n, their ports @p ports) that left by
 * @p now_ns, when emu_tm_arrivals_calm() says their arrivals at the real ports touch only the
 * state of the port each arrives at, and no wire of the level is full: returns false (having
 * done nothing) otherwise. Then what emu_fab_merge() does one packet at a time comes out the
 * same taken in bulk: the departures in its order (emu_tm_merge_departed(), which starts
 * nothing: no wire was full), each port's arrivals in that order (emu_tm_arrive_run()), the
 * ports one after the other. No PFC frame is sent meanwhile, as none can become due.
 */
static bool
emu_fab_merge_last(struct emu_switch *sw, const uint16_t *lk, const uint16_t *ports,
		   unsigned int n, uint64_t now_ns)
{
	const struct fab_cfg *fc = sw->fab;
	struct rte_mbuf *out[EMU_BURST * 2], *sorted[EMU_BURST * 2];
	uint8_t from[EMU_BURST * 2];
	uint16_t cnt[EMU_MAX_PORTS], pos[EMU_MAX_PORTS];
	struct emu_tm_sum sum = { 0, 0, 0 };
	unsigned int k, got;

	if (sw->general_only || !emu_tm_departed_sum(sw->tm, ports, n, now_ns, &sum))
		return false;
	if (sum.pkts == 0)
		return true;
	if (!emu_tm_arrivals_calm(sw->tm, sw->fab_dests, sw->fab_n_dests, ports, n, &sum))
		return false;
	while ((got = emu_tm_merge_departed(sw->tm, ports, n, now_ns, out, from,
					    RTE_DIM(out))) > 0) {
		memset(cnt, 0, sizeof(cnt[0]) * fc->n_ports);
		for (k = 0; k < got; k++) {
			struct emu_pkt_meta *meta = emu_meta(out[k]);
			unsigned int l = lk[from[k]];

			meta->hop_in = fab_link_port(fc, l);
			meta->flags |= EMU_META_HOP;
			/* always so on a last level: its links end at their packets' leaves (fab.h
			 * level_last); one that did not would go the general way, after those
			 * before it */
			if (unlikely(fc->links[l].to != fc->port_leaf[meta->out_port])) {
				emu_fab_deliver(sw, out, cnt, sorted, pos, k);
				memset(cnt, 0, sizeof(cnt[0]) * fc->n_ports);
				emu_fab_arrive(sw, l, out[k]);
				out[k] = NULL;
				if (sw->fab_pfc && emu_tm_pfc_pending(sw->tm))
					emu_switch_send_pfc(sw, meta->ts_ns);
				continue;
			}
			cnt[meta->out_port]++;
		}
		emu_fab_deliver(sw, out, cnt, sorted, pos, got);
	}
	return true;
}

/*
 * Level by level (leaf-spine and every fabric whose links are fed from one depth): the links
 * of level k have all their input up to @p now_ns (from the ports, or from level k - 1, done
 * before), so each is advanced to now; their departures are merged in time order (the head of
 * every wire) and each goes on to its next hop at its exact arrival, where nothing earlier is
 * still to come. PFC between hops is applied at the departure that crossed the threshold;
 * the link it pauses has already been advanced to now, so inside the fabric a pause takes
 * effect at the next call (live: the next poll; replay: the next event, which the switch's
 * next event time includes).
 */
static void
emu_fab_advance_levels(struct emu_switch *sw, uint64_t now_ns)
{
	const struct fab_cfg *fc = sw->fab;
	unsigned int lev, i;

	for (lev = 0; lev < fc->n_levels; lev++) {
		const unsigned int at = sw->fab_lvl_at[lev], n = sw->fab_lvl_at[lev + 1] - at;
		const uint16_t *lk = &sw->fab_lvl_lk[at], *ports = &sw->fab_lvl_port[at];

		for (i = 0; i < n; i++)
			emu_tm_advance(sw->tm, ports[i], now_ns, &sw->tm_rng);
		if (!fc->level_last[lev] || !emu_fab_merge_last(sw, lk, ports, n, now_ns))
			emu_fab_merge(sw, lk, ports, n, now_ns);
	}
	if (sw->fab_pfc)
		emu_switch_send_pfc(sw, now_ns);
	sw->fab_dirty = 0;
}

void
emu_switch_fabric_advance(struct emu_switch *sw, uint64_t now_ns)
{
	if (sw->fab == NULL)
		return;
	/* links_up is current: a link changes only by a profile (emu_switch_fabric_touch()) */
	if (sw->fab->levels_exact)
		emu_fab_advance_levels(sw, now_ns);
	else
		emu_fab_advance_events(sw, now_ns);
}

/* A profile changed a link (rate, link down or up): its next event moves. */
void
emu_switch_fabric_touch(struct emu_switch *sw, uint16_t tm_port)
{
	if (sw->fab != NULL && tm_port >= sw->fab->n_ports &&
	    tm_port < sw->fab->n_ports + sw->fab->n_links) {
		emu_fab_dirty(sw, tm_port - sw->fab->n_ports);
		emu_fab_links_up(sw);
	}
}

void
emu_switch_fabric_discard(struct emu_switch *sw)
{
	struct rte_mbuf *burst[EMU_BURST];
	unsigned int l;
	uint16_t n;

	if (sw->fab == NULL)
		return;
	for (l = 0; l < sw->fab->n_links; l++) {
		while ((n = emu_tm_dequeue(sw->tm, fab_link_port(sw->fab, l), UINT64_MAX / 2, burst,
					   EMU_BURST, &sw->tm_rng)) > 0)
			emu_switch_drop_bulk(sw, burst, n, EMU_RUN_CTR_DROP_DISCARDED_AT_EXIT);
		sw->fab_ev[l] = UINT64_MAX;
	}
}
