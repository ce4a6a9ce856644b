/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef ROCEMU_LIVE_H
#define ROCEMU_LIVE_H

/*
 * Live mode, shared by its files: live.c (options and the main loop), live_port.c (ports,
 * queues and the NIC's own counters), live_plan.c (who owns and polls what), live_worker.c
 * (the worker lcores, their rings and the merged view of their switches), live_spread.c
 * (--rx-spread), live_guard.c (ports[].rx_guard), live_ctl.c (profile reloads and telemetry).
 * docs/multicore.md has the picture of the lcores and rings.
 */
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <rte_common.h>
#include <rte_ethdev.h>
#include <rte_ring.h>

#include "app.h"

#define LIVE_RXD 1024
#define LIVE_TXD 1024
#define LIVE_MAX_WORKERS 16
#define LIVE_MAX_RXQ 16      /* RX queues of one port */
#define LIVE_RING_SIZE 1024  /* a handoff ring's entries (per sender, owner pair), default */
#define LIVE_RING_BURSTS 8   /* bursts a worker takes from one ring in one poll, at most */

/* A worker's counters: one writer (the worker), read by the main lcore; no read-modify-write. */
#define LIVE_STORE(p, v) __atomic_store_n((p), (v), __ATOMIC_RELAXED)
#define LIVE_LOAD(p) __atomic_load_n((p), __ATOMIC_RELAXED)

/* One RX queue a worker polls: the pipeline's port index and the queue; its RX guard state. */
struct live_rxq {
	uint16_t port;
	uint16_t queue;
	bool guard_over;        /* held xoff frames or more, not yet xon or fewer */
	uint64_t guard_since;   /* ... since then */
	uint64_t guard_refresh; /* next XOFF refresh */
};

/* ports[].rx_guard of one port (live_guard.c); set at start, but for over. */
struct live_guard {
	bool on;
	uint32_t xoff, xon;   /* frames held by one RX queue */
	uint16_t vector;      /* the port's lossless priorities */
	uint16_t quanta;
	uint64_t refresh_ns;  /* half the pause the quanta give at the link's speed */
	uint32_t over;        /* atomic: bit q = RX queue q above xoff (changed on crossings) */
};

/* A worker's RX guard counters for one port (one writer). */
struct live_guard_ctr {
	uint64_t xoff, xon, refresh, not_sent;
	uint64_t fill_max;    /* the most frames it saw in one of the port's RX queues */
	uint64_t over_ns;     /* time its queues spent above xoff (closed intervals) */
};

/*
 * One worker lcore. Its counters have one writer, the worker (relaxed atomic stores, no
 * read-modify-write), and are read by the main lcore; the line is its own.
 */
struct live_worker {
	struct live_state *st;
	unsigned int idx;
	unsigned int lcore;
	struct emu_switch *sw;     /* its replica: owns the TMs of the ports in owned */
	uint64_t owned;            /* egress ports (bit p) whose TM and TX queue it owns */
	unsigned int n_rxq;
	struct live_rxq rxq[EMU_MAX_PORTS * LIVE_MAX_RXQ];
	bool done;                 /* stopped and drained (release store) */
	/* counters */
	uint64_t rx_pkts;          /* taken from NIC queues on this lcore */
	uint64_t tx_pkts;          /* accepted by rte_eth_tx_burst on this lcore */
	uint64_t busy_tsc;         /* TSC cycles of polls that moved a frame */
	uint64_t idle_tsc;         /* ... and of polls that moved none */
	uint64_t ring_hwm[LIVE_MAX_WORKERS]; /* most entries seen in its ring from worker w */
	uint64_t spread_out;       /* --rx-spread: frames it received and pushed to others */
	uint64_t spread_in;        /* ... and took from others, to run their ingress */
	uint64_t gaps_over_1ms;
	uint64_t gap_max_ns;       /* the longest of those */
	uint64_t gap_longest_ns;   /* the longest time between two polls */
	uint64_t last_poll_ns;
	/* the shared buffer: its TMs' cells in use, published once a poll */
	uint64_t buf_used_cells;
	struct live_guard_ctr guard[EMU_MAX_PORTS]; /* RX guard, per port */
} __rte_cache_aligned;

/* The NIC's own counters of one port, as deltas from the start (rte_eth_stats). */
struct live_nic {
	uint64_t ipackets, opackets;
	uint64_t imissed, ierrors, rx_nombuf, oerrors;
};

