/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef EMU_TM_INT_H
#define EMU_TM_INT_H

/*
 * The traffic manager's internals, shared by its files: emu_tm.c (ports, buffer accounting,
 * ECN, the scheduler and the link: the per-packet path), emu_tm_config.c (the pipeline's
 * "tm" section), emu_tm_pfc.c (PFC/PAUSE received and sent, watchdog, storms), emu_tm_ctl.c
 * (profile changes, counters and state for reports), emu_tm_group.c (packets a fabric's hops
 * hand over: a burst spread over links, a level's departures merged), emu_tm_arrive.c (one
 * arrival at its own time, a port's time-ordered run). Not for use outside lib/tm.
 */

#include <jansson.h>
#include <rte_common.h>

#include "lib/base/emu_set.h"
#include "lib/tm/emu_tm.h"

#define EMU_TM_MAX_RATE_GBPS 1600.0
#define EMU_TM_MAX_DELAY_US 10000000.0 /* 10 s */
#define EMU_TM_MAX_KB (16 * 1024 * 1024)

enum { EMU_TM_SET_RATE, EMU_TM_SET_DELAY, EMU_TM_SET_BUFFER, EMU_TM_SET_LINK, EMU_TM_SET_STORM };

/* A fixed-capacity ring of mbuf pointers; single owner, so no atomics (rte_ring's
 * MP/MC machinery and its separate memzone buy nothing here). */
struct emu_tm_fifo {
	struct rte_mbuf **slots;
	uint32_t mask;
	uint32_t head; /* next to pop */
	uint32_t tail; /* next to push */
};

struct emu_tm_port {
	struct emu_tm_port_cfg cfg;
	/* Egress side */
	struct emu_tm_fifo q[EMU_TM_N_Q]; /* waiting for the link, one per priority + control */
	struct emu_tm_fifo wire;          /* serialised, waiting for departure (delay line) */
	uint32_t nonempty;                /* bit q: q[q] holds a packet (the scheduler's view) */
	uint64_t q_bytes[EMU_TM_N_Q];     /* raw frame bytes, for ECN and stats */
	uint64_t all_q_bytes;             /* their sum (the port's queue, for its maximum) */
	uint64_t q_cells[EMU_TM_N_Q];     /* shared-buffer bytes in cells (headroom excluded) */
	uint64_t max_q_bytes[EMU_TM_N_Q];
	uint64_t port_cells;              /* sum of q_cells */
	uint32_t port_pkts;               /* data packets queued (control queue excluded) */
	int64_t deficit[EMU_TM_N_PRIO];   /* DWRR */
	uint8_t rr;                       /* DWRR: queue whose turn it is */
	bool rr_fresh;                    /* DWRR: rr got its quantum for this turn */
	/* When the link finishes its current frame: ns plus picoseconds (0-999). Times are
	 * epoch-based nanoseconds, so a single picosecond counter would overflow 64 bits. */
	uint64_t link_free_ns;
	uint32_t link_free_ps;
	uint64_t busy_ps; /* exact; the busy_ns counter is derived from it */
	/* Received PFC/PAUSE: queue q may not start before pause_until_ns[q]. */
	uint64_t pause_until_ns[EMU_TM_N_PRIO];
	uint64_t pause_start_ns[EMU_TM_N_PRIO];
	uint64_t paused_ns[EMU_TM_N_PRIO]; /* closed pause intervals */
	/* Ingress side: lossless bytes that arrived here and are still queued somewhere. */
	uint64_t ing_bytes[EMU_TM_N_PRIO];
	uint64_t hr_cells[EMU_TM_N_PRIO];  /* headroom in use */
	bool xoff[EMU_TM_N_PRIO];
	uint64_t xoff_start_ns[EMU_TM_N_PRIO];
	uint64_t xoff_ns[EMU_TM_N_PRIO];   /* closed XOFF intervals */
	uint64_t refresh_ns[EMU_TM_N_PRIO]; /* re-send XOFF at this time */
	uint16_t pfc_pending;              /* priorities whose state must be sent */
	/* Profile-driven link state and PFC storm. */
	bool link_up;
	bool storm_on;
	uint16_t storm_vector;
	bool storm_pause;      /* 802.3x PAUSE frames instead of PFC */
	uint16_t storm_quanta;
	uint64_t storm_pps;
	uint64_t storm_t0_ns;  /* frame k of the storm is due at t0 + k * 1e9 / pps */
	uint64_t storm_k;
	uint64_t storm_next_ns;
	/* PFC watchdog, per priority */
	uint64_t wd_start_ns[EMU_TM_N_PRIO]; /* start of the current continuous pause */
	uint64_t wd_last_ns[EMU_TM_N_PRIO];  /* last ignored frame while tripped */
	bool wd_tripped[EMU_TM_N_PRIO];
	uint64_t ctr[EMU_TM_CTR_MAX];
	/* emu_tm_wire_ps() of the last frame (its length and the rate then): frames of one
	 * length follow each other, and the 64-bit division costs more than the rest. */
	uint32_t memo_len;
	uint64_t memo_rate_bps, memo_wire_ps;
};

