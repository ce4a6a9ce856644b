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
 * This file: EAL, start and stop. The options are in rg_cli.c, the port and event loop in
 * rg_port.c, the collective run in rg_run.c, the report in rg_report.c (rg_main.h).
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_ring.h>

#include "lib/base/emu_rundir.h"
#include "rg_main.h"

volatile sig_atomic_t rg_stop;

static void
rg_on_signal(int sig)
{
	(void)sig;
	rg_stop = 1;
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

uint64_t
rg_shard_part(uint64_t size, unsigned int R, unsigned int k, unsigned int n)
{
	uint64_t unit = 64ULL * R, units = size / unit;

	return (units / n + (k < units % n)) * unit;
}

/* Shards still running their collective, and shards that have returned (rg_shard_main):
 * the launch and the end of a shard as release/acquire pairs that ThreadSanitizer sees
 * (rte_eal_remote_launch and rte_eal_wait_lcore synchronise inside uninstrumented EAL). */
static unsigned int rg_running, rg_exited;

int
rg_shard_main(void *arg)
{
	struct rg_state *st = arg;
	uint64_t t0;
	int rc;

	(void)__atomic_load_n(&rg_running, __ATOMIC_ACQUIRE);	/* main's set-up before */
	rc = rg_run(st);

	if (rc != 0)
		__atomic_store_n(&rg_failed, 1, __ATOMIC_RELAXED);
	/* a shard that is done keeps polling its queues while another runs: frames for the
	 * others' QPs (their ACKs too) land on ours and must be handed on */
	__atomic_sub_fetch(&rg_running, 1, __ATOMIC_RELEASE);
	while (__atomic_load_n(&rg_running, __ATOMIC_ACQUIRE) > 0 && !rg_timed_out(st))
		rg_poll(st);
	/* keep answering for a moment so the peers' last ACKs and barrier writes get out */
	t0 = rg_now_ns(st);
	while (rg_now_ns(st) - t0 < 300000000ULL && !rg_stop)
		rg_poll(st);
	__atomic_add_fetch(&rg_exited, 1, __ATOMIC_RELEASE);
	return rc;
}

/*
 * --workers N: shards 1..N-1 as copies of shard 0 made before anything is allocated (their
 * options, clock and pacing are shard 0's), each with its own seed; 0, or -1 when out of
 * memory.
 */
static int
rg_shards_create(struct rg_state *st)
{
	unsigned int k;

	st->shards = calloc(st->n_shards, sizeof(*st->shards));
	if (st->shards == NULL)
		return -1;
	st->shards[0] = st;
	for (k = 1; k < st->n_shards; k++) {
		struct rg_state *sk = malloc(sizeof(*sk));

		if (sk == NULL)
			return -1;
		*sk = *st;
		sk->o.node_flags = NULL;	/* shard 0's to free */
		sk->shard = k;
		sk->queue = (uint16_t)k;
		sk->rng = (st->o.seed + k) * 0x9E3779B97F4A7C15ULL + 1;
		st->shards[k] = sk;
	}
	return 0;
}

static void
rg_shard_free(struct rg_state *st)
{
	unsigned int k;

	rg_sched_free(&st->sched);
	rg_sched_free(&st->sched_max);
	for (k = 0; k < RG_MAX_LOCAL; k++) {
		free(st->data[k]);
		free(st->land[k]);
		free(st->bitmap[k]);
	}
	for (k = 0; st->qps != NULL && k < st->n_qp; k++) {
		rg_ep_free(&st->qps[k].ep);
		free(st->qps[k].cts);
	}
	free(st->qps);
	free(st->qp_of);
	free(st->msg_seq);
	free(st->nccl_msgs);
	rg_nccl_free(st);
	if (st->inbox != NULL) {
		struct rte_mbuf *m;

		while (rte_ring_dequeue(st->inbox, (void **)&m) == 0)
			rte_pktmbuf_free(m);
		rte_ring_free(st->inbox);
	}
}

/* Run every shard (shard 0 here, the others on the worker lcores in order); 0 when all ran. */
static int
rg_shards_run(struct rg_state *st)
{
	unsigned int k = 1, lc;
	int rc = 0;

	__atomic_store_n(&rg_exited, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&rg_running, st->n_shards, __ATOMIC_RELEASE);
	RTE_LCORE_FOREACH_WORKER(lc) {
		if (k == st->n_shards)
			break;
		st->shards[k]->lcore = lc;
		if (rte_eal_remote_launch(rg_shard_main, st->shards[k], lc) != 0) {
			fprintf(stderr, "rocegen: cannot start shard %u on lcore %u\n", k, lc);
			__atomic_store_n(&rg_failed, 1, __ATOMIC_RELAXED);
			rc = -1;
			break;
		}
		k++;
	}
	st->lcore = rte_lcore_id();
	if (rg_shard_main(st) != 0)
		rc = -1;
	RTE_LCORE_FOREACH_WORKER(lc)
		if (rte_eal_wait_lcore(lc) != 0)
			rc = -1;
	(void)__atomic_load_n(&rg_exited, __ATOMIC_ACQUIRE);	/* the shards' state after */
	return rc;
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

	st = calloc(1, sizeof(*st));
	if (st == NULL) {
		fprintf(stderr, "rocegen: out of memory\n");
		return 1;
	}
	if (argc > 1 && strcmp(argv[1], "node") == 0) {
		free(st);
		return rg_node_main(argc - 1, argv + 1);
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
		rc = rg_parse_args(argc - dd, argv + dd, &st->o, false);
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
		i = rg_parse_args(argc - rc, argv + rc, &st->o, false);
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
	st->n_shards = st->o.workers;
	if (rte_lcore_count() < st->n_shards) {
		fprintf(stderr, "rocegen: --workers %u needs %u lcores, EAL has %u (give them with "
			"-l or --lcores)\n", st->n_shards, st->n_shards, rte_lcore_count());
		goto out;
	}
	/* one port per rail: rank i on port i mod ports */
	st->n_ports = rte_eth_dev_count_avail();
	if (st->n_ports == 0) {
		fprintf(stderr, "rocegen: no DPDK port: add one with --vdev or -a\n");
		goto out;
	}
	if (st->n_ports > RG_MAX_PORTS || st->n_ports > st->o.n_ranks ||
	    (st->o.node_on && st->n_ports > st->o.node.nics) || (st->o.pxn && st->n_ports < 2)) {
		fprintf(stderr, "rocegen: %u DPDK port(s): one per rail, 1..%u and at most --ranks "
			"(%u)%s%s (add ports with --vdev or -a)\n", st->n_ports, RG_MAX_PORTS,
			st->o.n_ranks, st->o.node_on ? " and the node's NICs" : "",
			st->o.pxn ? "; --pxn needs two rails or more" : "");
		goto out;
	}
	/* a polling loop comes back every few tens of us: the port may send a burst that long */
	st->port_ns_per_byte = 8000.0 / st->o.line_mbps;
	if (st->o.node_on) {
		/* the node's cap per NIC (line, PCIe, host buffer); a port carries nics / ports of
		 * the node's rails (all of them on one port) */
		st->port_ns_per_byte = 8.0 * st->n_ports /
			(st->o.node_eval.host_cap_gbps * st->o.node.nics);
		printf("rocegen: node: %u GPUs (%s, %s), %u NIC(s) of %.0f Gb/s on PCIe %ux%u MPS %u, "
		       "GDR %s: host cap %.1f Gb/s per NIC (by %s); %u port(s) paced at %.1f Gb/s; "
		       "intra-node %.1f GB/s + %.1f us a step\n", st->o.node.gpus,
		       node_gpu_name(st->o.node.gpu), node_fabric_name(st->o.node.fabric),
		       st->o.node.nics, st->o.node.nic_gbps, st->o.node.pcie.gen,
		       st->o.node.pcie.lanes, st->o.node.pcie.mps, st->o.node.gdr ? "on" : "off",
		       st->o.node_eval.host_cap_gbps, st->o.node_eval.host_cap_by, st->n_ports,
		       st->o.node_eval.host_cap_gbps * st->o.node.nics / st->n_ports,
		       st->o.node_eval.fabric_GBps, st->o.node_eval.fabric_latency_ns / 1e3);
	}
	/* --workers: each shard paces its queue at its share of the port */
	st->port_ns_per_byte *= st->n_shards;
	st->port_credit_ns = RTE_MAX((uint64_t)RG_BURST_NS,
				     (uint64_t)(RG_BURST_BYTES * st->port_ns_per_byte));
	/* --poll-sleep-us: the default 50 us timer slack would stretch every short sleep */
	if (st->o.poll_sleep_us > 0)
		(void)prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0);
	memset(st->ctrl_src, 0xC7, sizeof(st->ctrl_src));
	if (rg_shards_create(st) != 0) {
		fprintf(stderr, "rocegen: out of memory for %u shards\n", st->n_shards);
		goto out;
	}
	for (k = 0; k < st->n_shards; k++) {
		struct rg_state *sk = st->shards[k];

		if (rg_build(sk, &sk->sched_max, rg_shard_part(st->o.size, st->R, k,
							       st->n_shards)) != 0) {
			fprintf(stderr, "rocegen: cannot build the %s schedule over %u ranks\n",
				rg_coll_name(st->o.coll), st->R);
			goto out;
		}
		if (rg_alloc(sk) != 0 || rg_nccl_alloc(sk) != 0)
			goto out;
	}
	if (rg_port_setup(st) != 0)
		goto out_port;
	for (k = 0; k < st->n_shards; k++) {
		struct rg_state *sk = st->shards[k];

		memcpy(sk->port_ids, st->port_ids, sizeof(st->port_ids));
		sk->pool = st->pool;
		memcpy(sk->mac, st->mac, sizeof(st->mac));
		if (rg_qps_init(sk) != 0)
			goto out_port;
	}
	/* shard 0 alone answers ARP on every queue until the peers are known; what comes for
	 * the others' QPs meanwhile waits in their inboxes */
	st->poll_all = st->n_shards > 1;
	if (rg_inboxes_create(st) != 0 || rg_resolve_peers(st) != 0)
		goto out_port;
	st->poll_all = false;
	for (k = 1; k < st->n_shards; k++) {
		memcpy(st->shards[k]->peer_mac, st->peer_mac, sizeof(st->peer_mac));
		memcpy(st->shards[k]->peer_known, st->peer_known, sizeof(st->peer_known));
		rg_qps_set_macs(st->shards[k]);
	}
	printf("rocegen: process %u of %u, ranks %u..%u of %u, %s%s, up to %" PRIu64 " bytes, "
	       "%u QP(s) per pair (%u QPs here, %s%s), MTU %u, DCQCN %s, %u worker(s); running\n",
	       st->proc,
	       st->o.n_procs, st->proc * st->o.n_ranks, st->proc * st->o.n_ranks + st->o.n_ranks - 1,
	       st->R, rg_coll_name(st->o.coll),
	       st->o.coll != RG_COLL_ALLREDUCE ? "" : st->o.algo == RG_ALGO_TREE ? " (tree)" :
	       st->o.algo == RG_ALGO_HIER ? " (hier)" : "",
	       rg_sched_round(st->o.size, st->R), st->o.n_qps, st->n_qp * st->n_shards, st->o.srd ? "SRD" : "RC",
	       st->o.split ? ", messages split over them" : "", st->o.mtu, st->o.dcqcn,
	       st->n_shards);
	fflush(stdout);
	ret = rg_shards_run(st) == 0 ? 0 : 1;
	rg_shards_merge(st);
	if (rg_report(st, out.f != NULL ? &out : NULL) != 0)
		ret = 1;
	if (ret != 0)
		fprintf(stderr, "rocegen: FAILED\n");
out_port:
	if (st->pool != NULL) {
		for (k = 0; k < st->n_shards * st->n_ports; k++) {
			struct rg_txport *t = &st->shards[k / st->n_ports]->tp[k % st->n_ports];

			rte_pktmbuf_free_bulk(t->txq, t->txq_n);
			t->txq_n = 0;
		}
		for (k = 0; k < st->n_shards; k++) {
			rte_pktmbuf_free(st->shards[k]->spare);
			st->shards[k]->spare = NULL;
		}
		for (k = 0; k < st->n_ports; k++)
			rte_eth_dev_stop(st->port_ids[k]);
	}
out:
	rg_out_abandon(&out);
	for (k = 1; st->shards != NULL && k < st->n_shards; k++)
		if (st->shards[k] != NULL) {
			rg_shard_free(st->shards[k]);
			free(st->shards[k]);
		}
	rg_shard_free(st);
	free(st->shards);
	json_decref(st->o.node_flags);
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
