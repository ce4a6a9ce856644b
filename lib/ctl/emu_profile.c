/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <rte_common.h>

#include "lib/base/emu_json.h"
#include "lib/ctl/emu_profile.h"
#include "lib/ctl/emu_profile_int.h"
#include "lib/switch/emu_switch.h"

/* Keys, ranges and descriptions: emu_profile_schema.c. */
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
	prof->actions[prof->n_actions] = *a;
	prof->actions[prof->n_actions].seq = prof->n_actions;
	prof->n_actions++;
	return 0;
}

/* Validate action @p a's value and compile it into its typed change (a->set). */
static int
emu_profile_compile(struct emu_switch *sw, struct emu_profile_action *a, struct emu_err *err)
{
	return emu_switch_compile(sw, a->target, a->index, a->key, a->val, &a->set, a->path, err);
}

/* The three kinds of target a phase may change, by the phase key that holds them. */
static const struct {
	const char *key;
	enum emu_target target;
	const char *noun;
	int (*index)(const struct emu_switch *sw, const char *name);
} emu_profile_targets[] = {
	{ "tm", EMU_TARGET_TM, "port", emu_profile_port_index },
	{ "stages", EMU_TARGET_STAGE, "stage", emu_switch_stage_index },
	{ "incast", EMU_TARGET_INCAST, "incast source", emu_switch_incast_index },
};

/* The changes of phase @p ph at @p at_ns; with @p end_ns != UINT64_MAX each also gets a restore
 * action at @p end_ns (its value is filled by emu_profile_replay()). */
static int
emu_profile_phase(struct emu_profile *prof, unsigned int *cap, const json_t *ph, const char *path,
		  struct emu_switch *sw, uint64_t at_ns, uint64_t end_ns, struct emu_err *err)
{
	struct emu_profile_action a;
	char p1[EMU_JSON_PATH_LEN], p2[EMU_JSON_PATH_LEN];
	const char *name, *key;
	json_t *obj, *val, *kv;
	unsigned int t;
	int rc, idx;

	memset(&a, 0, sizeof(a));
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
			if (idx < 0 && emu_profile_targets[t].target == EMU_TARGET_TM) {
				const struct emu_pipeline *pl = emu_switch_pipeline(sw);
				char hint[1024];

				emu_profile_port_hint(pl, name, hint, sizeof(hint));
				return emu_err_set(err, "%s: no %s named \"%s\" in the pipeline%s", p2,
						   pl->fabric != NULL ? "port or fabric link" : "port",
						   name, hint);
			}
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
				a.at_ns = at_ns;
				a.end_ns = end_ns;
				a.restore = false;
				emu_json_path(a.path, sizeof(a.path), p2, key);
				rc = emu_profile_compile(sw, &a, err);
				if (rc == 0)
					rc = emu_profile_add(prof, cap, &a);
				if (rc == 0 && end_ns != UINT64_MAX) {
					a.at_ns = end_ns;
					a.val = NULL;
					a.restore = true;
					rc = emu_profile_add(prof, cap, &a);
				}
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
	uint64_t at_ns, end_ns = UINT64_MAX;
	double at_s, duration_s;
	int rc;

