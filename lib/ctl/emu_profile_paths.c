/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What a profile's link changes do to the fabric's paths (emu_profile_path_warnings()): the
 * fabric routes over the shortest paths of the whole graph and has no routing protocol, so
 * with links down a leaf may have no path left to another leaf, or keep sending some of its
 * packets to a switch that has no link up towards their leaf (a black hole: those packets are
 * dropped as fabric.SWITCH.drop_no_path while the others get through). Both are said before
 * the run, with the times they hold and the change that started them, assuming every link up
 * when the profile starts.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "lib/ctl/emu_profile.h"
#include "lib/fabric/fab.h"
#include "lib/switch/emu_switch.h"

#define PATHS_MAX_FINDINGS 64 /* distinct findings followed at once; more are counted */
#define PATHS_MAX_LINES 6     /* lines written; the rest summed up in one */

/* A leaf with no path (ends: the switches its packets are dropped at) or with some of its
 * paths ending there. */
struct paths_finding {
	bool none;
	bool spray;       /* a switch on the way sprays: a share of every flow is dropped */
	uint8_t a, b;     /* from leaf a to leaf b */
	uint32_t ends;    /* switches with no link up towards b that a's packets may reach */
	uint64_t from_ns; /* since when it holds */
	const char *cause; /* the JSON path of a link change at from_ns */
	bool active;      /* still holds after the changes being looked at */
};

struct paths_ctx {
	FILE *f;
	const struct fab_cfg *fc;
	const struct emu_pipeline *pl;
	struct paths_finding fs[PATHS_MAX_FINDINGS];
	unsigned int n_fs, lines, more, over_n; /* lines: findings ended; over_n: not followed */
	uint8_t over[FAB_MAX_SWITCHES][FAB_MAX_SWITCHES]; /* (a, b) counted in more, by kind */
};

/* The next hops switch @p s may send a packet towards @p b by, with links @p up: every one up,
 * or only the first up for a static switch (fab_route.c). Bit k: cfg->next[s][b][k]. */
static uint32_t
paths_choices(const struct fab_cfg *fc, uint64_t up, unsigned int s, unsigned int b)
{
	uint32_t m = 0;
	unsigned int k;

	for (k = 0; k < fc->n_next[s][b]; k++)
		if ((up >> fc->next[s][b][k]) & 1) {
			m |= 1u << k;
			if (fc->sw[s].mode == FAB_ROUTE_STATIC)
				break;
		}
	return m;
}

/* Whether each switch, towards leaf @p b with links @p up, always (0), sometimes (1) or never
 * (2) delivers, following the routes the fabric takes (cfg->next, shortest paths). */
static void
paths_state(const struct fab_cfg *fc, uint64_t up, unsigned int b, uint8_t *state)
{
	unsigned int s, h, k;

	for (s = 0; s < fc->n_switches; s++)
		state[s] = 2;
	state[b] = 0;
	for (h = 1; h < FAB_MAX_SWITCHES; h++)
		for (s = 0; s < fc->n_switches; s++) {
			uint32_t m;
			unsigned int n = 0, good = 0, bad = 0;

			if (fc->hops[s][b] != h)
				continue;
			m = paths_choices(fc, up, s, b);
			for (k = 0; k < fc->n_next[s][b]; k++) {
				unsigned int t = fc->links[fc->next[s][b][k]].to;

				if (!(m & (1u << k)))
					continue;
				n++;
				good += state[t] == 0;
				bad += state[t] == 2;
			}
			state[s] = n == 0 || bad == n ? 2 : good == n ? 0 : 1;
		}
}

/* The switches with no link up towards @p b that packets from @p a may reach over links @p up,
 * and in *@p spray whether one of the switches on the way sprays (a share of every flow). */
