/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * reorder's configuration: its key table, the keys read and checked (init() and needs()), the
 * tables sized and set up at init, and free (the held packets with them). The stage and its
 * packet path are in reorder.c.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/base/emu_json.h"
#include "lib/base/emu_keys.h"
#include "lib/stage/emu_match.h"

#include "stages.h"
#include "reorder_priv.h"

const char *const reorder_keys[] = { "ports", "match", "timeout_us", "max_held_pkts",
					    "max_qps", "policy", "start", NULL };

static const char *const reorder_policy_vals[] = { "flush", "drop", NULL };

static const struct emu_key reorder_key_entries[] = {
	EMU_K_ARR("ports", EMU_KEY_STR, NULL, "{\"minItems\": 1}",
		  "egress ports whose packets are sorted; default: every port"),
	{ .name = "match", .type = EMU_KEY_OBJ, .sub = &emu_match_table,
	  .schema = "{\"not\": {\"required\": [\"iteration\"]}}",
	  .desc = "only packets this matches are sorted (no iteration)" },
	EMU_K_NUM("timeout_us", 100.0, 0.0, true, 10e6,
		  "a hole is given up after this (us): what is held goes out, the NIC sees the gap"),
	EMU_K_INT("max_held_pkts", 16384, 1, 4194304, "packets held at once at most"),
	EMU_K_INT("max_qps", 4096, 8, 1048576, "QPs (destination IP + DestQP) tracked at most"),
	EMU_K_ENUM("policy", "flush", reorder_policy_vals,
		   "when full: flush (release the oldest QP in order) or drop (the arriving packet)"),
	EMU_K_ANY("start", "{\"oneOf\": [{\"const\": \"first\"}, {\"type\": \"integer\", "
		  "\"minimum\": 0, \"maximum\": 16777215}]}",
		  "expected PSN of a new QP: \"first\" (its first packet's) or a PSN"),
};
const struct emu_key_table reorder_key_table = {
	.title = "reorder",
	.desc = "puts each QP's packets back into PSN order in front of an RC NIC (egress)",
	.keys = reorder_key_entries, .n_keys = RTE_DIM(reorder_key_entries), .names = reorder_keys,
	.extra_names = emu_stage_extra_names,
};
#define T (&reorder_key_table)

/* RC/UC request opcodes: what a responder checks against its expected PSN. */
static inline bool
reorder_is_request(uint8_t opcode)
{
	uint8_t tr = opcode & ROCE_TRANSPORT_MASK, op = opcode & ROCE_OP_MASK;

	if (tr == ROCE_TRANSPORT_UC)
		return op <= ROCE_OP_RDMA_WRITE_ONLY_WITH_IMMEDIATE;
	if (tr != ROCE_TRANSPORT_RC)
		return false;
	return op <= ROCE_OP_RDMA_READ_REQUEST || op == ROCE_OP_COMPARE_SWAP ||
	       op == ROCE_OP_FETCH_ADD || op == ROCE_OP_SEND_LAST_WITH_INVALIDATE ||
	       op == ROCE_OP_SEND_ONLY_WITH_INVALIDATE;
}

/* ---- configuration ---- */

struct reorder_cfg {
	double timeout_us;
	int64_t max_held, max_qps, start;
	const char *policy;
	uint32_t n_buckets, ready_slots;
};

/* Every key but ports and match (init() and needs() both read them). */
static int
reorder_cfg_read(const json_t *cfg, const char *path, struct reorder_cfg *c, struct emu_err *err)
{
	const json_t *v = json_object_get(cfg, "start");
	char p1[EMU_JSON_PATH_LEN];
	int rc;

	rc = emu_key_num(cfg, path, T, "timeout_us", &c->timeout_us, err);
	if (rc == 0 && llround(c->timeout_us * 1000.0) == 0)
		rc = emu_err_set(err, "%s.timeout_us: must be at least 0.001 (1 ns), got %g", path,
				 c->timeout_us);
	if (rc == 0)
		rc = emu_key_int(cfg, path, T, "max_held_pkts", &c->max_held, err);
	if (rc == 0)
		rc = emu_key_int(cfg, path, T, "max_qps", &c->max_qps, err);
	if (rc == 0)
		rc = emu_key_str(cfg, path, T, "policy", &c->policy, err);
	if (rc != 0)
		return rc;
	emu_json_path(p1, sizeof(p1), path, "start");
	c->start = -1; /* "first" */
	if (json_is_string(v) && strcmp(json_string_value(v), "first") != 0)
		return emu_err_set(err, "%s: must be \"first\" or a PSN 0-16777215, got \"%s\"",
				   p1, json_string_value(v));
	if (v != NULL && !json_is_integer(v) && !json_is_string(v))
		return emu_err_set(err, "%s: must be \"first\" or a PSN 0-16777215, got %s", p1,
				   emu_json_type_name(v));
	if (json_is_integer(v) &&
	    (rc = emu_json_int_value(v, p1, 0, REORDER_PSN_MASK, &c->start, err)) != 0)
		return rc;
	c->n_buckets = rte_align32pow2((uint32_t)((c->max_qps + REORDER_WAYS - 1) / REORDER_WAYS));
	c->ready_slots = rte_align32pow2((uint32_t)(2 * c->max_held + REORDER_READY_SLACK));
	return 0;
}

