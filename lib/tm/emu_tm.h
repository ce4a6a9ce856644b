/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef EMU_TM_H
#define EMU_TM_H

/**
 * @file
 * Traffic manager: per egress port 8 priority queues (plus a control queue for
 * the PFC frames the switch sends) in a shared buffer with static or dynamic
 * thresholds and lossless headroom, a scheduler (strict or DWRR) that picks which
 * queue's head starts next when the link is free, RED ECN marking, PFC honouring
 * and generation, a shaper that serialises packets at the port's link rate, and
 * a propagation delay line. It owns every packet between ingress and egress.
 *
 * Link model (per port), with all times derived from the caller's now_ns:
 *
 *     wire_bits  = (max(frame_len, 60) + 4 FCS + 20 preamble/IFG) * 8
 *     start      = max(link_free, arrival)
 *     finish     = start + wire_bits / rate          (kept in picoseconds)
 *     departure  = finish + delay_ns                 (the packet's output time)
 *
 * A packet leaves the queue (and its bytes stop counting against the limit) at
 * its start time, and is released to the egress stages at its departure time.
 * This equals "departure = max(now, previous departure) + wire time" for a
 * constant rate, and stays right when the rate changes at run time.
 */

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include "lib/base/emu_err.h"
#include "lib/base/emu_rng.h"
#include "lib/pkt/emu_pkt.h"
#include "lib/base/emu_set.h"

#define EMU_TM_WIRE_OVERHEAD_BYTES 24 /* FCS 4 + preamble/SFD 8 + IFG 12 */
#define EMU_TM_MIN_FRAME_BYTES 60     /* without FCS */
#define EMU_TM_N_PRIO 8               /* one queue per 802.1p priority */
#define EMU_TM_CTRL_Q EMU_TM_N_PRIO   /* MAC control frames the switch sends: never paused */
#define EMU_TM_N_Q (EMU_TM_N_PRIO + 1)
#define EMU_TM_CTRL_SLOTS 64
#define EMU_TM_DWRR_QUANTUM_BYTES 1024 /* DWRR credit per round = weight x this */
#define EMU_TM_PFC_QUANTUM_BITS 512    /* one pause quantum = 512 bit times */
#define EMU_TM_MACCTL_OPCODE_PAUSE 0x0001
#define EMU_TM_MACCTL_OPCODE_PFC 0x0101

/*
 * Per-port counters. drop_* count in the conservation check. The ECN and PFC
 * generation counters belong to the port the packet left by (ECN) or the
 * ingress port the PFC frames went out of (pfc_tx_*, headroom).
 */
#define EMU_TM_FOREACH_CTR(_) \
	_(ENQ_PKTS, "enq_pkts") \
	_(ENQ_BYTES, "enq_bytes") \
	_(DEQ_PKTS, "deq_pkts") \
	_(DEQ_BYTES, "deq_bytes") \
	_(DROP_QUEUE_FULL, "drop_queue_full") \
	_(DROP_BUFFER_FULL, "drop_buffer_full") \
	_(DROP_HEADROOM_OVERFLOW, "drop_headroom_overflow") \
	_(DROP_LINK_DOWN, "drop_link_down") \
	_(HEADROOM_PKTS, "headroom_pkts") \
	_(MAX_QUEUE_BYTES, "max_queue_bytes") \
	_(BUSY_NS, "busy_ns") \
	_(ECN_MARKED, "ecn_marked") \
	_(ECN_NOT_ECT, "ecn_not_ect") \
	_(ECN_CE_ALREADY, "ecn_ce_already") \
	_(PFC_RX, "pfc_rx") \
	_(PAUSE_RX, "pause_rx") \
	_(PFC_TX_XOFF, "pfc_tx_xoff") \
	_(PFC_TX_XON, "pfc_tx_xon") \
	_(PFC_QUANTA_SENT, "pfc_quanta_sent") \
	_(PFC_STORM_TX, "pfc_storm_tx") \
	_(PFC_WATCHDOG_TRIPS, "pfc_watchdog_trips") \
	_(PFC_WATCHDOG_IGNORED, "pfc_watchdog_ignored") \
	_(PFC_COALESCED, "pfc_coalesced")

