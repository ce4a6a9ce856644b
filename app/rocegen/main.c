/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rocegen: software RoCEv2 endpoints on one DPDK port (any PMD or vdev). A process hosts --ranks
 * ranks (addresses --ip, --ip + 1, ...) of a ring over 2 processes: ranks 0..N-1 in the process
 * with the lower address, N..2N-1 in the other. The ring's two wire hops (our last rank to the
 * peer's first, the peer's last to our first) each use --qps RC QPs (lib/endpoint: go-back-N,
 * DCQCN, PFC); hops between ranks of this process are memory copies, counted. It answers ARP for
 * its addresses and runs a point-to-point bandwidth test or a ring all-reduce. Ranks synchronise
 * on the wire only: a step's data ends in a WRITE with immediate, and the receiver waits for it.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>

#include <jansson.h>
#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>

#include "lib/endpoint/ep_qp.h"

#define RG_BURST 32
#define RG_MAX_QPS 16
#define RG_NB_MBUF 8191
#define RG_RXD 1024
#define RG_TXD 1024
#define RG_QPN_SEND 0x100	/* our last rank -> the peer's first rank */
#define RG_QPN_RECV 0x200	/* the peer's last rank -> our first rank */
#define RG_MAX_RANKS 8

enum rg_test {
	RG_TEST_P2P,
	RG_TEST_ALLREDUCE,
};

struct rg_opts {
	uint8_t ip[4];
	uint8_t peer_ip[4];
	bool ip_set, peer_set;
	uint64_t size;			/* largest size (-e); buffers are this big */
	uint64_t min_size;		/* smallest size (-b) */
	unsigned int factor;		/* -f */
	unsigned int iters;
	unsigned int warmup;
	unsigned int n_qps;
	unsigned int n_ranks;		/* ranks in this process (the same in both) */
	uint32_t mtu;
	enum rg_test test;
	const char *json;
	const char *dcqcn;
	double line_mbps;
	double limit_s;
	uint8_t timeout;
	uint64_t window_bytes;
	double rx_loss;			/* test aid: RoCE frames to drop */
	uint64_t seed;
};

struct rg_state {
	struct rg_opts o;
	uint16_t port;
	struct rte_mempool *pool;
	uint8_t mac[6];
	uint8_t peer_mac[6];
	bool peer_known;
	unsigned int proc;		/* 0 for the lower IP */
	unsigned int n_ranks_total;	/* R */
	bool qps_ready;			/* RoCE frames before this are dropped (counted) */
	uint64_t cur_size;		/* the size being run */
	uint32_t imm_base;		/* first imm of the size being run */
	unsigned int n_rows;
	uint64_t row_sizes[64];
	double row_us[64];
	struct ep_pfc pfc;
	struct ep_qp qps[2 * RG_MAX_QPS];	/* send QPs, then receive QPs */
	uint8_t *bufs[RG_MAX_RANKS];	/* per local rank: data; rank 0: data + scratch */
	uint8_t *mr;			/* bufs[0]: where the peer writes */
	uint64_t *bitmap;
	uint8_t *src;			/* p2p: what we send */
	uint64_t tsc_hz;
	uint64_t tsc0;
	uint32_t *imm_seen;		/* per (iteration, step): completions received */
	unsigned int n_imm;
	uint64_t arp_replies_sent;
	uint64_t tx_dropped;		/* frames the PMD did not take (go-back-N resends) */
	uint64_t rx_other;
	uint64_t rx_lost;		/* dropped on purpose (--rx-loss) */
	uint64_t rx_early;		/* RoCE frames before our QPs were up */
	uint64_t local_bytes;		/* moved between ranks of this process */
	uint64_t rng;
};

static volatile sig_atomic_t rg_stop;

static void
rg_on_signal(int sig)
{
	(void)sig;
	rg_stop = 1;
}

static uint64_t
rg_now_ns(const struct rg_state *st)
{
	uint64_t d = rte_rdtsc() - st->tsc0;

	return (d / st->tsc_hz) * 1000000000ULL + (d % st->tsc_hz) * 1000000000ULL / st->tsc_hz;
}

