/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rocegen's report: the table and per-QP counters on stdout and the --json document, written
 * under a temporary name and renamed into place when complete.
 */
#include <fcntl.h>
#include <libgen.h>
#include <unistd.h>
#include <sys/stat.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_common.h>

#include "lib/node/node_load.h"
#include "rg_main.h"


void
rg_shards_merge(struct rg_state *st)
{
	unsigned int k, r;

	for (k = 0; k < st->n_shards; k++) {
		struct rg_state *sk = st->shards[k];

		sk->rx_frames = sk->tx_frames = sk->pfc_rcvd = sk->pause_rcvd = 0;
		for (r = 0; r < st->n_ports; r++) {
			sk->rx_frames += sk->tp[r].rx_frames;
			sk->tx_frames += sk->tp[r].tx_frames;
			sk->pfc_rcvd += sk->tp[r].pfc.pfc_rcvd;
			sk->pause_rcvd += sk->tp[r].pfc.pause_rcvd;
		}
		sk->pause_own = sk->pfc_rcvd + sk->pause_rcvd;
	}
	for (k = 1; k < st->n_shards; k++) {
		const struct rg_state *sk = st->shards[k];

		for (r = 0; r < st->n_rows && r < sk->n_rows; r++) {
			st->row_sizes[r] += sk->row_sizes[r];
			st->row_us[r] = RTE_MAX(st->row_us[r], sk->row_us[r]);
			st->row_intra_us[r] = RTE_MAX(st->row_intra_us[r], sk->row_intra_us[r]);
		}
		st->n_rows = RTE_MIN(st->n_rows, sk->n_rows);
		st->local_bytes += sk->local_bytes;
		st->wire_bytes += sk->wire_bytes;
		st->tx_dropped += sk->tx_dropped;
		st->tx_deferred += sk->tx_deferred;
		st->rx_other += sk->rx_other;
		st->rx_lost += sk->rx_lost;
		st->arp_replies_sent += sk->arp_replies_sent;
		st->pfc_rcvd += sk->pfc_rcvd;
		st->pause_rcvd += sk->pause_rcvd;
		st->nccl_msgs_posted += sk->nccl_msgs_posted;
		st->cts_posted += sk->cts_posted;
		st->ar_imm_posted += sk->ar_imm_posted;
		st->imm_unexpected += sk->imm_unexpected;
		for (r = 0; r < RG_CYC_N; r++) {
			st->cyc[r] += sk->cyc[r];
			st->cyc_frames[r] += sk->cyc_frames[r];
		}
	}
}

/* TSC cycles per frame of each part of the loop (all shards), and the PMD's share of a frame
 * sent plus a frame received: what the port itself costs (memif: its two copies). */
static json_t *
rg_cycles_json(const struct rg_state *st, FILE *f)
{
	static const char *const names[RG_CYC_N] = { "rx_burst", "rx_proc", "tx_build",
						       "tx_burst" };
	double c[RG_CYC_N], pair;
	json_t *o = json_object();
	unsigned int i;

	for (i = 0; i < RG_CYC_N; i++) {
		c[i] = st->cyc_frames[i] > 0 ? (double)st->cyc[i] / (double)st->cyc_frames[i] : 0;
		json_object_set_new(o, names[i], json_real(c[i]));
	}
	pair = c[RG_CYC_RX_BURST] + c[RG_CYC_RX_PROC] + c[RG_CYC_TX_BUILD] + c[RG_CYC_TX_BURST];
	json_object_set_new(o, "tsc_hz", json_integer((json_int_t)rte_get_tsc_hz()));
	json_object_set_new(o, "pmd_share", json_real(pair > 0 ? (c[RG_CYC_RX_BURST] +
						       c[RG_CYC_TX_BURST]) / pair : 0));
	fprintf(f, "# cycles per frame: rx_burst %.0f rx_proc %.0f tx_build %.0f tx_burst %.0f "
		"(a frame each way: %.0f ns, %.0f%% in the PMD)\n", c[0], c[1], c[2], c[3],
		pair * 1e9 / (double)rte_get_tsc_hz(), pair > 0 ? 100 * (c[0] + c[3]) / pair : 0);
	return o;
}

