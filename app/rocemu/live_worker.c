/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Live mode's worker lcores. Each worker runs its replica of the switch
 * (lib/switch/emu_switch_worker.c): it polls the RX queues given to it, runs the ingress
 * stages on what it receives, and owns the egress of some ports (TM, egress stages, the TX
 * queue). Frames for another worker's port cross an SPSC rte_ring per (sender, owner) pair.
 * The main lcore sleeps between its chores (stats, capture files, reloads) and reads the
 * workers only through their snapshots and single-writer counters. docs/multicore.md.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>
#include <rte_malloc.h>
#include <rte_mempool.h>
#include <rte_ring.h>

#include "lib/base/emu_tsan.h"
#include "live.h"

uint64_t
live_now_ns(const struct live_state *st)
{
	uint64_t d = rte_rdtsc() - st->tsc0;

	/* d * 1e9 / hz without overflow for ~centuries of uptime at GHz rates */
	return st->wall0_ns + (d / st->tsc_hz) * 1000000000ULL +
	       (d % st->tsc_hz) * 1000000000ULL / st->tsc_hz;
}

double
live_elapsed_s(const struct live_state *st)
{
	return (double)(live_now_ns(st) - st->wall0_ns) / 1e9;
}

int
live_rings_create(struct live_state *st, struct rte_ring *ring[][LIVE_MAX_WORKERS],
		  const char *prefix, const char *what, struct emu_err *err)
{
	char name[RTE_RING_NAMESIZE];
	unsigned int a, b;

	for (a = 0; a < st->n_workers; a++)
		for (b = 0; b < st->n_workers; b++) {
			if (a == b)
				continue;
			snprintf(name, sizeof(name), "%s_%u_%u", prefix, a % 100, b % 100);
			ring[a][b] = rte_ring_create(name, st->ring_size, rte_socket_id(),
						     RING_F_SP_ENQ | RING_F_SC_DEQ);
			if (ring[a][b] == NULL)
				return emu_err_set(err, "%s ring %u -> %u: %s", what, a, b,
						   rte_strerror(rte_errno));
		}
	return 0;
}

void
live_rings_free(struct rte_ring *ring[][LIVE_MAX_WORKERS])
{
	unsigned int a, b;

	for (a = 0; a < LIVE_MAX_WORKERS; a++)
		for (b = 0; b < LIVE_MAX_WORKERS; b++) {
			rte_ring_free(ring[a][b]);
			ring[a][b] = NULL;
		}
}

/* One replica of the switch per worker beyond the first, and the rings between them. */
int
live_workers_build(struct live_state *st, struct emu_err *err)
{
	unsigned int w;

	st->w[0].sw = st->ctx.sw;
	for (w = 1; w < st->n_workers; w++) {
		/* each replica its own RNG streams (worker 0's are the one-worker run's) */
		st->w[w].sw = emu_switch_create_replica(st->ctx.pl, st->ctx.pool,
							st->ctx.seed + 0x9e3779b97f4a7c15ULL * w,
							st->ctx.sw, err);
		if (st->w[w].sw == NULL)
			return -1;
	}
	if (st->n_workers == 1)
		return 0;
	/* RX pauses while a ring has less room than two bursts (or half of a tiny ring) */
	st->ring_low = RTE_MIN(2u * EMU_BURST, (st->ring_size - 1) / 2);
	if (live_rings_create(st, st->ring, "live_ho", "handoff", err) != 0)
		return -1;
	for (w = 0; w < st->n_workers; w++) {
		if (emu_switch_set_worker(st->w[w].sw, st->w[w].owned, st->owner_of,
					  st->n_workers, st->ring[w], err) != 0)
			return -1;
	}
	return live_spread_build(st, err);
}

void
live_workers_free(struct live_state *st)
{
	unsigned int a;

	if (st->w != NULL)
		for (a = 1; a < st->n_workers; a++)
			emu_switch_free(st->w[a].sw);
	live_rings_free(st->ring);
	live_rings_free(st->spread);
	rte_free(st->w);
	st->w = NULL;
}

/*
 * The shared buffer is one pool over the workers: publish what this replica's TMs hold and
 * admit against what the others published (once a poll, so a line is written by one worker
 * and read by the others once a poll, never once a frame).
 */
