/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * reorder: a PSN-sorting reorder buffer in front of a stock RC NIC (egress only), for fabrics
 * that spray a QP over paths of different delay: an RC responder drops every out-of-sequence
 * packet and NAKs the hole (go-back-N), so this stage sorts each QP's requests back into PSN
 * order first. Per (destination IP, BTH DestQP) of RC/UC requests (SEND, RDMA WRITE, READ
 * request, atomics) it keeps the expected PSN E; PSNs compare mod 2^24 with the IB spec's half
 * window, d = (psn - E) mod 2^24:
 *   d = 0        in order: goes on, E = psn + 1, held packets now in sequence follow it
 *   d < 2^23     ahead: held, sorted by PSN within its QP
 *   else         behind (duplicate, go-back-N retransmission): goes on at once
 * Everything else (ACK/NAK, READ responses, CNP, UD, non-RoCE, other ports) passes through.
 * E starts at the first packet of a QP ("start": "first") or a fixed PSN. After a READ request
 * the next PSN depends on the path MTU (READ PSN + its response count): E is learned again.
 * No packet waits longer than timeout_us: then its QP gives up the hole before its lowest held
 * PSN (E jumps there, the NIC NAKs the gap as it would have) and the held packets leave in PSN
 * order up to the next hole.
 *
 * Memory is sized at init: max_held_pkts nodes, linked per QP in PSN order (inserted from the
 * top: arrivals mostly increase) and all in arrival order (its head: next timeout, oldest QP).
 * The QP table is a fixed array of 8-way buckets on emu_ip_qpn_sig(), hand-written as cnp's and
 * impair's rather than rte_hash: no EAL memory, a few ns per lookup, and the victim choice (an
 * idle QP, which forgets its E: qps_evicted; else the least recently used, flushed) is ours.
 * In front of it a direct-mapped hint table (one slot per entry, by the QPN plus a hash of the
 * address) names the entry a QP had last: when that entry still is the QP's, the
 * signature and the bucket scan are skipped, and an in-order request of a QP with nothing held
 * or due goes on after one compare (the common case). A stale or shared slot only means the
 * signature lookup; the entry found and its LRU stamp are the same either way.
 *
 * process() may write only into the slots of packets it has handled. Released packets that do
 * not fit go to a FIFO of packets due now (the ready ring), handed over by release() at the
 * same time; in-order arrivals of a QP with packets there queue behind them, so each QP's
 * order holds. Packets released in process() leave with the departure time of the packet that
 * released them. The trace gets the time held (delay_ns) and the delayed mark.
 *
 * Its configuration (keys, init, needs, free) is in reorder_config.c; the layouts both share in
 * reorder_priv.h.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/base/emu_hash.h"
#include "lib/base/emu_json.h"
#include "lib/base/emu_keys.h"
#include "lib/stage/emu_match.h"
#include <rte_prefetch.h>

#include "stages.h"
#include "reorder_priv.h"

#define REORDER_FOREACH_CTR(_) \
	_(PASSED_IN_ORDER, "passed_in_order") \
	_(PASSED_LATE, "passed_late") \
	_(PASSED_THROUGH, "passed_through") \
	_(HELD, "held") \
	_(RELEASED_IN_ORDER, "released_in_order") \
	_(RELEASED_TIMEOUT, "released_timeout") \
	_(RELEASED_FLUSH, "released_flush") \
	_(TIMEOUTS, "timeouts") \
	_(FLUSH_FULL, "flush_full") \
	_(DROP_REORDER_FULL, "drop_reorder_full") \
	_(QPS, "qps") \
	_(QPS_EVICTED, "qps_evicted") \
	_(MAX_DEPTH, "max_depth")

enum reorder_ctr {
#define REORDER_CTR_ENUM(e, s) REORDER_CTR_##e,
	REORDER_FOREACH_CTR(REORDER_CTR_ENUM)
#undef REORDER_CTR_ENUM
	REORDER_CTR_MAX
};

static const char *const reorder_ctr_names[] = {
#define REORDER_CTR_NAME(e, s) s,
	REORDER_FOREACH_CTR(REORDER_CTR_NAME)
#undef REORDER_CTR_NAME
};

/* Where the packets of one process() or release() call go. */
struct reorder_out {
	struct rte_mbuf **pkts;
	uint16_t kept;   /* written so far */
	uint16_t limit;  /* slots that may be written: [0, limit) */
	uint64_t ts_ns;  /* when released packets leave */
	uint64_t now_ns;
	uint64_t *ctr;
	struct emu_burst_ctx *ctx;
};