enum emu_tm_ctr {
#define EMU_TM_CTR_ENUM(e, s) EMU_TM_CTR_##e,
	EMU_TM_FOREACH_CTR(EMU_TM_CTR_ENUM)
#undef EMU_TM_CTR_ENUM
	EMU_TM_CTR_MAX
};

extern const char *const emu_tm_ctr_names[EMU_TM_CTR_MAX];

enum emu_tm_sched {
	EMU_TM_SCHED_STRICT, /**< highest priority first */
	EMU_TM_SCHED_DWRR,   /**< deficit weighted round robin over the 8 queues */
};

/** RED-style ECN marking on a queue's instantaneous length (docs/wire.md, "Priorities, DSCP and ECN"). */
struct emu_tm_ecn_cfg {
	bool enabled;
	bool at_enqueue;     /**< mark when the packet joins the queue (else when it leaves) */
	uint64_t kmin_bytes;
	uint64_t kmax_bytes;
	double pmax;
	/**
	 * The RED ramp in fixed point (as rte_red does): a packet with q bytes ahead,
	 * kmin < q <= kmax, is marked with probability
	 *     p(q) = pmax (q - kmin) / (kmax - kmin)  ~=  (q - kmin) slope_q48 / 2^48,
	 * slope_q48 = floor(pmax 2^48 / (kmax - kmin)), drawn against 48 random bits: no
	 * floating point, no division per packet. emu_tm_red_q48() (test_tm checks it against
	 * the formula).
	 */
	uint64_t slope_q48;
};

/** Compute slope_q48 from kmin, kmax and pmax. */
void emu_tm_ecn_ramp(struct emu_tm_ecn_cfg *ec);

/** p(q) x 2^48 for @p ec (0 at or below kmin, 2^48 x pmax at kmax). */
static inline uint64_t
emu_tm_red_q48(const struct emu_tm_ecn_cfg *ec, uint64_t q)
{
	if (q <= ec->kmin_bytes)
		return 0;
	if (q > ec->kmax_bytes)
		q = ec->kmax_bytes;
	return (q - ec->kmin_bytes) * ec->slope_q48;
}

/** PFC generation for packets that arrived on this port (its ingress side). */
struct emu_tm_pfc_cfg {
	bool enabled;
	uint64_t xoff_bytes; /**< send XOFF when a lossless priority holds more than this */
	uint64_t xon_bytes;  /**< send XON when it holds less than this */
	uint16_t quanta;     /**< pause time in XOFF frames, in 512-bit-time quanta */
};

struct emu_tm_port_cfg {
	uint64_t rate_bps;    /**< link rate */
	uint64_t limit_bytes; /**< bytes (cells) the port's 8 queues may hold together */
	uint64_t queue_limit_bytes; /**< static mode: bytes (cells) one queue may hold */
	uint32_t queue_pkts;  /**< packets the port's queues may hold together (power of two) */
	uint64_t delay_ns;    /**< propagation delay added after serialisation */
	uint64_t headroom_bytes; /**< per lossless priority of this ingress port */
	uint64_t pfc_watchdog_ns; /**< PFC watchdog period, 0 = off; see emu_tm_pause_rx */
	uint8_t scheduler;    /**< enum emu_tm_sched */
	uint8_t lossless_mask; /**< bit n: priority n is lossless */
	uint16_t weights[EMU_TM_N_PRIO]; /**< DWRR weights */
	struct emu_tm_ecn_cfg ecn;
	struct emu_tm_pfc_cfg pfc;
	bool own_buffer; /**< a fabric link: limit_bytes of its own, outside the shared buffer */
};

/** The switch-wide shared buffer. */
struct emu_tm_buffer_cfg {
	uint64_t total_bytes; /**< shared by all ports' queues (headroom comes on top) */
	bool dynamic;         /**< dynamic threshold: queue <= alpha x free shared buffer */
	double alpha;
	uint32_t cell_bytes;  /**< every packet occupies a whole number of cells */
};

/**
 * TM ports: the switch's real ports first (0 .. EMU_MAX_PORTS-1), then the links of an
 * emulated fabric (lib/fabric), each a TM port of its own.
 */
