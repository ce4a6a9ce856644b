/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef ROCEMU_DCQCN_H
#define ROCEMU_DCQCN_H

/**
 * @file
 * DCQCN as a pure model (no I/O, no clock: time comes in as nanoseconds), shared by
 * rocegen (the sender's reaction point, the receiver's notification point) and
 * rocestat (the expected rate trajectory of a real NIC for given parameters).
 * Parameter names and defaults are NVIDIA ConnectX's (mlx5); see docs/wire.md.
 *
 * Reaction point (per QP): current rate Rc, target rate Rt, alpha. Timing as NVIDIA documents
 * it (mlxconfig parameter descriptions, FreeBSD mlx5_ib.h; see docs/wire.md), the same shape
 * as the "Mellanox version" of DCQCN in HPCC's ns-3 (rdma-hw.cc):
 *  - The first CNP of a QP sets alpha = initial_alpha and starts two fixed grids at its
 *    arrival time t0: the alpha grid (every dce_tcp_rtt) and the monitor grid (every
 *    rate_reduce_monitor_period).
 *  - A CNP does not cut the rate at once: any CNP received during a monitor period causes one
 *    cut at the start of the next period (t0 + k P); further CNPs in the same period add
 *    nothing (counted as coalesced). A CNP arriving exactly on a boundary belongs to the
 *    period that starts there. The cut:
 *        Rt = Rc                    (on the first cut, when clamp_tgt_rate, or when
 *                                    clamp_tgt_rate_after_time_inc and a timer increase
 *                                    happened since the last cut)
 *        Rc = max(Rmin, Rc (1 - alpha / 2), Rc (1 - min_dec_fac))
 *    and both increase counters and the increase timer restart.
 *  - alpha is updated at every point of its grid whether or not a CNP came:
 *        alpha = (1 - g) alpha + g   if a CNP arrived in the period just ended (the first
 *                                    CNP, which set alpha, does not count)
 *        alpha = (1 - g) alpha       otherwise.
 *    When an alpha update and a cut fall on the same instant, alpha is updated first.
 *  - increase events: the timer (every rpg_time_reset after the last cut) or the byte counter
 *    (every rpg_byte_reset bytes sent; 0 = byte counter off) bump T or BC, then with
 *    F = rpg_threshold:
 *        max(T, BC) <  F : fast recovery   Rc = (Rt + Rc) / 2
 *        min(T, BC) >= F : hyper increase  Rt += HAI; Rc = (Rt + Rc) / 2
 *        otherwise       : additive        Rt += AI;  Rc = (Rt + Rc) / 2
 *    With the byte counter off the stage follows T alone, as HPCC's timer-only model:
 *    T < F fast recovery, T = F additive, T > F hyper. HAI is a fixed step per event
 *    (NVIDIA: "the rate used to increase rpTargetRate in the RPR_HYPER_INCREASE state").
 *    Rt and Rc never exceed the line rate; at line rate the timer stops until the next cut.
 * Notification point: at most one CNP per QP per min_time_between_cnps.
 */

#include <stdbool.h>
#include <stdint.h>

struct dcqcn_params {
	double line_rate_mbps;          /**< the NIC port's rate */
	uint64_t rpg_time_reset_ns;     /**< rate-increase timer */
	uint64_t rpg_byte_reset;        /**< rate-increase byte counter (bytes; 0 = off) */
	uint32_t rpg_threshold;         /**< F */
	double rpg_ai_rate_mbps;        /**< additive increase */
	double rpg_hai_rate_mbps;       /**< hyper increase */
	uint32_t rpg_min_dec_fac_pct;   /**< one decrease keeps at least (100 - this) % */
	double rpg_min_rate_mbps;       /**< floor */
	double g;                       /**< alpha EWMA weight */
	uint64_t alpha_period_ns;       /**< dce_tcp_rtt: alpha update period */
	uint64_t rate_reduce_monitor_period_ns;
	double initial_alpha;
	bool clamp_tgt_rate;
	bool clamp_tgt_rate_after_time_inc;
	uint64_t min_time_between_cnps_ns; /**< notification point pacing */
};

/** NVIDIA ConnectX defaults (docs/wire.md) for a port of @p line_rate_mbps. */
void dcqcn_params_nvidia(struct dcqcn_params *p, double line_rate_mbps);

/**
 * The DCQCN paper's values (g = 1/256, 55 us timers, 10 MB byte counter, F = 5, AI 40 Mb/s,
 * HAI 200 Mb/s, 50 us between CNPs).
 */
void dcqcn_params_paper(struct dcqcn_params *p, double line_rate_mbps);

/** Fill @p p by name: "nvidia" or "paper"; returns 0 or -EINVAL. */
int dcqcn_params_by_name(struct dcqcn_params *p, const char *name, double line_rate_mbps);

/** Reaction point state of one QP. */
struct dcqcn_rp {
	double rc_mbps;
	double rt_mbps;
	double min_rc_mbps;        /**< the lowest Rc so far (right after a cut, however late
				    * the caller advances: a rate it never sampled counts) */
	double alpha;
	bool cnp_seen;
	bool cut_pending;          /**< a CNP came in the current monitor period */
	bool alpha_cnp;            /**< a CNP came in the current alpha period */
	bool timer_inc_since_cnp;  /**< a timer increase since the last cut */
	uint64_t grid0_ns;         /**< the first CNP: origin of the alpha and monitor grids */
	uint64_t last_decrease_ns; /**< time of the last cut */
	uint64_t next_cut_ns;      /**< monitor boundary of the pending cut (UINT64_MAX: none) */
	uint64_t next_alpha_ns;    /**< next alpha update (UINT64_MAX before the first CNP) */
	uint64_t next_timer_ns;    /**< next timer increase event (UINT64_MAX: stopped) */
	uint64_t bytes_since;      /**< bytes sent since the last byte-counter event */
	uint32_t t_events;         /**< T: timer events since the last cut */
	uint32_t bc_events;        /**< BC: byte-counter events since the last cut */
	/* counters */
	uint64_t cnps;             /**< CNPs received */
	uint64_t cnps_coalesced;   /**< CNPs in a monitor period whose cut was already pending */
	uint64_t decreases;
	uint64_t fast_recoveries;
	uint64_t additive_increases;
	uint64_t hyper_increases;
};

/** Start at line rate at @p now_ns. */
void dcqcn_rp_init(struct dcqcn_rp *rp, const struct dcqcn_params *p, uint64_t now_ns);

/**
 * Run the grids and timers (alpha updates, pending cuts, rate-increase timer) up to and
 * including @p now_ns, in time order.
 */
void dcqcn_rp_advance(struct dcqcn_rp *rp, const struct dcqcn_params *p, uint64_t now_ns);

/**
 * A CNP arrived at @p now_ns (after dcqcn_rp_advance to it). Returns true when it scheduled a
 * cut (the first CNP of its monitor period), false when a cut was already pending.
 */
bool dcqcn_rp_on_cnp(struct dcqcn_rp *rp, const struct dcqcn_params *p, uint64_t now_ns);

/** @p bytes were sent at @p now_ns (drives the byte counter). */
void dcqcn_rp_on_bytes(struct dcqcn_rp *rp, const struct dcqcn_params *p, uint64_t bytes,
		       uint64_t now_ns);

/**
 * Notification point pacing: whether a CNP may be sent at @p now_ns for a QP whose last CNP
 * went at *@p last_ns (UINT64_MAX = never); updates *@p last_ns when it may.
 */
bool dcqcn_np_may_send(uint64_t *last_ns, const struct dcqcn_params *p, uint64_t now_ns);

#endif
