/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The switch's accessors: what profiles, apps and tests read and set by name.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_branch_prediction.h>
#include <rte_malloc.h>

#include "lib/proto/roce_build.h"
#include "lib/proto/roce_mbuf.h"
#include "emu_json.h"
#include "emu_profile.h"

#include "emu_switch_int.h"

const struct emu_pipeline *
emu_switch_pipeline(const struct emu_switch *sw)
{
	return sw->pl;
}

struct emu_tm *
emu_switch_tm(struct emu_switch *sw)
{
	return sw->tm;
}

int
emu_switch_tm_set(struct emu_switch *sw, uint16_t port, const char *key, const json_t *val,
		  bool apply, uint64_t now_ns, const char *path, struct emu_err *err)
{
	return emu_tm_set(sw->tm, port, key, val, apply, now_ns, &sw->tm_rng, path, err);
}

json_t *
emu_switch_tm_get(const struct emu_switch *sw, uint16_t port, const char *key)
{
	return emu_tm_get(sw->tm, port, key);
}

json_t *
emu_switch_stage_get(const struct emu_switch *sw, int idx, const char *key)
{
	const struct emu_stage_inst *st = &sw->stages[idx];

	return st->ops->get == NULL ? NULL : st->ops->get(st->priv, key);
}

json_t *
emu_switch_incast_get(const struct emu_switch *sw, int idx, const char *key)
{
	return emu_incast_get(&sw->incast[idx].s, key);
}

int
emu_switch_stage_index(const struct emu_switch *sw, const char *name)
{
	unsigned int i;

	for (i = 0; i < sw->n_stages; i++)
		if (strcmp(sw->stages[i].name, name) == 0)
			return (int)i;
	return -1;
}

int
emu_switch_stage_set(struct emu_switch *sw, int idx, const char *key, const json_t *val,
		     bool apply, const char *path, struct emu_err *err)
{
	struct emu_stage_inst *st = &sw->stages[idx];

	if (st->ops->set == NULL)
		return emu_err_set(err, "%s: stage \"%s\" (%s) has no parameters a profile can change",
				   path, st->name, st->ops->type);
	return st->ops->set(st->priv, key, val, apply, path, err);
}

void
emu_switch_port_stats(const struct emu_switch *sw, uint16_t port, struct emu_port_stats *s)
{
	*s = sw->port_stats[port];
}

int64_t
emu_switch_stage_counter(const struct emu_switch *sw, const char *stage, const char *name)
{
	int idx = emu_switch_stage_index(sw, stage);
	unsigned int k;

	if (idx < 0)
		return -1;
	for (k = 0; k < sw->stages[idx].ops->n_ctr; k++)
		if (strcmp(sw->stages[idx].ops->ctr_names[k], name) == 0)
			return (int64_t)sw->stages[idx].ctr[k];
	return -1;
}

int
emu_switch_incast_index(const struct emu_switch *sw, const char *name)
{
	unsigned int i;

	for (i = 0; i < sw->n_incast; i++)
		if (strcmp(sw->incast[i].s.cfg.name, name) == 0)
			return (int)i;
	return -1;
}

int
emu_switch_incast_set(struct emu_switch *sw, int idx, const char *key, const json_t *val,
		      bool apply, uint64_t rel_ns, const char *path, struct emu_err *err)
{
	return emu_incast_set(&sw->incast[idx].s, key, val, apply, sw->prof_t0_ns + rel_ns, path,
			      err);
}

int64_t
emu_switch_incast_counter(const struct emu_switch *sw, const char *name, const char *ctr)
{
	int idx = emu_switch_incast_index(sw, name);
	unsigned int k;

	if (idx < 0)
		return -1;
	for (k = 0; k < EMU_INCAST_CTR_MAX; k++)
		if (strcmp(emu_incast_ctr_names[k], ctr) == 0)
			return (int64_t)sw->incast[idx].ctr[k];
	return -1;
}

uint64_t
emu_switch_incast_next_ns(const struct emu_switch *sw, const char *name)
{
	int idx = emu_switch_incast_index(sw, name);

	return idx < 0 ? UINT64_MAX : sw->incast[idx].s.next_ns;
}

void
emu_switch_incast_stop(struct emu_switch *sw)
{
	unsigned int i;

	for (i = 0; i < sw->n_incast; i++) {
		sw->incast[i].s.cfg.enabled = false;
		sw->incast[i].s.next_ns = UINT64_MAX;
	}
}
