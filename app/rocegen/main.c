/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rocegen: software RoCEv2 endpoints on one DPDK port (any PMD or vdev), standing in for the
 * RDMA NICs of GPU servers running NCCL.
 *
 * P processes (--hosts, or --ip/--peer-ip for two) each host --ranks ranks; rank k of process p
 * has address hosts[p] + k and global number p x ranks + k. A collective is a schedule of
 * transfers in steps (rg_sched.c). A transfer between ranks of different processes is an RDMA
 * WRITE (the last segment with immediate, as NCCL's proxy does) on one of --qps QPs in turn,
 * or split over all of them (--split-data-on-qps, NCCL_IB_SPLIT_DATA_ON_QPS), each QP an RC
 * QP (lib/endpoint: go-back-N, timeouts, DCQCN, PFC) or, with --transport srd, an SRD-like
 * connection spraying its packets over --srd-paths UDP source ports (lib/endpoint/ep_srd.h:
 * out-of-order placement, SACKs, selective retransmission, AIMD); between ranks of one
 * process it is a memory copy, counted (NVLink inside a real node). Ranks synchronise on the
 * wire only: a step ends when the rank's writes are acknowledged and every write due to it
 * has arrived (counted by immediate); an iteration ends with a barrier (a 4-byte write with
 * immediate from every process to every other), which also is the start-up handshake. QPs
 * exist before a process sends or answers any ARP, so no peer can reach it before it is ready.
 *
 * Over 600 lines (1826): options, ports, the event loop, reports and outputs of rocegen in
 * one file; to split by those parts (noted for issue 14's rocegen work).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <time.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <sys/prctl.h>
#include <sys/stat.h>

#include <jansson.h>
#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>

#include "rg_ep.h"
#include "lib/analysis/ana.h"
#include "lib/base/emu_rundir.h"
#include "rg_sched.h"

#define RG_BURST 32
#define RG_MAX_QPS 16		/* channels (QPs) per pair of ranks */
#define RG_MAX_PROCS 16
#define RG_MAX_LOCAL 8		/* ranks per process */
#define RG_NB_MBUF 8191
#define RG_RXD 1024
#define RG_TXD 1024
#define RG_QPN_BASE 0x1000
#define RG_IMM_SLOTS 4096	/* completions counted per immediate, keyed imm mod this */
#define RG_MAX_ROWS 64
#define RG_BURST_NS 50000	/* port shaper: credit an idle port may build up, at least */
#define RG_BURST_BYTES 65536	/* ... and at least this many bytes' worth (as ep_qp's pacer) */
#define RG_TXQ 256		/* frames kept when the PMD's TX ring is full */
#define RG_TXQ_STALL_NS 200000000u	/* ... for at most this long */

struct rg_opts {
	uint8_t ip[4];
	uint8_t hosts[RG_MAX_PROCS][4];
	unsigned int n_procs;
	bool ip_set, peer_set, hosts_set;
	uint64_t size;			/* largest size (-e); buffers are this big */
	uint64_t min_size;		/* smallest size (-b) */
	unsigned int factor;		/* -f */
	unsigned int iters;
	unsigned int warmup;
	unsigned int n_qps;
	unsigned int n_ranks;		/* ranks in each process */
	unsigned int root;
	uint32_t mtu;
	enum rg_coll coll;
	enum rg_algo algo;
	const char *json;
	const char *dcqcn;
	bool dcqcn_file;		/* --dcqcn FILE: dcqcn_params holds what it says */
	struct dcqcn_params dcqcn_params;
	double line_mbps;
	double limit_s;
	uint8_t timeout;
	uint64_t window_bytes;
	double rx_loss;			/* test aid: RoCE frames to drop */
	uint64_t seed;
	bool split;			/* --split-data-on-qps 1 */
	bool srd;			/* --transport srd */
	unsigned int srd_paths;
	unsigned int srd_spray;
	unsigned int srd_rtt_us;	/* 0: no RTT congestion signal */
	unsigned int poll_sleep_us;	/* 0: busy polling */
};

/*
 * The --json output, opened before EAL starts so that a path that cannot be written is refused
 * before anything runs. A regular file (or a new one) is written under a temporary name in
 * its directory and renamed over PATH only when complete, so a failed or interrupted run
 * leaves what PATH held; anything else (a device such as /dev/null, a FIFO) is written in
 * place as a stream.
 */
struct rg_out {
	const char *path;
	char tmp[PATH_MAX];	/* the temporary name, "" when writing PATH itself */
	FILE *f;
};

static int rg_out_write(struct rg_out *out, const json_t *doc);

/* One QP of this process: the requester of a connection src -> dst (a rank of ours to a remote
 * rank) or its responder (remote to ours). Channel n_qps is the control connection between
 * the first ranks of two processes (barriers). */
struct rg_qp {
	struct rg_ep ep;
	unsigned int peer_proc;
	bool requester;
	bool ctrl;		/* a barrier QP (channel n_qps) */
};

struct rg_imm {
	uint32_t imm;
	uint32_t count;
};

struct rg_state {
	struct rg_opts o;
	uint16_t port;
	struct rte_mempool *pool;
	uint8_t mac[6];
	uint8_t peer_mac[RG_MAX_PROCS][6];
	bool peer_known[RG_MAX_PROCS];
	unsigned int proc;		/* this process's index in hosts */
	unsigned int R;			/* ranks in all */
	struct rg_sched sched;		/* the size being run */
	struct rg_sched sched_max;	/* the largest size: buffer sizes, connections */
	uint32_t imm;			/* the next immediate (step or barrier) */
	unsigned int n_rows;
	uint64_t row_sizes[RG_MAX_ROWS];
	double row_us[RG_MAX_ROWS];
	struct ep_pfc pfc;
	struct rg_qp *qps;
	unsigned int n_qp;
	int32_t *qp_of;			/* (QPN - base) -> index in qps, or -1 */
	uint32_t qp_of_len;
	unsigned int tx_next;		/* round robin start */
	uint64_t *msg_seq;		/* messages posted per (src, dst) pair (round robin) */
	uint8_t *data[RG_MAX_LOCAL];
	uint8_t *land[RG_MAX_LOCAL];
	uint64_t *bitmap[RG_MAX_LOCAL];
	uint8_t ctrl_src[64], ctrl_land[64];
	uint64_t tsc0;
	uint64_t ns_mult;		/* 2^32 x 1e9 / tsc_hz */
	uint64_t port_next_ns;		/* port shaper at --line-rate-mbps */
	uint64_t port_credit_ns;	/* how far ahead of now port_next_ns may run */
	double port_ns_per_byte;	/* wire time of a byte at --line-rate-mbps */
	struct rte_mbuf *txq[RG_TXQ];	/* built frames the PMD did not take yet, in order */
	unsigned int txq_n;
	uint64_t tx_deferred;		/* frames that waited in txq (PMD busy) */
	uint64_t txq_progress_ns;	/* the PMD last took a frame from txq */
	struct rg_imm seen[RG_IMM_SLOTS];
	uint64_t imm_unexpected;	/* a completion whose immediate collides (a bug) */
	uint64_t arp_replies_sent;
	uint64_t tx_dropped;		/* frames the PMD did not take (go-back-N resends) */
	uint64_t rx_other;
	uint64_t rx_lost;		/* dropped on purpose (--rx-loss) */
	uint64_t local_bytes;		/* moved between ranks of this process */
	uint64_t wire_bytes;		/* posted to the wire (first transmissions) */
	uint64_t rng;
};

static volatile sig_atomic_t rg_stop;

static void
rg_on_signal(int sig)
{
	(void)sig;
	rg_stop = 1;
}

/* TSC cycles since start in ns: one 64x64 -> 128-bit multiply by 2^32 x 1e9 / hz (called
 * several times per poll; two 64-bit divisions here cost 5% of a 4 KB packet's time). */
static uint64_t
rg_now_ns(const struct rg_state *st)
{
	uint64_t d = rte_rdtsc() - st->tsc0;

	return (uint64_t)(((unsigned __int128)d * st->ns_mult) >> 32);
}

static void
rg_usage(FILE *f)
{
	fprintf(f,
		"usage: rocegen [EAL options] -- --ip A.B.C.D (--peer-ip A.B.C.D | --hosts LIST)\n"
		"               [options]\n"
		"  --ip ADDR            this process's first rank address (it answers ARP for its\n"
		"                       ranks' addresses ADDR, ADDR + 1, ...)\n"
		"  --peer-ip ADDR       two processes: the other one's first address (the lower\n"
		"                       address holds ranks 0..N-1)\n"
		"  --hosts A,B,...      P processes, 2..%d: every process's first address in rank\n"
		"                       order (--ip must be one of them); the same list everywhere\n"
		"  --test NAME          p2p | allreduce | allgather | reducescatter | broadcast |\n"
		"                       alltoall | incast (default allreduce)\n"
		"  --algo ring|tree     all-reduce algorithm: ring, or NCCL's double binary tree\n"
		"  --root N             broadcast / incast root rank (default 0)\n"
		"  --size N[K|M|G]      message / buffer size in bytes (default 64M)\n"
		"  -b N, -e N, -f F     size sweep from -b to -e bytes, times F each (like\n"
		"                       nccl-tests; --size N is -b N -e N); sizes are rounded down\n"
		"                       to a multiple of 64 x ranks bytes\n"
		"  --iters N            timed iterations (default 5)\n"
		"  --warmup N           untimed iterations first (default 1)\n"
		"  --qps N              QPs (channels) per pair of ranks, 1..%d (default 1), each\n"
		"                       with its own UDP source port (from its QPNs, as mlx5)\n"
		"  --split-data-on-qps 0|1  NCCL_IB_SPLIT_DATA_ON_QPS: 0 (NCCL's default since\n"
		"                       2.20): whole messages round-robin over a pair's QPs;\n"
		"                       1: each message cut into --qps parts of\n"
		"                       DIVUP(DIVUP(size, qps), 128) x 128 bytes, one per QP\n"
		"                       (default 0)\n"
		"  --transport rc|srd   rc: RC QPs, go-back-N (default); srd: SRD-like transport:\n"
		"                       packets sprayed over --srd-paths UDP source ports, placed\n"
		"                       out of order, SACKed (BTH opcodes 0xC0 data, 0xC1 SACK),\n"
		"                       only what is lost resent; AIMD on ECN echo, CNP and RTT\n"
		"                       (off with --dcqcn off)\n"
		"  --srd-paths K        SRD: entropy values (UDP source ports) per QP, 1..64\n"
		"                       (default 16)\n"
		"  --srd-spray N        SRD: packets on one path before the next (default 1)\n"
		"  --srd-rtt-us N       SRD: an RTT sample above N us is a congestion signal\n"
		"                       (default 0: off)\n"
		"  --poll-sleep-us N    sleep N us when a poll found nothing to receive or send\n"
		"                       (default 0: busy polling); for low rates on a shared\n"
		"                       CPU, where a busy poller loses whole scheduler slices\n"
		"                       and then sends in bursts\n"
		"  --ranks N            ranks in each process, 1..%d (default 1)\n"
		"  --mtu 1024|4096      path MTU (default 1024; 256..4096 accepted)\n"
		"  --dcqcn nvidia|paper|off|FILE  congestion control (default nvidia); FILE:\n"
		"                       NVIDIA's parameter names as rocestat --dcqcn FILE reads\n"
		"                       them (JSON or name value lines), the rest NVIDIA's\n"
		"                       defaults; its line_rate_mbps is --line-rate-mbps\n"
		"  --line-rate-mbps R   the port's line rate: the port is paced at it, and DCQCN\n"
		"                       and PFC quanta use it (default 100000)\n"
		"  --timeout T          retransmission timeout 4.096 us x 2^T (default 14)\n"
		"  --time-limit S       give up after S seconds (default 120)\n"
		"  --window-kb N        outstanding bytes per QP in KB (default 256)\n"
		"  --rx-loss PCT        test aid: drop PCT %% of received RoCE frames (seeded)\n"
		"  --seed N             seed for --rx-loss (default 1)\n"
		"  --json FILE          write the table and per-QP counters as JSON (checked before\n"
		"                       the run starts; replaced only when complete)\n"
		"  --help               this text; after an EAL option (rocegen -l 0 --help): EAL's\n"
		"                       own options, then this\n"
		"EAL options come before --, rocegen's after it. Exit status: 0 when every size ran\n"
		"and verified and every output was written, 1 otherwise.\n"
		"example (netns + veth): rocegen -l 0 --no-huge -m 512 --no-pci \\\n"
		"    --vdev=net_af_packet0,iface=veth0 -- --ip 198.18.0.1 --peer-ip 198.18.0.2\n",
		RG_MAX_PROCS, RG_MAX_QPS, RG_MAX_LOCAL);
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
rg_parse_hosts(const char *arg, struct rg_opts *o)
{
	char buf[RG_MAX_PROCS * 16 + 1], *tok, *save = NULL;
	unsigned int i, j;

	if (strlen(arg) >= sizeof(buf)) {
		fprintf(stderr, "rocegen: --hosts: at most %d addresses\n", RG_MAX_PROCS);
		return -1;
	}
	strcpy(buf, arg);
	o->n_procs = 0;
	for (tok = strtok_r(buf, ",", &save); tok != NULL; tok = strtok_r(NULL, ",", &save)) {
		if (o->n_procs == RG_MAX_PROCS) {
			fprintf(stderr, "rocegen: --hosts: at most %d addresses\n", RG_MAX_PROCS);
			return -1;
		}
		if (inet_pton(AF_INET, tok, o->hosts[o->n_procs]) != 1) {
			fprintf(stderr, "rocegen: --hosts: not an IPv4 address: \"%s\"\n", tok);
			return -1;
		}
		o->n_procs++;
	}
	if (o->n_procs < 2) {
		fprintf(stderr, "rocegen: --hosts: at least two addresses, comma-separated\n");
		return -1;
	}
	for (i = 0; i < o->n_procs; i++)
		for (j = 0; j < i; j++)
			if (memcmp(o->hosts[i], o->hosts[j], 4) == 0) {
				fprintf(stderr, "rocegen: --hosts: %s is listed twice\n", arg);
				return -1;
			}
	o->hosts_set = true;
	return 0;
}

/* rocegen's options (argv[0] is skipped): 0, -1 after a message, 1 after --help was printed. */
static int
rg_parse_args(int argc, char **argv, struct rg_opts *o)
{
	static const struct option longopts[] = {
		{ "ip", required_argument, NULL, 'i' },
		{ "peer-ip", required_argument, NULL, 'p' },
		{ "hosts", required_argument, NULL, 'H' },
		{ "test", required_argument, NULL, 't' },
		{ "algo", required_argument, NULL, 'a' },
		{ "root", required_argument, NULL, 'o' },
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
		{ "split-data-on-qps", required_argument, NULL, 'D' },
		{ "transport", required_argument, NULL, 'X' },
		{ "srd-paths", required_argument, NULL, 'P' },
		{ "srd-spray", required_argument, NULL, 'Y' },
		{ "srd-rtt-us", required_argument, NULL, 'U' },
		{ "poll-sleep-us", required_argument, NULL, 'Z' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	uint8_t peer[4];
	unsigned long v;
	unsigned int i;
	int c;

	memset(o, 0, sizeof(*o));
	o->size = 64ULL << 20;
	o->factor = 2;
	o->iters = 5;
	o->warmup = 1;
	o->n_qps = 1;
	o->n_ranks = 1;
	o->mtu = 1024;
	o->coll = RG_COLL_ALLREDUCE;
	o->algo = RG_ALGO_RING;
	o->dcqcn = "nvidia";
	o->line_mbps = 100000;
	o->limit_s = 120;
	o->timeout = 14;
	o->window_bytes = 256 * 1024;
	o->seed = 1;
	o->srd_paths = 16;
	o->srd_spray = 1;
	while ((c = getopt_long(argc, argv, "b:e:f:", longopts, NULL)) != -1) {
		switch (c) {
		case 'i':
		case 'p':
			if (inet_pton(AF_INET, optarg, c == 'i' ? o->ip : peer) != 1) {
				fprintf(stderr, "rocegen: --%s: not an IPv4 address: \"%s\"\n",
					c == 'i' ? "ip" : "peer-ip", optarg);
				return -1;
			}
			if (c == 'i')
				o->ip_set = true;
			else
				o->peer_set = true;
			break;
		case 'H':
			if (rg_parse_hosts(optarg, o) != 0)
				return -1;
			break;
		case 't':
			if (rg_coll_by_name(optarg) < 0) {
				fprintf(stderr, "rocegen: --test: p2p, allreduce, allgather, "
					"reducescatter, broadcast, alltoall or incast, got \"%s\"\n",
					optarg);
				return -1;
			}
			o->coll = (enum rg_coll)rg_coll_by_name(optarg);
			break;
		case 'a':
			if (strcmp(optarg, "ring") == 0)
				o->algo = RG_ALGO_RING;
			else if (strcmp(optarg, "tree") == 0)
				o->algo = RG_ALGO_TREE;
			else {
				fprintf(stderr, "rocegen: --algo: ring or tree, got \"%s\"\n", optarg);
				return -1;
			}
			break;
		case 'o':
			if (rg_parse_uint("--root", optarg, 0, RG_MAX_RANKS - 1, &v) != 0)
				return -1;
			o->root = (unsigned int)v;
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
			if (rg_parse_uint("--ranks", optarg, 1, RG_MAX_LOCAL, &v) != 0)
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
			o->dcqcn = optarg;
			o->dcqcn_file = strcmp(optarg, "nvidia") != 0 &&
					strcmp(optarg, "paper") != 0 && strcmp(optarg, "off") != 0;
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
		case 'D':
			if (rg_parse_uint("--split-data-on-qps", optarg, 0, 1, &v) != 0)
				return -1;
			o->split = v == 1;
			break;
		case 'X':
			if (strcmp(optarg, "rc") != 0 && strcmp(optarg, "srd") != 0) {
				fprintf(stderr, "rocegen: --transport: rc or srd, got \"%s\"\n",
					optarg);
				return -1;
			}
			o->srd = strcmp(optarg, "srd") == 0;
			break;
		case 'P':
			if (rg_parse_uint("--srd-paths", optarg, 1, EP_SRD_MAX_PATHS, &v) != 0)
				return -1;
			o->srd_paths = (unsigned int)v;
			break;
		case 'Y':
			if (rg_parse_uint("--srd-spray", optarg, 1, 1u << 20, &v) != 0)
				return -1;
			o->srd_spray = (unsigned int)v;
			break;
		case 'U':
			if (rg_parse_uint("--srd-rtt-us", optarg, 0, 10000000, &v) != 0)
				return -1;
			o->srd_rtt_us = (unsigned int)v;
			break;
		case 'Z':
			if (rg_parse_uint("--poll-sleep-us", optarg, 0, 1000, &v) != 0)
				return -1;
			o->poll_sleep_us = (unsigned int)v;
			break;
		case 'h':
			rg_usage(stdout);
			return 1;
		default:
			rg_usage(stderr);
			return -1;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "rocegen: unexpected argument \"%s\"\n", argv[optind]);
		return -1;
	}
	if (!o->ip_set || o->peer_set == o->hosts_set) {
		fprintf(stderr, "rocegen: --ip and one of --peer-ip or --hosts are required\n");
		return -1;
	}
	if (o->peer_set) {	/* two processes, the lower address first */
		bool low = memcmp(o->ip, peer, 4) < 0;

		memcpy(o->hosts[0], low ? o->ip : peer, 4);
		memcpy(o->hosts[1], low ? peer : o->ip, 4);
		o->n_procs = 2;
	}
	for (i = 0; i < o->n_procs; i++) {
		unsigned int j;

		if (o->hosts[i][3] + o->n_ranks > 255) {
			fprintf(stderr, "rocegen: --ranks: the last byte of every process's address "
				"+ --ranks must stay below 255\n");
			return -1;
		}
		for (j = 0; j < i; j++)
			if (memcmp(o->hosts[i], o->hosts[j], 3) == 0 &&
			    abs((int)o->hosts[i][3] - (int)o->hosts[j][3]) < (int)o->n_ranks) {
				fprintf(stderr, "rocegen: with --ranks %u, process %u's addresses "
					"(%u.%u.%u.%u + 0..%u) overlap process %u's: space them at "
					"least %u apart\n", o->n_ranks, i, o->hosts[i][0],
					o->hosts[i][1], o->hosts[i][2], o->hosts[i][3],
					o->n_ranks - 1, j, o->n_ranks);
				return -1;
			}
	}
	if (o->n_procs * o->n_ranks > RG_MAX_RANKS) {
		fprintf(stderr, "rocegen: %u processes x %u ranks: at most %d ranks in all\n",
			o->n_procs, o->n_ranks, RG_MAX_RANKS);
		return -1;
	}
	if (o->root >= o->n_procs * o->n_ranks) {
		fprintf(stderr, "rocegen: --root: must be below the %u ranks\n",
			o->n_procs * o->n_ranks);
		return -1;
	}
	if (o->coll == RG_COLL_P2P && o->n_procs % 2 != 0) {
		fprintf(stderr, "rocegen: --test p2p pairs process p with p + P/2: needs an even "
			"number of processes\n");
		return -1;
	}
	if (o->dcqcn_file) {
		char err[768];

		/* the parser rocestat --dcqcn FILE uses: a file validated there runs here */
		dcqcn_params_nvidia(&o->dcqcn_params, o->line_mbps);
		if (ana_dcqcn_load(&o->dcqcn_params, o->dcqcn, err, sizeof(err)) != 0) {
			fprintf(stderr, "rocegen: --dcqcn: nvidia, paper or off, or a file of DCQCN "
				"parameters in NVIDIA's names: %s\n", err);
			return -1;
		}
		o->dcqcn_params.line_rate_mbps = o->line_mbps;
	}
	if (o->min_size == 0 || o->min_size > o->size)
		o->min_size = o->size;
	if (rg_sched_round(o->min_size, o->n_procs * o->n_ranks) == 0) {
		fprintf(stderr, "rocegen: -b/--size: at least %u bytes (64 per rank), got %" PRIu64
			"\n", 64 * o->n_procs * o->n_ranks, o->min_size);
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

static void
rg_rank_ip(const struct rg_state *st, unsigned int g, uint8_t out[4])
{
	memcpy(out, st->o.hosts[g / st->o.n_ranks], 4);
	out[3] = (uint8_t)(out[3] + g % st->o.n_ranks);
}

static bool
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
static uint32_t
rg_qpn(const struct rg_state *st, unsigned int src, unsigned int dst, unsigned int ch,
       bool responder)
{
	return RG_QPN_BASE +
	       2 * (((uint32_t)src * st->R + dst) * (st->o.n_qps + 1) + ch) + responder;
}

static struct rg_ep *
rg_qp_lookup(struct rg_state *st, uint32_t qpn)
{
	uint32_t k = qpn - RG_QPN_BASE;

	if (qpn < RG_QPN_BASE || k >= st->qp_of_len || st->qp_of[k] < 0)
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

/* Receive a burst: ARP, PFC, and RoCE frames to our QPs; returns the frames taken. */
static unsigned int
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
		struct rg_ep *qp;

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
		rte_pktmbuf_free(m);
	}
	return n;
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
	sent = rte_eth_tx_burst(st->port, 0, st->txq, (uint16_t)st->txq_n);
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

static void
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
	}
	for (q = 0; q < st->n_qp; q++) {
		struct rg_ep *qp = &st->qps[q].ep;

		if (st->qps[q].requester) {
			while (rg_ep_poll_sq(qp, &c))
				;
		} else {
			while (rg_ep_poll_rq(qp, &c))
				if (c.has_imm)
					rg_imm_arrived(st, c.imm);
		}
	}
}

static bool
rg_timed_out(const struct rg_state *st)
{
	return rg_stop || (double)rg_now_ns(st) / 1e9 > st->o.limit_s;
}

/* ARP for every other process until all answered (our QPs are up: answering is safe). */
static int
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

static int
rg_qp_add(struct rg_state *st, unsigned int src, unsigned int dst, unsigned int ch,
	  bool requester)
{
	unsigned int lr = (requester ? src : dst) % st->o.n_ranks;
	unsigned int peer = requester ? dst : src;
	bool ctrl = ch == st->o.n_qps;
	uint32_t qpn = rg_qpn(st, src, dst, ch, !requester);
	struct rg_qp *q = &st->qps[st->n_qp];
	struct ep_qp_cfg c;
	int rc;

	ep_qp_cfg_default(&c);
	c.qpn = qpn;
	c.dest_qpn = rg_qpn(st, src, dst, ch, requester);
	c.mtu = st->o.mtu;
	c.timeout = st->o.timeout;
	c.window_bytes = st->o.window_bytes;
	memcpy(c.src_mac, st->mac, 6);
	rg_rank_ip(st, requester ? src : dst, c.src_ip);
	rg_rank_ip(st, peer, c.dst_ip);
	/* flow entropy per QP pair, as Linux/mlx5 derive it with a zero GRH flow label */
	c.udp_sport = roce_udp_sport_from_qpns(c.qpn, c.dest_qpn);
	if (strcmp(st->o.dcqcn, "off") == 0) {
		dcqcn_params_nvidia(&c.dcqcn, st->o.line_mbps);
		c.dcqcn_enabled = false;
	} else if (st->o.dcqcn_file) {
		c.dcqcn = st->o.dcqcn_params;
	} else {
		dcqcn_params_by_name(&c.dcqcn, st->o.dcqcn, st->o.line_mbps);
	}
	if (!requester) {
		c.mr = ctrl ? st->ctrl_land : st->land[lr];
		c.mr_len = ctrl ? sizeof(st->ctrl_land) : st->sched_max.land_len[dst];
		c.placed_bitmap = ctrl ? NULL : st->bitmap[lr];
	}
	if (st->o.srd) {
		struct ep_srd_cfg sc;

		ep_srd_cfg_default(&sc);
		sc.qp = c;
		sc.n_paths = st->o.srd_paths;
		sc.spray = st->o.srd_spray;
		sc.cc_enabled = c.dcqcn_enabled;
		sc.ai_mbps = st->o.line_mbps / 100.0;
		sc.min_rate_mbps = st->o.line_mbps / 1000.0;
		sc.rtt_thresh_ns = (uint64_t)st->o.srd_rtt_us * 1000;
		/* a software peer answers between polls and may be descheduled on a loaded
		 * machine: timers of a few hundred us would fire for nothing */
		sc.rto_min_ns = 1000000;
		sc.rto_init_ns = 2000000;
		rc = rg_ep_init_srd(&q->ep, &sc, &st->pfc, rg_now_ns(st));
	} else {
		rc = rg_ep_init_rc(&q->ep, &c, &st->pfc, rg_now_ns(st));
	}
	if (rc != 0) {
		fprintf(stderr, "rocegen: QP 0x%x: %s\n", qpn,
			rc == -ENOMEM ? "out of memory" : "bad parameters");
		return -1;
	}
	q->peer_proc = peer / st->o.n_ranks;
	q->requester = requester;
	q->ctrl = ctrl;
	st->qp_of[qpn - RG_QPN_BASE] = (int32_t)st->n_qp++;
	return 0;
}

/* QPs for every pair of ranks the collective connects across processes, plus control QPs
 * between our first rank and every other process's. */
static int
rg_qps_init(struct rg_state *st)
{
	unsigned int R = st->R, nq = st->o.n_qps, src, dst, ch, p, me = st->proc * st->o.n_ranks;
	uint8_t *pairs = calloc((size_t)R * R, 1);
	uint32_t k, max_qps = 2 * (st->o.n_procs - 1);
	int rc = 0;

	if (pairs == NULL)
		return -1;
	for (k = 0; k < st->sched_max.n; k++) {
		const struct rg_xfer *x = &st->sched_max.x[k];

		if (!pairs[x->src * R + x->dst] &&
		    rg_is_local(st, x->src) != rg_is_local(st, x->dst))
			max_qps += nq;
		pairs[x->src * R + x->dst] = 1;
	}
	st->qp_of_len = 2 * R * R * (nq + 1);
	st->qp_of = malloc(st->qp_of_len * sizeof(*st->qp_of));
	st->qps = calloc(max_qps, sizeof(*st->qps));
	st->msg_seq = calloc((size_t)R * R, sizeof(*st->msg_seq));
	if (st->qp_of == NULL || st->qps == NULL || st->msg_seq == NULL) {
		free(pairs);
		fprintf(stderr, "rocegen: out of memory for %u QPs\n", max_qps);
		return -1;
	}
	memset(st->qp_of, 0xff, st->qp_of_len * sizeof(*st->qp_of));
	ep_pfc_init(&st->pfc, st->o.line_mbps);
	for (src = 0; src < R && rc == 0; src++)
		for (dst = 0; dst < R && rc == 0; dst++) {
			bool ls = rg_is_local(st, src), ld = rg_is_local(st, dst);

			if (!pairs[src * R + dst] || ls == ld)
				continue;
			for (ch = 0; ch < nq && rc == 0; ch++)
				rc = rg_qp_add(st, src, dst, ch, ls);
		}
	for (p = 0; p < st->o.n_procs && rc == 0; p++) {
		if (p == st->proc)
			continue;
		rc = rg_qp_add(st, me, p * st->o.n_ranks, nq, true);
		if (rc == 0)
			rc = rg_qp_add(st, p * st->o.n_ranks, me, nq, false);
	}
	free(pairs);
	return rc;
}

static void
rg_dump_qps(const struct rg_state *st)
{
	unsigned int q;

	fprintf(stderr, "rocegen: %u frames waiting for the port, %u mbufs free in the pool\n",
		st->txq_n, rte_mempool_avail_count(st->pool));

	for (q = 0; q < st->n_qp; q++) {
		const struct rg_ep *qp = &st->qps[q].ep;

		/* tx_packets (counter 0 of RC and SRD): nothing ever sent, not even an ACK */
		if (rg_ep_idle(qp) && rg_ep_ctr(qp, 0) == 0)
			continue;
		rg_ep_dump(qp, stderr);
	}
}

static int
rg_post(struct rg_state *st, struct rg_ep *qp, const uint8_t *buf, uint64_t len, uint64_t va,
	uint32_t imm)
{
	struct ep_wr wr = { .wr_id = imm, .op = EP_WR_WRITE_IMM, .local = buf,
			    .len = (uint32_t)len, .remote_va = va, .imm = imm };
	int rc;

	while ((rc = rg_ep_post(qp, &wr)) == -ENOSPC)
		rg_poll(st);
	if (rc != 0) {
		fprintf(stderr, "rocegen: QP 0x%x: post failed (%s)\n", rg_ep_qpn(qp),
			strerror(-rc));
		return -1;
	}
	return 0;
}

/* Wait until our writes are acknowledged and @p expected completions with @p imm arrived. */
static int
rg_wait(struct rg_state *st, uint32_t imm, uint32_t expected, const char *what)
{
	struct rg_imm *e = &st->seen[imm % RG_IMM_SLOTS];

	for (;;) {
		bool idle = true;
		uint32_t got;
		unsigned int q;

		for (q = 0; q < st->n_qp; q++) {
			const struct rg_ep *qp = &st->qps[q].ep;

			if (rg_ep_failed(qp)) {
				fprintf(stderr, "rocegen: QP 0x%x in the error state (retries "
					"exhausted)\n", rg_ep_qpn(qp));
				rg_dump_qps(st);
				return -1;
			}
			idle = idle && (!st->qps[q].requester || rg_ep_idle(qp));
		}
		got = e->imm == imm ? e->count : 0;
		if (idle && got >= expected) {
			if (got > expected)
				st->imm_unexpected += got - expected;
			e->count = 0;
			return 0;
		}
		if (st->imm_unexpected != 0) {
			fprintf(stderr, "rocegen: %" PRIu64 " completions with an unexpected "
				"immediate (processes running different schedules?)\n",
				st->imm_unexpected);
			return -1;
		}
		if (rg_timed_out(st)) {
			fprintf(stderr, "rocegen: gave up waiting for %s (immediate %u: %u of %u "
				"arrived)\n", what, imm, got, expected);
			rg_dump_qps(st);
			return -1;
		}
		rg_poll(st);
	}
}

/* A barrier over all processes: a 4-byte write with immediate to every other process. */
static int
rg_barrier(struct rg_state *st, const char *what)
{
	uint32_t imm = st->imm++;
	unsigned int q;

	for (q = 0; q < st->n_qp; q++) {
		struct rg_ep *qp = &st->qps[q].ep;

		if (st->qps[q].requester && st->qps[q].ctrl &&
		    rg_post(st, qp, st->ctrl_src, 4, 4 * st->proc, imm) != 0)
			return -1;
	}
	return rg_wait(st, imm, st->o.n_procs - 1, what);
}

/* dst += src over n floats, answering the wire now and then (the peers' timers run). */
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

/* One step: post our transfers (copies for local destinations), wait, apply what landed. */
static int
rg_step(struct rg_state *st, unsigned int s)
{
	const struct rg_sched *sc = &st->sched;
	unsigned int nl = st->o.n_ranks, nq = st->o.n_qps, q;
	uint32_t imm = st->imm++, k, expected = 0;
	char what[64];

	for (k = sc->step_first[s]; k < sc->step_first[s + 1]; k++) {
		const struct rg_xfer *x = &sc->x[k];
		bool ls = rg_is_local(st, x->src), ld = rg_is_local(st, x->dst);
		uint64_t off, plen, seq;

		if (ls && ld) {
			memcpy(st->land[x->dst % nl] + x->land_off, st->data[x->src % nl] + x->src_off,
			       x->len);
			st->local_bytes += x->len;
			continue;
		}
		/* the receiver only counts the parts: one (round robin) or the non-empty ones */
		seq = ls ? st->msg_seq[x->src * st->R + x->dst]++ : 0;
		for (q = 0; q < nq; q++) {
			rg_qp_share(x->len, nq, st->o.split, seq, q, &off, &plen);
			if (plen == 0)
				continue;
			if (ld) {
				expected++;
				continue;
			}
			if (!ls)
				continue;
			if (rg_post(st, rg_qp_lookup(st, rg_qpn(st, x->src, x->dst, q, false)),
				    st->data[x->src % nl] + x->src_off + off, plen,
				    x->land_off + off, imm) != 0)
				return -1;
			st->wire_bytes += plen;
		}
	}
	snprintf(what, sizeof(what), "step %u of %s", s, rg_coll_name(sc->coll));
	if (rg_wait(st, imm, expected, what) != 0)
		return -1;
	for (k = sc->step_first[s]; k < sc->step_first[s + 1]; k++) {
		const struct rg_xfer *x = &sc->x[k];
		uint8_t *d, *l;

		if (!rg_is_local(st, x->dst) || x->kind == RG_LAND)
			continue;
		d = st->data[x->dst % nl] + x->dst_off;
		l = st->land[x->dst % nl] + x->land_off;
		if (x->kind == RG_COPY)
			memcpy(d, l, x->len);
		else
			rg_add(st, (float *)d, (const float *)l, x->len / 4);
	}
	return 0;
}

static void
rg_data_init(struct rg_state *st)
{
	const struct rg_sched *sc = &st->sched;
	uint64_t i, n = sc->size / 4;
	unsigned int k;

	for (k = 0; k < st->o.n_ranks; k++) {
		float *d = (float *)st->data[k];
		unsigned int g = st->proc * st->o.n_ranks + k;

		for (i = 0; i < n; i++)
			d[i] = rg_init_value(sc->coll, st->R, sc->root, sc->size, g, i);
	}
}

/* Bytes the wire must have placed into our ranks in one iteration. */
static uint64_t
rg_wire_in(const struct rg_state *st)
{
	const struct rg_sched *sc = &st->sched;
	uint64_t sum = 0;
	uint32_t k;

	for (k = 0; k < sc->n; k++)
		if (rg_is_local(st, sc->x[k].dst) && !rg_is_local(st, sc->x[k].src))
			sum += sc->x[k].len;
	return sum;
}

/* Clear the landing bitmaps at the end of an iteration: no peer writes to us again before our
 * barrier message, so the next iteration's first write finds them clear. */
static void
rg_bitmap_clear(struct rg_state *st)
{
	unsigned int k;

	for (k = 0; k < st->o.n_ranks; k++)
		memset(st->bitmap[k], 0, (st->sched_max.land_len[st->proc * st->o.n_ranks + k] /
					  64 + 1) * sizeof(uint64_t));
}

/* After the first iteration of a size: every rank's result, and every byte from the wire
 * placed (the landing bitmaps: wire writes never overlap within an iteration). */
static int
rg_verify(struct rg_state *st)
{
	const struct rg_sched *sc = &st->sched;
	uint64_t placed = 0, want = rg_wire_in(st), bad = 0, first, t0 = rg_now_ns(st);
	unsigned int k;

	for (k = 0; k < st->o.n_ranks; k++) {
		unsigned int g = st->proc * st->o.n_ranks + k;
		uint64_t b = rg_sched_verify(sc, g, (const float *)st->data[k],
					     (const float *)st->land[k], &first);

		rg_poll(st);
		if (b != 0)
			fprintf(stderr, "rocegen: rank %u: %" PRIu64 " floats wrong (first at "
				"float %" PRIu64 ")\n", g, b, first);
		bad += b;
		placed += ep_bitmap_count(st->bitmap[k], 0, sc->land_len[g]);
	}
	/* the time it took is not in the table but is on the wire (before the end barrier) */
	printf("rocegen: verify %" PRIu64 " bytes: %s, %" PRIu64 " of %" PRIu64
	       " bytes placed from the wire (%.1f us, untimed)\n", sc->size,
	       bad ? "DATA MISMATCH" : "data ok", placed, want,
	       (double)(rg_now_ns(st) - t0) / 1e3);
	return bad != 0 || placed != want ? -1 : 0;
}

/* The table and counters on stdout, and as JSON into @p out (NULL: none); -1 if that failed. */
static int
rg_report(struct rg_state *st, struct rg_out *out)
{
	const enum rg_coll coll = st->o.coll;
	double factor = rg_busbw_factor(coll, st->R);
	unsigned int q, c, r, shown = 0;
	uint64_t tot[RG_EP_MAX_CTRS] = { 0 };
	const struct rg_ep *first = st->n_qp > 0 ? &st->qps[0].ep : NULL;
	json_t *root = json_object(), *rows = json_array(), *qps = json_array(), *row;
	int rc = 0;

	printf("#\n# %s%s over %u ranks (%u processes x %u), %u QP(s) per pair, MTU %u\n",
	       rg_coll_name(coll), coll == RG_COLL_ALLREDUCE ?
	       (st->o.algo == RG_ALGO_TREE ? " (tree)" : " (ring)") : "", st->R,
	       st->o.n_procs, st->o.n_ranks, st->o.n_qps, st->o.mtu);
	printf("# transport %s", st->o.srd ? "srd" : "rc");
	if (st->o.srd)
		printf(" (%u paths, %u packet(s) per path)", st->o.srd_paths, st->o.srd_spray);
	printf(", split-data-on-qps %d\n", st->o.split);
	printf("# %12s %12s %6s %6s %10s %11s %11s\n", "size(B)", "count", "type", "redop",
	       "time(us)", "algbw(GB/s)", "busbw(GB/s)");
	for (r = 0; r < st->n_rows; r++) {
		uint64_t size = st->row_sizes[r];
		double us = st->row_us[r], algbw = (double)size / (us * 1e3); /* GB/s */

		printf("  %12" PRIu64 " %12" PRIu64 " %6s %6s %10.1f %11.3f %11.3f\n", size,
		       size / 4, "float", rg_coll_reduces(coll) ? "sum" : "none", us, algbw,
		       algbw * factor);
		row = json_pack("{s:I, s:f, s:f, s:f}", "size", (json_int_t)size, "time_us", us,
				"algbw_gbps", algbw, "busbw_gbps", algbw * factor);
		json_array_append_new(rows, row);
	}
	printf("# per-QP counters (QPs that carried traffic)\n");
	for (q = 0; q < st->n_qp; q++) {
		const struct rg_ep *qp = &st->qps[q].ep;
		json_t *o = rg_ep_json(qp);

		for (c = 0; c < rg_ep_n_ctrs(qp); c++)
			tot[c] += rg_ep_ctr(qp, c);
		if (o != NULL) {
			json_object_set_new(o, "requester", json_boolean(st->qps[q].requester));
			json_array_append_new(qps, o);
		}
		if (!rg_ep_carried(qp))
			continue;
		if (shown++ >= 32)
			continue;
		rg_ep_print(qp, stdout, "# ");
	}
	if (shown > 32)
		printf("#  (%u more in the JSON)\n", shown - 32);
	printf("#  all %u QPs:", st->n_qp);
	for (c = 0; first != NULL && c < rg_ep_n_ctrs(first); c++)
		if (tot[c] != 0)
			printf(" %s=%" PRIu64, rg_ep_ctr_name(first, c), tot[c]);
	printf("\n# in-process rank-to-rank bytes (not on the wire): %" PRIu64 "\n", st->local_bytes);
	printf("# port: tx_dropped_by_pmd=%" PRIu64 " tx_deferred=%" PRIu64 " rx_other=%" PRIu64
	       " pfc_rcvd=%" PRIu64
	       " arp_replies=%" PRIu64 " rx_lost_on_purpose=%" PRIu64 "\n",
	       st->tx_dropped, st->tx_deferred, st->rx_other, st->pfc.pfc_rcvd,
	       st->arp_replies_sent, st->rx_lost);
	json_object_set_new(root, "test", json_string(rg_coll_name(coll)));
	json_object_set_new(root, "algo", json_string(st->o.algo == RG_ALGO_TREE &&
						      coll == RG_COLL_ALLREDUCE ? "tree" : "ring"));
	json_object_set_new(root, "ranks", json_integer(st->R));
	json_object_set_new(root, "transport", json_string(st->o.srd ? "srd" : "rc"));
	json_object_set_new(root, "split_data_on_qps", json_integer(st->o.split));
	json_object_set_new(root, "qps_per_pair", json_integer(st->o.n_qps));
	if (st->o.srd) {
		json_object_set_new(root, "srd_paths", json_integer(st->o.srd_paths));
		json_object_set_new(root, "srd_spray", json_integer(st->o.srd_spray));
	}
	json_object_set_new(root, "processes", json_integer(st->o.n_procs));
	json_object_set_new(root, "process", json_integer(st->proc));
	json_object_set_new(root, "first_rank", json_integer(st->proc * st->o.n_ranks));
	json_object_set_new(root, "busbw_factor", json_real(factor));
	json_object_set_new(root, "local_bytes", json_integer((json_int_t)st->local_bytes));
	json_object_set_new(root, "wire_bytes_posted", json_integer((json_int_t)st->wire_bytes));
	json_object_set_new(root, "results", rows);
	json_object_set_new(root, "qps", qps);
	json_object_set_new(root, "tx_dropped_by_pmd", json_integer((json_int_t)st->tx_dropped));
	json_object_set_new(root, "tx_deferred", json_integer((json_int_t)st->tx_deferred));
	json_object_set_new(root, "rx_lost_on_purpose", json_integer((json_int_t)st->rx_lost));
	json_object_set_new(root, "pfc_received", json_integer((json_int_t)st->pfc.pfc_rcvd));
	json_object_set_new(root, "pause_received", json_integer((json_int_t)st->pfc.pause_rcvd));
	if (out != NULL && rg_out_write(out, root) != 0)
		rc = -1;
	json_decref(root);
	return rc;
}

/* Buffers for the largest size: data, landing area and its bitmap per local rank. */
static int
rg_alloc(struct rg_state *st)
{
	unsigned int k;

	for (k = 0; k < st->o.n_ranks; k++) {
		unsigned int g = st->proc * st->o.n_ranks + k;
		uint64_t land = st->sched_max.land_len[g];

		st->data[k] = calloc(1, st->sched_max.size);
		st->land[k] = calloc(1, land + 64);
		st->bitmap[k] = calloc(land / 64 + 1, sizeof(uint64_t));
		if (st->data[k] == NULL || st->land[k] == NULL || st->bitmap[k] == NULL) {
			fprintf(stderr, "rocegen: out of memory for rank %u's buffers (%" PRIu64
				" + %" PRIu64 " bytes)\n", g, st->sched_max.size, land);
			return -1;
		}
	}
	return 0;
}

static int
rg_run(struct rg_state *st)
{
	unsigned int total = st->o.warmup + st->o.iters, it, s;
	uint64_t size, t_iter, timed;

	if (rg_barrier(st, "the start-up handshake (every process up)") != 0)
		return -1;
	printf("rocegen: all %u processes up\n", st->o.n_procs);
	fflush(stdout);
	for (size = st->o.min_size; size <= st->o.size && st->n_rows < RG_MAX_ROWS;
	     size *= st->o.factor) {
		rg_sched_free(&st->sched);
		if (rg_sched_build(&st->sched, st->o.coll, st->o.algo, st->R, st->o.root,
				   size) != 0) {
			fprintf(stderr, "rocegen: cannot build the schedule for %" PRIu64 " bytes\n",
				size);
			return -1;
		}
		rg_data_init(st);
		timed = 0;
		for (it = 0; it < total; it++) {
			t_iter = rg_now_ns(st);
			for (s = 0; s < st->sched.n_steps; s++)
				if (rg_step(st, s) != 0)
					return -1;
			if (it >= st->o.warmup)
				timed += rg_now_ns(st) - t_iter;
			if (it == 0 && rg_verify(st) != 0)
				return -1;
			rg_bitmap_clear(st);
			t_iter = rg_now_ns(st);
			if (rg_barrier(st, "the end-of-iteration barrier") != 0)
				return -1;
			if (it >= st->o.warmup)
				timed += rg_now_ns(st) - t_iter;
		}
		st->row_sizes[st->n_rows] = st->sched.size;
		st->row_us[st->n_rows++] = (double)timed / 1e3 / st->o.iters;
	}
	return 0;
}


/* Open @p path for the --json output (struct rg_out); prints one line and fails if it cannot. */
static int
rg_out_open(struct rg_out *out, const char *path)
{
	char dir[PATH_MAX], base[PATH_MAX];
	struct stat sb;
	int fd;

	memset(out, 0, sizeof(*out));
	out->path = path;
	if (path[0] == '\0') {
		fprintf(stderr, "rocegen: --json: empty file name\n");
		return -1;
	}
	if (strlen(path) >= sizeof(dir) - 32) {
		fprintf(stderr, "rocegen: --json %s: name too long\n", path);
		return -1;
	}
	if (stat(path, &sb) == 0 && !S_ISREG(sb.st_mode)) {
		if (S_ISDIR(sb.st_mode)) {
			fprintf(stderr, "rocegen: --json %s: is a directory\n", path);
			return -1;
		}
		/* a device or FIFO: a stream, written in place */
		out->f = fopen(path, "w");
		if (out->f == NULL) {
			fprintf(stderr, "rocegen: --json %s: %s\n", path, strerror(errno));
			return -1;
		}
		return 0;
	}
	snprintf(dir, sizeof(dir), "%s", path);
	snprintf(base, sizeof(base), "%s", path);
	snprintf(out->tmp, sizeof(out->tmp), "%s/.%s.XXXXXX", dirname(dir), basename(base));
	fd = mkstemp(out->tmp);
	if (fd < 0) {
		snprintf(dir, sizeof(dir), "%s", path);
		fprintf(stderr, "rocegen: --json %s: cannot create a file in %s: %s\n", path,
			dirname(dir), strerror(errno));
		out->tmp[0] = '\0';
		return -1;
	}
	/* mkstemp makes it 0600; the file gets what a plain create would give it */
	{
		mode_t um = umask(0);

		umask(um);
		if (fchmod(fd, 0666 & ~um) != 0) {
			fprintf(stderr, "rocegen: --json %s: %s: %s\n", path, out->tmp,
				strerror(errno));
			close(fd);
			unlink(out->tmp);
			out->tmp[0] = '\0';
			return -1;
		}
	}
	out->f = fdopen(fd, "w");
	if (out->f == NULL) {
		fprintf(stderr, "rocegen: --json %s: %s\n", path, strerror(errno));
		close(fd);
		unlink(out->tmp);
		out->tmp[0] = '\0';
		return -1;
	}
	return 0;
}

/* Drop the --json output without touching PATH (a run that did not get to its report). */
static void
rg_out_abandon(struct rg_out *out)
{
	if (out->f != NULL)
		fclose(out->f);
	out->f = NULL;
	if (out->tmp[0] != '\0')
		unlink(out->tmp);
	out->tmp[0] = '\0';
}

/* Write @p doc, close, and put the file in place; one line naming the file and errno if not. */
static int
rg_out_write(struct rg_out *out, const json_t *doc)
{
	int rc = 0, e = 0;

	if (json_dumpf(doc, out->f, JSON_INDENT(2)) != 0 || fputc('\n', out->f) == EOF ||
	    fflush(out->f) != 0 || ferror(out->f)) {
		e = errno;
		rc = -1;
	}
	if (fclose(out->f) != 0 && rc == 0) {
		e = errno;
		rc = -1;
	}
	out->f = NULL;
	if (rc == 0 && out->tmp[0] != '\0' && rename(out->tmp, out->path) != 0) {
		e = errno;
		rc = -1;
	}
	if (rc != 0) {
		fprintf(stderr, "rocegen: --json %s: write failed: %s\n", out->path,
			e != 0 ? strerror(e) : "I/O error");
		if (out->tmp[0] != '\0')
			unlink(out->tmp);
	}
	out->tmp[0] = '\0';
	return rc;
}

/* After EAL's own usage (rocegen -l 0 --help): ours. */
static void
rg_usage_hook(const char *prgname)
{
	(void)prgname;
	printf("\n");
	rg_usage(stdout);
}

/* Is @p a a request for help? */
static bool
rg_is_help(const char *a)
{
	return strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0;
}

int
main(int argc, char **argv)
{
	char runtime_dir[PATH_MAX] = "";
	struct rg_out out = { 0 };
	struct rg_state *st;
	int eal_argc = argc, dd = -1, i, rc, ret = 1;
	bool eal_up = false, parsed = false;
	unsigned int p, k;
	uint64_t t0;

	st = calloc(1, sizeof(*st));
	if (st == NULL) {
		fprintf(stderr, "rocegen: out of memory\n");
		return 1;
	}
	for (i = 1; i < argc && dd < 0; i++)
		if (strcmp(argv[i], "--") == 0)
			dd = i;
	/* "rocegen --help", "rocegen ... -- --help": ours, without starting EAL; "--help" among
	 * EAL's options after others (rocegen -l 0 --help) is EAL's, followed by ours (the hook) */
	if ((argc > 1 && rg_is_help(argv[1])) ||
	    (dd > 0 && dd + 1 < argc && rg_is_help(argv[dd + 1]))) {
		rg_usage(stdout);
		free(st);
		return fflush(stdout) == 0 && !ferror(stdout) ? 0 : 1;
	}
	rte_set_application_usage_hook(rg_usage_hook);
	if (dd > 0) {
		/* our options first: a bad command line is refused before EAL starts */
		char *save = argv[dd];

		argv[dd] = argv[0];
		optind = 0;
		rc = rg_parse_args(argc - dd, argv + dd, &st->o);
		argv[dd] = save;
		if (rc != 0) {
			free(st);
			return rc > 0 ? 0 : 1;
		}
		parsed = true;
		eal_argc = dd + 1;	/* EAL sees "--" and stops there */
	}
	if (parsed && st->o.json != NULL && rg_out_open(&out, st->o.json) != 0) {
		free(st);
		return 1;
	}
	optind = 0;
	rc = rte_eal_init(eal_argc, argv);
	/* known even when EAL fails part way (it may have created the directory) */
	snprintf(runtime_dir, sizeof(runtime_dir), "%s", rte_eal_get_runtime_dir());
	if (rc < 0) {
		fprintf(stderr, "rocegen: EAL initialisation failed: %s (rocegen --help lists "
			"rocegen's options)\n", rte_errno != 0 ? rte_strerror(rte_errno) :
			"see EAL's message above");
		goto out;
	}
	eal_up = true;
	if (!parsed) {
		/* no "--": EAL took what it knows, the rest is ours */
		argv[rc] = argv[0];
		optind = 0;
		i = rg_parse_args(argc - rc, argv + rc, &st->o);
		if (i != 0) {
			ret = i > 0 ? 0 : 1;
			goto out;
		}
		if (st->o.json != NULL && rg_out_open(&out, st->o.json) != 0)
			goto out;
	}
	/* line-buffered: a log redirected to a file keeps every line written before a crash */
	setvbuf(stdout, NULL, _IOLBF, 0);
	signal(SIGINT, rg_on_signal);
	signal(SIGTERM, rg_on_signal);
	st->ns_mult = (uint64_t)(((unsigned __int128)1000000000ULL << 32) / rte_get_tsc_hz());
	st->tsc0 = rte_rdtsc();
	st->rng = st->o.seed * 0x9E3779B97F4A7C15ULL + 1;
	st->proc = RG_MAX_PROCS;
	for (p = 0; p < st->o.n_procs; p++)
		if (memcmp(st->o.ip, st->o.hosts[p], 4) == 0)
			st->proc = p;
	if (st->proc == RG_MAX_PROCS) {
		fprintf(stderr, "rocegen: --ip is not in --hosts\n");
		goto out;
	}
	st->R = st->o.n_procs * st->o.n_ranks;
	/* a polling loop comes back every few tens of us: the port may send a burst that long */
	st->port_ns_per_byte = 8000.0 / st->o.line_mbps;
	st->port_credit_ns = RTE_MAX((uint64_t)RG_BURST_NS,
				     (uint64_t)(RG_BURST_BYTES * st->port_ns_per_byte));
	/* --poll-sleep-us: the default 50 us timer slack would stretch every short sleep */
	if (st->o.poll_sleep_us > 0)
		(void)prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0);
	memset(st->ctrl_src, 0xC7, sizeof(st->ctrl_src));
	if (rg_sched_build(&st->sched_max, st->o.coll, st->o.algo, st->R, st->o.root,
			   st->o.size) != 0) {
		fprintf(stderr, "rocegen: cannot build the %s schedule over %u ranks\n",
			rg_coll_name(st->o.coll), st->R);
		goto out;
	}
	if (rg_alloc(st) != 0 || rg_port_setup(st) != 0 || rg_qps_init(st) != 0 ||
	    rg_resolve_peers(st) != 0)
		goto out_port;
	printf("rocegen: process %u of %u, ranks %u..%u of %u, %s%s, up to %" PRIu64 " bytes, "
	       "%u QP(s) per pair (%u QPs here, %s%s), MTU %u, DCQCN %s; running\n", st->proc,
	       st->o.n_procs, st->proc * st->o.n_ranks, st->proc * st->o.n_ranks + st->o.n_ranks - 1,
	       st->R, rg_coll_name(st->o.coll),
	       st->o.coll == RG_COLL_ALLREDUCE && st->o.algo == RG_ALGO_TREE ? " (tree)" : "",
	       st->sched_max.size, st->o.n_qps, st->n_qp, st->o.srd ? "SRD" : "RC",
	       st->o.split ? ", messages split over them" : "", st->o.mtu, st->o.dcqcn);
	fflush(stdout);
	ret = rg_run(st) == 0 ? 0 : 1;
	if (rg_report(st, out.f != NULL ? &out : NULL) != 0)
		ret = 1;
	if (ret != 0)
		fprintf(stderr, "rocegen: FAILED\n");
	/* keep answering for a moment so the peers' last ACKs and barrier writes get out */
	t0 = rg_now_ns(st);
	while (rg_now_ns(st) - t0 < 300000000ULL && !rg_stop)
		rg_poll(st);
out_port:
	if (st->pool != NULL) {
		rte_pktmbuf_free_bulk(st->txq, st->txq_n);
		st->txq_n = 0;
		rte_eth_dev_stop(st->port);
	}
out:
	rg_out_abandon(&out);
	rg_sched_free(&st->sched);
	rg_sched_free(&st->sched_max);
	for (k = 0; k < RG_MAX_LOCAL; k++) {
		free(st->data[k]);
		free(st->land[k]);
		free(st->bitmap[k]);
	}
	for (k = 0; st->qps != NULL && k < st->n_qp; k++)
		rg_ep_free(&st->qps[k].ep);
	free(st->qps);
	free(st->qp_of);
	free(st->msg_seq);
	free(st);
	if (eal_up)
		rte_eal_cleanup();
	emu_runtime_dir_remove(runtime_dir);
	/* the report goes to stdout: a lost table is a failed run too */
	if (fflush(stdout) != 0 || ferror(stdout)) {
		fprintf(stderr, "rocegen: stdout: write failed: %s\n", strerror(errno));
		ret = 1;
	}
	return ret;
}
