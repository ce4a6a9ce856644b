/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Over 600 lines (about 820): one stage, its event actions, loss models and iteration tracking share
 * the per-event state; its key tables are apart (impair_keys.c). Next split: the loss models.
 *
 * impair: targeted and probabilistic impairments. A list of events, each a match expression
 * (lib/stage/emu_match.h), an action, and an optional loss model that decides which of the
 * matched packets the action hits:
 *
 *   drop        free the packet (counted as drop_<event>)
 *   ecn_mark    set CE on ECT packets (ICRC stays valid: ECN is masked out of it)
 *   corrupt     "icrc": invert the ICRC; "payload": flip bit 0 of the middle payload byte,
 *               leaving the IP checksum valid, so only the receiving NIC's ICRC check notices
 *   duplicate   emit a copy to the packet's out port (place the stage after forward)
 *   rewrite     {"dscp": N} (IP checksum fixed) or {"udp_sport": N} (ICRC recomputed)
 *   delay       hold the packet for exactly "delay_us" (ingress only, after forward): it
 *               continues through the ingress stages after this one at arrival + delay_us
 *
 * Every event sees every packet; the actions of all events that hit a packet apply in list
 * order, and a drop ends the list for that packet. A delay is taken last, after the other
 * actions that hit the packet applied (the first delay event in the list that hit it wins; the
 * others count as skipped). Held packets wait in an emu_heldq (lib/pkt/emu_heldq.h, the delay
 * stage's time-ordered heap) of max_held_pkts slots and leave in (due, arrival) order through
 * the release() op: packets of one event keep their order, events with different delays may
 * reorder each other's packets. A full heap drops (drop_delay_full). Frames stages created (in_port
 * EMU_PORT_SELF: CNPs, duplicates, mirror copies) pass untouched and uncounted.
 *
 * Decide, then apply: the first pass over the burst evaluates the matches (which count and
 * learn transmission iterations) and steps the loss models with ctx->rng; the second pass
 * changes packets. The same seed and input give the same packets hit.
 *
 * Loss models (per event, stepped once per matched packet), with netem's names and semantics:
 *   bernoulli  hit with probability p
 *   gilbert    Gilbert-Elliott: on each packet, first move good->bad with p (bad->good with r),
 *              then hit with 1-k in good, 1-h in bad. Defaults r = 1 - p, 1-h = 1, 1-k = 0.
 *              Hit rate = (r (1-k) + p (1-h)) / (p + r); with 1-h = 1, 1-k = 0 the mean
 *              burst of consecutive hits is 1/r.
 *   4state     netem's loss state: states 1 (gap, sent), 2 (burst, sent), 3 (burst, lost),
 *              4 (isolated loss); transitions p13, p31, p32, p23, p14 (p13 + p14 <= 1,
 *              p31 + p32 <= 1).
 *
 * Counters: the stage contract names counters from a static array, so the stage has a fixed
 * number of event slots (IMPAIR_MAX_EVENTS) with three counters each, whose names are filled
 * at init from the event names: "<event>_matched", the action's counter ("drop_<event>",
 * "<event>_marked", "<event>_corrupted", "<event>_duplicated", "<event>_rewritten") and
 * "<event>_skipped" (the action did not apply: not ECT, not RoCE, no payload, no mbuf). Unused
 * slots are named "slotNN_*". Two stage-wide counters follow the slots: "delay_released"
 * (held packets handed on) and "drop_delay_full". The delay action's counter is
 * "<event>_delayed". Because the names live in one static table, a switch may have
 * one impair stage (put every event in it).
 *
 * Over 600 lines: the stage, its event parser and its actions in one file; the parser moves to
 * its own file with the stage contract's config/datapath split (issue 12).
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "lib/pkt/emu_heldq.h"
#include "lib/base/emu_json.h"
#include "lib/stage/emu_match.h"
#include "lib/stages/stages.h"
#include "lib/stages/impair_keys.h"

#define IMPAIR_EV_CTRS 3
#define IMPAIR_EV_CTR_MAX (IMPAIR_MAX_EVENTS * IMPAIR_EV_CTRS)
#define IMPAIR_CTR_RELEASED IMPAIR_EV_CTR_MAX
#define IMPAIR_CTR_DROP_DELAY_FULL (IMPAIR_EV_CTR_MAX + 1)
#define IMPAIR_CTR_MAX (IMPAIR_EV_CTR_MAX + 2)
#define IMPAIR_NAME_LEN 48 /* event names are at most 31 characters */