#define reorder_dist(psn, expected) (((psn) - (expected)) & REORDER_PSN_MASK)
#define reorder_ahead(d) ((d) != 0 && (d) < REORDER_PSN_HALF)

/* Is request @p psn (below 2^24) the one QP @p q expects, with nothing of it held or in the
 * ready ring and E known? (sync 0, n_held 0, n_ready 0, E = psn; two compares.) */
static inline bool
reorder_in_order_idle(const struct reorder_qp *q, uint32_t psn)
{
	uint64_t e_h, r_s;

	memcpy(&e_h, &q->expected, sizeof(e_h));
	memcpy(&r_s, &q->n_ready, sizeof(r_s));
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	return e_h == (uint64_t)psn && r_s == 0;
#else
	return e_h == (uint64_t)psn << 32 && r_s == 0;
#endif
}

/* E after request @p psn (@p m) went on in order; after a READ it is learned again. */
static inline void
reorder_advance(struct reorder_qp *q, struct rte_mbuf *m, uint32_t psn)
{
	q->sync = emu_meta(m)->pkt.opcode == (ROCE_TRANSPORT_RC | ROCE_OP_RDMA_READ_REQUEST);
	q->expected = (psn + 1) & REORDER_PSN_MASK;
}

/* @p m of QP @p qi goes on: into the output if it has room and nothing of that QP is in the
 * ready ring, else to the ring (full, it drops: only if release() is never called). */
static void
reorder_emit(struct reorder_priv *rp, struct reorder_out *o, uint32_t qi, struct rte_mbuf *m)
{
	struct reorder_qp *q = &rp->qps[qi];

	if (q->n_ready == 0 && o->kept < o->limit) {
		o->pkts[o->kept++] = m;
		return;
	}
	if (rp->ready_n > rp->ready_mask) {
		emu_stage_drop(o->ctx, m, REORDER_CTR_DROP_REORDER_FULL);
		return;
	}
	if (rp->ready_n == 0)
		rp->ready_since_ns = o->now_ns;
	rp->ready[(rp->ready_head + rp->ready_n++) & rp->ready_mask] =
		(struct reorder_ready){ .m = m, .qp = qi, .gen = q->gen };
	q->n_ready++;
}

/* Release QP @p qi's held packets in sequence (counted in @p ctr_idx), or with @p all every
 * one of them in PSN order (a flush when the buffer or the table is full); E follows them. */
static void
reorder_run(struct reorder_priv *rp, struct reorder_out *o, uint32_t qi, unsigned int ctr_idx,
	    bool all)
{
	struct reorder_qp *q = &rp->qps[qi];

	while (q->n_held > 0) {
		uint32_t k = rp->nodes[reorder_qs(rp, qi)].next, d;
		struct reorder_node *nd = &rp->nodes[k];

		if (q->sync || all) {
			q->expected = nd->psn;
			q->sync = false;
		}
		d = reorder_dist(nd->psn, q->expected);
		if (reorder_ahead(d))
			break;
		rp->nodes[nd->prev].next = nd->next; /* off both lists, onto the free list */
		rp->nodes[nd->next].prev = nd->prev;
		rp->nodes[nd->older].newer = nd->newer;
		rp->nodes[nd->newer].older = nd->older;
		nd->next = rp->free_head;
		rp->free_head = k;
		rp->n_used--;
		q->n_held--;
		if (d == 0)
			reorder_advance(q, nd->m, nd->psn);
		o->ctr[ctr_idx]++;
		/* it leaves now (from the ring: at the same time), behind what released it */
		emu_meta(nd->m)->ts_ns = o->ts_ns;
		emu_meta(nd->m)->trace.marks |= EMU_TRACE_DELAYED;
		emu_meta(nd->m)->trace.delay_ns += (uint32_t)RTE_MIN(o->now_ns - nd->t_hold_ns,
								     (uint64_t)UINT32_MAX);
		reorder_emit(rp, o, qi, nd->m);
	}
}