struct emu_tm {
	struct emu_tm_hot hot; /* first: emu_tm_pfc_work() in emu_tm.h reads it */
	unsigned int n_ports;
	const struct emu_dropper *drop; /* the switch's drop path */
	uint32_t reason_base;           /* reason id of port 0's counter 0 */
	struct emu_tm_buffer_cfg buf;
	uint64_t used_cells; /* shared buffer in use */
	/* the configured buffer; buf.total_bytes is it less what other workers' replicas of the
	 * switch hold (emu_tm_buffer_others()), so one pool spans the workers */
	uint64_t buf_total_cfg;
	bool trace;          /* write the trace's queueing fields (emu_tm_set_trace()) */
	bool general_only;   /* no inner loops for alike packets (emu_tm_set_general_only()) */
	uint8_t lossless_of[EMU_TM_MAX_PORTS]; /* ports[i].cfg.lossless_mask (fixed at create),
						* packed: the per-packet lookup reads one byte */
	struct emu_tm_port ports[EMU_TM_MAX_PORTS];
};

/* Every TM drop: through the switch's drop path, counted in the port's counter @p reason. */
static inline void
emu_tm_drop(struct emu_tm *tm, uint16_t port, struct rte_mbuf *m, unsigned int reason)
{
	emu_drop(tm->drop, m, tm->reason_base + (uint32_t)port * EMU_TM_CTR_MAX + reason,
		 &tm->ports[port].ctr[reason]);
}

static inline uint32_t
emu_tm_fifo_count(const struct emu_tm_fifo *f)
{
	return f->tail - f->head;
}

static inline uint64_t
emu_tm_cells(const struct emu_tm_buffer_cfg *bc, uint32_t len)
{
	uint32_t cb = bc->cell_bytes;

	if ((cb & (cb - 1)) == 0) /* 1 (no cells) or a power of two: no division */
		return ((uint64_t)len + cb - 1) & ~(uint64_t)(cb - 1);
	return (uint64_t)(len + cb - 1) / cb * cb;
}

/*
 * emu_tm_enqueue()'s limits for @p cells more in data queue @p q of @p p, in its order: the
 * port's slots and bytes, the static queue limit, the shared buffer and its dynamic threshold
 * (Choudhury-Hahne: queue <= alpha x free shared buffer); a fabric link (own_buffer) has its
 * limit_bytes only, no share of the buffer. Returns the reason of the first that refuses
 * (EMU_TM_CTR_DROP_QUEUE_FULL or _BUFFER_FULL), EMU_TM_CTR_MAX when every one takes them.
 */
static inline unsigned int
emu_tm_limit(const struct emu_tm *tm, const struct emu_tm_port *p, unsigned int q,
	     uint64_t cells)
{
	if (p->port_pkts >= p->cfg.queue_pkts || p->port_cells + cells > p->cfg.limit_bytes ||
	    (!tm->buf.dynamic && p->q_cells[q] + cells > p->cfg.queue_limit_bytes))
		return EMU_TM_CTR_DROP_QUEUE_FULL;
	if (p->cfg.own_buffer)
		return EMU_TM_CTR_MAX;
	if (tm->used_cells + cells > tm->buf.total_bytes)
		return EMU_TM_CTR_DROP_BUFFER_FULL;
	if (tm->buf.dynamic && (double)(p->q_cells[q] + cells) >
				       tm->buf.alpha * (double)(tm->buf.total_bytes - tm->used_cells))
		return EMU_TM_CTR_DROP_QUEUE_FULL;
	return EMU_TM_CTR_MAX;
}

/*
 * Port @p p's link takes a frame of @p len bytes starting at @p start_ns + @p start_ps ps: the
 * link is free again at its finish (ns + ps). Returns the frame's wire time in ps (the port's
 * memo of the last length and rate spares the division).
 */
