/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What a profile's link changes do to the fabric's paths (emu_profile_path_warnings()): the
 * fabric routes over the shortest paths of the whole graph and has no routing protocol, so
 * with links down a leaf may have no path left to another leaf, or keep hashing some flows
 * onto a switch that has no link up towards their leaf (a black hole: those flows are
 * dropped as fabric.SWITCH.drop_no_path while the others get through). Both are said before
 * the run, with the times they hold.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "lib/ctl/emu_profile.h"
#include "lib/fabric/fab.h"
#include "lib/switch/emu_switch.h"

#define PATHS_MAX_FINDINGS 64 /* distinct findings followed; more are counted */
#define PATHS_MAX_LINES 6     /* lines written; the rest summed up in one */

/* A leaf with no path (ends = the switches it ends at) or with some paths ending there. */
struct paths_finding {
	bool none;
	uint8_t a, b;     /* from leaf a to leaf b */
	uint32_t ends;    /* switches with no link up towards b that a's packets may reach */
	uint64_t from_ns; /* since when it holds */
	bool active;      /* still holds after the changes being looked at */
};

/* Whether each switch, towards leaf @p b with links @p up, always (0), sometimes (1) or never
 * (2) delivers, following the routes the fabric takes (cfg->next, shortest paths). */
static void
paths_state(const struct fab_cfg *fc, uint64_t up, unsigned int b, uint8_t *state)
{
	unsigned int s, h, i;

	for (s = 0; s < fc->n_switches; s++)
		state[s] = 2;
	state[b] = 0;
	for (h = 1; h < FAB_MAX_SWITCHES; h++)
		for (s = 0; s < fc->n_switches; s++) {
			unsigned int n_up = 0, good = 0, bad = 0;

			if (fc->hops[s][b] != h)
				continue;
			for (i = 0; i < fc->n_next[s][b]; i++) {
				unsigned int l = fc->next[s][b][i];

				if (!((up >> l) & 1))
					continue;
				n_up++;
				if (state[fc->links[l].to] == 0)
					good++;
				else if (state[fc->links[l].to] == 2)
					bad++;
			}
			state[s] = n_up == 0 || bad == n_up ? 2 : good == n_up ? 0 : 1;
		}
}

/* The switches with no link up towards @p b that packets from @p a may reach over links @p up. */
static uint32_t
paths_ends(const struct fab_cfg *fc, uint64_t up, unsigned int a, unsigned int b)
{
	uint32_t seen = 1u << a, ends = 0, todo = 1u << a;

	while (todo != 0) {
		unsigned int s = (unsigned int)__builtin_ctz(todo), i, n_up = 0;

		todo &= todo - 1;
		if (s == b)
			continue;
		for (i = 0; i < fc->n_next[s][b]; i++) {
			unsigned int l = fc->next[s][b][i], t = fc->links[l].to;

			if (!((up >> l) & 1))
				continue;
			n_up++;
			if (!(seen & (1u << t))) {
				seen |= 1u << t;
				todo |= 1u << t;
			}
		}
		if (n_up == 0)
			ends |= 1u << s;
	}
	return ends;
}

static void
paths_print(FILE *f, const struct fab_cfg *fc, const struct emu_pipeline *pl,
	    const struct paths_finding *x, uint64_t to_ns)
{
	char ends[256], ctrs[512], port_a[64] = "", port_b[64] = "", until[48] = "";
	size_t used = 0, cused = 0;
	unsigned int s, p;

	ends[0] = ctrs[0] = '\0';
	for (s = 0; s < fc->n_switches && used < sizeof(ends) && cused < sizeof(ctrs); s++)
		if (x->ends & (1u << s)) {
			used += (size_t)snprintf(ends + used, sizeof(ends) - used, "%s%s",
						 used ? ", " : "", fc->sw[s].name);
			cused += (size_t)snprintf(ctrs + cused, sizeof(ctrs) - cused,
						  "%sfabric.%s.drop_no_path", cused ? ", " : "",
						  fc->sw[s].name);
		}
	for (p = 0; p < fc->n_ports; p++) {
		if (fc->port_leaf[p] == x->a && port_a[0] == '\0')
			snprintf(port_a, sizeof(port_a), "%s", pl->port_names[p]);
		if (fc->port_leaf[p] == x->b && port_b[0] == '\0')
			snprintf(port_b, sizeof(port_b), "%s", pl->port_names[p]);
	}
	if (to_ns != UINT64_MAX)
		snprintf(until, sizeof(until), " to %.9g s", (double)to_ns / 1e9);
	if (x->none)
		fprintf(f, "rocemu: WARNING: profile: from %.9g s%s %s has no path to %s: frames "
			"from %s to %s are dropped (%s)\n", (double)x->from_ns / 1e9, until,
			fc->sw[x->a].name, fc->sw[x->b].name, port_a, port_b, ctrs);
	else
		fprintf(f, "rocemu: WARNING: profile: from %.9g s%s some of %s's paths to %s end "
			"at %s, with no link up towards %s: flows from %s to %s hashed there are "
			"dropped (%s); the fabric does not withdraw routes (take all of a "
			"switch's links down, as profiles/spine-down.json does)\n",
			(double)x->from_ns / 1e9, until, fc->sw[x->a].name, fc->sw[x->b].name, ends,
			fc->sw[x->b].name, port_a, port_b, ctrs);
}