/* --workers: one object per shard (its lcore, queue and frames) */
static json_t *
rg_workers_json(const struct rg_state *st)
{
	json_t *a = json_array();
	unsigned int k;

	for (k = 0; k < st->n_shards; k++) {
		const struct rg_state *sk = st->shards[k];

		json_array_append_new(a, json_pack(
			"{s:i, s:i, s:i, s:I, s:I, s:I, s:I, s:I, s:I, s:I}", "shard", (int)k,
			"lcore", (int)sk->lcore, "queue", (int)sk->queue,
			"rx_packets", (json_int_t)sk->rx_frames,
			"tx_packets", (json_int_t)sk->tx_frames,
			"handoff_in", (json_int_t)sk->handoff_in,
			"handoff_out", (json_int_t)sk->handoff_out,
			"handoff_dropped", (json_int_t)sk->handoff_dropped,
			"pause_frames_received", (json_int_t)sk->pause_own,
			"pause_frames_applied", (json_int_t)sk->pause_applied));
	}
	return a;
}

/* One object per port (rail): its frames over every shard, its rate, and the payload its
 * requester QPs sent across rails (no PXN) and as a PXN relay. */
static json_t *
rg_ports_json(const struct rg_state *st, FILE *f)
{
	json_t *a = json_array();
	unsigned int r, k, q;

	for (r = 0; r < st->n_ports; r++) {
		uint64_t tx = 0, rx = 0, bytes = 0, pfc = 0, cross = 0, pxn = 0, pay;
		char mac[18];

		for (k = 0; k < st->n_shards; k++) {
			const struct rg_state *sk = st->shards[k];

			tx += sk->tp[r].tx_frames;
			rx += sk->tp[r].rx_frames;
			bytes += sk->tp[r].tx_bytes;
			pfc += sk->tp[r].pfc.pfc_rcvd + sk->tp[r].pfc.pause_rcvd;
			for (q = 0; q < sk->n_qp; q++) {
				const struct rg_qp *x = &sk->qps[q];

				if (x->port != r || !x->requester)
					continue;
				pay = rg_ep_tx_payload(&x->ep);
				cross += x->cross_rail ? pay : 0;
				pxn += x->pxn ? pay : 0;
			}
		}
		snprintf(mac, sizeof(mac), "%02x:%02x:%02x:%02x:%02x:%02x", st->mac[r][0],
			 st->mac[r][1], st->mac[r][2], st->mac[r][3], st->mac[r][4], st->mac[r][5]);
		json_array_append_new(a, json_pack(
			"{s:i, s:i, s:s, s:f, s:I, s:I, s:I, s:I, s:I, s:I}", "rail", (int)r,
			"port_id", (int)st->port_ids[r], "mac", mac,
			"paced_gbps", 8.0 / st->port_ns_per_byte * st->n_shards,
			"tx_packets", (json_int_t)tx, "rx_packets", (json_int_t)rx,
			"tx_bytes", (json_int_t)bytes, "pause_frames_received", (json_int_t)pfc,
			"cross_rail_payload_bytes", (json_int_t)cross,
			"pxn_payload_bytes", (json_int_t)pxn));
		if (st->n_ports > 1)
			fprintf(f, "# rail %u: port %u tx_packets=%" PRIu64 " rx_packets=%" PRIu64
				" tx_bytes=%" PRIu64 " pause_frames=%" PRIu64
				" cross_rail_payload_bytes=%" PRIu64 " pxn_payload_bytes=%" PRIu64
				"\n", r, st->port_ids[r], tx, rx, bytes, pfc, cross, pxn);
	}
	return a;
}

/* Every process's first address, in rank order (--hosts / --ip and --peer-ip). */
static json_t *
rg_hosts_json(const struct rg_state *st)
{
	json_t *a = json_array();
	unsigned int p;

	for (p = 0; p < st->o.n_procs; p++) {
		char ip[16];

		snprintf(ip, sizeof(ip), "%u.%u.%u.%u", st->o.hosts[p][0], st->o.hosts[p][1],
			 st->o.hosts[p][2], st->o.hosts[p][3]);
		json_array_append_new(a, json_string(ip));
	}
	return a;
}

