/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * --rx-spread: the frames of a port with one RX queue (a vdev, a NIC without RSS) spread over
 * the workers in software, by a hash of (destination IP, destination QP), as a NIC's RSS on
 * the UDP ports keeps each QP on one queue. The worker polling the queue keeps its own share
 * and pushes the others, before any stage, into an SPSC rte_ring per (poller, worker) pair;
 * the worker that takes them runs the ingress stages on them as if it had received them,
 * then hands each to its egress owner as any frame. A QP's frames all take one path (one
 * ring, FIFO), so per-QP order holds; frames that are not RoCEv2 (ARP, PFC, LLDP) stay with
 * the poller. A full ring refuses what it cannot take: counted as received and dropped as
 * runner.drop_handoff_full on the poller's replica. docs/multicore.md.
 */
#include <stdio.h>

#include <rte_hash_crc.h>
#include <rte_ring.h>

#include "lib/base/emu_tsan.h"
#include "lib/proto/roce_proto.h"
#include "live.h"

int
live_spread_build(struct live_state *st, struct emu_err *err)
{
	return st->rx_spread ? live_rings_create(st, st->spread, "live_sp", "spread", err) : 0;
}

/* The worker that runs the ingress of @p m: by (destination IP, DestQP) for RoCEv2, else
 * @p self. The project's parser (its QP-naming fast path) reads the first segment. */
static unsigned int
live_spread_target(const struct rte_mbuf *m, unsigned int n_workers, unsigned int self)
{
	struct roce_pkt p;

	if (roce_parse_partial_qp(rte_pktmbuf_mtod(m, const uint8_t *), rte_pktmbuf_data_len(m),
				  rte_pktmbuf_pkt_len(m), 4791, &p) != ROCE_CLASS_ROCEV2)
		return self;
	return rte_hash_crc(p.dst_ip, sizeof(p.dst_ip), p.dest_qp) % n_workers;
}

void
live_spread_rx(struct live_worker *w, uint16_t port, struct rte_mbuf **pkts, uint16_t n,
	       uint64_t now)
{
	struct live_state *st = w->st;
	struct rte_mbuf *out[LIVE_MAX_WORKERS][EMU_BURST];
	uint16_t n_out[LIVE_MAX_WORKERS] = { 0 }, keep = 0, i;
	unsigned int t;
	uint64_t pushed = 0;

	for (i = 0; i < n; i++) {
		t = live_spread_target(pkts[i], st->n_workers, w->idx);
		if (t == w->idx) {
			pkts[keep++] = pkts[i];
		} else {
			/* the taker reads the port here (emu_switch_rx sets it again) */
			emu_meta(pkts[i])->in_port = port;
			out[t][n_out[t]++] = pkts[i];
		}
	}
	if (keep > 0)
		emu_switch_rx(w->sw, port, pkts, keep, now);
	for (t = 0; t < st->n_workers; t++) {
		unsigned int k;

		if (n_out[t] == 0)
			continue;
		EMU_TSAN_RELEASE(st->spread[w->idx][t]); /* the frames it hands over */
		k = rte_ring_sp_enqueue_burst(st->spread[w->idx][t], (void **)out[t], n_out[t],
					      NULL);
		pushed += k;
		if (k < n_out[t])
			emu_switch_rx_refused(w->sw, port, &out[t][k], (uint16_t)(n_out[t] - k),
					      now);
	}
	if (pushed > 0)
		LIVE_STORE(&w->spread_out, w->spread_out + pushed);
}

unsigned int
live_spread_take(struct live_worker *w, uint64_t now)
{
	struct live_state *st = w->st;
	struct rte_mbuf *pkts[EMU_BURST];
	unsigned int i, k, taken = 0;
	uint16_t n, a, b;

	for (i = 0; i < st->n_workers; i++) {
		if (i == w->idx)
			continue;
		for (k = 0; k < LIVE_RING_BURSTS; k++) {
			unsigned int avail = 0;

			EMU_TSAN_RELEASE(st->spread[i][w->idx]);
			n = (uint16_t)rte_ring_sc_dequeue_burst(st->spread[i][w->idx],
								(void **)pkts, EMU_BURST, &avail);
			if (n == 0)
				break;
			EMU_TSAN_ACQUIRE(st->spread[i][w->idx]);
			/* runs of one port, each received as the poller would have */
			for (a = 0; a < n; a = b) {
				uint16_t port = emu_meta(pkts[a])->in_port;

				for (b = a + 1; b < n && emu_meta(pkts[b])->in_port == port; b++)
					;
				emu_switch_rx(w->sw, port, &pkts[a], (uint16_t)(b - a), now);
			}
			taken += n;
			if (avail == 0)
				break;
		}
	}
	if (taken > 0)
		LIVE_STORE(&w->spread_in, w->spread_in + taken);
	return taken;
}

bool
live_spread_low(const struct live_worker *w)
{
	const struct live_state *st = w->st;
	unsigned int i;

	for (i = 0; i < st->n_workers; i++)
		if (i != w->idx && st->spread[w->idx][i] != NULL &&
		    rte_ring_free_count(st->spread[w->idx][i]) < st->ring_low)
			return true;
	return false;
}

bool
live_spread_empty(const struct live_state *st)
{
	unsigned int a, b;

	for (a = 0; a < st->n_workers; a++)
		for (b = 0; b < st->n_workers; b++)
			if (st->spread[a][b] != NULL && rte_ring_count(st->spread[a][b]) > 0)
				return false;
	return true;
}