enum impair_ev_ctr { IMPAIR_EV_MATCHED, IMPAIR_EV_ACTED, IMPAIR_EV_SKIPPED };

enum impair_action {
	IMPAIR_DROP,
	IMPAIR_ECN_MARK,
	IMPAIR_CORRUPT_ICRC,
	IMPAIR_CORRUPT_PAYLOAD,
	IMPAIR_DUPLICATE,
	IMPAIR_REWRITE_DSCP,
	IMPAIR_REWRITE_SPORT,
	IMPAIR_DELAY,
};

enum impair_model { IMPAIR_MODEL_NONE, IMPAIR_MODEL_BERNOULLI, IMPAIR_MODEL_GILBERT,
		    IMPAIR_MODEL_4STATE };

/*
 * Names filled at init (see the comment at the top); one impair stage per switch. The
 * replicas of one switch on several worker lcores (live --workers) share its configuration
 * object and so the names: counted by references, from the configuration they name.
 */
static char impair_name_buf[IMPAIR_EV_CTR_MAX][IMPAIR_NAME_LEN];
static const char *impair_ctr_names[IMPAIR_CTR_MAX];
static const json_t *impair_names_cfg;
static unsigned int impair_names_refs;

/* keys: impair_keys.c */
#define T (&impair_key_table)
#define TE (&impair_event_table)

struct impair_event {
	char name[32];
	struct emu_match match;
	uint8_t action;
	uint8_t model;
	uint8_t state;     /* loss model state: GE 0 good 1 bad; 4-state 1..4 */
	bool enabled;
	uint16_t value;    /* rewrite value */
	uint64_t delay_ns; /* delay action */
	double p, r, one_h, one_k;            /* bernoulli p; Gilbert-Elliott */
	double p13, p31, p32, p23, p14;       /* 4-state */
};

struct impair_priv {
	unsigned int n_events;
	struct impair_event events[IMPAIR_MAX_EVENTS];
	bool tracks_iterations;
	struct emu_iter iter;
	bool has_delay;
	struct emu_heldq held; /* delay action */
	bool owns_names;
};

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

static int
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

static void
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

/* Step event @p ev's loss model for one matched packet: does the action hit it? */
static inline bool
impair_loss_step(struct impair_event *ev, struct emu_rng *rng)
{
	double u;

	switch (ev->model) {
	case IMPAIR_MODEL_BERNOULLI:
		return emu_rng_uniform(rng) < ev->p;
	case IMPAIR_MODEL_GILBERT:
		/* netem gemodel: transition first, then lose with the new state's probability. */
		if (ev->state == 0) {
			if (emu_rng_uniform(rng) < ev->p)
				ev->state = 1;
		} else {
			if (emu_rng_uniform(rng) < ev->r)
				ev->state = 0;
		}
		return emu_rng_uniform(rng) < (ev->state == 0 ? ev->one_k : ev->one_h);
	case IMPAIR_MODEL_4STATE:
		/* netem loss state (Salsano et al.): 1 gap/sent, 2 burst/sent, 3 burst/lost,
		 * 4 gap/isolated loss. */
		u = emu_rng_uniform(rng);
		switch (ev->state) {
		case 1:
			if (u < ev->p14) {
				ev->state = 4;
				return true;
			}
			if (u < ev->p14 + ev->p13) {
				ev->state = 3;
				return true;
			}
			return false;
		case 2:
			if (u < ev->p23) {
				ev->state = 3;
				return true;
			}
			return false;
		case 3:
			if (u < ev->p32) {
				ev->state = 2;
				return false;
			}
			if (u < ev->p32 + ev->p31) {
				ev->state = 1;
				return false;
			}
			return true;
		default:
			ev->state = 1;
			return false;
		}
	default:
		return true;
	}
}

