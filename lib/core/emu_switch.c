/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_branch_prediction.h>
#include <rte_malloc.h>

#include "lib/proto/roce_build.h"
#include "lib/proto/roce_mbuf.h"
#include "emu_json.h"
#include "emu_profile.h"
#include "emu_switch.h"

#define EMU_EMIT_CAP (EMU_BURST * 4)
#define EMU_TM_RNG_STREAM 0x544dULL /* "TM": stages draw theirs from their names (emu_rng_stream_of) */
#define EMU_ETHERTYPE_MAC_CONTROL 0x8808 /* DPDK 22.11 has no constant for it */
#define EMU_INCAST_CATCHUP 1024 /* incast frames generated per runner call at most */
#define EMU_INCAST_HDR_BYTES 58 /* Ethernet 14 + IPv4 20 + UDP 8 + BTH 12 + ICRC 4 */

/* Counters the runner itself keeps (drop_* count in conservation). */
#define EMU_RUN_FOREACH_CTR(_) \
	_(CREATED, "created") \
	_(FLOOD_COPIES, "flood_copies") \
	_(DROP_NO_ROUTE, "drop_no_route") \
	_(DROP_BAD_PORT, "drop_bad_port") \
	_(DROP_FLOOD_NOMBUF, "drop_flood_nombuf") \
	_(DROP_DISCARDED_AT_EXIT, "drop_discarded_at_exit") \
	_(PROFILE_CHANGES, "profile_changes") \
	_(CONSUMED_MAC_CONTROL, "consumed_mac_control") \
	_(PFC_CREATED, "pfc_created") \
	_(PFC_NOT_SENT_NOMBUF, "pfc_not_sent_nombuf")

enum emu_run_ctr {
#define EMU_RUN_CTR_ENUM(e, s) EMU_RUN_CTR_##e,
	EMU_RUN_FOREACH_CTR(EMU_RUN_CTR_ENUM)
#undef EMU_RUN_CTR_ENUM
	EMU_RUN_CTR_MAX
};

static const char *const emu_run_ctr_names[EMU_RUN_CTR_MAX] = {
#define EMU_RUN_CTR_NAME(e, s) s,
	EMU_RUN_FOREACH_CTR(EMU_RUN_CTR_NAME)
#undef EMU_RUN_CTR_NAME
};

struct emu_stage_inst {
	const struct emu_stage_ops *ops;
	void *priv;
	char name[64];
	bool egress;
	bool initialised;
	uint64_t *ctr;
	uint32_t reason_base; /* drop reason id of counter 0 */
	struct emu_rng rng;
	uint64_t in_pkts, out_pkts;
};

struct emu_tx_stage {
	struct rte_mbuf *pkts[EMU_TX_STAGE_PKTS];
	uint32_t lens[EMU_TX_STAGE_PKTS]; /* read before TX: the driver may free on send */
	uint16_t n;
};

/* One incast source: its schedule, its filler frame and its counters. */
struct emu_incast_src {
	struct emu_incast_sched s;
	uint8_t *tmpl;        /* the frame every virtual sender sends (cfg.frame_bytes) */
	struct roce_pkt pkt;  /* its parse result, copied into each frame's meta */
	uint64_t ctr[EMU_INCAST_CTR_MAX];
};

struct emu_switch {
	struct emu_pipeline *pl;
	struct rte_mempool *pool;
	unsigned int n_ports;
	unsigned int n_stages;
	unsigned int n_ingress; /* stages[0 .. n_ingress) are ingress, the rest egress */
	struct emu_stage_inst stages[EMU_MAX_STAGES];
	struct emu_tm *tm;
	struct emu_rng tm_rng; /* ECN marking decisions */
	struct emu_port_stats port_stats[EMU_MAX_PORTS];
	struct emu_tx_stage tx[EMU_MAX_PORTS];
	uint64_t ctr[EMU_RUN_CTR_MAX];
	struct rte_mbuf *emit_pkts[EMU_EMIT_CAP];
	uint16_t emit_ports[EMU_EMIT_CAP];
	struct emu_emit emit;
	struct emu_profile *prof;
	uint64_t prof_t0_ns;
	struct emu_profile *pending_prof; /* offered by another lcore, taken by the owner */
	struct emu_profile *retired_prof; /* the one it replaced, for the offerer to free */
	uint64_t last_now_ns;
	struct emu_port_stats last_interval[EMU_MAX_PORTS];
	double last_interval_s;
	unsigned int n_incast;
	struct emu_incast_src incast[EMU_MAX_INCAST];
	/* the one drop path: reason ids are ranges of counters (stages, TM ports, incast, runner) */
	struct emu_dropper dropper;
	uint32_t tm_reason_base, incast_reason_base, run_reason_base, n_reasons;
	/* counter snapshots for other threads (emu_switch_snap_request()) */
	pthread_mutex_t snap_mu;
	struct emu_snap *snap;
	bool snap_req;
	uint64_t snap_seq;
};

/* A drop by the runner itself, through the drop path. */
static inline void
emu_switch_drop(struct emu_switch *sw, struct rte_mbuf *m, unsigned int c)
{
	emu_drop(&sw->dropper, m, sw->run_reason_base + c, &sw->ctr[c]);
}

static void
emu_switch_drop_bulk(struct emu_switch *sw, struct rte_mbuf **m, unsigned int n, unsigned int c)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		emu_switch_drop(sw, m[i], c);
}

int
emu_stage_env_port(const struct emu_stage_env *env, const char *name)
{
	unsigned int i;

	for (i = 0; i < env->n_ports; i++)
		if (strcmp(env->port_names[i], name) == 0)
			return (int)i;
	return -1;
}

static size_t emu_switch_env_annotate(const void *sw, struct rte_mbuf *m, int drop_reason,
				      bool all, char *buf, size_t len);
static int emu_switch_env_add_drop_hook(void *sw,
					void (*fn)(void *arg, struct rte_mbuf *m, uint32_t reason),
					void *arg);

static int
emu_switch_add_stages(struct emu_switch *sw, const char *list_key, bool egress, uint64_t seed,
		      struct emu_err *err)
{
	const json_t *list = json_object_get(sw->pl->root, list_key);
	char path[EMU_JSON_PATH_LEN];
	const char *allowed[40];
	const char *type, *name;
	const json_t *o;
	size_t idx;
	unsigned int i, k;
	int rc;

	if (list == NULL)
		return 0;
	json_array_foreach(list, idx, o) {
		struct emu_stage_inst *st;
		struct emu_stage_env env;

		emu_json_path_idx(path, sizeof(path), list_key, idx);
		if (sw->n_stages >= EMU_MAX_STAGES)
			return emu_err_set(err, "%s: too many stages (at most %d in all)", path,
					   EMU_MAX_STAGES);
		type = json_string_value(json_object_get(o, "type"));
		st = &sw->stages[sw->n_stages];
		st->ops = emu_stage_find(type);
		st->egress = egress;
		k = 0;
		allowed[k++] = "type";
		allowed[k++] = "name";
		for (i = 0; st->ops->keys != NULL && st->ops->keys[i] != NULL && k < 39; i++)
			allowed[k++] = st->ops->keys[i];
		allowed[k] = NULL;
		rc = emu_json_check_keys(o, path, allowed, err);
		if (rc == 0)
			rc = emu_json_get_str(o, path, "name", false, type, &name, err);
		if (rc != 0)
			return rc;
		if (strlen(name) >= sizeof(st->name))
			return emu_err_set(err, "%s.name: longer than %zu characters", path,
					   sizeof(st->name) - 1);
		for (i = 0; i < sw->n_stages; i++)
			if (strcmp(sw->stages[i].name, name) == 0)
				return emu_err_set(err,
						   "%s.name: stage name \"%s\" is already used; give each "
						   "stage of the same type its own \"name\"",
						   path, name);
		snprintf(st->name, sizeof(st->name), "%s", name);
		st->priv = rte_zmalloc("emu_stage", st->ops->priv_size ? st->ops->priv_size : 8,
				       RTE_CACHE_LINE_SIZE);
		st->ctr = rte_zmalloc("emu_stage_ctr",
				      sizeof(uint64_t) * (st->ops->n_ctr ? st->ops->n_ctr : 1),
				      RTE_CACHE_LINE_SIZE);
		if (st->priv == NULL || st->ctr == NULL)
			return emu_err_setrc(err, -ENOMEM, "%s: out of memory", path);
		emu_rng_seed(&st->rng, seed, emu_rng_stream_of(st->name));
		st->reason_base = sw->n_reasons;
		sw->n_reasons += st->ops->n_ctr;
		sw->n_stages++;
		env.path = path;
		env.n_ports = sw->n_ports;
		env.port_names = sw->pl->port_names;
		env.stage_index = sw->n_stages - 1;
		env.egress = egress;
		env.out_port_known = egress;
		for (i = 0; i + 1 < sw->n_stages && !egress; i++)
			if (strcmp(sw->stages[i].ops->type, "forward") == 0)
				env.out_port_known = true;
		env.check_only = sw->pl->check_only;
		env.max_frame_bytes = sw->pl->max_mtu + 14 + 8;
		env.annotate = emu_switch_env_annotate;
		env.annotate_arg = sw;
		env.add_drop_hook = emu_switch_env_add_drop_hook;
		env.sw = sw;
		rc = st->ops->init(st->priv, o, &env, err);
		if (rc != 0)
			return rc;
		st->initialised = true;
	}
	return 0;
}

static void emu_switch_port_mac(uint16_t port, uint8_t mac[6]);
static bool emu_switch_drain(struct emu_switch *sw, uint16_t port, uint64_t now_ns);

