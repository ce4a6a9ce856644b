/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rocegen's command line: the usage text and the options, checked before EAL starts (a bad
 * command line is refused with a message naming the option).
 */
#include <getopt.h>
#include <limits.h>
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/analysis/ana.h"
#include "rg_main.h"


void
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
		"  --algo ring|tree|hier  all-reduce algorithm: ring (default), NCCL's double\n"
		"                       binary tree, or hierarchical: ring reduce-scatter inside\n"
		"                       each process, ring all-reduce per rail (rank k of every\n"
		"                       process) across processes, ring all-gather inside: only\n"
		"                       2S(P-1)/P bytes per process of P on the wire; auto:\n"
		"                       ring or tree and the protocol (--proto, unless given)\n"
		"                       as NCCL's tuning picks them for the largest size, from\n"
		"                       the node model (docs/node.md)\n"
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
		"  --proto simple|ll128|ll|none  NCCL's net/IB wire pattern: messages of at most\n"
		"                       the protocol's size (Simple: ring 1 MiB, tree and\n"
		"                       broadcast 512 KiB, p2p/all-to-all 128 KiB; LL 32 KiB;\n"
		"                       LL128 576000 B), each after the receiver's 64-byte CTS\n"
		"                       RDMA WRITE, sent as one RDMA WRITE with immediate = its\n"
		"                       size (default none: a transfer is one WRITE with\n"
		"                       immediate, no CTS)\n"
		"  --adaptive-routing 0|1  NCCL_IB_ADAPTIVE_ROUTING (NCCL: 1 on InfiniBand, 0 on\n"
		"                       RoCE): a message over --ar-threshold goes as an RDMA\n"
		"                       WRITE of the data, then a 0-byte RDMA WRITE with\n"
		"                       immediate = its size (default 0; with --proto)\n"
		"  --ar-threshold N     NCCL_IB_AR_THRESHOLD in bytes (default 8192)\n"
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
		"  --pxn 0|1            one port per rail (every port EAL has, rank i on port\n"
		"                       i mod ports): 1 sends a transfer across rails through\n"
		"                       the GPU of the sender's node on the receiver's rail, as\n"
		"                       NCCL's PXN (NVLink first, then that GPU's NIC; default 0)\n"
		"  --poll-yield         yield the CPU after a poll that found nothing (lcores\n"
		"                       sharing CPUs with other pollers; default: spin)\n"
		"  --workers N          shards, 1..%d (default 1): each on an lcore of its own\n"
		"                       (EAL -l gives N), with its own RX and TX queue and QPs,\n"
		"                       runs the collective on 1/N of each size; every process\n"
		"                       of a run must give the same N (docs/rocegen.md)\n"
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
		"  --node FILE          the GPU server around each process (docs/node.md): GPUs,\n"
		"                       NICs and their PCIe slots, GPUDirect, the intra-node\n"
		"                       fabric; the port is paced at the model's host cap and\n"
		"                       the intra-node phase takes the model's time. Flags for\n"
		"                       its common keys (over the file's; any of them turns the\n"
		"                       model on): --pcie GENxLANES (e.g. 4x16), --gdr on|off,\n"
		"                       --gpus N (= --ranks), --nics N, --fabric nvlink3|\n"
		"                       nvlink4|nvlink5|xgmi|pcie|pcie-acs, --gpu-gen volta|\n"
		"                       ampere|hopper|blackwell|cdna3, --cpu intel|amd|arm|other,\n"
		"                       --host-mem-GBps X. `rocegen node [those options]`\n"
		"                       prints the model's figures as JSON (no EAL, no port)\n"
		"  --json FILE          write the table and per-QP counters as JSON (checked before\n"
		"                       the run starts; replaced only when complete)\n"
		"  --help               this text; after an EAL option (rocegen -l 0 --help): EAL's\n"
		"                       own options, then this\n"
		"EAL options come before --, rocegen's after it. Exit status: 0 when every size ran\n"
		"and verified and every output was written, 1 otherwise.\n"
		"example (netns + veth): rocegen -l 0 --no-huge -m 512 --no-pci \\\n"
		"    --vdev=net_af_packet0,iface=veth0 -- --ip 198.18.0.1 --peer-ip 198.18.0.2\n",
		RG_MAX_PROCS, RG_MAX_QPS, RG_MAX_WORKERS, RG_MAX_LOCAL);
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

