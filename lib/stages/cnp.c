/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cnp: the switch as a DCQCN notification point. For every CE-marked RoCEv2 data packet
 * (RC/UC SEND, RDMA WRITE, RDMA READ response) it forwards, it sends a CNP back to the data
 * sender, out of the port the data packet came in on, as a receiver NIC would: addresses
 * swapped, DestQP = the sender's QPN, BECN set, DSCP 48, ECT(0), priority 6 if tagged.
 *
 * A data packet names only the receiver's QPN; the sender's QPN is learned by a roce_qpmap
 * from the reverse direction (ACKs, NAKs, read requests/responses, CNPs carry it as DestQP).
 * The stage sits on egress, where it sees the traffic of both directions, and learns from
 * every RoCE packet it forwards. Unknown sender: counted, no CNP.
 *
 * Pacing, per QP (CNP destination address + DestQP), like the NIC's min_time_between_cnps:
 *   send at t  iff  no CNP was sent to that QP in (t - interval, t]  (t - last >= interval)
 * The pacing table is a fixed array of 8-way buckets allocated at init; a full bucket reuses
 * its least recently used entry (that QP may then get one CNP early; counted).
 */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "lib/base/emu_hash.h"
#include "lib/base/emu_json.h"
#include "lib/stages/stages.h"

#define CNP_FOREACH_CTR(_) \
	_(GENERATED, "generated") \
	_(SUPPRESSED_PACING, "suppressed_pacing") \
	_(UNKNOWN_QP, "unknown_qp") \
	_(DROP_NIC_CNP, "drop_nic_cnp") \
	_(NOMBUF, "nombuf") \
	_(EMIT_FULL, "not_generated_emit_full") \
	_(PACING_EVICTED, "pacing_evicted")

enum cnp_ctr {
#define CNP_CTR_ENUM(e, s) CNP_CTR_##e,
	CNP_FOREACH_CTR(CNP_CTR_ENUM)
#undef CNP_CTR_ENUM
	CNP_CTR_MAX
};

static const char *const cnp_ctr_names[] = {
#define CNP_CTR_NAME(e, s) s,
	CNP_FOREACH_CTR(CNP_CTR_NAME)
#undef CNP_CTR_NAME
};

static const char *const cnp_keys[] = { "interval_us", "dscp", "ecn", "priority", "udp_sport",
					"drop_nic_cnps", "max_qps", "qp_ageing_s", NULL };

#define CNP_WAYS 8
#define CNP_FRAME_MAX 128 /* IPv6 + VLAN CNP: 18 + 40 + 8 + 12 + 16 + 4 = 98 B */

/* Last CNP sent to one QP. sig 0 = empty. */
#define CNP_MAX_QPS_DEFAULT 65536
#define CNP_MAX_QPS_MAX 16777216

static const struct emu_key cnp_key_entries[] = {
	EMU_K_NUM("interval_us", 4.0, 0.0, false, 1e6,
		  "at most one CNP per QP per interval (us); 0: one per CE-marked packet"),
	EMU_K_INT("dscp", 48, 0, 63, "DSCP of the CNPs"),
	EMU_K_INT("ecn", 2, 0, 3, "ECN field of the CNPs"),
	EMU_K_INT("priority", 6, 0, 7, "802.1p priority (VLAN PCP) of the CNPs"),
	EMU_K_INT("udp_sport", 0, 0, 65535, "UDP source port of the CNPs; 0: the data's"),
	EMU_K_BOOL("drop_nic_cnps", false, "drop the CNPs the receivers' NICs send"),
	EMU_K_INT("max_qps", CNP_MAX_QPS_DEFAULT, 64, CNP_MAX_QPS_MAX, "QPs tracked for pacing"),
	EMU_K_NUM("qp_ageing_s", 60.0, 0.0, false, 1e6, "forget a QP idle this long (s)"),
};
static const struct emu_key_table cnp_key_table = {
	.title = "cnp", .desc = "notification point: CNPs for CE-marked RoCE packets (egress)",
	.keys = cnp_key_entries, .n_keys = RTE_DIM(cnp_key_entries), .names = cnp_keys,
	.extra_names = emu_stage_extra_names,
};

