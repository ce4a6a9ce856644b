/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bench_capture: can the capture writer keep up with the pipeline? A worker lcore drives the
 * switch as live mode does (rx a burst on p0, tx_prepare on p1, clock from the TSC) with and
 * without an egress header capture (snaplen 64) of every frame, while the main lcore does what
 * live mode's main loop does (sleep 10 ms, emu_switch_service()). Epochs alternate the two
 * pipelines. Reports the pipeline's Mpps with and without the capture (ratio), the writer's
 * rate, and how many frames the capture lost (ring full): the writer keeps up when that is 0
 * and it wrote as many records as the pipeline forwarded. Fails only when something is
 * functionally wrong (nothing forwarded, captured frames missing from the file).
 *
 * Usage: bench_capture [--epochs N] [--epoch-ms MS] [--quick]    (default 6 x 300 ms)
 */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>
#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>

#include "lib/base/emu_err.h"
#include "lib/base/emu_rundir.h"
#include "lib/stage/emu_stage.h"
#include "lib/switch/emu_switch.h"
#include "lib/proto/roce_proto.h"

static const char bench_plain_json[] =
	"{ \"ports\": [ { \"name\": \"p0\", \"mtu\": 1500 }, { \"name\": \"p1\", \"mtu\": 1500 } ],"
	"  \"ingress\": [ { \"type\": \"parse\" }, { \"type\": \"forward\" } ],"
	"  \"tm\": { \"ports\": [ { \"port\": \"p0\", \"rate_gbps\": 1600 },"
	"                       { \"port\": \"p1\", \"rate_gbps\": 1600 } ] } }";

static const char bench_capture_json[] =
	"{ \"ports\": [ { \"name\": \"p0\", \"mtu\": 1500 }, { \"name\": \"p1\", \"mtu\": 1500 } ],"
	"  \"ingress\": [ { \"type\": \"parse\" }, { \"type\": \"forward\" } ],"
	"  \"egress\": [ { \"type\": \"capture\", \"file\": \"%s\", \"snaplen\": 64,"
	"                \"ring_size\": 1048576, \"ports\": [\"p1\"] } ],"
	"  \"tm\": { \"ports\": [ { \"port\": \"p0\", \"rate_gbps\": 1600 },"
	"                       { \"port\": \"p1\", \"rate_gbps\": 1600 } ] } }";

struct bench_run {
	struct emu_switch *sw;
	struct rte_mempool *pool;
	uint64_t ms;
	volatile bool done;
	uint64_t pkts;     /* forwarded (tx on p1) */
	double secs;
};

static int
bench_worker(void *arg)
{
	struct bench_run *r = arg;
	uint64_t hz = rte_get_tsc_hz(), t0 = rte_rdtsc(), end = t0 + hz * r->ms / 1000;
	static const uint8_t dmac[6] = { 2, 0, 0, 0, 0, 2 }, smac[6] = { 2, 0, 0, 0, 0, 1 };
	struct roce_hdr_params hp = roce_hdr_params_default();
	struct rte_mbuf *burst[EMU_BURST], **tx;
	uint8_t frame[128];
	uint64_t now, sent = 0;
	uint32_t seq = 0;
	uint16_t n, i;
	int len;

	memcpy(hp.dst_mac, dmac, 6);
	memcpy(hp.src_mac, smac, 6);
	hp.dest_qp = 0x45;
	len = roce_build_ack(frame, sizeof(frame), &hp, ROCE_AETH_ACK | ROCE_AETH_CREDIT_UNLIMITED,
			     0);
	memset(frame + len, 0, 64 - len);
	len = 64;
	while ((now = rte_rdtsc()) < end) {
		uint64_t ns = (now - t0) * 1000000000ULL / hz;

		if (rte_pktmbuf_alloc_bulk(r->pool, burst, EMU_BURST) == 0) {
			for (i = 0; i < EMU_BURST; i++) {
				frame[60] = (uint8_t)seq++;
				memcpy(rte_pktmbuf_append(burst[i], (uint16_t)len), frame, len);
			}
			emu_switch_rx(r->sw, 0, burst, EMU_BURST, ns);
		}
		n = emu_switch_tx_prepare(r->sw, 1, ns + 1000, &tx);
		rte_pktmbuf_free_bulk(tx, n);
		emu_switch_tx_done(r->sw, 1, n);
		sent += n;
	}
	r->secs = (double)(rte_rdtsc() - t0) / (double)hz;
	r->pkts = sent;
	r->done = true;
	return 0;
}

struct bench_side {
	const char *name;
	double mpps[1000];
	unsigned int n;
	uint64_t pkts, captured, lost, written;
};