/* Look at links @p up from @p t_ns: new findings start, those gone end (and are written). */
static void
paths_look(FILE *f, const struct fab_cfg *fc, const struct emu_pipeline *pl, uint64_t up,
	   uint64_t t_ns, struct paths_finding *fs, unsigned int *n_fs, unsigned int *lines,
	   unsigned int *more)
{
	uint8_t state[FAB_MAX_SWITCHES];
	bool leaf[FAB_MAX_SWITCHES] = { false };
	unsigned int a, b, k, p;

	for (p = 0; p < fc->n_ports; p++)
		if (fc->port_leaf[p] != FAB_NONE)
			leaf[fc->port_leaf[p]] = true;
	for (k = 0; k < *n_fs; k++)
		fs[k].active = false;
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
			x.ends = paths_ends(fc, up, a, b);
			for (k = 0; k < *n_fs; k++)
				if (fs[k].none == x.none && fs[k].a == a && fs[k].b == b &&
				    fs[k].ends == x.ends)
					break;
			if (k < *n_fs) {
				fs[k].active = true;
				continue;
			}
			if (*n_fs == PATHS_MAX_FINDINGS) {
				(*more)++;
				continue;
			}
			x.from_ns = t_ns;
			x.active = true;
			fs[(*n_fs)++] = x;
		}
	}
	/* those that no longer hold: written with their end, then forgotten */
	for (k = 0, p = 0; k < *n_fs; k++) {
		if (fs[k].active) {
			fs[p++] = fs[k];
			continue;
		}
		if (*lines < PATHS_MAX_LINES)
			paths_print(f, fc, pl, &fs[k], t_ns);
		else
			(*more)++;
		(*lines)++;
	}
	*n_fs = p;
}

unsigned int
emu_profile_path_warnings(const struct emu_profile *prof, const struct emu_switch *sw, FILE *f)
{
	const struct emu_pipeline *pl = emu_switch_pipeline(sw);
	const struct fab_cfg *fc = pl->fabric;
	struct paths_finding fs[PATHS_MAX_FINDINGS];
	unsigned int i, k, n_fs = 0, lines = 0, more = 0;
	uint64_t up, all;

	if (prof == NULL || fc == NULL)
		return 0;
	all = fc->n_links >= 64 ? UINT64_MAX : (1ULL << fc->n_links) - 1;
	up = all;
	for (i = 0; i < prof->n_actions;) {
		const uint64_t t = prof->actions[i].at_ns;
		const uint64_t was = up;

		/* every change at one instant, then the paths */
		for (; i < prof->n_actions && prof->actions[i].at_ns == t; i++) {
			const struct emu_profile_action *x = &prof->actions[i];
			const char *v = json_string_value(x->val);

			if (x->target != EMU_TARGET_TM || x->index < (int)fc->n_ports ||
			    x->index >= (int)(fc->n_ports + fc->n_links) ||
			    strcmp(x->key, "link") != 0 || v == NULL)
				continue;
			if (strcmp(v, "up") == 0)
				up |= 1ULL << (x->index - (int)fc->n_ports);
			else
				up &= ~(1ULL << (x->index - (int)fc->n_ports));
		}
		if (up != was)
			paths_look(f, fc, pl, up, t, fs, &n_fs, &lines, &more);
	}
	/* those that hold to the end */
	for (k = 0; k < n_fs; k++) {
		if (lines < PATHS_MAX_LINES)
			paths_print(f, fc, pl, &fs[k], UINT64_MAX);
		else
			more++;
		lines++;
	}
	if (more > 0)
		fprintf(f, "rocemu: WARNING: profile: and %u more times a leaf lost some or all of "
			"its paths to another\n", more);
	return lines;
}
