/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef EMU_INCAST_HOST_H
#define EMU_INCAST_HOST_H

/**
 * @file
 * Closed-loop incast: the senders of a source with "honour_pfc" or "dcqcn" are modelled one
 * by one, as hosts attached to the switch, each with its own rate, pause state and DCQCN
 * reaction point. Pure (no EAL, no clock: times come in as nanoseconds); the runner
 * (lib/switch/emu_switch_incast.c) calls it when a sender's frame is due, when one of its
 * frames leaves the switch and when one is dropped.
 *
 * A sender's frames leave at its current rate: the next frame of sender j is due
 * emu_incast_wire_bits() after its last, at the current rate: rate_gbps, or with DCQCN the
 * reaction point's Rc, re-read when the frame is due and at each rate increase before
 * then (a rate limiter, not a fixed schedule: a sender cut to a low rate does not wait out the
 * gap of that rate once it has recovered). The N senders start staggered by 1/N of a frame
 * time, as the open-loop schedule does.
 *
 * honour_pfc, per sender as a host on its own switch port: the bytes of its frames that are
 * in the switch (counted from enqueue until the frame leaves its port, or is dropped) are its
 * ingress counter. When a frame takes it above the port's PFC xoff the sender stops at once
 * (no pause frame on a wire, no frame in flight: the reaction of a NIC next to the switch);
 * when a departure takes it below xon it resumes, its next frame due at the later of then
 * and when it would have sent.
 *
 * dcqcn: the switch stands in for the receiver's notification point. When a CE-marked frame
 * of sender j leaves the switch at t and the NP's pacing allows one (at most one CNP per
 * min_time_between_cnps per sender, dcqcn_np_may_send), a CNP reaches sender j at
 * t + cnp_delay_ns. Before each of its frames the sender takes the CNPs that have arrived and
 * runs its reaction point up to the frame: dcqcn_rp_advance(), dcqcn_rp_on_cnp(); every frame
 * it sends counts in the byte counter. The model is the one rocegen and rocestat use.
 */

#include <stdbool.h>
#include <stdint.h>

#include "lib/dcqcn/dcqcn.h"
#include "lib/tm/emu_incast.h"

#define EMU_INCAST_CNP_RING 256 /* CNPs on their way to one sender (power of two) */

struct emu_incast_host {
	uint64_t next_ns;      /**< next frame due; UINT64_MAX while paused or stopped */
	uint64_t want_ns;      /**< while paused: when it would have sent */
	double last_ns;        /**< when its last frame went (exact, sub-ns) */
	bool sent_any;         /**< since the last (re)start */
	uint64_t queued_bytes; /**< its frames' bytes in the switch */
	bool paused;
	uint64_t pause_start_ns;
	struct dcqcn_rp rp;
	uint64_t np_last_ns;   /**< the NP's last CNP for this sender (UINT64_MAX: none) */
	uint64_t cnp_at[EMU_INCAST_CNP_RING];
	uint32_t cnp_head, cnp_tail;
	/* counters */
	uint64_t frames, bytes, left_bytes, marked, pauses, paused_ns, cnps;
	uint64_t cuts_before; /**< rate cuts of reaction points a restart replaced */
};

struct emu_incast_hosts {
	unsigned int n;         /**< senders now (the source's "senders") */
	bool running;
	bool pfc;
	bool dcqcn;
	uint64_t xoff_bytes, xon_bytes;
	uint64_t wire_bits;     /**< of one frame */
	uint64_t rate_bps;      /**< each sender's line rate */
	uint64_t cnp_delay_ns;
	struct dcqcn_params dp;
	uint64_t cnp_ring_full; /**< CNPs lost because a ring was full (never with 4 us pacing) */
	struct emu_incast_host h[EMU_INCAST_MAX_HOSTS];
};

/** Set up for source @p c at port PFC thresholds @p xoff_bytes / @p xon_bytes. */
void emu_incast_hosts_init(struct emu_incast_hosts *hs, const struct emu_incast_cfg *c,
			   uint64_t xoff_bytes, uint64_t xon_bytes);

/**
 * (Re)start the senders of @p c at @p epoch_ns (the source enabled, or its senders or rate
 * changed): rates back to line rate, DCQCN state and CNPs in flight forgotten; the bytes in
 * the switch and the pause state stay (those frames are still queued). Disabled: stopped.
 */
void emu_incast_hosts_start(struct emu_incast_hosts *hs, const struct emu_incast_cfg *c,
			    uint64_t epoch_ns);

/** Stop every sender for good (replay: input exhausted). */
void emu_incast_hosts_stop(struct emu_incast_hosts *hs);

/** The sender whose frame is due first and when (UINT64_MAX, -1: none). */
int emu_incast_hosts_next(const struct emu_incast_hosts *hs, uint64_t *t_ns);

/**
 * Sender @p j's wake-up time @p t_ns has come: it takes the CNPs that arrived and runs its
 * reaction point to t_ns; then, when the rate now allows a frame (one wire time at the
 * current rate after its last; the first frame at once), it sends one of @p len bytes (counted
 * in the switch; call emu_incast_hosts_check() once it was offered to the TM) and returns
 * true. Else it sets its next wake-up: when the frame will be due at this rate, or the
 * reaction point's next rate increase if sooner.
 */
bool emu_incast_hosts_poll(struct emu_incast_hosts *hs, unsigned int j, uint32_t len,
			   uint64_t t_ns);

/** After the enqueue at @p t_ns: sender @p j stops when above xoff. */
void emu_incast_hosts_check(struct emu_incast_hosts *hs, unsigned int j, uint64_t t_ns);

/** A frame of sender @p j left the switch at @p t_ns, CE-marked or not. */
void emu_incast_hosts_left(struct emu_incast_hosts *hs, unsigned int j, uint32_t len, bool ce,
			   uint64_t t_ns);

/** A frame of sender @p j was dropped at @p t_ns (TM refusal or later). */
void emu_incast_hosts_gone(struct emu_incast_hosts *hs, unsigned int j, uint32_t len,
			   uint64_t t_ns);

/** What reports show of one sender. */
struct emu_incast_host_stats {
	uint64_t frames, bytes, left_bytes, marked, cnps, rate_cuts, pauses, paused_ns;
	uint64_t queued_bytes;
	double rate_mbps; /**< current: Rc with DCQCN, else the line rate */
	bool paused;
};

/** Sender @p j's counters and state at @p now_ns (paused time includes an open pause). */
void emu_incast_host_stats(const struct emu_incast_hosts *hs, unsigned int j, uint64_t now_ns,
			   struct emu_incast_host_stats *out);

#endif
