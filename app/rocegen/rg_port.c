/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rocegen's port and event loop: the port, ARP, receiving and transmitting bursts (the port
 * paced at its line rate), and one poll of everything.
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

#include "rg_main.h"

volatile int rg_failed;


int
rg_port_setup(struct rg_state *st)
{
	struct rte_eth_conf conf;
	struct rte_ether_addr addr;
	struct rte_eth_dev_info info;
	char name[RTE_ETH_NAME_MAX_LEN] = "?";
	uint16_t nq = (uint16_t)st->n_shards, q;
	uint32_t room = st->o.mtu <= 1024 ? RTE_MBUF_DEFAULT_BUF_SIZE :
		8192 + RTE_PKTMBUF_HEADROOM; /* af_packet framesz=8192 for 4 KB MTU */
	int rc;

	if (rte_eth_dev_count_avail() == 0) {
		fprintf(stderr, "rocegen: no DPDK port: add one with --vdev or -a\n");
		return -1;
	}
	st->port = 0;
	RTE_ETH_FOREACH_DEV(st->port)
		break;
	rte_eth_dev_get_name_by_port(st->port, name);
	/* each further queue pair: its RX ring, its TX ring and its inbox's share */
	st->pool = rte_pktmbuf_pool_create("rg_pkts", RG_NB_MBUF + (nq - 1) * 4096u, 256, 0,
					   (uint16_t)room, (int)rte_socket_id());
	if (st->pool == NULL) {
		fprintf(stderr, "rocegen: cannot create the mbuf pool: %s\n",
			rte_strerror(rte_errno));
		return -1;
	}
	memset(&conf, 0, sizeof(conf));
	rc = rte_eth_dev_info_get(st->port, &info);
	if (rc == 0 && (info.max_rx_queues < nq || info.max_tx_queues < nq)) {
		fprintf(stderr, "rocegen: port %u (%s): --workers %u needs %u RX and TX queues, "
			"the port has %u and %u (net_af_packet: qpairs=%u; net_memif: both ends "
			"with the same --workers)\n", st->port, name, nq, nq, info.max_rx_queues,
			info.max_tx_queues, nq);
		return -1;
	}
	/* several queues: the NIC's RSS on the IP addresses and UDP ports where it has it, so
	 * that one QP (its UDP source port) stays on one queue; frames that land on another
	 * shard's queue go to that shard's inbox (rg_rx) */
	if (rc == 0 && nq > 1 && (info.flow_type_rss_offloads &
				  (RTE_ETH_RSS_IP | RTE_ETH_RSS_UDP)) != 0) {
		conf.rxmode.mq_mode = RTE_ETH_MQ_RX_RSS;
		conf.rx_adv_conf.rss_conf.rss_hf = info.flow_type_rss_offloads &
			(RTE_ETH_RSS_IP | RTE_ETH_RSS_UDP);
	}
	if (rc == 0)
		rc = rte_eth_dev_configure(st->port, nq, nq, &conf);
	for (q = 0; rc == 0 && q < nq; q++) {
		rc = rte_eth_rx_queue_setup(st->port, q, RG_RXD, rte_socket_id(), NULL, st->pool);
		if (rc == 0)
			rc = rte_eth_tx_queue_setup(st->port, q, RG_TXD, rte_socket_id(), NULL);
	}
	if (rc == 0)
		rc = rte_eth_dev_start(st->port);
	if (rc != 0) {
		fprintf(stderr, "rocegen: port %u (%s): setup failed: %s\n", st->port, name,
			rte_strerror(-rc));
		return -1;
	}
	rte_eth_promiscuous_enable(st->port);
	rte_eth_macaddr_get(st->port, &addr);
	memcpy(st->mac, addr.addr_bytes, 6);
	printf("rocegen: port %u (%s, driver %s) MAC %02x:%02x:%02x:%02x:%02x:%02x\n", st->port,
	       name, info.driver_name, st->mac[0], st->mac[1], st->mac[2], st->mac[3],
	       st->mac[4], st->mac[5]);
	return 0;
}

