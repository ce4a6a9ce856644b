/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Which real ports' traffic may share a fabric link. With several workers, the packets to a
 * real port cross the fabric on the worker that owns that port's egress (lib/switch hands a
 * packet to its destination's owner before the fabric), and each worker's replica has its own
 * copy of every link's queues. A link that carries packets to ports of two workers would be
 * two half-loaded links: such ports must share a worker. Grouping the ports by the links
 * their packets can take gives the split; a leaf-spine with two leaves splits in two (the
 * links towards each leaf are disjoint), three leaves do not (a leaf's up-links carry
 * packets to both others).
 */
#include "lib/fabric/fab.h"

/* Bit l: link l can carry packets to leaf @p d: it leaves a switch that such packets reach,
 * from a switch with a real port, along the routes towards d (next[.][d]). */
static uint64_t
fab_links_to(const struct fab_cfg *c, unsigned int d)
{
	bool reached[FAB_MAX_SWITCHES] = { false };
	unsigned int stack[FAB_MAX_SWITCHES], n = 0, k, s;
	uint64_t links = 0;

	for (k = 0; k < c->n_ports; k++) {
		s = c->port_leaf[k];
		if (s != FAB_NONE && s != d && !reached[s]) {
			reached[s] = true;
			stack[n++] = s;
		}
	}
	while (n > 0) {
		s = stack[--n];
		for (k = 0; k < c->n_next[s][d]; k++) {
			unsigned int l = c->next[s][d][k], t = c->links[l].to;

			links |= 1ULL << l;
			if (t != d && !reached[t]) {
				reached[t] = true;
				stack[n++] = t;
			}
		}
	}
	return links;
}

uint16_t
fab_shared_link(const struct fab_cfg *c, unsigned int a, unsigned int b)
{
	uint64_t both;

	if (c->port_leaf[a] == FAB_NONE || c->port_leaf[b] == FAB_NONE)
		return FAB_NONE;
	both = fab_links_to(c, c->port_leaf[a]) & fab_links_to(c, c->port_leaf[b]);
	return both != 0 ? (uint16_t)__builtin_ctzll(both) : FAB_NONE;
}

unsigned int
fab_port_groups(const struct fab_cfg *c, uint8_t group[EMU_MAX_PORTS])
{
	uint8_t map[EMU_MAX_PORTS];
	unsigned int a, b, k, n = 0;

	for (a = 0; a < c->n_ports; a++)
		group[a] = (uint8_t)a;
	/* two ports sharing a link: one group (relabel the later one's whole group) */
	for (a = 0; a < c->n_ports; a++)
		for (b = 0; b < a; b++)
			if (group[a] != group[b] && fab_shared_link(c, a, b) != FAB_NONE) {
				uint8_t from = group[a];

				for (k = 0; k < c->n_ports; k++)
					if (group[k] == from)
						group[k] = group[b];
			}
	/* number them 0..n-1 in the order of their first port */
	memset(map, 0xff, sizeof(map));
	for (a = 0; a < c->n_ports; a++) {
		if (map[group[a]] == 0xff)
			map[group[a]] = (uint8_t)n++;
		group[a] = map[group[a]];
	}
	return n;
}