static void
rg_usage(FILE *f)
{
	fprintf(f,
		"usage: rocegen [EAL options] -- --ip A.B.C.D --peer-ip A.B.C.D [options]\n"
		"  --ip ADDR            this rank's IPv4 address (rocegen answers ARP for it)\n"
		"  --peer-ip ADDR       the peer process's address\n"
		"  --test p2p|allreduce point-to-point bandwidth (both ways) or ring all-reduce\n"
		"  --size N[K|M|G]      message / buffer size in bytes (default 64M)\n"
		"  -b N, -e N, -f F     size sweep from -b to -e bytes, times F each (like\n"
		"                       nccl-tests; --size N is -b N -e N)\n"
		"  --iters N            timed iterations (default 5)\n"
		"  --warmup N           untimed iterations first (default 1)\n"
		"  --qps N              QPs (channels) per wire hop, 1..%d (default 1)\n"
		"  --ranks N            ranks in this process, 1..%d, the same in both\n"
		"                       (default 1)\n"
		"  --mtu 1024|4096      path MTU (default 1024)\n"
		"  --dcqcn nvidia|paper|off  congestion control (default nvidia)\n"
		"  --line-rate-mbps R   line rate for DCQCN and PFC quanta (default 100000)\n"
		"  --timeout T          retransmission timeout 4.096 us x 2^T (default 14)\n"
		"  --time-limit S       give up after S seconds (default 120)\n"
		"  --window-kb N        outstanding bytes per QP in KB (default 256)\n"
		"  --rx-loss PCT        test aid: drop PCT %% of received RoCE frames (seeded)\n"
		"  --seed N             seed for --rx-loss (default 1)\n"
		"  --json FILE          write the table and per-QP counters as JSON\n"
		"example (netns + veth): rocegen -l 0 --no-huge -m 512 --no-pci \\\n"
		"    --vdev=net_af_packet0,iface=veth0 -- --ip 198.18.0.1 --peer-ip 198.18.0.2\n",
		RG_MAX_QPS, RG_MAX_RANKS);
}

static int
rg_parse_size(const char *s, uint64_t *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno != 0 || end == s || v <= 0)
		return -1;
	if (*end == 'K' || *end == 'k')
		v *= 1024, end++;
	else if (*end == 'M' || *end == 'm')
		v *= 1024 * 1024, end++;
	else if (*end == 'G' || *end == 'g')
		v *= 1024.0 * 1024 * 1024, end++;
	if (*end != '\0' || v > 4.0 * 1024 * 1024 * 1024 - 1)
		return -1;
	*out = (uint64_t)v;
	return 0;
}

static int
rg_parse_uint(const char *opt, const char *s, unsigned long lo, unsigned long hi,
	      unsigned long *out)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 0);
	if (errno != 0 || end == s || *end != '\0' || s[0] == '-' || v < lo || v > hi) {
		fprintf(stderr, "rocegen: %s: must be an integer in %lu..%lu, got \"%s\"\n",
			opt, lo, hi, s);
		return -1;
	}
	*out = v;
	return 0;
}