/* The process whose ranks include ip, or -1. */
static int
rg_proc_of_ip(const struct rg_state *st, const uint8_t *ip)
{
	unsigned int p;

	for (p = 0; p < st->o.n_procs; p++) {
		const uint8_t *b = st->o.hosts[p];

		if (memcmp(ip, b, 3) == 0 && ip[3] >= b[3] && ip[3] < b[3] + st->o.n_ranks)
			return (int)p;
	}
	return -1;
}

void
rg_rank_ip(const struct rg_state *st, unsigned int g, uint8_t out[4])
{
	memcpy(out, st->o.hosts[g / st->o.n_ranks], 4);
	out[3] = (uint8_t)(out[3] + g % st->o.n_ranks);
}

bool
rg_is_local(const struct rg_state *st, unsigned int g)
{
	return g / st->o.n_ranks == st->proc;
}

static bool rg_tx_flush(struct rg_state *st, struct rte_mbuf **pkts, unsigned int n);

static void
rg_send_frame(struct rg_state *st, const uint8_t *f, uint32_t len)
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
	rg_tx_flush(st, &m, 1);
}

/* An ARP request (op 1) or reply (op 2) from us. */
static void
rg_send_arp(struct rg_state *st, uint16_t op, const uint8_t tha[6], const uint8_t tpa[4],
	    const uint8_t spa[4])
{
	static const uint8_t bcast[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
	uint8_t f[60];

	memset(f, 0, sizeof(f));
	memcpy(f, op == 1 ? bcast : tha, 6);
	memcpy(f + 6, st->mac, 6);
	f[12] = 0x08;
	f[13] = 0x06;
	f[15] = 1;		/* Ethernet */
	f[16] = 0x08;		/* IPv4 */
	f[18] = 6;
	f[19] = 4;
	f[21] = (uint8_t)op;
	memcpy(f + 22, st->mac, 6);
	memcpy(f + 28, spa, 4);
	if (op == 2)
		memcpy(f + 32, tha, 6);
	memcpy(f + 38, tpa, 4);
	rg_send_frame(st, f, sizeof(f));
}

static void
rg_on_arp(struct rg_state *st, const uint8_t *f, uint32_t len, const struct roce_pkt *p)
{
	const uint8_t *a = f + p->l3_off;
	int sp, tp;

	if (p->l3_off + 28u > len || a[0] != 0 || a[1] != 1 || a[2] != 8 || a[3] != 0)
		return;
	sp = rg_proc_of_ip(st, a + 14);
	if (sp >= 0 && (unsigned int)sp != st->proc && !st->peer_known[sp]) {
		unsigned int q;

		memcpy(st->peer_mac[sp], a + 8, 6);
		st->peer_known[sp] = true;
		for (q = 0; q < st->n_qp; q++)
			if (st->qps[q].peer_proc == (unsigned int)sp)
				rg_ep_set_dst_mac(&st->qps[q].ep, a + 8);
		printf("rocegen: process %d (%u.%u.%u.%u+) is at %02x:%02x:%02x:%02x:%02x:%02x\n",
		       sp, a[14], a[15], a[16], a[17], a[8], a[9], a[10], a[11], a[12], a[13]);
	}
	tp = rg_proc_of_ip(st, a + 24);
	if (a[7] == 1 && tp >= 0 && (unsigned int)tp == st->proc) {
		rg_send_arp(st, 2, a + 8, a + 14, a + 24);
		st->arp_replies_sent++;
	}
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

/* A connection's QPN: requester side even, responder odd; channel n_qps is control. */
uint32_t
rg_qpn(const struct rg_state *st, unsigned int src, unsigned int dst, unsigned int ch,
       bool responder)
{
	return RG_QPN_BASE + st->shard * rg_qpn_span(st) +
	       2 * (((uint32_t)src * st->R + dst) * (st->o.n_qps + 1) + ch) + responder;
}

uint32_t
rg_qpn_span(const struct rg_state *st)
{
	return 2 * st->R * st->R * (st->o.n_qps + 1);
}

struct rg_ep *
rg_qp_lookup(struct rg_state *st, uint32_t qpn)
{
	uint32_t k = qpn - RG_QPN_BASE - st->shard * rg_qpn_span(st);

	if (qpn < RG_QPN_BASE + st->shard * rg_qpn_span(st) || k >= st->qp_of_len ||
	    st->qp_of[k] < 0)
		return NULL;
	return &st->qps[st->qp_of[k]].ep;
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
		rg_on_arp(st, f, len, &p);
		break;
	case ROCE_CLASS_MAC_CONTROL:
		pfc_rcvd = st->pfc.pfc_rcvd;
		pause_rcvd = st->pfc.pause_rcvd;
		ep_pfc_on_frame(&st->pfc, &p, now);
		st->pause_applied++;
		if (copy) {	/* counted once, by the shard whose queue it came in on */
			st->pfc.pfc_rcvd = pfc_rcvd;
			st->pfc.pause_rcvd = pause_rcvd;
			break;
		}
		/* a pause stops the port: every shard's QPs */
		for (k = 0; k < st->n_shards; k++) {
			if (k == st->shard)
				continue;
			rte_mbuf_refcnt_update(m, 1);
			if (!rg_handoff(st, k, m))
				rte_mbuf_refcnt_update(m, -1);
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

/* Receive a burst from our queue (every queue while shard 0 starts alone) and what other
 * shards handed us; returns the frames taken. */
static unsigned int
rg_rx(struct rg_state *st, uint64_t now)
{
	struct rte_mbuf *pkts[RG_BURST];
	unsigned int q, qn = st->poll_all ? st->n_shards : 1, taken = 0;
	uint16_t n, i;

	for (q = 0; q < qn; q++) {
		n = rte_eth_rx_burst(st->port, st->poll_all ? (uint16_t)q : st->queue, pkts,
				     RG_BURST);
		st->rx_frames += n;
		taken += n;
		for (i = 0; i < n; i++)
			if (rg_rx_one(st, pkts[i], now, false))
				rte_pktmbuf_free(pkts[i]);
	}
	if (st->inbox != NULL) {
		n = (uint16_t)rte_ring_sc_dequeue_burst(st->inbox, (void **)pkts, RG_BURST, NULL);
		st->handoff_in += n;
		taken += n;
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

/* Hand frames to the PMD; what it does not take stays in txq, in order, for the next poll
 * (a QP counts a frame as sent once built: dropping it would cost a go-back-N round or a
 * retransmission timeout). Returns true when txq is empty. */
static bool
rg_tx_flush(struct rg_state *st, struct rte_mbuf **pkts, unsigned int n)
{
	unsigned int room = RG_TXQ - st->txq_n, i;
	uint64_t now;
	uint16_t sent;

	if (n > room) {		/* only an ARP frame can find txq full: rg_tx adds to it empty */
		for (i = room; i < n; i++)
			rte_pktmbuf_free(pkts[i]);
		st->tx_dropped += n - room;
		n = room;
	}
	if (n > 0) {
		memcpy(st->txq + st->txq_n, pkts, n * sizeof(*pkts));
		st->txq_n += n;
	}
	if (st->txq_n == 0)
		return true;
	sent = rte_eth_tx_burst(st->port, st->queue, st->txq, (uint16_t)st->txq_n);
	st->tx_frames += sent;
	now = rg_now_ns(st);
	if (sent > 0 || st->txq_n == n)
		st->txq_progress_ns = now;
	if (sent < st->txq_n) {
		memmove(st->txq, st->txq + sent, (st->txq_n - sent) * sizeof(*st->txq));
		/* the new frames among those left wait for the first time */
		st->tx_deferred += RTE_MIN(n, st->txq_n - sent);
	}
	st->txq_n -= sent;
	if (st->txq_n > 0 && now - st->txq_progress_ns > RG_TXQ_STALL_NS) {
		/* the PMD took nothing for this long: give the frames up (go-back-N resends them)
		 * rather than wait for a ring that may never drain */
		fprintf(stderr, "rocegen: the port took no frame for %u ms: %u dropped (%u mbufs "
			"free in the pool)\n", RG_TXQ_STALL_NS / 1000000, st->txq_n,
			rte_mempool_avail_count(st->pool));
		rte_pktmbuf_free_bulk(st->txq, st->txq_n);
		st->tx_dropped += st->txq_n;
		st->txq_n = 0;
	}
	return st->txq_n == 0;
}

/* Transmit what the QPs may send now, up to a burst each, the port paced at its line rate;
 * returns the frames built. */
static unsigned int
rg_tx(struct rg_state *st, uint64_t now)
{
	struct rte_mbuf *pkts[RG_BURST];
	unsigned int k, q, n, built = 0;

	if (!rg_tx_flush(st, NULL, 0))
		return 0;
	for (k = 0; k < st->n_qp; k++) {
		q = (st->tx_next + k) % st->n_qp;
		if (!st->peer_known[st->qps[q].peer_proc])
			continue;	/* its frames (ACKs too) wait for the peer's MAC */
		for (n = 0; n < RG_BURST; n++) {
			struct rte_mbuf *m;
			int len;

			if (st->port_next_ns > now + st->port_credit_ns)
				break;
			m = rte_pktmbuf_alloc(st->pool);
			if (m == NULL)
				break;
			len = rg_ep_tx(&st->qps[q].ep, now, rte_pktmbuf_mtod(m, uint8_t *),
				       rte_pktmbuf_tailroom(m));
			if (len <= 0) {
				rte_pktmbuf_free(m);
				break;
			}
			rte_pktmbuf_append(m, (uint16_t)len);
			pkts[n] = m;
			st->port_next_ns = RTE_MAX(st->port_next_ns, now) +
				(uint64_t)((len + EP_FRAME_OVERHEAD) * st->port_ns_per_byte);
		}
		built += n;
		if (n > 0 && !rg_tx_flush(st, pkts, n))
			break;	/* the PMD is full: the rest waits for the next poll */
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
	unsigned int q, moved;

	moved = rg_rx(st, now);
	moved += rg_tx(st, now);
	if (moved == 0 && st->txq_n == 0 && st->o.poll_sleep_us > 0) {
		/* nothing came and nothing may go yet: give the CPU away for a while. A task that
		 * sleeps is woken promptly by the scheduler; a busy poller sharing its CPU loses
		 * whole slices (ms) and then catches up in a burst of its pacers' credit. */
		struct timespec ts = { 0, (long)st->o.poll_sleep_us * 1000 };

		nanosleep(&ts, NULL);
	} else if (moved == 0 && st->txq_n == 0 && st->o.poll_yield) {
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

bool
rg_timed_out(const struct rg_state *st)
{
	return rg_stop || __atomic_load_n(&rg_failed, __ATOMIC_RELAXED) ||
	       (double)rg_now_ns(st) / 1e9 > st->o.limit_s;
}

/* ARP for every other process until all answered (our QPs are up: answering is safe). */
int
rg_resolve_peers(struct rg_state *st)
{
	uint64_t next = 0;
	unsigned int p, missing;

	for (;;) {
		missing = 0;
		for (p = 0; p < st->o.n_procs; p++)
			missing += p != st->proc && !st->peer_known[p];
		if (missing == 0)
			return 0;
		if (rg_timed_out(st)) {
			for (p = 0; p < st->o.n_procs; p++)
				if (p != st->proc && !st->peer_known[p])
					fprintf(stderr, "rocegen: no ARP reply from process %u "
						"(%u.%u.%u.%u)\n", p, st->o.hosts[p][0],
						st->o.hosts[p][1], st->o.hosts[p][2],
						st->o.hosts[p][3]);
			return -1;
		}
		if (rg_now_ns(st) >= next) {
			for (p = 0; p < st->o.n_procs; p++)
				if (p != st->proc && !st->peer_known[p])
					rg_send_arp(st, 1, NULL, st->o.hosts[p], st->o.hosts[st->proc]);
			next = rg_now_ns(st) + 100000000ULL;
		}
		rg_poll(st);
	}
}
