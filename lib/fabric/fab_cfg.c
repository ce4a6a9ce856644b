/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The "fabric" section of a pipeline: switches, links (each a TM port configuration of its
 * own) and the shortest-path next hops of every switch towards every other.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_common.h>

#include "lib/base/emu_json.h"
#include "lib/fabric/fab.h"

const char *const fab_link_ctr_names[FAB_LINK_CTR_MAX] = {
#define FAB_LINK_CTR_NAME(e, s) s,
	FAB_LINK_FOREACH_CTR(FAB_LINK_CTR_NAME)
#undef FAB_LINK_CTR_NAME
};

const char *const fab_sw_ctr_names[FAB_SW_CTR_MAX] = {
#define FAB_SW_CTR_NAME(e, s) s,
	FAB_SW_FOREACH_CTR(FAB_SW_CTR_NAME)
#undef FAB_SW_CTR_NAME
};

static const char *const fab_mode_names[FAB_ROUTE_MAX] = {
	"ecmp", "round_robin", "random", "adaptive", "flowlet", "static",
};

static int
fab_switch_index(const struct fab_cfg *c, const char *name)
{
	unsigned int i;

	for (i = 0; i < c->n_switches; i++)
		if (strcmp(c->sw[i].name, name) == 0)
			return (int)i;
	return -1;
}

/* A name must not be used twice among ports, switches and links. */
static int
fab_name_free(const struct fab_cfg *c, unsigned int n_ports, const char *const *names,
	      const char *name, const char *path, struct emu_err *err)
{
	unsigned int i;

	if (strlen(name) >= FAB_NAME_LEN)
		return emu_err_set(err, "%s: longer than %d characters", path, FAB_NAME_LEN - 1);
	for (i = 0; i < n_ports; i++)
		if (strcmp(names[i], name) == 0)
			return emu_err_set(err, "%s: \"%s\" is already a port's name", path, name);
	if (fab_switch_index(c, name) >= 0)
		return emu_err_set(err, "%s: \"%s\" is already a switch's name", path, name);
	for (i = 0; i < c->n_links; i++)
		if (strcmp(c->links[i].name, name) == 0)
			return emu_err_set(err, "%s: \"%s\" is already a link's name", path, name);
	return 0;
}

