/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <rte_common.h>

#include "emu_json.h"
#include "emu_profile.h"
#include "emu_switch.h"

static const char *const emu_profile_keys[] = { "description", "seed", "phases", NULL };
static const char *const emu_phase_keys[] = { "name", "at_s", "tm", "stages", "incast", NULL };

#define EMU_PROFILE_MAX_S 1e6

static int
emu_profile_add(struct emu_profile *prof, unsigned int *cap, const struct emu_profile_action *a)
{
	if (prof->n_actions == *cap) {
		unsigned int ncap = *cap ? *cap * 2 : 16;
		struct emu_profile_action *n = realloc(prof->actions, ncap * sizeof(*n));

		if (n == NULL)
			return -ENOMEM;
		prof->actions = n;
		*cap = ncap;
	}
	prof->actions[prof->n_actions++] = *a;
	return 0;
}

/* Index of port @p name of the pipeline, or -1. */
static int
emu_profile_port_index(const struct emu_switch *sw, const char *name)
{
	const struct emu_pipeline *pl = emu_switch_pipeline(sw);
	unsigned int port;

	for (port = 0; port < pl->n_ports; port++)
		if (strcmp(pl->port_names[port], name) == 0)
			return (int)port;
	return -1;
}

/* Validate (!@p apply) or apply action @p a; @p t_ns is the time the setter is given. */
static int
emu_profile_set(struct emu_switch *sw, const struct emu_profile_action *a, bool apply,
		uint64_t t_ns, struct emu_err *err)
{
	if (a->target == EMU_PROFILE_TM)
		return emu_switch_tm_set(sw, (uint16_t)a->index, a->key, a->val, apply, t_ns,
					 a->path, err);
	if (a->target == EMU_PROFILE_STAGE)
		return emu_switch_stage_set(sw, a->index, a->key, a->val, apply, a->path, err);
	return emu_switch_incast_set(sw, a->index, a->key, a->val, apply, t_ns, a->path, err);
}

/* The three kinds of target a phase may change, by the phase key that holds them. */
static const struct {
	const char *key;
	enum emu_profile_target target;
	const char *noun;
	int (*index)(const struct emu_switch *sw, const char *name);
} emu_profile_targets[] = {
	{ "tm", EMU_PROFILE_TM, "port", emu_profile_port_index },
	{ "stages", EMU_PROFILE_STAGE, "stage", emu_switch_stage_index },
	{ "incast", EMU_PROFILE_INCAST, "incast source", emu_switch_incast_index },
};

static int
emu_profile_phase(struct emu_profile *prof, unsigned int *cap, const json_t *ph, const char *path,
		  struct emu_switch *sw, uint64_t at_ns, struct emu_err *err)
{
	struct emu_profile_action a;
	char p1[EMU_JSON_PATH_LEN], p2[EMU_JSON_PATH_LEN];
	const char *name, *key;
	json_t *obj, *val, *kv;
	unsigned int t;
	int rc, idx;

	memset(&a, 0, sizeof(a));
	a.at_ns = at_ns;
	for (t = 0; t < RTE_DIM(emu_profile_targets); t++) {
		obj = json_object_get(ph, emu_profile_targets[t].key);
		if (obj == NULL)
			continue;
		emu_json_path(p1, sizeof(p1), path, emu_profile_targets[t].key);
		rc = emu_json_expect_object(obj, p1, err);
		if (rc != 0)
			return rc;
		json_object_foreach(obj, name, val) {
			emu_json_path(p2, sizeof(p2), p1, name);
			idx = emu_profile_targets[t].index(sw, name);
			if (idx < 0)
				return emu_err_set(err, "%s: no %s named \"%s\" in the pipeline", p2,
						   emu_profile_targets[t].noun, name);
			rc = emu_json_expect_object(val, p2, err);
			if (rc != 0)
				return rc;
			json_object_foreach(val, key, kv) {
				a.target = emu_profile_targets[t].target;
				a.index = idx;
				a.key = key;
				a.val = kv;
				emu_json_path(a.path, sizeof(a.path), p2, key);
				rc = emu_profile_set(sw, &a, false, at_ns, err);
				if (rc == 0)
					rc = emu_profile_add(prof, cap, &a);
				if (rc != 0)
					return rc;
			}
		}
	}
	return 0;
}

