/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef EMU_STAGE_H
#define EMU_STAGE_H

/**
 * @file
 * The stage contract. A stage is a function over a burst that returns how many
 * packets survive, compacted in place; every packet it removes it has freed and
 * counted under a counter whose name starts with "drop_" (or it still holds it,
 * reported by the held() op). Time and randomness come in through the burst
 * context; a stage never reads a clock, calls rand(), logs, or does I/O.
 */

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>
#include <rte_mbuf.h>

#include "emu_err.h"
#include "emu_rng.h"
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
	uint8_t path;          /**< multipath: the path it took (0: single link) */
	uint16_t drop_reason;  /**< a drop capture's copy: 1 + the reason id; 0 otherwise */
};

struct emu_pkt_meta {
	uint64_t ts_ns;    /**< arrival time; the departure time once the TM releases it */
	uint16_t in_port;  /**< switch port index it arrived on */
	uint16_t out_port; /**< switch port index chosen by forwarding, or EMU_PORT_* */
	uint8_t prio;      /**< traffic class 0-7 */
	uint8_t flags;     /**< EMU_META_* */
	uint16_t reserved; /**< EMU_META_VIRTUAL: incast source index */
	uint32_t wire_len; /**< EMU_META_SNAP: the frame's length on the wire */
	struct emu_trace trace; /**< what the switch did to it (DESIGN.md: every packet has a trace) */
	struct roce_pkt pkt; /**< parse result (when EMU_META_PARSED) */
};

#define EMU_MBUF_PRIV_SIZE RTE_ALIGN_CEIL(sizeof(struct emu_pkt_meta), RTE_MBUF_PRIV_ALIGN)

