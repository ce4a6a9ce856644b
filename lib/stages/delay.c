/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * delay: delay and jitter per port or per match (ingress only). A list of rules, the first
 * whose match expression (lib/stage/emu_match.h) selects a packet gives its delay, drawn from a
 * distribution with the stage's seeded random stream:
 *
 *   constant  delay_us
 *   uniform   uniform in [delay_us - jitter_us, delay_us + jitter_us]
 *   normal    delay_us + jitter_us * N(0, 1) (Box-Muller), below 0 clamped to 0 (counted)
 *   pareto    delay_us * U^(-1 / shape), U uniform in (0, 1]: scale delay_us (the minimum),
 *             tail index shape; above max_delay_us clamped (counted)
 *   table     inverse of a user CDF: a text file of "delay_us cumulative_probability" lines,
 *             both non-decreasing, the last probability 1; linear between points
 *
 * Packets matching no rule get no delay of their own. In order (the default) a packet never
 * leaves before one that arrived before it for the same output port:
 *   due = max(now + delay, last due on that port)
 * With "reorder": true, due = now + delay and jitter may reorder. Ties leave in arrival order.
 *
 * Held packets wait in a binary min-heap on (due, arrival sequence) of mbuf pointers
 * (lib/pkt/emu_heldq.h), sized at init (max_held_pkts): no allocation per packet. The runner asks next_due_ns() when to wake up
 * and release() for the due packets before each rx/tx (see emu_stage.h); they continue through
 * the ingress stages after this one. Put the stage after forward (the out port orders them).
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/base/emu_cdf.h"
#include "lib/pkt/emu_heldq.h"
#include "lib/base/emu_json.h"
#include "lib/stage/emu_match.h"
#include "lib/stages/stages.h"

#define DELAY_FOREACH_CTR(_) \
	_(DELAYED, "delayed") \
	_(PASSED, "passed") \
	_(RELEASED, "released") \
	_(CLAMPED, "clamped") \
	_(DROP_HELD_FULL, "drop_held_full")

enum delay_ctr {
#define DELAY_CTR_ENUM(e, s) DELAY_CTR_##e,
	DELAY_FOREACH_CTR(DELAY_CTR_ENUM)
#undef DELAY_CTR_ENUM
	DELAY_CTR_MAX
};

static const char *const delay_ctr_names[] = {
#define DELAY_CTR_NAME(e, s) s,
	DELAY_FOREACH_CTR(DELAY_CTR_NAME)
#undef DELAY_CTR_NAME
};

static const char *const delay_keys[] = { "rules", "reorder", "max_held_pkts", "max_delay_us",
					  NULL };
static const char *const delay_rule_keys[] = { "match", "dist", "delay_us", "jitter_us", "shape",
					       "table", NULL };

#define DELAY_MAX_RULES 16
#define DELAY_MAX_HELD_DEFAULT 262144
#define DELAY_MAX_HELD_MAX 4194304