/* Apply event @p ev to @p m; true when it acted, false when it did not apply. */
static bool
impair_apply(const struct impair_event *ev, struct rte_mbuf *m, struct emu_burst_ctx *ctx)
{
	struct emu_pkt_meta *meta = emu_meta(m);
	struct roce_pkt *p = &meta->pkt;
	bool parsed = (meta->flags & EMU_META_PARSED) != 0;
	bool roce = parsed && p->cls == ROCE_CLASS_ROCEV2 && p->reason == ROCE_REASON_OK;
	uint8_t *frame = rte_pktmbuf_mtod(m, uint8_t *);
	uint32_t len = rte_pktmbuf_data_len(m);
	struct rte_mbuf *c;

	switch (ev->action) {
	case IMPAIR_ECN_MARK:
		if (!parsed || (p->ip_version != 4 && p->ip_version != 6) || p->ecn == 0)
			return false;
		return p->ecn == 3 || roce_set_ecn(frame, p, 3) == 0;
	case IMPAIR_CORRUPT_ICRC:
		return roce && m->nb_segs == 1 && roce_corrupt_icrc(frame, len, p) == 0;
	case IMPAIR_CORRUPT_PAYLOAD:
		if (!roce || p->payload_len == 0 ||
		    (uint32_t)p->payload_off + p->payload_len / 2 >= len)
			return false;
		frame[p->payload_off + p->payload_len / 2] ^= 0x01;
		return true;
	case IMPAIR_DUPLICATE:
		c = rte_pktmbuf_copy(m, ctx->emit->pool, 0, UINT32_MAX);
		if (c == NULL)
			return false;
		*emu_meta(c) = *meta;
		emu_meta(c)->trace.marks |= EMU_TRACE_DUPLICATE;
		if (!emu_emit_push(ctx->emit, c, meta->out_port)) {
			rte_pktmbuf_free(c);
			return false;
		}
		return true;
	case IMPAIR_REWRITE_DSCP:
		return parsed && (p->ip_version == 4 || p->ip_version == 6) &&
		       roce_set_dscp(frame, p, (uint8_t)ev->value) == 0;
	case IMPAIR_REWRITE_SPORT:
		return roce && m->nb_segs == 1 &&
		       roce_set_udp_sport(frame, len, p, ev->value) == 0;
	default:
		return false;
	}
}

/* The packet's trace: which event acted (its counter's reason id) and what it did. */
static void
impair_trace(const struct impair_event *ev, struct rte_mbuf *m, uint32_t reason)
{
	struct emu_trace *tr = &emu_meta(m)->trace;

	tr->event_reason = (uint16_t)(reason + 1);
	switch (ev->action) {
	case IMPAIR_ECN_MARK:
		tr->marks |= EMU_TRACE_CE_EVENT;
		break;
	case IMPAIR_CORRUPT_ICRC:
	case IMPAIR_CORRUPT_PAYLOAD:
		tr->marks |= EMU_TRACE_CORRUPTED;
		break;
	case IMPAIR_REWRITE_DSCP:
	case IMPAIR_REWRITE_SPORT:
		tr->marks |= EMU_TRACE_REWRITTEN;
		break;
	case IMPAIR_DELAY:
		tr->marks |= EMU_TRACE_DELAYED;
		tr->delay_ns += (uint32_t)RTE_MIN(ev->delay_ns, (uint64_t)UINT32_MAX);
		break;
	default:
		break;
	}
}

#define IMPAIR_CHUNK 64