/* DSCP the filler frames carry for priority @p prio (the default trust-DSCP map's inverse). */
static uint8_t
emu_incast_dscp(uint8_t prio)
{
	if (prio == 3)
		return 26;
	if (prio == 6)
		return 48;
	return (uint8_t)(prio << 3);
}

/* Build each source's filler frame once: an RC RDMA WRITE MIDDLE, IPv4, ECT(0), to the
 * source's port, padded with zero trailer bytes to exactly frame_bytes. */
static int
emu_switch_incast_init(struct emu_switch *sw, struct emu_err *err)
{
	unsigned int i;

	for (i = 0; i < sw->pl->n_incast; i++) {
		struct emu_incast_src *src = &sw->incast[i];
		const struct emu_incast_cfg *c = &sw->pl->incast[i];
		struct roce_hdr_params hp = roce_hdr_params_default();
		uint32_t payload;
		int len;

		src->s.cfg = *c;
		src->tmpl = rte_zmalloc("emu_incast", c->frame_bytes, RTE_CACHE_LINE_SIZE);
		if (src->tmpl == NULL)
			return emu_err_setrc(err, -ENOMEM, "incast[%u]: out of memory", i);
		sw->n_incast = i + 1;
		emu_switch_port_mac(c->port, hp.dst_mac);
		memcpy(hp.src_mac, (const uint8_t[6]){ 0x02, 0x69, 0x6e, 0x63, 0x00, (uint8_t)i },
		       6);
		hp.dscp = emu_incast_dscp(c->prio);
		hp.ecn = 2;
		memcpy(hp.src_ip, (const uint8_t[4]){ 10, 255, (uint8_t)i, 1 }, 4);
		memcpy(hp.dst_ip, (const uint8_t[4]){ 10, 255, 255, (uint8_t)c->port }, 4);
		hp.opcode = ROCE_OP_RDMA_WRITE_MIDDLE;
		hp.dest_qp = 0xc00000 + i;
		payload = (c->frame_bytes - EMU_INCAST_HDR_BYTES) & ~3u;
		len = roce_build(src->tmpl, c->frame_bytes, &hp, NULL, payload);
		if (len < 0 || (uint32_t)len > c->frame_bytes)
			return emu_err_set(err, "incast[%u]: cannot build a %u-byte frame", i,
					   c->frame_bytes);
		roce_parse(src->tmpl, (uint32_t)len, 4791, &src->pkt);
		emu_incast_sched_start(&src->s, 0);
	}
	return 0;
}

struct emu_switch *
emu_switch_create(struct emu_pipeline *pl, struct rte_mempool *pool, uint64_t seed,
		  struct emu_err *err)
{
	struct emu_switch *sw;

	sw = rte_zmalloc("emu_switch", sizeof(*sw), RTE_CACHE_LINE_SIZE);
	if (sw == NULL) {
		emu_err_setrc(err, -ENOMEM, "out of memory allocating the switch");
		return NULL;
	}
	sw->pl = pl;
	sw->pool = pool;
	pthread_mutex_init(&sw->snap_mu, NULL);
	sw->n_ports = pl->n_ports;
	sw->emit.pkts = sw->emit_pkts;
	sw->emit.ports = sw->emit_ports;
	sw->emit.cap = EMU_EMIT_CAP;
	sw->emit.pool = pool;
	if (emu_switch_add_stages(sw, "ingress", false, seed, err) != 0)
		goto fail;
	sw->n_ingress = sw->n_stages;
	if (emu_switch_add_stages(sw, "egress", true, seed, err) != 0)
		goto fail;
	sw->tm = emu_tm_create(&pl->tm, err);
	if (sw->tm == NULL)
		goto fail;
	emu_rng_seed(&sw->tm_rng, seed, EMU_TM_RNG_STREAM);
	sw->tm_reason_base = sw->n_reasons;
	sw->n_reasons += sw->n_ports * EMU_TM_CTR_MAX;
	emu_tm_set_dropper(sw->tm, &sw->dropper, sw->tm_reason_base);
	sw->incast_reason_base = sw->n_reasons;
	sw->n_reasons += EMU_MAX_INCAST * EMU_INCAST_CTR_MAX;
	sw->run_reason_base = sw->n_reasons;
	sw->n_reasons += EMU_RUN_CTR_MAX;
	if (emu_switch_incast_init(sw, err) != 0)
		goto fail;
	return sw;
fail:
	emu_switch_free(sw);
	return NULL;
}

void
emu_switch_free(struct emu_switch *sw)
{
	unsigned int i;

	if (sw == NULL)
		return;
	free(sw->snap);
	for (i = 0; i < EMU_MAX_PORTS; i++)
		rte_pktmbuf_free_bulk(sw->tx[i].pkts, sw->tx[i].n);
	emu_tm_free(sw->tm);
	for (i = 0; i < sw->n_incast; i++)
		rte_free(sw->incast[i].tmpl);
	for (i = 0; i < sw->n_stages; i++) {
		struct emu_stage_inst *st = &sw->stages[i];

		if (st->priv != NULL && st->ops->free != NULL)
			st->ops->free(st->priv);
		rte_free(st->priv);
		rte_free(st->ctr);
	}
	rte_free(sw);
}

void
emu_switch_offer_profile(struct emu_switch *sw, struct emu_profile *prof)
{
	__atomic_store_n(&sw->pending_prof, prof, __ATOMIC_RELEASE);
}

bool
emu_switch_profile_taken(const struct emu_switch *sw, struct emu_profile **retired)
{
	if (__atomic_load_n(&sw->pending_prof, __ATOMIC_ACQUIRE) != NULL)
		return false;
	*retired = ((struct emu_switch *)(uintptr_t)sw)->retired_prof;
	((struct emu_switch *)(uintptr_t)sw)->retired_prof = NULL;
	return true;
}

void
emu_switch_set_profile(struct emu_switch *sw, struct emu_profile *prof, uint64_t t0_ns)
{
	unsigned int i;

	sw->prof = prof;
	sw->prof_t0_ns = t0_ns;
	/* the pipeline's enabled sources start at time zero of the run */
	for (i = 0; i < sw->n_incast; i++)
		emu_incast_sched_start(&sw->incast[i].s, t0_ns);
}

/*
 * Generate every incast frame whose arrival time is <= @p until_ns, in time order across
 * sources, and enqueue each at its own arrival time. Returns false when the per-call bound
 * stopped it early (the next event time is then in the past and the caller comes back).
 */
static bool
emu_switch_incast_gen(struct emu_switch *sw, uint64_t until_ns)
{
	uint64_t gen[EMU_MAX_INCAST] = { 0 }, bytes[EMU_MAX_INCAST] = { 0 };
	uint64_t dropped[EMU_MAX_INCAST] = { 0 }, nombuf[EMU_MAX_INCAST] = { 0 };
	unsigned int budget = EMU_INCAST_CATCHUP, i, best;
	bool done = true;

	if (sw->n_incast == 0)
		return true;
	for (;;) {
		struct emu_incast_src *src;
		struct emu_pkt_meta *meta;
		struct rte_mbuf *m;
		uint32_t len;
		uint64_t t;
		char *buf;

		best = 0;
		for (i = 1; i < sw->n_incast; i++)
			if (sw->incast[i].s.next_ns < sw->incast[best].s.next_ns)
				best = i;
		src = &sw->incast[best];
		t = src->s.next_ns;
		if (t > until_ns)
			break;
		if (budget-- == 0) {
			done = false;
			break;
		}
		/*
		 * Catching up after the runner was late (live mode: the lcore was descheduled or
		 * the loop slow), frames are generated at their past times; the TM admits against
		 * its queue as last dequeued, so first let the port's queue drain to t, or a
		 * backlog of frames that would have left long ago fills the buffer and drops.
		 * The replay clock is never late (it stops at every frame's time): there this
		 * never runs.
		 */
		if (t < until_ns && !emu_switch_drain(sw, src->s.cfg.port, t)) {
			done = false;	/* TX staging full: the rest after the next TX */
			break;
		}
		emu_incast_sched_advance(&src->s);
		len = src->s.cfg.frame_bytes;
		m = rte_pktmbuf_alloc(sw->pool);
		buf = m != NULL ? rte_pktmbuf_append(m, (uint16_t)len) : NULL;
		if (buf == NULL) {
			rte_pktmbuf_free(m);
			nombuf[best] += 1;
			continue;
		}
		rte_memcpy(buf, src->tmpl, len);
		meta = emu_meta(m);
		meta->ts_ns = t;
		meta->in_port = EMU_PORT_SELF;
		meta->out_port = src->s.cfg.port;
		meta->prio = src->s.cfg.prio;
		meta->flags = EMU_META_PARSED | EMU_META_CREATED | EMU_META_VIRTUAL;
		memset(&meta->trace, 0, sizeof(meta->trace));
		meta->trace.t_in_ns = t;
		meta->trace.created_by = EMU_TRACE_BY_INCAST;
		meta->reserved = (uint16_t)best;
		meta->pkt = src->pkt;
		gen[best] += 1;
		bytes[best] += len;
		if (!emu_tm_enqueue(sw->tm, src->s.cfg.port, m, t, &sw->tm_rng))
			dropped[best] += 1;
	}
	for (i = 0; i < sw->n_incast; i++) {
		sw->incast[i].ctr[EMU_INCAST_CTR_GENERATED] += gen[i];
		sw->incast[i].ctr[EMU_INCAST_CTR_BYTES] += bytes[i];
		sw->incast[i].ctr[EMU_INCAST_CTR_TM_DROPPED] += dropped[i];
		sw->incast[i].ctr[EMU_INCAST_CTR_NOMBUF] += nombuf[i];
	}
	return done;
}