static const struct emu_key delay_rule_entries[] = {
	{ .name = "match", .type = EMU_KEY_OBJ, .sub = &emu_match_table,
	  .schema = "{\"not\": {\"required\": [\"iteration\"]}}",
	  .desc = "which packets the rule delays (no iteration); default: all" },
	{ .name = "dist", .type = EMU_KEY_STR, .has_def = true, .sdef = "constant",
	  .schema = "{\"enum\": [\"constant\", \"uniform\", \"normal\", \"pareto\", "
		    "\"table\"]}",
	  .desc = "distribution of the delay" },
	EMU_K_NUM_DYN("delay_us", 0, false, 10e6,
		      "delay (us; the mean or minimum); not with table"),
	EMU_K_NUM_DYN("jitter_us", 0, false, 10e6, "jitter (us); uniform (<= delay_us), normal"),
	EMU_K_NUM_DYN("shape", 0, true, 100, "Pareto shape; required with pareto"),
	EMU_K_STR("table", NULL, "a CDF file (delay_us probability lines); required with table"),
};
/* which keys each distribution takes (the loader says it as "only for" / "required") */
static const struct emu_key_rule delay_rule_rules[] = {
	{ "dist", EMU_KEY_LIST("constant", "uniform", "normal", "pareto"),
	  EMU_KEY_LIST("delay_us"), EMU_KEY_LIST("table") },
	{ "dist", EMU_KEY_LIST("table"), EMU_KEY_LIST("table"), EMU_KEY_LIST("delay_us") },
	{ "dist", EMU_KEY_LIST("uniform", "normal"), EMU_KEY_LIST("jitter_us"), NULL },
	{ "dist", EMU_KEY_LIST("constant", "pareto", "table"), NULL, EMU_KEY_LIST("jitter_us") },
	{ "dist", EMU_KEY_LIST("pareto"), EMU_KEY_LIST("shape"), NULL },
	{ "dist", EMU_KEY_LIST("constant", "uniform", "normal", "table"), NULL,
	  EMU_KEY_LIST("shape") },
};
static const struct emu_key_table delay_rule_table = {
	.title = "delay rule", .desc = "the first rule whose match a packet meets delays it",
	.keys = delay_rule_entries, .n_keys = RTE_DIM(delay_rule_entries),
	.names = delay_rule_keys,
	.rules = delay_rule_rules, .n_rules = RTE_DIM(delay_rule_rules),
};
static const struct emu_key delay_key_entries[] = {
	EMU_K_ARR_REQ("rules", EMU_KEY_OBJ, &delay_rule_table,
		      "{\"minItems\": 1, \"maxItems\": " EMU_KEYS_STR(DELAY_MAX_RULES) "}",
		  "1-16 rules, the first match applies"),
	EMU_K_BOOL("reorder", false, "packets leave when due (false: never before a packet that "
		   "came earlier)"),
	EMU_K_INT("max_held_pkts", DELAY_MAX_HELD_DEFAULT, 64, DELAY_MAX_HELD_MAX,
		  "packets held at once at most"),
	EMU_K_NUM("max_delay_us", 10e6, 0, true, 10e6, "delays are capped at this (us)"),
};
static const struct emu_key_table delay_key_table = {
	.title = "delay",
	.desc = "delays packets by rule (constant, uniform, normal, pareto, table)",
	.keys = delay_key_entries, .n_keys = RTE_DIM(delay_key_entries), .names = delay_keys,
	.extra_names = emu_stage_extra_names,
};
#define T (&delay_key_table)
#define TR (&delay_rule_table)
#define DELAY_TABLE_MAX 4096
#define DELAY_CHUNK 64
#define DELAY_KEYS (EMU_MAX_PORTS + 1) /* output ports, and one for "no port yet" */

enum delay_dist { DELAY_CONSTANT, DELAY_UNIFORM, DELAY_NORMAL, DELAY_PARETO, DELAY_TABLE };

struct delay_rule {
	struct emu_match match;
	uint8_t dist;
	double delay_ns, jitter_ns, shape;
	double *tab_ns;   /* table: delays, non-decreasing */
	double *tab_p;    /* table: cumulative probabilities, last 1 */
	unsigned int n_tab;
};

struct delay_priv {
	unsigned int n_rules;
	struct delay_rule rules[DELAY_MAX_RULES];
	bool reorder;
	double max_delay_ns;
	struct emu_heldq held;
	uint64_t last_due[DELAY_KEYS];
};