/* Decide for up to IMPAIR_CHUNK packets, then apply; returns the survivors, compacted. */
static uint16_t
impair_chunk(struct impair_priv *ip, struct rte_mbuf **pkts, uint16_t n, struct emu_burst_ctx *ctx,
	     uint64_t *ctr)
{
	uint16_t hits[IMPAIR_CHUNK];
	uint16_t i, kept = 0;
	unsigned int e;

	/* Decide: matches, iterations and loss models, in packet order. */
	for (i = 0; i < n; i++) {
		struct emu_pkt_meta *meta = emu_meta(pkts[i]);
		const struct roce_pkt *p = (meta->flags & EMU_META_PARSED) ? &meta->pkt : NULL;
		uint32_t iteration = 0;

		hits[i] = 0;
		/* Frames stages made (CNPs, duplicates, mirror copies) pass untouched: an egress
		 * duplicate would otherwise come back through the TM and be duplicated again. */
		if (meta->in_port == EMU_PORT_SELF)
			continue;
		if (ip->tracks_iterations && p != NULL)
			iteration = emu_iter_track(&ip->iter, p);
		for (e = 0; e < ip->n_events; e++) {
			struct impair_event *ev = &ip->events[e];

			if (!ev->enabled ||
			    !emu_match_test(&ev->match, p, meta->in_port, meta->out_port, meta->prio,
					    iteration, ctx->now_ns))
				continue;
			ctr[e * IMPAIR_EV_CTRS + IMPAIR_EV_MATCHED]++;
			if (impair_loss_step(ev, ctx->rng))
				hits[i] |= (uint16_t)(1u << e);
		}
	}
	/* Apply, in event order; a drop ends the list; a delay is taken last. */
	for (i = 0; i < n; i++) {
		struct rte_mbuf *m = pkts[i];
		bool dropped = false;
		int delay_ev = -1;

		for (e = 0; e < ip->n_events && hits[i] != 0; e++) {
			if (!(hits[i] & (1u << e)))
				continue;
			if (ip->events[e].action == IMPAIR_DROP) {
				unsigned int c = e * IMPAIR_EV_CTRS + IMPAIR_EV_ACTED;

				emu_drop(ctx->drop, m, ctx->reason_base + c, &ctr[c]);
				dropped = true;
				break;
			}
			if (ip->events[e].action == IMPAIR_DELAY) {
				if (delay_ev < 0)
					delay_ev = (int)e;
				else
					ctr[e * IMPAIR_EV_CTRS + IMPAIR_EV_SKIPPED]++;
				continue;
			}
			if (impair_apply(&ip->events[e], m, ctx)) {
				ctr[e * IMPAIR_EV_CTRS + IMPAIR_EV_ACTED]++;
				impair_trace(&ip->events[e], m,
					     ctx->reason_base + e * IMPAIR_EV_CTRS + IMPAIR_EV_ACTED);
			} else
				ctr[e * IMPAIR_EV_CTRS + IMPAIR_EV_SKIPPED]++;
		}
		if (dropped)
			continue;
		if (delay_ev >= 0) {
			if (emu_heldq_full(&ip->held)) {
				emu_drop(ctx->drop, m, ctx->reason_base + IMPAIR_CTR_DROP_DELAY_FULL,
					 &ctr[IMPAIR_CTR_DROP_DELAY_FULL]);
			} else {
				emu_heldq_push(&ip->held, ctx->now_ns + ip->events[delay_ev].delay_ns,
					       m);
				impair_trace(&ip->events[delay_ev], m,
					     ctx->reason_base + (unsigned int)delay_ev * IMPAIR_EV_CTRS +
						     IMPAIR_EV_ACTED);
				ctr[delay_ev * IMPAIR_EV_CTRS + IMPAIR_EV_ACTED]++;
			}
			continue;
		}
		pkts[kept++] = m;
	}
	return kept;
}

static uint16_t
impair_process(void *priv, struct rte_mbuf **pkts, uint16_t n, struct emu_burst_ctx *ctx)
{
	struct impair_priv *ip = priv;
	uint64_t ctr[IMPAIR_CTR_MAX] = { 0 };
	uint16_t done, kept = 0, k, s;
	unsigned int e;

	for (done = 0; done < n; done += k) {
		k = RTE_MIN((uint16_t)(n - done), (uint16_t)IMPAIR_CHUNK);
		s = impair_chunk(ip, pkts + done, k, ctx, ctr);
		if (kept != done)
			memmove(pkts + kept, pkts + done, (size_t)s * sizeof(*pkts));
		kept += s;
	}
	for (e = 0; e < ip->n_events * IMPAIR_EV_CTRS; e++)
		ctx->ctr[e] += ctr[e];
	ctx->ctr[IMPAIR_CTR_DROP_DELAY_FULL] += ctr[IMPAIR_CTR_DROP_DELAY_FULL];
	return kept;
}

static uint64_t
impair_next_due_ns(const void *priv)
{
	const struct impair_priv *ip = priv;

	return emu_heldq_next_due(&ip->held);
}

static uint16_t
impair_release(void *priv, struct rte_mbuf **pkts, uint16_t cap, struct emu_burst_ctx *ctx)
{
	struct impair_priv *ip = priv;
	uint16_t n = emu_heldq_release(&ip->held, ctx->now_ns, pkts, cap);

	ctx->ctr[IMPAIR_CTR_RELEASED] += n;
	return n;
}

static uint64_t
impair_held(const void *priv)
{
	const struct impair_priv *ip = priv;

	return ip->held.n;
}

/*
 * Profile changes: key = an event name, value = {"enabled": bool, "p": probability}; "p" is
 * the Bernoulli p or the Gilbert-Elliott p (good -> bad).
 */
#define IMPAIR_SET_ENABLED 0x1
#define IMPAIR_SET_P 0x2

