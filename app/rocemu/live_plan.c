/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Live mode's plan, made once at start: which worker owns each port's egress (its TM and TX
 * queue) and which worker polls each RX queue (--rxq-map, or by default the owner of the
 * port its traffic usually goes to, so that it crosses no ring). docs/multicore.md.
 */
#include <stdio.h>
#include <string.h>

#include <rte_malloc.h>

#include "live.h"

/* @p name's index among the ports, or n_ports. */
static unsigned int
live_port_index(const struct live_state *st, const char *name)
{
	unsigned int p;

	for (p = 0; name != NULL && p < st->n_ports; p++)
		if (strcmp(st->ctx.pl->port_names[p], name) == 0)
			return p;
	return st->n_ports;
}

/*
 * The port whose egress a port's received traffic usually takes: its partner in the first
 * ingress forward stage of mode "pairs" (the pipeline was validated: its names are ports),
 * else its neighbour (0-1, 2-3, ...), a bump-in-wire's pairing.
 */
static unsigned int
live_peer(const struct live_state *st, unsigned int p)
{
	const json_t *stage, *pair;
	size_t i, k;

	json_array_foreach(json_object_get(st->ctx.pl->root, "ingress"), i, stage) {
		const char *type = json_string_value(json_object_get(stage, "type"));
		const char *mode = json_string_value(json_object_get(stage, "mode"));

		if (type == NULL || strcmp(type, "forward") != 0 ||
		    (mode != NULL && strcmp(mode, "pairs") != 0)) /* pairs is the default */
			continue;
		json_array_foreach(json_object_get(stage, "pairs"), k, pair) {
			unsigned int a = live_port_index(st, json_string_value(json_array_get(pair, 0)));
			unsigned int b = live_port_index(st, json_string_value(json_array_get(pair, 1)));

			if (a == p && b < st->n_ports)
				return b;
			if (b == p && a < st->n_ports)
				return a;
		}
		break;
	}
	return (p ^ 1) < st->n_ports ? (p ^ 1) : p;
}

/* --rxq-map PORT:QUEUE:WORKER[,...] (PORT by name or index). */
static int
live_parse_rxq_map(struct live_state *st, int8_t map[EMU_MAX_PORTS][LIVE_MAX_RXQ])
{
	const char *s = st->rxq_map;

	while (s != NULL && *s != '\0') {
		char port[64];
		unsigned int q, w, p;
		int used = 0;

		if (sscanf(s, "%63[^:,]:%u:%u%n", port, &q, &w, &used) != 3 ||
		    (s[used] != ',' && s[used] != '\0')) {
			fprintf(stderr, "rocemu: --rxq-map: expected PORT:QUEUE:WORKER[,...], got "
				"\"%s\"\n", s);
			return -1;
		}
		for (p = 0; p < st->n_ports; p++)
			if (strcmp(st->ctx.pl->port_names[p], port) == 0)
				break;
		if (p == st->n_ports && sscanf(port, "%u", &p) != 1)
			p = st->n_ports;
		if (p >= st->n_ports || q >= st->n_rxq[p] || w >= st->n_workers) {
			fprintf(stderr, "rocemu: --rxq-map: %s:%u:%u: %s\n", port, q, w,
				p >= st->n_ports ? "no such port" :
				q >= st->n_rxq[p] ? "no such RX queue (--rx-queues)" :
						    "no such worker (--workers)");
			return -1;
		}
		map[p][q] = (int8_t)w;
		s += used + (s[used] == ',');
	}
	return 0;
}

/*
 * A fabric: packets cross it on their destination port's owner, so ports whose packets can
 * share a link need one owner (fab_port_groups): group g goes to worker g mod N. With fewer
 * groups than workers, some own no egress and only receive; say so.
 */
static void
live_fabric_owners(struct live_state *st)
{
	const struct fab_cfg *fc = st->ctx.pl->fabric;
	uint8_t group[EMU_MAX_PORTS];
	unsigned int p, q, n;

	n = fab_port_groups(fc, group);
	for (p = 0; p < st->n_ports; p++)
		st->owner_of[p] = (uint8_t)(group[p] % st->n_workers);
	if (n >= st->n_workers)
		return;
	for (p = 0; p < st->n_ports; p++)
		for (q = 0; q < p; q++) {
			uint16_t l = fab_shared_link(fc, p, q);

			if (l == FAB_NONE)
				continue;
			fprintf(live_out, "rocemu: fabric: packets to %s and to %s can both take link "
				"%s (and so on): %u group%s of ports for %u workers, so %u of them own "
				"no port and only receive (docs/multicore.md)\n",
				st->ctx.pl->port_names[q], st->ctx.pl->port_names[p], fc->links[l].name,
				n, n == 1 ? "" : "s", st->n_workers, st->n_workers - n);
			return;
		}
}

/* Who owns what: each port's egress (port p: worker p mod N; with a fabric, by the groups of
 * ports whose packets share links) and every RX queue. */
int
live_workers_plan(struct live_state *st, unsigned int *lcores, unsigned int n_lcores)
{
	int8_t map[EMU_MAX_PORTS][LIVE_MAX_RXQ];
	unsigned int p, q, w;

	if (st->n_workers > n_lcores) {
		fprintf(stderr, "rocemu: --workers %u needs %u worker lcores besides the main one, "
			"EAL has %u: give -l 0-%u, or map them onto fewer CPUs with --lcores "
			"'(0-%u)@(0,1)'\n", st->n_workers, st->n_workers, n_lcores, st->n_workers,
			st->n_workers);
		return -1;
	}
	st->w = rte_zmalloc("live_workers", st->n_workers * sizeof(*st->w), RTE_CACHE_LINE_SIZE);
	if (st->w == NULL) {
		fprintf(stderr, "rocemu: out of memory for the workers\n");
		return -1;
	}
	memset(map, -1, sizeof(map));
	if (live_parse_rxq_map(st, map) != 0)
		return -1;
	for (p = 0; p < st->n_ports; p++)
		st->owner_of[p] = (uint8_t)(p % st->n_workers);
	if (st->ctx.pl->fabric != NULL && st->n_workers > 1)
		live_fabric_owners(st);
	for (p = 0; p < st->n_ports; p++)
		st->w[st->owner_of[p]].owned |= 1ULL << p;
	for (w = 0; w < st->n_workers; w++) {
		st->w[w].st = st;
		st->w[w].idx = w;
		st->w[w].lcore = lcores[w];
	}
	for (p = 0; p < st->n_ports; p++)
		for (q = 0; q < st->n_rxq[p]; q++) {
			/* by default with the owner of where its traffic goes: no ring crossed */
			w = map[p][q] >= 0 ? (unsigned int)map[p][q] :
					     (st->owner_of[live_peer(st, p)] + q) % st->n_workers;
			st->w[w].rxq[st->w[w].n_rxq].port = (uint16_t)p;
			st->w[w].rxq[st->w[w].n_rxq++].queue = (uint16_t)q;
		}
	return 0;
}