/* A plain phase at @p base_ns + its at_s; @p limit_s (> 0 in a repeat block) bounds at_s. */
static int
emu_profile_plain(struct emu_profile *prof, unsigned int *cap, const json_t *ph, const char *path,
		  uint64_t base_ns, double limit_s, double *last_s, struct emu_switch *sw,
		  struct emu_err *err)
{
	double at_s;
	int rc;

	rc = emu_json_check_keys(ph, path, emu_phase_keys, err);
	if (rc == 0 && json_object_get(ph, "name") != NULL &&
	    !json_is_string(json_object_get(ph, "name")))
		rc = emu_err_set(err, "%s.name: must be a string", path);
	if (rc == 0)
		rc = emu_json_get_num(ph, path, "at_s", true, 0, 0, false, EMU_PROFILE_MAX_S,
				      &at_s, err);
	if (rc != 0)
		return rc;
	if (limit_s > 0 && at_s >= limit_s)
		return emu_err_set(err, "%s.at_s: must be < the block's every_s (%g), got %g", path,
				   limit_s, at_s);
	if (at_s < *last_s)
		return emu_err_set(err, "%s.at_s: phases must be in time order, got %g after %g",
				   path, at_s, *last_s);
	*last_s = at_s;
	return emu_profile_phase(prof, cap, ph, path, sw, base_ns + (uint64_t)llround(at_s * 1e9),
				 err);
}

static const char *const emu_repeat_keys[] = { "name", "at_s", "repeat", "every_s", "phases",
					       NULL };

#define EMU_PROFILE_MAX_REPEAT 1000000
#define EMU_PROFILE_MAX_ACTIONS (1u << 20)

/* A repeat block: its phases (at_s relative to the block's at_s, each < every_s) K times,
 * copy i shifted by i x every_s. */
static int
emu_profile_repeat(struct emu_profile *prof, unsigned int *cap, const json_t *blk,
		   const char *path, double *last_s, struct emu_switch *sw, struct emu_err *err)
{
	char p1[EMU_JSON_PATH_LEN], p2[EMU_JSON_PATH_LEN];
	double at_s, every_s, inner_last = -1;
	uint64_t base_ns, every_ns;
	const json_t *phases, *ph;
	int64_t k, i;
	size_t idx;
	int rc;

	rc = emu_json_check_keys(blk, path, emu_repeat_keys, err);
	if (rc == 0 && json_object_get(blk, "name") != NULL &&
	    !json_is_string(json_object_get(blk, "name")))
		rc = emu_err_set(err, "%s.name: must be a string", path);
	if (rc == 0)
		rc = emu_json_get_num(blk, path, "at_s", true, 0, 0, false, EMU_PROFILE_MAX_S,
				      &at_s, err);
	if (rc == 0)
		rc = emu_json_get_int(blk, path, "repeat", true, 0, 1, EMU_PROFILE_MAX_REPEAT, &k,
				      err);
	if (rc == 0)
		rc = emu_json_get_num(blk, path, "every_s", true, 0, 0, true, EMU_PROFILE_MAX_S,
				      &every_s, err);
	if (rc != 0)
		return rc;
	if (at_s < *last_s)
		return emu_err_set(err, "%s.at_s: phases must be in time order, got %g after %g",
				   path, at_s, *last_s);
	if (at_s + (double)(k - 1) * every_s > EMU_PROFILE_MAX_S)
		return emu_err_set(err, "%s.repeat: the last copy would start at %g s, after %g s",
				   path, at_s + (double)(k - 1) * every_s, EMU_PROFILE_MAX_S);
	emu_json_path(p1, sizeof(p1), path, "phases");
	phases = json_object_get(blk, "phases");
	if (phases == NULL)
		return emu_err_set(err, "%s: required key is missing", p1);
	rc = emu_json_expect_array(phases, p1, err);
	if (rc != 0)
		return rc;
	if (json_array_size(phases) == 0)
		return emu_err_set(err, "%s: must have at least one phase", p1);
	every_ns = (uint64_t)llround(every_s * 1e9);
	for (i = 0; i < k; i++) {
		base_ns = (uint64_t)llround(at_s * 1e9) + (uint64_t)i * every_ns;
		inner_last = -1;
		json_array_foreach(phases, idx, ph) {
			emu_json_path_idx(p2, sizeof(p2), p1, idx);
			rc = emu_json_expect_object(ph, p2, err);
			if (rc != 0)
				return rc;
			if (json_object_get(ph, "repeat") != NULL)
				return emu_err_set(err, "%s.repeat: repeat blocks do not nest", p2);
			rc = emu_profile_plain(prof, cap, ph, p2, base_ns, every_s, &inner_last, sw,
					       err);
			if (rc != 0)
				return rc;
		}
		if (prof->n_actions > EMU_PROFILE_MAX_ACTIONS)
			return emu_err_set(err, "%s.repeat: expands to more than %u changes", path,
					   EMU_PROFILE_MAX_ACTIONS);
	}
	*last_s = at_s + (double)(k - 1) * every_s + inner_last;
	return 0;
}