#define T (&cnp_key_table)

struct cnp_pace {
	uint8_t ip[16];    /* the CNP's destination: the data sender */
	uint32_t qpn;      /* the CNP's DestQP: the data sender's QPN */
	uint32_t sig;
	uint64_t last_ns;
	uint64_t used_ns;  /* last lookup, for LRU reuse */
};

struct cnp_priv {
	uint64_t interval_ns;
	uint8_t dscp;
	uint8_t ecn;
	uint8_t pcp;
	uint16_t udp_sport;
	bool drop_nic_cnps;
	struct roce_qpmap *qpmap;
	struct cnp_pace *paces;
	uint32_t bucket_mask;
};

static int
cnp_init(void *priv, const json_t *cfg, const struct emu_stage_env *env, struct emu_err *err)
{
	struct cnp_priv *cp = priv;
	int64_t dscp, ecn, prio, sport, max_qps;
	double interval_us, ageing_s;
	uint32_t nb = 1;
	int rc;

	if (!env->egress)
		return emu_err_set(err, "%s.type: \"cnp\" must be in the egress list (it must see "
				   "the CE marks and the forwarded traffic of both directions)",
				   env->path);
	rc = emu_key_num(cfg, env->path, T, "interval_us", &interval_us, err);
	if (rc == 0)
		rc = emu_key_int(cfg, env->path, T, "dscp", &dscp, err);
	if (rc == 0)
		rc = emu_key_int(cfg, env->path, T, "ecn", &ecn, err);
	if (rc == 0)
		rc = emu_key_int(cfg, env->path, T, "priority", &prio, err);
	if (rc == 0)
		rc = emu_key_int(cfg, env->path, T, "udp_sport", &sport, err);
	if (rc == 0)
		rc = emu_key_bool(cfg, env->path, T, "drop_nic_cnps", &cp->drop_nic_cnps, err);
	if (rc == 0)
		rc = emu_key_int(cfg, env->path, T, "max_qps", &max_qps, err);
	if (rc == 0)
		rc = emu_key_num(cfg, env->path, T, "qp_ageing_s", &ageing_s, err);
	if (rc != 0)
		return rc;
	cp->interval_ns = (uint64_t)llround(interval_us * 1000.0);
	cp->dscp = (uint8_t)dscp;
	cp->ecn = (uint8_t)ecn;
	cp->pcp = (uint8_t)prio;
	cp->udp_sport = (uint16_t)sport;
	if (env->check_only)
		return 0;
	/* Two qpmap entries per learned direction (pair and sport rules), two directions. */
	cp->qpmap = roce_qpmap_create((uint32_t)max_qps * 4,
				      (uint64_t)llround(ageing_s * 1e9));
	while ((uint64_t)nb * CNP_WAYS < (uint64_t)max_qps)
		nb <<= 1;
	cp->paces = calloc((size_t)nb * CNP_WAYS, sizeof(*cp->paces));
	cp->bucket_mask = nb - 1;
	if (cp->qpmap == NULL || cp->paces == NULL)
		return emu_err_set(err, "%s.max_qps: cannot allocate tables for %" PRId64 " QPs",
				   env->path, max_qps);
	return 0;
}

static int
cnp_needs(const json_t *cfg, const struct emu_stage_env *env, struct emu_stage_needs *needs,
	  struct emu_err *err)
{
	int64_t max_qps;
	int rc = emu_key_int(cfg, env->path, T, "max_qps", &max_qps, err);

	if (rc != 0)
		return rc;
	/* pacing table (rounded up to a power of two: twice at most) and 4 qpmap entries per QP
	 * (a power of two too), with a generous 64 bytes each */
	needs->mem_bytes = (uint64_t)max_qps * (2 * sizeof(struct cnp_pace) + 2 * 4 * 64);
	snprintf(needs->mem_key, sizeof(needs->mem_key), "max_qps");
	return 0;
}

static void
cnp_free(void *priv)
{
	struct cnp_priv *cp = priv;

	roce_qpmap_free(cp->qpmap);
	free(cp->paces);
	cp->qpmap = NULL;
	cp->paces = NULL;
}