/*
 * Apply the profile's due phases and generate the incast frames due by @p now_ns, each
 * phase at its exact time: frames before a phase are generated under the old settings.
 */
static void
emu_switch_profile_tick(struct emu_switch *sw, uint64_t now_ns)
{
	struct emu_profile *np = __atomic_load_n(&sw->pending_prof, __ATOMIC_ACQUIRE);
	uint64_t rel, t;

	if (unlikely(np != NULL)) {
		/* A reloaded profile starts now; the old one goes back to whoever offered it. */
		sw->retired_prof = sw->prof;
		sw->prof = np;
		sw->prof_t0_ns = now_ns;
		__atomic_store_n(&sw->pending_prof, NULL, __ATOMIC_RELEASE);
	}
	while (sw->prof != NULL && now_ns >= sw->prof_t0_ns) {
		rel = emu_profile_next_ns(sw->prof);
		if (rel == UINT64_MAX)
			break;
		t = sw->prof_t0_ns + rel;
		if (t > now_ns)
			break;
		if (t > 0 && !emu_switch_incast_gen(sw, t - 1))
			return;
		sw->ctr[EMU_RUN_CTR_PROFILE_CHANGES] += emu_profile_apply_due(sw->prof, sw, rel, t);
	}
	emu_switch_incast_gen(sw, now_ns);
}

/*
 * Take the virtual frames out of a burst the TM released (compacting the rest in place):
 * absorbed ones are counted and freed, sink ones are collected into @p sink (the caller
 * stages them on their sink port). Returns the real packets left.
 */
static uint16_t
emu_switch_incast_release(struct emu_switch *sw, struct rte_mbuf **pkts, uint16_t n,
			  struct rte_mbuf **sink, uint16_t *n_sink)
{
	uint64_t absorbed[EMU_MAX_INCAST] = { 0 }, marked[EMU_MAX_INCAST] = { 0 };
	uint16_t i, keep = 0;
	unsigned int k;

	for (i = 0; i < n; i++) {
		struct rte_mbuf *m = pkts[i];
		struct emu_pkt_meta *meta = emu_meta(m);
		const uint8_t *ip;
		unsigned int idx;

		if (!(meta->flags & EMU_META_VIRTUAL)) {
			pkts[keep++] = m;
			continue;
		}
		idx = meta->reserved;
		ip = rte_pktmbuf_mtod_offset(m, const uint8_t *, meta->pkt.l3_off);
		if ((ip[1] & 3) == 3)
			marked[idx] += 1;
		if (sw->incast[idx].s.cfg.sink_port != EMU_PORT_NONE) {
			sink[(*n_sink)++] = m;
		} else {
			absorbed[idx] += 1;
			rte_pktmbuf_free(m);
		}
	}
	for (k = 0; k < sw->n_incast; k++) {
		sw->incast[k].ctr[EMU_INCAST_CTR_ABSORBED] += absorbed[k];
		sw->incast[k].ctr[EMU_INCAST_CTR_ECN_MARKED] += marked[k];
	}
	return keep;
}

/* Stage released sink frames on their sink ports' TX buffers, as real frames. */
static void
emu_switch_incast_sink(struct emu_switch *sw, struct rte_mbuf **sink, uint16_t n_sink)
{
	uint16_t i;

	for (i = 0; i < n_sink; i++) {
		struct emu_incast_src *src = &sw->incast[emu_meta(sink[i])->reserved];
		struct emu_tx_stage *tx = &sw->tx[src->s.cfg.sink_port];

		if (tx->n >= EMU_TX_STAGE_PKTS) {
			emu_drop(&sw->dropper, sink[i],
				 sw->incast_reason_base +
					 (uint32_t)(src - sw->incast) * EMU_INCAST_CTR_MAX +
					 EMU_INCAST_CTR_DROP_SINK_FULL,
				 &src->ctr[EMU_INCAST_CTR_DROP_SINK_FULL]);
			continue;
		}
		emu_meta(sink[i])->out_port = src->s.cfg.sink_port;
		tx->lens[tx->n] = emu_wire_len(sink[i]);
		tx->pkts[tx->n++] = sink[i];
		src->ctr[EMU_INCAST_CTR_SINK_TX] += 1;
	}
}

static uint16_t
emu_switch_run_stages(struct emu_switch *sw, unsigned int first, unsigned int last,
		      struct rte_mbuf **pkts, uint16_t n, uint64_t now_ns)
{
	struct emu_burst_ctx ctx;
	unsigned int i;

	ctx.now_ns = now_ns;
	ctx.emit = &sw->emit;
	for (i = first; i < last && n > 0; i++) {
		struct emu_stage_inst *st = &sw->stages[i];

		ctx.rng = &st->rng;
		ctx.ctr = st->ctr;
		ctx.drop = &sw->dropper;
		ctx.reason_base = st->reason_base;
		uint16_t made = sw->emit.n, k;

		st->in_pkts += n;
		n = st->ops->process(st->priv, pkts, n, &ctx);
		st->out_pkts += n;
		for (k = made; k < sw->emit.n; k++) {
			struct emu_trace *tr = &emu_meta(sw->emit.pkts[k])->trace;

			tr->created_by = (uint8_t)(i + 1);
			tr->t_in_ns = now_ns;
		}
	}
	return n;
}

static void
emu_switch_enqueue(struct emu_switch *sw, struct rte_mbuf *m, uint64_t now_ns)
{
	struct emu_pkt_meta *meta = emu_meta(m);
	uint16_t out = meta->out_port;
	unsigned int p;

	if (out < sw->n_ports) {
		emu_tm_enqueue(sw->tm, out, m, now_ns, &sw->tm_rng);
		return;
	}
	if (out == EMU_PORT_NONE) {
		emu_switch_drop(sw, m, EMU_RUN_CTR_DROP_NO_ROUTE);
		return;
	}
	if (out != EMU_PORT_FLOOD) {
		emu_switch_drop(sw, m, EMU_RUN_CTR_DROP_BAD_PORT);
		return;
	}
	/* Flood: a full copy per extra port (later stages may rewrite each one). */
	{
		uint16_t targets[EMU_MAX_PORTS];
		unsigned int nt = 0;

		for (p = 0; p < sw->n_ports; p++)
			if (p != meta->in_port)
				targets[nt++] = (uint16_t)p;
		if (nt == 0) {
			emu_switch_drop(sw, m, EMU_RUN_CTR_DROP_NO_ROUTE);
			return;
		}
		for (p = 1; p < nt; p++) {
			struct rte_mbuf *c = rte_pktmbuf_copy(m, sw->pool, 0, UINT32_MAX);

			sw->ctr[EMU_RUN_CTR_FLOOD_COPIES] += 1;
			if (c == NULL) {
				sw->ctr[EMU_RUN_CTR_DROP_FLOOD_NOMBUF] += 1;
				continue;
			}
			*emu_meta(c) = *meta;
			emu_meta(c)->out_port = targets[p];
			emu_meta(c)->flags |= EMU_META_CREATED;
			emu_meta(c)->trace.created_by = EMU_TRACE_BY_SWITCH;
			emu_tm_enqueue(sw->tm, targets[p], c, now_ns, &sw->tm_rng);
		}
		meta->out_port = targets[0];
		emu_tm_enqueue(sw->tm, targets[0], m, now_ns, &sw->tm_rng);
	}
}

/* Frames created by stages during the last stage run go to the TM of their port. */
static void
emu_switch_flush_emit(struct emu_switch *sw, uint64_t now_ns)
{
	uint16_t i;

	for (i = 0; i < sw->emit.n; i++) {
		struct rte_mbuf *m = sw->emit.pkts[i];
		struct emu_pkt_meta *meta = emu_meta(m);

		sw->ctr[EMU_RUN_CTR_CREATED] += 1;
		meta->ts_ns = now_ns;
		meta->in_port = EMU_PORT_SELF;
		meta->out_port = sw->emit.ports[i];
		meta->flags = (uint8_t)((meta->flags & ~EMU_META_MACCTL) | EMU_META_CREATED);
		emu_switch_enqueue(sw, m, now_ns);
	}
	sw->emit.n = 0;
}

/* Source MAC of the PFC frames port @p port sends: 02:72:6f:63:65:<port> ("roce"). */
static void
emu_switch_port_mac(uint16_t port, uint8_t mac[6])
{
	static const uint8_t base[5] = { 0x02, 0x72, 0x6f, 0x63, 0x65 };

	memcpy(mac, base, sizeof(base));
	mac[5] = (uint8_t)port;
}

/* Build the PFC frames the TM asks for and queue them on their (ingress) ports' control
 * queues, which the pause state does not hold back. */