static int
delay_rule_parse(struct delay_rule *r, const json_t *o, const char *path,
		 const struct emu_stage_env *env, struct emu_err *err)
{
	char p1[EMU_JSON_PATH_LEN];
	const char *dist, *table;
	double delay_us, jitter_us;
	const json_t *v;
	int rc;

	rc = emu_json_expect_object(o, path, err);
	if (rc == 0)
		rc = emu_keys_check(o, path, TR, err);
	if (rc != 0)
		return rc;
	emu_json_path(p1, sizeof(p1), path, "match");
	v = json_object_get(o, "match");
	if (v != NULL) {
		rc = emu_match_parse(v, p1, env->port_names, env->n_ports, env->out_port_known,
				     &r->match, err);
		if (rc == 0 && (r->match.flags & EMU_MATCH_ITERATION))
			rc = emu_err_set(err, "%s.iteration: not in a delay stage (only impair "
					 "tracks iterations)", p1);
	} else {
		json_t *empty = json_object();

		rc = emu_match_parse(empty, p1, env->port_names, env->n_ports, false, &r->match,
				     err);
		json_decref(empty);
	}
	if (rc == 0)
		rc = emu_key_str(o, path, TR, "dist", &dist, err);
	if (rc != 0)
		return rc;
	emu_json_path(p1, sizeof(p1), path, "dist");
	if (strcmp(dist, "constant") == 0)
		r->dist = DELAY_CONSTANT;
	else if (strcmp(dist, "uniform") == 0)
		r->dist = DELAY_UNIFORM;
	else if (strcmp(dist, "normal") == 0)
		r->dist = DELAY_NORMAL;
	else if (strcmp(dist, "pareto") == 0)
		r->dist = DELAY_PARETO;
	else if (strcmp(dist, "table") == 0)
		r->dist = DELAY_TABLE;
	else
		return emu_err_set(err, "%s: unknown distribution \"%s\" (constant, uniform, "
				   "normal, pareto, table)", p1, dist);
	if (r->dist != DELAY_TABLE) {
		rc = emu_key_num_req(o, path, TR, "delay_us", &delay_us, err);
		if (rc != 0)
			return rc;
		r->delay_ns = delay_us * 1000.0;
	} else if (json_object_get(o, "delay_us") != NULL) {
		emu_json_path(p1, sizeof(p1), path, "delay_us");
		return emu_err_set(err, "%s: not used with \"dist\": \"table\"", p1);
	}
	if (r->dist == DELAY_UNIFORM || r->dist == DELAY_NORMAL) {
		rc = emu_key_num_req(o, path, TR, "jitter_us", &jitter_us, err);
		if (rc != 0)
			return rc;
		r->jitter_ns = jitter_us * 1000.0;
		if (r->dist == DELAY_UNIFORM && jitter_us > delay_us) {
			emu_json_path(p1, sizeof(p1), path, "jitter_us");
			return emu_err_set(err, "%s: must be <= delay_us (%g) for \"uniform\", "
					   "got %g", p1, delay_us, jitter_us);
		}
	} else if (json_object_get(o, "jitter_us") != NULL) {
		emu_json_path(p1, sizeof(p1), path, "jitter_us");
		return emu_err_set(err, "%s: only for \"dist\": \"uniform\" or \"normal\"", p1);
	}
	if (r->dist == DELAY_PARETO) {
		rc = emu_key_num_req(o, path, TR, "shape", &r->shape, err);
		if (rc != 0)
			return rc;
	} else if (json_object_get(o, "shape") != NULL) {
		emu_json_path(p1, sizeof(p1), path, "shape");
		return emu_err_set(err, "%s: only for \"dist\": \"pareto\"", p1);
	}
	emu_json_path(p1, sizeof(p1), path, "table");
	if (r->dist == DELAY_TABLE) {
		rc = emu_key_str_req(o, path, TR, "table", &table, err);
		if (rc != 0 || env->check_only)
			return rc;
		return emu_cdf_load(table, DELAY_TABLE_MAX, &r->tab_ns, &r->tab_p, &r->n_tab, p1,
				     err);
	}
	if (json_object_get(o, "table") != NULL)
		return emu_err_set(err, "%s: only for \"dist\": \"table\"", p1);
	return 0;
}

static int
delay_init(void *priv, const json_t *cfg, const struct emu_stage_env *env, struct emu_err *err)
{
	struct delay_priv *dp = priv;
	char p1[EMU_JSON_PATH_LEN], p2[EMU_JSON_PATH_LEN];
	const json_t *rules, *o;
	double max_delay_us;
	int64_t max_held;
	size_t idx;
	int rc;

	rc = emu_key_bool(cfg, env->path, T, "reorder", &dp->reorder, err);
	if (rc == 0)
		rc = emu_key_int(cfg, env->path, T, "max_held_pkts", &max_held, err);
	if (rc == 0)
		rc = emu_key_num(cfg, env->path, T, "max_delay_us", &max_delay_us, err);
	if (rc != 0)
		return rc;
	dp->max_delay_ns = max_delay_us * 1000.0;
	emu_json_path(p1, sizeof(p1), env->path, "rules");
	rules = json_object_get(cfg, "rules");
	if (rules == NULL)
		return emu_err_set(err, "%s: required key is missing", p1);
	rc = emu_json_expect_array(rules, p1, err);
	if (rc != 0)
		return rc;
	if (json_array_size(rules) == 0 || json_array_size(rules) > DELAY_MAX_RULES)
		return emu_err_set(err, "%s: must have 1-%d rules, got %zu", p1, DELAY_MAX_RULES,
				   json_array_size(rules));
	json_array_foreach(rules, idx, o) {
		emu_json_path_idx(p2, sizeof(p2), p1, idx);
		/* Counted before parsing: free() releases a half-loaded table. */
		dp->n_rules++;
		rc = delay_rule_parse(&dp->rules[idx], o, p2, env, err);
		if (rc != 0)
			return rc;
	}
	if (env->check_only)
		return 0;
	if (emu_heldq_init(&dp->held, (uint32_t)max_held) != 0)
		return emu_err_setrc(err, -ENOMEM, "%s.max_held_pkts: cannot allocate %" PRId64
				     " slots", env->path, max_held);
	return 0;
}

