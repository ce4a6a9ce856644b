/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Outputs, the parts the text and the JSON share (flow labels, the CNP pacing scopes, the host
 * pairs of a collective and their pattern) and the CSV time series. The text report is in
 * ana_text.c, the JSON document (docs/rocestat.md names every field) in ana_json.c.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ana_internal.h"

void
ana_flow_label(const struct ana *a, const struct ana_flow *f, char *buf, size_t len)
{
	char s[48], d[48];

	ana_ip_str(f->src_ip, f->ip_version, s, sizeof(s));
	ana_ip_str(f->dst_ip, f->ip_version, d, sizeof(d));
	if (f->sqp_known)
		snprintf(buf, len, "%s:0x%x->%s:0x%x", s, f->sqp, d, f->dqp);
	else
		snprintf(buf, len, "%s:?->%s:0x%x", s, d, f->dqp);
	(void)a;
}

/* ---- CNP pacing scopes ---- */


static int
ana_cmp_u64(const void *x, const void *y)
{
	uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;

	return a < b ? -1 : a > b;
}

/* Whether CNP flows f and g share a pacing group of the scope. */
static bool
ana_same_scope(const struct ana_flow *f, const struct ana_flow *g, int scope)
{
	bool src = memcmp(g->src_ip, f->src_ip, 16) == 0, dst = memcmp(g->dst_ip, f->dst_ip, 16) == 0;

	return scope == 1 ? src && dst : scope == 2 ? src : scope == 3 ? dst : false;
}

/*
 * Scope 0: per QP, 1: per IP pair, 2: per NP port (CNP source IP), 3: per destination IP
 * (the data sender's host): Lumina's scopes.
 */
void
ana_scope(const struct ana *a, int scope, struct ana_scope *out)
{
	bool *done = calloc(a->n_flows ? a->n_flows : 1, sizeof(bool));
	uint32_t i, j;

	memset(out, 0, sizeof(*out));
	out->min_gap_ns = UINT64_MAX;
	if (done == NULL)
		return;
	for (i = 0; i < a->n_flows; i++) {
		const struct ana_flow *f = &a->flows[i];
		uint64_t *t, n = 0;

		if (done[i] || f->n_cnp == 0)
			continue;
		for (j = i; j < a->n_flows; j++) {
			const struct ana_flow *g = &a->flows[j];

			if (done[j] || g->n_cnp == 0)
				continue;
			if (j != i && !ana_same_scope(f, g, scope))
				continue;
			n += g->n_cnp;
		}
		t = malloc(n * sizeof(*t));
		if (t == NULL)
			break;
		n = 0;
		for (j = i; j < a->n_flows; j++) {
			const struct ana_flow *g = &a->flows[j];

			if (done[j] || g->n_cnp == 0)
				continue;
			if (j != i && !ana_same_scope(f, g, scope))
				continue;
			memcpy(t + n, g->cnp_t, g->n_cnp * sizeof(*t));
			n += g->n_cnp;
			done[j] = true;
		}
		qsort(t, n, sizeof(*t), ana_cmp_u64);
		for (j = 1; j < n; j++) {
			uint64_t gap = t[j] - t[j - 1];

			if (gap < out->min_gap_ns)
				out->min_gap_ns = gap;
			if (gap < a->o.np_min_time_between_cnps_ns)
				out->violations++;
		}
		out->groups++;
		free(t);
	}
	free(done);
}

const char *const ana_scope_names[ANA_SCOPES] = { "qp", "ip_pair", "port", "dst_ip" };

/* The broadest scope without violations; "none" if even per QP some CNPs come too fast. */
const char *
ana_scope_inferred(const struct ana_scope *s)
{
	int i;

	static const int order[] = { 2, 3, 1, 0 }; /* broadest first */

	for (i = 0; i < ANA_SCOPES; i++)
		if (s[order[i]].violations == 0 && s[order[i]].groups > 0)
			return ana_scope_names[order[i]];
	return s[0].groups ? "none" : "no_cnps";
}

/* ---- collectives: host pairs and the pattern ---- */


/*
 * Host pairs carrying bulk data (flows with at least 64 KiB of goodput, or 1% of the largest),
 * and the pattern they form: "ring" (every host sends to one and receives from one, one
 * cycle), "all_to_all" (every host sends to every other, more than 2 hosts), "tree" (pairs
 * in both directions forming a tree), "incast" (all send to one), else "other".
 */
