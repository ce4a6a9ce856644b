/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The flow table and the pairing of the two directions of each QP: an analysis's life
 * (ana_create, ana_free), flows found by (source, destination, DestQP) in an open-addressing
 * hash, the peer of a flow from lib/proto's QP pairing table or the PSN rule, and at the end
 * (ana_finish) what the pass could not pair, the connections (report rows), then the PFC,
 * collective, DCQCN and bandwidth results. The streaming pass itself is in ana_core.c.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/proto/roce_proto.h"

#include "ana_internal.h"

#define ANA_MAX_FLOWS (1u << 20)

struct ana *
ana_create(const struct ana_opts *o, char *err, size_t err_len)
{
	struct ana *a = calloc(1, sizeof(*a));

	if (a == NULL)
		goto fail;
	a->o = *o;
	a->hash_size = 1024;
	a->hash = malloc(a->hash_size * sizeof(*a->hash));
	a->qpmap = roce_qpmap_create(o->qp_pairs_max != 0 ? o->qp_pairs_max : 1u << 16, 0);
	if (a->hash == NULL || a->qpmap == NULL)
		goto fail;
	memset(a->hash, 0xff, a->hash_size * sizeof(*a->hash));
	ana_series_init(&a->qdepth, o->bin_ns, o->series_max_bins, true);
	return a;
fail:
	snprintf(err, err_len, "out of memory");
	ana_free(a);
	return NULL;
}

void
ana_free(struct ana *a)
{
	uint32_t i;

	if (a == NULL)
		return;
	for (i = 0; i < a->n_flows; i++) {
		struct ana_flow *f = &a->flows[i];

		free(f->seen);
		free(f->cnp_t);
		free(f->ev);
		ana_series_free(&f->rate);
		ana_series_free(&f->ce_series);
		ana_series_free(&f->gap_sum);
		ana_series_free(&f->gap_n);
		free(f->msg_gaps);
	}
	free(a->flows);
	free(a->hash);
	free(a->conns);
	free(a->iters);
	roce_qpmap_free(a->qpmap);
	ana_pfc_free(a);
	ana_dcqcn_free(a);
	ana_bw_free(a);
	ana_series_free(&a->qdepth);
	free(a);
}

/* 64x64 -> 128-bit multiply, the halves folded (wyhash's "mum") */
static inline uint64_t
ana_mum(uint64_t x, uint64_t y)
{
	__uint128_t m = (__uint128_t)x * y;

	return (uint64_t)m ^ (uint64_t)(m >> 64);
}

/* Hash of (src, dst, DestQP): the addresses as 64-bit words, two independent wide multiplies
 * (one chain of four 64-bit multiply-xorshift steps before was a tenth of rocestat's time) */
static uint32_t
ana_key_hash(const uint8_t *src, const uint8_t *dst, uint32_t dqp)
{
	uint64_t w[4], h;

	memcpy(w, src, 16);
	memcpy(w + 2, dst, 16);
	h = ana_mum(w[1] ^ 0xA0761D6478BD642FULL, w[3] ^ 0xE7037ED1A0B428DBULL) ^
	    ana_mum(w[0] ^ w[2] ^ 0x8EBC6AF09C88C6E3ULL, dqp ^ 0x589965CC75374CC3ULL);
	return (uint32_t)(h ^ (h >> 32));
}

static int
ana_rehash(struct ana *a, uint32_t size)
{
	int32_t *nh = malloc(size * sizeof(*nh));
	uint32_t i;

	if (nh == NULL)
		return -ENOMEM;
	memset(nh, 0xff, size * sizeof(*nh));
	for (i = 0; i < a->n_flows; i++) {
		struct ana_flow *f = &a->flows[i];
		uint32_t h = ana_key_hash(f->src_ip, f->dst_ip, f->dqp) & (size - 1);

		while (nh[h] >= 0)
			h = (h + 1) & (size - 1);
		nh[h] = (int32_t)i;
	}
	free(a->hash);
	a->hash = nh;
	a->hash_size = size;
	return 0;
}