/* Data opcodes a NIC answers with a CNP when CE-marked. */
static inline bool
cnp_is_data(uint8_t opcode)
{
	uint8_t tr = opcode & ROCE_TRANSPORT_MASK, op = opcode & ROCE_OP_MASK;

	if (tr == ROCE_TRANSPORT_UC)
		return op <= ROCE_OP_RDMA_WRITE_ONLY_WITH_IMMEDIATE;
	if (tr != ROCE_TRANSPORT_RC)
		return false;
	return op <= ROCE_OP_RDMA_WRITE_ONLY_WITH_IMMEDIATE ||
	       (op >= ROCE_OP_RDMA_READ_RESPONSE_FIRST && op <= ROCE_OP_RDMA_READ_RESPONSE_ONLY) ||
	       op == ROCE_OP_SEND_LAST_WITH_INVALIDATE || op == ROCE_OP_SEND_ONLY_WITH_INVALIDATE;
}

/*
 * May a CNP go to (ip, qpn) at now_ns? If so, record it as sent. Time running backwards (a new
 * replay) counts as a fresh start. *evicted is set when a live entry had to be reused.
 */
static bool
cnp_pace_allow(struct cnp_priv *cp, const uint8_t *ip, uint32_t qpn, uint64_t now_ns,
	       bool *evicted)
{
	uint32_t sig = emu_ip_qpn_sig(ip, qpn);
	struct cnp_pace *b = &cp->paces[(size_t)(sig & cp->bucket_mask) * CNP_WAYS];
	struct cnp_pace *victim = NULL;
	unsigned int i;

	for (i = 0; i < CNP_WAYS; i++) {
		struct cnp_pace *e = &b[i];

		if (e->sig == sig && e->qpn == qpn && memcmp(e->ip, ip, 16) == 0) {
			e->used_ns = now_ns;
			if (now_ns >= e->last_ns && now_ns - e->last_ns < cp->interval_ns)
				return false;
			e->last_ns = now_ns;
			return true;
		}
		if (victim == NULL || e->sig == 0 ||
		    (victim->sig != 0 && e->used_ns < victim->used_ns))
			victim = e;
	}
	/* A reused entry whose QP was paced less than an interval ago loses its pacing. */
	*evicted = victim->sig != 0 && now_ns >= victim->last_ns &&
		   now_ns - victim->last_ns < cp->interval_ns;
	memcpy(victim->ip, ip, 16);
	victim->qpn = qpn;
	victim->sig = sig;
	victim->last_ns = now_ns;
	victim->used_ns = now_ns;
	return true;
}

/* Build the CNP answering data packet @p m into a new mbuf; NULL when the pool is empty. */
static struct rte_mbuf *
cnp_make(const struct cnp_priv *cp, struct rte_mbuf *m, const struct roce_pkt *data,
	 uint32_t sender_qpn, struct emu_burst_ctx *ctx)
{
	struct roce_cnp_params par;
	struct emu_pkt_meta *meta;
	uint8_t buf[CNP_FRAME_MAX];
	struct rte_mbuf *c;
	char *dst;
	int len;

	par = roce_cnp_params_for(rte_pktmbuf_mtod(m, const uint8_t *), data, sender_qpn);
	par.dscp = cp->dscp;
	par.ecn = cp->ecn;
	par.pcp = cp->pcp;
	par.udp_sport = cp->udp_sport;
	len = roce_build_cnp(buf, sizeof(buf), &par);
	if (len <= 0)
		return NULL;
	c = rte_pktmbuf_alloc(ctx->emit->pool);
	if (c == NULL)
		return NULL;
	dst = rte_pktmbuf_append(c, (uint16_t)len);
	if (dst == NULL) {
		rte_pktmbuf_free(c);
		return NULL;
	}
	memcpy(dst, buf, (size_t)len);
	meta = emu_meta(c);
	memset(meta, 0, sizeof(*meta));
	roce_parse(buf, (uint32_t)len, ROCE_UDP_PORT, &meta->pkt);
	meta->ts_ns = ctx->now_ns;
	meta->in_port = EMU_PORT_SELF;
	meta->prio = meta->pkt.pcp;
	meta->flags = EMU_META_PARSED | EMU_META_CREATED;
	return c;
}