static int
bench_epoch(const char *json, struct bench_side *side, uint64_t ms, unsigned int worker,
	    const char *file)
{
	struct emu_pipeline *pl = NULL;
	struct bench_run r = { .ms = ms };
	struct emu_err err;
	json_error_t jerr;
	json_t *root = json_loads(json, 0, &jerr);
	char name[32];
	static unsigned int seq;
	int rc = -1;

	if (root == NULL || emu_pipeline_from_json(root, "bench", &pl, &err) != 0) {
		fprintf(stderr, "bench_capture: pipeline: %s\n", root ? err.msg : jerr.text);
		goto out;
	}
	snprintf(name, sizeof(name), "bcap_%u", seq++);
	r.pool = emu_pool_create(name, emu_pipeline_mbufs_needed(pl, 1024, 1024),
				 emu_pipeline_data_room(pl), (int)rte_socket_id(), &err);
	if (r.pool == NULL || (r.sw = emu_switch_create(pl, r.pool, 1, &err)) == NULL) {
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
	side->mpps[side->n++] = (double)r.pkts / r.secs / 1e6;
	side->pkts += r.pkts;
	if (file != NULL) {
		int64_t cap = emu_switch_stage_counter(r.sw, "capture", "captured");
		int64_t full = emu_switch_stage_counter(r.sw, "capture", "not_captured_ring_full");
		int64_t nomb = emu_switch_stage_counter(r.sw, "capture", "not_captured_nombuf");
		struct stat st;

		side->captured += (uint64_t)cap;
		side->lost += (uint64_t)(full + nomb);
		if (emu_switch_report_failures(r.sw, stderr) > 0 || stat(file, &st) != 0) {
			fprintf(stderr, "bench_capture: the capture file failed\n");
			goto out;
		}
		/* 24-byte header, then 16 + 64 bytes per record */
		side->written += ((uint64_t)st.st_size - 24) / 80;
		if ((uint64_t)cap + (uint64_t)full + (uint64_t)nomb != r.pkts ||
		    ((uint64_t)st.st_size - 24) / 80 != (uint64_t)cap) {
			fprintf(stderr, "bench_capture: %" PRIu64 " forwarded, %" PRId64 " captured, %"
				PRId64 " lost, %" PRIu64 " in the file: frames unaccounted\n", r.pkts,
				cap, full + nomb, ((uint64_t)st.st_size - 24) / 80);
			goto out;
		}
	}
	if (r.pkts == 0) {
		fprintf(stderr, "bench_capture: nothing forwarded\n");
		goto out;
	}
	rc = 0;
out:
	emu_switch_free(r.sw);
	rte_mempool_free(r.pool);
	emu_pipeline_free(pl);
	json_decref(root);
	return rc;
}

static int
bench_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double
bench_median(double *v, unsigned int n)
{
	qsort(v, n, sizeof(*v), bench_cmp);
	return n ? v[n / 2] : 0;
}

int
main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "epochs", required_argument, NULL, 'e' },
		{ "epoch-ms", required_argument, NULL, 'm' },
		{ "quick", no_argument, NULL, 'q' },
		{ NULL, 0, NULL, 0 },
	};
	char prefix[64], file[128], json[2048], rundir[128];
	char *eal[] = { argv[0], "--no-huge", "-m", "1536", "--no-pci", "-l", "0-1", prefix,
			"--log-level=lib.eal:error", "--no-telemetry", NULL };
	struct bench_side plain = { .name = "no capture" }, cap = { .name = "capture 64 B" };
	unsigned int epochs = 6, e, worker;
	uint64_t ms = 300;
	int c, rc = 1;

	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		if (c == 'e')
			epochs = (unsigned int)atoi(optarg);
		else if (c == 'm')
			ms = (uint64_t)atoll(optarg);
		else if (c == 'q') {
			epochs = 2;
			ms = 50;
		} else
			return 2;
	}
	if (epochs < 1 || epochs > 1000 || ms < 1) {
		fprintf(stderr, "bench_capture: --epochs 1-1000, --epoch-ms >= 1\n");
		return 2;
	}
	snprintf(prefix, sizeof(prefix), "--file-prefix=bcap_%d", (int)getpid());
	snprintf(rundir, sizeof(rundir), "/var/run/dpdk/bcap_%d", (int)getpid());
	snprintf(file, sizeof(file), "/tmp/bench_capture_%d.pcap", (int)getpid());
	snprintf(json, sizeof(json), bench_capture_json, file);
	if (rte_eal_init((int)RTE_DIM(eal) - 1, eal) < 0) {
		fprintf(stderr, "bench_capture: EAL init failed\n");
		return 1;
	}
	worker = rte_get_next_lcore(rte_lcore_id(), 1, 0);
	if (worker >= RTE_MAX_LCORE) {
		fprintf(stderr, "bench_capture: needs two lcores\n");
		goto out;
	}
	for (e = 0; e < epochs; e++) {
		if (bench_epoch(bench_plain_json, &plain, ms, worker, NULL) != 0 ||
		    bench_epoch(json, &cap, ms, worker, file) != 0)
			goto out;
	}
	printf("bench_capture: %u epochs x %" PRIu64 " ms, 64-byte RoCE frames, p0 -> p1, "
	       "header capture (snaplen 64) of every frame leaving p1, writer on the main lcore\n",
	       epochs, ms);
	printf("  %-14s %8.2f Mpps (median)\n", plain.name, bench_median(plain.mpps, plain.n));
	printf("  %-14s %8.2f Mpps (median)   ratio capture/no capture %.2f\n", cap.name,
	       bench_median(cap.mpps, cap.n),
	       bench_median(cap.mpps, cap.n) / bench_median(plain.mpps, plain.n));
	printf("  writer: %" PRIu64 " of %" PRIu64 " frames written (%.2f Mrec/s over the "
	       "capture epochs), %" PRIu64 " lost to a full ring (%.4f%%)\n", cap.written,
	       cap.pkts, (double)cap.written / ((double)epochs * (double)ms / 1000.0) / 1e6,
	       cap.lost, cap.pkts ? 100.0 * (double)cap.lost / (double)cap.pkts : 0.0);
	rc = 0;
out:
	unlink(file);
	rte_eal_cleanup();
	emu_runtime_dir_remove(rundir);
	return rc;
}