static inline void
live_buffer_share(struct live_worker *w)
{
	struct live_state *st = w->st;
	struct emu_tm *tm = emu_switch_tm(w->sw);
	uint64_t others = 0;
	unsigned int i;

	LIVE_STORE(&w->buf_used_cells, emu_tm_buffer_used(tm));
	for (i = 0; i < st->n_workers; i++)
		if (i != w->idx)
			others += LIVE_LOAD(&st->w[i].buf_used_cells);
	emu_tm_buffer_others(tm, others);
}

/* One pass: the rings from other workers, RX of this worker's queues into its replica, TX of
 * what the ports it owns release by then, and the frames for others pushed. */
void
live_poll(struct live_worker *w, bool rx)
{
	struct live_state *st = w->st;
	struct emu_switch *sw = w->sw;
	struct rte_mbuf *pkts[EMU_BURST];
	struct rte_mbuf **tx;
	uint64_t t0 = rte_rdtsc(), now = live_now_ns(st), moved = 0, gap;
	unsigned int i, k, p;
	uint16_t n, sent;

	gap = w->last_poll_ns != 0 ? now - w->last_poll_ns : 0;
	if (unlikely(gap > w->gap_longest_ns))
		LIVE_STORE(&w->gap_longest_ns, gap);
	if (gap > 1000000) {
		LIVE_STORE(&w->gaps_over_1ms, w->gaps_over_1ms + 1);
		if (gap > w->gap_max_ns)
			LIVE_STORE(&w->gap_max_ns, gap);
	}
	w->last_poll_ns = now;
	emu_switch_snap_serve(sw); /* a reader's snapshot, between bursts */
	if (st->n_workers > 1) {
		live_buffer_share(w);
		for (i = 0; i < st->n_workers; i++) {
			unsigned int avail = 0;

			if (i == w->idx)
				continue;
			/* up to LIVE_RING_BURSTS bursts: a ring drains faster than one RX queue
			 * fills it */
			for (k = 0; k < LIVE_RING_BURSTS; k++) {
				/* release first: the slots this dequeue reads may be refilled as
				 * soon as it returns */
				EMU_TSAN_RELEASE(st->ring[i][w->idx]);
				n = (uint16_t)rte_ring_sc_dequeue_burst(st->ring[i][w->idx],
									(void **)pkts, EMU_BURST,
									&avail);
				if (n == 0)
					break;
				EMU_TSAN_ACQUIRE(st->ring[i][w->idx]); /* the frames it took */
				if (k == 0 && n + avail > w->ring_hwm[i])
					LIVE_STORE(&w->ring_hwm[i], (uint64_t)n + avail);
				emu_switch_rx_handoff(sw, pkts, n, now);
				moved += n;
				if (avail == 0)
					break;
			}
		}
		/* --rx-spread: what the pollers of single-queue ports pushed here */
		if (st->rx_spread)
			moved += live_spread_take(w, now);
		/* Backpressure: while a ring to another worker is nearly full, leave the frames in
		 * the NIC's RX ring (where a real NIC counts what overflows as imissed) rather
		 * than take them only to drop them at the ring. */
		for (i = 0; rx && i < st->n_workers; i++)
			if (i != w->idx &&
			    rte_ring_free_count(st->ring[w->idx][i]) < st->ring_low)
				rx = false;
		if (rx && st->rx_spread && live_spread_low(w))
			rx = false;
	}
	for (i = 0; (rx || st->any_guard) && i < w->n_rxq; i++) {
		uint16_t port = w->rxq[i].port;

		n = 0;
		if (rx)
			n = rte_eth_rx_burst(st->port_ids[port], w->rxq[i].queue, pkts, EMU_BURST);
		if (n > 0) {
			if (st->spread_port[port])
				live_spread_rx(w, port, pkts, n, now);
			else
				emu_switch_rx(sw, port, pkts, n, now);
			LIVE_STORE(&w->rx_pkts, w->rx_pkts + n);
			moved += n;
		}
		/* the RX guard reads the ring's fill where it may be high: a full burst, a ring
		 * above XOFF, or one left unread */
		if (unlikely(st->guard[port].on) &&
		    (n == EMU_BURST || !rx || w->rxq[i].guard_over))
			live_guard_check(w, i, now);
	}
	/* The time again after the RX work (about 1-2 us a full pass): what became due meanwhile
	 * leaves in this pass, not one pass later (tests/bench/README.md, seventh pass). */
	if (rx)
		now = live_now_ns(st);
	if (w->owned == 0)
		emu_switch_tick(sw, now); /* profiles and held packets run on every replica */
	for (p = 0; p < st->n_ports; p++) {
		if (!((w->owned >> p) & 1))
			continue;
		n = emu_switch_tx_prepare(sw, (uint16_t)p, now, &tx);
		if (n == 0)
			continue;
		sent = rte_eth_tx_burst(st->port_ids[p], 0, tx, n);
		emu_switch_tx_done(sw, (uint16_t)p, sent);
		LIVE_STORE(&w->tx_pkts, w->tx_pkts + sent);
		moved += sent;
	}
	if (st->n_workers > 1)
		emu_switch_handoff_flush(sw);
	/* after everything this pass pushed into a capture: its writer orders by it */
	emu_switch_publish_clock(sw, now);
	if (moved > 0)
		LIVE_STORE(&w->busy_tsc, w->busy_tsc + (rte_rdtsc() - t0));
	else
		LIVE_STORE(&w->idle_tsc, w->idle_tsc + (rte_rdtsc() - t0));
}