static uint16_t
cnp_process(void *priv, struct rte_mbuf **pkts, uint16_t n, struct emu_burst_ctx *ctx)
{
	struct cnp_priv *cp = priv;
	uint64_t ctr[CNP_CTR_MAX] = { 0 };
	uint16_t i, kept = 0;
	unsigned int k;

	for (i = 0; i < n; i++) {
		struct rte_mbuf *m = pkts[i];
		struct emu_pkt_meta *meta = emu_meta(m);
		const struct roce_pkt *p = &meta->pkt;
		struct rte_mbuf *c;
		uint32_t sender;
		bool evicted = false;

		pkts[kept++] = m;
		/* Frames stages made (our own CNPs, mirror copies) teach nothing and get no CNP. */
		if (!(meta->flags & EMU_META_PARSED) || meta->in_port == EMU_PORT_SELF ||
		    p->cls != ROCE_CLASS_ROCEV2 || p->reason != ROCE_REASON_OK)
			continue;
		roce_qpmap_learn(cp->qpmap, p, ctx->now_ns);
		if (p->opcode == ROCE_OPCODE_CNP) {
			if (cp->drop_nic_cnps) {
				kept--;
				emu_drop(ctx->drop, m, ctx->reason_base + CNP_CTR_DROP_NIC_CNP,
					 &ctr[CNP_CTR_DROP_NIC_CNP]);
			}
			continue;
		}
		if (p->ecn != 3 || !cnp_is_data(p->opcode))
			continue;
		if (roce_qpmap_lookup_sender(cp->qpmap, p, ctx->now_ns, &sender) != 0) {
			ctr[CNP_CTR_UNKNOWN_QP]++;
			continue;
		}
		if (!cnp_pace_allow(cp, p->src_ip, sender, ctx->now_ns, &evicted)) {
			ctr[CNP_CTR_SUPPRESSED_PACING]++;
			continue;
		}
		if (evicted)
			ctr[CNP_CTR_PACING_EVICTED]++;
		c = cnp_make(cp, m, p, sender, ctx);
		if (c == NULL) {
			ctr[CNP_CTR_NOMBUF]++;
			continue;
		}
		if (!emu_emit_push(ctx->emit, c, meta->in_port)) {
			rte_pktmbuf_free(c);
			ctr[CNP_CTR_EMIT_FULL]++;
			continue;
		}
		ctr[CNP_CTR_GENERATED]++;
	}
	for (k = 0; k < CNP_CTR_MAX; k++)
		ctx->ctr[k] += ctr[k];
	return kept;
}

static void
cnp_summary(const void *priv, char *buf, size_t len)
{
	const struct cnp_priv *cp = priv;
	const uint64_t *q;

	if (cp->qpmap == NULL) {
		buf[0] = '\0';
		return;
	}
	q = roce_qpmap_counters(cp->qpmap);
	snprintf(buf, len,
		 "QP pairing: %" PRIu64 " learned, %" PRIu64 " lookups, %" PRIu64 " by UDP port, %"
		 PRIu64 " by address pair, %" PRIu64 " ambiguous, %" PRIu64 " missed",
		 q[ROCE_QPMAP_CTR_LEARNED], q[ROCE_QPMAP_CTR_LOOKUPS], q[ROCE_QPMAP_CTR_HIT_SPORT],
		 q[ROCE_QPMAP_CTR_HIT_PAIR], q[ROCE_QPMAP_CTR_AMBIGUOUS], q[ROCE_QPMAP_CTR_MISS]);
}

const struct emu_stage_ops emu_stage_cnp = {
	.type = "cnp",
	.priv_size = sizeof(struct cnp_priv),
	.ctr_names = cnp_ctr_names,
	.n_ctr = CNP_CTR_MAX,
	.keys = cnp_keys,
	.key_table = &cnp_key_table,
	.init = cnp_init,
	.needs = cnp_needs,
	.process = cnp_process,
	.free = cnp_free,
	.summary = cnp_summary,
};