int32_t
ana_find(struct ana *a, const uint8_t *src, const uint8_t *dst, uint32_t dqp)
{
	uint32_t h = ana_key_hash(src, dst, dqp) & (a->hash_size - 1);

	while (a->hash[h] >= 0) {
		struct ana_flow *f = &a->flows[a->hash[h]];

		if (f->dqp == dqp && memcmp(f->src_ip, src, 16) == 0 &&
		    memcmp(f->dst_ip, dst, 16) == 0)
			return a->hash[h];
		h = (h + 1) & (a->hash_size - 1);
	}
	return -1;
}

struct ana_flow *
ana_flow_get(struct ana *a, const struct roce_pkt *p, uint64_t pktno, uint64_t t_ns)
{
	int32_t i = ana_find(a, p->src_ip, p->dst_ip, p->dest_qp);
	struct ana_flow *f;
	uint32_t h;

	if (i >= 0)
		return &a->flows[i];
	if (a->n_flows >= ANA_MAX_FLOWS)
		return NULL;
	if (a->n_flows == a->cap_flows) {
		uint32_t ncap = a->cap_flows ? a->cap_flows * 2 : 64;
		struct ana_flow *nf = realloc(a->flows, ncap * sizeof(*nf));

		if (nf == NULL)
			return NULL;
		a->flows = nf;
		a->cap_flows = ncap;
	}
	if ((a->n_flows + 1) * 2 > a->hash_size && ana_rehash(a, a->hash_size * 2) != 0)
		return NULL;
	f = &a->flows[a->n_flows];
	memset(f, 0, sizeof(*f));
	memcpy(f->src_ip, p->src_ip, 16);
	memcpy(f->dst_ip, p->dst_ip, 16);
	f->ip_version = p->ip_version ? p->ip_version : 6;
	f->dqp = p->dest_qp;
	f->peer = -1;
	f->conn = -1;
	f->sport = p->udp_sport;
	f->first_pkt = pktno;
	f->t_first_ns = t_ns;
	f->retx_lat_min_ns = UINT64_MAX;
	f->cnp_min_gap_ns = UINT64_MAX;
	f->transport = 0xFF;
	f->bw_pair = -1;
	ana_series_init(&f->rate, a->o.bin_ns, a->o.series_max_bins, false);
	ana_series_init(&f->ce_series, a->o.bin_ns, a->o.series_max_bins, false);
	ana_series_init(&f->gap_sum, a->o.bin_ns, a->o.series_max_bins, false);
	ana_series_init(&f->gap_n, a->o.bin_ns, a->o.series_max_bins, false);
	h = ana_key_hash(f->src_ip, f->dst_ip, f->dqp) & (a->hash_size - 1);
	while (a->hash[h] >= 0)
		h = (h + 1) & (a->hash_size - 1);
	a->hash[h] = (int32_t)a->n_flows;
	return &a->flows[a->n_flows++];
}

/*
 * The PSN rule, for NICs the table cannot pair (a different source port per direction and
 * several QPs between two hosts, as rocegen and some NICs do): an ACK or NAK with PSN p on
 * flow r (Y -> X) answers a data flow X -> Y whose PSNs seen so far cover p. When exactly one
 * unpaired data flow X -> Y covers p, it is r's peer (an ACK never acknowledges a PSN not yet
 * sent, so r's own data flow always covers it, if the capture holds it).
 */
static int32_t
ana_psn_rule(struct ana *a, const struct ana_flow *r, uint32_t p)
{
	int32_t found = -1;
	uint32_t i;

	for (i = 0; i < a->n_flows; i++) {
		const struct ana_flow *d = &a->flows[i];

		if (d == r || d->peer >= 0 || !d->have_psn || d->sqp_known ||
		    memcmp(d->src_ip, r->dst_ip, 16) != 0 || memcmp(d->dst_ip, r->src_ip, 16) != 0)
			continue;
		if (psn_diff(p, d->psn_first) < -1 || psn_diff(p, d->psn_max) > 0)
			continue;
		if (found >= 0)
			return -1;
		found = (int32_t)i;
	}
	return found;
}