static inline uint64_t
emu_tm_link_take(struct emu_tm_port *p, uint64_t start_ns, uint32_t start_ps, uint32_t len)
{
	uint64_t sum_ps;

	if (len != p->memo_len || p->cfg.rate_bps != p->memo_rate_bps) {
		p->memo_len = len;
		p->memo_rate_bps = p->cfg.rate_bps;
		p->memo_wire_ps = emu_tm_wire_ps(len, p->cfg.rate_bps);
	}
	sum_ps = start_ps + p->memo_wire_ps;
	p->link_free_ns = start_ns + sum_ps / 1000;
	p->link_free_ps = (uint32_t)(sum_ps % 1000);
	return p->memo_wire_ps;
}

/*
 * Packet @p m (@p len bytes on the wire), admitted to port @p p's queue @p q at @p now_ns with
 * its buffer and ingress accounting done, joins the queue: its time, the trace's queueing
 * fields, the queue's bytes, the enqueue counters and the maximum queue lengths.
 */
static inline void
emu_tm_fifo_join(const struct emu_tm *tm, struct emu_tm_port *p, unsigned int q,
		 struct rte_mbuf *m, uint32_t len, uint64_t now_ns)
{
	struct emu_pkt_meta *meta = emu_meta(m);
	uint64_t qb = p->q_bytes[q];

	meta->ts_ns = now_ns;
	if (tm->trace) {
		meta->trace.t_enq_ns = now_ns;
		meta->trace.qdepth_bytes = (uint32_t)RTE_MIN(qb, (uint64_t)UINT32_MAX);
	}
	p->q[q].slots[p->q[q].tail++ & p->q[q].mask] = m;
	p->nonempty |= 1u << q;
	qb += len;
	p->q_bytes[q] = qb;
	p->all_q_bytes += len;
	p->ctr[EMU_TM_CTR_ENQ_PKTS] += 1;
	p->ctr[EMU_TM_CTR_ENQ_BYTES] += len;
	if (qb > p->max_q_bytes[q])
		p->max_q_bytes[q] = qb;
	if (p->all_q_bytes > p->ctr[EMU_TM_CTR_MAX_QUEUE_BYTES])
		p->ctr[EMU_TM_CTR_MAX_QUEUE_BYTES] = p->all_q_bytes;
}

/*
 * A frame @p m that started at @p start_ns and takes @p wire_ps on port @p p's link (after
 * emu_tm_link_take()) goes onto the delay line: the link's busy time, the trace's wait, and
 * its departure, the finish rounded up to the ns plus the propagation delay.
 */
static inline void
emu_tm_wire_push(const struct emu_tm *tm, struct emu_tm_port *p, struct rte_mbuf *m,
		 uint64_t start_ns, uint64_t wire_ps)
{
	struct emu_pkt_meta *meta = emu_meta(m);

	p->busy_ps += wire_ps;
	p->ctr[EMU_TM_CTR_BUSY_NS] = p->busy_ps / 1000;
	if (tm->trace)
		meta->trace.wait_ns = start_ns > meta->ts_ns ?
			(uint32_t)RTE_MIN(start_ns - meta->ts_ns, (uint64_t)UINT32_MAX) : 0;
	meta->ts_ns = p->link_free_ns + (p->link_free_ps != 0) + p->cfg.delay_ns;
	p->wire.slots[p->wire.tail++ & p->wire.mask] = m;
}

/* emu_tm.c */
/* The queue whose head starts next on @p p and when (commit: DWRR takes its turn); -1: none. */
int emu_tm_pick(struct emu_tm_port *p, uint64_t *start_ns, uint32_t *start_ps, bool commit);
void emu_tm_port_advance(struct emu_tm *tm, struct emu_tm_port *p, uint64_t now_ns,
			 struct emu_rng *rng);
void emu_tm_flush(struct emu_tm *tm, struct emu_tm_port *p, uint64_t now_ns);
/* RED ECN of @p m on port @p p with @p q bytes queued (at enqueue: ahead of it; at dequeue:
 * left behind): counts, and marks it with a draw from @p rng when the ramp says so. */
void emu_tm_ecn(struct emu_tm_port *p, struct rte_mbuf *m, uint64_t q, struct emu_rng *rng);
/* Ingress port @p in's priority @p q crossed XOFF (up) or XON (down) at @p now_ns. */
void emu_tm_xoff(struct emu_tm *tm, struct emu_tm_port *in, unsigned int q, uint64_t now_ns);
void emu_tm_xon(struct emu_tm *tm, struct emu_tm_port *in, unsigned int q, uint64_t now_ns);

