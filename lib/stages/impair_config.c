/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * impair's configuration: its events parsed from JSON (action, loss model, match), init and
 * free, and the counter names filled from the event names. The stage and its packet path are
 * in impair.c.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "lib/base/emu_json.h"
#include "lib/stages/impair_priv.h"

/*
 * Names filled at init (see the comment at the top); one impair stage per switch. The
 * replicas of one switch on several worker lcores (live --workers) share its configuration
 * object and so the names: counted by references, from the configuration they name.
 */
static char impair_name_buf[IMPAIR_EV_CTR_MAX][IMPAIR_NAME_LEN];
const char *impair_ctr_names[IMPAIR_CTR_MAX];
static const json_t *impair_names_cfg;
static unsigned int impair_names_refs;

/* keys: impair_keys.c */
#define T (&impair_key_table)
#define TE (&impair_event_table)

static void
impair_names_fill(const struct impair_priv *ip)
{
	static const char *const acted[] = {
		[IMPAIR_DROP] = "drop_%s",
		[IMPAIR_ECN_MARK] = "%s_marked",
		[IMPAIR_CORRUPT_ICRC] = "%s_corrupted",
		[IMPAIR_CORRUPT_PAYLOAD] = "%s_corrupted",
		[IMPAIR_DUPLICATE] = "%s_duplicated",
		[IMPAIR_REWRITE_DSCP] = "%s_rewritten",
		[IMPAIR_REWRITE_SPORT] = "%s_rewritten",
		[IMPAIR_DELAY] = "%s_delayed",
	};
	unsigned int e, b;

	for (e = 0; e < IMPAIR_MAX_EVENTS; e++) {
		char *n = impair_name_buf[e * IMPAIR_EV_CTRS];

		b = e * IMPAIR_EV_CTRS;
		if (e < ip->n_events) {
			const struct impair_event *ev = &ip->events[e];

			snprintf(n, IMPAIR_NAME_LEN, "%s_matched", ev->name);
			snprintf(n + IMPAIR_NAME_LEN, IMPAIR_NAME_LEN, acted[ev->action], ev->name);
			snprintf(n + 2 * IMPAIR_NAME_LEN, IMPAIR_NAME_LEN, "%s_skipped", ev->name);
		} else {
			snprintf(n, IMPAIR_NAME_LEN, "slot%02u_matched", e);
			snprintf(n + IMPAIR_NAME_LEN, IMPAIR_NAME_LEN, "slot%02u_acted", e);
			snprintf(n + 2 * IMPAIR_NAME_LEN, IMPAIR_NAME_LEN, "slot%02u_skipped", e);
		}
		impair_ctr_names[b] = n;
		impair_ctr_names[b + 1] = n + IMPAIR_NAME_LEN;
		impair_ctr_names[b + 2] = n + 2 * IMPAIR_NAME_LEN;
	}
	impair_ctr_names[IMPAIR_CTR_RELEASED] = "delay_released";
	impair_ctr_names[IMPAIR_CTR_DROP_DELAY_FULL] = "drop_delay_full";
}

static int
impair_loss_parse(const json_t *loss, const char *path, struct impair_event *ev,
		  struct emu_err *err)
{
	char p1[EMU_JSON_PATH_LEN];
	const char *model;
	int rc;

	rc = emu_json_expect_object(loss, path, err);
	if (rc == 0)
		rc = emu_json_get_str(loss, path, "model", false, "bernoulli", &model, err);
	if (rc != 0)
		return rc;
	if (strcmp(model, "bernoulli") == 0) {
		ev->model = IMPAIR_MODEL_BERNOULLI;
		rc = emu_keys_check(loss, path, &impair_bern_table, err);
		if (rc == 0)
			rc = emu_key_num(loss, path, &impair_bern_table, "p", &ev->p, err);
		return rc;
	}
	if (strcmp(model, "gilbert") == 0) {
		ev->model = IMPAIR_MODEL_GILBERT;
		rc = emu_keys_check(loss, path, &impair_ge_table, err);
		if (rc == 0)
			rc = emu_key_num(loss, path, &impair_ge_table, "p", &ev->p, err);
		if (rc == 0)
			rc = emu_key_num_def(loss, path, &impair_ge_table, "r", 1.0 - ev->p, &ev->r,
					     err);
		if (rc == 0)
			rc = emu_key_num(loss, path, &impair_ge_table, "1-h", &ev->one_h, err);
		if (rc == 0)
			rc = emu_key_num(loss, path, &impair_ge_table, "1-k", &ev->one_k, err);
		return rc;
	}
	if (strcmp(model, "4state") == 0) {
		ev->model = IMPAIR_MODEL_4STATE;
		ev->state = 1;
		rc = emu_keys_check(loss, path, &impair_s4_table, err);
		if (rc == 0)
			rc = emu_key_num(loss, path, &impair_s4_table, "p13", &ev->p13, err);
		if (rc == 0)
			rc = emu_key_num(loss, path, &impair_s4_table, "p31", &ev->p31, err);
		if (rc == 0)
			rc = emu_key_num(loss, path, &impair_s4_table, "p32", &ev->p32, err);
		if (rc == 0)
			rc = emu_key_num(loss, path, &impair_s4_table, "p23", &ev->p23, err);
		if (rc == 0)
			rc = emu_key_num(loss, path, &impair_s4_table, "p14", &ev->p14, err);
		if (rc != 0)
			return rc;
		if (ev->p13 + ev->p14 > 1.0) {
			emu_json_path(p1, sizeof(p1), path, "p14");
			return emu_err_set(err, "%s: p13 + p14 must be <= 1, got %g", p1,
					   ev->p13 + ev->p14);
		}
		if (ev->p31 + ev->p32 > 1.0) {
			emu_json_path(p1, sizeof(p1), path, "p32");
			return emu_err_set(err, "%s: p31 + p32 must be <= 1, got %g", p1,
					   ev->p31 + ev->p32);
		}
		return 0;
	}
	emu_json_path(p1, sizeof(p1), path, "model");
	return emu_err_set(err, "%s: unknown loss model \"%s\" (bernoulli, gilbert, 4state)", p1,
			   model);
}

