/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * PFC (802.1Qbb) and PAUSE (802.3x) timelines per port (the frame's source MAC and capture
 * interface) and priority: a frame with quanta q > 0 pauses the priority until
 * t + q x 512 bit times at --link-gbps (a newer frame restarts the timer), q = 0 resumes at
 * once. Paused intervals are kept (bounded); a continuous pause longer than --pfc-storm is a
 * storm.
 */
#include <stdlib.h>
#include <string.h>

#include "ana_internal.h"

#define ANA_PFC_PORTS_MAX 1024
#define ANA_IV_CAP (1u << 16)

static struct ana_pfc_port *
ana_pfc_port_get(struct ana *a, const uint8_t *mac, uint32_t ifindex)
{
	struct ana_pfc_port *p;
	uint32_t i;

	for (i = 0; i < a->n_pfc; i++)
		if (a->pfc[i].ifindex == ifindex && memcmp(a->pfc[i].mac, mac, 6) == 0)
			return &a->pfc[i];
	if (a->n_pfc >= ANA_PFC_PORTS_MAX)
		return NULL;
	if (a->n_pfc == a->cap_pfc) {
		uint32_t ncap = a->cap_pfc ? a->cap_pfc * 2 : 8;
		struct ana_pfc_port *np = realloc(a->pfc, ncap * sizeof(*np));

		if (np == NULL)
			return NULL;
		a->pfc = np;
		a->cap_pfc = ncap;
	}
	p = &a->pfc[a->n_pfc++];
	memset(p, 0, sizeof(*p));
	memcpy(p->mac, mac, 6);
	p->ifindex = ifindex;
	return p;
}

static void
ana_pfc_close(struct ana *a, struct ana_pfc_prio *q, uint64_t end_ns)
{
	uint64_t d = end_ns > q->start_ns ? end_ns - q->start_ns : 0;

	q->paused = false;
	q->paused_ns += d;
	if (d > q->longest_ns)
		q->longest_ns = d;
	if (d > a->o.pfc_storm_ns)
		q->storms++;
	q->iv = ana_grow(q->iv, &q->cap_iv, q->n_iv, sizeof(*q->iv), 16, ANA_IV_CAP);
	if (q->n_iv < q->cap_iv) {
		q->iv[q->n_iv].start_ns = q->start_ns;
		q->iv[q->n_iv].end_ns = end_ns;
		q->n_iv++;
	} else {
		q->iv_dropped++;
	}
}

void
ana_pfc_frame(struct ana *a, const uint8_t *src_mac, uint32_t ifindex, uint16_t opcode,
	      uint16_t enable, const uint16_t *quanta, uint64_t t_ns)
{
	struct ana_pfc_port *port = ana_pfc_port_get(a, src_mac, ifindex);
	/* one quantum = 512 bit times */
	double quantum_ns = 512.0 / a->o.link_gbps;
	unsigned int i;

	if (port == NULL)
		return;
	for (i = 0; i < ANA_PRIOS; i++) {
		struct ana_pfc_prio *q = &port->prio[i];
		uint16_t qn;

		if (opcode == 0x0001) {
			if (i != 8)
				continue;
			qn = quanta[0];
		} else {
			if (i == 8 || !(enable & (1u << i)))
				continue;
			qn = quanta[i];
		}
		q->frames++;
		if (q->paused && t_ns >= q->until_ns)
			ana_pfc_close(a, q, q->until_ns);
		if (qn == 0) {
			q->xon++;
			if (q->paused)
				ana_pfc_close(a, q, t_ns);
			continue;
		}
		q->xoff++;
		if (!q->paused) {
			q->paused = true;
			q->start_ns = t_ns;
		}
		q->until_ns = t_ns + (uint64_t)(qn * quantum_ns + 0.5);
	}
}

void
ana_pfc_finish(struct ana *a)
{
	uint32_t i, j;

	for (i = 0; i < a->n_pfc; i++)
		for (j = 0; j < ANA_PRIOS; j++)
			if (a->pfc[i].prio[j].paused)
				ana_pfc_close(a, &a->pfc[i].prio[j], a->pfc[i].prio[j].until_ns);
}

void
ana_pfc_free(struct ana *a)
{
	uint32_t i, j;

	for (i = 0; i < a->n_pfc; i++)
		for (j = 0; j < ANA_PRIOS; j++)
			free(a->pfc[i].prio[j].iv);
	free(a->pfc);
	a->pfc = NULL;
	a->n_pfc = 0;
}

/* Overlap of [s, e] with [from, to]. */
static uint64_t
ana_overlap(uint64_t s, uint64_t e, uint64_t from, uint64_t to)
{
	uint64_t lo = s > from ? s : from, hi = e < to ? e : to;

	return hi > lo ? hi - lo : 0;
}

uint64_t
ana_pfc_paused_within(const struct ana *a, uint8_t prio, const uint8_t *own_mac, uint64_t from,
		      uint64_t to)
{
	uint64_t best = 0;
	uint32_t i, k;

	for (i = 0; i < a->n_pfc; i++) {
		const struct ana_pfc_port *port = &a->pfc[i];
		unsigned int pi;

		if (memcmp(port->mac, own_mac, 6) == 0)
			continue;
		for (pi = 0; pi < 2; pi++) {
			const struct ana_pfc_prio *q = &port->prio[pi == 0 ? (prio & 7) : 8];
			uint64_t sum = 0;

			/* the intervals close in time order: the recent ones are at the end */
			for (k = q->n_iv; k > 0 && q->iv[k - 1].end_ns > from; k--)
				sum += ana_overlap(q->iv[k - 1].start_ns, q->iv[k - 1].end_ns, from,
						   to);
			if (q->paused)
				sum += ana_overlap(q->start_ns, q->until_ns, from, to);
			/* pauses from several ports overlap: the longest one counts */
			if (sum > best)
				best = sum;
		}
	}
	return best < to - from ? best : to - from;
}
