/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef ROCEGEN_RG_MAIN_H
#define ROCEGEN_RG_MAIN_H

/*
 * rocegen's state and the calls between its files (internal to app/rocegen): rg_cli.c (the
 * command line), rg_port.c (the port and the event loop), rg_run.c (QPs, steps, barriers,
 * verification, the run), rg_report.c (the table and --json), main.c (EAL, start, stop).
 */
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <jansson.h>
#include <rte_cycles.h>

#include "lib/node/node_model.h"
#include "rg_ep.h"
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
#define RG_CTS_SLOTS 256	/* NET_IB_MAX_REQUESTS: CTS FIFO slots per connection */
#define RG_CTS_BYTES 64		/* sizeof(struct ncclIbSendFifo) */
#define RG_MAX_WORKERS 8	/* --workers: shards, one lcore each */
#define RG_MAX_PORTS 8		/* ports (rails), rank i's traffic on port i mod ports */
#define RG_INBOX 4096		/* frames a shard's inbox holds (a power of 2) */

/* --proto: NCCL's wire pattern (rg_nccl.c) with a protocol's message sizes, or none (a
 * transfer is one RDMA WRITE with immediate, no clear-to-send) */
enum rg_proto {
	RG_PROTO_NONE,
	RG_PROTO_SIMPLE,
	RG_PROTO_LL128,
	RG_PROTO_LL,
};

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
	unsigned int workers;		/* --workers: shards, one lcore and queue pair each */
	bool poll_yield;		/* --poll-yield: sched_yield() after an idle poll */
	bool pxn;			/* --pxn 1: cross-rail sends through the peer's rail's GPU */
	enum rg_proto proto;
	bool ar;			/* --adaptive-routing 1 (NCCL_IB_ADAPTIVE_ROUTING) */
	uint64_t ar_threshold;		/* --ar-threshold (NCCL_IB_AR_THRESHOLD, 8192) */
	bool algo_auto;			/* --algo auto: NCCL's choice, made by rg_algo_auto */
	double auto_times_us[2][3];	/* its candidates (lib/node/node_tune.h), < 0: off */
	bool ranks_set, line_set;	/* --ranks, --line-rate-mbps given */
	/* the node model (lib/node): on with --node or any node flag */
	const char *node_file;
	json_t *node_flags;		/* the node flags as node-file keys, over the file's */
	bool node_on;
	struct node_cfg node;
	struct node_eval node_eval;
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


/* One QP of this process: the requester of a connection src -> dst (a rank of ours to a remote
 * rank) or its responder (remote to ours). Channel n_qps is the control connection between
 * the first ranks of two processes (barriers). */
struct rg_qp {
	struct rg_ep ep;
	unsigned int peer_proc;
	unsigned int port;	/* the rail (index in rg_state's ports) its frames use */
	bool cross_rail;	/* requester: its two ranks' rails differ (and no PXN) */
	bool pxn;		/* its sender is a relay: the data came over NVLink (--pxn) */
	bool requester;
	bool ctrl;		/* a barrier QP (channel n_qps) */
	uint8_t *cts;		/* --proto: requester: the CTS FIFO the receiver writes (its
				 * memory region); responder: the CTS elements it sends */
};

struct rg_imm {
	uint32_t imm;
	uint32_t count;
};

struct rg_ll_msg {
	unsigned int lr;	/* our rank */
	uint64_t wire_off;	/* in ll_rx[lr] */
	uint64_t land_off;	/* in land[lr] */
	uint64_t len;		/* data bytes */
	uint64_t flag;
};

/* Where a frame's cycles go (rg_poll.c; the JSON's cycles_per_frame) */
enum rg_cyc_part {
	RG_CYC_RX_BURST,	/* rte_eth_rx_burst: the PMD (memif: its copy into our mbuf) */
	RG_CYC_RX_PROC,		/* parse, ICRC check, placement, ACK/NAK state, free */
	RG_CYC_TX_BUILD,	/* mbuf, headers, payload copy, ICRC, pacing */
	RG_CYC_TX_BURST,	/* rte_eth_tx_burst: the PMD (memif: its copy out) */
	RG_CYC_N,
};

/* One port (rail) as one shard uses it: its TX queue's frames the PMD did not take yet, its
 * shaper, its counters. */
