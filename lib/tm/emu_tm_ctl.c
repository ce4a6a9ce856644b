/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What the rest of rocemu asks of the TM between bursts: the next event, what it holds, its
 * counters and per-queue state for reports, and profile changes (typed: compiled on the
 * control path, applied by the worker).
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <rte_common.h>

#include "lib/base/emu_json.h"
#include "lib/proto/roce_rewrite.h"
#include "lib/tm/emu_tm_int.h"
#include "lib/tm/emu_tm_keys.h"

/* Port @p port's next event but a packet leaving its delay line (emu_tm_port_next_event_ns()). */
static inline uint64_t
emu_tm_port_next_change_ns(const struct emu_tm *tm, const struct emu_tm_port *p)
{
	uint64_t next = UINT64_MAX, start_ns;
	uint32_t start_ps;
	unsigned int q;

	/* includes pause expiries of non-empty queues (pick does not commit) */
	if (p->nonempty != 0 && emu_tm_fifo_count(&p->wire) <= p->wire.mask &&
	    emu_tm_pick((struct emu_tm_port *)(uintptr_t)p, &start_ns, &start_ps, false) >= 0)
		next = start_ns + (start_ps != 0);
	if (p->storm_on)
		next = RTE_MIN(next, p->storm_next_ns);
	if (p->cfg.pfc.enabled && tm->hot.n_xoff != 0)
		for (q = 0; q < EMU_TM_N_PRIO; q++)
			if (p->xoff[q])
				next = RTE_MIN(next, p->refresh_ns[q]);
	return next;
}

/* When the packet at the head of @p p's delay line leaves, UINT64_MAX when the line is empty. */
static inline uint64_t
emu_tm_port_wire_ns(const struct emu_tm_port *p)
{
	if (emu_tm_fifo_count(&p->wire) == 0)
		return UINT64_MAX;
	return emu_meta(p->wire.slots[p->wire.head & p->wire.mask])->ts_ns;
}

uint64_t
emu_tm_port_next_event_ns(const struct emu_tm *tm, uint16_t port)
{
	const struct emu_tm_port *p = &tm->ports[port];

	return RTE_MIN(emu_tm_port_wire_ns(p), emu_tm_port_next_change_ns(tm, p));
}

uint64_t
emu_tm_next_event_ns(const struct emu_tm *tm)
{
	uint64_t next = UINT64_MAX;
	unsigned int i;

	for (i = 0; i < tm->n_ports; i++)
		next = RTE_MIN(next, emu_tm_port_next_event_ns(tm, (uint16_t)i));
	return next;
}

uint64_t
emu_tm_next_change_ns(const struct emu_tm *tm, uint16_t n_ports, uint64_t *wire_ns,
		      unsigned int *n_wire)
{
	uint64_t next = UINT64_MAX, w, wmin = UINT64_MAX;
	unsigned int i, nw = 0;

	for (i = 0; i < tm->n_ports; i++) {
		const struct emu_tm_port *p = &tm->ports[i];

		if (p->nonempty == 0 && emu_tm_fifo_count(&p->wire) == 0 && !p->storm_on &&
		    tm->hot.n_xoff == 0)
			continue; /* idle: no event (the common case of a port nothing crosses) */
		next = RTE_MIN(next, emu_tm_port_next_change_ns(tm, p));
		w = emu_tm_port_wire_ns(p);
		if (i >= n_ports) {
			next = RTE_MIN(next, w); /* a link beyond the real ports: its departure is a hop */
		} else if (w != UINT64_MAX) {
			wmin = RTE_MIN(wmin, w);
			nw++;
		}
	}
	*wire_ns = wmin;
	*n_wire = nw;
	return next;
}

void
emu_tm_advance(struct emu_tm *tm, uint16_t port, uint64_t now_ns, struct emu_rng *rng)
{
	struct emu_tm_port *p = &tm->ports[port];

	/* nothing queued, or the link busy past now: nothing can start by now (fabric hops
	 * advance before every enqueue, mostly onto a link still sending the last one) */
	if (p->nonempty == 0 || p->link_free_ns > now_ns ||
	    (p->link_free_ns == now_ns && p->link_free_ps != 0))
		return;
	emu_tm_port_advance(tm, p, now_ns, rng);
}

uint64_t
emu_tm_queue_bytes(const struct emu_tm *tm, uint16_t port, unsigned int prio)
{
	return tm->ports[port].q_bytes[prio & (EMU_TM_N_PRIO - 1)];
}

uint64_t
emu_tm_port_held(const struct emu_tm *tm, uint16_t port)
{
	const struct emu_tm_port *p = &tm->ports[port];
	uint64_t held = emu_tm_fifo_count(&p->wire);
	unsigned int q;

	for (q = 0; q < EMU_TM_N_Q; q++)
		held += emu_tm_fifo_count(&p->q[q]);
	return held;
}

bool
emu_tm_port_idle(const struct emu_tm *tm, uint16_t port)
{
	const struct emu_tm_port *p = &tm->ports[port];

	return p->nonempty == 0 && emu_tm_fifo_count(&p->wire) == 0;
}