static int
delay_needs(const json_t *cfg, const struct emu_stage_env *env, struct emu_stage_needs *needs,
	    struct emu_err *err)
{
	int64_t max_held;
	int rc = emu_key_int(cfg, env->path, T, "max_held_pkts", &max_held, err);

	if (rc != 0)
		return rc;
	/* the heap (the packets it holds come from the switch's pool) */
	needs->mem_bytes = (uint64_t)max_held * sizeof(struct emu_heldq_item);
	snprintf(needs->mem_key, sizeof(needs->mem_key), "max_held_pkts");
	/* the tables it reads: inputs, which no output of the run may overwrite */
	{
		const json_t *rules = json_object_get(cfg, "rules"), *r;
		size_t i;

		json_array_foreach(rules, i, r) {
			const char *table = json_string_value(json_object_get(r, "table"));
			unsigned int f = needs->n_files;

			if (table == NULL || f == EMU_STAGE_MAX_FILES)
				continue;
			needs->files[f] = table;
			snprintf(needs->file_keys[f], sizeof(needs->file_keys[f]), "rules[%u].table",
				 (unsigned int)(i % DELAY_MAX_RULES));
			needs->file_input[f] = true;
			needs->n_files++;
		}
	}
	return 0;
}

static void
delay_free(void *priv)
{
	struct delay_priv *dp = priv;
	unsigned int i;

	emu_heldq_free(&dp->held);
	for (i = 0; i < dp->n_rules; i++) {
		free(dp->rules[i].tab_ns);
		free(dp->rules[i].tab_p);
		dp->rules[i].tab_ns = NULL;
		dp->rules[i].tab_p = NULL;
	}
}

/* One delay from rule @p r, in ns (a double: the caller rounds). *clamped when cut. */
static double
delay_sample(const struct delay_priv *dp, const struct delay_rule *r, struct emu_rng *rng,
	     bool *clamped)
{
	double u, v, d;
	unsigned int k;

	switch (r->dist) {
	case DELAY_UNIFORM:
		d = r->delay_ns - r->jitter_ns + 2.0 * r->jitter_ns * emu_rng_uniform(rng);
		break;
	case DELAY_NORMAL:
		u = 1.0 - emu_rng_uniform(rng); /* (0, 1] */
		v = emu_rng_uniform(rng);
		d = r->delay_ns + r->jitter_ns * sqrt(-2.0 * log(u)) * cos(2.0 * M_PI * v);
		break;
	case DELAY_PARETO:
		u = 1.0 - emu_rng_uniform(rng);
		d = r->delay_ns * pow(u, -1.0 / r->shape);
		break;
	case DELAY_TABLE:
		u = emu_rng_uniform(rng);
		for (k = 1; k < r->n_tab - 1 && r->tab_p[k] <= u; k++)
			;
		if (r->tab_p[k] <= r->tab_p[k - 1])
			d = r->tab_ns[k];
		else
			d = r->tab_ns[k - 1] + (r->tab_ns[k] - r->tab_ns[k - 1]) *
				(u - r->tab_p[k - 1]) / (r->tab_p[k] - r->tab_p[k - 1]);
		if (u < r->tab_p[0])
			d = r->tab_ns[0];
		break;
	default:
		d = r->delay_ns;
		break;
	}
	if (d < 0) {
		*clamped = true;
		return 0;
	}
	if (d > dp->max_delay_ns) {
		*clamped = true;
		return dp->max_delay_ns;
	}
	return d;
}

