/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef EMU_PKT_H
#define EMU_PKT_H

/**
 * @file
 * The packet layer: what every layer above knows about a packet in flight. The metadata in
 * the mbuf private area (with the per-packet trace), the frames a stage or the TM creates
 * (emu_emit), and the one drop path (emu_drop). No EAL calls beyond the mbuf inlines.
 */

#include <stdbool.h>
#include <stdint.h>

#include <rte_mbuf.h>

#include "lib/proto/roce_proto.h"

#define EMU_MAX_PORTS 16
#define EMU_PORT_NONE 0xffff  /**< no egress chosen yet: the runner drops it as no_route */
#define EMU_PORT_FLOOD 0xfffe /**< copy to every port except the ingress port */
#define EMU_PORT_SELF 0xfffd  /**< created internally (emitted frame): no ingress port */

#define EMU_META_PARSED 0x01  /**< pkt below is valid for this mbuf */
#define EMU_META_CREATED 0x02 /**< the emulator made this frame (CNP, PFC, flood copy) */
#define EMU_META_MACCTL 0x04  /**< a MAC control frame the switch sends (TM control queue) */
#define EMU_META_HEADROOM 0x08 /**< TM: the packet occupies lossless headroom, not shared buffer */
#define EMU_META_VIRTUAL 0x10  /**< incast filler frame; reserved = its source index */
#define EMU_META_SNAP 0x20     /**< header capture: the mbuf holds the first bytes, wire_len is the frame's length */
#define EMU_META_RXCTL 0x80    /**< a received MAC control frame on its way to its port's egress owner (worker handoff) */
#define EMU_META_HOP 0x40      /**< inside the fabric: hop_in, not in_port, is its TM ingress */

/** Per-packet metadata, kept in the mbuf private area of every pool rocemu creates. */
/** emu_trace.marks */
#define EMU_TRACE_CE_RED 0x01    /**< the TM's RED marked it CE */
#define EMU_TRACE_CE_EVENT 0x02  /**< an impair event marked it CE */
#define EMU_TRACE_DELAYED 0x04   /**< held by a delay stage or an impair delay event */
#define EMU_TRACE_CORRUPTED 0x08 /**< an impair event corrupted its ICRC or payload */
#define EMU_TRACE_REWRITTEN 0x10 /**< an impair event rewrote its DSCP or UDP source port */
#define EMU_TRACE_DUPLICATE 0x20 /**< a copy an impair event made */

/** emu_trace.created_by beyond 1 + stage index */
#define EMU_TRACE_BY_SWITCH 0xff /**< PFC/PAUSE frames and flood copies the runner made */
#define EMU_TRACE_BY_INCAST 0xfe /**< a virtual incast sender's frame */

/**
 * The per-packet trace, written by whichever stage or TM step acts on the packet, read by
 * annotated captures. A handful of stores into metadata already in cache: nothing reads it
 * unless a capture asks.
 */
struct emu_trace {
	uint64_t t_in_ns;      /**< arrival on its port (creation time for created frames) */
	uint64_t t_enq_ns;     /**< given to the TM */
	uint32_t qdepth_bytes; /**< bytes ahead of it in its queue at enqueue */
	uint32_t wait_ns;      /**< enqueue to the start of its serialisation */
	uint32_t delay_ns;     /**< time held by delay stages and delay events */
	uint16_t event_reason; /**< 1 + the counter (switch reason id) of the last impair action; 0 none */
	uint8_t marks;         /**< EMU_TRACE_* */
	uint8_t created_by;    /**< 0: arrived on a port; 1 + stage index; EMU_TRACE_BY_* */
	uint8_t path;          /**< multipath: 1 + the first fabric link it took (0: single link) */
	uint8_t via[3];        /**< 1 + the fabric links it took after the first, in order (0: none) */
	uint16_t drop_reason;  /**< a drop capture's copy: 1 + the reason id; 0 otherwise */
};

/**
 * Whether something happened to a frame that went on (not dropped): marked, delayed,
 * corrupted, rewritten, copied, created by the switch, or the target of an impair event.
 * Those frames, and the dropped ones, are what an annotated capture comments on unless asked
 * for all (emu_switch_annotate_meta()); the capture's worker side copies the trace of those
 * alone (lib/capture/emu_capture_push.c).
 */
