/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The "where the bandwidth went" outputs (ana_bw.c computes them): a section of the text
 * report, the JSON object "bandwidth" (docs/rocestat.md) and bandwidth.csv, one row per IP
 * pair and part of its time, from which scripts/plot.py draws bandwidth.png (stacked time).
 */
#include <math.h>
#include <stdio.h>

#include <jansson.h>

#include "ana_internal.h"

static void
ana_bw_label(const struct ana *a, const struct ana_bw_pair *p, char *buf, size_t len)
{
	char s[48], d[48], rk[64] = "";

	(void)a;
	ana_ip_str(p->src_ip, p->ip_version, s, sizeof(s));
	ana_ip_str(p->dst_ip, p->ip_version, d, sizeof(d));
	if (p->src_rank >= 0 && p->dst_rank >= 0 && p->rail >= 0)
		snprintf(rk, sizeof(rk), " (rank %d -> %d, rail %d)", p->src_rank, p->dst_rank,
			 p->rail);
	else if (p->src_rank >= 0 && p->dst_rank >= 0)
		snprintf(rk, sizeof(rk), " (rank %d -> %d)", p->src_rank, p->dst_rank);
	snprintf(buf, len, "%s->%s%s", s, d, rk);
}

static double
ana_bw_gbps(uint64_t bytes, double span_ns)
{
	return span_ns > 0 ? bytes * 8.0 / span_ns : 0;
}

void
ana_bw_write_text(const struct ana *a, FILE *out)
{
	uint32_t i, k;

	if (a->n_bw == 0)
		return;
	fprintf(out, "#\n# Where the bandwidth went (line rate %g Gb/s%s): %% of each pair's time "
		"from its first data packet to the end of its last\n", a->o.link_gbps,
		a->o.expect_qps ? ", QPs expected per pair given" : "");
	fprintf(out, "# %-40s %4s %9s %9s %6s %9s %6s %6s %6s %6s %6s %6s\n", "IP pair", "QPs",
		"wire Gb/s", "peak Gb/s", "% line", "goodput", "line", "retx", "PFC", "DCQCN", "host",
		"idle");
	for (i = 0; i < a->n_bw; i++) {
		const struct ana_bw_pair *p = &a->bw[i];
		double span = p->span_ns > 0 ? p->span_ns : 1;
		char lbl[160];

		ana_bw_label(a, p, lbl, sizeof(lbl));
		fprintf(out, "  %-40s %4u %9.2f %9.2f %6.1f %9.2f", lbl, p->qps,
			ana_bw_gbps(p->wire_bytes, p->span_ns), p->peak_gbps,
			100 * ana_bw_gbps(p->wire_bytes, p->span_ns) / a->o.link_gbps,
			ana_bw_gbps(p->goodput_bytes, p->span_ns));
		for (k = 0; k < ANA_BW_PARTS; k++)
			fprintf(out, " %6.1f", 100 * p->part_ns[k] / span);
		fputc('\n', out);
	}
	for (i = 0; i < a->n_bw; i++) {
		const struct ana_bw_pair *p = &a->bw[i];
		char lbl[160];

		ana_bw_label(a, p, lbl, sizeof(lbl));
		if (p->n_find == 0)
			fprintf(out, "  %s: nothing found (%.0f%% of the line rate)\n", lbl,
				100 * ana_bw_gbps(p->wire_bytes, p->span_ns) / a->o.link_gbps);
		for (k = 0; k < p->n_find; k++)
			fprintf(out, "  FINDING %s [%s]: %s\n", lbl, p->find[k].layer,
				p->find[k].text);
	}
}

json_t *
ana_bw_json(const struct ana *a)
{
	json_t *pairs = json_array();
	uint32_t i, k;

	for (i = 0; i < a->n_bw; i++) {
		const struct ana_bw_pair *p = &a->bw[i];
		json_t *t = json_object(), *fs = json_array(), *o;
		char s[48], d[48], lbl[160];

		ana_ip_str(p->src_ip, p->ip_version, s, sizeof(s));
		ana_ip_str(p->dst_ip, p->ip_version, d, sizeof(d));
		ana_bw_label(a, p, lbl, sizeof(lbl));
		/* the parts are sums of whole-ns gaps and frame times at the line rate */
		for (k = 0; k < ANA_BW_PARTS; k++)
			json_object_set_new(t, ana_bw_part_name(k),
					    json_integer((json_int_t)llround(p->part_ns[k])));
		for (k = 0; k < p->n_find; k++)
			json_array_append_new(fs, json_pack("{s:s,s:s,s:s}", "kind",
				p->find[k].kind, "layer", p->find[k].layer, "text", p->find[k].text));
		o = json_pack("{s:s,s:s,s:s,s:i,s:I,s:I,s:I,s:I,s:I,s:f,s:f,s:f,s:f,s:I,s:o,s:o}",
			"label", lbl, "src", s, "dst", d, "qps", (int)p->qps, "span_ns",
			(json_int_t)llround(p->span_ns), "packets", (json_int_t)p->pkts,
			"retx_packets", (json_int_t)p->retx_pkts, "wire_bytes",
			(json_int_t)p->wire_bytes, "goodput_bytes", (json_int_t)p->goodput_bytes,
			"wire_gbps", ana_bw_gbps(p->wire_bytes, p->span_ns), "goodput_gbps",
			ana_bw_gbps(p->goodput_bytes, p->span_ns), "peak_gbps", p->peak_gbps,
			"line_fraction", ana_bw_gbps(p->wire_bytes, p->span_ns) / a->o.link_gbps,
			"cnps", (json_int_t)p->cnps, "time_ns", t, "findings", fs);
		json_object_set_new(o, "src_rank", p->src_rank >= 0 ? json_integer(p->src_rank) :
				    json_null());
		json_object_set_new(o, "dst_rank", p->dst_rank >= 0 ? json_integer(p->dst_rank) :
				    json_null());
		json_object_set_new(o, "rail", p->rail >= 0 ? json_integer(p->rail) : json_null());
		json_array_append_new(pairs, o);
	}
	return json_pack("{s:f,s:o,s:b,s:b,s:o}", "line_rate_gbps", a->o.link_gbps, "expect_qps",
			 a->o.expect_qps ? json_integer(a->o.expect_qps) : json_null(),
			 "ranks_from_nccl_log", a->nccl_seen, "ranks_from_rocegen_json",
			 a->rocegen_seen, "pairs", pairs);
}

void
ana_bw_csv(const struct ana *a, FILE *f)
{
	uint32_t i, k;

	fputs("pair,label,part,time_ns,share\n", f);
	for (i = 0; i < a->n_bw; i++) {
		const struct ana_bw_pair *p = &a->bw[i];
		char lbl[160];

		ana_bw_label(a, p, lbl, sizeof(lbl));
		for (k = 0; k < ANA_BW_PARTS; k++)
			fprintf(f, "%u,\"%s\",%s,%.0f,%.6f\n", i, lbl, ana_bw_part_name(k),
				p->part_ns[k], p->span_ns > 0 ? p->part_ns[k] / p->span_ns : 0);
	}
}
