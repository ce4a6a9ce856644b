/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What every part of lib/analysis uses: the counter and event names, the default options,
 * rate series whose bins widen rather than grow past a cap, growable arrays, per-flow event
 * lists, address text. Calls nothing else of lib/analysis (the bottom of its files).
 */
#include <arpa/inet.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "lib/proto/roce_proto.h"

#include "ana_internal.h"

static const char *const ana_ctr_names[] = {
#define ANA_CTR_NAME_(n, s) s,
	ANA_FOREACH_FLOW_CTR(ANA_CTR_NAME_)
#undef ANA_CTR_NAME_
};

static const char *const ana_ev_names[] = {
	"gap", "nak", "double_nak", "retx", "restart_not_at_nak", "lost_retx", "timeout",
	"duplicate", "out_of_order", "ack_psn_back", "cnp_under_min_time",
};

const char *
ana_ctr_name(enum ana_ctr c)
{
	return c < ANA_C_MAX ? ana_ctr_names[c] : "unknown";
}

const char *
ana_ev_name(enum ana_ev_type t)
{
	return t < ANA_EV_MAX ? ana_ev_names[t] : "unknown";
}

void
ana_opts_default(struct ana_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->link_gbps = 100;
	o->np_min_time_between_cnps_ns = 4000;
	snprintf(o->np_min_source, sizeof(o->np_min_source), "default");
	o->timeout_ns = 100000;
	o->bin_ns = 1000;
	o->window_ns = 10000;
	o->pfc_storm_ns = 10000000;
	o->idle_gap_ns = 1000000;
	dcqcn_params_nvidia(&o->dcqcn, o->link_gbps * 1000);
	snprintf(o->dcqcn_name, sizeof(o->dcqcn_name), "nvidia");
	o->tol_cut = 0.10;
	o->tol_traj = 0.10;
	o->ranks = 2;
	o->qp_pairs_max = 1u << 16;
	o->series_max_bins = ANA_SERIES_CAP;
}

uint16_t
ana_linux_udp_sport(uint32_t lqpn, uint32_t rqpn)
{
	return roce_udp_sport_from_qpns(lqpn, rqpn);
}

void
ana_ip_str(const uint8_t *ip, uint8_t version, char *buf, size_t len)
{
	if (version == 4) {
		if (inet_ntop(AF_INET, ip, buf, (socklen_t)len) == NULL)
			snprintf(buf, len, "?");
	} else if (inet_ntop(AF_INET6, ip, buf, (socklen_t)len) == NULL) {
		snprintf(buf, len, "?");
	}
}

void
ana_series_init(struct ana_series *s, uint64_t bin_ns, uint32_t max_bins, bool max_mode)
{
	memset(s, 0, sizeof(*s));
	s->bin_ns = bin_ns ? bin_ns : 1000;
	s->max_bins = max_bins >= 2 && max_bins <= ANA_SERIES_CAP ? max_bins : ANA_SERIES_CAP;
	s->max_mode = max_mode;
}

void
ana_series_free(struct ana_series *s)
{
	free(s->v);
	s->v = NULL;
	s->n = 0;
	s->cap = 0;
}

/*
 * Fault in the pages of [p, p + len) in one system call rather than one trap per 4 KiB page
 * on first touch (a rate series of a 100 ms capture is 800 KB per flow; a page fault costs
 * several microseconds on a VM). A hint: nothing changes if the kernel refuses it.
 */
void
ana_prefault(void *p, size_t len)
{
#ifdef MADV_POPULATE_WRITE
	uintptr_t a = ((uintptr_t)p + 4095) & ~(uintptr_t)4095;
	uintptr_t e = ((uintptr_t)p + len) & ~(uintptr_t)4095;

	if (len >= (64u << 10) && e > a)
		(void)madvise((void *)a, e - a, MADV_POPULATE_WRITE);
#else
	(void)p;
	(void)len;
#endif
}

void *
ana_realloc(void *v, size_t old_len, size_t new_len)
{
	void *nv;

	if (new_len < (64u << 10))
		return realloc(v, new_len);
	if (old_len >= (128u << 10)) {
		/* in its own mapping (glibc's threshold, which stays put as long as no such block
		 * is freed): realloc moves the pages (mremap), the new part is faulted at once */
		nv = realloc(v, new_len);
		if (nv != NULL && new_len > old_len)
			ana_prefault((char *)nv + old_len, new_len - old_len);
		return nv;
	}
	/* glibc would copy a heap block into new pages one fault at a time */
	nv = malloc(new_len);
	if (nv == NULL)
		return NULL;
	ana_prefault(nv, new_len);
	if (v != NULL)
		memcpy(nv, v, old_len < new_len ? old_len : new_len);
	free(v);
	return nv;
}