struct rg_txport {
	struct rte_mbuf *txq[RG_TXQ];	/* built frames the PMD did not take yet, in order */
	unsigned int txq_n;
	uint64_t txq_progress_ns;	/* the PMD last took a frame from txq */
	uint64_t next_ns;		/* shaper at the port's rate */
	uint64_t tx_frames;		/* taken by the PMD */
	uint64_t rx_frames;		/* taken from the RX queue */
	uint64_t tx_bytes;
	struct ep_pfc pfc;		/* pause state of the port (its QPs') */
};

struct rg_state {
	struct rg_opts o;
	uint16_t port_ids[RG_MAX_PORTS];	/* DPDK port of each rail */
	unsigned int n_ports;
	struct rte_mempool *pool;
	uint8_t mac[RG_MAX_PORTS][6];
	uint8_t peer_mac[RG_MAX_PROCS][RG_MAX_PORTS][6];
	bool peer_known[RG_MAX_PROCS][RG_MAX_PORTS];
	unsigned int proc;		/* this process's index in hosts */
	unsigned int R;			/* ranks in all */
	struct rg_sched sched;		/* the size being run */
	struct rg_sched sched_max;	/* the largest size: buffer sizes, connections */
	uint32_t imm;			/* the next immediate (step or barrier) */
	unsigned int n_rows;
	uint64_t row_sizes[RG_MAX_ROWS];
	double row_us[RG_MAX_ROWS];
	struct rg_qp *qps;
	unsigned int n_qp;
	int32_t *qp_of;			/* (QPN - base) -> index in qps, or -1 */
	uint32_t qp_of_len;
	unsigned int tx_next;		/* round robin start */
	uint64_t *msg_seq;		/* messages posted per (src, dst) pair (round robin) */
	uint64_t *nccl_msgs;		/* --proto: NCCL messages per (src, dst) pair, either side */
	uint64_t data_cqes;		/* --proto: data completions (imm = size) not yet waited for */
	uint64_t cts_posted;		/* --proto: CTS writes posted */
	uint64_t nccl_msgs_posted;	/* --proto: data messages (parts) posted */
	uint64_t ar_imm_posted;		/* --adaptive-routing: 0-byte WRITE_WITH_IMM posted */
	/* --proto ll|ll128: messages in NCCL's line format, encoded into ll_tx and landing in
	 * ll_rx (a rank's data QPs' memory region), both refilled every step; decoded into
	 * land after the step's wait (rg_nccl_land) */
	uint8_t *ll_tx, *ll_rx[RG_MAX_LOCAL];
	uint64_t ll_tx_len, ll_rx_len[RG_MAX_LOCAL], ll_tx_used, ll_rx_used[RG_MAX_LOCAL];
	struct rg_ll_msg *ll_pend;	/* the step's messages to decode */
	uint32_t ll_n_pend, ll_cap_pend;
	uint8_t *data[RG_MAX_LOCAL];
	uint8_t *land[RG_MAX_LOCAL];
	uint64_t *bitmap[RG_MAX_LOCAL];
	uint8_t ctrl_src[64], ctrl_land[64];
	uint64_t tsc0;
	uint64_t ns_mult;		/* 2^32 x 1e9 / tsc_hz */
	uint64_t port_credit_ns;	/* how far ahead of now a port's shaper may run */
	double port_ns_per_byte;	/* wire time of a byte at a port's (shard's) rate */
	struct rg_txport tp[RG_MAX_PORTS];
	struct rte_mbuf *spare;		/* allocated, not used by the last QP asked (rg_tx) */
	uint64_t tx_deferred;		/* frames that waited in txq (PMD busy) */
	struct rg_imm seen[RG_IMM_SLOTS];
	uint64_t imm_unexpected;	/* a completion whose immediate collides (a bug) */
	uint64_t arp_replies_sent;
	uint64_t tx_dropped;		/* frames the PMD did not take (go-back-N resends) */
	uint64_t rx_other;
	uint64_t rx_lost;		/* dropped on purpose (--rx-loss) */
	uint64_t local_bytes;		/* moved between ranks of this process */
	uint64_t wire_bytes;		/* posted to the wire (first transmissions) */
	uint64_t step_ns;		/* the node model: a step's time without the CPU's own
					 * copies and reductions, at least its intra-node time */
	uint64_t intra_ns;		/* ... its intra-node time (the model's) */
	double row_intra_us[RG_MAX_ROWS];	/* per iteration, in the table's rows */
	uint64_t rng;
	/* --workers N: this state is one shard, run by one lcore on its own RX and TX queue,
	 * running the whole collective on its part of the data with its own QPs (QPNs offset by
	 * rg_qpn_span per shard; the peer's shard k talks to ours). Frames for another shard's
	 * QPs that land on our queue go to its inbox; a PFC or PAUSE frame goes to every
	 * shard's. Shard 0 owns the port, the pool and the array of shards. */
	unsigned int shard, n_shards;
	unsigned int lcore;
	uint16_t queue;
	bool poll_all;			/* start-up (shard 0 alone): poll every RX queue */
	struct rte_ring *inbox;		/* multi-producer, single-consumer */
	struct rg_state **shards;
	uint64_t handoff_out;		/* given to another shard's inbox (PFC copies too) */
	uint64_t handoff_in;		/* taken from our inbox */
	uint64_t handoff_dropped;	/* an inbox was full: freed (go-back-N resends it) */
	bool timing;			/* in a timed iteration (rg_run) */
	uint64_t cyc[RG_CYC_N];		/* TSC cycles of work that handled frames ... */
	uint64_t cyc_frames[RG_CYC_N];	/* ... and those frames */
	uint64_t pause_applied;		/* PFC/PAUSE frames applied: ours and the copies */
	uint64_t pause_own;		/* ... received on our queue (set by rg_shards_merge) */
	/* set by rg_shards_merge: this shard's frames over its rails; in shard 0 the whole
	 * process's PFC and PAUSE frames received */
	uint64_t rx_frames, tx_frames, pfc_rcvd, pause_rcvd;
};