uint64_t
emu_tm_held(const struct emu_tm *tm)
{
	uint64_t held = 0;
	unsigned int i;

	for (i = 0; i < tm->n_ports; i++)
		held += emu_tm_port_held(tm, i);
	return held;
}

const uint64_t *
emu_tm_port_ctrs(const struct emu_tm *tm, uint16_t port)
{
	return tm->ports[port].ctr;
}

void
emu_tm_prio_stats(const struct emu_tm *tm, uint16_t port, unsigned int prio, uint64_t now_ns,
		  struct emu_tm_prio_stats *s)
{
	const struct emu_tm_port *p = &tm->ports[port];

	s->queue_bytes = p->q_bytes[prio];
	s->queue_pkts = emu_tm_fifo_count(&p->q[prio]);
	s->max_queue_bytes = p->max_q_bytes[prio];
	s->ingress_bytes = p->ing_bytes[prio];
	s->headroom_bytes = p->hr_cells[prio];
	s->paused = p->pause_until_ns[prio] > now_ns;
	s->paused_ns = p->paused_ns[prio];
	if (p->pause_until_ns[prio] > p->pause_start_ns[prio] && now_ns > p->pause_start_ns[prio])
		s->paused_ns += RTE_MIN(p->pause_until_ns[prio], now_ns) - p->pause_start_ns[prio];
	s->xoff = p->xoff[prio];
	s->xoff_ns = p->xoff_ns[prio];
	if (p->xoff[prio] && now_ns > p->xoff_start_ns[prio])
		s->xoff_ns += now_ns - p->xoff_start_ns[prio];
}

void
emu_tm_buffer_use(const struct emu_tm *tm, uint64_t *used_bytes, uint64_t *total_bytes)
{
	*used_bytes = tm->used_cells;
	*total_bytes = tm->buf_total_cfg;
}

uint64_t
emu_tm_buffer_used(const struct emu_tm *tm)
{
	return tm->used_cells;
}

void
emu_tm_buffer_others(struct emu_tm *tm, uint64_t others_bytes)
{
	/* every limit reads total - used: less room by what the others hold is the same test
	 * against one pool (its occupancy as of the others' last poll) */
	tm->buf.total_bytes = others_bytes >= tm->buf_total_cfg ? 0 :
			      tm->buf_total_cfg - others_bytes;
}

void
emu_tm_absorb(struct emu_tm *dst, const struct emu_tm *src, uint64_t now_ns)
{
	unsigned int i, k;

	for (i = 0; i < dst->n_ports && i < src->n_ports; i++) {
		struct emu_tm_port *d = &dst->ports[i];
		const struct emu_tm_port *s = &src->ports[i];

		for (k = 0; k < EMU_TM_CTR_MAX; k++)
			if (k == EMU_TM_CTR_MAX_QUEUE_BYTES)
				d->ctr[k] = RTE_MAX(d->ctr[k], s->ctr[k]);
			else
				d->ctr[k] += s->ctr[k];
		for (k = 0; k < EMU_TM_N_Q; k++)
			d->max_q_bytes[k] = RTE_MAX(d->max_q_bytes[k], s->max_q_bytes[k]);
		for (k = 0; k < EMU_TM_N_PRIO; k++) {
			struct emu_tm_prio_stats ps;

			/* with a pause or an XOFF still open at @p now_ns counted to then */
			emu_tm_prio_stats(src, (uint16_t)i, k, now_ns, &ps);
			d->paused_ns[k] += ps.paused_ns;
			d->xoff_ns[k] += ps.xoff_ns;
		}
	}
}

const struct emu_tm_port_cfg *
emu_tm_port_cfg(const struct emu_tm *tm, uint16_t port)
{
	return &tm->ports[port].cfg;
}

bool
emu_tm_link_up(const struct emu_tm *tm, uint16_t port)
{
	return tm->ports[port].link_up;
}

json_t *
emu_tm_settings(const struct emu_tm_port_cfg *pc)
{
	return json_pack("{s:f, s:f, s:I, s:s, s:b}", "rate_gbps", (double)pc->rate_bps / 1e9,
			 "delay_us", (double)pc->delay_ns / 1e3, "buffer_kb",
			 (json_int_t)(pc->limit_bytes / 1024), "link", "up", "pfc_storm", 0);
}

int
emu_tm_compile(const struct emu_tm *tm, uint16_t port, const char *key, const json_t *val,
	       struct emu_set *out, const char *path, struct emu_err *err)
{
	const struct emu_key_table *t = &emu_tm_set_table;
	const char *s;
	double x;
	int64_t i;
	int rc;

