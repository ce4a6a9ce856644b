/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef EMU_INCAST_H
#define EMU_INCAST_H

/**
 * @file
 * Incast load: N virtual senders whose frames join an egress port's priority
 * queue on the virtual clock. This module holds the configuration (the
 * pipeline's "incast" array), the profile changes, and the exact schedule;
 * the runner (emu_switch.c) turns due frames into filler mbufs.
 *
 * Schedule. wire_bits = (max(frame_bytes, 60) + 24) * 8. The N senders are
 * staggered by 1/N of a frame time, so the aggregate is one stream at
 * N x rate: frame k of a cycle arrives at
 *
 *     epoch + c * cycle_ns + floor(k * wire_bits * 1e9 / (senders * rate_bps))  ns
 *
 * continuous: one endless cycle; on_off: cycle = on + off, frames whose offset
 * is < on_ns; bursts: cycle = period, k < senders * message frames, where a
 * message is ceil(message_kb * 1024 / frame_bytes) frames per sender.
 * Enabling a source, or changing its senders or rate, restarts the pattern
 * (epoch, c = k = 0) at the time of the change.
 */

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "lib/base/emu_err.h"
#include "lib/base/emu_set.h"

#define EMU_MAX_INCAST 8
#define EMU_INCAST_MAX_SENDERS 4096
#define EMU_INCAST_MAX_HOSTS 64 /* senders of a closed-loop source (emu_incast_host.h) */

enum emu_incast_mode {
	EMU_INCAST_CONTINUOUS,
	EMU_INCAST_ON_OFF,
	EMU_INCAST_BURSTS,
};

/* Per-source counters; drop_* count in the conservation check. */
#define EMU_INCAST_FOREACH_CTR(_) \
	_(GENERATED, "generated") \
	_(BYTES, "bytes") \
	_(TM_DROPPED, "tm_dropped") \
	_(ABSORBED, "absorbed") \
	_(SINK_TX, "sink_tx") \
	_(DROP_SINK_FULL, "drop_sink_full") \
	_(ECN_MARKED, "ecn_marked") \
	_(NOMBUF, "incast_nombuf") \
	_(PAUSES, "pauses") \
	_(PAUSED_NS, "paused_ns") \
	_(CNPS, "cnps") \
	_(RATE_CUTS, "rate_cuts") \
	_(CNP_RING_FULL, "cnp_ring_full")

enum emu_incast_ctr {
#define EMU_INCAST_CTR_ENUM(e, s) EMU_INCAST_CTR_##e,
	EMU_INCAST_FOREACH_CTR(EMU_INCAST_CTR_ENUM)
#undef EMU_INCAST_CTR_ENUM
	EMU_INCAST_CTR_MAX
};

extern const char *const emu_incast_ctr_names[EMU_INCAST_CTR_MAX];

/** One incast source as the pipeline defines it. */
struct emu_incast_cfg {
	const char *name;      /**< borrowed from the pipeline document */
	uint16_t port;         /**< egress port whose queue the frames join */
	uint16_t sink_port;    /**< EMU_PORT_NONE: absorbed at release, else sent out of it */
	uint8_t prio;
	uint8_t mode;          /**< enum emu_incast_mode */
	bool enabled;
	uint32_t senders;
	uint64_t rate_bps;     /**< per sender */
	uint32_t frame_bytes;
	uint64_t on_ns, off_ns; /**< on_off */
	uint64_t period_ns;    /**< bursts */
	uint32_t msg_frames;   /**< bursts: frames per sender per period */
	/* Closed loop (emu_incast_host.h): per-sender state, when either is on. */
	bool honour_pfc;       /**< a sender stops above the port's xoff, resumes below xon */
	uint8_t dcqcn;         /**< enum emu_incast_dcqcn */
	uint64_t cnp_delay_ns; /**< CE-marked frame's departure -> its CNP at the sender */
	/* Emulated fabric: the senders sit on this leaf (its name, borrowed; NULL: none) and
	 * their frames are routed from it to port. The pipeline resolves it (attach_leaf). */
	const char *attach;
	uint16_t attach_leaf;  /**< fabric switch index; EMU_PORT_NONE: join port's queue */
};