int
reorder_init(void *priv, const json_t *cfg, const struct emu_stage_env *env, struct emu_err *err)
{
	const json_t *match = json_object_get(cfg, "match");
	struct reorder_priv *rp = priv;
	char p1[EMU_JSON_PATH_LEN];
	struct reorder_cfg c;
	uint32_t i;
	int rc;

	if (!env->egress)
		return emu_err_set(err, "%s.type: \"reorder\" must be in the egress list (it sorts "
				   "what the paths deliver, in front of the receiving NIC)",
				   env->path);
	rc = reorder_cfg_read(cfg, env->path, &c, err);
	emu_json_path(p1, sizeof(p1), env->path, "match");
	if (rc == 0 && match != NULL)
		rc = emu_match_parse(match, p1, env->port_names, env->n_ports,
				     env->out_port_known, &rp->match, err);
	if (rc == 0 && match != NULL && (rp->match.flags & EMU_MATCH_ITERATION))
		rc = emu_err_set(err, "%s.iteration: not in a reorder stage (no iteration tracker "
				 "there)", p1);
	if (rc == 0)
		rc = emu_stage_port_mask(cfg, env, "ports", &rp->port_mask, err);
	if (rc != 0 || env->check_only)
		return rc;
	rp->has_match = match != NULL;
	rp->policy_drop = strcmp(c.policy, "drop") == 0;
	rp->start_first = c.start < 0;
	rp->start_psn = c.start < 0 ? 0 : (uint32_t)c.start;
	rp->timeout_ns = (uint64_t)llround(c.timeout_us * 1000.0);
	rp->nodes = calloc((size_t)c.max_held + 1 + (size_t)c.n_buckets * REORDER_WAYS,
			   sizeof(*rp->nodes));
	rp->qps = aligned_alloc(RTE_CACHE_LINE_SIZE, (size_t)c.n_buckets * REORDER_WAYS *
				sizeof(*rp->qps));
	rp->ready = calloc(c.ready_slots, sizeof(*rp->ready));
	rp->hints = calloc((size_t)c.n_buckets * REORDER_WAYS, sizeof(*rp->hints));
	if (rp->nodes == NULL || rp->qps == NULL || rp->ready == NULL || rp->hints == NULL)
		return emu_err_setrc(err, -ENOMEM, "%s.max_held_pkts: cannot allocate %" PRId64
				     " held packets and %" PRId64 " QPs", env->path, c.max_held,
				     c.max_qps);
	memset(rp->qps, 0, (size_t)c.n_buckets * REORDER_WAYS * sizeof(*rp->qps));
	rp->max_held = (uint32_t)c.max_held;
	for (i = 0; i < rp->max_held; i++)
		rp->nodes[i].next = i + 1 < rp->max_held ? i + 1 : REORDER_NIL;
	rp->nodes[i].older = rp->nodes[i].newer = i; /* the arrival list's sentinel */
	for (i = 0; i < 256; i++)
		rp->is_request[i] = reorder_is_request((uint8_t)i);
	rp->bucket_mask = c.n_buckets - 1;
	rp->hint_mask = c.n_buckets * REORDER_WAYS - 1;
	rp->ready_mask = c.ready_slots - 1;
	return 0;
}

int
reorder_needs(const json_t *cfg, const struct emu_stage_env *env, struct emu_stage_needs *needs,
	      struct emu_err *err)
{
	struct reorder_cfg c;
	int rc = reorder_cfg_read(cfg, env->path, &c, err);

	if (rc != 0)
		return rc;
	/* nodes, the ready ring and the QP table (the packets come from the switch's pool) */
	needs->mem_bytes = (uint64_t)(c.max_held + 1) * sizeof(struct reorder_node) +
			   (uint64_t)c.ready_slots * sizeof(struct reorder_ready) +
			   (uint64_t)c.n_buckets * REORDER_WAYS *
				   (sizeof(struct reorder_qp) + sizeof(struct reorder_node) +
				    sizeof(uint32_t));
	snprintf(needs->mem_key, sizeof(needs->mem_key), "max_held_pkts");
	return 0;
}

void
reorder_free(void *priv)
{
	struct reorder_priv *rp = priv;
	uint32_t i, k = REORDER_ARR(rp);

	for (i = 0; i < rp->n_used; i++) { /* n_used > 0: the nodes and the sentinel are there */
		k = rp->nodes[k].newer;
		rte_pktmbuf_free(rp->nodes[k].m);
	}
	for (; rp->ready != NULL && rp->ready_n > 0; rp->ready_n--) {
		rte_pktmbuf_free(rp->ready[rp->ready_head].m);
		rp->ready_head = (rp->ready_head + 1) & rp->ready_mask;
	}
	free(rp->nodes);
	free(rp->qps);
	free(rp->ready);
	free(rp->hints);
	memset(rp, 0, sizeof(*rp));
}
