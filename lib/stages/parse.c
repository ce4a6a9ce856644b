/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * parse: runs lib/proto's parser over each packet and stores the result in the
 * packet's metadata, where later stages read it. Counts packets per class and
 * per malformation reason. Transparent: nothing is dropped unless
 * "drop_invalid" is set (then frames that look like RoCE but are malformed go).
 * The priority (meta->prio, the TM queue) comes from the DSCP through "dscp_map"
 * ("trust": "dscp", the default, as RoCE deployments do) or from the outermost
 * 802.1p PCP ("trust": "pcp"); frames without an IP header always use the PCP.
 *
 * When the switch says that nothing after this stage reads more of the parse result than
 * roce_parse_partial_dp() fills, or than roce_parse_partial_qp() (a reorder stage), or only
 * the class and what the switch itself reads (roce_parse_partial_min(): the TM reads the
 * class, l3_off, IP version and traffic class) (emu_stage_parse_need(), from every stage's
 * ops->parse_need, the fabric and the incast sources), the common RoCEv2 frame gets only
 * those fields (the others stay as they were in the mbuf's metadata) and the counters and
 * every packet's fate are the same.
 */
#include <stdlib.h>
#include <string.h>

#include "lib/base/emu_json.h"
#include "lib/proto/roce_mbuf.h"
#include "lib/proto/roce_parse_fast.h"
#include "lib/stages/stages.h"

/* Counters: one per class, one per reason, then the fixed ones. */
#define PARSE_CTR_CLASS(c) (c)
#define PARSE_CTR_REASON(r) (ROCE_CLASS_MAX + (r))
#define PARSE_CTR_ICRC_BAD (ROCE_CLASS_MAX + ROCE_REASON_MAX)
#define PARSE_CTR_DROP_INVALID (PARSE_CTR_ICRC_BAD + 1)
#define PARSE_CTR_DROP_ICRC (PARSE_CTR_ICRC_BAD + 2)
#define PARSE_CTR_ICRC_UNCHECKABLE (PARSE_CTR_ICRC_BAD + 3)
#define PARSE_CTR_MAX (PARSE_CTR_ICRC_BAD + 4)

static char parse_ctr_buf[PARSE_CTR_MAX][48];
static const char *parse_ctr_names[PARSE_CTR_MAX];

static const char *const parse_keys[] = { "roce_udp_port", "drop_invalid", "verify_icrc",
					  "drop_bad_icrc", "trust", "dscp_map", NULL };

static const char *const parse_trust_vals[] = { "dscp", "pcp", NULL };
static const struct emu_key parse_key_entries[] = {
	EMU_K_INT("roce_udp_port", 4791, 1, 65535, "UDP destination port of RoCEv2"),
	EMU_K_BOOL("drop_invalid", false, "drop frames that do not parse as RoCEv2"),
	EMU_K_BOOL("verify_icrc", false, "check every RoCE packet's ICRC"),
	EMU_K_BOOL("drop_bad_icrc", false, "drop packets whose ICRC is wrong (with verify_icrc)"),
	EMU_K_ENUM("trust", "dscp", parse_trust_vals,
		   "the priority of a packet comes from its DSCP (through dscp_map) or its PCP"),
	EMU_K_ANY("dscp_map",
		  "{\"oneOf\": [{\"type\": \"object\", \"propertyNames\": {\"pattern\": "
		  "\"^([0-9]|[1-5][0-9]|6[0-3])$\"}, \"additionalProperties\": {\"type\": "
		  "\"integer\", \"minimum\": 0, \"maximum\": 7}}, {\"type\": \"array\", "
		  "\"minItems\": 64, \"maxItems\": 64, \"items\": {\"type\": \"integer\", "
		  "\"minimum\": 0, \"maximum\": 7}}]}",
		  "DSCP to priority: an object {\"26\": 3} (unlisted DSCPs: 0) or an array of 64 "
		  "priorities; only with trust dscp. Polymorphic (object or array)"),
};
static const struct emu_key_table parse_key_table = {
	.title = "parse", .desc = "parses RoCEv2 headers into the packet's metadata",
	.keys = parse_key_entries, .n_keys = RTE_DIM(parse_key_entries), .names = parse_keys,
	.extra_names = emu_stage_extra_names,
	.rules = (const struct emu_key_rule[]){
		{ "trust", EMU_KEY_LIST("pcp"), NULL, EMU_KEY_LIST("dscp_map") } },
	.n_rules = 1,
};
#define T (&parse_key_table)

struct parse_priv {
	uint16_t roce_port;
	bool drop_invalid;
	bool verify_icrc;
	bool drop_bad_icrc;
	bool trust_dscp;
	uint8_t need; /* enum emu_parse_need: set by the switch (emu_stage_parse_need) */
	uint8_t dscp_prio[64];
};

void
emu_stage_parse_need(void *priv, enum emu_parse_need need)
{
	((struct parse_priv *)priv)->need = (uint8_t)need;
}

/* dscp_map: {"26": 3, ...} (unlisted DSCPs -> 0) or an array of 64 priorities. */
static int
parse_dscp_map(const json_t *v, const char *path, uint8_t map[64], struct emu_err *err)
{
	char p[EMU_JSON_PATH_LEN];
	const char *key;
	const json_t *e;
	int64_t prio;
	size_t i;
	int rc;

	memset(map, 0, 64);
	if (json_is_array(v)) {
		if (json_array_size(v) != 64)
			return emu_err_set(err,
					   "%s: an array must have 64 priorities (one per DSCP), got %zu",
					   path, json_array_size(v));
		json_array_foreach(v, i, e) {
			emu_json_path_idx(p, sizeof(p), path, i);
			rc = emu_json_int_value(e, p, 0, 7, &prio, err);
			if (rc != 0)
				return rc;
			map[i] = (uint8_t)prio;
		}
		return 0;
	}
	if (!json_is_object(v))
		return emu_err_set(err, "%s: must be an object (\"26\": 3) or an array of 64 "
				   "priorities, got %s", path, emu_json_type_name(v));
	json_object_foreach((json_t *)(uintptr_t)v, key, e) {
		char *end;
		long dscp = strtol(key, &end, 10);

		emu_json_path(p, sizeof(p), path, key);
		if (key[0] < '0' || key[0] > '9' || *end != '\0' || dscp > 63)
			return emu_err_set(err, "%s: keys must be DSCP values 0-63, got \"%s\"", p,
					   key);
		rc = emu_json_int_value(e, p, 0, 7, &prio, err);
		if (rc != 0)
			return rc;
		map[dscp] = (uint8_t)prio;
	}
	return 0;
}

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
	snprintf(parse_ctr_buf[PARSE_CTR_ICRC_UNCHECKABLE], 48, "icrc_not_checkable");
	for (i = 0; i < PARSE_CTR_MAX; i++)
		parse_ctr_names[i] = parse_ctr_buf[i];
}