static void
ana_link(struct ana *a, int32_t x, int32_t y)
{
	a->flows[x].peer = y;
	a->flows[y].peer = x;
	a->flows[x].sqp = a->flows[y].dqp;
	a->flows[x].sqp_known = true;
	a->flows[y].sqp = a->flows[x].dqp;
	a->flows[y].sqp_known = true;
}

/*
 * The flow of the other direction of f's QP: (dst -> src, DestQP = f's sender QPN). During
 * the pass only the table's source-port (or DETH) answers are trusted: its "one QPN seen
 * between the two hosts" rule may hold only because the second QP has not spoken yet;
 * ana_finish uses that rule once everything was seen.
 */
struct ana_flow *
ana_peer(struct ana *a, struct ana_flow *f, const struct roce_pkt *p, uint64_t t_ns)
{
	uint64_t pair_hits = roce_qpmap_counters(a->qpmap)[ROCE_QPMAP_CTR_HIT_PAIR];
	uint32_t sqp;
	int32_t i;

	if (f->peer >= 0)
		return &a->flows[f->peer];
	if (!f->sqp_known) {
		/* ask again only when the table learned something since the last miss */
		uint64_t epoch = roce_qpmap_counters(a->qpmap)[ROCE_QPMAP_CTR_LEARNED] +
				 roce_qpmap_counters(a->qpmap)[ROCE_QPMAP_CTR_QPN_CHANGED];

		if (epoch != f->qpmap_epoch) {
			f->qpmap_epoch = epoch;
			if (roce_qpmap_lookup_sender(a->qpmap, p, t_ns, &sqp) == 0 &&
			    roce_qpmap_counters(a->qpmap)[ROCE_QPMAP_CTR_HIT_PAIR] == pair_hits)
				goto found;
		}
		/* the PSN rule scans the flows: try it on the first 32 ACKs, then 1 in 256 */
		if (p->has_aeth && p->opcode != ROCE_OPCODE_CNP &&
		    (++f->psn_rule_tries <= 32 || (f->psn_rule_tries & 255) == 0)) {
			i = ana_psn_rule(a, f, p->psn);
			if (i >= 0) {
				ana_link(a, (int32_t)(f - a->flows), i);
				return &a->flows[i];
			}
		}
		return NULL;
found:
		f->sqp = sqp;
		f->sqp_known = true;
	}
	i = ana_find(a, f->dst_ip, f->src_ip, f->sqp);
	if (i < 0 || a->flows[i].peer >= 0 ||
	    (a->flows[i].sqp_known && a->flows[i].sqp != f->dqp))
		return NULL;
	f->peer = i;
	a->flows[i].peer = (int32_t)(f - a->flows);
	a->flows[i].sqp = f->dqp;
	a->flows[i].sqp_known = true;
	return &a->flows[i];
}

static struct ana_conn *
ana_conn_add(struct ana *a, int32_t x, int32_t y)
{
	struct ana_conn *c = &a->conns[a->n_conns];

	c->a = x;
	c->b = y;
	a->flows[x].conn = (int32_t)a->n_conns;
	if (y >= 0)
		a->flows[y].conn = (int32_t)a->n_conns;
	a->n_conns++;
	return c;
}