static void
emu_switch_send_pfc(struct emu_switch *sw, uint64_t now_ns)
{
	struct emu_tm_pfc_frame frames[2 * EMU_MAX_PORTS];
	unsigned int i, n;

	n = emu_tm_pfc_collect(sw->tm, now_ns, frames, RTE_DIM(frames));
	for (i = 0; i < n; i++) {
		struct rte_mbuf *m = rte_pktmbuf_alloc(sw->pool);
		struct emu_pkt_meta *meta;
		uint8_t mac[6];
		char *buf;
		int len;

		buf = m != NULL ? rte_pktmbuf_append(m, EMU_TM_MIN_FRAME_BYTES) : NULL;
		if (buf == NULL) {
			rte_pktmbuf_free(m);
			sw->ctr[EMU_RUN_CTR_PFC_NOT_SENT_NOMBUF] += 1;
			continue;
		}
		emu_switch_port_mac(frames[i].port, mac);
		if (frames[i].pause)
			len = roce_build_pause((uint8_t *)buf, EMU_TM_MIN_FRAME_BYTES, mac,
					       frames[i].quanta[0]);
		else
			len = roce_build_pfc((uint8_t *)buf, EMU_TM_MIN_FRAME_BYTES, mac,
					     frames[i].vector, frames[i].quanta);
		RTE_VERIFY(len == EMU_TM_MIN_FRAME_BYTES);
		meta = emu_meta(m);
		memset(meta, 0, sizeof(*meta));
		meta->ts_ns = now_ns;
		meta->in_port = EMU_PORT_SELF;
		meta->out_port = frames[i].port;
		meta->flags = EMU_META_CREATED | EMU_META_MACCTL;
		meta->trace.t_in_ns = now_ns;
		meta->trace.created_by = EMU_TRACE_BY_SWITCH;
		sw->ctr[EMU_RUN_CTR_CREATED] += 1;
		sw->ctr[EMU_RUN_CTR_PFC_CREATED] += 1;
		emu_tm_enqueue(sw->tm, frames[i].port, m, now_ns, &sw->tm_rng);
	}
}

/* MAC control frames (PAUSE, PFC) that arrived on @p port are honoured and consumed, never
 * forwarded; returns true when @p m was one. */
static bool
emu_switch_mac_control(struct emu_switch *sw, uint16_t port, struct rte_mbuf *m, uint64_t now_ns)
{
	struct emu_pkt_meta *meta = emu_meta(m);
	const struct roce_pkt *pkt = &meta->pkt;

	if (!(meta->flags & EMU_META_PARSED)) {
		const uint8_t *eth = rte_pktmbuf_mtod(m, const uint8_t *);

		/* MAC control frames are never tagged: EtherType at offset 12 */
		if (m->data_len < 14 || ((eth[12] << 8) | eth[13]) != EMU_ETHERTYPE_MAC_CONTROL)
			return false;
		roce_parse_mbuf(m, 4791, &meta->pkt);
		meta->flags |= EMU_META_PARSED;
	}
	if (pkt->cls != ROCE_CLASS_MAC_CONTROL)
		return false;
	emu_tm_pause_rx(sw->tm, port, now_ns, pkt->macctl_opcode, pkt->pfc_enable,
			pkt->pause_quanta, &sw->tm_rng);
	sw->ctr[EMU_RUN_CTR_CONSUMED_MAC_CONTROL] += 1;
	rte_pktmbuf_free(m);
	return true;
}

/* Ingress stages that hold packets hand over those due; they continue after that stage. */
/* Room left in the fullest TX staging (what an egress release may hand over at most). */
static uint16_t
emu_switch_tx_room(const struct emu_switch *sw)
{
	uint16_t room = EMU_BURST;
	unsigned int p;

	for (p = 0; p < sw->n_ports; p++)
		room = RTE_MIN(room, (uint16_t)(EMU_TX_STAGE_PKTS - sw->tx[p].n));
	return room;
}

/* A packet an egress stage released: into its port's TX staging (emu_switch_tx_room() said
 * there is room), or dropped as having no port. */
static void
emu_switch_tx_stage(struct emu_switch *sw, struct rte_mbuf *m)
{
	uint16_t port = emu_meta(m)->out_port;
	struct emu_tx_stage *tx;

	if (port >= sw->n_ports) {
		emu_switch_drop(sw, m, EMU_RUN_CTR_DROP_BAD_PORT);
		return;
	}
	tx = &sw->tx[port];
	tx->lens[tx->n] = emu_wire_len(m);
	tx->pkts[tx->n++] = m;
}

static void
emu_switch_release_held(struct emu_switch *sw, uint64_t now_ns)
{
	struct rte_mbuf *burst[EMU_BURST];
	struct emu_burst_ctx ctx;
	unsigned int i;
	uint16_t n, k;

	for (i = 0; i < sw->n_stages; i++) {
		struct emu_stage_inst *st = &sw->stages[i];
		bool egress = i >= sw->n_ingress;
		uint16_t cap = EMU_BURST;

		if (st->ops->release == NULL)
			continue;
		ctx.now_ns = now_ns;
		ctx.emit = &sw->emit;
		ctx.rng = &st->rng;
		ctx.ctr = st->ctr;
		ctx.drop = &sw->dropper;
		ctx.reason_base = st->reason_base;
		/* Egress: released packets go through the egress stages after this one into their
		 * port's TX staging, leaving now; take no more than every staging has room for. */
		if (egress)
			cap = emu_switch_tx_room(sw);
		while (cap > 0 && (n = st->ops->release(st->priv, burst, cap, &ctx)) > 0) {
			st->out_pkts += n;
			if (!egress) {
				n = emu_switch_run_stages(sw, i + 1, sw->n_ingress, burst, n, now_ns);
				for (k = 0; k < n; k++)
					emu_switch_enqueue(sw, burst[k], now_ns);
			} else {
				for (k = 0; k < n; k++)
					emu_meta(burst[k])->ts_ns = now_ns; /* its departure */
				n = emu_switch_run_stages(sw, i + 1, sw->n_stages, burst, n, now_ns);
				for (k = 0; k < n; k++)
					emu_switch_tx_stage(sw, burst[k]);
				cap = emu_switch_tx_room(sw);
			}
			emu_switch_flush_emit(sw, now_ns);
		}
	}
}

void
emu_switch_rx(struct emu_switch *sw, uint16_t port, struct rte_mbuf **pkts, uint16_t n,
	      uint64_t now_ns)
{
	emu_switch_rx_lens(sw, port, pkts, n, NULL, now_ns);
}

void
emu_switch_rx_lens(struct emu_switch *sw, uint16_t port, struct rte_mbuf **pkts, uint16_t n,
		   const uint32_t *wire_lens, uint64_t now_ns)
{
	struct emu_port_stats *ps = &sw->port_stats[port];
	uint64_t bytes = 0;
	uint16_t i;

	sw->last_now_ns = now_ns;
	emu_switch_profile_tick(sw, now_ns);
	emu_switch_release_held(sw, now_ns);
	for (i = 0; i < n; i++) {
		struct emu_pkt_meta *meta = emu_meta(pkts[i]);

		meta->ts_ns = now_ns;
		meta->in_port = port;
		meta->out_port = EMU_PORT_NONE;
		meta->prio = 0;
		meta->flags = 0;
		memset(&meta->trace, 0, sizeof(meta->trace));
		meta->trace.t_in_ns = now_ns;
		if (wire_lens != NULL && wire_lens[i] > rte_pktmbuf_pkt_len(pkts[i])) {
			meta->flags = EMU_META_SNAP;
			meta->wire_len = wire_lens[i];
		}
		bytes += emu_wire_len(pkts[i]);
	}
	ps->rx_pkts += n;
	ps->rx_bytes += bytes;
	n = emu_switch_run_stages(sw, 0, sw->n_ingress, pkts, n, now_ns);
	for (i = 0; i < n; i++)
		if (!emu_switch_mac_control(sw, port, pkts[i], now_ns))
			emu_switch_enqueue(sw, pkts[i], now_ns);
	emu_switch_flush_emit(sw, now_ns);
	emu_switch_send_pfc(sw, now_ns);
}

/*
 * What the port's TM releases up to @p now_ns goes into its TX staging (egress stages run,
 * virtual incast frames absorbed or sent to their sink). Returns false when the staging is full.
 */
static bool
emu_switch_drain(struct emu_switch *sw, uint16_t port, uint64_t now_ns)
{
	struct emu_tx_stage *tx = &sw->tx[port];
	struct rte_mbuf **burst;
	uint16_t room, n, i;

	while ((room = EMU_TX_STAGE_PKTS - tx->n) > 0) {
		struct rte_mbuf *sink[EMU_BURST];
		uint16_t n_sink = 0;

		burst = &tx->pkts[tx->n];
		n = emu_tm_dequeue(sw->tm, port, now_ns, burst, RTE_MIN(room, EMU_BURST),
				   &sw->tm_rng);
		if (n == 0)
			break;
		if (sw->n_incast > 0)
			n = emu_switch_incast_release(sw, burst, n, sink, &n_sink);
		n = emu_switch_run_stages(sw, sw->n_ingress, sw->n_stages, burst, n, now_ns);
		for (i = 0; i < n; i++)
			tx->lens[tx->n + i] = emu_wire_len(burst[i]);
		tx->n += n;
		emu_switch_flush_emit(sw, now_ns);
		if (n_sink > 0)
			emu_switch_incast_sink(sw, sink, n_sink);
	}
	return room > 0;
}

uint16_t
emu_switch_tx_prepare(struct emu_switch *sw, uint16_t port, uint64_t now_ns,
		      struct rte_mbuf ***pkts)
{
	sw->last_now_ns = now_ns;
	emu_switch_profile_tick(sw, now_ns);
	emu_switch_release_held(sw, now_ns);
	emu_switch_drain(sw, port, now_ns);
	emu_switch_send_pfc(sw, now_ns);
	*pkts = sw->tx[port].pkts;
	return sw->tx[port].n;
}