/* Hold @p m (PSN @p psn, ahead) for QP @p qi; the caller made room. */
static void
reorder_hold(struct reorder_priv *rp, struct reorder_out *o, uint32_t qi, struct rte_mbuf *m,
	     uint32_t psn)
{
	struct reorder_qp *q = &rp->qps[qi];
	uint32_t k = rp->free_head, qs = reorder_qs(rp, qi), arr = REORDER_ARR(rp);
	struct reorder_node *nd = &rp->nodes[k], *x = rp->nodes;
	uint32_t at = x[qs].prev, d = reorder_dist(psn, q->expected);

	rp->free_head = nd->next;
	rp->n_used++;
	/* after the last held PSN not above it (equal PSNs stay in arrival order) */
	while (at != qs && reorder_dist(x[at].psn, q->expected) > d)
		at = x[at].prev;
	*nd = (struct reorder_node){ .m = m, .t_hold_ns = o->now_ns, .psn = psn, .qp = qi,
				     .prev = at, .next = x[at].next, .older = x[arr].older,
				     .newer = arr };
	x[nd->next].prev = k;
	x[at].next = k;
	x[nd->older].newer = k;
	x[arr].older = k;
	if (++q->n_held > rp->max_depth) {
		o->ctr[REORDER_CTR_MAX_DEPTH] += q->n_held - rp->max_depth;
		rp->max_depth = q->n_held;
	}
	o->ctr[REORDER_CTR_HELD]++;
}

/* Slot of (@p ip, @p qpn) in the hint table: the QPN plus a multiplicative hash of the
 * address words folded (a few instructions; a collision only costs the signature lookup).
 * A NIC numbers its QPs in sequence, so the QPs towards one address share cache lines. */
static inline uint32_t
reorder_hint(const struct reorder_priv *rp, const uint8_t *ip, uint32_t qpn)
{
	uint64_t a, b;
	uint32_t x;

	memcpy(&a, ip, 8);
	memcpy(&b, ip + 8, 8);
	a ^= b;
	x = ((uint32_t)a ^ (uint32_t)(a >> 32)) * 0x9e3779b1u;
	return (x + qpn) & rp->hint_mask;
}

/* Whether entry @p q is that of (@p ip, @p qpn) (a free entry is nobody's). */
static inline bool
reorder_qp_is(const struct reorder_qp *q, const uint8_t *ip, uint32_t qpn)
{
	uint64_t a, b, c, d;

	memcpy(&a, ip, 8);
	memcpy(&b, ip + 8, 8);
	memcpy(&c, q->ip, 8);
	memcpy(&d, q->ip + 8, 8);
	return q->sig != 0 && q->qpn == qpn && ((a ^ c) | (b ^ d)) == 0;
}

/* The entry of (@p ip, @p qpn): found, or a new one in a free or idle entry of its bucket, or
 * (policy flush) the least recently used busy one, flushed. REORDER_NIL: full, drop. */
static uint32_t
reorder_qp_get(struct reorder_priv *rp, struct reorder_out *o, const uint8_t *ip, uint32_t qpn,
	       uint32_t hint)
{
	uint32_t sig = emu_ip_qpn_sig(ip, qpn), base = (sig & rp->bucket_mask) * REORDER_WAYS;
	uint32_t victim = REORDER_NIL, busy = REORDER_NIL, i;
	struct reorder_qp *q;

	for (i = base; i < base + REORDER_WAYS; i++) {
		q = &rp->qps[i];
		if (q->sig == sig && q->qpn == qpn && memcmp(q->ip, ip, 16) == 0) {
			q->used = ++rp->stamp;
			rp->hints[hint] = i + 1;
			return i;
		}
		if (q->sig != 0 && q->n_held > 0) {
			if (busy == REORDER_NIL || q->used < rp->qps[busy].used)
				busy = i;
		} else if (victim == REORDER_NIL || q->sig == 0 ||
			   (rp->qps[victim].sig != 0 && q->used < rp->qps[victim].used)) {
			victim = i;
		}
	}
	if (victim == REORDER_NIL) {
		if (rp->policy_drop)
			return REORDER_NIL;
		reorder_run(rp, o, busy, REORDER_CTR_RELEASED_FLUSH, true);
		o->ctr[REORDER_CTR_FLUSH_FULL]++;
		victim = busy;
	}
	q = &rp->qps[victim];
	if (q->sig != 0)
		o->ctr[REORDER_CTR_QPS_EVICTED]++;
	else
		rp->n_qps++;
	*q = (struct reorder_qp){ .qpn = qpn, .sig = sig, .expected = rp->start_psn,
				  .gen = q->gen + 1, .sync = rp->start_first, .used = ++rp->stamp };
	rp->nodes[reorder_qs(rp, victim)].next = rp->nodes[reorder_qs(rp, victim)].prev =
		reorder_qs(rp, victim);
	memcpy(q->ip, ip, 16);
	o->ctr[REORDER_CTR_QPS]++;
	rp->hints[hint] = victim + 1;
	return victim;
}