	rc = emu_keys_check(ph, path, &emu_phase_table, err);
	if (rc == 0 && json_object_get(ph, "name") != NULL &&
	    !json_is_string(json_object_get(ph, "name")))
		rc = emu_err_set(err, "%s.name: must be a string", path);
	if (rc == 0)
		rc = emu_key_num(ph, path, &emu_phase_table, "at_s", &at_s, err);
	if (rc != 0)
		return rc;
	if (limit_s > 0 && at_s >= limit_s)
		return emu_err_set(err, "%s.at_s: must be < the block's every_s (%g), got %g", path,
				   limit_s, at_s);
	if (at_s < *last_s)
		return emu_err_set(err, "%s.at_s: phases must be in time order, got %g after %g",
				   path, at_s, *last_s);
	*last_s = at_s;
	at_ns = base_ns + (uint64_t)llround(at_s * 1e9);
	if (json_object_get(ph, "duration_s") != NULL) {
		rc = emu_key_num_req(ph, path, &emu_phase_table, "duration_s", &duration_s, err);
		if (rc != 0)
			return rc;
		if (llround(duration_s * 1e9) == 0)
			return emu_err_set(err, "%s.duration_s: must be at least 1 ns (1e-09), got %g",
					   path, duration_s);
		end_ns = at_ns + (uint64_t)llround(duration_s * 1e9);
	}
	return emu_profile_phase(prof, cap, ph, path, sw, at_ns, end_ns, err);
}

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

	rc = emu_keys_check(blk, path, &emu_repeat_table, err);
	if (rc == 0 && json_object_get(blk, "name") != NULL &&
	    !json_is_string(json_object_get(blk, "name")))
		rc = emu_err_set(err, "%s.name: must be a string", path);
	if (rc == 0)
		rc = emu_key_num(blk, path, &emu_repeat_table, "at_s", &at_s, err);
	if (rc == 0)
		rc = emu_key_int(blk, path, &emu_repeat_table, "repeat", &k, err);
	if (rc == 0)
		rc = emu_key_num(blk, path, &emu_repeat_table, "every_s", &every_s, err);
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

/* Time order; at one instant restores first (a phase starting when another ends wins), then
 * creation order. */