int
emu_profile_from_json(json_t *root, struct emu_switch *sw, struct emu_profile **out,
		      struct emu_err *err)
{
	struct emu_profile *prof;
	char path[EMU_JSON_PATH_LEN];
	const json_t *phases, *ph;
	unsigned int cap = 0;
	double last_s = -1;
	int64_t seed;
	size_t idx;
	int rc;

	prof = calloc(1, sizeof(*prof));
	if (prof == NULL)
		return emu_err_setrc(err, -ENOMEM, "out of memory");
	prof->root = json_incref(root);
	rc = emu_json_expect_object(root, "", err);
	if (rc == 0)
		rc = emu_json_check_keys(root, "", emu_profile_keys, err);
	if (rc == 0 && json_object_get(root, "description") != NULL &&
	    !json_is_string(json_object_get(root, "description")))
		rc = emu_err_set(err, "description: must be a string, got %s",
				 emu_json_type_name(json_object_get(root, "description")));
	if (rc == 0 && json_object_get(root, "seed") != NULL) {
		rc = emu_json_get_int(root, "", "seed", false, 0, 0, INT64_MAX, &seed, err);
		prof->has_seed = true;
		prof->seed = (uint64_t)seed;
	}
	if (rc != 0)
		goto fail;
	phases = json_object_get(root, "phases");
	if (phases == NULL) {
		rc = emu_err_set(err, "phases: required key is missing");
		goto fail;
	}
	rc = emu_json_expect_array(phases, "phases", err);
	if (rc != 0)
		goto fail;
	json_array_foreach(phases, idx, ph) {
		emu_json_path_idx(path, sizeof(path), "phases", idx);
		rc = emu_json_expect_object(ph, path, err);
		if (rc == 0 && json_object_get(ph, "repeat") != NULL)
			rc = emu_profile_repeat(prof, &cap, ph, path, &last_s, sw, err);
		else if (rc == 0)
			rc = emu_profile_plain(prof, &cap, ph, path, 0, 0, &last_s, sw, err);
		if (rc != 0)
			goto fail;
	}
	*out = prof;
	return 0;
fail:
	emu_profile_free(prof);
	return rc;
}

int
emu_profile_load(const char *file, struct emu_switch *sw, struct emu_profile **out,
		 struct emu_err *err)
{
	json_t *root;
	int rc;

	rc = emu_json_load_file(file, &root, err);
	if (rc != 0)
		return rc;
	rc = emu_profile_from_json(root, sw, out, err);
	json_decref(root);
	return rc;
}

void
emu_profile_free(struct emu_profile *prof)
{
	if (prof == NULL)
		return;
	free(prof->actions);
	json_decref(prof->root);
	free(prof);
}

unsigned int
emu_profile_apply_due(struct emu_profile *prof, struct emu_switch *sw, uint64_t rel_ns,
		      uint64_t now_ns)
{
	unsigned int n = 0;

	while (prof->next < prof->n_actions && prof->actions[prof->next].at_ns <= rel_ns) {
		const struct emu_profile_action *a = &prof->actions[prof->next++];

		/* Validated at load time: applying cannot fail. */
		emu_profile_set(sw, a, true, a->target == EMU_PROFILE_INCAST ? a->at_ns : now_ns,
				NULL);
		n++;
	}
	return n;
}

uint64_t
emu_profile_next_ns(const struct emu_profile *prof)
{
	if (prof->next >= prof->n_actions)
		return UINT64_MAX;
	return prof->actions[prof->next].at_ns;
}