struct live_state {
	struct app_ctx ctx;
	uint16_t port_ids[EMU_MAX_PORTS];
	unsigned int n_ports;
	uint64_t tsc_hz;
	uint64_t tsc0;
	uint64_t wall0_ns;
	double drain_s;
	bool inline_main; /* only one lcore: the main lcore also runs the switch */
	bool stop_rx;     /* atomic: the main lcore asks the workers to stop */
	uint64_t drain_left; /* packets still held when the drain deadline passed */
	bool strict;         /* --strict: frames rocemu itself lost make the exit status 1 */
	/* workers */
	unsigned int n_workers;
	unsigned int n_rxq[EMU_MAX_PORTS];        /* RX queues per port */
	uint8_t owner_of[EMU_MAX_PORTS];          /* egress owner of each port */
	struct live_worker *w;                    /* n_workers of them */
	struct rte_ring *ring[LIVE_MAX_WORKERS][LIVE_MAX_WORKERS]; /* [from][to], SPSC */
	const char *rxq_map;                      /* --rxq-map */
	bool rx_spread;                           /* --rx-spread */
	bool spread_port[EMU_MAX_PORTS];          /* ports it applies to (one RX queue) */
	struct rte_ring *spread[LIVE_MAX_WORKERS][LIVE_MAX_WORKERS]; /* [poller][worker] */
	struct live_guard guard[EMU_MAX_PORTS];   /* ports[].rx_guard */
	bool any_guard;
	unsigned int ring_size;                   /* --ring-size */
	unsigned int ring_low;                    /* RX pauses below this much room */
	/* NIC counters at the start, and the deltas when last read */
	struct rte_eth_stats *nic0;
	struct live_nic nic[EMU_MAX_PORTS];
	/* each worker's handoff counters at exit (before its counters join worker 0's) */
	struct emu_snap_view exit_views[LIVE_MAX_WORKERS];
};

/* Where live mode's own lines go: stdout, or stderr when an output is standard output. */
extern FILE *live_out_f;
#define live_out (live_out_f != NULL ? live_out_f : stdout)

extern volatile sig_atomic_t live_signals;
extern volatile sig_atomic_t live_first_signal;
extern volatile sig_atomic_t live_reload;

/* live_port.c */
int live_find_ports(struct live_state *st);
int live_port_setup(struct live_state *st, unsigned int i);
void live_ports_close(struct live_state *st);
int live_nic_start(struct live_state *st);
void live_nic_read(const struct live_state *st, struct live_nic *out);
uint64_t live_nic_lost(const struct live_nic *nic, unsigned int n_ports, uint64_t *rx_lost,
		       uint64_t *tx_lost);
json_t *live_nic_json(const struct live_state *st, const struct live_nic *nic);
/** The packet pool: {"in_use": mbufs out of the pool now, "total": its size}. */
json_t *live_mbufs_json(const struct live_state *st);

/* live_guard.c */
/** Check and fill in the guarded ports' settings (after the ports started); -1 with a line. */
int live_guard_setup(struct live_state *st);
/** Worker side: read RX queue @p i's fill and send XOFF/XON on a crossing. */
void live_guard_check(struct live_worker *w, unsigned int i, uint64_t now);
json_t *live_guard_json(const struct live_state *st, unsigned int port);
void live_guard_print(const struct live_state *st, FILE *f);

/* live_plan.c */
int live_workers_plan(struct live_state *st, unsigned int *lcores, unsigned int n_lcores);

/* live_worker.c */
uint64_t live_now_ns(const struct live_state *st);
double live_elapsed_s(const struct live_state *st);
int live_workers_build(struct live_state *st, struct emu_err *err);
/** SPSC rings [from][to] between every two workers, named PREFIX_from_to (@p what: messages). */
int live_rings_create(struct live_state *st, struct rte_ring *ring[][LIVE_MAX_WORKERS],
		      const char *prefix, const char *what, struct emu_err *err);
/** Free a matrix of rings (accepts NULL entries) and clear it. */
void live_rings_free(struct rte_ring *ring[][LIVE_MAX_WORKERS]);
void live_workers_free(struct live_state *st);
int live_worker_main(void *arg);
void live_poll(struct live_worker *w, bool rx);
void live_drain(struct live_state *st);
bool live_workers_done(const struct live_state *st);
void live_print_gaps(const struct live_state *st);
void live_print_workers(const struct live_state *st, const struct emu_snap_view *views, FILE *f);
json_t *live_workers_json(const struct live_state *st, const struct emu_snap_view *views);
void live_workers_merge(struct live_state *st, struct emu_snap_view *views);
struct emu_snap *live_snap(struct live_state *st, bool from_main, uint64_t timeout_us,
			   struct emu_snap_view *views);
json_t *live_stats_json(struct live_state *st, bool from_main, uint64_t timeout_us);
void live_offer_program(struct live_state *st, struct emu_profile *np);
bool live_program_taken(struct live_state *st, struct emu_program **old);
void live_set_program(struct live_state *st, struct emu_profile *prof);
void live_programs_free(struct live_state *st);

/* live_spread.c (--rx-spread) */
int live_spread_build(struct live_state *st, struct emu_err *err);
/** Received on a spread port: this worker's share through its replica, the rest pushed. */
void live_spread_rx(struct live_worker *w, uint16_t port, struct rte_mbuf **pkts, uint16_t n,
		    uint64_t now);
/** What the pollers pushed to this worker, through its replica's ingress. Returns frames. */
unsigned int live_spread_take(struct live_worker *w, uint64_t now);
/** Whether a spread ring this worker feeds has room for less than two bursts. */
bool live_spread_low(const struct live_worker *w);
bool live_spread_empty(const struct live_state *st);

/* live_ctl.c */
int live_reload_profile(struct live_state *st, const char *file, char *msg, size_t len);
void live_ctl_serve(struct live_state *st);
void live_ctl_register(struct live_state *st, const char *profile);
void live_ctl_sighup(struct live_state *st);

#endif