#define EMU_TM_MAX_PORTS 64

struct emu_tm_cfg {
	unsigned int n_ports; /**< real ports + fabric links */
	struct emu_tm_buffer_cfg buffer;
	struct emu_tm_port_cfg ports[EMU_TM_MAX_PORTS];
};

/** Defaults: 100 Gb/s, 4 MB, 4096 slots, no delay, strict priority, priority 3 lossless. */
void emu_tm_port_cfg_default(struct emu_tm_port_cfg *pc);


/**
 * Parse the port keys of @p o (rate_gbps, buffer_kb, delay_us, ecn, pfc, lossless, ...) over
 * the values already in @p pc; @p mtu sizes PFC headroom. Keys are not checked here.
 */
int emu_tm_port_parse(const json_t *o, const char *path, uint32_t mtu,
		      struct emu_tm_port_cfg *pc, struct emu_err *err);

/** Defaults for a config of @p n_ports ports (shared buffer = sum of the port limits). */
void emu_tm_cfg_default(struct emu_tm_cfg *cfg, unsigned int n_ports);

/**
 * Parse the pipeline's "tm" object (may be NULL: all defaults). @p names are the
 * switch port names; tm.ports[] entries refer to them with "port". @p mtus (L3 MTU per
 * port, may be NULL for 9216) size the PFC thresholds derived from "cable_m".
 */
int emu_tm_cfg_parse(const json_t *tm, unsigned int n_ports, const char *const *names,
		     const uint32_t *mtus, struct emu_tm_cfg *cfg, struct emu_err *err);

/**
 * NVIDIA's headroom formula (docs/wire.md, PFC):
 * xoff_bytes = (301 + 2.16 * cable_m) * speed_Gbps + 2.72 * MTU.
 */
uint64_t emu_tm_pfc_xoff_bytes(double cable_m, uint64_t rate_bps, uint32_t mtu);

/** Pause time of @p quanta at @p rate_bps, in ns, rounded up: quanta x 512 bit times. */
uint64_t emu_tm_pause_ns(uint16_t quanta, uint64_t rate_bps);

/** Packets the TM can hold at most with @p cfg in its queues (buffer model and slots). */
uint64_t emu_tm_max_queued_pkts(const struct emu_tm_cfg *cfg);

struct emu_tm;

/** Slots of port @p pc's delay line: rate x delay of minimum frames plus the queue, capped. */
uint32_t emu_tm_wire_slots(const struct emu_tm_port_cfg *pc);

/** Allocate the TM for @p cfg (all memory up front). */
struct emu_tm *emu_tm_create(const struct emu_tm_cfg *cfg, struct emu_err *err);

/**
 * Whether the TM writes the queueing fields of each packet's trace (t_enq_ns, qdepth_bytes,
 * wait_ns): on from emu_tm_create(); the switch turns it off when nothing reads the trace
 * (DESIGN.md: a trace costs nothing when nobody reads it). Between bursts.
 */
void emu_tm_set_trace(struct emu_tm *tm, bool on);

/**
 * For tests: with @p on, the enqueue and advance loops take every packet through their
 * general steps, not their inner loops for runs of alike packets (emu_tm_enqueue_same(),
 * emu_tm_advance_same()), which must give the same result; off from emu_tm_create().
 */
void emu_tm_set_general_only(struct emu_tm *tm, bool on);

/** Free the TM and every packet it still holds; accepts NULL. */
void emu_tm_free(struct emu_tm *tm);

/**
 * Admit @p m to port @p port's queue for its meta prio at @p now_ns. Frames with
 * EMU_META_MACCTL go to the control queue (no buffer model, never paused). Returns
 * true when queued; false when dropped (the TM freed it and counted the reason).
 * @p rng decides ECN marking at enqueue.
 */
bool emu_tm_enqueue(struct emu_tm *tm, uint16_t port, struct rte_mbuf *m, uint64_t now_ns,
		    struct emu_rng *rng);

/**
 * emu_tm_enqueue() of @p pkts[0..n) to port @p port, in order, in one call (the same result
 * packet for packet, the port's state kept in registers). Returns how many were queued; the
 * others were dropped (freed and counted) as emu_tm_enqueue() would have.
 */