	memset(out, 0, sizeof(*out));
	if (strcmp(key, "rate_gbps") == 0) {
		out->key = EMU_TM_SET_RATE;
		rc = emu_key_num_value(val, path, t, key, &x, err);
		if (rc != 0)	/* x is unset then: converting it was undefined (fuzz_profile) */
			return rc;
		out->u64 = (uint64_t)(x * 1e9 + 0.5);
		return 0;
	}
	if (strcmp(key, "delay_us") == 0) {
		out->key = EMU_TM_SET_DELAY;
		rc = emu_key_num_value(val, path, t, key, &x, err);
		if (rc != 0)
			return rc;
		out->u64 = (uint64_t)(x * 1e3 + 0.5);
		return 0;
	}
	if (strcmp(key, "buffer_kb") == 0) {
		out->key = EMU_TM_SET_BUFFER;
		rc = emu_key_int_value(val, path, t, key, &i, err);
		if (rc != 0)
			return rc;
		out->u64 = (uint64_t)i * 1024;
		return 0;
	}
	if (strcmp(key, "link") == 0) {
		out->key = EMU_TM_SET_LINK;
		s = json_string_value(val);
		if (s == NULL)
			return emu_err_set(err, "%s: must be \"down\" or \"up\", got %s", path,
					   emu_json_type_name(val));
		rc = emu_key_enum_check(s, emu_key_find(t, key)->enum_vals, path, err);
		if (rc != 0)
			return rc;
		out->u32 = strcmp(s, "up") == 0;
		return 0;
	}
	if (strcmp(key, "pfc_storm") == 0) {
		out->key = EMU_TM_SET_STORM;
		if (port < tm->n_ports && tm->ports[port].cfg.own_buffer)
			/* a storm is frames sent to a NIC; between hops a pause is the link's
			 * own state (it would pause the link itself, for ever in replay) */
			return emu_err_set(err, "%s: only a real port can send a PFC storm (towards "
					   "its NIC); a fabric link pauses without frames "
					   "(pipelines/README.md, fabric)", path);
		return emu_tm_storm_compile(val, out, path, err);
	}
	return emu_keys_unknown(path, t, err);
}

void
emu_tm_apply(struct emu_tm *tm, uint16_t port, const struct emu_set *s, uint64_t now_ns,
	     struct emu_rng *rng)
{
	struct emu_tm_port *p = &tm->ports[port];

	switch (s->key) {
	case EMU_TM_SET_RATE:
		p->cfg.rate_bps = s->u64;
		break;
	case EMU_TM_SET_DELAY:
		p->cfg.delay_ns = s->u64;
		break;
	case EMU_TM_SET_BUFFER:
		/* a per-queue limit that followed the port's keeps following it */
		if (p->cfg.queue_limit_bytes == p->cfg.limit_bytes)
			p->cfg.queue_limit_bytes = s->u64;
		p->cfg.limit_bytes = s->u64;
		break;
	case EMU_TM_SET_LINK:
		if (s->u32) {
			p->link_up = true;
		} else if (p->link_up) {
			/* what could start before the link went down has started */
			emu_tm_port_advance(tm, p, now_ns, rng);
			p->link_up = false;
			emu_tm_flush(tm, p, now_ns);
		}
		break;
	case EMU_TM_SET_STORM: {
		bool was_on = p->storm_on;

		emu_tm_storm_apply(p, s, now_ns);
		if (p->storm_on != was_on) {
			if (p->storm_on)
				tm->hot.n_storm += 1;
			else
				tm->hot.n_storm -= 1;
		}
		break;
	}
	default:
		break;
	}
}

int
emu_tm_set(struct emu_tm *tm, uint16_t port, const char *key, const json_t *val, bool apply,
	   uint64_t now_ns, struct emu_rng *rng, const char *path, struct emu_err *err)
{
	struct emu_set s;
	int rc = emu_tm_compile(tm, port, key, val, &s, path, err);

	if (rc == 0 && apply)
		emu_tm_apply(tm, port, &s, now_ns, rng);
	return rc;
}

uint64_t
emu_tm_head_departure_ns(const struct emu_tm *tm, uint16_t port)
{
	const struct emu_tm_port *p = &tm->ports[port];

	return emu_tm_fifo_count(&p->wire) > 0 ?
		       emu_meta(p->wire.slots[p->wire.head & p->wire.mask])->ts_ns : UINT64_MAX;
}

struct rte_mbuf *
emu_tm_pop_departed(struct emu_tm *tm, uint16_t port, uint64_t now_ns, struct emu_rng *rng)
{
	struct emu_tm_port *p = &tm->ports[port];
	bool full = emu_tm_fifo_count(&p->wire) > p->wire.mask;
	struct rte_mbuf *m;

	if (emu_tm_fifo_count(&p->wire) == 0)
		return NULL;
	m = p->wire.slots[p->wire.head & p->wire.mask];
	if (emu_meta(m)->ts_ns > now_ns)
		return NULL;
	p->wire.head++;
	p->ctr[EMU_TM_CTR_DEQ_PKTS] += 1;
	p->ctr[EMU_TM_CTR_DEQ_BYTES] += emu_wire_len(m);
	/* a full delay line held packets back: they may start now */
	if (full)
		emu_tm_port_advance(tm, p, now_ns, rng);
	return m;
}

void
emu_tm_storms_stop(struct emu_tm *tm)
{
	unsigned int i;

	for (i = 0; i < tm->n_ports; i++)
		if (tm->ports[i].storm_on) {
			tm->ports[i].storm_on = false;
			tm->hot.n_storm -= 1;
		}
}