static int
parse_init(void *priv, const json_t *cfg, const struct emu_stage_env *env, struct emu_err *err)
{
	struct parse_priv *pp = priv;
	char path[EMU_JSON_PATH_LEN];
	const char *trust;
	const json_t *map;
	int64_t port;
	int rc;

	parse_names_init();
	pp->need = EMU_PARSE_FULL; /* until the switch says less is read */
	rc = emu_key_int(cfg, env->path, T, "roce_udp_port", &port, err);
	if (rc == 0)
		rc = emu_key_bool(cfg, env->path, T, "drop_invalid", &pp->drop_invalid, err);
	if (rc == 0)
		rc = emu_key_bool(cfg, env->path, T, "verify_icrc", &pp->verify_icrc, err);
	if (rc == 0)
		rc = emu_key_bool(cfg, env->path, T, "drop_bad_icrc", &pp->drop_bad_icrc, err);
	if (rc == 0)
		rc = emu_key_str(cfg, env->path, T, "trust", &trust, err);
	if (rc != 0)
		return rc;
	pp->trust_dscp = strcmp(trust, "dscp") == 0;
	map = json_object_get(cfg, "dscp_map");
	if (map != NULL) {
		emu_json_path(path, sizeof(path), env->path, "dscp_map");
		if (!pp->trust_dscp)
			return emu_err_set(err, "%s: only with \"trust\": \"dscp\"", path);
		rc = parse_dscp_map(map, path, pp->dscp_prio, err);
		if (rc != 0)
			return rc;
	} else {
		/* RoCE data DSCP 26 -> 3, CNP DSCP 48 -> 6 (docs/wire.md) */
		memset(pp->dscp_prio, 0, sizeof(pp->dscp_prio));
		pp->dscp_prio[26] = 3;
		pp->dscp_prio[48] = 6;
	}
	if (pp->drop_bad_icrc && !pp->verify_icrc)
		return emu_err_set(err, "%s.drop_bad_icrc: needs \"verify_icrc\": true", env->path);
	pp->roce_port = (uint16_t)port;
	return 0;
}