static bool
live_rings_empty(const struct live_state *st)
{
	unsigned int a, b;

	for (a = 0; a < st->n_workers; a++)
		for (b = 0; b < st->n_workers; b++)
			if (st->ring[a][b] != NULL && rte_ring_count(st->ring[a][b]) > 0)
				return false;
	return live_spread_empty(st);
}

static uint64_t
live_held_all(const struct live_state *st)
{
	uint64_t held = 0;
	unsigned int w;

	for (w = 0; w < st->n_workers; w++)
		held += emu_switch_held(st->w[w].sw);
	return held;
}

int
live_worker_main(void *arg)
{
	struct live_worker *w = arg;
	struct live_state *st = w->st;
	uint64_t deadline;

	while (!__atomic_load_n(&st->stop_rx, __ATOMIC_ACQUIRE))
		live_poll(w, true);
	/* its own drain; what another worker hands over late is the main lcore's (live_drain) */
	deadline = live_now_ns(st) + (uint64_t)(st->drain_s * 1e9);
	while (emu_switch_held(w->sw) > 0 && live_now_ns(st) < deadline)
		live_poll(w, false);
	__atomic_store_n(&w->done, true, __ATOMIC_RELEASE);
	return 0;
}

bool
live_workers_done(const struct live_state *st)
{
	unsigned int w;

	for (w = 0; w < st->n_workers; w++)
		if (!__atomic_load_n(&st->w[w].done, __ATOMIC_ACQUIRE))
			return false;
	return true;
}

/*
 * After the workers stopped (or on the main lcore with one lcore): let every replica empty,
 * rings included, up to --drain; what is still held is counted by the caller as discarded.
 */
void
live_drain(struct live_state *st)
{
	uint64_t deadline = live_now_ns(st) + (uint64_t)(st->drain_s * 1e9);
	unsigned int w;

	while ((live_held_all(st) > 0 || !live_rings_empty(st)) && live_now_ns(st) < deadline)
		for (w = 0; w < st->n_workers; w++)
			live_poll(&st->w[w], false);
	/* a frame still in a ring goes to its owner, to be discarded there with the rest */
	for (w = 0; w < st->n_workers && !live_rings_empty(st); w++)
		live_poll(&st->w[w], false);
	st->drain_left = live_held_all(st);
}

/* The poll gaps over 1 ms, one line; a second says what that means when there were any. */
void
live_print_gaps(const struct live_state *st)
{
	uint64_t gaps = 0, max_ns = 0;
	unsigned int w;

	for (w = 0; w < st->n_workers; w++) {
		gaps += st->w[w].gaps_over_1ms;
		max_ns = RTE_MAX(max_ns, st->w[w].gap_max_ns);
	}
	fprintf(live_out, "rocemu: polling: %" PRIu64 " gaps over 1 ms between two polls, the "
		"longest %.3f ms\n", gaps, (double)max_ns / 1e6);
	if (gaps > 0)
		fprintf(live_out, "rocemu: polling: the %s did not poll for up to %.3f ms (%s): arrival times, "
		       "captures and the link's timing are late by up to that\n",
		       st->inline_main ? "main lcore" : "worker lcores", (double)max_ns / 1e6,
		       st->inline_main ? "its captures, telemetry and statistics between polls; "
		       "-l with a second lcore gives the switch one of its own" :
		       "a CPU was shared: isolate the workers' CPUs (isolcpus) and keep other "
		       "processes off them");
}