static int
fab_switch_parse(struct fab_cfg *c, const json_t *o, const char *path, unsigned int n_ports,
		 const char *const *names, struct emu_err *err)
{
	struct fab_switch_cfg *s = &c->sw[c->n_switches];
	char p[EMU_JSON_PATH_LEN], pe[EMU_JSON_PATH_LEN];
	const char *name, *mode;
	const json_t *ports, *e;
	double gap_us;
	unsigned int m, port;
	size_t i;
	int rc;

	rc = emu_json_expect_object(o, path, err);
	if (rc == 0)
		rc = emu_keys_check(o, path, &fab_switch_table, err);
	if (rc == 0)
		rc = emu_key_str(o, path, &fab_switch_table, "name", &name, err);
	emu_json_path(p, sizeof(p), path, "name");
	if (rc == 0)
		rc = fab_name_free(c, n_ports, names, name, p, err);
	if (rc == 0)
		rc = emu_key_str(o, path, &fab_switch_table, "route", &mode, err);
	if (rc == 0)
		rc = emu_key_num(o, path, &fab_switch_table, "flowlet_us", &gap_us, err);
	if (rc != 0)
		return rc;
	memset(s, 0, sizeof(*s));
	snprintf(s->name, sizeof(s->name), "%s", name);
	for (m = 0; m < FAB_ROUTE_MAX; m++)
		if (strcmp(fab_mode_names[m], mode) == 0)
			break;
	if (m == FAB_ROUTE_MAX)
		return emu_err_set(err, "%s.route: must be \"ecmp\", \"round_robin\", \"random\", "
				   "\"adaptive\", \"flowlet\" or \"static\", got \"%s\"", path, mode);
	s->mode = (enum fab_route_mode)m;
	if (json_object_get(o, "flowlet_us") != NULL && s->mode != FAB_ROUTE_FLOWLET)
		return emu_err_set(err, "%s.flowlet_us: only with \"route\": \"flowlet\"", path);
	s->flowlet_gap_ns = (uint64_t)(gap_us * 1e3 + 0.5);
	if (s->mode == FAB_ROUTE_FLOWLET)
		c->needs_flow_table = true;
	emu_json_path(p, sizeof(p), path, "hash");
	if (json_object_get(o, "hash") != NULL) {
		rc = fab_hash_parse(json_object_get(o, "hash"), p, &s->hash, err);
	} else {
		json_t *none = json_object(); /* the defaults: CRC16-CCITT on the 5-tuple, seed 0 */

		rc = none == NULL ? emu_err_setrc(err, -ENOMEM, "%s: out of memory", p) :
				    fab_hash_parse(none, p, &s->hash, err);
		json_decref(none);
	}
	if (rc != 0)
		return rc;
	if (json_object_get(o, "hash") != NULL && s->mode != FAB_ROUTE_ECMP)
		return emu_err_set(err, "%s: only with \"route\": \"ecmp\"", p);
	if (json_object_get(o, "spray_match") != NULL) {
		emu_json_path(p, sizeof(p), path, "spray_match");
		if (s->mode == FAB_ROUTE_ECMP || s->mode == FAB_ROUTE_STATIC)
			return emu_err_set(err, "%s: only with a spraying route (round_robin, "
					   "random, adaptive, flowlet)", p);
		/* the route is chosen after forward: the egress port is known */
		rc = emu_match_parse(json_object_get(o, "spray_match"), p, names, n_ports, true,
				     &s->spray_match, err);
		if (rc != 0)
			return rc;
		if (s->spray_match.flags & EMU_MATCH_ITERATION)
			return emu_err_set(err, "%s.iteration: not in a fabric (no iteration "
					   "tracker there)", p);
		s->has_spray_match = true;
	}
	ports = json_object_get(o, "ports");
	emu_json_path(p, sizeof(p), path, "ports");
	if (ports != NULL && (rc = emu_json_expect_array(ports, p, err)) != 0)
		return rc;
	if (ports != NULL && json_array_size(ports) == 0)
		return emu_err_set(err, "%s: must name at least one port; omit it for a switch "
				   "without real ports (a spine)", p);
	json_array_foreach(ports, i, e) {
		emu_json_path_idx(pe, sizeof(pe), p, i);
		if (!json_is_string(e))
			return emu_err_set(err, "%s: must be a port name, got %s", pe,
					   emu_json_type_name(e));
		for (port = 0; port < n_ports; port++)
			if (strcmp(names[port], json_string_value(e)) == 0)
				break;
		if (port == n_ports)
			return emu_err_set(err, "%s: no port named \"%s\" in ports[]", pe,
					   json_string_value(e));
		if (c->port_leaf[port] != FAB_NONE)
			return emu_err_set(err, "%s: port \"%s\" is already attached to switch "
					   "\"%s\"", pe, names[port], c->sw[c->port_leaf[port]].name);
		c->port_leaf[port] = (uint16_t)c->n_switches;
	}
	c->n_switches++;
	return 0;
}

