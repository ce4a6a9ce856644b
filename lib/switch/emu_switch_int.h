/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef EMU_SWITCH_INT_H
#define EMU_SWITCH_INT_H

/*
 * Inside the switch: the state the runner (emu_switch.c), its incast sources
 * (emu_switch_incast.c), its reports (emu_report.c), its drop reasons and annotations
 * (emu_reasons.c) and its accessors (emu_switch_access.c) share. Not for stages or apps.
 */

#include <pthread.h>
#include <string.h>

#include "lib/switch/emu_program.h"
#include "lib/switch/emu_switch.h"
#include "lib/tm/emu_incast_host.h"

#define EMU_EMIT_CAP (EMU_BURST * 4)
#define EMU_TM_RNG_STREAM 0x544dULL /* "TM": stages draw theirs from their names (emu_rng_stream_of) */
#define EMU_ETHERTYPE_MAC_CONTROL 0x8808 /* DPDK 22.11 has no constant for it */
#define EMU_INCAST_CATCHUP 1024 /* incast frames generated per runner call at most */
#define EMU_HO_STAGE 64 /* frames staged for one other worker before they are pushed */

/* Counters the runner itself keeps (drop_* count in conservation). */
#define EMU_RUN_FOREACH_CTR(_) \
	_(CREATED, "created") \
	_(FLOOD_COPIES, "flood_copies") \
	_(DROP_NO_ROUTE, "drop_no_route") \
	_(DROP_BAD_PORT, "drop_bad_port") \
	_(DROP_FLOOD_NOMBUF, "drop_flood_nombuf") \
	_(DROP_DISCARDED_AT_EXIT, "drop_discarded_at_exit") \
	_(PROFILE_CHANGES, "profile_changes") \
	_(CONSUMED_MAC_CONTROL, "consumed_mac_control") \
	_(PFC_CREATED, "pfc_created") \
	_(PFC_NOT_SENT_NOMBUF, "pfc_not_sent_nombuf") \
	_(HANDOFF_OUT, "handoff_out") \
	_(HANDOFF_IN, "handoff_in") \
	_(DROP_HANDOFF_FULL, "drop_handoff_full") \
	_(HANDOFF_DELAY_NS, "handoff_delay_ns") \
	_(HANDOFF_PFC, "handoff_pfc") \
	_(HANDOFF_PFC_DELAY_MAX_NS, "handoff_pfc_delay_max_ns")

enum emu_run_ctr {
#define EMU_RUN_CTR_ENUM(e, s) EMU_RUN_CTR_##e,
	EMU_RUN_FOREACH_CTR(EMU_RUN_CTR_ENUM)
#undef EMU_RUN_CTR_ENUM
	EMU_RUN_CTR_MAX
};

extern const char *const emu_run_ctr_names[EMU_RUN_CTR_MAX];

struct emu_stage_inst {
	const struct emu_stage_ops *ops;
	void *priv;
	char name[64];
	bool egress;
	bool initialised;
	uint64_t *ctr;
	uint32_t reason_base; /* drop reason id of counter 0 */
	struct emu_rng rng;
	uint64_t in_pkts, out_pkts;
};

struct emu_tx_stage {
	struct rte_mbuf *pkts[EMU_TX_STAGE_PKTS];
	uint32_t lens[EMU_TX_STAGE_PKTS]; /* read before TX: the driver may free on send */
	uint16_t n;
};

/* One incast source: its schedule, its filler frame and its counters. */
struct emu_incast_src {
	struct emu_incast_sched s;
	uint8_t *tmpl;        /* the frame every virtual sender sends (cfg.frame_bytes) */
	struct roce_pkt pkt;  /* its parse result, copied into each frame's meta */
	struct emu_incast_hosts *hosts; /* closed loop (honour_pfc, dcqcn): each sender; else NULL */
	uint64_t ctr[EMU_INCAST_CTR_MAX];
	bool foreign; /* its port's egress is another worker's: generated there */
};