static uint32_t
paths_ends(const struct fab_cfg *fc, uint64_t up, unsigned int a, unsigned int b, bool *spray)
{
	uint32_t seen = 1u << a, ends = 0, todo = 1u << a;

	*spray = false;
	while (todo != 0) {
		unsigned int s = (unsigned int)__builtin_ctz(todo), k;
		uint32_t m;

		todo &= todo - 1;
		if (s == b)
			continue;
		m = paths_choices(fc, up, s, b);
		if (m == 0)
			ends |= 1u << s;
		if ((m & (m - 1)) != 0 && fc->sw[s].mode != FAB_ROUTE_ECMP)
			*spray = true;
		for (k = 0; k < fc->n_next[s][b]; k++) {
			unsigned int t = fc->links[fc->next[s][b][k]].to;

			if ((m & (1u << k)) && !(seen & (1u << t))) {
				seen |= 1u << t;
				todo |= 1u << t;
			}
		}
	}
	return ends;
}

/* "T s": whole seconds, and the nanoseconds when there are any. */
static void
paths_time(char *buf, size_t len, uint64_t t_ns)
{
	uint64_t ns = t_ns % UINT64_C(1000000000);
	int w = 9;

	if (ns == 0) {
		snprintf(buf, len, "%" PRIu64 " s", t_ns / UINT64_C(1000000000));
		return;
	}
	while (ns % 10 == 0) {
		ns /= 10;
		w--;
	}
	snprintf(buf, len, "%" PRIu64 ".%0*" PRIu64 " s", t_ns / UINT64_C(1000000000), w, ns);
}

/* The real ports on leaf @p leaf, "p0" or "p0, p2". */
static void
paths_ports(const struct paths_ctx *c, unsigned int leaf, char *buf, size_t len)
{
	size_t used = 0;
	unsigned int p;

	buf[0] = '\0';
	for (p = 0; p < c->fc->n_ports && used < len; p++)
		if (c->fc->port_leaf[p] == leaf)
			used += (size_t)snprintf(buf + used, len - used, "%s%s", used ? ", " : "",
						 c->pl->port_names[p]);
}

static void
paths_print(struct paths_ctx *c, const struct paths_finding *x, uint64_t to_ns)
{
	const struct fab_cfg *fc = c->fc;
	char ends[256], ctrs[512], port_a[128], port_b[128], from[40], until[48] = "";
	size_t used = 0, cused = 0;
	unsigned int s;

	if (c->lines++ >= PATHS_MAX_LINES) {
		c->more++;
		return;
	}
	ends[0] = ctrs[0] = '\0';
	for (s = 0; s < fc->n_switches && used < sizeof(ends) && cused < sizeof(ctrs); s++)
		if (x->ends & (1u << s)) {
			used += (size_t)snprintf(ends + used, sizeof(ends) - used, "%s%s",
						 used ? ", " : "", fc->sw[s].name);
			cused += (size_t)snprintf(ctrs + cused, sizeof(ctrs) - cused,
						  "%sfabric.%s.drop_no_path", cused ? ", " : "",
						  fc->sw[s].name);
		}
	paths_ports(c, x->a, port_a, sizeof(port_a));
	paths_ports(c, x->b, port_b, sizeof(port_b));
	paths_time(from, sizeof(from), x->from_ns);
	if (to_ns != UINT64_MAX) {
		char t[40];

		paths_time(t, sizeof(t), to_ns);
		snprintf(until, sizeof(until), " to %s", t);
	}
	if (x->none)
		fprintf(c->f, "rocemu: WARNING: profile: from %s%s %s has no path to %s: frames "
			"from %s to %s are dropped (%s) (after %s)\n", from, until,
			fc->sw[x->a].name, fc->sw[x->b].name, port_a, port_b, ctrs, x->cause);
	else
		fprintf(c->f, "rocemu: WARNING: profile: from %s%s some of %s's paths to %s end "
			"at %s, with no link up towards %s: %s from %s to %s routed there are "
			"dropped (%s); the fabric does not withdraw routes (take all of a "
			"switch's links down, as profiles/spine-down.json does) (after %s)\n",
			from, until, fc->sw[x->a].name, fc->sw[x->b].name, ends, fc->sw[x->b].name,
			x->spray ? "a share of every flow" : "the flows", port_a, port_b, ctrs,
			x->cause);
}

/* Look at links @p up from @p t_ns (@p cause: a change then): new findings start, those gone
 * end (and are written). */