/* A request packet of QP (@p ip, DestQP @p qpn) with PSN @p psn; its entry @p qi when the
 * hint table found it (stamped already), else REORDER_NIL. */
static void
reorder_request(struct reorder_priv *rp, struct reorder_out *o, struct rte_mbuf *m,
		const uint8_t *ip, uint32_t qpn, uint32_t psn, uint32_t hint, uint32_t qi)
{
	struct reorder_qp *q;
	uint32_t d;

	for (;; qi = REORDER_NIL) {
		if (qi == REORDER_NIL)
			qi = reorder_qp_get(rp, o, ip, qpn, hint);
		if (qi == REORDER_NIL)
			break;
		q = &rp->qps[qi];
		if (q->sync) {
			q->expected = psn;
			q->sync = false;
		}
		d = reorder_dist(psn, q->expected);
		if (d == 0) {
			o->ctr[REORDER_CTR_PASSED_IN_ORDER]++;
			reorder_advance(q, m, psn);
			reorder_emit(rp, o, qi, m);
			if (q->n_held > 0)
				reorder_run(rp, o, qi, REORDER_CTR_RELEASED_IN_ORDER, false);
			return;
		}
		if (!reorder_ahead(d)) {
			o->ctr[REORDER_CTR_PASSED_LATE]++;
			reorder_emit(rp, o, qi, m);
			return;
		}
		if (rp->n_used < rp->max_held) {
			reorder_hold(rp, o, qi, m, psn);
			return;
		}
		if (rp->policy_drop)
			break;
		/* the oldest QP goes: frees a node; E of this QP may have moved past it */
		reorder_run(rp, o, reorder_oldest(rp)->qp, REORDER_CTR_RELEASED_FLUSH, true);
		o->ctr[REORDER_CTR_FLUSH_FULL]++;
	}
	emu_stage_drop(o->ctx, m, REORDER_CTR_DROP_REORDER_FULL);
}

static uint16_t
reorder_process(void *priv, struct rte_mbuf **pkts, uint16_t n, struct emu_burst_ctx *ctx)
{
	struct reorder_priv *rp = priv;
	uint64_t ctr[REORDER_CTR_MAX] = { 0 };
	struct reorder_out o = { .pkts = pkts, .now_ns = ctx->now_ns, .ctr = ctr, .ctx = ctx };
	uint32_t hints[REORDER_CHUNK];
	uint16_t kept = 0; /* o.kept while no reorder_request() runs */
	unsigned int c, i, k, end;

	for (c = 0; c < n; c += REORDER_CHUNK) {
		end = RTE_MIN((unsigned int)n, c + REORDER_CHUNK);
		/* decide first: the chunk's hint slots, the entries they name prefetched (a stale
		 * parse of a packet that is no request: no matter) */
		for (i = c; i < end; i++) {
			const struct roce_pkt *p = &emu_meta(pkts[i])->pkt;
			uint32_t qi;

			hints[i - c] = reorder_hint(rp, p->dst_ip, p->dest_qp);
			qi = rp->hints[hints[i - c]];
			if (qi != 0)
				rte_prefetch0(&rp->qps[qi - 1]);
		}
		for (i = c, k = 0; i < end; i++, k++) {
			struct rte_mbuf *m = pkts[i];
			struct emu_pkt_meta *meta = emu_meta(m);
			const struct roce_pkt *p = &meta->pkt;
			uint32_t qi;
			struct reorder_qp *q;

			if (!(meta->flags & EMU_META_PARSED) || p->cls != ROCE_CLASS_ROCEV2 ||
			    !rp->is_request[p->opcode] ||
			    !emu_stage_port_in(meta, true, rp->port_mask) ||
			    (rp->has_match &&
			     !emu_match_test(&rp->match, p, meta->in_port, meta->out_port, meta->prio,
					     0, o.now_ns))) {
				ctr[REORDER_CTR_PASSED_THROUGH]++;
				pkts[kept++] = m;
				continue;
			}
			/* the QP's entry by its hint (else by its signature, in reorder_request());
			 * read now: a request before it in the chunk may have set it */
			qi = rp->hints[hints[k]] - 1;
			if (qi != REORDER_NIL && !reorder_qp_is(&rp->qps[qi], p->dst_ip, p->dest_qp))
				qi = REORDER_NIL;
			if (qi != REORDER_NIL) {
				q = &rp->qps[qi];
				q->used = ++rp->stamp;
				/* the common case: in order, nothing of the QP held or due: it goes on */
				if (reorder_in_order_idle(q, p->psn)) {
					ctr[REORDER_CTR_PASSED_IN_ORDER]++;
					/* reorder_advance() with sync 0 as it is */
					if (unlikely(p->opcode == (ROCE_TRANSPORT_RC |
								   ROCE_OP_RDMA_READ_REQUEST)))
						q->sync = 1;
					q->expected = (p->psn + 1) & REORDER_PSN_MASK;
					pkts[kept++] = m;
					continue;
				}
			}
			o.kept = kept;
			o.limit = (uint16_t)(i + 1); /* the slots of the packets handled so far */
			o.ts_ns = meta->ts_ns;
			reorder_request(rp, &o, m, p->dst_ip, p->dest_qp, p->psn, hints[k], qi);
			kept = o.kept;
		}
	}
	for (c = 0; c < REORDER_CTR_MAX; c++)
		ctx->ctr[c] += ctr[c];
	return kept;
}