uint16_t emu_tm_enqueue_burst(struct emu_tm *tm, uint16_t port, struct rte_mbuf **pkts,
			      uint16_t n, uint64_t now_ns, struct emu_rng *rng);

/**
 * emu_tm_enqueue_burst() of the leading packets of @p pkts[0..n) that are for port @p port
 * (meta out_port) and are parsed data frames: it stops at the first packet for another port,
 * not parsed, or a MAC control frame that arrived (the caller consumes those). Returns how
 * many it took (queued, or dropped and freed); the switch's rx hands it each burst this way,
 * the run found in the enqueue loop itself.
 */
uint16_t emu_tm_enqueue_port_run(struct emu_tm *tm, uint16_t port, struct rte_mbuf **pkts,
				 uint16_t n, uint64_t now_ns, struct emu_rng *rng);

/**
 * emu_tm_advance(ports[i], @p now_ns) and emu_tm_enqueue(ports[i], pkts[i], @p now_ns) for
 * i = 0 .. n-1 in order, in one call that takes each port's packets together, when it can prove
 * the result the same packet for packet (emu_tm_group.c says how): the packets of one priority
 * and one ingress, every port a link with its own buffer holding only that priority, room for
 * all its packets, no ECN at enqueue, and the ingress (when lossless) neither in XOFF nor
 * able to reach it. Returns true when it queued them all; false when it did nothing (the
 * caller goes packet by packet). At most 64 packets.
 */
bool emu_tm_enqueue_grouped(struct emu_tm *tm, const uint16_t *ports, struct rte_mbuf **pkts,
			    uint16_t n, uint64_t now_ns, struct emu_rng *rng);

/**
 * emu_tm_advance(@p port, @p now_ns) and then emu_tm_enqueue(@p port, @p m, @p now_ns), in
 * one call: the same result, the common case (one data priority queued, nothing the advance
 * or the buffer must decide) without the general functions' set-up (emu_tm_arrive.c).
 */
bool emu_tm_arrive(struct emu_tm *tm, uint16_t port, struct rte_mbuf *m, uint64_t now_ns,
		   struct emu_rng *rng);

/**
 * emu_tm_arrive(@p port, pkts[i], its ts_ns) for i = 0 .. @p n - 1 in order: packets that
 * arrive at one port each at a moment of its own, in time order (a fabric's last hop). The
 * same result as the calls one by one; the common case in one loop. @p calm_shown: the
 * caller had emu_tm_arrivals_calm() say true for a sum that includes these packets, with
 * @p port among its destinations and their ingress sides among its hops, and nothing else
 * has arrived anywhere since (the loop then skips checking the limits, ECN and XOFF again).
 */
void emu_tm_arrive_run(struct emu_tm *tm, uint16_t port, struct rte_mbuf **pkts, uint16_t n,
		       bool calm_shown, struct emu_rng *rng);

/** What some delay lines hold that has already left (emu_tm_departed_sum()). */
struct emu_tm_sum {
	uint64_t pkts;
	uint64_t bytes; /* on the wire */
	uint64_t cells; /* in the shared buffer's cells */
};

/**
 * Add to *@p sum the packets on the wires of @p ports (@p n) that have left by @p now_ns.
 * Returns false when one of those wires is full: taking a departure off it lets the next
 * packet start (emu_tm_pop_departed()), so its departures must be taken one by one.
 */
bool emu_tm_departed_sum(const struct emu_tm *tm, const uint16_t *ports, unsigned int n,
			 uint64_t now_ns, struct emu_tm_sum *sum);

/**
 * Take off the wires of @p ports (@p n, none of them full: emu_tm_departed_sum()) up to
 * @p max packets that have left by @p now_ns, in time order, ties by position in @p ports:
 * the order of emu_tm_pop_departed() on the port with the earliest head, one at a time.
 * from[k]: the position in @p ports of out[k]. Counted as dequeued. Returns how many.
 */