uint32_t
ana_host_pairs(const struct ana *a, struct ana_hpair *hp, uint32_t cap, const char **pattern)
{
	uint64_t big = 0, thr;
	uint32_t n = 0, i, j, nh = 0, k;
	const uint8_t *hosts[64];
	unsigned int outd[64] = { 0 }, ind[64] = { 0 };
	bool ring = true, a2a = true;

	*pattern = "none";
	for (i = 0; i < a->n_flows; i++)
		if (a->flows[i].c[ANA_C_GOODPUT_BYTES] > big)
			big = a->flows[i].c[ANA_C_GOODPUT_BYTES];
	thr = big / 100 > 65536 ? 65536 : big / 100;
	if (big == 0)
		return 0;
	for (i = 0; i < a->n_flows; i++) {
		const struct ana_flow *f = &a->flows[i];

		if (f->c[ANA_C_GOODPUT_BYTES] < thr || f->c[ANA_C_GOODPUT_BYTES] == 0)
			continue;
		for (j = 0; j < n; j++)
			if (memcmp(hp[j].src, f->src_ip, 16) == 0 && memcmp(hp[j].dst, f->dst_ip, 16) == 0)
				break;
		if (j == n) {
			if (n == cap)
				continue;
			hp[n].src = f->src_ip;
			hp[n].dst = f->dst_ip;
			hp[n].version = f->ip_version;
			hp[n].qps = 0;
			hp[n].bytes = 0;
			n++;
		}
		hp[j].qps++;
		hp[j].bytes += f->c[ANA_C_GOODPUT_BYTES];
	}
	for (i = 0; i < n; i++) {
		const uint8_t *e[2] = { hp[i].src, hp[i].dst };

		for (k = 0; k < 2; k++) {
			for (j = 0; j < nh; j++)
				if (memcmp(hosts[j], e[k], 16) == 0)
					break;
			if (j == nh && nh < 64)
				hosts[nh++] = e[k];
			if (j < 64)
				(k == 0 ? outd : ind)[j]++;
		}
	}
	if (nh < 2) {
		*pattern = "other";
		return n;
	}
	for (j = 0; j < nh; j++) {
		if (outd[j] != 1 || ind[j] != 1)
			ring = false;
		if (outd[j] != nh - 1 || ind[j] != nh - 1)
			a2a = false;
	}
	if (ring) {
		/* one cycle: follow the successors from host 0 */
		const uint8_t *cur = hosts[0];
		uint32_t steps = 0;

		do {
			for (i = 0; i < n; i++)
				if (memcmp(hp[i].src, cur, 16) == 0)
					break;
			cur = hp[i].dst;
			steps++;
		} while (memcmp(cur, hosts[0], 16) != 0 && steps <= nh);
		*pattern = steps == nh ? "ring" : "other";
	} else if (a2a && nh > 2) {
		*pattern = "all_to_all";
	} else if (n == 2 * (nh - 1)) {
		bool sym = true;

		for (i = 0; i < n && sym; i++) {
			for (j = 0; j < n; j++)
				if (memcmp(hp[j].src, hp[i].dst, 16) == 0 &&
				    memcmp(hp[j].dst, hp[i].src, 16) == 0)
					break;
			sym = j < n;
		}
		*pattern = sym ? "tree" : "other";
	} else {
		for (j = 0; j < nh; j++)
			if (ind[j] == nh - 1 && n == nh - 1)
				*pattern = "incast";
		if (strcmp(*pattern, "incast") != 0)
			*pattern = "other";
	}
	return n;
}

/* ---- CSV ---- */

/*
 * The files are opened, checked and put in place by the caller (rocestat writes them through
 * lib/base/emu_out: temporary name, rename); this only formats them, so the library keeps
 * no file I/O of its own.
 */
const char *const ana_csv_files[] = {
	"rate.csv", "cnp.csv", "events.csv", "pfc.csv", "ce.csv", "qdepth.csv", "bandwidth.csv",
	NULL,
};