static inline struct emu_pkt_meta *
emu_meta(struct rte_mbuf *m)
{
	return (struct emu_pkt_meta *)rte_mbuf_to_priv(m);
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

/** What every process() call gets from the runner. */
struct emu_burst_ctx {
	uint64_t now_ns;      /**< TSC-derived in live mode, pcap time in replay */
	struct emu_rng *rng;  /**< this stage's stream on this lcore, seeded from the run seed */
	uint64_t *ctr;        /**< this stage's counters on this lcore (single writer) */
	struct emu_emit *emit;
	const struct emu_dropper *drop; /**< the switch's drop path */
	uint32_t reason_base; /**< reason id of this stage's counter 0 */
};

/**
 * What a stage will take when built, known from its configuration alone (no EAL), so a run
 * can be refused before any memory is taken and outputs checked before any file is opened.
 */
#define EMU_STAGE_MAX_FILES 4
struct emu_stage_needs {
	uint64_t mem_bytes;              /**< memory init() allocates (pools, rings, tables) */
	char mem_key[64];                /**< the key that sizes it, e.g. "ring_size" */
	unsigned int n_files;
	const char *files[EMU_STAGE_MAX_FILES]; /**< files it writes (strings live in the cfg) */
	char file_keys[EMU_STAGE_MAX_FILES][32]; /**< the key naming each, e.g. "file" */
};

/** What a stage's init() may ask about the switch it is part of. */
struct emu_stage_env {
	const char *path;           /**< JSON path of this stage's object, for messages */
	unsigned int n_ports;
	const char *const *port_names;
	unsigned int stage_index;   /**< unique within the switch, for naming DPDK objects */
	bool egress;                /**< true when in the egress list */
	bool out_port_known;        /**< packets have their egress port: egress, or after forward */
	bool check_only;            /**< validating only (rocemu check): open no files */
	uint32_t max_frame_bytes;   /**< largest frame any port can carry (MTU + L2 headers) */
	/**
	 * The switch's annotation of a packet (emu_switch_annotate(): its trace as a pcapng
	 * comment), for captures; @p drop_reason < 0 for a packet that was not dropped.
	 */
	size_t (*annotate)(const void *sw, const struct emu_pkt_meta *meta, int drop_reason,
			   bool all, char *buf, size_t len);
	const void *annotate_arg;
	/** Register a drop hook (a drop capture): 0, or -ENOSPC when the switch has no room. */
	int (*add_drop_hook)(void *sw, void (*fn)(void *arg, struct rte_mbuf *m, uint32_t reason),
			     void *arg);
	void *sw;
};

/** Index of port @p name in @p env, or -1. */
int emu_stage_env_port(const struct emu_stage_env *env, const char *name);

/**
 * Read @p key of @p cfg, an optional array of port names, into a bit mask of port indexes
 * (every port when the key is absent).
 */
int emu_stage_port_mask(const json_t *cfg, const struct emu_stage_env *env, const char *key,
			uint32_t *mask, struct emu_err *err);

/** The port a stage filters on: the egress port on egress, the ingress port on ingress. */
static inline bool
emu_stage_port_in(const struct emu_pkt_meta *meta, bool egress, uint32_t mask)
{
	uint16_t port = egress ? meta->out_port : meta->in_port;

	return mask == UINT32_MAX || (port < 32 && (mask & (1u << port)) != 0);
}

struct emu_stage_ops {
	const char *type;             /**< the "type" value in a pipeline file */
	size_t priv_size;
	const char *const *ctr_names; /**< "drop_*" names count as drops in the conservation check */
	unsigned int n_ctr;
	const char *const *keys;      /**< keys allowed in the stage object besides type and name */
	/** Validate @p cfg and set up @p priv (zeroed). On error, fill @p err (path first). */
	int (*init)(void *priv, const json_t *cfg, const struct emu_stage_env *env,
		    struct emu_err *err);
	/** Process a burst in place; return the survivors, compacted at the front of @p pkts. */
	uint16_t (*process)(void *priv, struct rte_mbuf **pkts, uint16_t n,
			    struct emu_burst_ctx *ctx);
	/** Release everything; must accept a half-initialised priv. */
	void (*free)(void *priv);
	/** Optional: profile change of @p key to @p val; validate only when !apply. */
	int (*set)(void *priv, const char *key, const json_t *val, bool apply, const char *path,
		   struct emu_err *err);
	/**
	 * With set: the current value of @p key as a new JSON reference that set() accepts and
	 * that brings the key fully back to its present state (profiles restore it when a
	 * phase's duration_s ends); NULL when @p key is unknown. For a key whose set() takes an
	 * object of independent members (impair events), set() changes only the members given.
	 * Control path only: it allocates.
	 */
	json_t *(*get)(const void *priv, const char *key);
	/** Optional: non-worker work (file writing). @p final flushes everything. */
	void (*service)(void *priv, bool final);
	/** Optional: packets the stage holds right now (delay lines, reorder buffers). */
	uint64_t (*held)(const void *priv);
	/** Optional: one line of extra summary text (e.g. "12 packets written to x.pcap"). */
	void (*summary)(const void *priv, char *buf, size_t len);
	/**
	 * Optional, with release (stages that hold packets: delay lines, reorder buffers; ingress
	 * or egress): the earliest time a held packet is due, UINT64_MAX when none. The runner
	 * wakes up then.
	 */
	uint64_t (*next_due_ns)(const void *priv);
	/**
	 * Optional, with next_due_ns: hand over up to @p cap held packets due at ctx->now_ns, in
	 * departure order. The runner passes them through the stages after this one: from an
	 * ingress stage into the TM; from an egress stage into their port's TX staging, leaving
	 * at the release time. Called before every rx and tx_prepare, so that nothing is due
	 * when process() runs.
	 */
	uint16_t (*release)(void *priv, struct rte_mbuf **pkts, uint16_t cap,
			    struct emu_burst_ctx *ctx);
	/**
	 * Optional: fill @p needs from @p cfg without building anything (validating what it
	 * reads, path first). Stages that allocate more than their priv or write files have it.
	 */
	int (*needs)(const json_t *cfg, const struct emu_stage_env *env,
		     struct emu_stage_needs *needs, struct emu_err *err);
	/**
	 * Optional: after service(final), whether the stage failed at something the user must
	 * hear of (a capture file that could not be written): true with one line in @p msg.
	 */
	bool (*failed)(const void *priv, char *msg, size_t len);
	/**
	 * Optional (stages that choose the egress port): for each input port, the mask of output
	 * ports a frame arriving there can reach; lets the runner warn about ports without a route.
	 */
	void (*routes)(const void *priv, unsigned int n_ports, uint32_t *out_masks);
};

/** The explicit registry (lib/stages/registry.c): NULL when @p type is unknown. */
const struct emu_stage_ops *emu_stage_find(const char *type);

/** The registry as a NULL-terminated array, for messages and --help. */
extern const struct emu_stage_ops *const emu_stage_registry[];

/** A stage drops @p m, counted in its counter @p idx (a drop_* one), through the drop path. */
static inline void
emu_stage_drop(struct emu_burst_ctx *ctx, struct rte_mbuf *m, unsigned int idx)
{
	emu_drop(ctx->drop, m, ctx->reason_base + idx, &ctx->ctr[idx]);
}

#endif
