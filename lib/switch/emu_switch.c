/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The runner: rx, ingress stages, the fabric's entry, TM, emitted frames, PFC frames, egress
 * stages, tx and released held packets, one per-packet walk. Building the switch, its
 * programs and what it holds are in emu_switch_setup.c; the incast, fabric, workers, access
 * and report sides in their own files.
 */
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
#include "lib/base/emu_json.h"
#include "lib/stages/stages.h"
#include "lib/switch/emu_switch_int.h"

const char *const emu_run_ctr_names[EMU_RUN_CTR_MAX] = {
#define EMU_RUN_CTR_NAME(e, s) s,
	EMU_RUN_FOREACH_CTR(EMU_RUN_CTR_NAME)
#undef EMU_RUN_CTR_NAME
};




void
emu_switch_drop_bulk(struct emu_switch *sw, struct rte_mbuf **m, unsigned int n, unsigned int c)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		emu_switch_drop(sw, m[i], c);
}



/*
 * Apply the program's due actions and generate the incast frames due by @p now_ns, each
 * instant at its exact time: frames before a change are generated under the old settings.
 */
static __attribute__((noinline)) void
emu_switch_program_tick_work(struct emu_switch *sw, uint64_t now_ns)
{
	struct emu_program *np = __atomic_load_n(&sw->pending_prog, __ATOMIC_ACQUIRE);
	struct emu_program *prog;
	uint64_t rel, t;

	if (unlikely(np != NULL)) {
		/* A reloaded program starts now; the old one goes back to whoever offered it. */
		sw->retired_prog = sw->prog;
		sw->prog = np;
		sw->prog_t0_ns = now_ns;
		__atomic_store_n(&sw->pending_prog, NULL, __ATOMIC_RELEASE);
	}
	prog = sw->prog;
	while (prog != NULL && now_ns >= sw->prog_t0_ns) {
		rel = emu_program_next_ns(prog);
		if (rel == UINT64_MAX)
			break;
		t = sw->prog_t0_ns + rel;
		if (t > now_ns)
			break;
		if (t > 0 && !emu_switch_incast_gen(sw, t - 1))
			return;
		sw->ctr[EMU_RUN_CTR_PROFILE_CHANGES] += emu_switch_apply_due(sw, prog, rel, t);
	}
	if (sw->n_incast > 0)
		emu_switch_incast_gen(sw, now_ns);
}

/* On every burst: nothing to do without a program, a reload or an incast source. */
static inline void
emu_switch_program_tick(struct emu_switch *sw, uint64_t now_ns)
{
	if (sw->prog != NULL || sw->n_incast > 0 ||
	    __atomic_load_n(&sw->pending_prog, __ATOMIC_ACQUIRE) != NULL)
		emu_switch_program_tick_work(sw, now_ns);
}

static uint16_t
emu_switch_run_stages(struct emu_switch *sw, unsigned int first, unsigned int last,
		      struct rte_mbuf **pkts, uint16_t n, uint64_t now_ns, uint32_t in_port_plus1)
{
	struct emu_burst_ctx ctx;
	unsigned int i;