static int
emu_profile_action_cmp(const void *x, const void *y)
{
	const struct emu_profile_action *a = x, *b = y;

	if (a->at_ns != b->at_ns)
		return a->at_ns < b->at_ns ? -1 : 1;
	if (a->restore != b->restore)
		return a->restore ? -1 : 1;
	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

/* One key's value during the load-time replay. */
struct emu_profile_shadow {
	enum emu_target target;
	int index;
	const char *key;
	json_t *cur;        /* value in force (owned) */
	json_t *saved;      /* value before the timed phase that holds the key (owned), or NULL */
	uint64_t held_until; /* end of that phase; 0 when none holds the key */
	const char *held_by; /* that phase's path for the key */
};

struct emu_profile_replay {
	struct emu_profile_shadow *keys;
	unsigned int n, cap;
};

static void
emu_profile_replay_free(struct emu_profile_replay *r)
{
	unsigned int i;

	for (i = 0; i < r->n; i++) {
		json_decref(r->keys[i].cur);
		json_decref(r->keys[i].saved);
	}
	free(r->keys);
}

/* The shadow of @p a's key, created with the switch's value at load time on first use. */
static struct emu_profile_shadow *
emu_profile_shadow(struct emu_profile_replay *r, struct emu_switch *sw, enum emu_target t,
		   int index, const char *key)
{
	struct emu_profile_shadow *s;
	unsigned int i;
	json_t *v;

	for (i = 0; i < r->n; i++)
		if (r->keys[i].target == t && r->keys[i].index == index &&
		    strcmp(r->keys[i].key, key) == 0)
			return &r->keys[i];
	v = emu_switch_setting(sw, t, index, key);
	if (v == NULL)
		return NULL;
	if (r->n == r->cap) {
		unsigned int ncap = r->cap ? r->cap * 2 : 16;

		s = realloc(r->keys, ncap * sizeof(*s));
		if (s == NULL) {
			json_decref(v);
			return NULL;
		}
		r->keys = s;
		r->cap = ncap;
	}
	s = &r->keys[r->n++];
	memset(s, 0, sizeof(*s));
	s->target = t;
	s->index = index;
	s->key = key;
	s->cur = v;
	return s;
}

/* The value after setting @p val over @p cur: stage keys that take objects (impair events)
 * change only the members given; everything else is replaced. New reference. */
static json_t *
emu_profile_merge(enum emu_target t, json_t *cur, json_t *val)
{
	json_t *m;

	if (t != EMU_TARGET_STAGE || !json_is_object(cur) || !json_is_object(val))
		return json_incref(val);
	m = json_deep_copy(cur);
	if (m != NULL && json_object_update(m, val) != 0) {
		json_decref(m);
		m = NULL;
	}
	return m;
}

/* The delay line of TM port @p port must carry its delay at its rate (both as replayed). */
static int
emu_profile_delay_check(struct emu_profile_replay *r, struct emu_switch *sw,
			const struct emu_profile_action *a, struct emu_err *err)
{
	const struct emu_pipeline *pl = emu_switch_pipeline(sw);
	struct emu_profile_shadow *rate, *delay;
	char path[EMU_JSON_PATH_LEN + 48];

	/* looked up again: creating delay's entry may move rate's */
	rate = emu_profile_shadow(r, sw, EMU_TARGET_TM, a->index, "rate_gbps");
	delay = emu_profile_shadow(r, sw, EMU_TARGET_TM, a->index, "delay_us");
	rate = emu_profile_shadow(r, sw, EMU_TARGET_TM, a->index, "rate_gbps");
	if (rate == NULL || delay == NULL)
		return emu_err_setrc(err, -ENOMEM, "%s: out of memory", a->path);
	snprintf(path, sizeof(path), "%s%s", a->path,
		 a->restore ? " (put back when its duration_s ends)" : "");
	/* the same rounding as emu_tm_set() */
	return emu_tm_delay_fits(&pl->tm.ports[a->index],
				 (uint64_t)(json_number_value(rate->cur) * 1e9 + 0.5),
				 (uint64_t)(json_number_value(delay->cur) * 1e3 + 0.5), path, err);
}

/* Check the ports whose rate or delay changed at the instant just replayed (@p last). */
static int
emu_profile_delay_checks(struct emu_profile_replay *r, struct emu_switch *sw,
			 const struct emu_profile_action **last, struct emu_err *err)
{
	unsigned int port;
	int rc = 0;

	for (port = 0; port < EMU_TM_MAX_PORTS; port++) {
		if (last[port] != NULL && rc == 0)
			rc = emu_profile_delay_check(r, sw, last[port], err);
		last[port] = NULL;
	}
	return rc;
}

/*
 * Replay the sorted actions from the switch's current values: fill every restore action with
 * the value its key had just before the timed phase, refuse a change to a key a timed phase
 * still holds, and refuse a TM delay (or rate) the port's delay line was not sized for (as
 * they stand after each instant: one phase may change both).
 */
static int
emu_profile_replay(struct emu_profile *prof, struct emu_switch *sw, struct emu_err *err)
{
	const struct emu_profile_action *delay_changed[EMU_TM_MAX_PORTS] = { NULL };
	struct emu_profile_replay r = { 0 };
	struct emu_profile_shadow *s;
	unsigned int i;
	json_t *v;
	int rc = 0;

	for (i = 0; i < prof->n_actions && rc == 0; i++) {
		struct emu_profile_action *a = &prof->actions[i];

		if (i > 0 && a->at_ns != prof->actions[i - 1].at_ns) {
			rc = emu_profile_delay_checks(&r, sw, delay_changed, err);
			if (rc != 0)
				break;
		}
		s = emu_profile_shadow(&r, sw, a->target, a->index, a->key);
		if (s == NULL) {
			rc = emu_err_setrc(err, -ENOMEM, "%s: cannot read the current value",
					   a->path);
			break;
		}
		if (a->restore) {
			/* Only the timed phase holding the key ends now: overlaps were refused. */
			if (s->saved == NULL) {
				rc = emu_err_setrc(err, -EINVAL, "%s: internal error: nothing to put "
						   "back", a->path);
				break;
			}
			if (json_array_append(prof->restore_vals, s->saved) != 0) {
				rc = emu_err_setrc(err, -ENOMEM, "%s: out of memory", a->path);
				break;
			}
			a->val = s->saved;
			json_decref(s->cur);
			s->cur = s->saved;
			s->saved = NULL;
			s->held_until = 0;
			rc = emu_profile_compile(sw, a, err);
		} else {
			if (s->held_until > a->at_ns) {
				rc = emu_err_set(err, "%s: set at %.9g s while %s holds it until %.9g s "
						 "(its phase's duration_s); a timed phase's keys must "
						 "not change before it ends", a->path,
						 (double)a->at_ns / 1e9, s->held_by,
						 (double)s->held_until / 1e9);
				break;
			}
			if (a->end_ns != UINT64_MAX) {
				s->saved = json_incref(s->cur);
				s->held_until = a->end_ns;
				s->held_by = a->path;
			}
			v = emu_profile_merge(a->target, s->cur, a->val);
			if (v == NULL) {
				rc = emu_err_setrc(err, -ENOMEM, "%s: out of memory", a->path);
				break;
			}
			json_decref(s->cur);
			s->cur = v;
		}
		if (a->target == EMU_TARGET_TM &&
		    (strcmp(a->key, "rate_gbps") == 0 || strcmp(a->key, "delay_us") == 0))
			delay_changed[a->index] = a;
	}
	if (rc == 0)
		rc = emu_profile_delay_checks(&r, sw, delay_changed, err);
	emu_profile_replay_free(&r);
	return rc;
}

/* The typed program the worker runs: the sorted actions without their strings and JSON. */
static int
emu_profile_program(struct emu_profile *prof, struct emu_err *err)
{
	struct emu_action *acts;
	unsigned int i;

	acts = calloc(prof->n_actions ? prof->n_actions : 1, sizeof(*acts));
	if (acts == NULL)
		return emu_err_setrc(err, -ENOMEM, "out of memory");
	for (i = 0; i < prof->n_actions; i++) {
		acts[i].at_ns = prof->actions[i].at_ns;
		acts[i].target = (uint8_t)prof->actions[i].target;
		acts[i].index = (uint16_t)prof->actions[i].index;
		acts[i].set = prof->actions[i].set;
	}
	prof->prog.actions = acts;
	prof->prog.n = prof->n_actions;
	prof->prog.next = 0;
	prof->prog.owner = prof;
	return 0;
}

int
emu_profile_from_json(json_t *root, struct emu_switch *sw, struct emu_profile **out,
		      struct emu_err *err)
{
	struct emu_profile *prof;
	char path[EMU_JSON_PATH_LEN];
	const char *schema;
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
	prof->restore_vals = json_array();
	if (prof->restore_vals == NULL) {
		rc = emu_err_setrc(err, -ENOMEM, "out of memory");
		goto fail;
	}
	rc = emu_json_expect_object(root, "", err);
	if (rc == 0)
		rc = emu_keys_check(root, "", &emu_profile_table, err);
	if (rc == 0)
		rc = emu_key_str(root, "", &emu_profile_table, "$schema", &schema, err);
	if (rc == 0 && json_object_get(root, "description") != NULL &&
	    !json_is_string(json_object_get(root, "description")))
		rc = emu_err_set(err, "description: must be a string, got %s",
				 emu_json_type_name(json_object_get(root, "description")));
	if (rc == 0 && json_object_get(root, "seed") != NULL) {
		rc = emu_key_int(root, "", &emu_profile_table, "seed", &seed, err);
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
	if (prof->n_actions > 1) /* qsort(NULL, 0) is undefined (found by fuzz_profile) */
		qsort(prof->actions, prof->n_actions, sizeof(*prof->actions),
		      emu_profile_action_cmp);
	rc = emu_profile_replay(prof, sw, err);
	if (rc != 0)
		goto fail;
	rc = emu_profile_program(prof, err);
	if (rc != 0)
		goto fail;
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
	free((void *)(uintptr_t)prof->prog.actions);
	json_decref(prof->restore_vals);
	json_decref(prof->root);
	free(prof);
}
