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
#include "lib/base/emu_json.h"

#include "lib/switch/emu_switch_int.h"

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

void
emu_switch_set_general_only(struct emu_switch *sw, bool on)
{
	sw->general_only = on;
	emu_tm_set_general_only(sw->tm, on);
}

/* One object per TM port, stage (null without compile) and incast source; NULL on ENOMEM. */
json_t *
emu_switch_settings_snapshot(const struct emu_switch *sw)
{
	json_t *o = json_pack("{s:[], s:[], s:[]}", "tm", "stages", "incast");
	const struct emu_stage_inst *st;
	unsigned int i;
	json_t *v;
	int rc = o == NULL ? -1 : 0;

	for (i = 0; rc == 0 && i < sw->pl->tm.n_ports; i++) {
		v = emu_tm_settings(&sw->pl->tm.ports[i]);
		rc = v == NULL ? -1 : json_array_append_new(json_object_get(o, "tm"), v);
	}
	for (i = 0; rc == 0 && i < sw->n_stages; i++) {
		st = &sw->stages[i];
		v = st->ops->settings != NULL ? st->ops->settings(st->priv) : json_null();
		rc = v == NULL ? -1 : json_array_append_new(json_object_get(o, "stages"), v);
	}
	for (i = 0; rc == 0 && i < sw->n_incast; i++) {
		v = emu_incast_settings(&sw->pl->incast[i]);
		rc = v == NULL ? -1 : json_array_append_new(json_object_get(o, "incast"), v);
	}
	if (rc != 0) {
		json_decref(o);
		return NULL;
	}
	return o;
}

json_t *
emu_switch_setting(const struct emu_switch *sw, enum emu_target t, int index, const char *key)
{
	static const char *const lists[] = { "tm", "stages", "incast" };
	json_t *v = json_object_get(json_array_get(json_object_get(sw->settings, lists[t]),
						   (size_t)index), key);

	return v == NULL ? NULL : json_incref(v);
}

int
emu_switch_compile(const struct emu_switch *sw, enum emu_target t, int index, const char *key,
		   const json_t *val, struct emu_set *out, const char *path, struct emu_err *err)
{
	const struct emu_stage_inst *st;

	if (t == EMU_TARGET_TM)
		return emu_tm_compile(sw->tm, (uint16_t)index, key, val, out, path, err);
	if (t == EMU_TARGET_INCAST)
		return emu_incast_compile(&sw->pl->incast[index], key, val, out, path, err);
	st = &sw->stages[index];
	if (st->ops->compile == NULL || st->ops->apply == NULL)
		return emu_err_set(err, "%s: stage \"%s\" (%s) has no parameters a profile can change",
				   path, st->name, st->ops->type);
	return st->ops->compile(st->priv, key, val, out, path, err);
}

int
emu_switch_tm_set(struct emu_switch *sw, uint16_t port, const char *key, const json_t *val,
		  bool apply, uint64_t now_ns, const char *path, struct emu_err *err)
{
	int rc = emu_tm_set(sw->tm, port, key, val, apply, now_ns, &sw->tm_rng, path, err);

	if (rc == 0 && apply)
		emu_switch_fabric_touch(sw, port); /* a link's state as the fabric routes by it */
	return rc;
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

uint64_t
emu_switch_profile_changes(const struct emu_switch *sw)
{
	return sw->ctr[EMU_RUN_CTR_PROFILE_CHANGES];
}

void
emu_switch_sources_stop(struct emu_switch *sw)
{
	unsigned int i;

	emu_tm_storms_stop(sw->tm);
	for (i = 0; i < sw->n_incast; i++) {
		sw->incast[i].s.cfg.enabled = false;
		sw->incast[i].s.next_ns = UINT64_MAX;
		if (sw->incast[i].hosts != NULL)
			emu_incast_hosts_stop(sw->incast[i].hosts);
	}
}
