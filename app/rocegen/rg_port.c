/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rocegen's ports and addresses: one DPDK port per rail (every port EAL has, in port order;
 * rank i of a process on rail i mod ports, as rail-optimized clusters cable NIC i of every
 * server to leaf i), each with a queue pair per shard; the ranks' addresses, QP numbers, ARP.
 * The event loop is rg_poll.c.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_ethdev.h>
#include <rte_errno.h>
#include <rte_mbuf.h>

#include "lib/base/emu_tsan_pool.h"
#include "rg_main.h"

/* One port: n_shards queue pairs, RSS on IP and UDP where the port has it. */
static int
rg_port_setup_one(struct rg_state *st, unsigned int r, uint16_t port)
{
	struct rte_eth_conf conf;
	struct rte_ether_addr addr;
	struct rte_eth_dev_info info;
	char name[RTE_ETH_NAME_MAX_LEN] = "?";
	uint16_t nq = (uint16_t)st->n_shards, q;
	int rc;

	rte_eth_dev_get_name_by_port(port, name);
	memset(&conf, 0, sizeof(conf));
	rc = rte_eth_dev_info_get(port, &info);
	if (rc == 0 && (info.max_rx_queues < nq || info.max_tx_queues < nq)) {
		fprintf(stderr, "rocegen: port %u (%s): --workers %u needs %u RX and TX queues, "
			"the port has %u and %u (net_af_packet: qpairs=%u; net_memif: both ends "
			"with the same --workers)\n", port, name, nq, nq, info.max_rx_queues,
			info.max_tx_queues, nq);
		return -1;
	}
	/* several queues: the NIC's RSS on the IP addresses and UDP ports where it has it, so
	 * that one QP (its UDP source port) stays on one queue; frames that land on another
	 * shard's queue go to that shard's inbox (rg_poll.c) */
	if (rc == 0 && nq > 1 && (info.flow_type_rss_offloads &
				  (RTE_ETH_RSS_IP | RTE_ETH_RSS_UDP)) != 0) {
		conf.rxmode.mq_mode = RTE_ETH_MQ_RX_RSS;
		conf.rx_adv_conf.rss_conf.rss_hf = info.flow_type_rss_offloads &
			(RTE_ETH_RSS_IP | RTE_ETH_RSS_UDP);
	}
	if (rc == 0)
		rc = rte_eth_dev_configure(port, nq, nq, &conf);
	for (q = 0; rc == 0 && q < nq; q++) {
		rc = rte_eth_rx_queue_setup(port, q, RG_RXD, rte_socket_id(), NULL, st->pool);
		if (rc == 0)
			rc = rte_eth_tx_queue_setup(port, q, RG_TXD, rte_socket_id(), NULL);
	}
	if (rc == 0)
		rc = rte_eth_dev_start(port);
	if (rc != 0) {
		fprintf(stderr, "rocegen: port %u (%s): setup failed: %s\n", port, name,
			rte_strerror(-rc));
		return -1;
	}
	rte_eth_promiscuous_enable(port);
	rte_eth_macaddr_get(port, &addr);
	memcpy(st->mac[r], addr.addr_bytes, 6);
	printf("rocegen: port %u (%s, driver %s) MAC %02x:%02x:%02x:%02x:%02x:%02x, rail %u\n",
	       port, name, info.driver_name, st->mac[r][0], st->mac[r][1], st->mac[r][2],
	       st->mac[r][3], st->mac[r][4], st->mac[r][5], r);
	return 0;
}

int
rg_port_setup(struct rg_state *st)
{
	uint32_t room = st->o.mtu <= 1024 ? RTE_MBUF_DEFAULT_BUF_SIZE :
		8192 + RTE_PKTMBUF_HEADROOM; /* af_packet framesz=8192 for 4 KB MTU */
	unsigned int r = 0, more;
	uint16_t port;

	RTE_ETH_FOREACH_DEV(port) {
		if (r < st->n_ports)
			st->port_ids[r] = port;
		r++;
	}
	if (r != st->n_ports) {
		fprintf(stderr, "rocegen: %u DPDK ports, %u expected\n", r, st->n_ports);
		return -1;
	}
	/* each further queue pair: its RX ring, its TX ring and its inbox's share */
	more = st->n_ports * st->n_shards - 1;
	/* shards free mbufs other shards allocate: ThreadSanitizer builds say so (the ops) */
	st->pool = rte_pktmbuf_pool_create_by_ops("rg_pkts", RG_NB_MBUF + more * 4096u, 256, 0,
						  (uint16_t)room, (int)rte_socket_id(),
						  emu_tsan_pool_ops());
	if (st->pool == NULL) {
		fprintf(stderr, "rocegen: cannot create the mbuf pool: %s\n",
			rte_strerror(rte_errno));
		return -1;
	}
	for (r = 0; r < st->n_ports; r++)
		if (rg_port_setup_one(st, r, st->port_ids[r]) != 0)
			return -1;
	return 0;
}

int
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

unsigned int
rg_rail(const struct rg_state *st, unsigned int g)
{
	return g % st->o.n_ranks % st->n_ports;
}

