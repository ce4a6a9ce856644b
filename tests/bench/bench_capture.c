/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bench_capture: what a header capture costs the pipeline, and whether its writer keeps up.
 * Issue 13's yardsticks, measured in one run:
 *   - header capture (snaplen 128) of every packet: its added per-packet time as a share of
 *     the pipeline's per-packet time, and frames lost (ring full) at the pipeline's full rate;
 *   - annotations on (pcapng), what they add on top of the headers, same measure: "annotate":
 *     "all" (every record carries a comment, the worst case), and "events" (the default: a
 *     comment on the frames something happened to; nothing happens to these, so the worker
 *     copies no trace: what annotating costs a frame that gets no comment);
 *   - the writer alone: 128-byte records per second to a file, pcapng with and without the
 *     comments.
 *
 * Pipeline sides: a worker lcore drives bench_switch's switch (parse, forward pairs, TM at
 * 1600 Gb/s) as live mode does (rx a burst on p0, tx_prepare on p1, clock from the TSC) with
 * RC RDMA WRITE ONLY frames of 1 KB payload (1098 B, bench_switch's write1k; the mbufs are
 * filled once, so the bench loop copies nothing), while the main lcore does what live mode's
 * main loop does (sleep 10 ms, emu_switch_service()). Epochs rotate the four pipelines; the
 * cost is the median over epochs of each epoch's ratio (the headers' to the no-capture epoch,
 * the annotations' to the headers' epoch) next to it.
 * Writer side: the main lcore alone fills the capture's ring (untimed), then times draining
 * it into a file (rotated every 64 MB over 2 names, so the disk holds at most 128 MB).
 *
 * About 690 lines, over the ~600 of tests/: the pipeline's sides and the writer's share the
 * ports, the pool and the reporting, which one file keeps together.
 *
 * Fails only when something is functionally wrong: nothing forwarded, forwarded !=
 * captured + not captured, or the file (read back with the project's reader) holds another
 * number of records than were captured.
 *
 * Usage: bench_capture [--epochs N] [--epoch-ms MS] [--ring RECORDS] [--quick] [--huge]
 *                      [--writer-only | --pipeline-only | --only none|headers|annotated|events]
 *        (default 16 x 60 ms: the 1 M-record ring holds an epoch, so the cost is measured
 *        without losses, and the writer's sustained rate apart; --quick: 2 x 50 ms;
 *        --huge: EAL memory on hugepages instead of --no-huge, as a deployment runs;
 *        --only: that pipeline side alone, its rate and no ratio: for callgrind, e.g.
 *        --toggle-collect=emu_switch_rx --toggle-collect=emu_switch_tx_prepare)
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>
#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_ethdev.h>
#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>

#include "lib/base/emu_err.h"
#include "lib/base/emu_rundir.h"
#include "lib/capture/emu_capture.h"
#include "lib/capture/emu_pcapr.h"
#include "lib/capture/emu_pcapw.h"
#include "lib/pkt/emu_pkt.h"
#include "lib/stage/emu_stage.h"
#include "lib/switch/emu_switch.h"
#include "lib/proto/roce_proto.h"

#define BENCH_SNAPLEN 128
#define BENCH_RING (1u << 20)
#define BENCH_MAX_EPOCHS 1000

/* bench_switch's pipeline, and the same with a capture on p1's egress (%s: annotate). */
#define BENCH_PORTS "\"ports\": [ { \"name\": \"p0\" }, { \"name\": \"p1\" } ],"
#define BENCH_INGRESS \
	"\"ingress\": [ { \"type\": \"parse\" }, " \
	"  { \"type\": \"forward\", \"mode\": \"pairs\", \"pairs\": [[\"p0\", \"p1\"]] } ],"
#define BENCH_TM "\"tm\": { \"ports\": [ { \"port\": \"p0\", \"rate_gbps\": 1600 }," \
	"                     { \"port\": \"p1\", \"rate_gbps\": 1600 } ] }"
static const char bench_plain_json[] = "{" BENCH_PORTS BENCH_INGRESS BENCH_TM "}";
static const char bench_capture_json[] = "{" BENCH_PORTS BENCH_INGRESS
	"\"egress\": [ { \"type\": \"capture\", \"file\": \"%s\", \"snaplen\": 128,"
	"              \"ring_size\": %u, \"ports\": [\"p1\"], \"annotate\": \"%s\" } ],"
	BENCH_TM "}";

enum { BENCH_PLAIN, BENCH_HDR, BENCH_ANN, BENCH_EVT, BENCH_N_SIDES };

/* The DPDK ports (net_null, copy=0) the switch's p0 and p1 are, and the pool they take from. */
static uint16_t bench_ports[2];
static struct rte_mempool *bench_pool;

struct bench_run {
	struct emu_switch *sw;
	uint64_t ms;
	volatile bool done;
	double secs;
	double cpu_secs;   /* the worker thread's CPU time: not the time other processes had it */
};

static double
bench_thread_cpu(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static inline uint64_t
bench_now_ns(uint64_t tsc0, uint64_t hz)
{
	uint64_t d = rte_rdtsc() - tsc0;

	return (d / hz) * 1000000000ULL + (d % hz) * 1000000000ULL / hz;
}

/* One pass of live mode's poll (app/rocemu/live.c live_poll), as bench_switch makes it. */
static inline void
bench_poll(struct emu_switch *sw, uint64_t t0, uint64_t hz, bool rx)
{
	struct rte_mbuf *pkts[EMU_BURST], **txp;
	uint64_t now = bench_now_ns(t0, hz);
	unsigned int p;
	uint16_t n, sent;

	for (p = 0; rx && p < 2; p++) {
		n = rte_eth_rx_burst(bench_ports[p], 0, pkts, EMU_BURST);
		if (n > 0)
			emu_switch_rx(sw, (uint16_t)p, pkts, n, now);
	}
	if (rx) /* as live_poll(): the time again before the TX work */
		now = bench_now_ns(t0, hz);
	for (p = 0; p < 2; p++) {
		n = emu_switch_tx_prepare(sw, (uint16_t)p, now, &txp);
		if (n == 0)
			continue;
		sent = rte_eth_tx_burst(bench_ports[p], 0, txp, n);
		emu_switch_tx_done(sw, (uint16_t)p, sent);
	}
}

static int
bench_worker(void *arg)
{
	struct bench_run *r = arg;
	uint64_t hz = rte_get_tsc_hz(), t0 = rte_rdtsc(), end = t0 + hz * r->ms / 1000;
	uint64_t deadline;
	double cpu0 = bench_thread_cpu();

	while (rte_rdtsc() < end)
		bench_poll(r->sw, t0, hz, true);
	r->secs = (double)(rte_rdtsc() - t0) / (double)hz;
	r->cpu_secs = bench_thread_cpu() - cpu0;
	/* what the TM still holds goes out (not timed) */
	deadline = rte_rdtsc() + hz;
	while (emu_switch_held(r->sw) > 0 && rte_rdtsc() < deadline)
		bench_poll(r->sw, t0, hz, false);
	r->done = true;
	return 0;
}

static int
bench_port_setup(uint16_t id)
{
	struct rte_eth_conf conf;
	int rc;

	memset(&conf, 0, sizeof(conf));
	rc = rte_eth_dev_configure(id, 1, 1, &conf);
	if (rc == 0)
		rc = rte_eth_rx_queue_setup(id, 0, 1024, rte_eth_dev_socket_id(id), NULL,
					    bench_pool);
	if (rc == 0)
		rc = rte_eth_tx_queue_setup(id, 0, 1024, rte_eth_dev_socket_id(id), NULL);
	if (rc == 0)
		rc = rte_eth_dev_start(id);
	return rc;
}

/* The frame every mbuf of a pool holds: bench_switch's write1k. */
static uint8_t bench_frame[2048];
static uint32_t bench_frame_len;

static void
bench_fill(struct rte_mempool *mp, void *arg, void *obj, unsigned int idx)
{
	struct rte_mbuf *m = obj;

	RTE_SET_USED(mp);
	RTE_SET_USED(arg);
	RTE_SET_USED(idx);
	memcpy((uint8_t *)m->buf_addr + RTE_PKTMBUF_HEADROOM, bench_frame, bench_frame_len);
}

static int
bench_build_frame(void)
{
	static const uint8_t dmac[6] = { 2, 0, 0, 0, 0, 2 }, smac[6] = { 2, 0, 0, 0, 0, 1 };
	struct roce_hdr_params hp = roce_hdr_params_default();
	int len;

	memcpy(hp.dst_mac, dmac, 6);
	memcpy(hp.src_mac, smac, 6);
	hp.src_ip[0] = 10;
	hp.src_ip[3] = 1;
	hp.dst_ip[0] = 10;
	hp.dst_ip[3] = 2;
	hp.udp_sport = 0xC001;
	hp.dest_qp = 0x101;
	hp.opcode = ROCE_OP_RDMA_WRITE_ONLY;
	hp.reth_va = 0x7f0000000000ULL;
	hp.reth_rkey = 0x1234;
	hp.reth_len = 1024;
	len = roce_build(bench_frame, sizeof(bench_frame), &hp, NULL, 1024);
	if (len <= 0)
		return -1;
	bench_frame_len = (uint32_t)len;
	return 0;
}

struct bench_side {
	const char *name;
	double mpps[BENCH_MAX_EPOCHS];     /* per second of wall time */
	double cpu_mpps[BENCH_MAX_EPOCHS]; /* per second of the worker's CPU time */
	unsigned int n;
	uint64_t pkts, captured, lost, in_file;
};

/* Records in @p file, read with the project's reader; -1 when it cannot be read. */
static int64_t
bench_count(const char *file)
{
	struct emu_pcapr rd = { 0 };
	struct emu_pcap_rec rec;
	struct emu_err err;
	int64_t n = 0;
	int rc;

	if (emu_pcapr_open(&rd, file, NULL, &err) != 0) {
		fprintf(stderr, "bench_capture: %s\n", err.msg);
		return -1;
	}
	while ((rc = emu_pcapr_next(&rd, &rec, &err)) == 1) {
		if (rec.caplen != BENCH_SNAPLEN) {
			fprintf(stderr, "bench_capture: %s: record %" PRId64 " holds %u bytes, not %u\n",
				file, n, rec.caplen, BENCH_SNAPLEN);
			rc = -1;
			break;
		}
		n++;
	}
	if (rc < 0 && err.msg[0] != '\0')
		fprintf(stderr, "bench_capture: %s\n", err.msg);
	emu_pcapr_close(&rd);
	return rc < 0 ? -1 : n;
}

static int
bench_epoch(const char *json, struct bench_side *side, uint64_t ms, unsigned int worker,
	    const char *file)
{
	struct emu_pipeline *pl = NULL;
	struct bench_run r = { .ms = ms };
	struct emu_port_stats rx, tx;
	struct emu_conservation cons;
	struct emu_err err;
	json_error_t jerr;
	json_t *root = json_loads(json, 0, &jerr);
	int rc = -1;

	if (root == NULL || emu_pipeline_from_json(root, "bench", &pl, &err) != 0) {
		fprintf(stderr, "bench_capture: pipeline: %s\n", root ? err.msg : jerr.text);
		goto out;
	}
	r.sw = emu_switch_create(pl, bench_pool, 1, &err);
	if (r.sw == NULL) {
		fprintf(stderr, "bench_capture: %s\n", err.msg);
		goto out;
	}
	rte_eal_remote_launch(bench_worker, &r, worker);
	while (!r.done) {
		usleep(10000); /* live mode's main loop */
		emu_switch_service(r.sw, false);
	}
	rte_eal_wait_lcore(worker);
	emu_switch_service(r.sw, true);
	emu_switch_port_stats(r.sw, 0, &rx);
	emu_switch_port_stats(r.sw, 1, &tx);
	emu_switch_conservation(r.sw, &cons);
	if (tx.tx_pkts == 0 || tx.tx_pkts != rx.rx_pkts || cons.unaccounted != 0 ||
	    cons.drops != 0 || cons.held != 0) {
		fprintf(stderr, "bench_capture: %s: received %" PRIu64 " on p0, sent %" PRIu64
			" on p1, %" PRIu64 " dropped, %" PRIu64 " held\n", side->name, rx.rx_pkts,
			tx.tx_pkts, cons.drops, cons.held);
		goto out;
	}
	side->cpu_mpps[side->n] = (double)tx.tx_pkts / r.cpu_secs / 1e6;
	side->mpps[side->n++] = (double)tx.tx_pkts / r.secs / 1e6;
	side->pkts += tx.tx_pkts;
	if (file != NULL) {
		int64_t cap = emu_switch_stage_counter(r.sw, "capture", "captured");
		int64_t full = emu_switch_stage_counter(r.sw, "capture", "not_captured_ring_full");
		int64_t nomb = emu_switch_stage_counter(r.sw, "capture", "not_captured_nombuf");
		int64_t in_file;

		if (emu_switch_report_failures(r.sw, stderr) > 0) {
			fprintf(stderr, "bench_capture: the capture file failed\n");
			goto out;
		}
		in_file = bench_count(file);
		side->captured += (uint64_t)cap;
		side->lost += (uint64_t)(full + nomb);
		side->in_file += (uint64_t)in_file;
		if ((uint64_t)cap + (uint64_t)full + (uint64_t)nomb != tx.tx_pkts || in_file != cap) {
			fprintf(stderr, "bench_capture: %s: %" PRIu64 " forwarded, %" PRId64
				" captured, %" PRId64 " lost, %" PRId64 " in the file: frames "
				"unaccounted\n", side->name, tx.tx_pkts, cap, full + nomb, in_file);
			goto out;
		}
	}
	rc = 0;
out:
	emu_switch_free(r.sw);
	emu_pipeline_free(pl);
	json_decref(root);
	return rc;
}

/* The writer alone: fill the ring (untimed), time draining it into the file. */
struct bench_writer {
	const char *name;
	bool annotate;
	bool devnull; /* the writer's own cost: the kernel takes the data without storing it */
	double mrec[BENCH_MAX_EPOCHS];
	double push_ns[BENCH_MAX_EPOCHS]; /* the worker's side, ns a record */
	unsigned int n;
	uint64_t records;
};

static size_t
bench_annotate(const void *arg, const struct emu_pkt_meta *meta, int drop_reason, bool all,
	       char *buf, size_t len)
{
	return emu_switch_annotate_meta(arg, meta, drop_reason, all, buf, len);
}

static int
bench_writer_epoch(struct bench_writer *bw, const struct emu_switch *sw, struct rte_mbuf *m,
		   uint64_t ms, const char *file)
{
	static const char *const ifs[] = { "p0", "p1", "drop" };
	uint64_t hz = rte_get_tsc_hz(), busy = 0, recs = 0, t0, ts = 1000000000ULL;
	uint64_t push = 0, pushed = 0;
	struct rte_mbuf *burst[EMU_BURST];
	struct emu_capture_stats st;
	struct emu_capture *cap;
	struct emu_err err;
	uint32_t i;
	int rc = 0;

	cap = emu_capture_create_ng(file, BENCH_SNAPLEN, 9216, BENCH_RING / 4, 3, ifs, &err);
	if (cap == NULL) {
		fprintf(stderr, "bench_capture: %s\n", err.msg);
		return -1;
	}
	emu_capture_set_rotation(cap, 64u << 20, 2);
	if (bw->annotate && emu_capture_set_annotate(cap, bench_annotate, sw, true, NULL, &err) != 0) {
		fprintf(stderr, "bench_capture: %s\n", err.msg);
		emu_capture_free(cap);
		return -1;
	}
	for (i = 0; i < RTE_DIM(burst); i++)
		burst[i] = m;
	while (busy < hz * ms / 1000) {
		/* the worker's side alone, as the capture stage calls it: bursts of 32 */
		t0 = rte_rdtsc();
		for (i = 0; i < BENCH_RING / 4; i += RTE_DIM(burst)) {
			emu_meta(m)->ts_ns = ts;
			ts += RTE_DIM(burst);
			pushed += emu_capture_push_burst(cap, burst, RTE_DIM(burst), true);
		}
		push += rte_rdtsc() - t0;
		t0 = rte_rdtsc();
		recs += emu_capture_drain(cap, UINT32_MAX);
		busy += rte_rdtsc() - t0;
	}
	t0 = rte_rdtsc();
	if (emu_capture_close(cap) != 0) {
		fprintf(stderr, "bench_capture: %s\n", emu_capture_error(cap));
		rc = -1;
	}
	busy += rte_rdtsc() - t0;
	emu_capture_stats(cap, &st);
	if (st.written != recs || st.captured != recs) {
		fprintf(stderr, "bench_capture: writer: %" PRIu64 " queued, %" PRIu64 " written\n",
			st.captured, st.written);
		rc = -1;
	}
	emu_capture_free(cap);
	if (pushed != recs) {
		fprintf(stderr, "bench_capture: writer: %" PRIu64 " pushed, %" PRIu64 " drained\n",
			pushed, recs);
		rc = -1;
	}
	bw->push_ns[bw->n] = (double)push / (double)hz * 1e9 / (double)pushed;
	bw->mrec[bw->n++] = (double)recs / ((double)busy / (double)hz) / 1e6;
	bw->records += recs;
	return rc;
}

static int
bench_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double
bench_median(const double *v, unsigned int n)
{
	double s[BENCH_MAX_EPOCHS];

	memcpy(s, v, n * sizeof(*v));
	qsort(s, n, sizeof(*s), bench_cmp);
	return n ? s[n / 2] : 0;
}

/*
 * Median over epochs of (time per packet of @p a - that of @p b) / that of @p base, in
 * wall time or (@p cpu) in the worker's CPU time.
 */
static double
bench_added(const struct bench_side *a, const struct bench_side *b,
	    const struct bench_side *base, bool cpu)
{
	double v[BENCH_MAX_EPOCHS];
	unsigned int i;

	for (i = 0; i < base->n; i++)
		v[i] = cpu ? (1 / a->cpu_mpps[i] - 1 / b->cpu_mpps[i]) / (1 / base->cpu_mpps[i]) :
			     (1 / a->mpps[i] - 1 / b->mpps[i]) / (1 / base->mpps[i]);
	return bench_median(v, base->n);
}

/* A pool of one mbuf holding the frame, its metadata what the switch leaves on a frame. */
static struct rte_mbuf *
bench_writer_mbuf(struct rte_mempool **pool)
{
	struct emu_pkt_meta *meta;
	struct rte_mbuf *m;
	struct emu_err err;

	*pool = emu_pool_create("bcap_w", 63, 2048 + RTE_PKTMBUF_HEADROOM,
				(int)rte_socket_id(), &err);
	if (*pool == NULL || (m = rte_pktmbuf_alloc(*pool)) == NULL) {
		fprintf(stderr, "bench_capture: writer pool: %s\n", err.msg);
		return NULL;
	}
	memcpy(rte_pktmbuf_append(m, (uint16_t)bench_frame_len), bench_frame, bench_frame_len);
	meta = emu_meta(m);
	memset(meta, 0, sizeof(*meta));
	meta->in_port = 0;
	meta->out_port = 1;
	meta->prio = 3;
	meta->trace.t_in_ns = 1764590400123456789ULL;
	meta->trace.t_enq_ns = 1;
	meta->trace.qdepth_bytes = 186368;
	meta->trace.wait_ns = 14200;
	return m;
}

int
main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "epochs", required_argument, NULL, 'e' },
		{ "epoch-ms", required_argument, NULL, 'm' },
		{ "quick", no_argument, NULL, 'q' },
		{ "writer-only", no_argument, NULL, 'w' },
		{ "pipeline-only", no_argument, NULL, 'p' },
		{ "ring", required_argument, NULL, 'r' },
		{ "huge", no_argument, NULL, 'H' },
		{ "only", required_argument, NULL, 'o' },
		{ NULL, 0, NULL, 0 },
	};
	char prefix[64], file[128], file1[140], jsons[BENCH_N_SIDES][2048], rundir[128];
	char vdev0[96], vdev1[96];
	char *eal[] = { argv[0], "--no-huge", "-m", "2048", "--no-pci", "-l", "0-1", prefix,
			"--log-level=lib.eal:error", "--no-telemetry", vdev0, vdev1, NULL };
	static struct bench_side sides[BENCH_N_SIDES] = {
		{ .name = "no capture" },
		{ .name = "headers 128 B" },
		{ .name = "+ ann. all" },
		{ .name = "+ ann. events" },
	};
	static struct bench_writer writers[] = {
		{ .name = "pcapng, headers", .annotate = false },
		{ .name = "pcapng, annotated", .annotate = true },
		{ .name = "headers, /dev/null", .annotate = false, .devnull = true },
		{ .name = "annotated, /dev/null", .annotate = true, .devnull = true },
	};
	struct emu_pipeline *pl = NULL;
	struct rte_mempool *wpool = NULL;
	struct emu_switch *sw = NULL;
	unsigned int epochs = 16, e, s, worker;
	bool writer_only = false, pipeline_only = false;
	int only = -1; /* --only: one pipeline side alone (for callgrind), no ratios */
	uint32_t ring = BENCH_RING; /* the pipeline's capture ring (records) */
	struct rte_mbuf *wm = NULL;
	struct emu_err err;
	uint64_t ms = 60; /* the ring holds an epoch: the cost is measured without losses */
	json_t *root;
	int c, rc = 1;

	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		if (c == 'e')
			epochs = (unsigned int)atoi(optarg);
		else if (c == 'm')
			ms = (uint64_t)atoll(optarg);
		else if (c == 'q') {
			epochs = 2;
			ms = 50;
		} else if (c == 'w')
			writer_only = true;
		else if (c == 'p')
			pipeline_only = true;
		else if (c == 'r')
			ring = (uint32_t)atol(optarg);
		else if (c == 'o') {
			for (s = 0; s < BENCH_N_SIDES; s++)
				if (strcmp(optarg, (const char *[]){ "none", "headers", "annotated",
								      "events" }[s]) == 0)
					only = (int)s;
			if (only < 0) {
				fprintf(stderr,
					"bench_capture: --only none|headers|annotated|events\n");
				return 2;
			}
			pipeline_only = true;
		} else if (c == 'H')
			/* hugepages, as a deployment runs (1024 free 2 MB pages), without files */
			eal[1] = "--in-memory";
		else
			return 2;
	}
	if (epochs < 1 || epochs > BENCH_MAX_EPOCHS || ms < 1 || ring < 64 || ring > (1u << 26)) {
		fprintf(stderr, "bench_capture: --epochs 1-%d, --epoch-ms >= 1, --ring 64-%u\n",
			BENCH_MAX_EPOCHS, 1u << 26);
		return 2;
	}
	snprintf(prefix, sizeof(prefix), "--file-prefix=bcap_%d", (int)getpid());
	snprintf(rundir, sizeof(rundir), "/var/run/dpdk/bcap_%d", (int)getpid());
	snprintf(file, sizeof(file), "/tmp/bench_capture_%d.pcapng", (int)getpid());
	snprintf(file1, sizeof(file1), "/tmp/bench_capture_%d-1.pcapng", (int)getpid());
	snprintf(jsons[BENCH_PLAIN], sizeof(jsons[0]), "%s", bench_plain_json);
	snprintf(jsons[BENCH_HDR], sizeof(jsons[0]), bench_capture_json, file, ring, "none");
	snprintf(jsons[BENCH_ANN], sizeof(jsons[0]), bench_capture_json, file, ring, "all");
	snprintf(jsons[BENCH_EVT], sizeof(jsons[0]), bench_capture_json, file, ring, "events");
	if (bench_build_frame() != 0) {
		fprintf(stderr, "bench_capture: cannot build the frame\n");
		return 1;
	}
	/* bench_switch's ports: net_null hands out our pool's mbufs, already holding the frame */
	snprintf(vdev0, sizeof(vdev0), "--vdev=net_null0,copy=0,size=%u", bench_frame_len);
	snprintf(vdev1, sizeof(vdev1), "--vdev=net_null1,copy=0,size=%u,no-rx=1", bench_frame_len);
	if (rte_eal_init((int)RTE_DIM(eal) - 1, eal) < 0) {
		fprintf(stderr, "bench_capture: EAL init failed\n");
		return 1;
	}
	worker = rte_get_next_lcore(rte_lcore_id(), 1, 0);
	if (worker >= RTE_MAX_LCORE) {
		fprintf(stderr, "bench_capture: needs two lcores\n");
		goto out;
	}
	root = json_loads(bench_plain_json, 0, NULL);
	if (root == NULL || emu_pipeline_from_json(root, "bench", &pl, &err) != 0) {
		json_decref(root);
		fprintf(stderr, "bench_capture: pipeline: %s\n", err.msg);
		goto out;
	}
	json_decref(root);
	bench_pool = emu_pool_create("bcap_pkts", emu_pipeline_mbufs_needed(pl, 1024, 1024),
				     emu_pipeline_data_room(pl), (int)rte_socket_id(), &err);
	if (bench_pool == NULL) {
		fprintf(stderr, "bench_capture: %s\n", err.msg);
		goto out;
	}
	rte_mempool_obj_iter(bench_pool, bench_fill, NULL);
	for (s = 0; s < 2; s++) {
		char name[16];

		snprintf(name, sizeof(name), "net_null%u", s);
		if (rte_eth_dev_get_port_by_name(name, &bench_ports[s]) != 0 ||
		    bench_port_setup(bench_ports[s]) != 0) {
			fprintf(stderr, "bench_capture: port %s cannot be set up\n", name);
			goto out;
		}
	}
	for (e = 0; e < epochs && !writer_only; e++)
		for (s = 0; s < BENCH_N_SIDES; s++)
			if ((only < 0 || (int)s == only) &&
			    bench_epoch(jsons[s], &sides[s], ms, worker,
					s == BENCH_PLAIN ? NULL : file) != 0)
				goto out;
	/* the writer alone; the annotations come from a switch (port and reason names) */
	if ((sw = emu_switch_create(pl, bench_pool, 1, &err)) == NULL ||
	    (wm = bench_writer_mbuf(&wpool)) == NULL) {
		fprintf(stderr, "bench_capture: writer setup failed\n");
		goto out;
	}
	for (e = 0; e < epochs && !pipeline_only; e++)
		for (s = 0; s < RTE_DIM(writers); s++)
			if (bench_writer_epoch(&writers[s], sw, wm, ms,
					       writers[s].devnull ? "/dev/null" : file) != 0)
				goto out;

	printf("bench_capture: %u epochs x %" PRIu64 " ms; bench_switch's pipeline (parse, forward "
	       "pairs, TM at 1600 Gb/s) on a worker lcore, %u-byte RC RDMA WRITE frames p0 -> p1;\n"
	       "  capture of every frame leaving p1 (pcapng, snaplen %u, ring %u), writer on the "
	       "main lcore (sleep 10 ms, emu_switch_service)\n", epochs, ms, bench_frame_len,
	       BENCH_SNAPLEN, ring);
	if (only >= 0) {
		printf("  %s alone: %.2f Mpps, %.2f Mpps per second of the worker's CPU, %" PRIu64
		       " packets forwarded in all\n", sides[only].name,
		       bench_median(sides[only].mpps, sides[only].n),
		       bench_median(sides[only].cpu_mpps, sides[only].n), sides[only].pkts);
		rc = 0;
		goto out;
	}
	if (!writer_only) {
		printf("  %-16s %8s %10s %10s  %-16s %s\n", "side", "Mpps", "Mpps/cpu-s", "ns/pkt cpu",
		       "added cpu (wall)", "lost (ring full)");
		for (s = 0; s < BENCH_N_SIDES; s++) {
			double cpu = bench_median(sides[s].cpu_mpps, sides[s].n);
			char added[64] = "";
			char lost[64] = "";

			if (s != BENCH_PLAIN) {
				/* headers over no capture, annotations over headers */
				const struct bench_side *b = &sides[s == BENCH_HDR ? BENCH_PLAIN :
									     BENCH_HDR];

				snprintf(added, sizeof(added), "%+5.1f%% (%+.1f%%)",
					 100 * bench_added(&sides[s], b, &sides[BENCH_PLAIN], true),
					 100 * bench_added(&sides[s], b, &sides[BENCH_PLAIN], false));
				snprintf(lost, sizeof(lost), "%" PRIu64 " of %" PRIu64, sides[s].lost,
					 sides[s].pkts);
			}
			printf("  %-16s %8.2f %10.2f %10.1f  %-16s %s\n", sides[s].name,
			       bench_median(sides[s].mpps, sides[s].n), cpu, 1e3 / cpu, added, lost);
		}
		printf("  (added: time per packet over the headers line (headers: over no capture), "
		       "as a share of the no-capture pipeline's; median of the epochs' ratios;\n"
		       "   annotations: \"all\", every frame with its comment, and \"events\", the "
		       "default, where nothing happens to these frames)\n");
		printf("  headers + annotations (all) together: %+.1f%% (wall %+.1f%%) of the pipeline's time "
		       "per packet\n",
		       100 * bench_added(&sides[BENCH_ANN], &sides[BENCH_PLAIN], &sides[BENCH_PLAIN], true),
		       100 * bench_added(&sides[BENCH_ANN], &sides[BENCH_PLAIN], &sides[BENCH_PLAIN],
					 false));
	}
	printf("  writer alone (main lcore, %u-byte records to a file, rotated at 64 MB):\n",
	       BENCH_SNAPLEN);
	for (s = 0; s < RTE_DIM(writers); s++)
		printf("    %-20s %8.2f M records/s (median; %" PRIu64 " records); the worker's "
		       "side of it alone %.1f ns a record\n",
		       writers[s].name, bench_median(writers[s].mrec, writers[s].n),
		       writers[s].records, bench_median(writers[s].push_ns, writers[s].n));
	if (!writer_only)
		printf("  sustained, to a file: the writer takes %.2f M records/s (headers), %.2f "
		       "(annotated); the pipeline with the capture forwards %.2f / %.2f Mpps per "
		       "second of its core\n", bench_median(writers[0].mrec, writers[0].n),
		       bench_median(writers[1].mrec, writers[1].n),
		       bench_median(sides[BENCH_HDR].cpu_mpps, sides[BENCH_HDR].n),
		       bench_median(sides[BENCH_ANN].cpu_mpps, sides[BENCH_ANN].n));
	rc = 0;
out:
	if (wm != NULL)
		rte_pktmbuf_free(wm);
	rte_mempool_free(wpool);
	emu_switch_free(sw);
	for (s = 0; s < 2 && bench_pool != NULL; s++) {
		rte_eth_dev_stop(bench_ports[s]);
		rte_eth_dev_close(bench_ports[s]);
	}
	rte_mempool_free(bench_pool);
	emu_pipeline_free(pl);
	unlink(file);
	unlink(file1);
	rte_eal_cleanup();
	emu_runtime_dir_remove(rundir);
	return rc;
}
