/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rocegen's event loop: receiving bursts on every rail's queue of this shard (ARP, PFC, RoCE
 * to our QPs; frames for another shard's QPs to its inbox), transmitting what the QPs may send
 * (each port paced at its rate), and one poll of everything.
 */
#include <sched.h>
#include <time.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_ethdev.h>
#include <rte_errno.h>
#include <rte_mbuf.h>
#include <rte_ring.h>

#include "lib/base/emu_tsan.h"
#include "rg_main.h"

volatile int rg_failed;
/* Where a frame's cycles go (the JSON's cycles_per_frame): TSC cycles of the work that
 * handled @p n > 0 frames (a burst, a QP's frames) in timed iterations, empty polls left
 * out. */
static inline void
rg_cyc(struct rg_state *st, enum rg_cyc_part i, uint64_t t0, unsigned int n)
{
	if (n > 0 && st->timing) {
		st->cyc[i] += rte_rdtsc() - t0;
		st->cyc_frames[i] += n;
	}
}

unsigned int
rg_rail_of_port_id(const struct rg_state *st, uint16_t port_id)
{
	unsigned int r;

	for (r = 0; r < st->n_ports; r++)
		if (st->port_ids[r] == port_id)
			return r;
	return 0;
}

void
rg_send_frame(struct rg_state *st, unsigned int r, const uint8_t *f, uint32_t len)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(st->pool);
	uint8_t *d;

	if (m == NULL)
		return;
	d = (uint8_t *)rte_pktmbuf_append(m, (uint16_t)len);
	if (d == NULL) {
		rte_pktmbuf_free(m);
		return;
	}
	memcpy(d, f, len);
	rg_tx_flush(st, r, &m, 1);
}

/* xorshift64*: uniform in [0, 1) */
static double
rg_rand01(struct rg_state *st)
{
	st->rng ^= st->rng >> 12;
	st->rng ^= st->rng << 25;
	st->rng ^= st->rng >> 27;
	return (double)((st->rng * 2685821657736338717ULL) >> 11) / 9007199254740992.0;
}

static void
rg_imm_arrived(struct rg_state *st, uint32_t imm)
{
	struct rg_imm *e = &st->seen[imm % RG_IMM_SLOTS];

	if (e->count != 0 && e->imm != imm) {
		st->imm_unexpected++;
		return;
	}
	e->imm = imm;
	e->count++;
}

/* Give @p m to shard @p k's inbox; false (and counted) when it is full. */
static bool
rg_handoff(struct rg_state *st, unsigned int k, struct rte_mbuf *m)
{
	EMU_TSAN_RELEASE(m);	/* what we wrote to it before the ring (lib/base/emu_tsan.h) */
	if (rte_ring_mp_enqueue(st->shards[k]->inbox, m) != 0) {
		st->handoff_dropped++;
		return false;
	}
	st->handoff_out++;
	return true;
}

/* One received frame: ARP, PFC, and RoCE frames to our QPs. @p copy: it came from our inbox
 * (another shard received it). Returns false when @p m was handed to another shard. */
static bool
rg_rx_one(struct rg_state *st, struct rte_mbuf *m, uint64_t now, bool copy)
{
	/* the rail it came in on (the PMD stamps its port id; an inbox copy keeps it) */
	unsigned int r = rg_rail_of_port_id(st, m->port);
	struct ep_pfc *pfc = &st->tp[r].pfc;
	const uint8_t *f = rte_pktmbuf_mtod(m, const uint8_t *);
	uint32_t len = rte_pktmbuf_data_len(m);
	uint64_t pfc_rcvd, pause_rcvd;
	struct roce_pkt p;
	struct rg_ep *qp;
	unsigned int k;
	uint32_t owner;

	if (m->nb_segs != 1) {
		st->rx_other++;
		return true;
	}
	switch (roce_parse(f, len, ROCE_UDP_PORT, &p)) {
	case ROCE_CLASS_ARP:
		rg_on_arp(st, r, f, len, &p);
		break;
	case ROCE_CLASS_MAC_CONTROL:
		pfc_rcvd = pfc->pfc_rcvd;
		pause_rcvd = pfc->pause_rcvd;
		ep_pfc_on_frame(pfc, &p, now);
		st->pause_applied++;
		if (copy) {	/* counted once, by the shard whose queue it came in on */
			pfc->pfc_rcvd = pfc_rcvd;
			pfc->pause_rcvd = pause_rcvd;
			break;
		}
		/* a pause stops the port: every shard's QPs on it. Each shard gets a copy of its
		 * own (pause frames are few): an mbuf shared by reference count would be reused
		 * by its last owner after a plain read of the count (DPDK's fast path), which
		 * orders nothing with the other owner's reads */
		for (k = 0; k < st->n_shards; k++) {
			struct rte_mbuf *c;

			if (k == st->shard)
				continue;
			c = rte_pktmbuf_copy(m, st->pool, 0, UINT32_MAX);
			if (c == NULL)
				st->handoff_dropped++;
			else if (!rg_handoff(st, k, c))
				rte_pktmbuf_free(c);
		}
		break;
	case ROCE_CLASS_ROCEV2:
		owner = (p.dest_qp - RG_QPN_BASE) / rg_qpn_span(st);
		if (!copy && p.dest_qp >= RG_QPN_BASE && owner != st->shard &&
		    owner < st->n_shards) {
			if (rg_handoff(st, owner, m))
				return false;
			break;
		}
		if (st->o.rx_loss > 0 && rg_rand01(st) < st->o.rx_loss) {
			st->rx_lost++;
			break;
		}
		qp = rg_qp_lookup(st, p.dest_qp);
		if (rg_proc_of_ip(st, p.dst_ip) != (int)st->proc || qp == NULL) {
			st->rx_other++;
			break;
		}
		rg_ep_rx(qp, f, len, &p, now);
		break;
	default:
		st->rx_other++;
		break;
	}
	return true;
}