void
emu_switch_tx_done(struct emu_switch *sw, uint16_t port, uint16_t sent)
{
	struct emu_tx_stage *tx = &sw->tx[port];
	struct emu_port_stats *ps = &sw->port_stats[port];
	uint64_t bytes = 0;
	uint16_t i;

	for (i = 0; i < sent; i++)
		bytes += tx->lens[i];
	ps->tx_pkts += sent;
	ps->tx_bytes += bytes;
	if (sent < tx->n) {
		memmove(tx->pkts, tx->pkts + sent, (tx->n - sent) * sizeof(tx->pkts[0]));
		memmove(tx->lens, tx->lens + sent, (tx->n - sent) * sizeof(tx->lens[0]));
	}
	tx->n -= sent;
}

uint64_t
emu_switch_next_event_ns(const struct emu_switch *sw)
{
	uint64_t next = emu_tm_next_event_ns(sw->tm);
	uint64_t rel;
	unsigned int i;

	for (i = 0; i < sw->n_ports; i++)
		if (sw->tx[i].n > 0)
			next = RTE_MIN(next, sw->last_now_ns);
	for (i = 0; i < sw->n_stages; i++)
		if (sw->stages[i].ops->next_due_ns != NULL)
			next = RTE_MIN(next, sw->stages[i].ops->next_due_ns(sw->stages[i].priv));
	if (sw->prof != NULL) {
		rel = emu_profile_next_ns(sw->prof);
		if (rel != UINT64_MAX)
			next = RTE_MIN(next, sw->prof_t0_ns + rel);
	}
	for (i = 0; i < sw->n_incast; i++)
		next = RTE_MIN(next, sw->incast[i].s.next_ns);
	return next;
}

static uint64_t
emu_switch_stage_held(const struct emu_switch *sw)
{
	uint64_t held = 0;
	unsigned int i;

	for (i = 0; i < sw->n_stages; i++)
		if (sw->stages[i].ops->held != NULL)
			held += sw->stages[i].ops->held(sw->stages[i].priv);
	return held;
}

uint64_t
emu_switch_held(const struct emu_switch *sw)
{
	uint64_t held = emu_tm_held(sw->tm) + emu_switch_stage_held(sw);
	unsigned int i;

	for (i = 0; i < sw->n_ports; i++)
		held += sw->tx[i].n;
	return held;
}

void
emu_switch_service(struct emu_switch *sw, bool final)
{
	unsigned int i;

	for (i = 0; i < sw->n_stages; i++)
		if (sw->stages[i].ops->service != NULL)
			sw->stages[i].ops->service(sw->stages[i].priv, final);
}

void
emu_switch_discard_held(struct emu_switch *sw)
{
	struct rte_mbuf *burst[EMU_BURST];
	struct emu_burst_ctx ctx;
	unsigned int i;
	uint16_t n;

	/* Stages that hold packets (delay lines) hand them all over as if their clock ran out;
	 * their own counters stay as they were (the scratch counters are thrown away). */
	for (i = 0; i < sw->n_stages; i++) {
		struct emu_stage_inst *st = &sw->stages[i];

		if (st->ops->release == NULL)
			continue;
		memset(&ctx, 0, sizeof(ctx));
		ctx.now_ns = UINT64_MAX;
		ctx.rng = &st->rng;
		ctx.emit = &sw->emit;
		ctx.ctr = calloc(st->ops->n_ctr ? st->ops->n_ctr : 1, sizeof(*ctx.ctr));
		ctx.drop = &sw->dropper;
		ctx.reason_base = st->reason_base;
		if (ctx.ctr == NULL)
			continue; /* still held: the conservation line says so */
		while ((n = st->ops->release(st->priv, burst, EMU_BURST, &ctx)) > 0)
			emu_switch_drop_bulk(sw, burst, n, EMU_RUN_CTR_DROP_DISCARDED_AT_EXIT);
		free(ctx.ctr);
	}

	for (i = 0; i < sw->n_ports; i++) {
		emu_switch_drop_bulk(sw, sw->tx[i].pkts, sw->tx[i].n,
				     EMU_RUN_CTR_DROP_DISCARDED_AT_EXIT);
		sw->tx[i].n = 0;
		/* Drain the TM as if its clock ran out. */
		while ((n = emu_tm_dequeue(sw->tm, i, UINT64_MAX / 2, burst, EMU_BURST,
					   &sw->tm_rng)) > 0)
			emu_switch_drop_bulk(sw, burst, n, EMU_RUN_CTR_DROP_DISCARDED_AT_EXIT);
	}
}

static bool
emu_is_drop_name(const char *name)
{
	return strncmp(name, "drop_", 5) == 0;
}

void
emu_switch_conservation(const struct emu_switch *sw, struct emu_conservation *c)
{
	unsigned int i, k;

	memset(c, 0, sizeof(*c));
	for (i = 0; i < sw->n_ports; i++) {
		const uint64_t *tc = emu_tm_port_ctrs(sw->tm, i);

		c->rx += sw->port_stats[i].rx_pkts;
		c->tx += sw->port_stats[i].tx_pkts;
		for (k = 0; k < EMU_TM_CTR_MAX; k++)
			if (emu_is_drop_name(emu_tm_ctr_names[k]))
				c->drops += tc[k];
	}
	for (i = 0; i < sw->n_stages; i++)
		for (k = 0; k < sw->stages[i].ops->n_ctr; k++)
			if (emu_is_drop_name(sw->stages[i].ops->ctr_names[k]))
				c->drops += sw->stages[i].ctr[k];
	for (k = 0; k < EMU_RUN_CTR_MAX; k++)
		if (emu_is_drop_name(emu_run_ctr_names[k]))
			c->drops += sw->ctr[k];
	c->created = sw->ctr[EMU_RUN_CTR_CREATED] + sw->ctr[EMU_RUN_CTR_FLOOD_COPIES];
	c->held = emu_switch_held(sw);
	c->consumed = sw->ctr[EMU_RUN_CTR_CONSUMED_MAC_CONTROL];
	/* virtual frames: created when generated, consumed when absorbed at release */
	for (i = 0; i < sw->n_incast; i++) {
		c->created += sw->incast[i].ctr[EMU_INCAST_CTR_GENERATED];
		c->consumed += sw->incast[i].ctr[EMU_INCAST_CTR_ABSORBED];
		c->drops += sw->incast[i].ctr[EMU_INCAST_CTR_DROP_SINK_FULL];
	}
	c->unaccounted = (int64_t)(c->rx + c->created) -
			 (int64_t)(c->tx + c->drops + c->held + c->consumed);
}

void
emu_switch_conservation_line(const struct emu_switch *sw, char *buf, size_t len)
{
	struct emu_conservation c;

	emu_switch_conservation(sw, &c);
	snprintf(buf, len,
		 "conservation: rx %" PRIu64 " + created %" PRIu64 " = tx %" PRIu64
		 " + drops %" PRIu64 " + held %" PRIu64 " + consumed %" PRIu64 ": %s",
		 c.rx, c.created, c.tx, c.drops, c.held, c.consumed,
		 c.unaccounted == 0 ? "OK" : "MISMATCH");
	if (c.unaccounted != 0) {
		size_t used = strlen(buf);

		snprintf(buf + used, len - used, " (%" PRId64 " packets unaccounted)",
			 c.unaccounted);
	}
}

