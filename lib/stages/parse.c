/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * parse: runs lib/proto's parser over each packet and stores the result in the
 * packet's metadata, where later stages read it. Counts packets per class and
 * per malformation reason. Transparent: nothing is dropped unless
 * "drop_invalid" is set (then frames that look like RoCE but are malformed go).
 * The traffic class comes from the outermost 802.1p PCP.
 */
#include <string.h>

#include "lib/core/emu_json.h"
#include "lib/proto/roce_mbuf.h"
#include "stages.h"

/* Counters: one per class, one per reason, then the fixed ones. */
#define PARSE_CTR_CLASS(c) (c)
#define PARSE_CTR_REASON(r) (ROCE_CLASS_MAX + (r))
#define PARSE_CTR_ICRC_BAD (ROCE_CLASS_MAX + ROCE_REASON_MAX)
#define PARSE_CTR_DROP_INVALID (PARSE_CTR_ICRC_BAD + 1)
#define PARSE_CTR_DROP_ICRC (PARSE_CTR_ICRC_BAD + 2)
#define PARSE_CTR_MAX (PARSE_CTR_ICRC_BAD + 3)

static char parse_ctr_buf[PARSE_CTR_MAX][48];
static const char *parse_ctr_names[PARSE_CTR_MAX];

static const char *const parse_keys[] = { "roce_udp_port", "drop_invalid", "verify_icrc",
					  "drop_bad_icrc", NULL };

struct parse_priv {
	uint16_t roce_port;
	bool drop_invalid;
	bool verify_icrc;
	bool drop_bad_icrc;
};

/* Fill the name table once (control path, idempotent). */
static void
parse_names_init(void)
{
	unsigned int i;

	if (parse_ctr_names[0] != NULL)
		return;
	for (i = 0; i < ROCE_CLASS_MAX; i++)
		snprintf(parse_ctr_buf[PARSE_CTR_CLASS(i)], 48, "class_%s", roce_class_name(i));
	for (i = 0; i < ROCE_REASON_MAX; i++)
		snprintf(parse_ctr_buf[PARSE_CTR_REASON(i)], 48, "reason_%s", roce_reason_name(i));
	snprintf(parse_ctr_buf[PARSE_CTR_ICRC_BAD], 48, "icrc_bad");
	snprintf(parse_ctr_buf[PARSE_CTR_DROP_INVALID], 48, "drop_invalid");
	snprintf(parse_ctr_buf[PARSE_CTR_DROP_ICRC], 48, "drop_bad_icrc");
	for (i = 0; i < PARSE_CTR_MAX; i++)
		parse_ctr_names[i] = parse_ctr_buf[i];
}

static int
parse_init(void *priv, const json_t *cfg, const struct emu_stage_env *env, struct emu_err *err)
{
	struct parse_priv *pp = priv;
	int64_t port;
	int rc;

	parse_names_init();
	rc = emu_json_get_int(cfg, env->path, "roce_udp_port", false, 4791, 1, 65535, &port, err);
	if (rc == 0)
		rc = emu_json_get_bool(cfg, env->path, "drop_invalid", false, false,
				       &pp->drop_invalid, err);
	if (rc == 0)
		rc = emu_json_get_bool(cfg, env->path, "verify_icrc", false, false,
				       &pp->verify_icrc, err);
	if (rc == 0)
		rc = emu_json_get_bool(cfg, env->path, "drop_bad_icrc", false, false,
				       &pp->drop_bad_icrc, err);
	if (rc != 0)
		return rc;
	if (pp->drop_bad_icrc && !pp->verify_icrc)
		return emu_err_set(err, "%s.drop_bad_icrc: needs \"verify_icrc\": true", env->path);
	pp->roce_port = (uint16_t)port;
	return 0;
}

static uint16_t
parse_process(void *priv, struct rte_mbuf **pkts, uint16_t n, struct emu_burst_ctx *ctx)
{
	const struct parse_priv *pp = priv;
	uint16_t i, kept = 0;

	for (i = 0; i < n; i++) {
		struct rte_mbuf *m = pkts[i];
		struct emu_pkt_meta *meta = emu_meta(m);
		struct roce_pkt *p = &meta->pkt;
		enum roce_class cls;

		/* Multi-segment aware: short headers are linearised on the stack. */
		cls = roce_parse_mbuf(m, pp->roce_port, p);
		meta->flags |= EMU_META_PARSED;
		meta->prio = p->pcp;
		ctx->ctr[PARSE_CTR_CLASS(cls)] += 1;
		if (p->reason != ROCE_REASON_OK)
			ctx->ctr[PARSE_CTR_REASON(p->reason)] += 1;
		if (cls == ROCE_CLASS_INVALID && pp->drop_invalid) {
			emu_stage_drop(m, ctx->ctr, PARSE_CTR_DROP_INVALID);
			continue;
		}
		if (pp->verify_icrc && (cls == ROCE_CLASS_ROCEV2 || cls == ROCE_CLASS_ROCEV1) &&
		    !roce_icrc_verify_mbuf(m, p)) {
			ctx->ctr[PARSE_CTR_ICRC_BAD] += 1;
			if (pp->drop_bad_icrc) {
				emu_stage_drop(m, ctx->ctr, PARSE_CTR_DROP_ICRC);
				continue;
			}
		}
		pkts[kept++] = m;
	}
	return kept;
}

const struct emu_stage_ops emu_stage_parse = {
	.type = "parse",
	.priv_size = sizeof(struct parse_priv),
	.ctr_names = parse_ctr_names,
	.n_ctr = PARSE_CTR_MAX,
	.keys = parse_keys,
	.init = parse_init,
	.process = parse_process,
};