enum emu_incast_dcqcn { EMU_INCAST_DCQCN_OFF, EMU_INCAST_DCQCN_NVIDIA, EMU_INCAST_DCQCN_PAPER };

/** Bits a frame of @p frame_bytes takes on the wire (padding, preamble, FCS, IFG). */
static inline uint64_t
emu_incast_wire_bits(uint32_t frame_bytes)
{
	return ((uint64_t)(frame_bytes < 60 ? 60 : frame_bytes) + 24) * 8;
}

/** Whether the source's senders are modelled one by one (honour_pfc or dcqcn). */
static inline bool
emu_incast_closed_loop(const struct emu_incast_cfg *c)
{
	return c->honour_pfc || c->dcqcn != EMU_INCAST_DCQCN_OFF;
}

/**
 * Parse the pipeline's "incast" array (may be NULL). @p names / @p mtus are the
 * switch's ports (L3 MTU each).
 */
int emu_incast_parse(const json_t *arr, unsigned int n_ports, const char *const *names,
		     const uint32_t *mtus, struct emu_incast_cfg *cfgs, unsigned int *n,
		     struct emu_err *err);

struct emu_tm_cfg;

/**
 * Closed-loop sources against the TM's configuration: honour_pfc needs the priority lossless
 * with PFC on at the source's port. One line naming the key on error.
 */
int emu_incast_check_tm(const struct emu_incast_cfg *cfgs, unsigned int n,
			const struct emu_tm_cfg *tm, struct emu_err *err);

/** The schedule state of one source. */
struct emu_incast_sched {
	struct emu_incast_cfg cfg; /**< current (profile changes apply here) */
	uint64_t epoch_ns;
	uint64_t cycle;
	uint64_t k;
	uint64_t next_ns; /**< arrival time of the next frame, UINT64_MAX when disabled */
};

/** Start (when enabled) the pattern at @p epoch_ns. */
void emu_incast_sched_start(struct emu_incast_sched *s, uint64_t epoch_ns);

/** The frame at next_ns was generated: move to the next one. */
void emu_incast_sched_advance(struct emu_incast_sched *s);

/**
 * Compile a profile change of @p key ("enabled", "senders", "rate_gbps") of the source
 * configured as @p base (the pipeline's: a control-path check that reads nothing the worker
 * writes).
 */
int emu_incast_compile(const struct emu_incast_cfg *base, const char *key, const json_t *val,
		       struct emu_set *out, const char *path, struct emu_err *err);

/** Apply it at @p now_ns: a change to a running source restarts its pattern then. */
void emu_incast_apply(struct emu_incast_sched *s, const struct emu_set *set, uint64_t now_ns);

struct roce_pkt;
struct rte_mbuf;
struct rte_mempool;

/**
 * Build source @p idx's filler frame into @p tmpl (c->frame_bytes long): an RC RDMA WRITE
 * MIDDLE, IPv4, ECT(0), to @p dst_mac (its port's), zero-padded to exactly frame_bytes; and
 * its parse result into @p pkt. 0, or -EINVAL when the frame cannot be built.
 */
int emu_incast_build_template(const struct emu_incast_cfg *c, unsigned int idx,
			      const uint8_t dst_mac[6], uint8_t *tmpl, struct roce_pkt *pkt);

/** One frame of source @p idx arriving at @p t_ns, with its metadata; NULL: pool empty. */
struct rte_mbuf *emu_incast_frame(struct rte_mempool *mp, const uint8_t *tmpl,
				  const struct roce_pkt *pkt, const struct emu_incast_cfg *c,
				  unsigned int idx, uint64_t t_ns);

/** The keys emu_incast_compile() takes with the values of @p c. New reference. */
json_t *emu_incast_settings(const struct emu_incast_cfg *c);

#endif