struct emu_switch {
	struct emu_pipeline *pl;
	struct emu_switch *primary; /* a replica's first replica (emu_switch_create_replica) */
	struct rte_mempool *pool;
	unsigned int n_ports;
	unsigned int n_stages;
	unsigned int n_ingress; /* stages[0 .. n_ingress) are ingress, the rest egress */
	bool any_release;       /* some stage holds packets (ops->release): polled every pass */
	bool any_egress_release; /* some egress stage does */
	bool any_clock;         /* some stage takes the worker's clock (ops->clock) */
	bool trace;             /* packets' traces are written: someone reads them */
	struct emu_stage_inst stages[EMU_MAX_STAGES];
	struct emu_tm *tm;
	struct emu_rng tm_rng; /* ECN marking decisions */
	struct emu_port_stats port_stats[EMU_MAX_PORTS];
	struct emu_tx_stage tx[EMU_MAX_PORTS];
	uint64_t ctr[EMU_RUN_CTR_MAX];
	struct rte_mbuf *emit_pkts[EMU_EMIT_CAP];
	uint16_t emit_ports[EMU_EMIT_CAP];
	struct emu_emit emit;
	struct emu_program *prog;
	uint64_t prog_t0_ns;
	struct emu_program *pending_prog; /* offered by another lcore, taken by the owner */
	struct emu_program *retired_prog; /* the one it replaced, for the offerer to free */
	/*
	 * Every key a profile can change, with the value the pipeline gave it (taken once at
	 * build, before the worker runs): {"tm": [port...], "stages": [obj|null...], "incast":
	 * [...]}. What timed phases put back; the control path never reads the running switch.
	 */
	json_t *settings;
	uint64_t last_now_ns;
	struct emu_port_stats last_interval[EMU_MAX_PORTS];
	double last_interval_s;
	unsigned int n_incast;
	struct emu_incast_src incast[EMU_MAX_INCAST];
	/* the one drop path: reason ids are ranges of counters (stages, TM ports, incast, runner) */
	struct emu_dropper dropper;
	uint32_t tm_reason_base, incast_reason_base, run_reason_base, n_reasons;
	uint64_t seed;
	/* the emulated fabric (emu_switch_fabric.c), when the pipeline has one */
	const struct fab_cfg *fab;
	struct fab_rt *fab_rt;
	struct emu_rng fab_rng;
	uint32_t fab_reason_base;
	uint64_t fab_ev[FAB_MAX_LINKS]; /* each link's next event */
	uint64_t fab_dirty;             /* links whose next event must be recomputed */
	uint64_t fab_lossy;             /* links with a loss probability (bit l: link l) */
	bool fab_pfc;                   /* some port or link is lossless: PFC between hops */
	/* the links level by level (levels_exact): level k's are fab_lvl_lk[fab_lvl_at[k] ..
	 * fab_lvl_at[k + 1] - 1], their TM ports beside them; and the real ports on a leaf */
	uint16_t fab_lvl_lk[FAB_MAX_LINKS], fab_lvl_port[FAB_MAX_LINKS];
	uint8_t fab_lvl_at[FAB_MAX_LINKS + 1];
	uint16_t fab_dests[EMU_MAX_PORTS];
	unsigned int fab_n_dests;
	bool general_only;              /* emu_switch_set_general_only() (tests) */
	uint64_t fab_link_ctr[FAB_MAX_LINKS][FAB_LINK_CTR_MAX];
	uint64_t fab_sw_ctr[FAB_MAX_SWITCHES][FAB_SW_CTR_MAX];
	/*
	 * One of several replicas on worker lcores (emu_switch_worker.c): the TMs of the ports in
	 * foreign are another worker's, so frames for them (and received MAC control frames for
	 * their egress) go to that worker's ring instead, staged here and pushed once a poll.
	 * foreign is 0 when one switch runs alone: one test a frame on the fast path.
	 */
	uint64_t foreign;
	uint8_t owner_of[EMU_MAX_PORTS];
	unsigned int n_workers;
	struct rte_ring *ho_ring[EMU_MAX_WORKERS];
	uint16_t ho_n[EMU_MAX_WORKERS];
	struct rte_mbuf *ho_pkts[EMU_MAX_WORKERS][EMU_HO_STAGE];
	/* counter snapshots for other threads (emu_switch_snap_request()) */
	pthread_mutex_t snap_mu;
	struct emu_snap *snap;
	bool snap_req;
	uint64_t snap_seq;
};

/* A drop by the runner itself, through the drop path. */
static inline void
emu_switch_drop(struct emu_switch *sw, struct rte_mbuf *m, unsigned int c)
{
	emu_drop(&sw->dropper, m, sw->run_reason_base + c, &sw->ctr[c]);
}

/* emu_report.c */
/* A consistent copy of every counter the stats show, taken between bursts by the owner. */
struct emu_snap {
	struct emu_port_stats ports[EMU_MAX_PORTS];
	uint64_t tm_held[EMU_TM_MAX_PORTS]; /* real ports, then fabric links */
	bool tm_link_up[EMU_TM_MAX_PORTS]; /* a profile's "link": "down" */
	uint64_t tm_ctr[EMU_TM_MAX_PORTS][EMU_TM_CTR_MAX];
	struct emu_tm_prio_stats prio[EMU_TM_MAX_PORTS][EMU_TM_N_PRIO];
	uint64_t fab_link_ctr[FAB_MAX_LINKS][FAB_LINK_CTR_MAX];
	uint64_t fab_sw_ctr[FAB_MAX_SWITCHES][FAB_SW_CTR_MAX];
	uint64_t buf_used, buf_total;
	uint64_t run_ctr[EMU_RUN_CTR_MAX];
	uint64_t st_in[EMU_MAX_STAGES], st_out[EMU_MAX_STAGES];
	bool incast_enabled[EMU_MAX_INCAST];
	uint64_t incast_ctr[EMU_MAX_INCAST][EMU_INCAST_CTR_MAX];
	struct emu_incast_host_stats incast_host[EMU_MAX_INCAST][EMU_INCAST_MAX_HOSTS];
	struct emu_conservation cons;
	uint64_t stage_ctr[]; /* every stage's counters, one after the other */
};

