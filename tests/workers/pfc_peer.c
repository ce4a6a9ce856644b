/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pfc_peer: the RDMA NIC on the other side of a port, for the RX guard's test. It sends
 * RoCEv2 frames of one lossless priority (DSCP 26: priority 3) as fast as its port takes them,
 * on DPDK port 0 (a virtio-user port whose vhost-user end is rocemu's port), and counts:
 *   sent      frames the port accepted,
 *   refused   frames the port refused because the ring to rocemu was full: on a NIC, what
 *             overflows the peer's RX ring is dropped, so these are the frames a real link
 *             would have lost (they are not retried),
 *   xoff/xon  PFC frames for its priority received from rocemu, and the time it was paused.
 * With --honor it holds its frames while paused, as a NIC does; without, it ignores PFC.
 * --rate-mpps paces it as a link of that rate would (bursts of 32; 0: as fast as it can).
 * After --seconds it stops sending and listens --drain-ms more (for the XON).
 * Prints one JSON object on stdout.
 *
 *   pfc_peer EAL-ARGS -- --seconds S --size BYTES [--honor] [--speed-gbps G] [--drain-ms MS]
 *            [--rate-mpps R]
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_byteorder.h>
#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_ethdev.h>
#include <rte_ip.h>
#include <rte_mbuf.h>

#define BURST 32
#define PRIO 3

static uint64_t
now_ns(void)
{
	return rte_rdtsc() * 1000000000.0 / rte_get_tsc_hz();
}

/* A RoCEv2 RDMA WRITE ONLY of @p size bytes on the wire (no FCS), DSCP 26, to QP 0x11. */
static void
build(uint8_t *b, unsigned int size)
{
	struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)(b + 14);
	unsigned int l3 = size - 14;

	memset(b, 0, size);
	memcpy(b, "\x02\x00\x00\x00\x00\x02\x02\x00\x00\x00\x00\x01\x08\x00", 14);
	ip->version_ihl = 0x45;
	ip->type_of_service = 26 << 2 | 1; /* DSCP 26, ECT(1) */
	ip->total_length = rte_cpu_to_be_16(l3);
	ip->fragment_offset = rte_cpu_to_be_16(0x4000);
	ip->time_to_live = 64;
	ip->next_proto_id = 17;
	ip->src_addr = rte_cpu_to_be_32(0x0a000001);
	ip->dst_addr = rte_cpu_to_be_32(0x0a000002);
	ip->hdr_checksum = rte_ipv4_cksum(ip);
	b[34] = 0xc0; b[35] = 0x01;                    /* UDP source port */
	b[36] = 4791 >> 8; b[37] = 4791 & 0xff;
	b[38] = (l3 - 20) >> 8; b[39] = (l3 - 20) & 0xff;
	b[42] = 0x0a;                                   /* BTH: RC RDMA WRITE ONLY */
	b[44] = 0xff; b[45] = 0xff;                     /* P_Key */
	b[49] = 0x11;                                   /* DestQP */
}