/* Per worker (main lcore, any time): what it owns and its single-writer counters; handoffs
 * from its snapshot @p sn when given. */
static json_t *
live_worker_json(const struct live_state *st, const struct live_worker *w,
		 const struct emu_snap_view *v)
{
	json_t *o = json_object(), *own = json_array(), *rxq = json_array(), *hwm = json_array();
	uint64_t busy = LIVE_LOAD(&w->busy_tsc), idle = LIVE_LOAD(&w->idle_tsc);
	char q[96];
	unsigned int i;

	for (i = 0; i < st->n_ports; i++)
		if ((w->owned >> i) & 1)
			json_array_append_new(own, json_string(st->ctx.pl->port_names[i]));
	for (i = 0; i < w->n_rxq; i++) {
		snprintf(q, sizeof(q), "%s:%u", st->ctx.pl->port_names[w->rxq[i].port],
			 w->rxq[i].queue);
		json_array_append_new(rxq, json_string(q));
	}
	for (i = 0; i < st->n_workers; i++)
		json_array_append_new(hwm, json_integer((json_int_t)LIVE_LOAD(&w->ring_hwm[i])));
	json_object_set_new(o, "worker", json_integer(w->idx));
	json_object_set_new(o, "lcore", json_integer(w->lcore));
	json_object_set_new(o, "owns", own);
	json_object_set_new(o, "rx_queues", rxq);
	json_object_set_new(o, "rx_packets", json_integer((json_int_t)LIVE_LOAD(&w->rx_pkts)));
	json_object_set_new(o, "tx_packets", json_integer((json_int_t)LIVE_LOAD(&w->tx_pkts)));
	json_object_set_new(o, "handoff_in", json_integer((json_int_t)v->handoff_in));
	json_object_set_new(o, "handoff_out", json_integer((json_int_t)v->handoff_out));
	json_object_set_new(o, "drop_handoff_full", json_integer((json_int_t)v->drop_full));
	json_object_set_new(o, "spread_out", json_integer((json_int_t)LIVE_LOAD(&w->spread_out)));
	json_object_set_new(o, "spread_in", json_integer((json_int_t)LIVE_LOAD(&w->spread_in)));
	json_object_set_new(o, "handoff_delay_mean_ns",
			    json_integer((json_int_t)(v->handoff_in ? v->delay_ns / v->handoff_in : 0)));
	json_object_set_new(o, "handoff_pfc", json_integer((json_int_t)v->pfc));
	json_object_set_new(o, "handoff_pfc_delay_max_ns",
			    json_integer((json_int_t)v->pfc_delay_max_ns));
	json_object_set_new(o, "busy_cycles", json_integer((json_int_t)busy));
	json_object_set_new(o, "idle_cycles", json_integer((json_int_t)idle));
	json_object_set_new(o, "busy_pct", json_real(busy + idle > 0 ?
						     100.0 * (double)busy / (double)(busy + idle) :
						     0.0));
	json_object_set_new(o, "ring_high_water", hwm);
	json_object_set_new(o, "poll_gaps_over_1ms",
			    json_integer((json_int_t)LIVE_LOAD(&w->gaps_over_1ms)));
	json_object_set_new(o, "poll_gap_max_ns",
			    json_integer((json_int_t)LIVE_LOAD(&w->gap_longest_ns)));
	return o;
}

json_t *
live_workers_json(const struct live_state *st, const struct emu_snap_view *views)
{
	json_t *arr = json_array();
	unsigned int w;

	for (w = 0; w < st->n_workers; w++)
		json_array_append_new(arr, live_worker_json(st, &st->w[w], &views[w]));
	return arr;
}