/* rate.csv: measured (and predicted, where validated) rate per data flow and bin */
static void
ana_csv_rate(const struct ana *a, FILE *f)
{
	uint32_t i, j, k;

	fputs("flow,t_us,measured_mbps,predicted_mbps\n", f);
	for (i = 0; i < a->n_flows; i++) {
		const struct ana_flow *fl = &a->flows[i];
		const struct ana_series *s = &fl->rate;
		const double *pred = NULL;

		for (j = 0; j < a->n_dres; j++)
			if (a->dres[j].flow == (int32_t)i)
				pred = a->dres[j].pred;
		for (k = 0; k < s->n; k++) {
			double t_us = (s->t0_ns - a->t_first_ns + (double)k * s->bin_ns) / 1000.0;
			double m = s->v[k] * 8000.0 / (double)s->bin_ns;

			if (pred != NULL)
				fprintf(f, "%u,%.3f,%.3f,%.3f\n", i, t_us, m,
					pred[k] * 8000.0 / (double)s->bin_ns);
			else
				fprintf(f, "%u,%.3f,%.3f,\n", i, t_us, m);
		}
	}
}

static void
ana_csv_cnp(const struct ana *a, FILE *f)
{
	uint32_t i, k;

	fputs("flow,data_flow,t_us\n", f);
	for (i = 0; i < a->n_flows; i++)
		for (k = 0; k < a->flows[i].n_cnp; k++)
			fprintf(f, "%u,%d,%.3f\n", i, a->flows[i].peer,
				(a->flows[i].cnp_t[k] - a->t_first_ns) / 1000.0);
}

static void
ana_csv_events(const struct ana *a, FILE *f)
{
	uint32_t i, k;

	fputs("flow,type,packet,packet2,t_us,psn,psn2,value\n", f);
	for (i = 0; i < a->n_flows; i++)
		for (k = 0; k < a->flows[i].n_ev; k++) {
			const struct ana_event *e = &a->flows[i].ev[k];

			fprintf(f, "%u,%s,%lu,%lu,%.3f,%u,%u,%ld\n", i, ana_ev_name(e->type),
				(unsigned long)e->pkt, (unsigned long)e->pkt2,
				(e->t_ns - a->t_first_ns) / 1000.0, e->psn, e->psn2, (long)e->val);
		}
}

static void
ana_csv_pfc(const struct ana *a, FILE *f)
{
	uint32_t i, j, k;

	fputs("port,priority,start_us,end_us\n", f);
	for (i = 0; i < a->n_pfc; i++)
		for (j = 0; j < ANA_PRIOS; j++)
			for (k = 0; k < a->pfc[i].prio[j].n_iv; k++) {
				const struct ana_interval *v = &a->pfc[i].prio[j].iv[k];
				const uint8_t *m = a->pfc[i].mac;

				fprintf(f, "%02x:%02x:%02x:%02x:%02x:%02x,%u,%.3f,%.3f\n", m[0], m[1],
					m[2], m[3], m[4], m[5], j,
					(v->start_ns - a->t_first_ns) / 1000.0,
					(v->end_ns - a->t_first_ns) / 1000.0);
			}
}

static void
ana_csv_ce(const struct ana *a, FILE *f)
{
	uint32_t i, k;

	fputs("flow,t_us,ce_marks\n", f);
	for (i = 0; i < a->n_flows; i++) {
		const struct ana_series *cs = &a->flows[i].ce_series;

		for (k = 0; k < cs->n; k++)
			if (cs->v[k] > 0)
				fprintf(f, "%u,%.3f,%.0f\n", i, (cs->t0_ns - a->t_first_ns +
					(double)k * cs->bin_ns) / 1000.0, cs->v[k]);
	}
}

static void
ana_csv_qdepth(const struct ana *a, FILE *f)
{
	uint32_t k;

	fputs("t_us,qdepth_max\n", f);
	for (k = 0; k < a->qdepth.n; k++)
		if (a->qdepth.v[k] > 0)
			fprintf(f, "%.3f,%.0f\n", (a->qdepth.t0_ns - a->t_first_ns +
				(double)k * a->qdepth.bin_ns) / 1000.0, a->qdepth.v[k]);
}

int
ana_write_csv_file(struct ana *a, const char *name, FILE *f)
{
	static void (*const fn[])(const struct ana *, FILE *) = {
		ana_csv_rate, ana_csv_cnp, ana_csv_events, ana_csv_pfc, ana_csv_ce, ana_csv_qdepth,
		ana_bw_csv,
	};
	unsigned int i;

	_Static_assert(sizeof(fn) / sizeof(fn[0]) + 1 ==
		       sizeof(ana_csv_files) / sizeof(ana_csv_files[0]),
		       "one formatter per CSV file");
	for (i = 0; ana_csv_files[i] != NULL; i++)
		if (strcmp(name, ana_csv_files[i]) == 0) {
			fn[i](a, f);
			return ferror(f) ? -EIO : 0;
		}
	return -EINVAL;
}