unsigned int
rg_wire_src(const struct rg_state *st, unsigned int src, unsigned int dst)
{
	if (!st->o.pxn || rg_rail(st, src) == rg_rail(st, dst))
		return src;
	/* NCCL's PXN: the GPU of src's node on dst's rail sends it (NVLink first) */
	return src - src % st->o.n_ranks + rg_rail(st, dst);
}

/* An ARP request (op 1) or reply (op 2) from us on rail @p r. */
static void
rg_send_arp(struct rg_state *st, unsigned int r, uint16_t op, const uint8_t tha[6],
	    const uint8_t tpa[4], const uint8_t spa[4])
{
	static const uint8_t bcast[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
	uint8_t f[60];

	memset(f, 0, sizeof(f));
	memcpy(f, op == 1 ? bcast : tha, 6);
	memcpy(f + 6, st->mac[r], 6);
	f[12] = 0x08;
	f[13] = 0x06;
	f[15] = 1;		/* Ethernet */
	f[16] = 0x08;		/* IPv4 */
	f[18] = 6;
	f[19] = 4;
	f[21] = (uint8_t)op;
	memcpy(f + 22, st->mac[r], 6);
	memcpy(f + 28, spa, 4);
	if (op == 2)
		memcpy(f + 32, tha, 6);
	memcpy(f + 38, tpa, 4);
	rg_send_frame(st, r, f, sizeof(f));
}

void
rg_qps_set_macs(struct rg_state *st)
{
	unsigned int q;

	for (q = 0; q < st->n_qp; q++) {
		const struct rg_qp *x = &st->qps[q];

		if (st->peer_known[x->peer_proc][x->port])
			rg_ep_set_dst_mac(&st->qps[q].ep, st->peer_mac[x->peer_proc][x->port]);
	}
}

void
rg_on_arp(struct rg_state *st, unsigned int r, const uint8_t *f, uint32_t len,
	  const struct roce_pkt *p)
{
	const uint8_t *a = f + p->l3_off;
	int sp, tp;

	if (p->l3_off + 28u > len || a[0] != 0 || a[1] != 1 || a[2] != 8 || a[3] != 0)
		return;
	sp = rg_proc_of_ip(st, a + 14);
	if (sp >= 0 && (unsigned int)sp != st->proc && !st->peer_known[sp][r]) {
		memcpy(st->peer_mac[sp][r], a + 8, 6);
		st->peer_known[sp][r] = true;
		rg_qps_set_macs(st);
		printf("rocegen: process %d (%u.%u.%u.%u+) is at %02x:%02x:%02x:%02x:%02x:%02x on "
		       "rail %u\n", sp, a[14], a[15], a[16], a[17], a[8], a[9], a[10], a[11],
		       a[12], a[13], r);
	}
	tp = rg_proc_of_ip(st, a + 24);
	/* a request for one of our ranks' addresses on its own rail */
	if (a[7] == 1 && tp >= 0 && (unsigned int)tp == st->proc &&
	    (unsigned int)(a[27] - st->o.hosts[st->proc][3]) % st->n_ports == r) {
		rg_send_arp(st, r, 2, a + 8, a + 14, a + 24);
		st->arp_replies_sent++;
	}
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

bool
rg_timed_out(const struct rg_state *st)
{
	return rg_stop || __atomic_load_n(&rg_failed, __ATOMIC_RELAXED) ||
	       (double)rg_now_ns(st) / 1e9 > st->o.limit_s;
}

/* ARP on every rail for every other process (the address of its rank on that rail) until all
 * answered (our QPs are up: answering is safe). */
int
rg_resolve_peers(struct rg_state *st)
{
	uint64_t next = 0;
	unsigned int p, r, missing;
	uint8_t tpa[4], spa[4];

	for (;;) {
		missing = 0;
		for (p = 0; p < st->o.n_procs; p++)
			for (r = 0; r < st->n_ports; r++)
				missing += p != st->proc && !st->peer_known[p][r];
		if (missing == 0)
			return 0;
		if (rg_timed_out(st)) {
			for (p = 0; p < st->o.n_procs; p++)
				for (r = 0; r < st->n_ports; r++)
					if (p != st->proc && !st->peer_known[p][r])
						fprintf(stderr, "rocegen: no ARP reply from process "
							"%u (%u.%u.%u.%u+) on rail %u\n", p,
							st->o.hosts[p][0], st->o.hosts[p][1],
							st->o.hosts[p][2], st->o.hosts[p][3], r);
			return -1;
		}
		if (rg_now_ns(st) >= next) {
			for (p = 0; p < st->o.n_procs; p++)
				for (r = 0; r < st->n_ports; r++) {
					if (p == st->proc || st->peer_known[p][r])
						continue;
					rg_rank_ip(st, p * st->o.n_ranks + r, tpa);
					rg_rank_ip(st, st->proc * st->o.n_ranks + r, spa);
					rg_send_arp(st, r, 1, NULL, tpa, spa);
				}
			next = rg_now_ns(st) + 100000000ULL;
		}
		rg_poll(st);
	}
}