/* A profile change of event @p key: {"enabled": bool, "p": number}, either or both. */
static int
impair_compile(const void *priv, const char *key, const json_t *val, struct emu_set *out,
	       const char *path, struct emu_err *err)
{
	const struct impair_priv *ip = priv;
	const struct impair_event *ev = NULL;
	char p1[EMU_JSON_PATH_LEN];
	bool enabled = true;
	double p = 0;
	unsigned int e;
	int rc;

	for (e = 0; e < ip->n_events && ev == NULL; e++)
		if (strcmp(ip->events[e].name, key) == 0)
			ev = &ip->events[e];
	if (ev == NULL)
		return emu_err_set(err, "%s: no event named \"%s\" (a profile changes "
				   "EVENT: {\"enabled\": bool, \"p\": number})", path, key);
	memset(out, 0, sizeof(*out));
	out->key = (uint16_t)(ev - ip->events);
	rc = emu_json_expect_object(val, path, err);
	if (rc == 0)
		rc = emu_keys_check(val, path, &impair_set_event_table, err);
	if (rc == 0 && json_object_get(val, "enabled") != NULL) {
		rc = emu_key_bool_req(val, path, &impair_set_event_table, "enabled", &enabled, err);
		out->has |= IMPAIR_SET_ENABLED;
		out->u32 = enabled;
	}
	if (rc == 0 && json_object_get(val, "p") != NULL) {
		emu_json_path(p1, sizeof(p1), path, "p");
		if (ev->model != IMPAIR_MODEL_BERNOULLI && ev->model != IMPAIR_MODEL_GILBERT)
			return emu_err_set(err, "%s: event \"%s\" has no bernoulli or gilbert loss "
					   "model", p1, key);
		rc = emu_key_num_req(val, path, &impair_set_event_table, "p", &p, err);
		out->has |= IMPAIR_SET_P;
		out->d = p;
	}
	return rc;
}

static void
impair_apply_set(void *priv, const struct emu_set *s)
{
	struct impair_event *ev = &((struct impair_priv *)priv)->events[s->key];

	if (s->has & IMPAIR_SET_ENABLED)
		ev->enabled = s->u32 != 0;
	if (s->has & IMPAIR_SET_P)
		ev->p = s->d;
}

static json_t *
impair_settings(const void *priv)
{
	const struct impair_priv *ip = priv;
	const struct impair_event *ev;
	json_t *o = json_object(), *v;
	unsigned int e;

	for (e = 0; o != NULL && e < ip->n_events; e++) {
		ev = &ip->events[e];
		if (ev->model == IMPAIR_MODEL_BERNOULLI || ev->model == IMPAIR_MODEL_GILBERT)
			v = json_pack("{s:b, s:f}", "enabled", ev->enabled, "p", ev->p);
		else
			v = json_pack("{s:b}", "enabled", ev->enabled);
		if (v == NULL || json_object_set_new(o, ev->name, v) != 0) {
			json_decref(o);
			return NULL;
		}
	}
	return o;
}

static void
impair_summary(const void *priv, char *buf, size_t len)
{
	const struct impair_priv *ip = priv;

	if (!ip->tracks_iterations) {
		buf[0] = '\0';
		return;
	}
	snprintf(buf, len, "iteration tracking: %" PRIu64 " QPs evicted", ip->iter.evicted);
}

/*
 * Its actions read the class, offsets and lengths, IP version, DSCP, ECN, TTL and UDP source
 * port, which the datapath parse fills; the rest it reads through its events' matches (a
 * profile changes only "enabled" and "p") and the iteration tracker (more of the BTH).
 */
static enum emu_parse_need
impair_parse_need(const void *priv)
{
	const struct impair_priv *ip = priv;
	unsigned int e;

	if (ip->tracks_iterations)
		return EMU_PARSE_FULL;
	for (e = 0; e < ip->n_events; e++)
		if (!emu_match_reads_dp_fields(&ip->events[e].match))
			return EMU_PARSE_FULL;
	return EMU_PARSE_DP;
}

const struct emu_stage_ops emu_stage_impair = {
	.type = "impair",
	.priv_size = sizeof(struct impair_priv),
	.ctr_names = (const char *const *)impair_ctr_names,
	.n_ctr = IMPAIR_CTR_MAX,
	.keys = impair_keys,
	.key_table = &impair_key_table,
	.set_table = &impair_set_table,
	.init = impair_init,
	.parse_need = impair_parse_need,
	.process = impair_process,
	.free = impair_free,
	.compile = impair_compile,
	.apply = impair_apply_set,
	.settings = impair_settings,
	.held = impair_held,
	.next_due_ns = impair_next_due_ns,
	.release = impair_release,
	.summary = impair_summary,
};