void *
ana_calloc(size_t n, size_t size)
{
	void *v = calloc(n, size);

	if (v != NULL)
		ana_prefault(v, n * size);
	return v;
}

/* Halve the resolution: merge bin pairs (sum or max). */
static void
ana_series_coarsen(struct ana_series *s)
{
	uint32_t i;

	for (i = 0; i < s->n; i++) {
		double x = s->v[i];

		if (i % 2 == 0)
			s->v[i / 2] = x;
		else if (s->max_mode)
			s->v[i / 2] = s->v[i / 2] > x ? s->v[i / 2] : x;
		else
			s->v[i / 2] += x;
	}
	s->n = (s->n + 1) / 2;
	memset(s->v + s->n, 0, (s->cap - s->n) * sizeof(double));
	s->bin_ns *= 2;
	s->c_hi = 0; /* the bins changed */
}

/* ana_series_add()'s way when the sample is outside the cached bin or the allocation */
void
ana_series_add_slow(struct ana_series *s, uint64_t t_ns, double v)
{
	uint64_t idx;

	if (s->started && t_ns >= s->t0_ns) {
		idx = (t_ns - s->t0_ns) / s->bin_ns;
		s->c_lo = s->t0_ns + idx * s->bin_ns;
		s->c_hi = s->c_lo + s->bin_ns; /* wraps (no hit) only past 2^64 ns */
		s->c_idx = idx;
		if (idx < s->cap) {
			ana_series_put(s, idx, v);
			return;
		}
	}

	if (!s->started) {
		s->t0_ns = t_ns;
		s->started = true;
	}
	if (t_ns < s->t0_ns)
		t_ns = s->t0_ns;
	idx = (t_ns - s->t0_ns) / s->bin_ns;
	while (idx >= s->max_bins) {
		if (s->cap == 0)
			return;
		ana_series_coarsen(s);
		idx = (t_ns - s->t0_ns) / s->bin_ns;
	}
	if (idx >= s->cap) {
		uint32_t ncap = s->cap ? s->cap : 1024;
		double *nv;

		/* by a quarter, not double: a series fills in time order, so what is added is
		 * used, and a run's last growth leaves at most a quarter unused (it is faulted
		 * in at once: ana_realloc()) */
		while (ncap <= idx)
			ncap = ncap < (1u << 16) ? ncap * 2 : ncap + ncap / 4;
		if (ncap > s->max_bins)
			ncap = s->max_bins;
		nv = ana_realloc(s->v, s->cap * sizeof(double), ncap * sizeof(double));
		if (nv == NULL)
			return;
		memset(nv + s->cap, 0, (ncap - s->cap) * sizeof(double));
		s->v = nv;
		s->cap = ncap;
	}
	ana_series_put(s, idx, v);
}

void
ana_flow_event(struct ana_flow *f, enum ana_ev_type type, uint64_t pkt, uint64_t pkt2,
	       uint64_t t_ns, uint32_t psn, uint32_t psn2, int64_t val)
{
	struct ana_event *e;

	if (f->ev == NULL) {
		f->ev = calloc(ANA_EVENTS_CAP, sizeof(*f->ev));
		if (f->ev == NULL) {
			f->ev_dropped++;
			return;
		}
	}
	if (f->n_ev >= ANA_EVENTS_CAP) {
		f->ev_dropped++;
		return;
	}
	e = &f->ev[f->n_ev++];
	e->type = (uint8_t)type;
	e->pkt = pkt;
	e->pkt2 = pkt2;
	e->t_ns = t_ns;
	e->psn = psn;
	e->psn2 = psn2;
	e->val = val;
}

void *
ana_grow(void *v, uint32_t *cap, uint32_t n, size_t size, uint32_t first, uint32_t max)
{
	if (n == *cap && *cap < max) {
		uint32_t ncap = *cap ? *cap * 2 : first;
		void *nv = ana_realloc(v, (size_t)*cap * size, (size_t)ncap * size);

		if (nv != NULL) {
			*cap = ncap;
			return nv;
		}
	}
	return v;
}

/* The highest rate of a byte series over a sliding window of window_ns (at least one bin). */
double
ana_series_peak_mbps(const struct ana_series *s, uint64_t window_ns)
{
	uint32_t w = (uint32_t)(window_ns / s->bin_ns), i;
	double sum = 0, best = 0;

	if (w == 0)
		w = 1;
	for (i = 0; i < s->n; i++) {
		sum += s->v[i];
		if (i >= w)
			sum -= s->v[i - w];
		if (i + 1 >= w && sum > best)
			best = sum;
	}
	if (s->n > 0 && s->n < w)
		best = sum;
	return best * 8e3 / (double)(w * s->bin_ns);
}