/* One "links" entry: 1 to 2 x count links. */
static int
fab_link_parse(struct fab_cfg *c, const json_t *o, const char *path, unsigned int n_ports,
	       const char *const *names, uint32_t mtu, struct emu_err *err)
{
	const struct emu_key_table *t = &fab_link_table;
	const char *from, *to, *name;
	char p[EMU_JSON_PATH_LEN], base[2 * FAB_NAME_LEN + 2], nm[2 * FAB_NAME_LEN + 16];
	struct emu_tm_port_cfg pc;
	int64_t count;
	bool both;
	double loss;
	int a, b, rc;
	unsigned int dir, k;

	rc = emu_json_expect_object(o, path, err);
	if (rc == 0)
		rc = emu_keys_check(o, path, t, err);
	if (rc == 0)
		rc = emu_key_str(o, path, t, "from", &from, err);
	if (rc == 0)
		rc = emu_key_str(o, path, t, "to", &to, err);
	if (rc == 0)
		rc = emu_key_str(o, path, t, "name", &name, err);
	if (rc == 0)
		rc = emu_key_bool(o, path, t, "both_ways", &both, err);
	if (rc == 0)
		rc = emu_key_int(o, path, t, "count", &count, err);
	if (rc == 0)
		rc = emu_key_num(o, path, t, "loss", &loss, err);
	if (rc != 0)
		return rc;
	a = fab_switch_index(c, from);
	b = fab_switch_index(c, to);
	if (a < 0 || b < 0)
		return emu_err_set(err, "%s.%s: no switch named \"%s\" in fabric.switches", path,
				   a < 0 ? "from" : "to", a < 0 ? from : to);
	if (a == b)
		return emu_err_set(err, "%s.to: a link joins two different switches", path);
	if (name != NULL && (both || count > 1))
		return emu_err_set(err, "%s.name: only for one link (\"both_ways\": false, "
				   "\"count\": 1); else links are named FROM-TO[.K]", path);
	emu_tm_port_cfg_default(&pc);
	rc = emu_tm_port_parse(o, path, mtu, &pc, err);
	if (rc != 0)
		return rc;
	pc.own_buffer = true;
	for (dir = 0; dir < (both ? 2u : 1u); dir++) {
		for (k = 0; k < (unsigned int)count; k++) {
			struct fab_link_cfg *l;

			if (c->n_links == FAB_MAX_LINKS)
				return emu_err_set(err, "%s: more than %d links in the fabric", path,
						   FAB_MAX_LINKS);
			snprintf(base, sizeof(base), "%s-%s", dir == 0 ? from : to,
				 dir == 0 ? to : from);
			if (name != NULL)
				snprintf(nm, sizeof(nm), "%s", name);
			else if (count > 1)
				snprintf(nm, sizeof(nm), "%s.%u", base, k);
			else
				snprintf(nm, sizeof(nm), "%s", base);
			emu_json_path(p, sizeof(p), path, name != NULL ? "name" : "to");
			if (name == NULL && strlen(nm) >= FAB_NAME_LEN)
				return emu_err_set(err, "%s: the link's name \"%s\" would be longer "
						   "than %d characters; shorten the switch names",
						   p, nm, FAB_NAME_LEN - 1);
			rc = fab_name_free(c, n_ports, names, nm, p, err);
			if (rc != 0)
				return rc;
			l = &c->links[c->n_links++];
			memset(l, 0, sizeof(*l));
			memcpy(l->name, nm, strlen(nm) + 1); /* fab_name_free() checked its length */
			l->from = (uint16_t)(dir == 0 ? a : b);
			l->to = (uint16_t)(dir == 0 ? b : a);
			l->loss = loss;
			l->tm = pc;
		}
	}
	return 0;
}

/* Hop counts to every switch (BFS on the reversed links) and the next hops on shortest paths. */
static void
fab_routes(struct fab_cfg *c)
{
	unsigned int d, s, l, head, tail, queue[FAB_MAX_SWITCHES];

	memset(c->hops, 0xff, sizeof(c->hops));
	memset(c->n_next, 0, sizeof(c->n_next));
	for (d = 0; d < c->n_switches; d++) {
		c->hops[d][d] = 0;
		head = tail = 0;
		queue[tail++] = d;
		while (head < tail) {
			unsigned int x = queue[head++];

			for (l = 0; l < c->n_links; l++) {
				unsigned int y = c->links[l].from;

				if (c->links[l].to != x || c->hops[y][d] != 0xff)
					continue;
				c->hops[y][d] = (uint8_t)(c->hops[x][d] + 1);
				queue[tail++] = y;
			}
		}
		for (s = 0; s < c->n_switches; s++) {
			if (s == d || c->hops[s][d] == 0xff)
				continue;
			for (l = 0; l < c->n_links; l++)
				if (c->links[l].from == s &&
				    c->hops[c->links[l].to][d] + 1 == c->hops[s][d] &&
				    c->n_next[s][d] < FAB_MAX_NEXT)
					c->next[s][d][c->n_next[s][d]++] = (uint8_t)l;
		}
	}
}