unsigned int emu_tm_merge_departed(struct emu_tm *tm, const uint16_t *ports, unsigned int n,
				   uint64_t now_ns, struct rte_mbuf **out, uint8_t *from,
				   unsigned int max);

/**
 * Whether @p sum (packets of any data priority, from any of the ingress sides @p hops, @p n_hops)
 * arriving at the ports @p dests (@p n_dests), each at its own time, provably touch only the
 * state of the port they arrive at: no PFC frame is due or pending and none can become so
 * (no (port, priority) in XOFF anywhere, so no XON; no hop's ingress bytes can reach XOFF with
 * all of them in), every limit of every destination admits them all without headroom even if
 * all went to it (and the shared buffer all of them at once), and no ECN can draw (none at
 * enqueue; at dequeue the queue stays at or below kmin with all of them in). Then their
 * arrivals at different ports may be taken port by port, and none of them changes what the
 * hops do meanwhile.
 */
bool emu_tm_arrivals_calm(const struct emu_tm *tm, const uint16_t *dests, unsigned int n_dests,
			  const uint16_t *hops, unsigned int n_hops, const struct emu_tm_sum *sum);

/**
 * Release up to @p max packets of port @p port whose departure time is <= @p now_ns,
 * in order; each mbuf's meta ts_ns is set to its departure time. @p rng decides ECN
 * marking at dequeue.
 */
uint16_t emu_tm_dequeue(struct emu_tm *tm, uint16_t port, uint64_t now_ns, struct rte_mbuf **out,
			uint16_t max, struct emu_rng *rng);

/** emu_tm_dequeue() that also writes each packet's length on the wire (emu_wire_len()) into
 * @p lens (may be NULL), which it reads anyway. */
uint16_t emu_tm_dequeue_lens(struct emu_tm *tm, uint16_t port, uint64_t now_ns,
			     struct rte_mbuf **out, uint32_t *lens, uint16_t max,
			     struct emu_rng *rng);

/**
 * A PAUSE (opcode 0x0001: all priorities, quanta[0]) or PFC (0x0101) frame arrived on
 * @p port at @p now_ns: pause (or resume, time 0) that port's egress queues.
 *
 * PFC watchdog (port's pfc_watchdog_ns = W > 0), per priority: a pause frame with a
 * non-zero time that arrives while the priority is still paused, W or more after the
 * frame that started its continuous pause, trips the watchdog: the frame is ignored, the
 * running pause ends at that instant (pfc_watchdog_trips counts 1). While tripped, every
 * frame for that priority is ignored (pfc_watchdog_ignored); the first frame that comes
 * W or more after the last ignored one restores the watchdog and is honoured.
 */
void emu_tm_pause_rx(struct emu_tm *tm, uint16_t port, uint64_t now_ns, uint16_t opcode,
		     uint16_t enable_vector, const uint16_t quanta[EMU_TM_N_PRIO],
		     struct emu_rng *rng);

/** A PFC frame the switch must send. */
struct emu_tm_pfc_frame {
	uint16_t port;   /**< out of this (ingress) port */
	uint16_t vector; /**< class-enable vector */
	uint16_t quanta[EMU_TM_N_PRIO];
	bool pause;      /**< an 802.3x PAUSE (time in quanta[0]) instead of PFC */
};

/**
 * Frame @p f as an mbuf from @p mp (PFC, or PAUSE when f->pause), sent from @p src_mac,
 * with its metadata (created, MAC control, leaving by f->port at @p now_ns); NULL when the
 * pool is empty.
 */
struct rte_mbuf *emu_tm_pfc_mbuf(struct rte_mempool *mp, const struct emu_tm_pfc_frame *f,
				 const uint8_t src_mac[6], uint64_t now_ns);

/**
 * Collect the PFC frames due at @p now_ns (new XOFF, refreshes, XON, and PFC storm
 * frames) into @p out; returns how many (at most two per port: one of the TM's own, one
 * of a storm).
 */
unsigned int emu_tm_pfc_collect(struct emu_tm *tm, uint64_t now_ns, struct emu_tm_pfc_frame *out,
				unsigned int max);

/** Earliest time at which something changes in the TM, UINT64_MAX when empty. */
uint64_t emu_tm_next_event_ns(const struct emu_tm *tm);