static uint64_t
reorder_next_due_ns(const void *priv)
{
	const struct reorder_priv *rp = priv;

	if (rp->ready_n > 0)
		return rp->ready_since_ns;
	if (rp->n_used == 0)
		return UINT64_MAX;
	return reorder_oldest(rp)->t_hold_ns + rp->timeout_ns;
}

/* The ready ring first (in order), then the holes whose oldest packet has waited long enough. */
static uint16_t
reorder_release(void *priv, struct rte_mbuf **pkts, uint16_t cap, struct emu_burst_ctx *ctx)
{
	struct reorder_priv *rp = priv;
	uint64_t ctr[REORDER_CTR_MAX] = { 0 };
	struct reorder_out o = { .pkts = pkts, .limit = cap, .ts_ns = ctx->now_ns,
				 .now_ns = ctx->now_ns, .ctr = ctr, .ctx = ctx };
	unsigned int c;

	if (reorder_next_due_ns(rp) > ctx->now_ns)
		return 0; /* the common case: nothing due */
	while (rp->ready_n > 0 && o.kept < cap) {
		struct reorder_ready *r = &rp->ready[rp->ready_head];

		rp->ready_head = (rp->ready_head + 1) & rp->ready_mask;
		rp->ready_n--;
		if (rp->qps[r->qp].gen == r->gen)
			rp->qps[r->qp].n_ready--;
		pkts[o.kept++] = r->m;
	}
	while (rp->ready_n == 0 && o.kept < cap && rp->n_used > 0 &&
	       reorder_oldest(rp)->t_hold_ns + rp->timeout_ns <= ctx->now_ns) {
		uint32_t qi = reorder_oldest(rp)->qp;
		struct reorder_qp *q = &rp->qps[qi];

		/* give up the hole before its lowest held PSN */
		q->expected = rp->nodes[rp->nodes[reorder_qs(rp, qi)].next].psn;
		q->sync = false;
		ctr[REORDER_CTR_TIMEOUTS]++;
		reorder_run(rp, &o, qi, REORDER_CTR_RELEASED_TIMEOUT, false);
	}
	for (c = 0; c < REORDER_CTR_MAX; c++)
		ctx->ctr[c] += ctr[c];
	return o.kept;
}

static uint64_t
reorder_held(const void *priv)
{
	const struct reorder_priv *rp = priv;

	return (uint64_t)rp->n_used + rp->ready_n;
}

static void
reorder_summary(const void *priv, char *buf, size_t len)
{
	const struct reorder_priv *rp = priv;

	snprintf(buf, len, "%" PRIu32 " QPs tracked, %" PRIu32 " packets held (%" PRIu32 " due), "
		 "at most %" PRIu32 " for one QP", rp->n_qps, rp->n_used, rp->ready_n,
		 rp->max_depth);
}

/* Without a match it reads the class, opcode, DestQP, PSN and destination address only. */
static enum emu_parse_need
reorder_parse_need(const void *priv)
{
	return ((const struct reorder_priv *)priv)->has_match ? EMU_PARSE_FULL : EMU_PARSE_QP;
}

const struct emu_stage_ops emu_stage_reorder = {
	.type = "reorder",
	.priv_size = sizeof(struct reorder_priv),
	.ctr_names = reorder_ctr_names,
	.n_ctr = REORDER_CTR_MAX,
	.keys = reorder_keys,
	.key_table = &reorder_key_table,
	.init = reorder_init,
	.needs = reorder_needs,
	.parse_need = reorder_parse_need,
	.process = reorder_process,
	.free = reorder_free,
	.held = reorder_held,
	.summary = reorder_summary,
	.next_due_ns = reorder_next_due_ns,
	.release = reorder_release,
};