/* Which links feed which (on some route), and the levels they make. */
static void
fab_levels(struct fab_cfg *c)
{
	static uint64_t feeds[FAB_MAX_LINKS]; /* bit m: link l's packets may go on to m */
	unsigned int d, l, m, k, pass;
	bool changed = true;
	int lv[FAB_MAX_LINKS];

	memset(feeds, 0, sizeof(feeds));
	for (d = 0; d < c->n_switches; d++) {
		bool dest = false;

		/* packets only ever head for a leaf with a real port (virtual senders attach to
		 * such leaves and send to real ports too); counting routes towards spines would
		 * chain a leaf-spine's up and down links into one long line of "levels" */
		for (k = 0; k < c->n_ports; k++)
			if (c->port_leaf[k] == d)
				dest = true;
		if (!dest)
			continue;
		for (l = 0; l < c->n_links; l++) {
			unsigned int a = c->links[l].from, b = c->links[l].to;

			if (c->hops[a][d] == 0xff || c->hops[b][d] == 0xff ||
			    c->hops[b][d] + 1 != c->hops[a][d])
				continue; /* not on a shortest path to d */
			for (k = 0; k < c->n_next[b][d]; k++)
				feeds[l] |= 1ULL << c->next[b][d][k];
		}
	}
	for (l = 0; l < c->n_links; l++)
		lv[l] = 0;
	/* longest chain of feeders; shortest paths have no loops, so it settles */
	for (pass = 0; changed && pass <= c->n_links; pass++) {
		changed = false;
		for (l = 0; l < c->n_links; l++)
			for (m = 0; m < c->n_links; m++)
				if ((feeds[l] >> m & 1) && lv[m] < lv[l] + 1) {
					lv[m] = lv[l] + 1;
					changed = true;
				}
	}
	c->levels_exact = !changed;
	c->n_levels = 0;
	for (l = 0; l < c->n_links; l++)
		c->level_last[l] = true;
	for (l = 0; l < c->n_links; l++) {
		c->level[l] = (uint8_t)lv[l];
		if (feeds[l] != 0)
			c->level_last[lv[l]] = false;
		if (lv[l] + 1 > c->n_levels)
			c->n_levels = (uint8_t)(lv[l] + 1);
		for (m = 0; m < c->n_links; m++)
			if ((feeds[m] >> l & 1) && lv[m] + 1 != lv[l])
				c->levels_exact = false; /* fed from two depths */
	}
	/* a link that real ports and other links both feed mixes depths too */
	for (l = 0; l < c->n_links; l++) {
		bool from_port = false, from_link = false;

		for (k = 0; k < c->n_ports; k++)
			if (c->port_leaf[k] == c->links[l].from)
				from_port = true;
		for (m = 0; m < c->n_links; m++)
			if (feeds[m] >> l & 1)
				from_link = true;
		if (from_port && from_link)
			c->levels_exact = false;
	}
}