void
ana_finish(struct ana *a)
{
	uint32_t i;

	if (a->finished)
		return;
	a->finished = true;
	a->conns = calloc(a->n_flows ? a->n_flows : 1, sizeof(*a->conns));
	/* pair what was not paired during the pass (the reverse direction came later) */
	for (i = 0; i < a->n_flows; i++) {
		struct ana_flow *f = &a->flows[i];
		int32_t j;

		if (f->peer >= 0)
			continue;
		if (!f->sqp_known) {
			struct roce_pkt p;
			uint32_t sqp;

			memset(&p, 0, sizeof(p));
			p.cls = ROCE_CLASS_ROCEV2;
			p.ip_version = f->ip_version;
			memcpy(p.src_ip, f->src_ip, 16);
			memcpy(p.dst_ip, f->dst_ip, 16);
			p.dest_qp = f->dqp;
			p.udp_sport = f->sport;
			p.udp_dport = 4791;
			p.opcode = f->transport == 1 ? 0x20 : 0x00;
			p.transport = f->transport == 1 ? 1 : 0;
			/* the table's answer names the sender only if that flow exists unpaired */
			if (roce_qpmap_lookup_sender(a->qpmap, &p, a->t_last_ns, &sqp) != 0)
				continue;
			j = ana_find(a, f->dst_ip, f->src_ip, sqp);
			if (j < 0 || j == (int32_t)i || a->flows[j].peer >= 0 ||
			    (a->flows[j].sqp_known && a->flows[j].sqp != f->dqp))
				continue;
			f->sqp = sqp;
			f->sqp_known = true;
		}
		j = ana_find(a, f->dst_ip, f->src_ip, f->sqp);
		if (j >= 0 && j != (int32_t)i && a->flows[j].peer < 0 &&
		    (!a->flows[j].sqp_known || a->flows[j].sqp == f->dqp)) {
			f->peer = j;
			a->flows[j].peer = (int32_t)i;
			a->flows[j].sqp = f->dqp;
			a->flows[j].sqp_known = true;
		}
	}
	/* the PSN rule for response flows still alone (their last ACK) */
	for (i = 0; i < a->n_flows; i++) {
		struct ana_flow *f = &a->flows[i];
		int32_t j;

		if (f->peer >= 0 || !f->have_ack)
			continue;
		j = ana_psn_rule(a, f, f->last_ack_psn);
		if (j >= 0)
			ana_link(a, (int32_t)i, j);
	}
	if (a->conns != NULL) {
		for (i = 0; i < a->n_flows; i++) {
			struct ana_flow *f = &a->flows[i];
			struct ana_conn *c;

			if (f->conn >= 0)
				continue;
			c = ana_conn_add(a, (int32_t)i, f->peer);
			if (f->peer >= 0 && !f->rocev1) {
				struct ana_flow *g = &a->flows[f->peer];

				c->sport_expected = ana_linux_udp_sport(f->dqp, g->dqp);
				c->sport_checked = f->have_sport || g->have_sport;
				c->sport_linux = c->sport_checked && !f->sport_varies &&
						 !g->sport_varies &&
						 (!f->have_sport || f->sport == c->sport_expected) &&
						 (!g->have_sport || g->sport == c->sport_expected);
				if (c->sport_linux)
					c->sport_rule = "linux";
				else if (f->sport_varies || g->sport_varies)
					c->sport_rule = "varies";
				else if (!f->have_sport || !g->have_sport)
					c->sport_rule = "other";
				else if (f->sport == g->sport)
					c->sport_rule = "symmetric_other";
				else
					c->sport_rule = "per_direction";
			}
		}
	}
	ana_pfc_finish(a);
	ana_coll_finish(a);
	ana_dcqcn_run(a);
	ana_bw_finish(a);
}

double
ana_flow_mean_mbps(const struct ana_flow *f)
{
	uint64_t dt = f->t_last_ns - f->t_first_ns;

	return dt ? (double)f->c[ANA_C_BYTES] * 8e3 / (double)dt : 0;
}

double
ana_flow_peak_mbps(const struct ana *a, const struct ana_flow *f)
{
	return ana_series_peak_mbps(&f->rate, a->o.window_ns);
}

unsigned int
ana_flow_check_fails(const struct ana_flow *f)
{
	return (f->c[ANA_C_DOUBLE_NAKS] != 0) + (f->c[ANA_C_RESTART_BAD] != 0) +
	       (f->c[ANA_C_ACK_BACK] != 0) + (f->c[ANA_C_CNPS_FAST] != 0) +
	       (f->c[ANA_C_CNPS_NO_BECN] != 0);
}

void
ana_totals(const struct ana *a, struct ana_totals *t)
{
	t->frames = a->pkts;
	t->roce = a->roce_pkts;
	t->pfc = a->pfc_frames + a->pause_frames;
	t->malformed = a->invalid_pkts;
	t->other = a->other_pkts;
}

unsigned int
ana_failures(const struct ana *a)
{
	unsigned int n = 0;
	uint32_t i;

	for (i = 0; i < a->n_flows; i++)
		n += ana_flow_check_fails(&a->flows[i]);
	for (i = 0; i < a->n_dres; i++)
		n += !a->dres[i].pass;
	return n;
}