void
emu_switch_print_summary(const struct emu_switch *sw, FILE *f)
{
	char line[512];
	unsigned int i, k;

	fprintf(f, "ports:\n");
	for (i = 0; i < sw->n_ports; i++) {
		const struct emu_port_stats *ps = &sw->port_stats[i];

		fprintf(f, "  %-8s rx %12" PRIu64 " pkts %15" PRIu64 " bytes   tx %12" PRIu64
			   " pkts %15" PRIu64 " bytes\n",
			sw->pl->port_names[i], ps->rx_pkts, ps->rx_bytes, ps->tx_pkts, ps->tx_bytes);
	}
	fprintf(f, "stages:\n");
	for (i = 0; i < sw->n_stages; i++) {
		const struct emu_stage_inst *st = &sw->stages[i];

		fprintf(f, "  %s %s (%s): in %" PRIu64 " out %" PRIu64, st->egress ? "egress " : "ingress",
			st->name, st->ops->type, st->in_pkts, st->out_pkts);
		for (k = 0; k < st->ops->n_ctr; k++)
			if (st->ctr[k] != 0)
				fprintf(f, " %s=%" PRIu64, st->ops->ctr_names[k], st->ctr[k]);
		fprintf(f, "\n");
		if (st->ops->summary != NULL) {
			st->ops->summary(st->priv, line, sizeof(line));
			if (line[0] != '\0')
				fprintf(f, "      %s\n", line);
		}
	}
	fprintf(f, "tm:\n");
	for (i = 0; i < sw->n_ports; i++) {
		const uint64_t *tc = emu_tm_port_ctrs(sw->tm, i);
		const struct emu_tm_port_cfg *pc = emu_tm_port_cfg(sw->tm, i);

		fprintf(f, "  %-8s %.3f Gb/s delay %" PRIu64 " ns held %" PRIu64 ":",
			sw->pl->port_names[i], (double)pc->rate_bps / 1e9, pc->delay_ns,
			emu_tm_port_held(sw->tm, i));
		for (k = 0; k < EMU_TM_CTR_MAX; k++)
			if (tc[k] != 0 || k < EMU_TM_CTR_DROP_QUEUE_FULL)
				fprintf(f, " %s=%" PRIu64, emu_tm_ctr_names[k], tc[k]);
		fprintf(f, "\n");
		for (k = 0; k < EMU_TM_N_PRIO; k++) {
			struct emu_tm_prio_stats ps;

			emu_tm_prio_stats(sw->tm, i, k, sw->last_now_ns, &ps);
			if (ps.max_queue_bytes == 0 && ps.paused_ns == 0 && ps.xoff_ns == 0 &&
			    ps.ingress_bytes == 0)
				continue;
			fprintf(f,
				"    prio %u: queue %" PRIu64 " B (%" PRIu64 " pkts, max %" PRIu64
				" B) ingress %" PRIu64 " B headroom %" PRIu64 " B%s paused %"
				PRIu64 " ns%s xoff %" PRIu64 " ns\n",
				k, ps.queue_bytes, ps.queue_pkts, ps.max_queue_bytes,
				ps.ingress_bytes, ps.headroom_bytes, ps.paused ? " PAUSED" : "",
				ps.paused_ns, ps.xoff ? " XOFF" : "", ps.xoff_ns);
		}
	}
	{
		uint64_t used, total;

		emu_tm_buffer_use(sw->tm, &used, &total);
		fprintf(f, "  shared buffer: %" PRIu64 " of %" PRIu64 " bytes in use\n", used,
			total);
	}
	for (i = 0; i < sw->n_incast; i++) {
		const struct emu_incast_src *src = &sw->incast[i];

		fprintf(f, "incast %s -> %s prio %u%s%s%s:", src->s.cfg.name,
			sw->pl->port_names[src->s.cfg.port], src->s.cfg.prio,
			src->s.cfg.enabled ? "" : " (disabled)",
			src->s.cfg.sink_port != EMU_PORT_NONE ? " sink " : "",
			src->s.cfg.sink_port != EMU_PORT_NONE ?
				sw->pl->port_names[src->s.cfg.sink_port] : "");
		for (k = 0; k < EMU_INCAST_CTR_MAX; k++)
			fprintf(f, " %s=%" PRIu64, emu_incast_ctr_names[k], src->ctr[k]);
		fprintf(f, "\n");
	}
	fprintf(f, "runner:");
	for (k = 0; k < EMU_RUN_CTR_MAX; k++)
		fprintf(f, " %s=%" PRIu64, emu_run_ctr_names[k], sw->ctr[k]);
	fprintf(f, "\ndrops by reason:");
	{
		bool any = false;

		for (i = 0; i < sw->n_stages; i++)
			for (k = 0; k < sw->stages[i].ops->n_ctr; k++)
				if (emu_is_drop_name(sw->stages[i].ops->ctr_names[k]) &&
				    sw->stages[i].ctr[k] != 0) {
					fprintf(f, " %s.%s=%" PRIu64, sw->stages[i].name,
						sw->stages[i].ops->ctr_names[k], sw->stages[i].ctr[k]);
					any = true;
				}
		for (i = 0; i < sw->n_ports; i++)
			for (k = 0; k < EMU_TM_CTR_MAX; k++)
				if (emu_is_drop_name(emu_tm_ctr_names[k]) &&
				    emu_tm_port_ctrs(sw->tm, i)[k] != 0) {
					fprintf(f, " tm.%s.%s=%" PRIu64, sw->pl->port_names[i],
						emu_tm_ctr_names[k], emu_tm_port_ctrs(sw->tm, i)[k]);
					any = true;
				}
		for (i = 0; i < sw->n_incast; i++)
			if (sw->incast[i].ctr[EMU_INCAST_CTR_DROP_SINK_FULL] != 0) {
				fprintf(f, " incast.%s.drop_sink_full=%" PRIu64,
					sw->incast[i].s.cfg.name,
					sw->incast[i].ctr[EMU_INCAST_CTR_DROP_SINK_FULL]);
				any = true;
			}
		for (k = 0; k < EMU_RUN_CTR_MAX; k++)
			if (emu_is_drop_name(emu_run_ctr_names[k]) && sw->ctr[k] != 0) {
				fprintf(f, " runner.%s=%" PRIu64, emu_run_ctr_names[k], sw->ctr[k]);
				any = true;
			}
		fprintf(f, "%s\n", any ? "" : " none");
	}
	emu_switch_conservation_line(sw, line, sizeof(line));
	fprintf(f, "%s\n", line);
}

void
emu_switch_print_interval(const struct emu_switch *sw, FILE *f, double t_s)
{
	struct emu_switch *msw = (struct emu_switch *)(uintptr_t)sw;
	struct emu_conservation c;
	double dt = t_s - sw->last_interval_s;
	unsigned int i;

	if (dt <= 0)
		dt = 1;
	fprintf(f, "t=%.1fs", t_s);
	for (i = 0; i < sw->n_ports; i++) {
		const struct emu_port_stats *ps = &sw->port_stats[i];
		const struct emu_port_stats *last = &sw->last_interval[i];

		fprintf(f, " | %s rx %" PRIu64 " (%.3f Mpps %.3f Gb/s) tx %" PRIu64
			   " (%.3f Mpps %.3f Gb/s)",
			sw->pl->port_names[i], ps->rx_pkts,
			(double)(ps->rx_pkts - last->rx_pkts) / dt / 1e6,
			(double)(ps->rx_bytes - last->rx_bytes) * 8 / dt / 1e9, ps->tx_pkts,
			(double)(ps->tx_pkts - last->tx_pkts) / dt / 1e6,
			(double)(ps->tx_bytes - last->tx_bytes) * 8 / dt / 1e9);
		msw->last_interval[i] = *ps;
	}
	emu_switch_conservation(sw, &c);
	fprintf(f, " | drops %" PRIu64 " held %" PRIu64 "\n", c.drops, c.held);
	msw->last_interval_s = t_s;
}

static json_t *
emu_ctr_object(const char *const *names, const uint64_t *vals, unsigned int n)
{
	json_t *o = json_object();
	unsigned int k;

	for (k = 0; k < n; k++)
		json_object_set_new(o, names[k], json_integer((json_int_t)vals[k]));
	return o;
}


/* A consistent copy of every counter the stats show, taken between bursts by the owner. */
struct emu_snap {
	struct emu_port_stats ports[EMU_MAX_PORTS];
	uint64_t tm_held[EMU_MAX_PORTS];
	uint64_t tm_ctr[EMU_MAX_PORTS][EMU_TM_CTR_MAX];
	struct emu_tm_prio_stats prio[EMU_MAX_PORTS][EMU_TM_N_PRIO];
	uint64_t buf_used, buf_total;
	uint64_t run_ctr[EMU_RUN_CTR_MAX];
	uint64_t st_in[EMU_MAX_STAGES], st_out[EMU_MAX_STAGES];
	bool incast_enabled[EMU_MAX_INCAST];
	uint64_t incast_ctr[EMU_MAX_INCAST][EMU_INCAST_CTR_MAX];
	struct emu_conservation cons;
	uint64_t stage_ctr[]; /* every stage's counters, one after the other */
};

struct emu_snap *
emu_switch_snap_alloc(const struct emu_switch *sw)
{
	unsigned int i, n = 0;

	for (i = 0; i < sw->n_stages; i++)
		n += sw->stages[i].ops->n_ctr;
	return calloc(1, sizeof(struct emu_snap) + n * sizeof(uint64_t));
}

void
emu_switch_snap_take(const struct emu_switch *sw, struct emu_snap *sn)
{
	unsigned int i, k, off = 0;

	for (i = 0; i < sw->n_ports; i++) {
		sn->ports[i] = sw->port_stats[i];
		sn->tm_held[i] = emu_tm_port_held(sw->tm, i);
		memcpy(sn->tm_ctr[i], emu_tm_port_ctrs(sw->tm, i), sizeof(sn->tm_ctr[i]));
		for (k = 0; k < EMU_TM_N_PRIO; k++)
			emu_tm_prio_stats(sw->tm, i, k, sw->last_now_ns, &sn->prio[i][k]);
	}
	emu_tm_buffer_use(sw->tm, &sn->buf_used, &sn->buf_total);
	memcpy(sn->run_ctr, sw->ctr, sizeof(sn->run_ctr));
	for (i = 0; i < sw->n_stages; i++) {
		const struct emu_stage_inst *st = &sw->stages[i];

		sn->st_in[i] = st->in_pkts;
		sn->st_out[i] = st->out_pkts;
		memcpy(&sn->stage_ctr[off], st->ctr, st->ops->n_ctr * sizeof(uint64_t));
		off += st->ops->n_ctr;
	}
	for (i = 0; i < sw->n_incast; i++) {
		sn->incast_enabled[i] = sw->incast[i].s.cfg.enabled;
		memcpy(sn->incast_ctr[i], sw->incast[i].ctr, sizeof(sn->incast_ctr[i]));
	}
	emu_switch_conservation(sw, &sn->cons);
}

static json_t *
emu_snap_prio_array(const struct emu_snap *sn, uint16_t port)
{
	json_t *a = json_array();
	unsigned int k;

	for (k = 0; k < EMU_TM_N_PRIO; k++) {
		const struct emu_tm_prio_stats *ps = &sn->prio[port][k];

		json_array_append_new(
			a, json_pack("{s:i, s:I, s:I, s:I, s:I, s:I, s:b, s:I, s:b, s:I}", "prio",
				     (int)k, "queue_bytes", (json_int_t)ps->queue_bytes,
				     "queue_pkts", (json_int_t)ps->queue_pkts, "max_queue_bytes",
				     (json_int_t)ps->max_queue_bytes, "ingress_bytes",
				     (json_int_t)ps->ingress_bytes, "headroom_bytes",
				     (json_int_t)ps->headroom_bytes, "paused", ps->paused,
				     "paused_ns", (json_int_t)ps->paused_ns, "xoff", ps->xoff,
				     "xoff_ns", (json_int_t)ps->xoff_ns));
	}
	return a;
}