static int
impair_action_parse(const json_t *o, const char *path, struct impair_event *ev,
		    struct emu_err *err)
{
	char p1[EMU_JSON_PATH_LEN], p2[EMU_JSON_PATH_LEN];
	const char *action, *mode;
	const json_t *rw;
	double delay_us;
	int64_t v;
	int rc;

	rc = emu_key_str(o, path, TE, "action", &action, err);
	if (rc != 0)
		return rc;
	emu_json_path(p1, sizeof(p1), path, "action");
	if (strcmp(action, "corrupt") != 0 && json_object_get(o, "corrupt") != NULL) {
		emu_json_path(p2, sizeof(p2), path, "corrupt");
		return emu_err_set(err, "%s: only for \"action\": \"corrupt\"", p2);
	}
	if (strcmp(action, "rewrite") != 0 && json_object_get(o, "rewrite") != NULL) {
		emu_json_path(p2, sizeof(p2), path, "rewrite");
		return emu_err_set(err, "%s: only for \"action\": \"rewrite\"", p2);
	}
	if (strcmp(action, "delay") != 0 && json_object_get(o, "delay_us") != NULL) {
		emu_json_path(p2, sizeof(p2), path, "delay_us");
		return emu_err_set(err, "%s: only for \"action\": \"delay\"", p2);
	}
	if (strcmp(action, "drop") == 0) {
		ev->action = IMPAIR_DROP;
	} else if (strcmp(action, "ecn_mark") == 0) {
		ev->action = IMPAIR_ECN_MARK;
	} else if (strcmp(action, "duplicate") == 0) {
		ev->action = IMPAIR_DUPLICATE;
	} else if (strcmp(action, "corrupt") == 0) {
		rc = emu_key_str(o, path, TE, "corrupt", &mode, err);
		if (rc != 0)
			return rc;
		ev->action = strcmp(mode, "payload") == 0 ? IMPAIR_CORRUPT_PAYLOAD :
							    IMPAIR_CORRUPT_ICRC;
	} else if (strcmp(action, "rewrite") == 0) {
		emu_json_path(p2, sizeof(p2), path, "rewrite");
		rw = json_object_get(o, "rewrite");
		if (rw == NULL)
			return emu_err_set(err, "%s: required key is missing (\"rewrite\": "
					   "{\"dscp\": N} or {\"udp_sport\": N})", p2);
		rc = emu_json_expect_object(rw, p2, err);
		if (rc != 0)
			return rc;
		if (json_object_size(rw) != 1)
			return emu_err_set(err, "%s: must have exactly one of \"dscp\", "
					   "\"udp_sport\"", p2);
		if (json_object_get(rw, "dscp") != NULL) {
			rc = emu_key_int_req(rw, p2, &impair_rewrite_table, "dscp", &v, err);
			ev->action = IMPAIR_REWRITE_DSCP;
		} else if (json_object_get(rw, "udp_sport") != NULL) {
			rc = emu_key_int_req(rw, p2, &impair_rewrite_table, "udp_sport", &v, err);
			ev->action = IMPAIR_REWRITE_SPORT;
		} else {
			return emu_err_set(err, "%s: must have exactly one of \"dscp\", "
					   "\"udp_sport\"", p2);
		}
		if (rc != 0)
			return rc;
		ev->value = (uint16_t)v;
	} else if (strcmp(action, "delay") == 0) {
		rc = emu_key_num_req(o, path, TE, "delay_us", &delay_us, err);
		if (rc != 0)
			return rc;
		ev->action = IMPAIR_DELAY;
		ev->delay_ns = (uint64_t)llround(delay_us * 1e3);
		if (ev->delay_ns == 0) {
			emu_json_path(p2, sizeof(p2), path, "delay_us");
			return emu_err_set(err, "%s: must be at least 0.001 (1 ns), got %g", p2,
					   delay_us);
		}
	} else {
		return emu_err_set(err, "%s: unknown action \"%s\" (drop, ecn_mark, corrupt, "
				   "duplicate, rewrite, delay)", p1, action);
	}
	return 0;
}

