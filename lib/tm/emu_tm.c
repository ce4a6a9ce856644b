/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The traffic manager's ports and their life: creation, options and freeing, and the small
 * per-packet rules both directions share: RED ECN marking, XOFF/XON of an ingress priority,
 * the flush when a link goes down. Enqueue: emu_tm_enqueue.c (and emu_tm_arrive.c);
 * scheduler, link and delay line: emu_tm_dequeue.c; configuration: emu_tm_config.c; PFC
 * and storms: emu_tm_pfc.c; profile changes and reports: emu_tm_ctl.c; a fabric's hops:
 * emu_tm_group.c.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <rte_common.h>

#include "lib/base/emu_json.h"
#include "lib/proto/roce_rewrite.h"
#include "lib/tm/emu_tm_int.h"
#include "lib/tm/emu_tm_same.h"

void
emu_tm_set_dropper(struct emu_tm *tm, const struct emu_dropper *d, uint32_t reason_base)
{
	tm->drop = d;
	tm->reason_base = reason_base;
}

static int
emu_tm_fifo_init(struct emu_tm_fifo *f, uint32_t cap)
{
	uint32_t n = rte_align32pow2(cap < 2 ? 2 : cap);

	f->slots = calloc(n, sizeof(*f->slots));
	if (f->slots == NULL)
		return -ENOMEM;
	f->mask = n - 1;
	f->head = 0;
	f->tail = 0;
	return 0;
}

static void
emu_tm_fifo_fini(struct emu_tm_fifo *f)
{
	while (f->slots != NULL && emu_tm_fifo_count(f) > 0)
		rte_pktmbuf_free(f->slots[f->head++ & f->mask]);
	free(f->slots);
	f->slots = NULL;
}

struct emu_tm *
emu_tm_create(const struct emu_tm_cfg *cfg, struct emu_err *err)
{
	struct emu_tm *tm;
	unsigned int i, q;

	tm = calloc(1, sizeof(*tm));
	if (tm == NULL)
		goto nomem;
	tm->n_ports = cfg->n_ports;
	tm->buf = cfg->buffer;
	tm->buf_total_cfg = cfg->buffer.total_bytes;
	tm->trace = true;
	for (i = 0; i < cfg->n_ports; i++) {
		struct emu_tm_port *p = &tm->ports[i];

		p->cfg = cfg->ports[i];
		tm->lossless_of[i] = p->cfg.lossless_mask;
		emu_tm_ecn_ramp(&p->cfg.ecn); /* derived: callers may fill the config directly */
		p->link_up = true;
		for (q = 0; q < EMU_TM_N_Q; q++)
			if (emu_tm_fifo_init(&p->q[q], q == EMU_TM_CTRL_Q ? EMU_TM_CTRL_SLOTS :
						       p->cfg.queue_pkts) != 0)
				goto nomem;
		if (emu_tm_fifo_init(&p->wire, emu_tm_wire_slots(&p->cfg)) != 0)
			goto nomem;
	}
	return tm;
nomem:
	emu_tm_free(tm);
	emu_err_setrc(err, -ENOMEM, "tm: out of memory allocating queues");
	return NULL;
}

void
emu_tm_set_trace(struct emu_tm *tm, bool on)
{
	tm->trace = on;
}

void
emu_tm_set_general_only(struct emu_tm *tm, bool on)
{
	tm->general_only = on;
}

void
emu_tm_free(struct emu_tm *tm)
{
	unsigned int i, q;

	if (tm == NULL)
		return;
	for (i = 0; i < tm->n_ports; i++) {
		for (q = 0; q < EMU_TM_N_Q; q++)
			emu_tm_fifo_fini(&tm->ports[i].q[q]);
		emu_tm_fifo_fini(&tm->ports[i].wire);
	}
	free(tm);
}