	ctx.now_ns = now_ns;
	ctx.emit = &sw->emit;
	ctx.in_port_plus1 = in_port_plus1;
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

void
emu_switch_enqueue(struct emu_switch *sw, struct rte_mbuf *m, uint64_t now_ns)
{
	struct emu_pkt_meta *meta = emu_meta(m);
	uint16_t out = meta->out_port;
	unsigned int p;

	if (out < sw->n_ports) {
		if (unlikely(emu_switch_foreign(sw, out)))
			emu_switch_handoff(sw, out, m);
		else if (sw->fab == NULL || !emu_switch_fabric_enter(sw, m, now_ns))
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
			emu_switch_enqueue(sw, c, now_ns);
		}
		meta->out_port = targets[0];
		emu_switch_enqueue(sw, m, now_ns);
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
void
emu_switch_port_mac(uint16_t port, uint8_t mac[6])
{
	static const uint8_t base[5] = { 0x02, 0x72, 0x6f, 0x63, 0x65 };

	memcpy(mac, base, sizeof(base));
	mac[5] = (uint8_t)port;
}

/* Have the TM build the PFC frames it asks for and queue them on their (ingress) ports' control
 * queues, which the pause state does not hold back. */
static __attribute__((noinline)) void
emu_switch_send_pfc_work(struct emu_switch *sw, uint64_t now_ns)
{
	struct emu_tm_pfc_frame frames[2 * EMU_TM_MAX_PORTS];
	unsigned int i, n;

	n = emu_tm_pfc_collect(sw->tm, now_ns, frames, RTE_DIM(frames));
	for (i = 0; i < n; i++) {
		if (frames[i].port >= sw->n_ports) {
			/* a fabric link's far end: pause the link itself, no frame */
			emu_switch_fabric_pause(sw, &frames[i], now_ns);
			continue;
		}
		emu_switch_pfc_out(sw, &frames[i], now_ns);
	}
}

/* Build PFC frame @p f and queue it on its port's control queue, here or on the worker that
 * sends from that port; false when the pool is empty (counted). */
bool
emu_switch_pfc_out(struct emu_switch *sw, const struct emu_tm_pfc_frame *f, uint64_t now_ns)
{
	struct rte_mbuf *m;
	uint8_t mac[6];

	emu_switch_port_mac(f->port, mac);
	m = emu_tm_pfc_mbuf(sw->pool, f, mac, now_ns);
	if (m == NULL) {
		sw->ctr[EMU_RUN_CTR_PFC_NOT_SENT_NOMBUF] += 1;
		return false;
	}
	sw->ctr[EMU_RUN_CTR_CREATED] += 1;
	sw->ctr[EMU_RUN_CTR_PFC_CREATED] += 1;
	if (unlikely(emu_switch_foreign(sw, f->port))) {
		/* it leaves by a port another worker sends from: its control queue there */
		emu_meta(m)->out_port = f->port;
		emu_switch_handoff(sw, f->port, m);
		return true;
	}
	emu_tm_enqueue(sw->tm, f->port, m, now_ns, &sw->tm_rng);
	return true;
}

/* Called on every burst: the test inline, the work (a 2 x ports frame array) apart. */
void
emu_switch_send_pfc(struct emu_switch *sw, uint64_t now_ns)
{
	if (emu_tm_pfc_work(sw->tm))
		emu_switch_send_pfc_work(sw, now_ns);
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
	if (unlikely(emu_switch_foreign(sw, port))) {
		/* the pause is for this port's egress, which another worker owns */
		meta->flags |= EMU_META_RXCTL;
		emu_switch_handoff(sw, port, m);
		return true;
	}
	emu_tm_pause_rx(sw->tm, port, now_ns, pkt->macctl_opcode, pkt->pfc_enable,
			pkt->pause_quanta, &sw->tm_rng);
	sw->ctr[EMU_RUN_CTR_CONSUMED_MAC_CONTROL] += 1;
	rte_pktmbuf_free(m);
	return true;
}

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

/*
 * Stages [first, last) that hold packets hand over those due. Ingress stages release before
 * any rx or drain (their packets go into the TM); egress stages after every port's TM has been
 * drained to now (emu_switch_tx_prepare()), so that a stage waiting for a packet (a reorder
 * stage's hole) sees every packet that left the TM by now before its own time runs out.
 */
static void
emu_switch_release_held(struct emu_switch *sw, uint64_t now_ns, unsigned int first,
			unsigned int last)
{
	struct rte_mbuf *burst[EMU_BURST];
	struct emu_burst_ctx ctx;
	unsigned int i;
	uint16_t n, k;

	if (!sw->any_release)
		return;
	for (i = first; i < last; i++) {
		struct emu_stage_inst *st = &sw->stages[i];
		bool egress = i >= sw->n_ingress;
		uint16_t cap = EMU_BURST;

		/* nothing due (the common case): release() would hand over nothing */
		if (st->ops->release == NULL || st->ops->next_due_ns(st->priv) > now_ns)
			continue;
		ctx.now_ns = now_ns;
		ctx.emit = &sw->emit;
		ctx.in_port_plus1 = 0;
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
				n = emu_switch_run_stages(sw, i + 1, sw->n_ingress, burst, n,
							  now_ns, 0);
				for (k = 0; k < n; k++)
					emu_switch_enqueue(sw, burst[k], now_ns);
			} else {
				for (k = 0; k < n; k++)
					emu_meta(burst[k])->ts_ns = now_ns; /* its departure */
				n = emu_switch_run_stages(sw, i + 1, sw->n_stages, burst, n,
							  now_ns, 0);
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

/*
 * Frames past the ingress stages into the TM in order: a run of parsed frames that are not MAC
 * control to one real port, outside a fabric, in one TM call, which finds where the run ends;
 * the same into an emulated fabric over the links of an ECMP group; a run to a port another
 * worker owns staged for it at once; the others one by one.
 * @p rx_port: the port they arrived on, whose MAC control frames are honoured and consumed
 * here; EMU_PORT_NONE for frames another worker handed over (already past that).
 */
void
emu_switch_enqueue_runs(struct emu_switch *sw, uint16_t rx_port, struct rte_mbuf **pkts,
			uint16_t n, uint64_t now_ns)
{
	uint16_t i = 0;

	while (i < n) {
		uint16_t out = emu_meta(pkts[i])->out_port, k;

		if (sw->fab == NULL && out < sw->n_ports && !emu_switch_foreign(sw, out)) {
			k = emu_tm_enqueue_port_run(sw->tm, out, pkts + i, n - i, now_ns,
						    &sw->tm_rng);
			if (k > 0) {
				i += k;
				continue;
			}
		}
		if (sw->fab != NULL && out < sw->n_ports && !emu_switch_foreign(sw, out)) {
			k = emu_switch_fabric_enter_run(sw, pkts + i, n - i, now_ns);
			if (k > 0) {
				i += k;
				continue;
			}
		}
		if (emu_switch_foreign(sw, out)) {
			/* another worker's port: the run staged for it at once */
			k = emu_switch_handoff_run(sw, out, pkts + i, n - i);
			if (k > 0) {
				i += k;
				continue;
			}
		}
		if (rx_port == EMU_PORT_NONE || !emu_switch_mac_control(sw, rx_port, pkts[i], now_ns))
			emu_switch_enqueue(sw, pkts[i], now_ns);
		i++;
	}
}

void
emu_switch_rx_lens(struct emu_switch *sw, uint16_t port, struct rte_mbuf **pkts, uint16_t n,
		   const uint32_t *wire_lens, uint64_t now_ns)
{
	struct emu_port_stats *ps = &sw->port_stats[port];
	uint64_t bytes = 0;
	uint16_t i;

	sw->last_now_ns = now_ns;
	emu_switch_program_tick(sw, now_ns);
	if (sw->fab != NULL)
		emu_switch_fabric_advance(sw, now_ns);
	emu_switch_release_held(sw, now_ns, 0, sw->n_ingress);
	for (i = 0; i < n; i++) {
		struct emu_pkt_meta *meta = emu_meta(pkts[i]);
		uint32_t len = rte_pktmbuf_pkt_len(pkts[i]);

		emu_switch_rx_meta(sw, meta, port, now_ns);
		if (unlikely(wire_lens != NULL) && wire_lens[i] > len) {
			meta->flags = EMU_META_SNAP;
			meta->wire_len = wire_lens[i];
			len = wire_lens[i];
		}
		bytes += len;
	}
	ps->rx_pkts += n;
	ps->rx_bytes += bytes;
	n = emu_switch_run_stages(sw, 0, sw->n_ingress, pkts, n, now_ns, (uint32_t)port + 1);
	emu_switch_enqueue_runs(sw, port, pkts, n, now_ns);
	emu_switch_flush_emit(sw, now_ns);
	emu_switch_send_pfc(sw, now_ns);
}

/*
 * What the port's TM releases up to @p now_ns goes into its TX staging (egress stages run,
 * virtual incast frames absorbed or sent to their sink). Returns false when the staging is full.
 */
bool
emu_switch_drain(struct emu_switch *sw, uint16_t port, uint64_t now_ns)
{
	struct emu_tx_stage *tx = &sw->tx[port];
	struct rte_mbuf **burst;
	uint16_t room, n, i;

	while ((room = EMU_TX_STAGE_PKTS - tx->n) > 0) {
		struct rte_mbuf *sink[EMU_BURST];
		uint16_t n_sink = 0;

		burst = &tx->pkts[tx->n];
		if (sw->n_stages == sw->n_ingress && sw->n_incast == 0) {
			/* nothing between the TM and the port: the lengths are the TM's */
			n = emu_tm_dequeue_lens(sw->tm, port, now_ns, burst, &tx->lens[tx->n],
						RTE_MIN(room, EMU_BURST), &sw->tm_rng);
			tx->n += n;
			/* fewer than asked: the TM gave all that is due by now (emu_tm_dequeue_lens
			 * advances the port to now whatever it returns), a second call finds none */
			if (n < RTE_MIN(room, EMU_BURST))
				break;
			continue;
		}
		n = emu_tm_dequeue(sw->tm, port, now_ns, burst, RTE_MIN(room, EMU_BURST),
				   &sw->tm_rng);
		if (n == 0)
			break;
		if (sw->n_incast > 0)
			n = emu_switch_incast_release(sw, burst, n, sink, &n_sink);
		n = emu_switch_run_stages(sw, sw->n_ingress, sw->n_stages, burst, n, now_ns, 0);
		for (i = 0; i < n; i++)
			tx->lens[tx->n + i] = emu_wire_len(burst[i]);
		tx->n += n;
		emu_switch_flush_emit(sw, now_ns);
		if (n_sink > 0)
			emu_switch_incast_sink(sw, sink, n_sink);
	}
	return room > 0;
}

void
emu_switch_tick(struct emu_switch *sw, uint64_t now_ns)
{
	sw->last_now_ns = now_ns;
	emu_switch_program_tick(sw, now_ns);
	if (sw->fab != NULL)
		emu_switch_fabric_advance(sw, now_ns);
	emu_switch_release_held(sw, now_ns, 0, sw->n_ingress);
}

bool
emu_switch_tx_idle(const struct emu_switch *sw, uint16_t port)
{
	return sw->tx[port].n == 0 && !sw->any_egress_release &&
	       emu_tm_port_idle(sw->tm, port) && !emu_tm_pfc_work(sw->tm);
}

uint16_t
emu_switch_tx_prepare(struct emu_switch *sw, uint16_t port, uint64_t now_ns,
		      struct rte_mbuf ***pkts)
{
	unsigned int p;

	emu_switch_tick(sw, now_ns);
	if (sw->any_egress_release) {
		/* every port: what left any TM by now reaches the egress stages first */
		for (p = 0; p < sw->n_ports; p++)
			emu_switch_drain(sw, (uint16_t)p, now_ns);
		emu_switch_release_held(sw, now_ns, sw->n_ingress, sw->n_stages);
	} else {
		emu_switch_drain(sw, port, now_ns);
	}
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