static void
paths_look(struct paths_ctx *c, uint64_t up, uint64_t t_ns, const char *cause)
{
	const struct fab_cfg *fc = c->fc;
	uint8_t state[FAB_MAX_SWITCHES];
	bool leaf[FAB_MAX_SWITCHES] = { false };
	unsigned int a, b, k, p;

	for (p = 0; p < fc->n_ports; p++)
		if (fc->port_leaf[p] != FAB_NONE)
			leaf[fc->port_leaf[p]] = true;
	for (k = 0; k < c->n_fs; k++)
		c->fs[k].active = false;
	for (b = 0; b < fc->n_switches; b++) {
		if (!leaf[b])
			continue;
		paths_state(fc, up, b, state);
		for (a = 0; a < fc->n_switches; a++) {
			struct paths_finding x;

			if (!leaf[a] || a == b || state[a] == 0)
				continue;
			memset(&x, 0, sizeof(x));
			x.none = state[a] == 2;
			x.a = (uint8_t)a;
			x.b = (uint8_t)b;
			x.ends = paths_ends(fc, up, a, b, &x.spray);
			for (k = 0; k < c->n_fs; k++)
				if (c->fs[k].none == x.none && c->fs[k].a == a && c->fs[k].b == b &&
				    c->fs[k].ends == x.ends)
					break;
			if (k < c->n_fs) {
				c->fs[k].active = true;
				continue;
			}
			if (c->n_fs == PATHS_MAX_FINDINGS) {
				/* no room to follow it: counted once for its pair and kind */
				if (!(c->over[a][b] & (1u << x.none))) {
					c->over[a][b] |= (uint8_t)(1u << x.none);
					c->over_n++;
					c->more++;
				}
				continue;
			}
			x.from_ns = t_ns;
			x.cause = cause;
			x.active = true;
			c->fs[c->n_fs++] = x;
		}
	}
	/* those that no longer hold: written with their end, then forgotten */
	for (k = 0, p = 0; k < c->n_fs; k++) {
		if (c->fs[k].active)
			c->fs[p++] = c->fs[k];
		else
			paths_print(c, &c->fs[k], t_ns);
	}
	c->n_fs = p;
}

unsigned int
emu_profile_path_warnings(const struct emu_profile *prof, const struct emu_switch *sw, FILE *f)
{
	const struct emu_pipeline *pl = emu_switch_pipeline(sw);
	struct paths_ctx c; /* about 3.7 KB: control path */
	unsigned int i, k;
	uint64_t up;

	if (prof == NULL || pl->fabric == NULL)
		return 0;
	memset(&c, 0, sizeof(c));
	c.f = f;
	c.fc = pl->fabric;
	c.pl = pl;
	up = c.fc->n_links >= 64 ? UINT64_MAX : (1ULL << c.fc->n_links) - 1;
	for (i = 0; i < prof->n_actions;) {
		const uint64_t t = prof->actions[i].at_ns, was = up;
		const char *cause = NULL;

		/* every change at one instant, then the paths */
		for (; i < prof->n_actions && prof->actions[i].at_ns == t; i++) {
			const struct emu_profile_action *x = &prof->actions[i];
			const char *v = json_string_value(x->val);
			const int l = x->index - (int)c.fc->n_ports;

			if (x->target != EMU_TARGET_TM || l < 0 || l >= (int)c.fc->n_links ||
			    strcmp(x->key, "link") != 0 || v == NULL)
				continue;
			if (strcmp(v, "up") == 0)
				up |= 1ULL << l;
			else
				up &= ~(1ULL << l);
			if (cause == NULL)
				cause = x->path;
		}
		if (up != was)
			paths_look(&c, up, t, cause);
	}
	/* those that hold to the end */
	for (k = 0; k < c.n_fs; k++)
		paths_print(&c, &c.fs[k], UINT64_MAX);
	if (c.more > 0)
		fprintf(f, "rocemu: WARNING: profile: and %u more times a leaf lost some or all of "
			"its paths to another\n", c.more);
	return c.lines + c.over_n;
}