/* roce_parse_mbuf() out of the per-packet loops, which take it only for a chain whose headers
 * may straddle segments: inlined, gcc merged its pkt_len clamp with the loop's pkt_len load
 * into vector moves through the stack, three instructions a packet. */
static __attribute__((noinline)) enum roce_class
parse_mbuf_apart(const struct rte_mbuf *m, uint16_t roce_port, struct roce_pkt *p)
{
	return roce_parse_mbuf(m, roce_port, p);
}

/*
 * parse_process() when nothing is dropped and no ICRC checked (the default): every packet
 * goes on, and the RoCEv2 count is added once per burst. @p parse_hdr (the level's parser) and
 * @p trust_dscp are constants in each copy parse_process() makes: a direct call, and the
 * priority without re-reading the configuration.
 */
static inline __attribute__((always_inline)) uint16_t
parse_run(const struct parse_priv *pp, struct rte_mbuf **pkts, uint16_t n,
	  struct emu_burst_ctx *ctx,
	  enum roce_class (*const parse_hdr)(const uint8_t *, uint32_t, uint32_t, uint16_t,
					     struct roce_pkt *),
	  const bool trust_dscp)
{
	const uint16_t roce_port = pp->roce_port;
	uint64_t n_rocev2 = 0;
	uint16_t i;

	for (i = 0; i < n; i++) {
		struct rte_mbuf *m = pkts[i];
		struct emu_pkt_meta *meta = emu_meta(m);
		struct roce_pkt *p = &meta->pkt;
		enum roce_class cls;

		if (meta->flags & EMU_META_SNAP)
			cls = parse_hdr(rte_pktmbuf_mtod(m, const uint8_t *),
					rte_pktmbuf_data_len(m), meta->wire_len, roce_port, p);
		else if (likely(m->data_len >= ROCE_PARSE_MAX_HDR || m->data_len >= m->pkt_len))
			/* the headers in the first segment (else roce_parse_mbuf()'s copy) */
			cls = parse_hdr(rte_pktmbuf_mtod(m, const uint8_t *), m->data_len,
					m->pkt_len, roce_port, p);
		else
			cls = parse_mbuf_apart(m, roce_port, p);
		meta->flags |= EMU_META_PARSED;
		/* the traffic class, from its DSCP or its PCP (see the file's header) */
		meta->prio = trust_dscp && p->ip_version != 0 ? pp->dscp_prio[p->dscp & 63] : p->pcp;
		if (likely(cls == ROCE_CLASS_ROCEV2 && p->reason == ROCE_REASON_OK)) {
			n_rocev2++;
			continue;
		}
		ctx->ctr[PARSE_CTR_CLASS(cls)] += 1;
		if (p->reason != ROCE_REASON_OK)
			ctx->ctr[PARSE_CTR_REASON(p->reason)] += 1;
	}
	ctx->ctr[PARSE_CTR_CLASS(ROCE_CLASS_ROCEV2)] += n_rocev2;
	return n;
}