/* Receive a burst from our queue of every rail (every queue while shard 0 starts alone) and
 * what other shards handed us; returns the frames taken. */
static unsigned int
rg_rx(struct rg_state *st, uint64_t now)
{
	struct rte_mbuf *pkts[RG_BURST], *done[RG_BURST];
	unsigned int r, q, qn = st->poll_all ? st->n_shards : 1, taken = 0, nd = 0;
	uint64_t t0;
	uint16_t n, i;

	for (r = 0; r < st->n_ports; r++)
		for (q = 0; q < qn; q++) {
			t0 = rte_rdtsc();
			n = rte_eth_rx_burst(st->port_ids[r], st->poll_all ? (uint16_t)q :
					     st->queue, pkts, RG_BURST);
			rg_cyc(st, RG_CYC_RX_BURST, t0, n);
			t0 = rte_rdtsc();
			st->tp[r].rx_frames += n;
			taken += n;
			for (i = 0; i < n; i++)
				if (rg_rx_one(st, pkts[i], now, false))
					done[nd++] = pkts[i];
			/* one bulk free per burst (a free per frame cost ~5% of a 4 KB frame) */
			rte_pktmbuf_free_bulk(done, nd);
			nd = 0;
			rg_cyc(st, RG_CYC_RX_PROC, t0, n);
		}
	if (st->inbox != NULL) {
		n = (uint16_t)rte_ring_sc_dequeue_burst(st->inbox, (void **)pkts, RG_BURST, NULL);
		st->handoff_in += n;
		taken += n;
		for (i = 0; i < n; i++)
			EMU_TSAN_ACQUIRE(pkts[i]);
		for (i = 0; i < n; i++)
			if (rg_rx_one(st, pkts[i], now, true))
				rte_pktmbuf_free(pkts[i]);
	}
	return taken;
}

int
rg_inboxes_create(struct rg_state *st)
{
	char name[RTE_RING_NAMESIZE];
	unsigned int k;

	for (k = 0; st->n_shards > 1 && k < st->n_shards; k++) {
		snprintf(name, sizeof(name), "rg_inbox%u", k);
		st->shards[k]->inbox = rte_ring_create(name, RG_INBOX, (int)rte_socket_id(),
						       RING_F_SC_DEQ);
		if (st->shards[k]->inbox == NULL) {
			fprintf(stderr, "rocegen: cannot create shard %u's inbox: %s\n", k,
				rte_strerror(rte_errno));
			return -1;
		}
	}
	return 0;
}

/* Hand frames to rail @p r's PMD; what it does not take stays in txq, in order, for the next
 * poll (a QP counts a frame as sent once built: dropping it would cost a go-back-N round or a
 * retransmission timeout). Returns true when txq is empty. */
bool
rg_tx_flush(struct rg_state *st, unsigned int r, struct rte_mbuf **pkts, unsigned int n)
{
	struct rg_txport *t = &st->tp[r];
	unsigned int room = RG_TXQ - t->txq_n, i;
	uint64_t now, t0;
	uint16_t sent;

	if (n > room) {		/* only an ARP frame can find txq full: rg_tx adds to it empty */
		for (i = room; i < n; i++)
			rte_pktmbuf_free(pkts[i]);
		st->tx_dropped += n - room;
		n = room;
	}
	if (n > 0) {
		memcpy(t->txq + t->txq_n, pkts, n * sizeof(*pkts));
		t->txq_n += n;
	}
	if (t->txq_n == 0)
		return true;
	t0 = rte_rdtsc();
	sent = rte_eth_tx_burst(st->port_ids[r], st->queue, t->txq, (uint16_t)t->txq_n);
	rg_cyc(st, RG_CYC_TX_BURST, t0, sent);
	t->tx_frames += sent;
	now = rg_now_ns(st);
	if (sent > 0 || t->txq_n == n)
		t->txq_progress_ns = now;
	if (sent < t->txq_n) {
		memmove(t->txq, t->txq + sent, (t->txq_n - sent) * sizeof(*t->txq));
		/* the new frames among those left wait for the first time */
		st->tx_deferred += RTE_MIN(n, t->txq_n - sent);
	}
	t->txq_n -= sent;
	if (t->txq_n > 0 && now - t->txq_progress_ns > RG_TXQ_STALL_NS) {
		/* the PMD took nothing for this long: give the frames up (go-back-N resends them)
		 * rather than wait for a ring that may never drain */
		fprintf(stderr, "rocegen: port %u took no frame for %u ms: %u dropped (%u mbufs "
			"free in the pool)\n", st->port_ids[r], RG_TXQ_STALL_NS / 1000000,
			t->txq_n, rte_mempool_avail_count(st->pool));
		rte_pktmbuf_free_bulk(t->txq, t->txq_n);
		st->tx_dropped += t->txq_n;
		t->txq_n = 0;
	}
	return t->txq_n == 0;
}