json_t *
emu_switch_snap_json(const struct emu_switch *sw, const struct emu_snap *sn)
{
	json_t *root = json_object();
	json_t *ports = json_array(), *stages = json_array(), *tm = json_array();
	const struct emu_conservation *c = &sn->cons;
	unsigned int i, off = 0;

	for (i = 0; i < sw->n_ports; i++) {
		const struct emu_port_stats *ps = &sn->ports[i];

		json_array_append_new(ports,
				      json_pack("{s:s, s:I, s:I, s:I, s:I}", "name",
						sw->pl->port_names[i], "rx_pkts",
						(json_int_t)ps->rx_pkts, "rx_bytes",
						(json_int_t)ps->rx_bytes, "tx_pkts",
						(json_int_t)ps->tx_pkts, "tx_bytes",
						(json_int_t)ps->tx_bytes));
		json_array_append_new(tm, json_pack("{s:s, s:I, s:o, s:o}", "port",
						    sw->pl->port_names[i], "held",
						    (json_int_t)sn->tm_held[i], "counters",
						    emu_ctr_object(emu_tm_ctr_names, sn->tm_ctr[i],
								   EMU_TM_CTR_MAX),
						    "priorities", emu_snap_prio_array(sn, i)));
	}
	for (i = 0; i < sw->n_stages; i++) {
		const struct emu_stage_inst *st = &sw->stages[i];

		json_array_append_new(stages,
				      json_pack("{s:s, s:s, s:s, s:I, s:I, s:o}", "name", st->name,
						"type", st->ops->type, "list",
						st->egress ? "egress" : "ingress", "in_pkts",
						(json_int_t)sn->st_in[i], "out_pkts",
						(json_int_t)sn->st_out[i], "counters",
						emu_ctr_object(st->ops->ctr_names, &sn->stage_ctr[off],
							       st->ops->n_ctr)));
		off += st->ops->n_ctr;
	}
	json_object_set_new(root, "ports", ports);
	json_object_set_new(root, "stages", stages);
	json_object_set_new(root, "tm", tm);
	json_object_set_new(root, "buffer",
			    json_pack("{s:I, s:I}", "used_bytes", (json_int_t)sn->buf_used,
				      "total_bytes", (json_int_t)sn->buf_total));
	{
		json_t *inc = json_array();

		for (i = 0; i < sw->n_incast; i++) {
			const struct emu_incast_src *src = &sw->incast[i];

			json_array_append_new(
				inc, json_pack("{s:s, s:s, s:i, s:b, s:o}", "name", src->s.cfg.name,
					       "port", sw->pl->port_names[src->s.cfg.port],
					       "priority", (int)src->s.cfg.prio, "enabled",
					       sn->incast_enabled[i], "counters",
					       emu_ctr_object(emu_incast_ctr_names, sn->incast_ctr[i],
							      EMU_INCAST_CTR_MAX)));
		}
		json_object_set_new(root, "incast", inc);
	}
	json_object_set_new(root, "runner",
			    emu_ctr_object(emu_run_ctr_names, sn->run_ctr, EMU_RUN_CTR_MAX));
	json_object_set_new(root, "conservation",
			    json_pack("{s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:b}", "rx",
				      (json_int_t)c->rx,
				      "created", (json_int_t)c->created, "tx", (json_int_t)c->tx,
				      "drops", (json_int_t)c->drops, "held", (json_int_t)c->held,
				      "consumed", (json_int_t)c->consumed,
				      "unaccounted", (json_int_t)c->unaccounted, "ok",
				      c->unaccounted == 0));
	return root;
}

json_t *
emu_switch_stats_json(const struct emu_switch *sw)
{
	struct emu_snap *sn = emu_switch_snap_alloc(sw);
	json_t *root;

	if (sn == NULL)
		return json_object();
	emu_switch_snap_take(sw, sn);
	root = emu_switch_snap_json(sw, sn);
	free(sn);
	return root;
}

/*
 * Snapshots for other threads (telemetry): the reader posts a request, the owner copies the
 * counters into sw->snap between bursts (emu_switch_snap_serve(), a flag test per poll) and
 * says so; the reader builds the JSON from the copy. The owner is never stopped and the
 * reader never reads the owner's counters.
 */
void
emu_switch_snap_serve(struct emu_switch *sw)
{
	if (likely(!__atomic_load_n(&sw->snap_req, __ATOMIC_ACQUIRE)))
		return;
	emu_switch_snap_take(sw, sw->snap);
	__atomic_store_n(&sw->snap_req, false, __ATOMIC_RELAXED);
	__atomic_fetch_add(&sw->snap_seq, 1, __ATOMIC_RELEASE);
}

json_t *
emu_switch_snap_request(struct emu_switch *sw, bool owner_gone, uint64_t timeout_us)
{
	json_t *root = NULL;
	uint64_t seq, waited = 0;

	pthread_mutex_lock(&sw->snap_mu);
	if (sw->snap == NULL)
		sw->snap = emu_switch_snap_alloc(sw);
	if (sw->snap == NULL)
		goto out;
	if (owner_gone) {
		emu_switch_snap_take(sw, sw->snap);
	} else {
		seq = __atomic_load_n(&sw->snap_seq, __ATOMIC_ACQUIRE);
		__atomic_store_n(&sw->snap_req, true, __ATOMIC_RELEASE);
		while (__atomic_load_n(&sw->snap_seq, __ATOMIC_ACQUIRE) == seq) {
			if (waited >= timeout_us) {
				__atomic_store_n(&sw->snap_req, false, __ATOMIC_RELAXED);
				goto out;
			}
			usleep(50);
			waited += 50;
		}
	}
	root = emu_switch_snap_json(sw, sw->snap);
out:
	pthread_mutex_unlock(&sw->snap_mu);
	return root;
}

const struct emu_pipeline *
emu_switch_pipeline(const struct emu_switch *sw)
{
	return sw->pl;
}

struct emu_tm *
emu_switch_tm(struct emu_switch *sw)
{
	return sw->tm;
}

int
emu_switch_tm_set(struct emu_switch *sw, uint16_t port, const char *key, const json_t *val,
		  bool apply, uint64_t now_ns, const char *path, struct emu_err *err)
{
	return emu_tm_set(sw->tm, port, key, val, apply, now_ns, &sw->tm_rng, path, err);
}

json_t *
emu_switch_tm_get(const struct emu_switch *sw, uint16_t port, const char *key)
{
	return emu_tm_get(sw->tm, port, key);
}

json_t *
emu_switch_stage_get(const struct emu_switch *sw, int idx, const char *key)
{
	const struct emu_stage_inst *st = &sw->stages[idx];

	return st->ops->get == NULL ? NULL : st->ops->get(st->priv, key);
}

json_t *
emu_switch_incast_get(const struct emu_switch *sw, int idx, const char *key)
{
	return emu_incast_get(&sw->incast[idx].s, key);
}

int
emu_switch_stage_index(const struct emu_switch *sw, const char *name)
{
	unsigned int i;

	for (i = 0; i < sw->n_stages; i++)
		if (strcmp(sw->stages[i].name, name) == 0)
			return (int)i;
	return -1;
}

int
emu_switch_stage_set(struct emu_switch *sw, int idx, const char *key, const json_t *val,
		     bool apply, const char *path, struct emu_err *err)
{
	struct emu_stage_inst *st = &sw->stages[idx];

	if (st->ops->set == NULL)
		return emu_err_set(err, "%s: stage \"%s\" (%s) has no parameters a profile can change",
				   path, st->name, st->ops->type);
	return st->ops->set(st->priv, key, val, apply, path, err);
}

void
emu_switch_port_stats(const struct emu_switch *sw, uint16_t port, struct emu_port_stats *s)
{
	*s = sw->port_stats[port];
}

int64_t
emu_switch_stage_counter(const struct emu_switch *sw, const char *stage, const char *name)
{
	int idx = emu_switch_stage_index(sw, stage);
	unsigned int k;

	if (idx < 0)
		return -1;
	for (k = 0; k < sw->stages[idx].ops->n_ctr; k++)
		if (strcmp(sw->stages[idx].ops->ctr_names[k], name) == 0)
			return (int64_t)sw->stages[idx].ctr[k];
	return -1;
}

int
emu_switch_incast_index(const struct emu_switch *sw, const char *name)
{
	unsigned int i;

	for (i = 0; i < sw->n_incast; i++)
		if (strcmp(sw->incast[i].s.cfg.name, name) == 0)
			return (int)i;
	return -1;
}

int
emu_switch_incast_set(struct emu_switch *sw, int idx, const char *key, const json_t *val,
		      bool apply, uint64_t rel_ns, const char *path, struct emu_err *err)
{
	return emu_incast_set(&sw->incast[idx].s, key, val, apply, sw->prof_t0_ns + rel_ns, path,
			      err);
}

int64_t
emu_switch_incast_counter(const struct emu_switch *sw, const char *name, const char *ctr)
{
	int idx = emu_switch_incast_index(sw, name);
	unsigned int k;

	if (idx < 0)
		return -1;
	for (k = 0; k < EMU_INCAST_CTR_MAX; k++)
		if (strcmp(emu_incast_ctr_names[k], ctr) == 0)
			return (int64_t)sw->incast[idx].ctr[k];
	return -1;
}

uint64_t
emu_switch_incast_next_ns(const struct emu_switch *sw, const char *name)
{
	int idx = emu_switch_incast_index(sw, name);

	return idx < 0 ? UINT64_MAX : sw->incast[idx].s.next_ns;
}