static uint16_t
parse_process_transparent(const struct parse_priv *pp, struct rte_mbuf **pkts, uint16_t n,
			  struct emu_burst_ctx *ctx)
{
	switch (pp->need) {
	case EMU_PARSE_CLASS:
		return pp->trust_dscp ?
			       parse_run(pp, pkts, n, ctx, roce_parse_partial_min_inline, true) :
			       parse_run(pp, pkts, n, ctx, roce_parse_partial_min_inline, false);
	case EMU_PARSE_QP:
		return parse_run(pp, pkts, n, ctx, roce_parse_partial_qp, pp->trust_dscp);
	case EMU_PARSE_DP:
		return pp->trust_dscp ?
			       parse_run(pp, pkts, n, ctx, roce_parse_partial_dp_inline, true) :
			       parse_run(pp, pkts, n, ctx, roce_parse_partial_dp_inline, false);
	default:
		return parse_run(pp, pkts, n, ctx, roce_parse_partial, pp->trust_dscp);
	}
}

static uint16_t
parse_process(void *priv, struct rte_mbuf **pkts, uint16_t n, struct emu_burst_ctx *ctx)
{
	const struct parse_priv *pp = priv;
	uint16_t i, kept = 0;

	if (!pp->drop_invalid && !pp->verify_icrc)
		return parse_process_transparent(pp, pkts, n, ctx);
	for (i = 0; i < n; i++) {
		struct rte_mbuf *m = pkts[i];
		struct emu_pkt_meta *meta = emu_meta(m);
		struct roce_pkt *p = &meta->pkt;
		enum roce_class cls;

		/* Multi-segment aware: short headers are linearised on the stack. */
		if (meta->flags & EMU_META_SNAP)
			/* a header capture: the headers are here, the lengths are the wire's */
			cls = roce_parse_partial(rte_pktmbuf_mtod(m, const uint8_t *),
						 rte_pktmbuf_data_len(m), meta->wire_len,
						 pp->roce_port, p);
		else
			cls = roce_parse_mbuf(m, pp->roce_port, p);
		meta->flags |= EMU_META_PARSED;
		meta->prio = pp->trust_dscp && p->ip_version != 0 ? pp->dscp_prio[p->dscp & 63] :
								      p->pcp;
		ctx->ctr[PARSE_CTR_CLASS(cls)] += 1;
		if (p->reason != ROCE_REASON_OK)
			ctx->ctr[PARSE_CTR_REASON(p->reason)] += 1;
		if (cls == ROCE_CLASS_INVALID && pp->drop_invalid) {
			emu_stage_drop(ctx, m, PARSE_CTR_DROP_INVALID);
			continue;
		}
		if (pp->verify_icrc && (cls == ROCE_CLASS_ROCEV2 || cls == ROCE_CLASS_ROCEV1) &&
		    (meta->flags & EMU_META_SNAP)) {
			ctx->ctr[PARSE_CTR_ICRC_UNCHECKABLE] += 1;
		} else if (pp->verify_icrc &&
			   (cls == ROCE_CLASS_ROCEV2 || cls == ROCE_CLASS_ROCEV1) &&
			   !roce_icrc_verify_mbuf(m, p)) {
			ctx->ctr[PARSE_CTR_ICRC_BAD] += 1;
			if (pp->drop_bad_icrc) {
				emu_stage_drop(ctx, m, PARSE_CTR_DROP_ICRC);
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
	.key_table = &parse_key_table,
	.init = parse_init,
	.process = parse_process,
};
