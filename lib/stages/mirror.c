/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mirror: a port mirror (SPAN). Every frame it sees, or those of the listed ports,
 * is copied and the copy is emitted towards "to" (a monitoring port); the original
 * continues unchanged. The copies are frames the switch creates: they take the
 * TM's queue and link time of the mirror port like any other frame.
 */
#include <string.h>

#include "lib/base/emu_json.h"
#include "lib/stages/stages.h"

#define MIRROR_FOREACH_CTR(_) \
	_(MIRRORED, "mirrored") \
	_(NOMBUF, "not_mirrored_nombuf") \
	_(EMIT_FULL, "not_mirrored_emit_full")

enum mirror_ctr {
#define MIRROR_CTR_ENUM(e, s) MIRROR_CTR_##e,
	MIRROR_FOREACH_CTR(MIRROR_CTR_ENUM)
#undef MIRROR_CTR_ENUM
	MIRROR_CTR_MAX
};

static const char *const mirror_ctr_names[] = {
#define MIRROR_CTR_NAME(e, s) s,
	MIRROR_FOREACH_CTR(MIRROR_CTR_NAME)
#undef MIRROR_CTR_NAME
};

static const char *const mirror_keys[] = { "to", "ports", "snaplen", NULL };

static const struct emu_key mirror_key_entries[] = {
	EMU_K_STR_REQ("to", "the port (a ports[] name) the copies are sent out of"),
	EMU_K_ARR("ports", EMU_KEY_STR, NULL, "{\"minItems\": 1}",
		  "port names whose packets are mirrored; default: every port"),
	EMU_K_INT("snaplen", 0, 0, 65535, "truncate the copies to this many bytes; 0: whole"),
};
static const struct emu_key_table mirror_key_table = {
	.title = "mirror", .desc = "copies packets out of another port",
	.keys = mirror_key_entries, .n_keys = RTE_DIM(mirror_key_entries), .names = mirror_keys,
	.extra_names = emu_stage_extra_names,
};
#define T (&mirror_key_table)

struct mirror_priv {
	uint16_t to;
	bool egress;
	uint32_t port_mask;
	uint32_t snaplen;
};

static int
mirror_init(void *priv, const json_t *cfg, const struct emu_stage_env *env, struct emu_err *err)
{
	struct mirror_priv *mp = priv;
	char path[EMU_JSON_PATH_LEN];
	const char *to;
	int64_t snaplen;
	int rc, port;

	rc = emu_key_str(cfg, env->path, T, "to", &to, err);
	if (rc == 0)
		rc = emu_key_int(cfg, env->path, T, "snaplen", &snaplen, err);
	if (rc != 0)
		return rc;
	port = emu_stage_env_port(env, to);
	if (port < 0) {
		emu_json_path(path, sizeof(path), env->path, "to");
		return emu_err_set(err, "%s: no port named \"%s\"", path, to);
	}
	mp->to = (uint16_t)port;
	mp->snaplen = snaplen == 0 ? UINT32_MAX : (uint32_t)snaplen;
	mp->egress = env->egress;
	return emu_stage_port_mask(cfg, env, "ports", &mp->port_mask, err);
}

static uint16_t
mirror_process(void *priv, struct rte_mbuf **pkts, uint16_t n, struct emu_burst_ctx *ctx)
{
	const struct mirror_priv *mp = priv;
	uint64_t mirrored = 0, nombuf = 0, full = 0;
	uint16_t i;

	for (i = 0; i < n; i++) {
		struct emu_pkt_meta *meta = emu_meta(pkts[i]);
		uint16_t port = mp->egress ? meta->out_port : meta->in_port;
		struct rte_mbuf *c;

		/* Never mirror the mirror port itself (an egress mirror would copy its copies). */
		if (port == mp->to)
			continue;
		if (!emu_stage_port_in(meta, mp->egress, mp->port_mask))
			continue;
		c = rte_pktmbuf_copy(pkts[i], ctx->emit->pool, 0, mp->snaplen);
		if (c == NULL) {
			nombuf++;
			continue;
		}
		*emu_meta(c) = *meta;
		if (!emu_emit_push(ctx->emit, c, mp->to)) {
			rte_pktmbuf_free(c);
			full++;
			continue;
		}
		mirrored++;
	}
	ctx->ctr[MIRROR_CTR_MIRRORED] += mirrored;
	ctx->ctr[MIRROR_CTR_NOMBUF] += nombuf;
	ctx->ctr[MIRROR_CTR_EMIT_FULL] += full;
	return n;
}

/* It copies packets: it reads no field of the parse result. */
static enum emu_parse_need
mirror_parse_need(const void *priv)
{
	(void)priv;
	return EMU_PARSE_CLASS;
}

const struct emu_stage_ops emu_stage_mirror = {
	.type = "mirror",
	.priv_size = sizeof(struct mirror_priv),
	.ctr_names = mirror_ctr_names,
	.n_ctr = MIRROR_CTR_MAX,
	.keys = mirror_keys,
	.key_table = &mirror_key_table,
	.init = mirror_init,
	.parse_need = mirror_parse_need,
	.process = mirror_process,
};