void
emu_switch_incast_stop(struct emu_switch *sw)
{
	unsigned int i;

	for (i = 0; i < sw->n_incast; i++) {
		sw->incast[i].s.cfg.enabled = false;
		sw->incast[i].s.next_ns = UINT64_MAX;
	}
}

unsigned int
emu_switch_route_warnings(const struct emu_switch *sw, FILE *f)
{
	uint32_t reach[EMU_MAX_PORTS] = { 0 }, masks[EMU_MAX_PORTS];
	unsigned int i, p, n = 0;
	bool chooser = false;

	for (i = 0; i < sw->n_stages; i++) {
		const struct emu_stage_inst *st = &sw->stages[i];

		if (st->ops->routes == NULL || st->egress)
			continue;
		memset(masks, 0, sizeof(masks));
		st->ops->routes(st->priv, sw->n_ports, masks);
		for (p = 0; p < sw->n_ports; p++)
			reach[p] |= masks[p];
		chooser = true;
	}
	if (!chooser) {
		fprintf(f, "rocemu: WARNING: no ingress stage chooses an egress port (add a "
			"\"forward\" stage): every frame will be dropped as drop_no_route\n");
		return 1;
	}
	for (p = 0; p < sw->n_ports; p++)
		if (reach[p] == 0) {
			fprintf(f, "rocemu: WARNING: no route from port %s: every frame arriving "
				"there will be dropped (see the forward stage's pairs or macs)\n",
				sw->pl->port_names[p]);
			n++;
		}
	return n;
}

unsigned int
emu_switch_report_failures(const struct emu_switch *sw, FILE *f)
{
	char msg[EMU_ERR_LEN + 128];
	unsigned int i, n = 0;

	for (i = 0; i < sw->n_stages; i++) {
		const struct emu_stage_inst *st = &sw->stages[i];

		if (st->ops->failed != NULL && st->initialised &&
		    st->ops->failed(st->priv, msg, sizeof(msg))) {
			fprintf(f, "rocemu: stage %s: %s\n", st->name, msg);
			n++;
		}
	}
	return n;
}

int
emu_switch_add_drop_hook(struct emu_switch *sw,
			 void (*hook)(void *arg, struct rte_mbuf *m, uint32_t reason), void *arg)
{
	if (sw->dropper.n_hooks >= EMU_DROP_MAX_HOOKS)
		return -ENOSPC;
	sw->dropper.hooks[sw->dropper.n_hooks].fn = hook;
	sw->dropper.hooks[sw->dropper.n_hooks].arg = arg;
	sw->dropper.n_hooks++;
	return 0;
}

static int
emu_switch_env_add_drop_hook(void *sw, void (*fn)(void *arg, struct rte_mbuf *m, uint32_t reason),
			     void *arg)
{
	return emu_switch_add_drop_hook(sw, fn, arg);
}

static size_t
emu_switch_env_annotate(const void *sw, struct rte_mbuf *m, int drop_reason, bool all, char *buf,
			size_t len)
{
	return emu_switch_annotate(sw, m, drop_reason, all, buf, len);
}

uint32_t
emu_switch_n_reasons(const struct emu_switch *sw)
{
	return sw->n_reasons;
}

bool
emu_switch_reason_name(const struct emu_switch *sw, uint32_t id, char *buf, size_t len)
{
	const char *ctr = NULL;
	unsigned int i;

	buf[0] = '\0';
	if (id >= sw->n_reasons)
		return false;
	if (id >= sw->run_reason_base) {
		ctr = emu_run_ctr_names[id - sw->run_reason_base];
		snprintf(buf, len, "runner.%s", ctr);
	} else if (id >= sw->incast_reason_base) {
		uint32_t k = (id - sw->incast_reason_base) / EMU_INCAST_CTR_MAX;

		if (k >= sw->n_incast)
			return false;
		ctr = emu_incast_ctr_names[(id - sw->incast_reason_base) % EMU_INCAST_CTR_MAX];
		snprintf(buf, len, "incast.%s.%s", sw->incast[k].s.cfg.name, ctr);
	} else if (id >= sw->tm_reason_base) {
		uint32_t k = id - sw->tm_reason_base;

		ctr = emu_tm_ctr_names[k % EMU_TM_CTR_MAX];
		snprintf(buf, len, "tm.%s.%s", sw->pl->port_names[k / EMU_TM_CTR_MAX], ctr);
	} else {
		for (i = 0; i < sw->n_stages; i++) {
			const struct emu_stage_inst *st = &sw->stages[i];

			if (id >= st->reason_base && id < st->reason_base + st->ops->n_ctr) {
				ctr = st->ops->ctr_names[id - st->reason_base];
				snprintf(buf, len, "%s.%s", st->name, ctr);
				break;
			}
		}
	}
	return ctr != NULL && emu_is_drop_name(ctr);
}

uint64_t
emu_switch_reason_count(const struct emu_switch *sw, uint32_t id)
{
	unsigned int i;

	if (id >= sw->n_reasons)
		return 0;
	if (id >= sw->run_reason_base)
		return sw->ctr[id - sw->run_reason_base];
	if (id >= sw->incast_reason_base) {
		uint32_t k = (id - sw->incast_reason_base) / EMU_INCAST_CTR_MAX;

		return k < sw->n_incast ?
		       sw->incast[k].ctr[(id - sw->incast_reason_base) % EMU_INCAST_CTR_MAX] : 0;
	}
	if (id >= sw->tm_reason_base)
		return emu_tm_port_ctrs(sw->tm, (id - sw->tm_reason_base) / EMU_TM_CTR_MAX)
			[(id - sw->tm_reason_base) % EMU_TM_CTR_MAX];
	for (i = 0; i < sw->n_stages; i++)
		if (id >= sw->stages[i].reason_base &&
		    id < sw->stages[i].reason_base + sw->stages[i].ops->n_ctr)
			return sw->stages[i].ctr[id - sw->stages[i].reason_base];
	return 0;
}

/* Append to an annotation: returns the new length (never past @p len). */
static size_t
emu_ann(char *buf, size_t len, size_t used, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (used >= len)
		return used;
	va_start(ap, fmt);
	n = vsnprintf(buf + used, len - used, fmt, ap);
	va_end(ap);
	return n < 0 ? used : RTE_MIN(used + (size_t)n, len - 1);
}

static const char *
emu_switch_port_label(const struct emu_switch *sw, uint16_t port)
{
	if (port < sw->n_ports)
		return sw->pl->port_names[port];
	return port == EMU_PORT_SELF ? "switch" : port == EMU_PORT_FLOOD ? "flood" : "none";
}

size_t
emu_switch_annotate(const struct emu_switch *sw, struct rte_mbuf *m, int drop_reason, bool all,
		    char *buf, size_t len)
{
	const struct emu_pkt_meta *meta = emu_meta(m);
	const struct emu_trace *tr = &meta->trace;
	char name[128];
	size_t u = 0;

	buf[0] = '\0';
	if (drop_reason < 0 && tr->drop_reason != 0)
		drop_reason = tr->drop_reason - 1; /* a drop capture's copy */
	if (!all && drop_reason < 0 && tr->marks == 0 && tr->created_by == 0 &&
	    tr->event_reason == 0)
		return 0;
	u = emu_ann(buf, len, u, "rocemu:");
	if (drop_reason >= 0) {
		emu_switch_reason_name(sw, (uint32_t)drop_reason, name, sizeof(name));
		u = emu_ann(buf, len, u, " drop=%s", name);
	}
	u = emu_ann(buf, len, u, " in=%s", emu_switch_port_label(sw, meta->in_port));
	if (meta->out_port != EMU_PORT_NONE)
		u = emu_ann(buf, len, u, " out=%s", emu_switch_port_label(sw, meta->out_port));
	u = emu_ann(buf, len, u, " t_in=%" PRIu64 " prio=%u", tr->t_in_ns, meta->prio);
	if (tr->t_enq_ns != 0 && drop_reason < 0)
		u = emu_ann(buf, len, u, " qdepth=%u wait=%uns", tr->qdepth_bytes, tr->wait_ns);
	if (tr->marks & EMU_TRACE_CE_RED)
		u = emu_ann(buf, len, u, " ce=red");
	if (tr->marks & EMU_TRACE_CE_EVENT)
		u = emu_ann(buf, len, u, " ce=event");
	if (tr->marks & EMU_TRACE_DELAYED)
		u = emu_ann(buf, len, u, " delayed=%uns", tr->delay_ns);
	if (tr->marks & EMU_TRACE_CORRUPTED)
		u = emu_ann(buf, len, u, " corrupted");
	if (tr->marks & EMU_TRACE_REWRITTEN)
		u = emu_ann(buf, len, u, " rewritten");
	if (tr->marks & EMU_TRACE_DUPLICATE)
		u = emu_ann(buf, len, u, " duplicate");
	if (tr->event_reason != 0) {
		emu_switch_reason_name(sw, tr->event_reason - 1u, name, sizeof(name));
		u = emu_ann(buf, len, u, " event=%s", name);
	}
	if (tr->created_by == EMU_TRACE_BY_SWITCH)
		u = emu_ann(buf, len, u, " created=switch");
	else if (tr->created_by == EMU_TRACE_BY_INCAST)
		u = emu_ann(buf, len, u, " created=incast");
	else if (tr->created_by != 0 && tr->created_by <= sw->n_stages)
		u = emu_ann(buf, len, u, " created=%s", sw->stages[tr->created_by - 1].name);
	if (tr->path != 0)
		u = emu_ann(buf, len, u, " path=%u", tr->path);
	return u;
}