/*
 * RED ramp on the queue's instantaneous length q (bytes), as in docs/wire.md:
 *     p = 0                                   q <= kmin
 *     p = pmax * (q - kmin) / (kmax - kmin)   kmin < q <= kmax
 *     p = 1                                   q > kmax
 * ECT packets only: a Not-ECT packet is never marked (ecn_not_ect counts those that
 * found q above kmin), a CE packet stays CE (ecn_ce_already). The draw is uniform in
 * [0, 1) from the stream the caller passes in; a packet is marked when draw < p.
 */
void
emu_tm_ecn(struct emu_tm_port *p, struct rte_mbuf *m, uint64_t q, struct emu_rng *rng)
{
	const struct emu_tm_ecn_cfg *ec = &p->cfg.ecn;
	struct emu_pkt_meta *meta = emu_meta(m);

	if (q <= ec->kmin_bytes)
		return;
	if (!(meta->flags & EMU_META_PARSED) || meta->pkt.ip_version == 0 ||
	    meta->pkt.ecn == 0) {
		p->ctr[EMU_TM_CTR_ECN_NOT_ECT] += 1;
		return;
	}
	if (meta->pkt.ecn == 3) {
		p->ctr[EMU_TM_CTR_ECN_CE_ALREADY] += 1;
		return;
	}
	/* the ramp (above kmax every ECT packet is marked) */
	if (q <= ec->kmax_bytes && !((emu_rng_u64(rng) >> 16) < emu_tm_red_q48(ec, q)))
		return;
	/* Headers are in the first segment (the parser linearises only short ones). */
	if (m->data_len < (uint32_t)meta->pkt.l3_off + 40 ||
	    roce_set_ecn(rte_pktmbuf_mtod(m, uint8_t *), &meta->pkt, 3) != 0) {
		p->ctr[EMU_TM_CTR_ECN_NOT_ECT] += 1;
		return;
	}
	p->ctr[EMU_TM_CTR_ECN_MARKED] += 1;
	meta->trace.marks |= EMU_TRACE_CE_RED;
}

/* Ingress port @p in's priority @p q went above XOFF at @p now_ns: tell its sender to pause. */
void
emu_tm_xoff(struct emu_tm *tm, struct emu_tm_port *in, unsigned int q, uint64_t now_ns)
{
	in->xoff[q] = true;
	tm->hot.n_xoff += 1;
	in->xoff_start_ns[q] = now_ns;
	in->refresh_ns[q] = now_ns;
	in->pfc_pending |= (uint16_t)(1u << q);
	tm->hot.pfc_any = true;
}

/* Ingress port @p in's priority @p q went below XON at @p now_ns: tell its sender. */
void
emu_tm_xon(struct emu_tm *tm, struct emu_tm_port *in, unsigned int q, uint64_t now_ns)
{
	in->xoff[q] = false;
	tm->hot.n_xoff -= 1;
	/* In live mode a frame may start on the link (now_ns = its start time) before the
	 * enqueue that raised XOFF: never count a negative interval. */
	if (now_ns > in->xoff_start_ns[q])
		in->xoff_ns[q] += now_ns - in->xoff_start_ns[q];
	in->pfc_pending |= (uint16_t)(1u << q);
	tm->hot.pfc_any = true;
}

/* The link went down at @p now_ns: drop what waits in the port's queues (frames already
 * serialised, in the delay line, still arrive). */
void
emu_tm_flush(struct emu_tm *tm, struct emu_tm_port *p, uint64_t now_ns)
{
	unsigned int q;

	p->nonempty = 0;
	for (q = 0; q < EMU_TM_N_Q; q++) {
		while (emu_tm_fifo_count(&p->q[q]) > 0) {
			struct rte_mbuf *m = p->q[q].slots[p->q[q].head++ & p->q[q].mask];
			struct emu_pkt_meta *meta = emu_meta(m);
			uint32_t len = emu_wire_len(m);

			p->q_bytes[q] -= len;
			p->all_q_bytes -= len;
			if (q != EMU_TM_CTRL_Q) {
				emu_tm_unaccount(tm, p, q, meta, len, now_ns);
				p->deficit[q] = 0;
			}
			emu_tm_drop(tm, (uint16_t)(p - tm->ports), m, EMU_TM_CTR_DROP_LINK_DOWN);
		}
	}
}