static uint16_t
delay_chunk(struct delay_priv *dp, struct rte_mbuf **pkts, uint16_t n, struct emu_burst_ctx *ctx,
	    uint64_t *ctr)
{
	uint64_t delays[DELAY_CHUNK];
	uint16_t i, kept = 0;
	unsigned int r;

	/* Decide: the delay of every packet, with the RNG, in order. */
	for (i = 0; i < n; i++) {
		struct emu_pkt_meta *meta = emu_meta(pkts[i]);
		const struct roce_pkt *p = (meta->flags & EMU_META_PARSED) ? &meta->pkt : NULL;
		bool clamped = false;

		delays[i] = 0;
		for (r = 0; r < dp->n_rules; r++) {
			if (!emu_match_test(&dp->rules[r].match, p, meta->in_port, meta->out_port,
					    meta->prio, 0, ctx->now_ns))
				continue;
			delays[i] = (uint64_t)llround(delay_sample(dp, &dp->rules[r], ctx->rng,
								   &clamped));
			break;
		}
		ctr[DELAY_CTR_CLAMPED] += clamped;
	}
	/* Apply: pass, hold or (heap full) drop. */
	for (i = 0; i < n; i++) {
		struct rte_mbuf *m = pkts[i];
		uint16_t port = emu_meta(m)->out_port;
		unsigned int key = port < EMU_MAX_PORTS ? port : EMU_MAX_PORTS;
		uint64_t due_ns = ctx->now_ns + delays[i];

		if (!dp->reorder && due_ns < dp->last_due[key])
			due_ns = dp->last_due[key];
		if (due_ns <= ctx->now_ns) {
			/* Nothing ahead of it can still be held for this port: it goes now. */
			pkts[kept++] = m;
			ctr[DELAY_CTR_PASSED]++;
			continue;
		}
		if (emu_heldq_full(&dp->held)) {
			emu_drop(ctx->drop, m, ctx->reason_base + DELAY_CTR_DROP_HELD_FULL,
				 &ctr[DELAY_CTR_DROP_HELD_FULL]);
			continue;
		}
		dp->last_due[key] = due_ns;
		emu_meta(m)->trace.marks |= EMU_TRACE_DELAYED;
		emu_meta(m)->trace.delay_ns += (uint32_t)RTE_MIN(due_ns - ctx->now_ns,
								 (uint64_t)UINT32_MAX);
		emu_heldq_push(&dp->held, due_ns, m);
		ctr[DELAY_CTR_DELAYED]++;
	}
	return kept;
}

static uint16_t
delay_process(void *priv, struct rte_mbuf **pkts, uint16_t n, struct emu_burst_ctx *ctx)
{
	struct delay_priv *dp = priv;
	uint64_t ctr[DELAY_CTR_MAX] = { 0 };
	uint16_t done, kept = 0, k, s;
	unsigned int c;

	for (done = 0; done < n; done += k) {
		k = RTE_MIN((uint16_t)(n - done), (uint16_t)DELAY_CHUNK);
		s = delay_chunk(dp, pkts + done, k, ctx, ctr);
		if (kept != done)
			memmove(pkts + kept, pkts + done, (size_t)s * sizeof(*pkts));
		kept += s;
	}
	for (c = 0; c < DELAY_CTR_MAX; c++)
		ctx->ctr[c] += ctr[c];
	return kept;
}

static uint64_t
delay_next_due_ns(const void *priv)
{
	const struct delay_priv *dp = priv;

	return emu_heldq_next_due(&dp->held);
}

static uint16_t
delay_release(void *priv, struct rte_mbuf **pkts, uint16_t cap, struct emu_burst_ctx *ctx)
{
	struct delay_priv *dp = priv;
	uint16_t n = emu_heldq_release(&dp->held, ctx->now_ns, pkts, cap);

	ctx->ctr[DELAY_CTR_RELEASED] += n;
	return n;
}

static uint64_t
delay_held_count(const void *priv)
{
	const struct delay_priv *dp = priv;

	return dp->held.n;
}

/* It reads the parse result only through its rules' matches (the key is the egress port). */
static enum emu_parse_need
delay_parse_need(const void *priv)
{
	const struct delay_priv *dp = priv;
	unsigned int r;

	for (r = 0; r < dp->n_rules; r++)
		if (!emu_match_reads_dp_fields(&dp->rules[r].match))
			return EMU_PARSE_FULL;
	return EMU_PARSE_DP;
}

const struct emu_stage_ops emu_stage_delay = {
	.type = "delay",
	.priv_size = sizeof(struct delay_priv),
	.ctr_names = delay_ctr_names,
	.n_ctr = DELAY_CTR_MAX,
	.keys = delay_keys,
	.key_table = &delay_key_table,
	.init = delay_init,
	.needs = delay_needs,
	.parse_need = delay_parse_need,
	.process = delay_process,
	.free = delay_free,
	.held = delay_held_count,
	.next_due_ns = delay_next_due_ns,
	.release = delay_release,
};