int
main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "seconds", required_argument, NULL, 's' },
		{ "size", required_argument, NULL, 'z' },
		{ "honor", no_argument, NULL, 'h' },
		{ "speed-gbps", required_argument, NULL, 'g' },
		{ "drain-ms", required_argument, NULL, 'd' },
		{ "rate-mpps", required_argument, NULL, 'r' },
		{ NULL, 0, NULL, 0 },
	};
	struct rte_eth_conf conf = { 0 };
	struct rte_mbuf *tmpl[BURST], *rx[BURST];
	struct rte_mempool *mp;
	uint64_t sent = 0, refused = 0, xoff = 0, xon = 0, paused_ns = 0, other_rx = 0;
	uint64_t t_end, t_drain, t, prev, pause_until = 0;
	double seconds = 2, speed_gbps = 10, drain_ms = 300, rate_mpps = 0;
	uint64_t next_tx = 0, burst_ns;
	unsigned int size = 1024, i;
	const char *last = "none";
	bool honor = false;
	int c, n;

	n = rte_eal_init(argc, argv);
	if (n < 0) {
		fprintf(stderr, "pfc_peer: EAL init failed\n");
		return 1;
	}
	argc -= n;
	argv += n;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 's': seconds = atof(optarg); break;
		case 'z': size = (unsigned int)atoi(optarg); break;
		case 'h': honor = true; break;
		case 'g': speed_gbps = atof(optarg); break;
		case 'd': drain_ms = atof(optarg); break;
		case 'r': rate_mpps = atof(optarg); break;
		default: fprintf(stderr, "pfc_peer: bad option\n"); return 1;
		}
	}
	if (size < 64 || size > 2000 || rte_eth_dev_count_avail() < 1) {
		fprintf(stderr, "pfc_peer: --size 64-2000 and one DPDK port needed\n");
		return 1;
	}
	mp = rte_pktmbuf_pool_create("peer", 8191, 256, 0, 2048 + RTE_PKTMBUF_HEADROOM,
				     rte_socket_id());
	if (mp == NULL || rte_eth_dev_configure(0, 1, 1, &conf) != 0 ||
	    rte_eth_rx_queue_setup(0, 0, 1024, rte_socket_id(), NULL, mp) != 0 ||
	    rte_eth_tx_queue_setup(0, 0, 1024, rte_socket_id(), NULL) != 0 ||
	    rte_eth_dev_start(0) != 0) {
		fprintf(stderr, "pfc_peer: port setup failed\n");
		return 1;
	}
	for (i = 0; i < BURST; i++) {
		tmpl[i] = rte_pktmbuf_alloc(mp);
		if (tmpl[i] == NULL)
			return 1;
		build(rte_pktmbuf_mtod(tmpl[i], uint8_t *), size);
		tmpl[i]->data_len = tmpl[i]->pkt_len = size;
	}
	burst_ns = rate_mpps > 0 ? (uint64_t)(BURST * 1e3 / rate_mpps) : 0;
	t = now_ns();
	t_end = t + (uint64_t)(seconds * 1e9);
	t_drain = t_end + (uint64_t)(drain_ms * 1e6);
	prev = t;
	while ((t = now_ns()) < t_drain) {
		if (prev < pause_until)
			paused_ns += RTE_MIN(t, pause_until) - prev;
		prev = t;
		n = rte_eth_rx_burst(0, 0, rx, BURST);
		for (c = 0; c < n; c++) {
			const uint8_t *e = rte_pktmbuf_mtod(rx[c], const uint8_t *);

			/* MAC control 0x8808, PFC opcode 0x0101, class-enable vector, 8 times */
			if (rx[c]->data_len >= 34 && e[12] == 0x88 && e[13] == 0x08 &&
			    e[14] == 0x01 && e[15] == 0x01 && ((e[16] << 8 | e[17]) >> PRIO & 1)) {
				unsigned int q = e[18 + 2 * PRIO] << 8 | e[19 + 2 * PRIO];

				if (q > 0) {
					xoff++;
					last = "xoff";
					pause_until = t + (uint64_t)(q * 512 / speed_gbps);
				} else {
					xon++;
					last = "xon";
					pause_until = 0;
				}
			} else {
				other_rx++;
			}
			rte_pktmbuf_free(rx[c]);
		}
		if (t >= t_end || (honor && t < pause_until)) {
			next_tx = t; /* a paused link does not catch up afterwards */
			continue;
		}
		if (t < next_tx)
			continue;
		next_tx = RTE_MAX(next_tx + burst_ns, t - 10 * burst_ns);
		for (i = 0; i < BURST; i++)
			rte_mbuf_refcnt_update(tmpl[i], 1);
		n = rte_eth_tx_burst(0, 0, tmpl, BURST);
		sent += (uint64_t)n;
		refused += (uint64_t)(BURST - n);
		for (i = (unsigned int)n; i < BURST; i++)
			rte_mbuf_refcnt_update(tmpl[i], -1);
	}
	printf("{\"sent\": %" PRIu64 ", \"refused\": %" PRIu64 ", \"xoff\": %" PRIu64
	       ", \"xon\": %" PRIu64 ", \"paused_ms\": %.3f, \"last\": \"%s\", \"other_rx\": %"
	       PRIu64 ", \"honor\": %s}\n", sent, refused, xoff, xon, paused_ns / 1e6, last,
	       other_rx, honor ? "true" : "false");
	rte_eth_dev_stop(0);
	rte_eth_dev_close(0);
	rte_eal_cleanup();
	return 0;
}
