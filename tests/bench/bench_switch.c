/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bench_switch: packets per second through rocemu's full switch (parse, forward pairs, TM at
 * 1600 Gb/s) against plain io-forwarding on the same ports, in one process, alternating the
 * two in short epochs so that the VM's stalls and drift hit both sides alike. Reports the
 * median Mpps of each side and the ratio full/io; it fails only when something is
 * functionally wrong (nothing forwarded, frames not seen as RoCEv2, packets unaccounted).
 *
 * Ports are net_null vdevs with copy=0: RX hands out mbufs from our pool without touching
 * their data, TX frees them. Every mbuf of the pool is pre-filled with a valid RoCEv2 frame
 * (Eth/IPv4/UDP 4791/BTH ... ICRC), so what the switch parses is a real frame. Two vdevs per
 * frame size (net_null's "size" is fixed at probe): RX side, and TX side with no-rx=1 (both
 * are polled every pass, as rocemu's live mode does, so empty polls cost both sides alike).
 *
 * Usage: bench_switch [--epochs N] [--epoch-ms MS] [--quick]    (defaults 30 x 200 ms per size;
 *        --quick: 3 x 20 ms, a smoke test of the same checks in a fraction of a second)
 */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>
#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include "lib/base/emu_err.h"
#include "lib/stage/emu_stage.h"
#include "lib/switch/emu_switch.h"
#include "lib/proto/roce_proto.h"

#define BENCH_N_SIZES 3
#define BENCH_MAX_EPOCHS 1000
#define BENCH_FRAME_MAX 9000
#define BENCH_RXD 1024
#define BENCH_TXD 1024

/* The switch under test: parse, forward pairs, a TM fast enough never to be the limit. */
static const char bench_pipeline_json[] =
	"{"
	" \"description\": \"bench_switch: parse + forward pairs + TM at 1600 Gb/s\","
	" \"ports\": [ { \"name\": \"p0\" }, { \"name\": \"p1\" } ],"
	" \"ingress\": [ { \"type\": \"parse\" },"
	"   { \"type\": \"forward\", \"mode\": \"pairs\", \"pairs\": [[\"p0\", \"p1\"]] } ],"
	" \"egress\": [],"
	" \"tm\": { \"ports\": ["
	"   { \"port\": \"p0\", \"rate_gbps\": 1600 },"
	"   { \"port\": \"p1\", \"rate_gbps\": 1600 } ] }"
	"}";

/* The same switch with the traffic manager doing everything a RoCE switch does: DSCP trust,
 * 8 queues, shared dynamic buffer, RED ECN at dequeue and PFC on the lossless priority. */
static const char bench_tm_pipeline_json[] =
	"{"
	" \"description\": \"bench_switch: dcqcn-lab's TM (ECN + PFC) at 1600 Gb/s\","
	" \"ports\": [ { \"name\": \"p0\" }, { \"name\": \"p1\" } ],"
	" \"ingress\": [ { \"type\": \"parse\", \"trust\": \"dscp\" },"
	"   { \"type\": \"forward\", \"mode\": \"pairs\", \"pairs\": [[\"p0\", \"p1\"]] } ],"
	" \"tm\": { \"buffer\": { \"total_kb\": 8192, \"mode\": \"dynamic\", \"alpha\": 1,"
	"             \"cell_bytes\": 256 },"
	"   \"ports\": ["
	"   { \"port\": \"p0\", \"rate_gbps\": 1600, \"lossless\": [3],"
	"     \"ecn\": { \"kmin_kb\": 100, \"kmax_kb\": 400, \"pmax\": 0.2 },"
	"     \"pfc\": { \"cable_m\": 3 } },"
	"   { \"port\": \"p1\", \"rate_gbps\": 1600, \"lossless\": [3],"
	"     \"ecn\": { \"kmin_kb\": 100, \"kmax_kb\": 400, \"pmax\": 0.2 },"
	"     \"pfc\": { \"cable_m\": 3 } } ] }"
	"}";

struct bench_size {
	const char *name;
	const char *what;
	uint8_t opcode;       /* RC RDMA WRITE ONLY, or 0 for an RC ACK */
	uint32_t payload_len;
	uint32_t frame_len;   /* after padding; net_null's "size" */
	uint16_t ports[2];    /* DPDK ports: [0] RX side (switch p0), [1] TX side (p1) */
	double io_mpps[BENCH_MAX_EPOCHS];
	double full_mpps[BENCH_MAX_EPOCHS];
	double tm_mpps[BENCH_MAX_EPOCHS];
	unsigned int n_io, n_full, n_tm;
	/* bump/io [0] and tm/io [1] of each round of 1 ms per side (see bench_run_size()) */
	double *slice_ratio[2];
	unsigned int n_slice, cap_slice;
	uint64_t io_pkts, full_pkts, tm_pkts;
	double full_s;
	uint64_t tm_busy_ns;
};

static struct bench_size bench_sizes[BENCH_N_SIZES] = {
	{ .name = "ack64", .what = "RC ACK (62 B + 2 B pad)", .opcode = 0, .payload_len = 0 },
	{ .name = "write1k", .what = "RC RDMA WRITE ONLY, 1 KB payload",
	  .opcode = ROCE_OP_RDMA_WRITE_ONLY, .payload_len = 1024 },
	{ .name = "write4k", .what = "RC RDMA WRITE ONLY, 4 KB payload",
	  .opcode = ROCE_OP_RDMA_WRITE_ONLY, .payload_len = 4096 },
};

struct bench_clock {
	uint64_t tsc_hz;
	uint64_t tsc0;
	uint64_t wall0_ns;
};

/* Exactly live.c's conversion: the full side pays for it every poll, as rocemu does. */
static inline uint64_t
bench_now_ns(const struct bench_clock *c)
{
	uint64_t d = rte_rdtsc() - c->tsc0;

	return c->wall0_ns + (d / c->tsc_hz) * 1000000000ULL +
	       (d % c->tsc_hz) * 1000000000ULL / c->tsc_hz;
}

/* Frame number @p seq of size @p bs into @p buf: PSN and QP vary so the frames are not all alike. */
static int
bench_build(const struct bench_size *bs, uint8_t *buf, size_t cap, uint32_t seq)
{
	static const uint8_t dst_mac[6] = { 0x02, 0x00, 0x00, 0x00, 0x00, 0x02 };
	static const uint8_t src_mac[6] = { 0x02, 0x00, 0x00, 0x00, 0x00, 0x01 };
	struct roce_hdr_params hp = roce_hdr_params_default();
	int len;

	memcpy(hp.dst_mac, dst_mac, sizeof(dst_mac));
	memcpy(hp.src_mac, src_mac, sizeof(src_mac));
	hp.src_ip[0] = 10;
	hp.src_ip[3] = 1;
	hp.dst_ip[0] = 10;
	hp.dst_ip[3] = 2;
	hp.udp_sport = (uint16_t)(0xC000 | (seq & 0xff));
	hp.dest_qp = 0x100 + (seq & 7);
	hp.psn = seq & 0xffffff;
	if (bs->opcode == 0) {
		len = roce_build_ack(buf, cap, &hp, ROCE_AETH_ACK | ROCE_AETH_CREDIT_UNLIMITED, seq);
		if (len > 0 && len < 64 && cap >= 64) {
			/* An ACK is 62 bytes: pad to the 64 B minimum frame of benchmarks. */
			memset(buf + len, 0, 64 - len);
			len = 64;
		}
		return len;
	}
	hp.opcode = bs->opcode; /* RC transport is 0x00 */
	hp.reth_va = 0x7f0000000000ULL + (uint64_t)seq * bs->payload_len;
	hp.reth_rkey = 0x1234;
	hp.reth_len = bs->payload_len;
	return roce_build(buf, cap, &hp, NULL, bs->payload_len);
}

/* A frame must parse as valid RoCEv2 with a right ICRC, or the benchmark measures nonsense. */
static int
bench_check_frame(const struct bench_size *bs, const uint8_t *buf, uint32_t len)
{
	struct roce_pkt p;
	enum roce_class cls = roce_parse(buf, len, 4791, &p);

	if (cls != ROCE_CLASS_ROCEV2 || !roce_icrc_verify(buf, len, &p)) {
		fprintf(stderr, "bench_switch: %s: built frame is not valid RoCEv2 (class %s, %s)\n",
			bs->name, roce_class_name(cls), roce_reason_name(p.reason));
		return -1;
	}
	return 0;
}

/*
 * Take every mbuf out of the pool, write a frame of @p bs into each, give them all back:
 * net_null (copy=0) then hands out mbufs that already hold RoCE frames.
 */
static int
bench_prefill(struct rte_mempool *mp, const struct bench_size *bs)
{
	struct rte_mbuf **all;
	unsigned int n = mp->size, got = 0, i;
	int rc = 0;

	all = calloc(n, sizeof(*all));
	if (all == NULL)
		return -ENOMEM;
	while (got < n && (all[got] = rte_pktmbuf_alloc(mp)) != NULL)
		got++;
	if (got != n) {
		fprintf(stderr, "bench_switch: pool has %u mbufs but only %u could be taken: "
			"some are still held (switch or driver)\n", n, got);
		rc = -EBUSY;
	}
	for (i = 0; i < got && rc == 0; i++) {
		struct rte_mbuf *m = all[i];
		uint16_t room = rte_pktmbuf_tailroom(m);
		int len = bench_build(bs, rte_pktmbuf_mtod(m, uint8_t *), room, i);

		if (len < 0 || (uint32_t)len != bs->frame_len) {
			fprintf(stderr, "bench_switch: %s: cannot build frame into a %u-byte mbuf: %d\n",
				bs->name, room, len);
			rc = -EINVAL;
		}
	}
	rte_pktmbuf_free_bulk(all, got);
	free(all);
	return rc;
}

static int
bench_port_setup(uint16_t id, struct rte_mempool *mp)
{
	struct rte_eth_conf conf;
	int rc;

	memset(&conf, 0, sizeof(conf));
	rc = rte_eth_dev_configure(id, 1, 1, &conf);
	if (rc == 0)
		rc = rte_eth_rx_queue_setup(id, 0, BENCH_RXD, rte_eth_dev_socket_id(id), NULL, mp);
	if (rc == 0)
		rc = rte_eth_tx_queue_setup(id, 0, BENCH_TXD, rte_eth_dev_socket_id(id), NULL);
	if (rc == 0)
		rc = rte_eth_dev_start(id);
	if (rc != 0)
		fprintf(stderr, "bench_switch: port %u setup failed: %s\n", id, rte_strerror(-rc));
	return rc;
}

static bool bench_huge; /* --huge: hugepages instead of --no-huge */
static int bench_only = -1; /* --only: the one side measured (0 io, 1 bump, 2 tm); -1 all */
static int bench_size_only = -1; /* --size: the one frame size run (index); -1 all */

/* io-forward, both directions as testpmd's io mode does; returns packets transmitted. */
static uint64_t
bench_epoch_io(const struct bench_size *bs, uint64_t end_tsc)
{
	struct rte_mbuf *pkts[EMU_BURST];
	uint64_t tx = 0;
	unsigned int p;
	uint16_t n, sent;

	do {
		for (p = 0; p < 2; p++) {
			n = rte_eth_rx_burst(bs->ports[p], 0, pkts, EMU_BURST);
			if (n == 0)
				continue;
			sent = rte_eth_tx_burst(bs->ports[p ^ 1], 0, pkts, n);
			if (sent < n)
				rte_pktmbuf_free_bulk(pkts + sent, n - sent);
			tx += sent;
		}
	} while (rte_rdtsc() < end_tsc);
	return tx;
}

/* One pass of rocemu's live poll (app/rocemu/live.c live_poll), on this size's ports. */
static inline uint64_t
bench_poll_full(struct emu_switch *sw, const struct bench_size *bs,
		const struct bench_clock *clk, bool rx)
{
	struct rte_mbuf *pkts[EMU_BURST];
	struct rte_mbuf **txp;
	uint64_t now = bench_now_ns(clk);
	uint64_t tx = 0;
	unsigned int p;
	uint16_t n, sent;

	for (p = 0; rx && p < 2; p++) {
		n = rte_eth_rx_burst(bs->ports[p], 0, pkts, EMU_BURST);
		if (n > 0)
			emu_switch_rx(sw, (uint16_t)p, pkts, n, now);
	}
	if (rx) /* as live_poll(): the time again before the TX work */
		now = bench_now_ns(clk);
	for (p = 0; p < 2; p++) {
		n = emu_switch_tx_prepare(sw, (uint16_t)p, now, &txp);
		if (n == 0)
			continue;
		sent = rte_eth_tx_burst(bs->ports[p], 0, txp, n);
		emu_switch_tx_done(sw, (uint16_t)p, sent);
		tx += sent;
	}
	return tx;
}

static uint64_t
bench_epoch_full(struct emu_switch *sw, const struct bench_size *bs,
		 const struct bench_clock *clk, uint64_t end_tsc)
{
	uint64_t tx = 0;

	do {
		tx += bench_poll_full(sw, bs, clk, true);
	} while (rte_rdtsc() < end_tsc);
	return tx;
}

static int
bench_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double
bench_median(const double *v, unsigned int n)
{
	double *s, r;

	if (n == 0 || (s = malloc(n * sizeof(*v))) == NULL)
		return 0.0;
	memcpy(s, v, n * sizeof(*v));
	qsort(s, n, sizeof(*s), bench_cmp_double);
	r = n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
	free(s);
	return r;
}

/* Counters of one switch before a frame size runs, to check it afterwards. */
struct bench_snap {
	struct emu_port_stats rx, tx;
	struct emu_conservation c;
	int64_t cls;
};

static void
bench_snap(struct emu_switch *sw, struct bench_snap *s)
{
	char cls_name[64];

	snprintf(cls_name, sizeof(cls_name), "class_%s", roce_class_name(ROCE_CLASS_ROCEV2));
	emu_switch_port_stats(sw, 0, &s->rx);
	emu_switch_port_stats(sw, 1, &s->tx);
	emu_switch_conservation(sw, &s->c);
	s->cls = emu_switch_stage_counter(sw, "parse", cls_name);
}

/* Drain @p sw and check it forwarded everything it received as RoCEv2, dropping nothing. */
static int
bench_check(struct emu_switch *sw, const char *side, const struct bench_size *bs,
	    const struct bench_clock *clk, const struct bench_snap *b0)
{
	struct bench_snap b1;
	uint64_t deadline = bench_now_ns(clk) + 1000000000ULL;

	while (emu_switch_held(sw) > 0 && bench_now_ns(clk) < deadline)
		bench_poll_full(sw, bs, clk, false);
	bench_snap(sw, &b1);
	if (b1.tx.tx_pkts - b0->tx.tx_pkts != b1.rx.rx_pkts - b0->rx.rx_pkts) {
		fprintf(stderr, "bench_switch: %s/%s: switch received %" PRIu64 " on p0 but sent %"
			PRIu64 " on p1\n", bs->name, side, b1.rx.rx_pkts - b0->rx.rx_pkts,
			b1.tx.tx_pkts - b0->tx.tx_pkts);
		return -1;
	}
	if (b1.cls - b0->cls != (int64_t)(b1.rx.rx_pkts - b0->rx.rx_pkts)) {
		fprintf(stderr, "bench_switch: %s/%s: parse saw %" PRId64 " RoCEv2 frames of %" PRIu64
			" received: the pre-filled frames did not arrive intact\n", bs->name, side,
			b1.cls - b0->cls, b1.rx.rx_pkts - b0->rx.rx_pkts);
		return -1;
	}
	if (b1.c.unaccounted != 0 || b1.c.drops != b0->c.drops || b1.c.held != 0) {
		char line[256];

		emu_switch_conservation_line(sw, line, sizeof(line));
		fprintf(stderr, "bench_switch: %s/%s: %s (drops %" PRIu64 " during this size)\n",
			bs->name, side, line, b1.c.drops - b0->c.drops);
		return -1;
	}
	return 0;
}

/* Side @p side (0 io, 1 bump, 2 tm) until @p end_tsc; its packets counted. Returns them. */
static uint64_t
bench_side(struct emu_switch *sw, struct emu_switch *sw_tm, struct bench_size *bs,
	   const struct bench_clock *clk, unsigned int side, uint64_t end_tsc)
{
	uint64_t n;

	if (side == 0) {
		n = bench_epoch_io(bs, end_tsc);
		bs->io_pkts += n;
	} else if (side == 1) {
		n = bench_epoch_full(sw, bs, clk, end_tsc);
		bs->full_pkts += n;
	} else {
		n = bench_epoch_full(sw_tm, bs, clk, end_tsc);
		bs->tm_pkts += n;
	}
	return n;
}

/*
 * Run one frame size: warm-up, then epochs rotating over three sides (io-forward, rocemu
 * bump-in-wire, rocemu with the full TM), the order shifting every round; then as long again
 * in rounds of 1 ms per side (the "1 ms" columns: the median over rounds of each round's
 * ratios); then drain and check both switches. Why the rounds: the host's load on this VM
 * moves the rates by up to 2x from one second to the next, and epochs of 200 ms per side see
 * different hosts; three sides run within 3 ms see nearly the same one, and the median of
 * their ratios leaves out the rounds a stall of the vCPU fell into.
 */
static int
bench_run_size(struct emu_switch *sw, struct emu_switch *sw_tm, struct bench_size *bs,
	       const struct bench_clock *clk, unsigned int epochs, uint64_t epoch_cycles)
{
	struct bench_snap s0, t0snap;
	const uint64_t slice_cycles = clk->tsc_hz / 1000;
	uint64_t busy0;
	unsigned int e;

	bench_snap(sw, &s0);
	bench_snap(sw_tm, &t0snap);

	/* Warm-up, not measured: caches, branch predictors, the pool's lcore cache. */
	bench_epoch_io(bs, rte_rdtsc() + epoch_cycles / 2);
	/* with --only, the side's switch alone (a profile of it then holds nothing else) */
	if (bench_only < 0 || bench_only == 1)
		bench_epoch_full(sw, bs, clk, rte_rdtsc() + epoch_cycles / 2);
	if (bench_only < 0 || bench_only == 2)
		bench_epoch_full(sw_tm, bs, clk, rte_rdtsc() + epoch_cycles / 2);
	busy0 = emu_tm_port_ctrs(emu_switch_tm(sw), 1)[EMU_TM_CTR_BUSY_NS];

	for (e = 0; e < epochs; e++) {
		unsigned int side = (e + e / 3) % 3;
		uint64_t t0 = rte_rdtsc(), t1, n;
		double s;

		if (bench_only >= 0 && side != (unsigned int)bench_only)
			continue;
		n = bench_side(sw, sw_tm, bs, clk, side, t0 + epoch_cycles);
		t1 = rte_rdtsc();
		s = (double)(t1 - t0) / (double)clk->tsc_hz;
		if (side == 0) {
			bs->io_mpps[bs->n_io++] = (double)n / s / 1e6;
		} else if (side == 1) {
			bs->full_mpps[bs->n_full++] = (double)n / s / 1e6;
			bs->full_s += s;
		} else {
			bs->tm_mpps[bs->n_tm++] = (double)n / s / 1e6;
		}
	}
	/* Rounds of 1 ms per side, the order rotating: bump/io and tm/io of each round. */
	for (e = 0; bench_only < 0 && e < bs->cap_slice; e++) {
		double mpps[3];
		unsigned int j;

		for (j = 0; j < 3; j++) {
			unsigned int side = (e + j) % 3;
			uint64_t t0 = rte_rdtsc(), n, t1;

			n = bench_side(sw, sw_tm, bs, clk, side, t0 + slice_cycles);
			t1 = rte_rdtsc();
			mpps[side] = (double)n * (double)clk->tsc_hz / (double)(t1 - t0) / 1e6;
		}
		bs->slice_ratio[0][bs->n_slice] = mpps[1] / mpps[0];
		bs->slice_ratio[1][bs->n_slice++] = mpps[2] / mpps[0];
	}
	if (bench_check(sw, "bump", bs, clk, &s0) != 0 ||
	    bench_check(sw_tm, "tm", bs, clk, &t0snap) != 0)
		return -1;
	bs->tm_busy_ns = emu_tm_port_ctrs(emu_switch_tm(sw), 1)[EMU_TM_CTR_BUSY_NS] - busy0;
	if (bench_only < 0 ? (bs->io_pkts == 0 || bs->full_pkts == 0 || bs->tm_pkts == 0) :
	    (bench_only == 0 ? bs->io_pkts : bench_only == 1 ? bs->full_pkts : bs->tm_pkts) == 0) {
		fprintf(stderr, "bench_switch: %s: nothing forwarded (io %" PRIu64 ", bump %" PRIu64
			", tm %" PRIu64 ")\n", bs->name, bs->io_pkts, bs->full_pkts, bs->tm_pkts);
		return -1;
	}
	return 0;
}

/* EAL leaves its runtime directory (/var/run/dpdk/bench_PID) behind: empty it, remove it. */
static void
bench_rundir_remove(const char *dir)
{
	struct dirent *de;
	DIR *d;

	if (dir[0] == '\0' || (d = opendir(dir)) == NULL)
		return;
	while ((de = readdir(d)) != NULL) {
		char path[PATH_MAX + 256];

		if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0) {
			snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
			unlink(path);
		}
	}
	closedir(d);
	rmdir(dir);
}