/** The same for port @p port alone. */
uint64_t emu_tm_port_next_event_ns(const struct emu_tm *tm, uint16_t port);

/**
 * emu_tm_next_event_ns() in two parts: returns the earliest event but a packet leaving the
 * delay line of one of the first @p n_ports ports (which changes nothing in the TM), and sets
 * @p wire_ns to the earliest such departure (UINT64_MAX: none) and @p n_wire to the number
 * of those ports with a packet on their line.
 */
uint64_t emu_tm_next_change_ns(const struct emu_tm *tm, uint16_t n_ports, uint64_t *wire_ns,
			       unsigned int *n_wire);

/**
 * Start on port @p port's link every packet that can start by @p now_ns (the caller knows
 * nothing will be enqueued there with an earlier time): its queue depth is then exact at
 * @p now_ns for the next enqueue (fabric hops).
 */
void emu_tm_advance(struct emu_tm *tm, uint16_t port, uint64_t now_ns, struct emu_rng *rng);

/*
 * The first member of struct emu_tm: what the switch tests inline before it calls in, on
 * every burst (a pointer to a struct points to its first member). Written by lib/tm only.
 */
struct emu_tm_hot {
	bool pfc_any;     /* some port's PFC state changed: a frame to send */
	uint32_t n_xoff;  /* (port, priority) pairs in XOFF: their refreshes fall due */
	uint32_t n_storm; /* ports with a PFC storm on */
};

/** Whether emu_tm_pfc_collect() could return a frame now: a crossing since its last call, an
 * XOFF to refresh, or a storm. When false it returns 0 and changes nothing. */
static inline bool
emu_tm_pfc_work(const struct emu_tm *tm)
{
	const struct emu_tm_hot *h = (const struct emu_tm_hot *)(const void *)tm;

	return h->pfc_any || h->n_xoff != 0 || h->n_storm != 0;
}

/** Whether a queue crossed XOFF or XON since the last emu_tm_pfc_collect(). */
bool emu_tm_pfc_pending(const struct emu_tm *tm);

/** Departure time of the packet at the head of port @p port's wire, UINT64_MAX when none. */
uint64_t emu_tm_head_departure_ns(const struct emu_tm *tm, uint16_t port);

/**
 * Take the packet at the head of port @p port's wire when it has left by @p now_ns (the port
 * advanced to @p now_ns before: emu_tm_advance()); NULL otherwise. Counted as dequeued.
 */
struct rte_mbuf *emu_tm_pop_departed(struct emu_tm *tm, uint16_t port, uint64_t now_ns,
				     struct emu_rng *rng);

/** Bytes queued on port @p port for priority @p prio (adaptive routing). */
uint64_t emu_tm_queue_bytes(const struct emu_tm *tm, uint16_t port, unsigned int prio);

/** Packets held (queued or on the wire) in all ports. */
/** Port @p port holds no packet: its queues and its delay line are empty. */
bool emu_tm_port_idle(const struct emu_tm *tm, uint16_t port);

uint64_t emu_tm_held(const struct emu_tm *tm);

/** Packets held by port @p port. */
uint64_t emu_tm_port_held(const struct emu_tm *tm, uint16_t port);

/**
 * Drops go through @p d with reason id @p reason_base + port x EMU_TM_CTR_MAX + counter
 * (the switch registers them; NULL = count and free only).
 */
void emu_tm_set_dropper(struct emu_tm *tm, const struct emu_dropper *d, uint32_t reason_base);

/** Counters of port @p port (EMU_TM_CTR_MAX values). */
const uint64_t *emu_tm_port_ctrs(const struct emu_tm *tm, uint16_t port);

/** Per-priority state of a port at a given time. */
struct emu_tm_prio_stats {
	uint64_t queue_bytes;   /**< egress queue bytes now */
	uint64_t queue_pkts;
	uint64_t max_queue_bytes;
	uint64_t ingress_bytes; /**< bytes held that arrived on this port (lossless only) */
	uint64_t headroom_bytes; /**< headroom in use for this ingress port */
	bool paused;            /**< egress paused by a received PFC/PAUSE */
	uint64_t paused_ns;     /**< total time paused */
	bool xoff;              /**< this ingress port has sent XOFF */
	uint64_t xoff_ns;       /**< total time in XOFF */
};