/* The table and counters on stdout, and as JSON into @p out (NULL: none); -1 if that failed. */
int
rg_report(struct rg_state *st, struct rg_out *out)
{
	const enum rg_coll coll = st->o.coll;
	double factor = rg_busbw_factor(coll, st->R);
	unsigned int q, c, r, k, shown = 0, n_qp = 0;
	uint64_t tot[RG_EP_MAX_CTRS] = { 0 };
	const struct rg_ep *first = st->n_qp > 0 ? &st->qps[0].ep : NULL;
	json_t *root = json_object(), *rows = json_array(), *qps = json_array(), *row;
	int rc = 0;

	printf("#\n# %s%s over %u ranks (%u processes x %u), %u QP(s) per pair, MTU %u\n",
	       rg_coll_name(coll), coll == RG_COLL_ALLREDUCE ?
	       (st->o.algo == RG_ALGO_TREE ? " (tree)" : st->o.algo == RG_ALGO_HIER ? " (hier)" :
		" (ring)") : "", st->R,
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
				"algbw_GBps", algbw, "busbw_GBps", algbw * factor);
		if (st->o.node_on)
			json_object_set_new(row, "intra_node_us", json_real(st->row_intra_us[r]));
		json_array_append_new(rows, row);
	}
	printf("# per-QP counters (QPs that carried traffic)\n");
	for (k = 0; k < st->n_shards; k++) {
		const struct rg_state *sk = st->shards[k];

		for (q = 0; q < sk->n_qp; q++, n_qp++) {
			const struct rg_ep *qp = &sk->qps[q].ep;
			json_t *o = rg_ep_json(qp);

			for (c = 0; c < rg_ep_n_ctrs(qp); c++)
				tot[c] += rg_ep_ctr(qp, c);
			if (o != NULL) {
				json_object_set_new(o, "requester",
						    json_boolean(sk->qps[q].requester));
				if (st->n_shards > 1)
					json_object_set_new(o, "shard", json_integer(k));
				json_array_append_new(qps, o);
			}
			if (!rg_ep_carried(qp))
				continue;
			if (shown++ >= 32)
				continue;
			rg_ep_print(qp, stdout, "# ");
		}
	}
	if (shown > 32)
		printf("#  (%u more in the JSON)\n", shown - 32);
	printf("#  all %u QPs:", n_qp);
	for (c = 0; first != NULL && c < rg_ep_n_ctrs(first); c++)
		if (tot[c] != 0)
			printf(" %s=%" PRIu64, rg_ep_ctr_name(first, c), tot[c]);
	printf("\n# in-process rank-to-rank bytes (not on the wire): %" PRIu64 "\n", st->local_bytes);
	printf("# port: tx_dropped_by_pmd=%" PRIu64 " tx_deferred=%" PRIu64 " rx_other=%" PRIu64
	       " pfc_rcvd=%" PRIu64
	       " arp_replies=%" PRIu64 " rx_lost_on_purpose=%" PRIu64 "\n",
	       st->tx_dropped, st->tx_deferred, st->rx_other, st->pfc_rcvd,
	       st->arp_replies_sent, st->rx_lost);
	for (k = 0; st->n_shards > 1 && k < st->n_shards; k++)
		printf("# worker %u: lcore %u queue %u rx_packets=%" PRIu64 " tx_packets=%" PRIu64
		       " handoff_in=%" PRIu64 " handoff_out=%" PRIu64 " handoff_dropped=%" PRIu64
		       "\n", k, st->shards[k]->lcore, st->shards[k]->queue,
		       st->shards[k]->rx_frames, st->shards[k]->tx_frames,
		       st->shards[k]->handoff_in, st->shards[k]->handoff_out,
		       st->shards[k]->handoff_dropped);
	json_object_set_new(root, "test", json_string(rg_coll_name(coll)));
	json_object_set_new(root, "algo", json_string(coll == RG_COLL_ALLREDUCE ?
						      rg_algo_name(st->o.algo) : "ring"));
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
	json_object_set_new(root, "workers", rg_workers_json(st));
	json_object_set_new(root, "ports", rg_ports_json(st, stdout));
	json_object_set_new(root, "pxn", json_boolean(st->o.pxn));
	/* who is which rank: rocestat --rocegen-json reads these three */
	json_object_set_new(root, "hosts", rg_hosts_json(st));
	json_object_set_new(root, "ranks_per_process", json_integer(st->o.n_ranks));
	json_object_set_new(root, "rails", json_integer(st->n_ports));
	json_object_set_new(root, "cycles_per_frame", rg_cycles_json(st, stdout));
	if (st->o.node_on) {
		json_t *n = node_json(&st->o.node, &st->o.node_eval);

		/* per NIC, Gb/s: min(line, PCIe, host buffer) (docs/node.md) */
		json_object_set(root, "host_cap_gbps", json_object_get(n, "host_cap_gbps"));
		json_object_set_new(root, "node", n);
		for (r = 0; r < st->n_rows; r++)
			printf("# %12" PRIu64 " bytes: intra-node phase %.1f us of %.1f (the node "
			       "model's time)\n", st->row_sizes[r], st->row_intra_us[r],
			       st->row_us[r]);
	}
	json_object_set_new(root, "proto", json_string(rg_proto_name(st->o.proto)));
	if (st->o.algo_auto && coll == RG_COLL_ALLREDUCE) {
		json_t *t = json_object();
		static const char *const names[2][3] = { { "tree_ll", "tree_ll128", "tree_simple" },
							  { "ring_ll", "ring_ll128", "ring_simple" } };

		for (r = 0; r < 2; r++)
			for (c = 0; c < 3; c++)
				json_object_set_new(t, names[r][c],
						    json_real(st->o.auto_times_us[r][c]));
		json_object_set_new(root, "algo_auto_times_us", t);
	}
	if (st->o.proto != RG_PROTO_NONE) {
		json_object_set_new(root, "nccl_max_message_bytes",
				    json_integer((json_int_t)rg_nccl_max_msg(st)));
		json_object_set_new(root, "nccl_messages_posted",
				    json_integer((json_int_t)st->nccl_msgs_posted));
		json_object_set_new(root, "cts_writes_posted",
				    json_integer((json_int_t)st->cts_posted));
		json_object_set_new(root, "adaptive_routing", json_boolean(st->o.ar));
		json_object_set_new(root, "ar_threshold_bytes",
				    json_integer((json_int_t)st->o.ar_threshold));
		json_object_set_new(root, "ar_imm_writes_posted",
				    json_integer((json_int_t)st->ar_imm_posted));
		printf("# NCCL wire pattern (%s): %" PRIu64 " messages of at most %" PRIu64
		       " bytes, %" PRIu64 " CTS writes of %d bytes", rg_proto_name(st->o.proto),
		       st->nccl_msgs_posted, rg_nccl_max_msg(st), st->cts_posted, RG_CTS_BYTES);
		if (st->o.ar)
			printf("; adaptive routing: %" PRIu64 " of them as WRITE + 0-byte WRITE "
			       "with immediate (over %" PRIu64 " bytes)", st->ar_imm_posted,
			       st->o.ar_threshold);
		printf("\n");
	}
	json_object_set_new(root, "results", rows);
	json_object_set_new(root, "qps", qps);
	json_object_set_new(root, "tx_dropped_by_pmd", json_integer((json_int_t)st->tx_dropped));
	json_object_set_new(root, "tx_deferred", json_integer((json_int_t)st->tx_deferred));
	json_object_set_new(root, "rx_lost_on_purpose", json_integer((json_int_t)st->rx_lost));
	json_object_set_new(root, "pfc_received", json_integer((json_int_t)st->pfc_rcvd));
	json_object_set_new(root, "pause_received", json_integer((json_int_t)st->pause_rcvd));
	if (out != NULL && rg_out_write(out, root) != 0)
		rc = -1;
	json_decref(root);
	return rc;
}

/* Open @p path for the --json output (struct rg_out); prints one line and fails if it cannot. */
int
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
void
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
int
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