static int
rg_parse_args(int argc, char **argv, struct rg_opts *o)
{
	static const struct option longopts[] = {
		{ "ip", required_argument, NULL, 'i' },
		{ "peer-ip", required_argument, NULL, 'p' },
		{ "test", required_argument, NULL, 't' },
		{ "size", required_argument, NULL, 's' },
		{ "iters", required_argument, NULL, 'n' },
		{ "warmup", required_argument, NULL, 'w' },
		{ "qps", required_argument, NULL, 'q' },
		{ "ranks", required_argument, NULL, 'R' },
		{ "mtu", required_argument, NULL, 'm' },
		{ "dcqcn", required_argument, NULL, 'd' },
		{ "line-rate-mbps", required_argument, NULL, 'r' },
		{ "timeout", required_argument, NULL, 'T' },
		{ "time-limit", required_argument, NULL, 'L' },
		{ "json", required_argument, NULL, 'j' },
		{ "window-kb", required_argument, NULL, 'W' },
		{ "rx-loss", required_argument, NULL, 'x' },
		{ "seed", required_argument, NULL, 'S' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	unsigned long v;
	int c;

	memset(o, 0, sizeof(*o));
	o->size = 64ULL << 20;
	o->factor = 2;
	o->iters = 5;
	o->warmup = 1;
	o->n_qps = 1;
	o->n_ranks = 1;
	o->mtu = 1024;
	o->dcqcn = "nvidia";
	o->line_mbps = 100000;
	o->limit_s = 120;
	o->timeout = 14;
	o->window_bytes = 256 * 1024;
	o->seed = 1;
	while ((c = getopt_long(argc, argv, "b:e:f:", longopts, NULL)) != -1) {
		switch (c) {
		case 'i':
		case 'p':
			if (inet_pton(AF_INET, optarg, c == 'i' ? o->ip : o->peer_ip) != 1) {
				fprintf(stderr, "rocegen: --%s: not an IPv4 address: \"%s\"\n",
					c == 'i' ? "ip" : "peer-ip", optarg);
				return -1;
			}
			if (c == 'i')
				o->ip_set = true;
			else
				o->peer_set = true;
			break;
		case 't':
			if (strcmp(optarg, "p2p") == 0)
				o->test = RG_TEST_P2P;
			else if (strcmp(optarg, "allreduce") == 0)
				o->test = RG_TEST_ALLREDUCE;
			else {
				fprintf(stderr, "rocegen: --test: p2p or allreduce, got \"%s\"\n",
					optarg);
				return -1;
			}
			break;
		case 'b':
		case 'e':
		case 's':
			if (rg_parse_size(optarg, c == 'b' ? &o->min_size : &o->size) != 0) {
				fprintf(stderr, "rocegen: --size: bytes with an optional K/M/G "
					"suffix, 1..4G-1, got \"%s\"\n", optarg);
				return -1;
			}
			if (c == 's')
				o->min_size = o->size;
			break;
		case 'f':
			if (rg_parse_uint("-f", optarg, 2, 16, &v) != 0)
				return -1;
			o->factor = (unsigned int)v;
			break;
		case 'n':
		case 'w':
			if (rg_parse_uint(c == 'n' ? "--iters" : "--warmup", optarg, c == 'n', 1000,
					  &v) != 0)
				return -1;
			if (c == 'n')
				o->iters = (unsigned int)v;
			else
				o->warmup = (unsigned int)v;
			break;
		case 'q':
			if (rg_parse_uint("--qps", optarg, 1, RG_MAX_QPS, &v) != 0)
				return -1;
			o->n_qps = (unsigned int)v;
			break;
		case 'R':
			if (rg_parse_uint("--ranks", optarg, 1, RG_MAX_RANKS, &v) != 0)
				return -1;
			o->n_ranks = (unsigned int)v;
			break;
		case 'm':
			if (rg_parse_uint("--mtu", optarg, 256, 4096, &v) != 0)
				return -1;
			if (v != 256 && v != 512 && v != 1024 && v != 2048 && v != 4096) {
				fprintf(stderr, "rocegen: --mtu: 256, 512, 1024, 2048 or 4096, "
					"got %lu\n", v);
				return -1;
			}
			o->mtu = (uint32_t)v;
			break;
		case 'd':
			if (strcmp(optarg, "nvidia") != 0 && strcmp(optarg, "paper") != 0 &&
			    strcmp(optarg, "off") != 0) {
				fprintf(stderr, "rocegen: --dcqcn: nvidia, paper or off, "
					"got \"%s\"\n", optarg);
				return -1;
			}
			o->dcqcn = optarg;
			break;
		case 'r':
			if (rg_parse_uint("--line-rate-mbps", optarg, 1, 1000000, &v) != 0)
				return -1;
			o->line_mbps = (double)v;
			break;
		case 'T':
			if (rg_parse_uint("--timeout", optarg, 1, 31, &v) != 0)
				return -1;
			o->timeout = (uint8_t)v;
			break;
		case 'L':
			if (rg_parse_uint("--time-limit", optarg, 1, 86400, &v) != 0)
				return -1;
			o->limit_s = (double)v;
			break;
		case 'j':
			o->json = optarg;
			break;
		case 'x':
			o->rx_loss = strtod(optarg, NULL) / 100.0;
			if (!(o->rx_loss >= 0 && o->rx_loss <= 0.5)) {
				fprintf(stderr, "rocegen: --rx-loss: percent in 0..50, "
					"got \"%s\"\n", optarg);
				return -1;
			}
			break;
		case 'S':
			if (rg_parse_uint("--seed", optarg, 0, ULONG_MAX, &v) != 0)
				return -1;
			o->seed = v;
			break;
		case 'W':
			if (rg_parse_uint("--window-kb", optarg, 1, 1 << 20, &v) != 0)
				return -1;
			o->window_bytes = (uint64_t)v * 1024;
			break;
		case 'h':
			rg_usage(stdout);
			exit(0);
		default:
			rg_usage(stderr);
			return -1;
		}
	}
	if (!o->ip_set || !o->peer_set) {
		fprintf(stderr, "rocegen: --ip and --peer-ip are required\n");
		return -1;
	}
	if (o->min_size == 0 || o->min_size > o->size)
		o->min_size = o->size;
	if (o->min_size % (4ULL * 2 * o->n_ranks * o->n_qps) != 0) {
		fprintf(stderr, "rocegen: -b: must be a multiple of %u (4-byte floats, %u ranks, "
			"%u QPs), got %" PRIu64 "\n", 8 * o->n_ranks * o->n_qps, 2 * o->n_ranks,
			o->n_qps, o->min_size);
		return -1;
	}
	if (o->size % (4ULL * 2 * o->n_ranks * o->n_qps) != 0) {
		fprintf(stderr, "rocegen: --size: must be a multiple of %u (4-byte floats, "
			"%u ranks, %u QPs), got %" PRIu64 "\n", 8 * o->n_ranks * o->n_qps,
			2 * o->n_ranks, o->n_qps, o->size);
		return -1;
	}
	if (o->ip[3] + o->n_ranks > 255 || o->peer_ip[3] + o->n_ranks > 255) {
		fprintf(stderr, "rocegen: --ip, --peer-ip: the last byte + --ranks must stay below "
			"255\n");
		return -1;
	}
	return 0;
}

static int
rg_port_setup(struct rg_state *st)
{
	struct rte_eth_conf conf;
	struct rte_ether_addr addr;
	struct rte_eth_dev_info info;
	char name[RTE_ETH_NAME_MAX_LEN] = "?";
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
	st->pool = rte_pktmbuf_pool_create("rg_pkts", RG_NB_MBUF, 256, 0, (uint16_t)room,
					   (int)rte_socket_id());
	if (st->pool == NULL) {
		fprintf(stderr, "rocegen: cannot create the mbuf pool: %s\n",
			rte_strerror(rte_errno));
		return -1;
	}
	memset(&conf, 0, sizeof(conf));
	rc = rte_eth_dev_info_get(st->port, &info);
	if (rc == 0)
		rc = rte_eth_dev_configure(st->port, 1, 1, &conf);
	if (rc == 0)
		rc = rte_eth_rx_queue_setup(st->port, 0, RG_RXD, rte_socket_id(), NULL, st->pool);
	if (rc == 0)
		rc = rte_eth_tx_queue_setup(st->port, 0, RG_TXD, rte_socket_id(), NULL);
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

/* Whether ip is one of base, base + 1, ..., base + n - 1. */
static bool
rg_ip_in(const uint8_t *ip, const uint8_t *base, unsigned int n)
{
	return memcmp(ip, base, 3) == 0 && ip[3] >= base[3] && ip[3] < base[3] + n;
}

static void
rg_ip_of(uint8_t out[4], const uint8_t *base, unsigned int k)
{
	memcpy(out, base, 4);
	out[3] = (uint8_t)(base[3] + k);
}

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
	if (rte_eth_tx_burst(st->port, 0, &m, 1) != 1) {
		rte_pktmbuf_free(m);
		st->tx_dropped++;
	}
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

	if (p->l3_off + 28u > len || a[0] != 0 || a[1] != 1 || a[2] != 8 || a[3] != 0)
		return;
	if (rg_ip_in(a + 14, st->o.peer_ip, st->o.n_ranks) && !st->peer_known) {
		memcpy(st->peer_mac, a + 8, 6);
		st->peer_known = true;
		printf("rocegen: peer %u.%u.%u.%u+ is at %02x:%02x:%02x:%02x:%02x:%02x\n",
		       st->o.peer_ip[0], st->o.peer_ip[1], st->o.peer_ip[2], st->o.peer_ip[3],
		       a[8], a[9], a[10], a[11], a[12], a[13]);
	}
	if (a[7] == 1 && rg_ip_in(a + 24, st->o.ip, st->o.n_ranks)) {
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

/* Receive a burst: ARP, PFC, and RoCE frames to our QPs. */
static void
rg_rx(struct rg_state *st, uint64_t now)
{
	struct rte_mbuf *pkts[RG_BURST];
	struct roce_pkt p;
	uint16_t n, i;

	n = rte_eth_rx_burst(st->port, 0, pkts, RG_BURST);
	for (i = 0; i < n; i++) {
		struct rte_mbuf *m = pkts[i];
		const uint8_t *f = rte_pktmbuf_mtod(m, const uint8_t *);
		uint32_t len = rte_pktmbuf_data_len(m);
		uint32_t q;

		if (m->nb_segs != 1) {
			st->rx_other++;
			rte_pktmbuf_free(m);
			continue;
		}
		switch (roce_parse(f, len, ROCE_UDP_PORT, &p)) {
		case ROCE_CLASS_ARP:
			rg_on_arp(st, f, len, &p);
			break;
		case ROCE_CLASS_MAC_CONTROL:
			ep_pfc_on_frame(&st->pfc, &p, now);
			break;
		case ROCE_CLASS_ROCEV2:
			if (!st->qps_ready) {
				st->rx_early++;
				break;
			}
			if (st->o.rx_loss > 0 && rg_rand01(st) < st->o.rx_loss) {
				st->rx_lost++;
				break;
			}
			if (!rg_ip_in(p.dst_ip, st->o.ip, st->o.n_ranks)) {
				st->rx_other++;
				break;
			}
			if (p.dest_qp - RG_QPN_SEND < st->o.n_qps)
				q = p.dest_qp - RG_QPN_SEND;
			else if (p.dest_qp - RG_QPN_RECV < st->o.n_qps)
				q = st->o.n_qps + p.dest_qp - RG_QPN_RECV;
			else {
				st->rx_other++;
				break;
			}
			ep_qp_rx(&st->qps[q], f, len, &p, now);
			break;
		default:
			st->rx_other++;
			break;
		}
		rte_pktmbuf_free(m);
	}
}

/* Transmit what the QPs may send now, up to a burst each. */
static void
rg_tx(struct rg_state *st, uint64_t now)
{
	struct rte_mbuf *pkts[RG_BURST];
	unsigned int q, n, i;
	uint16_t sent;

	if (!st->qps_ready)
		return;
	for (q = 0; q < 2 * st->o.n_qps; q++) {
		for (n = 0; n < RG_BURST; n++) {
			struct rte_mbuf *m = rte_pktmbuf_alloc(st->pool);
			int len;

			if (m == NULL)
				break;
			len = ep_qp_tx(&st->qps[q], now, rte_pktmbuf_mtod(m, uint8_t *),
				       rte_pktmbuf_tailroom(m));
			if (len <= 0) {
				rte_pktmbuf_free(m);
				break;
			}
			rte_pktmbuf_append(m, (uint16_t)len);
			pkts[n] = m;
		}
		if (n == 0)
			continue;
		sent = rte_eth_tx_burst(st->port, 0, pkts, (uint16_t)n);
		for (i = sent; i < n; i++)
			rte_pktmbuf_free(pkts[i]);
		st->tx_dropped += n - sent;
	}
}

static void
rg_poll(struct rg_state *st)
{
	struct ep_cqe c;
	uint64_t now = rg_now_ns(st);
	unsigned int q;

	rg_rx(st, now);
	rg_tx(st, now);
	for (q = 0; q < 2 * st->o.n_qps && st->qps_ready; q++) {
		while (ep_qp_poll_rq(&st->qps[q], &c))
			if (c.has_imm && c.imm < st->n_imm)
				st->imm_seen[c.imm]++;
		while (ep_qp_poll_sq(&st->qps[q], &c))
			;
	}
}

static bool
rg_timed_out(const struct rg_state *st)
{
	return rg_stop || (double)rg_now_ns(st) / 1e9 > st->o.limit_s;
}

static int
rg_resolve_peer(struct rg_state *st)
{
	uint64_t next = 0;

	while (!st->peer_known) {
		if (rg_timed_out(st)) {
			fprintf(stderr, "rocegen: no ARP reply from the peer\n");
			return -1;
		}
		if (rg_now_ns(st) >= next) {
			rg_send_arp(st, 1, NULL, st->o.peer_ip, st->o.ip);
			next = rg_now_ns(st) + 100000000ULL;
		}
		rg_poll(st);
	}
	return 0;
}

static int
rg_qps_init(struct rg_state *st)
{
	unsigned int q;

	ep_pfc_init(&st->pfc, st->o.line_mbps);
	for (q = 0; q < 2 * st->o.n_qps; q++) {
		bool send = q < st->o.n_qps;
		unsigned int ch = q % st->o.n_qps;
		struct ep_qp_cfg c;

		ep_qp_cfg_default(&c);
		c.qpn = (send ? RG_QPN_SEND : RG_QPN_RECV) + ch;
		c.dest_qpn = (send ? RG_QPN_RECV : RG_QPN_SEND) + ch;
		c.mtu = st->o.mtu;
		c.timeout = st->o.timeout;
		c.window_bytes = st->o.window_bytes;
		memcpy(c.src_mac, st->mac, 6);
		memcpy(c.dst_mac, st->peer_mac, 6);
		rg_ip_of(c.src_ip, st->o.ip, send ? st->o.n_ranks - 1 : 0);
		rg_ip_of(c.dst_ip, st->o.peer_ip, send ? 0 : st->o.n_ranks - 1);
		c.udp_sport = (uint16_t)(0xC000 | ((st->proc << 8) + q));
		if (strcmp(st->o.dcqcn, "off") == 0) {
			dcqcn_params_nvidia(&c.dcqcn, st->o.line_mbps);
			c.dcqcn_enabled = false;
		} else {
			dcqcn_params_by_name(&c.dcqcn, st->o.dcqcn, st->o.line_mbps);
		}
		if (!send) { /* the peer writes into our first rank's data and scratch */
			c.mr = st->mr;
			c.mr_len = 2 * st->o.size;
			c.placed_bitmap = st->bitmap;
		}
		if (ep_qp_init(&st->qps[q], &c, &st->pfc, rg_now_ns(st)) != 0) {
			fprintf(stderr, "rocegen: QP %u: bad parameters\n", q);
			return -1;
		}
	}
	st->qps_ready = true;
	return 0;
}

/* Send [off, off + len) of buf to the peer's va, split over the QPs, the last with imm. */
static int
rg_post(struct rg_state *st, const uint8_t *buf, uint64_t len, uint64_t va, uint32_t imm)
{
	uint64_t per = len / st->o.n_qps;
	unsigned int q;

	for (q = 0; q < st->o.n_qps; q++) {
		struct ep_wr wr = { .wr_id = imm, .op = EP_WR_WRITE_IMM, .local = buf + q * per,
				    .len = (uint32_t)per, .remote_va = va + q * per, .imm = imm };
		int rc;

		while ((rc = ep_qp_post(&st->qps[q], &wr)) == -ENOSPC)
			rg_poll(st);
		if (rc != 0) {
			fprintf(stderr, "rocegen: QP %u: post failed (%s)\n", q, strerror(-rc));
			return -1;
		}
	}
	return 0;
}

static void
rg_dump_qps(const struct rg_state *st)
{
	unsigned int q;

	for (q = 0; q < 2 * st->o.n_qps; q++) {
		const struct ep_qp *qp = &st->qps[q];

		fprintf(stderr, "rocegen: QP 0x%x: requester una %u nxt %u max %u (WRs %u..%u, "
			"sending %u, retries %u); responder expects %u (NAK outstanding %d)\n",
			qp->cfg.qpn, qp->snd_una, qp->snd_nxt, qp->snd_max, qp->wr_head,
			qp->wr_tail, qp->wr_send, qp->retries, qp->epsn, qp->nak_outstanding);
	}
}

/* Wait until our WRs are acknowledged and the peer's step imm arrived on every QP. */
static int
rg_wait(struct rg_state *st, uint32_t imm)
{
	for (;;) {
		bool idle = true;
		unsigned int q;

		for (q = 0; q < 2 * st->o.n_qps; q++) {
			if (st->qps[q].state != EP_QP_RTS) {
				fprintf(stderr, "rocegen: QP 0x%x in the error state (retries "
					"exhausted)\n", st->qps[q].cfg.qpn);
				rg_dump_qps(st);
				return -1;
			}
			idle = idle && (q >= st->o.n_qps || ep_qp_idle(&st->qps[q]));
		}
		if (idle && st->imm_seen[imm] >= st->o.n_qps)
			return 0;
		if (rg_timed_out(st)) {
			fprintf(stderr, "rocegen: gave up waiting for step %u\n", imm);
			rg_dump_qps(st);
			return -1;
		}
		rg_poll(st);
	}
}

static void
rg_pattern(uint8_t *buf, uint64_t len, unsigned int rank)
{
	uint64_t i;

	for (i = 0; i < len; i++)
		buf[i] = (uint8_t)(i * 131 + (i >> 12) + rank * 17 + 1);
}

/* Steps of one iteration: imm = iteration * steps + step tells them apart on the wire. */
static unsigned int
rg_steps(const struct rg_state *st)
{
	return st->o.test == RG_TEST_P2P ? 1 : 2 * (st->n_ranks_total - 1);
}

/* dst += src over n floats, answering the wire now and then (the peer's timers run). */
static void
rg_add(struct rg_state *st, float *dst, const float *src, uint64_t n)
{
	uint64_t i;

	for (i = 0; i < n; i++) {
		dst[i] += src[i];
		if ((i & 0xFFFF) == 0xFFFF)
			rg_poll(st);
	}
}

/*
 * One iteration. Ring all-reduce over R ranks, step s of the reduce-scatter: rank g sends chunk
 * (g - s) mod R to g + 1, which adds it into its own; step s of the all-gather: rank g sends
 * chunk (g + 1 - s) mod R, which g + 1 copies. Our last rank's chunk goes on the wire (into the
 * peer's first rank: its scratch, or its data in the all-gather); the other hops are in memory.
 */
static int
rg_iteration(struct rg_state *st, unsigned int it)
{
	unsigned int R = st->n_ranks_total, nl = st->o.n_ranks, g0 = st->proc * nl;
	unsigned int gl = g0 + nl - 1, step, s, k, cs, cr;
	uint64_t size = st->cur_size, csz = size / R, n = csz / 4, scratch = st->o.size;
	uint32_t imm;
	bool rs;

	if (st->o.test == RG_TEST_P2P) {
		imm = st->imm_base + it;
		if (rg_post(st, st->src, size, 0, imm) != 0)
			return -1;
		return rg_wait(st, imm);
	}
	for (step = 0; step < 2 * (R - 1); step++) {
		rs = step < R - 1;
		s = rs ? step : step - (R - 1);
		imm = st->imm_base + it * rg_steps(st) + step;
		cs = rs ? (gl + R - s) % R : (gl + 1 + R - s) % R;
		cr = rs ? (g0 + R - s - 1) % R : (g0 + R - s) % R;
		if (rg_post(st, st->bufs[nl - 1] + cs * csz, csz, (rs ? scratch : 0) + cs * csz,
			    imm) != 0)
			return -1;
		for (k = 0; k + 1 < nl; k++) {
			unsigned int c = rs ? (g0 + k + R - s) % R : (g0 + k + 1 + R - s) % R;
			float *src = (float *)st->bufs[k] + c * n;
			float *dst = (float *)st->bufs[k + 1] + c * n;

			if (rs)
				rg_add(st, dst, src, n);
			else
				memcpy(dst, src, csz);
			st->local_bytes += csz;
		}
		if (rg_wait(st, imm) != 0)
			return -1;
		if (rs)
			rg_add(st, (float *)st->bufs[0] + cr * n,
			       (const float *)(st->bufs[0] + scratch) + cr * n, n);
	}
	return 0;
}

static void
rg_allreduce_init(struct rg_state *st)
{
	uint64_t i, n = st->cur_size / 4;
	unsigned int k;

	for (k = 0; k < st->o.n_ranks; k++) {
		float *data = (float *)st->bufs[k];
		unsigned int g = st->proc * st->o.n_ranks + k;

		for (i = 0; i < n; i++)
			data[i] = (float)(g + 1) + (float)(i % 7);
	}
}

static int
rg_verify(struct rg_state *st)
{
	unsigned int R = st->n_ranks_total, k;
	uint64_t size = st->cur_size, i, n = size / 4, placed, want_placed;
	int bad = 0;

	if (st->o.test == RG_TEST_P2P) {
		uint8_t *want = malloc(size);

		if (want == NULL)
			return -1;
		rg_pattern(want, size, 1 - st->proc);
		for (i = 0; i < size && !bad; i += 256 * 1024) {
			uint64_t part = RTE_MIN(size - i, (uint64_t)256 * 1024);

			bad = memcmp(want + i, st->mr + i, part) != 0;
			rg_poll(st);
		}
		free(want);
		placed = ep_bitmap_count(st->bitmap, 0, size);
		want_placed = size;
	} else {
		/* after one all-reduce of (g + 1) + i % 7 over ranks g: R(R + 1)/2 + R (i % 7) */
		for (k = 0; k < st->o.n_ranks && !bad; k++) {
			const float *data = (const float *)st->bufs[k];

			for (i = 0; i < n && !bad; i++) {
				float want = (float)(R * (R + 1) / 2) + (float)R * (float)(i % 7);

				bad = data[i] != want;
				if ((i & 0xFFFF) == 0xFFFF)
					rg_poll(st);
			}
		}
		/* from the wire, into our first rank: R - 1 chunks in scratch (reduce-scatter)
		 * and R - 1 chunks in data (all-gather) */
		placed = ep_bitmap_count(st->bitmap, 0, 2 * st->o.size);
		want_placed = 2 * (R - 1) * (size / R);
	}
	if (st->n_rows > 0) {
		/* the peer may already be writing the next size: the bitmap counts the first */
		printf("rocegen: verify %" PRIu64 " bytes: %s\n", size,
		       bad ? "DATA MISMATCH" : "data ok");
		return bad ? -1 : 0;
	}
	printf("rocegen: verify: %s, %" PRIu64 " of %" PRIu64 " bytes placed\n",
	       bad ? "DATA MISMATCH" : "data ok", placed, want_placed);
	return bad || placed != want_placed ? -1 : 0;
}

static void
rg_report(struct rg_state *st)
{
	unsigned int R = st->n_ranks_total, r;
	/* p2p: 1; ring all-reduce: 2(R - 1)/R, as nccl-tests */
	double factor = st->o.test == RG_TEST_P2P ? 1.0 : 2.0 * (R - 1) / R;
	unsigned int q, c;
	json_t *root = json_object(), *rows = json_array(), *qps = json_array(), *row;

	printf("#\n# %-12s %12s %6s %10s %10s %10s\n", "size", "count", "type", "time(us)",
	       "algbw(GB/s)", "busbw(GB/s)");
	for (r = 0; r < st->n_rows; r++) {
		uint64_t size = st->row_sizes[r];
		double us = st->row_us[r], algbw = (double)size / (us * 1e3); /* GB/s */

		printf("  %-12" PRIu64 " %12" PRIu64 " %6s %10.1f %10.3f %10.3f\n", size,
		       st->o.test == RG_TEST_P2P ? size : size / 4,
		       st->o.test == RG_TEST_P2P ? "uint8" : "float", us, algbw, algbw * factor);
		row = json_pack("{s:I, s:f, s:f, s:f}", "size", (json_int_t)size, "time_us", us,
				"algbw_gbps", algbw, "busbw_gbps", algbw * factor);
		json_array_append_new(rows, row);
	}
	printf("# per-QP counters\n");
	for (q = 0; q < 2 * st->o.n_qps; q++) {
		const struct ep_qp *qp = &st->qps[q];
		json_t *o = json_object();

		printf("#  qp 0x%x -> 0x%x:", qp->cfg.qpn, qp->cfg.dest_qpn);
		for (c = 0; c < EP_CTR_MAX; c++) {
			if (qp->ctrs[c] != 0)
				printf(" %s=%" PRIu64, ep_ctr_name(c), qp->ctrs[c]);
			json_object_set_new(o, ep_ctr_name(c),
					    json_integer((json_int_t)qp->ctrs[c]));
		}
		printf(" min_rate_mbps=%.1f final_rate_mbps=%.1f\n", qp->min_rate_mbps,
		       ep_qp_rate_mbps(qp));
		json_object_set_new(o, "min_rate_mbps", json_real(qp->min_rate_mbps));
		json_object_set_new(o, "qpn", json_integer(qp->cfg.qpn));
		json_object_set_new(o, "final_rate_mbps", json_real(ep_qp_rate_mbps(qp)));
		json_array_append_new(qps, o);
	}
	printf("# in-process rank-to-rank bytes (not on the wire): %" PRIu64 "\n", st->local_bytes);
	printf("# port: tx_dropped_by_pmd=%" PRIu64 " rx_other=%" PRIu64 " pfc_rcvd=%" PRIu64
	       " arp_replies=%" PRIu64 " rx_lost_on_purpose=%" PRIu64
	       " rx_before_qps_up=%" PRIu64 "\n",
	       st->tx_dropped, st->rx_other, st->pfc.pfc_rcvd, st->arp_replies_sent, st->rx_lost,
	       st->rx_early);
	json_object_set_new(root, "test",
			    json_string(st->o.test == RG_TEST_P2P ? "p2p" : "allreduce"));
	json_object_set_new(root, "ranks", json_integer(R));
	json_object_set_new(root, "first_rank", json_integer(st->proc * st->o.n_ranks));
	json_object_set_new(root, "local_bytes", json_integer((json_int_t)st->local_bytes));
	json_object_set_new(root, "results", rows);
	json_object_set_new(root, "qps", qps);
	json_object_set_new(root, "tx_dropped_by_pmd", json_integer((json_int_t)st->tx_dropped));
	json_object_set_new(root, "rx_lost_on_purpose", json_integer((json_int_t)st->rx_lost));
	json_object_set_new(root, "pfc_received", json_integer((json_int_t)st->pfc.pfc_rcvd));
	json_object_set_new(root, "pause_received", json_integer((json_int_t)st->pfc.pause_rcvd));
	if (st->o.json != NULL && json_dump_file(root, st->o.json, JSON_INDENT(2)) != 0)
		fprintf(stderr, "rocegen: %s: cannot write\n", st->o.json);
	json_decref(root);
}

int
main(int argc, char **argv)
{
	struct rg_state *st;
	unsigned int it, total, k;
	uint64_t t0 = 0;
	int rc, ret = 1;

	rc = rte_eal_init(argc, argv);
	if (rc < 0) {
		fprintf(stderr, "rocegen: EAL initialisation failed: %s\n",
			rte_strerror(rte_errno));
		return 1;
	}
	argc -= rc;
	argv += rc;
	st = calloc(1, sizeof(*st));
	if (st == NULL || rg_parse_args(argc, argv, &st->o) != 0)
		goto out;
	signal(SIGINT, rg_on_signal);
	signal(SIGTERM, rg_on_signal);
	st->tsc_hz = rte_get_tsc_hz();
	st->tsc0 = rte_rdtsc();
	st->rng = st->o.seed * 0x9E3779B97F4A7C15ULL + 1;
	st->proc = memcmp(st->o.ip, st->o.peer_ip, 4) < 0 ? 0 : 1;
	st->n_ranks_total = 2 * st->o.n_ranks;
	total = st->o.warmup + st->o.iters;
	for (st->cur_size = st->o.min_size, k = 0; st->cur_size <= st->o.size && k < 64; k++)
		st->cur_size *= st->o.factor;
	st->n_imm = k * total * rg_steps(st);
	st->imm_seen = calloc(st->n_imm, sizeof(*st->imm_seen));
	for (it = 0; it < st->o.n_ranks; it++) {
		st->bufs[it] = calloc(1, it == 0 ? 2 * st->o.size : st->o.size);
		if (st->bufs[it] == NULL)
			break;
	}
	st->mr = st->bufs[0];
	st->bitmap = calloc(2 * st->o.size / 64 + 1, sizeof(uint64_t));
	st->src = malloc(st->o.size);
	if (st->imm_seen == NULL || it < st->o.n_ranks || st->bitmap == NULL || st->src == NULL) {
		fprintf(stderr, "rocegen: out of memory for %" PRIu64 " byte buffers\n",
			st->o.size);
		goto out;
	}
	rg_pattern(st->src, st->o.size, st->proc);
	if (rg_port_setup(st) != 0 || rg_resolve_peer(st) != 0 || rg_qps_init(st) != 0)
		goto out;
	printf("rocegen: ranks %u..%u of %u, %s, %" PRIu64 " bytes, %u QP(s) per wire hop, MTU %u, "
	       "DCQCN %s; running\n", st->proc * st->o.n_ranks,
	       st->proc * st->o.n_ranks + st->o.n_ranks - 1, st->n_ranks_total,
	       st->o.test == RG_TEST_P2P ? "p2p" : "allreduce", st->o.size, st->o.n_qps, st->o.mtu,
	       st->o.dcqcn);
	fflush(stdout);
	for (st->cur_size = st->o.min_size; st->n_rows < k; st->cur_size *= st->o.factor) {
		if (st->o.test == RG_TEST_ALLREDUCE)
			rg_allreduce_init(st);
		for (it = 0; it < total; it++) {
			if (it == st->o.warmup)
				t0 = rg_now_ns(st);
			if (rg_iteration(st, it) != 0)
				goto report;
			if (it == 0 && rg_verify(st) != 0)
				goto report;
		}
		st->row_sizes[st->n_rows] = st->cur_size;
		st->row_us[st->n_rows++] = (double)(rg_now_ns(st) - t0) / 1e3 / st->o.iters;
		st->imm_base += total * rg_steps(st);
	}
	ret = 0;
report:
	rg_report(st);
	if (ret != 0)
		fprintf(stderr, "rocegen: FAILED\n");
	/* keep answering for a moment so the peer's last ACKs and imms get out */
	t0 = rg_now_ns(st);
	while (rg_now_ns(st) - t0 < 300000000ULL && !rg_stop)
		rg_poll(st);
	rte_eth_dev_stop(st->port);
out:
	if (st != NULL) {
		free(st->imm_seen);
		for (it = 0; it < RG_MAX_RANKS; it++)
			free(st->bufs[it]);
		free(st->bitmap);
		free(st->src);
		free(st);
	}
	rte_eal_cleanup();
	return ret;
}