int
impair_init(void *priv, const json_t *cfg, const struct emu_stage_env *env, struct emu_err *err)
{
	struct impair_priv *ip = priv;
	char p1[EMU_JSON_PATH_LEN], p2[EMU_JSON_PATH_LEN], p3[EMU_JSON_PATH_LEN];
	const json_t *events, *o, *v;
	const char *name;
	int64_t max_qps, max_held;
	size_t idx;
	unsigned int k;
	int rc;

	if (impair_names_refs > 0 && impair_names_cfg != cfg)
		return emu_err_set(err, "%s.type: a switch may have one \"impair\" stage (its "
				   "counters are named after its events); put every event in it",
				   env->path);
	rc = emu_key_int(cfg, env->path, T, "max_qps", &max_qps, err);
	if (rc == 0)
		rc = emu_key_int(cfg, env->path, T, "max_held_pkts", &max_held, err);
	if (rc != 0)
		return rc;
	emu_json_path(p1, sizeof(p1), env->path, "events");
	events = json_object_get(cfg, "events");
	if (events == NULL)
		return emu_err_set(err, "%s: required key is missing", p1);
	rc = emu_json_expect_array(events, p1, err);
	if (rc != 0)
		return rc;
	if (json_array_size(events) > IMPAIR_MAX_EVENTS)
		return emu_err_set(err, "%s: at most %d events, got %zu", p1, IMPAIR_MAX_EVENTS,
				   json_array_size(events));
	json_array_foreach(events, idx, o) {
		struct impair_event *ev = &ip->events[idx];

		emu_json_path_idx(p2, sizeof(p2), p1, idx);
		rc = emu_json_expect_object(o, p2, err);
		if (rc == 0)
			rc = emu_keys_check(o, p2, TE, err);
		if (rc == 0)
			rc = emu_key_str(o, p2, TE, "name", &name, err);
		if (rc != 0)
			return rc;
		emu_json_path(p3, sizeof(p3), p2, "name");
		if (name[0] == '\0' || strlen(name) >= sizeof(ev->name) ||
		    strspn(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-")
			    != strlen(name))
			return emu_err_set(err, "%s: must be 1-%zu characters of [A-Za-z0-9_-], "
					   "got \"%s\"", p3, sizeof(ev->name) - 1, name);
		for (k = 0; k < idx; k++)
			if (strcmp(ip->events[k].name, name) == 0)
				return emu_err_set(err, "%s: event name \"%s\" is already used", p3,
						   name);
		snprintf(ev->name, sizeof(ev->name), "%s", name);
		rc = emu_key_bool(o, p2, TE, "enabled", &ev->enabled, err);
		if (rc != 0)
			return rc;
		emu_json_path(p3, sizeof(p3), p2, "match");
		v = json_object_get(o, "match");
		if (v == NULL)
			v = json_object(); /* empty: every packet */
		else
			json_incref((json_t *)(uintptr_t)v);
		rc = emu_match_parse(v, p3, env->port_names, env->n_ports, env->out_port_known,
				     &ev->match, err);
		json_decref((json_t *)(uintptr_t)v);
		if (rc != 0)
			return rc;
		if (ev->match.flags & EMU_MATCH_ITERATION)
			ip->tracks_iterations = true;
		rc = impair_action_parse(o, p2, ev, err);
		if (rc != 0)
			return rc;
		if (ev->action == IMPAIR_DELAY)
			ip->has_delay = true;
		v = json_object_get(o, "loss");
		if (v != NULL) {
			emu_json_path(p3, sizeof(p3), p2, "loss");
			rc = impair_loss_parse(v, p3, ev, err);
			if (rc != 0)
				return rc;
		}
		ip->n_events++;
	}
	if (ip->tracks_iterations && !env->check_only &&
	    emu_iter_init(&ip->iter, (uint32_t)max_qps) != 0)
		return emu_err_set(err, "%s.max_qps: cannot allocate tables for %" PRId64 " QPs",
				   env->path, max_qps);
	if (ip->has_delay && !env->check_only &&
	    emu_heldq_init(&ip->held, (uint32_t)max_held) != 0)
		return emu_err_setrc(err, -ENOMEM, "%s.max_held_pkts: cannot allocate %" PRId64
				     " slots", env->path, max_held);
	if (!ip->owns_names) {
		if (impair_names_refs++ == 0) {
			impair_names_cfg = cfg;
			impair_names_fill(ip);
		}
		ip->owns_names = true;
	}
	return 0;
}

void
impair_free(void *priv)
{
	struct impair_priv *ip = priv;

	emu_iter_free(&ip->iter);
	emu_heldq_free(&ip->held);
	if (ip->owns_names) {
		if (--impair_names_refs == 0)
			impair_names_cfg = NULL;
		ip->owns_names = false;
	}
}