/* Transmit what the QPs may send now, up to a burst each, each port paced at its rate;
 * returns the frames built. */
static unsigned int
rg_tx(struct rg_state *st, uint64_t now)
{
	struct rte_mbuf *pkts[RG_BURST];
	unsigned int k, q, n, r, built = 0;
	bool busy[RG_MAX_PORTS];
	uint64_t t0;

	for (r = 0; r < st->n_ports; r++)
		busy[r] = !rg_tx_flush(st, r, NULL, 0);
	for (k = 0; k < st->n_qp; k++) {
		struct rg_txport *t;

		q = (st->tx_next + k) % st->n_qp;
		r = st->qps[q].port;
		t = &st->tp[r];
		if (busy[r] || !st->peer_known[st->qps[q].peer_proc][r])
			continue;	/* its frames (ACKs too) wait for the PMD, the peer's MAC */
		t0 = rte_rdtsc();
		for (n = 0; n < RG_BURST; n++) {
			struct rte_mbuf *m;
			int len;

			if (t->next_ns > now + st->port_credit_ns)
				break;
			/* the mbuf a QP with nothing to send did not use waits for the next
			 * (an alloc and a free per idle QP and poll otherwise) */
			m = st->spare != NULL ? st->spare : rte_pktmbuf_alloc(st->pool);
			st->spare = NULL;
			if (m == NULL)
				break;
			len = rg_ep_tx(&st->qps[q].ep, now, rte_pktmbuf_mtod(m, uint8_t *),
				       rte_pktmbuf_tailroom(m));
			if (len <= 0) {
				st->spare = m;
				break;
			}
			rte_pktmbuf_append(m, (uint16_t)len);
			pkts[n] = m;
			t->tx_bytes += (uint64_t)len;
			t->next_ns = RTE_MAX(t->next_ns, now) +
				(uint64_t)((len + EP_FRAME_OVERHEAD) * st->port_ns_per_byte);
		}
		rg_cyc(st, RG_CYC_TX_BUILD, t0, n);
		built += n;
		if (n > 0 && !rg_tx_flush(st, r, pkts, n))
			busy[r] = true;	/* the PMD is full: the rest waits for the next poll */
	}
	if (st->n_qp > 0)
		st->tx_next = (st->tx_next + 1) % st->n_qp;
	return built;
}

void
rg_poll(struct rg_state *st)
{
	struct ep_cqe c;
	uint64_t now = rg_now_ns(st);
	unsigned int q, r, moved, queued = 0;

	moved = rg_rx(st, now);
	moved += rg_tx(st, now);
	for (r = 0; r < st->n_ports; r++)
		queued += st->tp[r].txq_n;
	if (moved == 0 && queued == 0 && st->o.poll_sleep_us > 0) {
		/* nothing came and nothing may go yet: give the CPU away for a while. A task that
		 * sleeps is woken promptly by the scheduler; a busy poller sharing its CPU loses
		 * whole slices (ms) and then catches up in a burst of its pacers' credit. */
		struct timespec ts = { 0, (long)st->o.poll_sleep_us * 1000 };

		nanosleep(&ts, NULL);
	} else if (moved == 0 && queued == 0 && st->o.poll_yield) {
		/* lcores sharing CPUs: let the other pollers on ours run now, not at the end of
		 * our slice (two spinning shards per process on two CPUs: 0.03x of one lcore each
		 * without it, 0.6x with it; bench_rocegen) */
		sched_yield();
	}
	for (q = 0; q < st->n_qp; q++) {
		struct rg_ep *qp = &st->qps[q].ep;

		if (st->qps[q].requester) {
			while (rg_ep_poll_sq(qp, &c))
				;
			/* --proto: the receiver's CTS writes land here (no immediate) */
			while (st->o.proto != RG_PROTO_NONE && rg_ep_poll_rq(qp, &c))
				;
		} else {
			while (rg_ep_poll_rq(qp, &c)) {
				if (!c.has_imm)
					continue;
				if (st->o.proto != RG_PROTO_NONE && !st->qps[q].ctrl)
					st->data_cqes++;	/* imm = the size, as NCCL */
				else
					rg_imm_arrived(st, c.imm);
			}
			/* --proto: its own CTS writes' completions */
			while (st->o.proto != RG_PROTO_NONE && rg_ep_poll_sq(qp, &c))
				;
		}
	}
}