bool emu_is_drop_name(const char *name);

/* emu_switch_worker.c: is @p port's egress another worker's? */
static inline bool
emu_switch_foreign(const struct emu_switch *sw, unsigned int port)
{
	return port < EMU_MAX_PORTS && ((sw->foreign >> port) & 1) != 0;
}

/* Hand @p m (its meta->out_port set, or a received MAC control frame with EMU_META_RXCTL) to
 * the worker that owns @p port. */
void emu_switch_handoff(struct emu_switch *sw, unsigned int port, struct rte_mbuf *m);

/* The run of parsed frames at @p pkts (not MAC control) to @p port, which another worker
 * owns, staged for it at once; returns how many (0: the first is not such a frame). */
uint16_t emu_switch_handoff_run(struct emu_switch *sw, uint16_t port, struct rte_mbuf **pkts,
				uint16_t n);

/* emu_switch_incast.c */
int emu_switch_incast_init(struct emu_switch *sw, struct emu_err *err);
bool emu_switch_incast_gen(struct emu_switch *sw, uint64_t until_ns);
uint16_t emu_switch_incast_release(struct emu_switch *sw, struct rte_mbuf **pkts, uint16_t n,
				   struct rte_mbuf **sink, uint16_t *n_sink);
void emu_switch_incast_sink(struct emu_switch *sw, struct rte_mbuf **sink, uint16_t n_sink);
void emu_switch_incast_start(struct emu_switch *sw, unsigned int i, uint64_t epoch_ns);
void emu_switch_incast_apply(struct emu_switch *sw, unsigned int i, const struct emu_set *set,
			     uint64_t now_ns);
void emu_switch_incast_free(struct emu_switch *sw);

/* emu_reasons.c: what stages get in their env */
size_t emu_switch_env_annotate(const void *sw, const struct emu_pkt_meta *meta, int drop_reason,
			       bool all, char *buf, size_t len);
int emu_switch_env_add_drop_hook(void *sw,
				 void (*fn)(void *arg, struct rte_mbuf *m, uint32_t reason),
				 void *arg);

/* emu_switch_access.c */
json_t *emu_switch_settings_snapshot(const struct emu_switch *sw);

/* emu_switch_fabric.c */
int emu_switch_fabric_init(struct emu_switch *sw, struct emu_err *err);
void emu_switch_fabric_free(struct emu_switch *sw);
bool emu_switch_fabric_enter(struct emu_switch *sw, struct rte_mbuf *m, uint64_t now_ns);
uint16_t emu_switch_fabric_enter_run(struct emu_switch *sw, struct rte_mbuf **pkts, uint16_t n,
				     uint64_t now_ns);
/* A virtual sender's frame (out_port set) enters the fabric at @p leaf; drops go through the
 * drop path (the caller's hook counts them). */
void emu_switch_fabric_enter_virtual(struct emu_switch *sw, struct rte_mbuf *m, unsigned int leaf,
				     uint64_t now_ns);
void emu_switch_fabric_advance(struct emu_switch *sw, uint64_t now_ns);
void emu_switch_fabric_pause(struct emu_switch *sw, const struct emu_tm_pfc_frame *f,
			     uint64_t now_ns);
void emu_switch_fabric_touch(struct emu_switch *sw, uint16_t tm_port);
void emu_switch_fabric_discard(struct emu_switch *sw);

/* emu_switch.c */
void emu_switch_enqueue(struct emu_switch *sw, struct rte_mbuf *m, uint64_t now_ns);
void emu_switch_enqueue_runs(struct emu_switch *sw, uint16_t rx_port, struct rte_mbuf **pkts,
			     uint16_t n, uint64_t now_ns);
void emu_switch_send_pfc(struct emu_switch *sw, uint64_t now_ns);
void emu_switch_drop_bulk(struct emu_switch *sw, struct rte_mbuf **m, unsigned int n,
			  unsigned int c);
bool emu_switch_drain(struct emu_switch *sw, uint16_t port, uint64_t now_ns);
void emu_switch_port_mac(uint16_t port, uint8_t mac[6]);

/* A received frame's metadata: arrival now on @p port, nothing decided yet. */
static inline void
emu_switch_rx_meta(const struct emu_switch *sw, struct emu_pkt_meta *meta, uint16_t port,
		   uint64_t now_ns)
{
	meta->ts_ns = now_ns;
	meta->in_port = port;
	meta->out_port = EMU_PORT_NONE;
	meta->prio = 0;
	meta->flags = 0;
	if (sw->trace) {
		memset(&meta->trace, 0, sizeof(meta->trace)); /* padding too: captures copy it */
		meta->trace.t_in_ns = now_ns;
	}
}

#endif