int
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
int
rg_parse_args(int argc, char **argv, struct rg_opts *o, bool node_only)
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
		{ "workers", required_argument, NULL, 268 },
		{ "poll-yield", no_argument, NULL, 269 },
		{ "pxn", required_argument, NULL, 270 },
		{ "proto", required_argument, NULL, 265 },
		{ "adaptive-routing", required_argument, NULL, 266 },
		{ "ar-threshold", required_argument, NULL, 267 },
		{ "node", required_argument, NULL, 256 },
		{ "pcie", required_argument, NULL, 257 },
		{ "gdr", required_argument, NULL, 258 },
		{ "gpus", required_argument, NULL, 259 },
		{ "nics", required_argument, NULL, 260 },
		{ "fabric", required_argument, NULL, 261 },
		{ "gpu-gen", required_argument, NULL, 262 },
		{ "cpu", required_argument, NULL, 263 },
		{ "host-mem-GBps", required_argument, NULL, 264 },
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
	o->workers = 1;
	o->n_ranks = 1;
	o->mtu = 1024;
	o->coll = RG_COLL_ALLREDUCE;
	o->algo = RG_ALGO_RING;
	o->dcqcn = "nvidia";
	o->line_mbps = 100000;
	o->limit_s = 120;
	o->timeout = 14;
	o->window_bytes = 256 * 1024;
	o->ar_threshold = 8192;
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
			else if (strcmp(optarg, "hier") == 0)
				o->algo = RG_ALGO_HIER;
			else if (strcmp(optarg, "auto") == 0)
				o->algo_auto = true;
			else {
				fprintf(stderr, "rocegen: --algo: ring, tree, hier or auto, got \"%s\"\n",
					optarg);
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
			o->ranks_set = true;
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
			o->line_set = true;
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
		case 268:
			if (rg_parse_uint("--workers", optarg, 1, RG_MAX_WORKERS, &v) != 0)
				return -1;
			o->workers = (unsigned int)v;
			break;
		case 269:
			o->poll_yield = true;
			break;
		case 270:
			if (rg_parse_uint("--pxn", optarg, 0, 1, &v) != 0)
				return -1;
			o->pxn = v == 1;
			break;
		case 256:
			o->node_file = optarg;
			break;
		case 265:
			for (o->proto = RG_PROTO_NONE; o->proto <= RG_PROTO_LL; o->proto++)
				if (strcmp(optarg, rg_proto_name(o->proto)) == 0)
					break;
			if (o->proto > RG_PROTO_LL) {
				fprintf(stderr, "rocegen: --proto: simple, ll128, ll or none, got "
					"\"%s\"\n", optarg);
				return -1;
			}
			break;
		case 266:
			if (rg_parse_uint("--adaptive-routing", optarg, 0, 1, &v) != 0)
				return -1;
			o->ar = v == 1;
			break;
		case 267:
			if (rg_parse_uint("--ar-threshold", optarg, 0, 1UL << 30, &v) != 0)
				return -1;
			o->ar_threshold = v;
			break;
		case 257:
		case 258:
		case 259:
		case 260:
		case 261:
		case 262:
		case 263:
		case 264:
			if (rg_node_flag(o, c, optarg) != 0)
				return -1;
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
	if ((o->node_file != NULL || o->node_flags != NULL || node_only) && rg_node_setup(o) != 0)
		return -1;
	if (node_only)
		return 0;
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
	if (o->proto != RG_PROTO_NONE && o->srd) {
		fprintf(stderr, "rocegen: --proto: NCCL's net/IB pattern is RC's: not with "
			"--transport srd\n");
		return -1;
	}
	if (o->ar && o->proto == RG_PROTO_NONE) {
		fprintf(stderr, "rocegen: --adaptive-routing: changes NCCL's net/IB pattern: "
			"only with --proto simple, ll128 or ll\n");
		return -1;
	}
	if (o->algo == RG_ALGO_HIER && o->coll != RG_COLL_ALLREDUCE) {
		fprintf(stderr, "rocegen: --algo hier: only with --test allreduce\n");
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
	if (o->algo_auto)
		rg_algo_auto(o);
	if (o->min_size == 0 || o->min_size > o->size)
		o->min_size = o->size;
	if (rg_sched_round(o->min_size, o->n_procs * o->n_ranks * o->workers) == 0) {
		fprintf(stderr, "rocegen: -b/--size: at least %u bytes (64 per rank%s), got %"
			PRIu64 "\n", 64 * o->n_procs * o->n_ranks * o->workers,
			o->workers > 1 ? " and worker" : "", o->min_size);
		return -1;
	}
	return 0;
}