int
fab_cfg_parse(const json_t *o, unsigned int n_ports, const char *const *names,
	      const uint32_t *mtus, struct fab_cfg **out, struct emu_err *err)
{
	char p[EMU_JSON_PATH_LEN];
	const json_t *arr, *e;
	struct fab_cfg *c;
	uint32_t mtu = 0;
	unsigned int i, j, k;
	size_t idx;
	int rc;

	*out = NULL;
	if (o == NULL)
		return 0;
	rc = emu_json_expect_object(o, "fabric", err);
	if (rc == 0)
		rc = emu_keys_check(o, "fabric", &fab_table, err);
	if (rc != 0)
		return rc;
	c = calloc(1, sizeof(*c));
	if (c == NULL)
		return emu_err_setrc(err, -ENOMEM, "fabric: out of memory");
	c->n_ports = n_ports;
	for (i = 0; i < EMU_MAX_PORTS; i++)
		c->port_leaf[i] = FAB_NONE;
	for (i = 0; i < n_ports; i++)
		mtu = mtus[i] > mtu ? mtus[i] : mtu;
	arr = json_object_get(o, "switches");
	if (arr != NULL && (rc = emu_json_expect_array(arr, "fabric.switches", err)) != 0)
		goto fail;
	if (arr == NULL || json_array_size(arr) < 2) {
		rc = emu_err_set(err, "fabric.switches: must list at least two switches");
		goto fail;
	}
	if (json_array_size(arr) > FAB_MAX_SWITCHES) {
		rc = emu_err_set(err, "fabric.switches: at most %d switches, got %zu",
				 FAB_MAX_SWITCHES, json_array_size(arr));
		goto fail;
	}
	json_array_foreach(arr, idx, e) {
		emu_json_path_idx(p, sizeof(p), "fabric.switches", idx);
		rc = fab_switch_parse(c, e, p, n_ports, names, err);
		if (rc != 0)
			goto fail;
	}
	arr = json_object_get(o, "links");
	if (arr != NULL && (rc = emu_json_expect_array(arr, "fabric.links", err)) != 0)
		goto fail;
	if (arr == NULL || json_array_size(arr) == 0) {
		rc = emu_err_set(err, "fabric.links: must list at least one link");
		goto fail;
	}
	json_array_foreach(arr, idx, e) {
		emu_json_path_idx(p, sizeof(p), "fabric.links", idx);
		rc = fab_link_parse(c, e, p, n_ports, names, mtu, err);
		if (rc != 0)
			goto fail;
	}
	fab_routes(c);
	fab_levels(c);
	/* a resilient table needs a bucket for every next hop */
	for (i = 0; i < c->n_switches; i++)
		for (j = 0; j < c->n_switches && c->sw[i].hash.res_buckets != 0; j++)
			if (c->n_next[i][j] > c->sw[i].hash.res_buckets) {
				rc = emu_err_set(err, "fabric.switches[%u].hash.resilient_buckets: "
						 "%u buckets for %u next hops towards \"%s\": "
						 "give at least %u", i, c->sw[i].hash.res_buckets,
						 c->n_next[i][j], c->sw[j].name, c->n_next[i][j]);
				goto fail;
			}
	/* every leaf reaches every other leaf */
	for (i = 0; i < n_ports; i++)
		for (j = 0; j < n_ports; j++) {
			unsigned int a = c->port_leaf[i], b = c->port_leaf[j];

			if (a == FAB_NONE || b == FAB_NONE || a == b || c->hops[a][b] != 0xff)
				continue;
			rc = emu_err_set(err, "fabric.links: no path from switch \"%s\" (port %s) to "
					 "switch \"%s\" (port %s)", c->sw[a].name, names[i],
					 c->sw[b].name, names[j]);
			goto fail;
		}
	/* a switch no link touches, or fewer than two leaves: no frame would cross the fabric */
	for (i = 0; i < c->n_switches; i++) {
		for (j = 0; j < c->n_links; j++)
			if (c->links[j].from == i || c->links[j].to == i)
				break;
		if (j == c->n_links) {
			rc = emu_err_set(err, "fabric.switches[%u]: switch \"%s\" has no link in "
					 "fabric.links", i, c->sw[i].name);
			goto fail;
		}
	}
	for (i = 0, j = 0; i < c->n_switches; i++)
		for (k = 0; k < n_ports; k++)
			if (c->port_leaf[k] == i) {
				j++;
				break;
			}
	if (j < 2) {
		rc = emu_err_set(err, "fabric.switches: must have at least two leaves (switches with "
				 "\"ports\"), got %u: frames cross the fabric only from leaf to leaf",
				 j);
		goto fail;
	}
	*out = c;
	return 0;
fail:
	free(c);
	return rc;
}

void
fab_cfg_free(struct fab_cfg *cfg)
{
	free(cfg);
}