void
live_print_workers(const struct live_state *st, const struct emu_snap_view *views, FILE *f)
{
	unsigned int w, i;

	if (st->n_workers < 2)
		return;
	for (w = 0; w < st->n_workers; w++) {
		const struct live_worker *x = &st->w[w];
		uint64_t busy = x->busy_tsc, idle = x->idle_tsc, hwm = 0;

		char spread[80] = "";

		for (i = 0; i < st->n_workers; i++)
			hwm = RTE_MAX(hwm, x->ring_hwm[i]);
		if (st->rx_spread)
			snprintf(spread, sizeof(spread), ", spread out %" PRIu64 " in %" PRIu64,
				 x->spread_out, x->spread_in);
		fprintf(f, "worker %u (lcore %u): rx %" PRIu64 " tx %" PRIu64 " handoff in %" PRIu64
			" (mean delay %" PRIu64 " ns; PFC %" PRIu64 ", longest %" PRIu64 " ns) out %"
			PRIu64 " drop_handoff_full %" PRIu64 "%s, busy %.1f %%, rings' high water %"
			PRIu64 " of %u\n", w, x->lcore, x->rx_pkts, x->tx_pkts, views[w].handoff_in,
			views[w].handoff_in ? views[w].delay_ns / views[w].handoff_in : 0,
			views[w].pfc, views[w].pfc_delay_max_ns, views[w].handoff_out,
			views[w].drop_full, spread,
			busy + idle > 0 ? 100.0 * (double)busy / (double)(busy + idle) : 0.0, hwm,
			st->ring_size - 1);
	}
}

/*
 * Every worker's snapshot (each taken by its worker between bursts, or directly once it
 * stopped), added up. @p views gets each worker's handoff counters. From the main lcore
 * with one lcore (inline), the snapshot is taken at once: the main lcore is the poller.
 */
struct emu_snap *
live_snap(struct live_state *st, bool from_main, uint64_t timeout_us,
	  struct emu_snap_view *views)
{
	struct emu_snap *m = emu_switch_snap_alloc(st->ctx.sw), *one;
	unsigned int w;

	if (m == NULL)
		return NULL;
	one = emu_switch_snap_alloc(st->ctx.sw);
	for (w = 0; one != NULL && w < st->n_workers; w++) {
		bool gone = __atomic_load_n(&st->w[w].done, __ATOMIC_ACQUIRE) ||
			    (st->inline_main && (from_main ||
						 __atomic_load_n(&st->stop_rx, __ATOMIC_ACQUIRE)));

		if (emu_switch_snap_fetch(st->w[w].sw, gone, timeout_us, w == 0 ? m : one) != 0)
			goto fail;
		emu_snap_view(w == 0 ? m : one, &views[w]);
		if (w > 0)
			emu_snap_absorb(st->ctx.sw, m, one);
	}
	if (one == NULL)
		goto fail;
	free(one);
	return m;
fail:
	free(one);
	free(m);
	return NULL;
}

/* The packet pool now: mbufs in use (not in the pool's ring or a lcore's cache) of its size.
 * Flat in a steady run; a leak makes it grow (tests/soak). */
json_t *
live_mbufs_json(const struct live_state *st)
{
	return json_pack("{s:I, s:I}", "in_use",
			 (json_int_t)rte_mempool_in_use_count(st->ctx.pool), "total",
			 (json_int_t)st->ctx.pool->size);
}

/* The --stats document of the whole switch now: merged counters, workers, the NIC's own,
 * the packet pool. */
json_t *
live_stats_json(struct live_state *st, bool from_main, uint64_t timeout_us)
{
	struct emu_snap_view views[LIVE_MAX_WORKERS];
	struct live_nic nic[EMU_MAX_PORTS];
	struct emu_snap *sn = live_snap(st, from_main, timeout_us, views);
	json_t *root;

	if (sn == NULL)
		return NULL;
	root = emu_switch_snap_json(st->ctx.sw, sn);
	free(sn);
	if (root == NULL)
		return NULL;
	live_nic_read(st, nic);
	json_object_set_new(root, "workers", live_workers_json(st, views));
	json_object_set_new(root, "nic", live_nic_json(st, nic));
	json_object_set_new(root, "mbufs", live_mbufs_json(st));
	return root;
}

/*
 * At exit, the workers stopped: the per-worker view first (for the summary and --stats),
 * then every replica's counters into worker 0's switch, which the reports read.
 */
void
live_workers_merge(struct live_state *st, struct emu_snap_view *views)
{
	struct emu_snap *sn = emu_switch_snap_alloc(st->ctx.sw);
	unsigned int w;

	for (w = 0; w < st->n_workers; w++) {
		if (sn != NULL) {
			emu_switch_snap_take(st->w[w].sw, sn);
			emu_snap_view(sn, &views[w]);
		} else {
			memset(&views[w], 0, sizeof(views[w]));
		}
	}
	free(sn);
	for (w = 1; w < st->n_workers; w++)
		emu_switch_absorb(st->ctx.sw, st->w[w].sw);
}