/* Set by SIGINT and SIGTERM (main.c). */
extern volatile sig_atomic_t rg_stop;
/* Set by a shard that failed: the others stop waiting (rg_timed_out). */
extern volatile int rg_failed;

/* TSC cycles since start in ns: one 64x64 -> 128-bit multiply by 2^32 x 1e9 / hz (called
 * several times per poll; two 64-bit divisions here cost 5% of a 4 KB packet's time). */
static inline uint64_t
rg_now_ns(const struct rg_state *st)
{
	uint64_t d = rte_rdtsc() - st->tsc0;

	return (uint64_t)(((unsigned __int128)d * st->ns_mult) >> 32);
}

/* rg_cli.c */
void rg_usage(FILE *f);
/* @p s as an integer in lo..hi, or -1 after a message naming @p opt. */
int rg_parse_uint(const char *opt, const char *s, unsigned long lo, unsigned long hi,
		  unsigned long *out);
/* rocegen's options (argv[0] is skipped): 0, -1 after a message, 1 after --help was printed;
 * @p node_only: only the node options (rocegen node ...), no addresses needed. */
int rg_parse_args(int argc, char **argv, struct rg_opts *o, bool node_only);

/* rg_node.c: a node flag (getopt code 257..264) as its node-file key; the node file with the
 * flags over it into o->node (0 or -1 after a message); rocegen node [--node FILE] [node
 * flags]: the model's figures as JSON on stdout, no EAL. */
int rg_node_flag(struct rg_opts *o, int c, const char *arg);
int rg_node_setup(struct rg_opts *o);
int rg_node_main(int argc, char **argv);
/* --algo auto: the algorithm and protocol NCCL's tuning picks for the largest size, from the
 * node model (its defaults without --node); sets o->algo and, unless given, o->proto. */
void rg_algo_auto(struct rg_opts *o);

/* rg_port.c: the ports (one per rail), addresses, ARP */
int rg_port_setup(struct rg_state *st);
void rg_rank_ip(const struct rg_state *st, unsigned int g, uint8_t out[4]);
bool rg_is_local(const struct rg_state *st, unsigned int g);
/* The process whose ranks include @p ip, or -1. */
int rg_proc_of_ip(const struct rg_state *st, const uint8_t *ip);
/* The rail (port index) of global rank @p g: its local rank mod the ports. */
unsigned int rg_rail(const struct rg_state *st, unsigned int g);
/* The rank whose address and rail a transfer from @p src to @p dst leaves by: @p src, or with
 * --pxn across rails the rank of @p src's node on @p dst's rail (the relay). */
unsigned int rg_wire_src(const struct rg_state *st, unsigned int src, unsigned int dst);
uint32_t rg_qpn(const struct rg_state *st, unsigned int src, unsigned int dst, unsigned int ch,
		bool responder);