/* Earliest start of queue @p q's head: max(link free, arrival, pause end), as ns + ps. */
static inline void
emu_tm_start(const struct emu_tm_port *p, unsigned int q, uint64_t *ns, uint32_t *ps)
{
	uint64_t arrival_ns = emu_meta(p->q[q].slots[p->q[q].head & p->q[q].mask])->ts_ns;

	if (q != EMU_TM_CTRL_Q && p->pause_until_ns[q] > arrival_ns)
		arrival_ns = p->pause_until_ns[q];
	if (arrival_ns > p->link_free_ns ||
	    (arrival_ns == p->link_free_ns && p->link_free_ps == 0)) {
		*ns = arrival_ns;
		*ps = 0;
	} else {
		*ns = p->link_free_ns;
		*ps = p->link_free_ps;
	}
}

/* Bytes of a lossless priority that arrived on @p in left its queue at @p now_ns. */
static inline void
emu_tm_ingress_release(struct emu_tm *tm, struct emu_tm_port *in, unsigned int q, uint32_t len,
		       uint64_t now_ns)
{
	in->ing_bytes[q] -= len;
	if (in->xoff[q] && in->ing_bytes[q] < in->cfg.pfc.xon_bytes)
		emu_tm_xon(tm, in, q, now_ns);
}

/* A packet of queue @p q (not the control queue) left it at @p now_ns: give back its buffer
 * cells (shared or headroom) and its ingress bytes, which may end an XOFF. */
static inline void
emu_tm_unaccount(struct emu_tm *tm, struct emu_tm_port *p, unsigned int q,
		 const struct emu_pkt_meta *meta, uint32_t len, uint64_t now_ns)
{
	uint64_t cells = emu_tm_cells(&tm->buf, len);
	struct emu_tm_port *in = NULL;
	uint16_t hop;

	hop = emu_meta_hop_in(meta);
	if (hop < tm->n_ports && (tm->lossless_of[hop] & (1u << q)))
		in = &tm->ports[hop];
	if (meta->flags & EMU_META_HEADROOM) {
		in->hr_cells[q] -= cells;
	} else {
		if (!p->cfg.own_buffer)
			tm->used_cells -= cells;
		p->q_cells[q] -= cells;
		p->port_cells -= cells;
	}
	p->port_pkts -= 1;
	if (in != NULL)
		emu_tm_ingress_release(tm, in, q, len, now_ns);
}

/*
 * Start queue @p q's head on port @p p's link at @p start_ns + @p start_ps (emu_tm_start(),
 * due by now; the scheduler's choice): the link's time, the queue's and the buffer's bytes
 * and the ingress's given back (which may end an XOFF), ECN at dequeue on the queue it leaves
 * behind (a draw from @p rng), and onto the delay line.
 */
static inline void
emu_tm_start_head(struct emu_tm *tm, struct emu_tm_port *p, unsigned int q, uint64_t start_ns,
		  uint32_t start_ps, struct emu_rng *rng)
{
	struct emu_tm_fifo *f = &p->q[q];
	struct rte_mbuf *m = f->slots[f->head & f->mask];
	const uint32_t len = emu_wire_len(m);
	const uint64_t wire_ps = emu_tm_link_take(p, start_ns, start_ps, len);

	f->head++;
	if (emu_tm_fifo_count(f) == 0)
		p->nonempty &= ~(1u << q);
	p->q_bytes[q] -= len;
	p->all_q_bytes -= len;
	if (q != EMU_TM_CTRL_Q) {
		emu_tm_unaccount(tm, p, q, emu_meta(m), len, start_ns);
		/* the queue length the packet leaves behind (emu_tm_ecn() does nothing at or
		 * below kmin) */
		if (p->cfg.ecn.enabled && !p->cfg.ecn.at_enqueue &&
		    p->q_bytes[q] > p->cfg.ecn.kmin_bytes)
			emu_tm_ecn(p, m, p->q_bytes[q], rng);
	}
	emu_tm_wire_push(tm, p, m, start_ns, wire_ps);
}

/* emu_tm_config.c */
int emu_tm_prio_list(const json_t *v, const char *path, uint8_t *mask, struct emu_err *err);

/* emu_tm_pfc.c */
int emu_tm_storm_compile(const json_t *val, struct emu_set *out, const char *path,
			 struct emu_err *err);
void emu_tm_storm_apply(struct emu_tm_port *p, const struct emu_set *s, uint64_t now_ns);

#endif