static inline bool
emu_trace_eventful(const struct emu_trace *tr)
{
	return tr->marks != 0 || tr->created_by != 0 || tr->event_reason != 0;
}

struct emu_pkt_meta {
	uint64_t ts_ns;    /**< arrival time; the departure time once the TM releases it */
	uint16_t in_port;  /**< switch port index it arrived on */
	uint16_t out_port; /**< switch port index chosen by forwarding, or EMU_PORT_* */
	uint8_t prio;      /**< traffic class 0-7 */
	uint8_t flags;     /**< EMU_META_* */
	uint16_t reserved; /**< EMU_META_VIRTUAL: incast source index */
	uint32_t wire_len; /**< EMU_META_SNAP: the frame's length on the wire */
	uint16_t hop_in;   /**< EMU_META_HOP: the TM port (fabric link) it arrived from */
	struct emu_trace trace; /**< what the switch did to it (DESIGN.md: every packet has a trace) */
	/** Parse result (when EMU_META_PARSED). With pkt.dp_only set, only the fields
	 * roce_parse_partial_dp() lists are this packet's: the switch lets the parse stage do
	 * that only when nothing reads the others (emu_switch.c, emu_switch_choose_parse()). */
	struct roce_pkt pkt;
};

#define EMU_MBUF_PRIV_SIZE RTE_ALIGN_CEIL(sizeof(struct emu_pkt_meta), RTE_MBUF_PRIV_ALIGN)

static inline struct emu_pkt_meta *
emu_meta(struct rte_mbuf *m)
{
	return (struct emu_pkt_meta *)rte_mbuf_to_priv(m);
}

/**
 * The TM port whose ingress side holds the packet while it is queued (lossless accounting,
 * PFC): its ingress port, or inside an emulated fabric the link it came from.
 */
static inline uint16_t
emu_meta_hop_in(const struct emu_pkt_meta *meta)
{
	return (meta->flags & EMU_META_HOP) ? meta->hop_in : meta->in_port;
}

/**
 * The frame's length on the wire: what the TM buffers, shapes and counts. It is the mbuf's
 * length except for replayed header captures (EMU_META_SNAP), whose mbuf holds only the
 * captured bytes.
 */
static inline uint32_t
emu_wire_len(struct rte_mbuf *m)
{
	const struct emu_pkt_meta *meta = emu_meta(m);

	return (meta->flags & EMU_META_SNAP) ? meta->wire_len : rte_pktmbuf_pkt_len(m);
}

/** Frames a stage creates during a burst, with the port each goes out of. */
struct emu_emit {
	struct rte_mbuf **pkts;
	uint16_t *ports;
	uint16_t n;
	uint16_t cap;
	struct rte_mempool *pool; /**< where stages allocate the frames they create */
};

/** Queue @p m (created by the stage) to leave through port @p port; false when full. */
static inline bool
emu_emit_push(struct emu_emit *e, struct rte_mbuf *m, uint16_t port)
{
	if (e->n >= e->cap)
		return false;
	e->pkts[e->n] = m;
	e->ports[e->n] = port;
	e->n++;
	return true;
}

/**
 * The one way out for a dropped packet (STYLE.md 8): every stage, TM step and runner drop goes
 * through emu_drop() with a reason id the switch registered for the counter it counts in
 * (emu_switch_reason_name()). A hook (a drop capture) may see the packet before it is freed.
 */
#define EMU_DROP_MAX_HOOKS 4
struct emu_drop_hook {
	void (*fn)(void *arg, struct rte_mbuf *m, uint32_t reason);
	void *arg;
};
struct emu_dropper {
	unsigned int n_hooks;
	struct emu_drop_hook hooks[EMU_DROP_MAX_HOOKS];
};

/** Count @p m as dropped for @p reason in *@p ctr, hand it to the hooks if any, free it. */
static inline void
emu_drop(const struct emu_dropper *d, struct rte_mbuf *m, uint32_t reason, uint64_t *ctr)
{
	unsigned int i;

	if (unlikely(d != NULL && d->n_hooks != 0))
		for (i = 0; i < d->n_hooks; i++)
			d->hooks[i].fn(d->hooks[i].arg, m, reason);
	*ctr += 1;
	rte_pktmbuf_free(m);
}

#endif
