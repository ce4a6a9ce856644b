/* SPDX-License-Identifier: BSD-3-Clause */
/*
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
 * Its configuration (the event and loss model parsers, init and free, the counter names) is in
 * impair_config.c, its key tables in impair_keys.c.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "lib/base/emu_json.h"
#include "lib/stages/impair_priv.h"

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