/* QPNs one shard spans: shard k's are RG_QPN_BASE + k x span + 0..span-1. */
uint32_t rg_qpn_span(const struct rg_state *st);
struct rg_ep *rg_qp_lookup(struct rg_state *st, uint32_t qpn);
/* An ARP frame received on rail @p r: learn the sender, answer for our ranks on that rail. */
void rg_on_arp(struct rg_state *st, unsigned int r, const uint8_t *f, uint32_t len,
	       const struct roce_pkt *p);
/* Every QP's destination MAC from what ARP learnt (shards other than 0 after start-up). */
void rg_qps_set_macs(struct rg_state *st);
bool rg_timed_out(const struct rg_state *st);
int rg_resolve_peers(struct rg_state *st);

/* rg_poll.c: the event loop */
/* Multi-shard start (shard 0 set up, its ports running): the inboxes; 0 or -1. */
int rg_inboxes_create(struct rg_state *st);
void rg_poll(struct rg_state *st);
/* A frame out of rail @p r's TX queue (ARP); frames the PMD does not take wait in order. */
void rg_send_frame(struct rg_state *st, unsigned int r, const uint8_t *f, uint32_t len);
/* Hand frames to rail @p r's PMD; true when its txq is empty afterwards. */
bool rg_tx_flush(struct rg_state *st, unsigned int r, struct rte_mbuf **pkts, unsigned int n);
/* The rail of a port id as the PMD stamps it on an mbuf (m->port), or 0. */
unsigned int rg_rail_of_port_id(const struct rg_state *st, uint16_t port_id);

/* rg_run.c */
int rg_qps_init(struct rg_state *st);
int rg_alloc(struct rg_state *st);
int rg_run(struct rg_state *st);
/* The schedule of the run's collective and algorithm for @p size bytes (rg_sched.h). */
int rg_build(const struct rg_state *st, struct rg_sched *s, uint64_t size);
/* main.c: shard @p k's part of @p size bytes over @p n shards (whole 64 x R units, the first shards
 * one more); the parts add up to the size rounded as rg_sched_round does. */
uint64_t rg_shard_part(uint64_t size, unsigned int R, unsigned int k, unsigned int n);
/* A shard's lcore: rg_run, then answering the wire for a moment (rte_eal_remote_launch). */
int rg_shard_main(void *arg);

/* rg_run.c, for rg_nccl.c: post a WRITE (with @p imm unless @p op says otherwise), waiting for
 * room; wait for our writes' ACKs and @p expected completions of immediate @p imm
 * (RG_IMM_DATA: --proto's data completions). */
#define RG_IMM_DATA UINT32_MAX
int rg_post_op(struct rg_state *st, struct rg_ep *qp, enum ep_wr_op op, const uint8_t *buf,
	       uint64_t len, uint64_t va, uint32_t imm);
int rg_wait(struct rg_state *st, uint32_t imm, uint32_t expected, const char *what);

/* rg_nccl.c: NCCL's net/IB pattern for --proto */
const char *rg_proto_name(enum rg_proto p);
/* The largest data bytes of one network message of the run's collective and protocol. */
uint64_t rg_nccl_max_msg(const struct rg_state *st);
/* The receiver's CTS writes for every message due to our ranks in step @p s; returns the
 * number of data completions to wait for, or -1. */
int64_t rg_nccl_post_cts(struct rg_state *st, unsigned int s);
/* Transfer @p x from one of our ranks: each message waits for its CTS, then goes as one RDMA
 * WRITE with immediate (its size) per QP part. 0 or -1. */
int rg_nccl_send(struct rg_state *st, const struct rg_xfer *x);
/* ll|ll128: the line-format buffers (before the QPs: their memory regions), and after a
 * step's wait the decoding of what landed (flags checked, bytes marked placed); 0 or -1. */
int rg_nccl_alloc(struct rg_state *st);
void rg_nccl_free(struct rg_state *st);
int rg_nccl_land(struct rg_state *st);

/* rg_report.c: the shards' rows and counters into shard 0 (a row's size the sum of the
 * parts, its time the slowest shard's); then the report, with every shard's QPs */
void rg_shards_merge(struct rg_state *st);
int rg_report(struct rg_state *st, struct rg_out *out);
int rg_out_open(struct rg_out *out, const char *path);
void rg_out_abandon(struct rg_out *out);
int rg_out_write(struct rg_out *out, const json_t *doc);

#endif