static void
bench_usage(FILE *f)
{
	fprintf(f, "usage: bench_switch [--epochs N] [--epoch-ms MS] [--quick] [--huge] "
		   "[--only io|bump|tm] [--size ack64|write1k|write4k]\n"
		   "  epochs per frame size rotating io/bump/tm (default 30, a multiple of 3, <= %d), each MS ms "
		   "(default 200)\n"
		   "  --quick: --epochs 3 --epoch-ms 20 (smoke test: the functional checks, no useful numbers)\n"
		   "  --huge: EAL memory on hugepages (512 free 2 MB pages), as a deployment runs, instead of\n"
		   "          --no-huge\n"
		   "  --only: run that side's epochs alone (callgrind or perf of one side; no ratios)\n"
		   "  --size: run that frame size alone\n",
		   BENCH_MAX_EPOCHS);
}


static int
bench_args(int argc, char **argv, unsigned int *epochs, unsigned int *epoch_ms)
{
	static const struct option longopts[] = {
		{ "epochs", required_argument, NULL, 'e' },
		{ "epoch-ms", required_argument, NULL, 'm' },
		{ "quick", no_argument, NULL, 'q' },
		{ "huge", no_argument, NULL, 'H' },
		{ "only", required_argument, NULL, 'o' },
		{ "size", required_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	char *end;
	long v;
	int c;

	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (c) {
		case 'e':
		case 'm':
			errno = 0;
			v = strtol(optarg, &end, 10);
			if (errno != 0 || *end != '\0' || v < 2 ||
			    (c == 'e' && (v > BENCH_MAX_EPOCHS || v % 3 != 0)) ||
			    (c == 'm' && v > 60000)) {
				fprintf(stderr, "bench_switch: bad value \"%s\" for --%s\n", optarg,
					c == 'e' ? "epochs" : "epoch-ms");
				return -1;
			}
			if (c == 'e')
				*epochs = (unsigned int)v;
			else
				*epoch_ms = (unsigned int)v;
			break;
		case 'q':
			*epochs = 3;
			*epoch_ms = 20;
			break;
		case 'H':
			bench_huge = true;
			break;
		case 'o':
			bench_only = strcmp(optarg, "io") == 0 ? 0 : strcmp(optarg, "bump") == 0 ? 1 :
				     strcmp(optarg, "tm") == 0 ? 2 : -2;
			if (bench_only == -2) {
				fprintf(stderr, "bench_switch: --only io, bump or tm, got \"%s\"\n",
					optarg);
				return -1;
			}
			break;
		case 's':
			for (v = 0; v < BENCH_N_SIZES; v++)
				if (strcmp(optarg, bench_sizes[v].name) == 0)
					bench_size_only = (int)v;
			if (bench_size_only < 0) {
				fprintf(stderr, "bench_switch: --size ack64, write1k or write4k, got "
					"\"%s\"\n", optarg);
				return -1;
			}
			break;
		case 'h':
			bench_usage(stdout);
			exit(0);
		default:
			bench_usage(stderr);
			return -1;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "bench_switch: unexpected argument \"%s\"\n", argv[optind]);
		return -1;
	}
	return 0;
}

int
main(int argc, char **argv)
{
	static uint8_t frame[BENCH_FRAME_MAX];
	char eal_args[16][128], rundir[PATH_MAX];
	char *eal_argv[17];
	int eal_argc = 0;
	struct emu_pipeline *pl = NULL, *pl_tm = NULL;
	struct emu_switch *sw = NULL, *sw_tm = NULL;
	struct rte_mempool *mp = NULL;
	struct bench_clock clk;
	struct timespec ts;
	struct emu_err err;
	json_error_t jerr;
	json_t *root;
	unsigned int epochs = 30, epoch_ms = 200, i, k;
	uint32_t n_mbufs;
	int rc = 1, len;

	if (bench_args(argc, argv, &epochs, &epoch_ms) != 0)
		return 2;

	/* Frame lengths first: net_null's "size" devarg is set when it is probed. */
	for (i = 0; i < BENCH_N_SIZES; i++) {
		len = bench_build(&bench_sizes[i], frame, sizeof(frame), 0);
		if (len < 0 || bench_check_frame(&bench_sizes[i], frame, (uint32_t)len) != 0) {
			fprintf(stderr, "bench_switch: cannot build the %s frame (%d)\n",
				bench_sizes[i].name, len);
			return 1;
		}
		bench_sizes[i].frame_len = (uint32_t)len;
	}

	snprintf(eal_args[eal_argc++], 128, "%s", "bench_switch");
	/* --in-memory: hugepages without files in hugetlbfs (the run leaves nothing behind) */
	snprintf(eal_args[eal_argc++], 128, bench_huge ? "--in-memory" : "--no-huge");
	snprintf(eal_args[eal_argc++], 128, "-m");
	snprintf(eal_args[eal_argc++], 128, "1024");
	snprintf(eal_args[eal_argc++], 128, "--no-pci");
	snprintf(eal_args[eal_argc++], 128, "--file-prefix=bench_%d", (int)getpid());
	snprintf(eal_args[eal_argc++], 128, "-l");
	snprintf(eal_args[eal_argc++], 128, "0");
	snprintf(eal_args[eal_argc++], 128, "--log-level=lib.eal:error");
	for (i = 0; i < BENCH_N_SIZES; i++) {
		snprintf(eal_args[eal_argc++], 128, "--vdev=net_null%u,copy=0,size=%u", 2 * i,
			 bench_sizes[i].frame_len);
		snprintf(eal_args[eal_argc++], 128, "--vdev=net_null%u,copy=0,size=%u,no-rx=1",
			 2 * i + 1, bench_sizes[i].frame_len);
	}
	for (i = 0; i < (unsigned int)eal_argc; i++)
		eal_argv[i] = eal_args[i];
	eal_argv[eal_argc] = NULL;
	if (rte_eal_init(eal_argc, eal_argv) < 0) {
		fprintf(stderr, "bench_switch: EAL init failed: %s\n", rte_strerror(rte_errno));
		bench_rundir_remove(rte_eal_get_runtime_dir());
		return 1;
	}
	snprintf(rundir, sizeof(rundir), "%s", rte_eal_get_runtime_dir());

	root = json_loads(bench_pipeline_json, JSON_REJECT_DUPLICATES, &jerr);
	if (root == NULL) {
		fprintf(stderr, "bench_switch: pipeline JSON: %s\n", jerr.text);
		goto out;
	}
	if (emu_pipeline_from_json(root, "bench_switch.json", &pl, &err) != 0) {
		json_decref(root);
		fprintf(stderr, "bench_switch: %s\n", err.msg);
		goto out;
	}
	json_decref(root);
	root = json_loads(bench_tm_pipeline_json, JSON_REJECT_DUPLICATES, &jerr);
	if (root == NULL || emu_pipeline_from_json(root, "bench_switch_tm.json", &pl_tm, &err) != 0) {
		fprintf(stderr, "bench_switch: TM pipeline: %s\n", root == NULL ? jerr.text : err.msg);
		json_decref(root);
		goto out;
	}
	json_decref(root);
	/* Same pool as rocemu live would make: the default MTU 9216 gives room for 4 KB frames. */
	n_mbufs = emu_pipeline_mbufs_needed(pl, BENCH_RXD, BENCH_TXD);
	mp = emu_pool_create("bench_pkts", n_mbufs, emu_pipeline_data_room(pl), rte_socket_id(),
			     &err);
	if (mp == NULL) {
		fprintf(stderr, "bench_switch: %s\n", err.msg);
		goto out;
	}
	sw = emu_switch_create(pl, mp, 1, &err);
	if (sw != NULL)
		sw_tm = emu_switch_create(pl_tm, mp, 1, &err);
	if (sw == NULL || sw_tm == NULL) {
		fprintf(stderr, "bench_switch: %s\n", err.msg);
		goto out;
	}
	for (i = 0; i < BENCH_N_SIZES; i++) {
		char name[32];
		unsigned int k;

		for (k = 0; k < 2; k++) {
			snprintf(name, sizeof(name), "net_null%u", 2 * i + k);
			if (rte_eth_dev_get_port_by_name(name, &bench_sizes[i].ports[k]) != 0) {
				fprintf(stderr, "bench_switch: no DPDK port %s\n", name);
				goto out;
			}
			if (bench_port_setup(bench_sizes[i].ports[k], mp) != 0)
				goto out;
		}
	}

	clk.tsc_hz = rte_get_tsc_hz();
	clock_gettime(CLOCK_REALTIME, &ts);
	clk.wall0_ns = (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
	clk.tsc0 = rte_rdtsc();

	printf("bench_switch: %u mbufs of %u B data room, %u epochs x %u ms per size, "
	       "rotating io-forward, rocemu bump-in-wire and rocemu with ECN + PFC (TM 1600 Gb/s), "
	       "TSC %.3f GHz\n", n_mbufs, emu_pipeline_data_room(pl), epochs, epoch_ms,
	       (double)clk.tsc_hz / 1e9);
	for (i = 0; i < BENCH_N_SIZES; i++) {
		struct bench_size *bs = &bench_sizes[i];

		if (bench_size_only >= 0 && (int)i != bench_size_only)
			continue;
		bs->cap_slice = epochs * epoch_ms / 3;
		for (k = 0; k < 2; k++) {
			bs->slice_ratio[k] = calloc(bs->cap_slice, sizeof(double));
			if (bs->slice_ratio[k] == NULL) {
				fprintf(stderr, "bench_switch: out of memory\n");
				goto out;
			}
		}
		if (bench_prefill(mp, bs) != 0)
			goto out;
		if (bench_run_size(sw, sw_tm, bs, &clk, epochs, clk.tsc_hz / 1000 * epoch_ms) != 0)
			goto out;
	}

	if (bench_only >= 0) {
		for (i = 0; i < BENCH_N_SIZES; i++)
			if (bench_size_only < 0 || (int)i == bench_size_only)
				printf("%s: %s side alone, %" PRIu64 " packets\n", bench_sizes[i].name,
				       bench_only == 0 ? "io" : bench_only == 1 ? "bump" : "tm",
				       bench_only == 0 ? bench_sizes[i].io_pkts :
				       bench_only == 1 ? bench_sizes[i].full_pkts :
				       bench_sizes[i].tm_pkts);
		if (bench_only > 0) {
			struct emu_port_stats st0, st1;
			struct emu_switch *side_sw = bench_only == 1 ? sw : sw_tm;

			emu_switch_port_stats(side_sw, 0, &st0);
			emu_switch_port_stats(side_sw, 1, &st1);
			/* callgrind_per_packet.py --packets: what a profile of this switch's calls
			 * holds, the warm-up and the drain included */
			printf("%s switch: %" PRIu64 " packets received in all\n",
			       bench_only == 1 ? "bump" : "tm", st0.rx_pkts + st1.rx_pkts);
		}
		rc = 0;
		goto out;
	}
	printf("\n%-8s %6s  %9s %9s %9s %8s %8s %10s %10s   %8s %8s\n", "size", "frame",
	       "io Mpps", "bump Mpps", "tm Mpps", "bump/io", "tm/bump", "+ns bump", "+ns tm",
	       "1ms b/io", "1ms t/io");
	for (i = 0; i < BENCH_N_SIZES; i++) {
		struct bench_size *bs = &bench_sizes[i];
		double io = bench_median(bs->io_mpps, bs->n_io);
		double full = bench_median(bs->full_mpps, bs->n_full);
		double tm = bench_median(bs->tm_mpps, bs->n_tm);

		if (bench_size_only >= 0 && (int)i != bench_size_only)
			continue;
		printf("%-8s %4u B  %9.2f %9.2f %9.2f %8.3f %8.3f %10.1f %10.1f   %8.3f %8.3f\n",
		       bs->name, bs->frame_len, io, full, tm, full / io, tm / full,
		       1e3 / full - 1e3 / io, 1e3 / tm - 1e3 / full,
		       bench_median(bs->slice_ratio[0], bs->n_slice),
		       bench_median(bs->slice_ratio[1], bs->n_slice));
	}
	printf("\n(median of %u epochs per side; bump = parse + forward pairs + the TM with default settings "
	       "(no ECN, no PFC); tm = the same with a dynamic shared buffer, ECN and PFC; "
	       "+ns bump = rocemu's cost per packet over io-forward, +ns tm = what the full TM adds "
	       "to bump; 1ms b/io and t/io: the medians of bump/io and tm/io over %u rounds of 1 ms "
	       "per side)\n", epochs / 3, epochs * epoch_ms / 3);
	for (i = 0; i < BENCH_N_SIZES; i++) {
		struct bench_size *bs = &bench_sizes[i];
		double io = bench_median(bs->io_mpps, bs->n_io);
		double full = bench_median(bs->full_mpps, bs->n_full);
		double tm = bench_median(bs->tm_mpps, bs->n_tm);

		if (bench_size_only >= 0 && (int)i != bench_size_only)
			continue;
		printf("RESULT bench=switch size=%s frame_bytes=%u io_mpps=%.3f full_mpps=%.3f "
		       "tm_mpps=%.3f ratio=%.3f tm_ratio=%.3f slice_ratio=%.3f slice_tm_io=%.3f\n",
		       bs->name, bs->frame_len, io, full, tm, full / io, tm / full,
		       bench_median(bs->slice_ratio[0], bs->n_slice),
		       bench_median(bs->slice_ratio[1], bs->n_slice));
	}
	rc = 0;
out:
	fflush(stdout);
	for (i = 0; i < BENCH_N_SIZES; i++) {
		/* Ports not set up are stopped/closed harmlessly. */
		rte_eth_dev_stop(bench_sizes[i].ports[0]);
		rte_eth_dev_stop(bench_sizes[i].ports[1]);
	}
	if (sw != NULL)
		emu_switch_discard_held(sw);
	if (sw_tm != NULL)
		emu_switch_discard_held(sw_tm);
	emu_switch_free(sw);
	emu_switch_free(sw_tm);
	emu_pipeline_free(pl);
	emu_pipeline_free(pl_tm);
	rte_mempool_free(mp);
	for (i = 0; i < BENCH_N_SIZES; i++)
		for (k = 0; k < 2; k++)
			free(bench_sizes[i].slice_ratio[k]);
	rte_eal_cleanup();
	bench_rundir_remove(rundir);
	return rc;
}