/** Fill @p s with port @p port's priority @p prio state as of @p now_ns. */
void emu_tm_prio_stats(const struct emu_tm *tm, uint16_t port, unsigned int prio,
		       uint64_t now_ns, struct emu_tm_prio_stats *s);

/** Shared buffer in use (bytes of cells) and its size. */
void emu_tm_buffer_use(const struct emu_tm *tm, uint64_t *used_bytes, uint64_t *total_bytes);

/** Shared buffer in use by this TM (bytes of cells). */
uint64_t emu_tm_buffer_used(const struct emu_tm *tm);

/**
 * Other TMs hold @p others_bytes of the same buffer (the switch's replicas on other worker
 * lcores, each owning some ports): this one admits against what is left of it.
 */
void emu_tm_buffer_others(struct emu_tm *tm, uint64_t others_bytes);

/**
 * Add @p src's counters into @p dst (two replicas of one switch's TM, after both stopped):
 * sums (pause and XOFF time with what is still open at @p now_ns), and the maxima of the
 * max_* ones.
 */
void emu_tm_absorb(struct emu_tm *dst, const struct emu_tm *src, uint64_t now_ns);

/** Current configuration of port @p port. */
const struct emu_tm_port_cfg *emu_tm_port_cfg(const struct emu_tm *tm, uint16_t port);

/**
 * Compile a profile change of port @p port's @p key ("rate_gbps", "delay_us", "buffer_kb",
 * "link", "pfc_storm") into @p out (control path: validates, reads nothing the worker
 * writes). @p path names the value in messages.
 */
int emu_tm_compile(const struct emu_tm *tm, uint16_t port, const char *key, const json_t *val,
		   struct emu_set *out, const char *path, struct emu_err *err);

/**
 * Apply a compiled change at @p now_ns (the worker, between bursts). @p rng serves the ECN
 * draws of the packets that start before a link goes down.
 */
void emu_tm_apply(struct emu_tm *tm, uint16_t port, const struct emu_set *s, uint64_t now_ns,
		  struct emu_rng *rng);

/** emu_tm_compile() and, when @p apply, emu_tm_apply(): for tests and one-thread callers. */
int emu_tm_set(struct emu_tm *tm, uint16_t port, const char *key, const json_t *val, bool apply,
	       uint64_t now_ns, struct emu_rng *rng, const char *path, struct emu_err *err);

/**
 * Every key emu_tm_compile() takes, with the value port configuration @p pc gives it (link
 * "up", pfc_storm false): what a profile's timed phase puts back. New reference.
 */
json_t *emu_tm_settings(const struct emu_tm_port_cfg *pc);

/**
 * Check that a port's delay line, sized from @p sized (the pipeline's port config),
 * can carry a delay of @p delay_ns at @p rate_bps: every minimum-size frame that can be on
 * the wire during the delay needs a slot. Fills @p err (naming @p path) when it cannot.
 */
int emu_tm_delay_fits(const struct emu_tm_port_cfg *sized, uint64_t rate_bps, uint64_t delay_ns,
		      const char *path, struct emu_err *err);

/** Whether port @p port's link is up. */
bool emu_tm_link_up(const struct emu_tm *tm, uint16_t port);

/** Wire time of a frame of @p len bytes at @p rate_bps, in picoseconds. */
static inline uint64_t
emu_tm_wire_ps(uint32_t len, uint64_t rate_bps)
{
	uint64_t bytes = (len < EMU_TM_MIN_FRAME_BYTES ? EMU_TM_MIN_FRAME_BYTES : len) +
			 EMU_TM_WIRE_OVERHEAD_BYTES;

	/* bytes * 8e12 fits in 64 bits for frames up to 2.3 MB */
	return (bytes * 8ULL * 1000000000000ULL + rate_bps / 2) / rate_bps;
}

/** Stop every PFC storm (the pauses already sent run out as usual). */
void emu_tm_storms_stop(struct emu_tm *tm);

#endif
