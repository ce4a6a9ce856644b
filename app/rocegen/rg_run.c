/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rocegen's collectives on the wire: the QPs a schedule (rg_sched.c) needs, posting and waiting
 * for a step's transfers, barriers, verifying the result, and the run over the sizes.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_common.h>
#include <rte_mempool.h>

#include "rg_main.h"


static int
rg_qp_add(struct rg_state *st, unsigned int src, unsigned int dst, unsigned int ch,
	  bool requester)
{
	unsigned int lr = (requester ? src : dst) % st->o.n_ranks;
	unsigned int peer = requester ? dst : src;
	/* the sender's address and rail on the wire: src's, or with --pxn its relay's */
	unsigned int wsrc = ch == st->o.n_qps ? src : rg_wire_src(st, src, dst);
	unsigned int port = rg_rail(st, requester ? wsrc : dst);
	bool ctrl = ch == st->o.n_qps;
	uint32_t qpn = rg_qpn(st, src, dst, ch, !requester);
	struct rg_qp *q = &st->qps[st->n_qp];
	struct ep_qp_cfg c;
	int rc;

	ep_qp_cfg_default(&c);
	c.qpn = qpn;
	c.dest_qpn = rg_qpn(st, src, dst, ch, requester);
	c.mtu = st->o.mtu;
	c.timeout = st->o.timeout;
	c.window_bytes = st->o.window_bytes;
	memcpy(c.src_mac, st->mac[port], 6);
	rg_rank_ip(st, requester ? wsrc : dst, c.src_ip);
	rg_rank_ip(st, requester ? peer : wsrc, c.dst_ip);
	/* flow entropy per QP pair, as Linux/mlx5 derive it with a zero GRH flow label */
	c.udp_sport = roce_udp_sport_from_qpns(c.qpn, c.dest_qpn);
	if (strcmp(st->o.dcqcn, "off") == 0) {
		dcqcn_params_nvidia(&c.dcqcn, st->o.line_mbps);
		c.dcqcn_enabled = false;
	} else if (st->o.dcqcn_file) {
		c.dcqcn = st->o.dcqcn_params;
	} else {
		dcqcn_params_by_name(&c.dcqcn, st->o.dcqcn, st->o.line_mbps);
	}
	if (st->o.proto != RG_PROTO_NONE && !ctrl) {
		/* NCCL's CTS: the receiver writes 64-byte elements into the sender's FIFO */
		q->cts = calloc(RG_CTS_SLOTS, RG_CTS_BYTES);
		if (q->cts == NULL)
			return -1;
		if (requester) {
			c.mr = q->cts;
			c.mr_len = RG_CTS_SLOTS * RG_CTS_BYTES;
		}
	}
	if (!requester) {
		c.mr = ctrl ? st->ctrl_land : st->land[lr];
		c.mr_len = ctrl ? sizeof(st->ctrl_land) : st->sched_max.land_len[dst];
		c.placed_bitmap = ctrl ? NULL : st->bitmap[lr];
		if (!ctrl && st->ll_rx[lr] != NULL) {	/* --proto ll|ll128: lines land here */
			c.mr = st->ll_rx[lr];
			c.mr_len = st->ll_rx_len[lr];
			c.placed_bitmap = NULL;		/* rg_nccl_land marks the data */
		}
	}
	if (st->o.srd) {
		struct ep_srd_cfg sc;

		ep_srd_cfg_default(&sc);
		sc.qp = c;
		sc.n_paths = st->o.srd_paths;
		sc.spray = st->o.srd_spray;
		sc.cc_enabled = c.dcqcn_enabled;
		sc.ai_mbps = st->o.line_mbps / 100.0;
		sc.min_rate_mbps = st->o.line_mbps / 1000.0;
		sc.rtt_thresh_ns = (uint64_t)st->o.srd_rtt_us * 1000;
		/* a software peer answers between polls and may be descheduled on a loaded
		 * machine: timers of a few hundred us would fire for nothing */
		sc.rto_min_ns = 1000000;
		sc.rto_init_ns = 2000000;
		rc = rg_ep_init_srd(&q->ep, &sc, &st->tp[port].pfc, rg_now_ns(st));
	} else {
		rc = rg_ep_init_rc(&q->ep, &c, &st->tp[port].pfc, rg_now_ns(st));
	}
	if (rc != 0) {
		fprintf(stderr, "rocegen: QP 0x%x: %s\n", qpn,
			rc == -ENOMEM ? "out of memory" : "bad parameters");
		free(q->cts);
		q->cts = NULL;
		return -1;
	}
	q->peer_proc = peer / st->o.n_ranks;
	q->port = port;
	q->pxn = wsrc != src;
	q->cross_rail = rg_rail(st, wsrc) != rg_rail(st, dst);
	q->requester = requester;
	q->ctrl = ctrl;
	st->qp_of[qpn - RG_QPN_BASE - st->shard * rg_qpn_span(st)] = (int32_t)st->n_qp++;
	return 0;
}

/* QPs for every pair of ranks the collective connects across processes, plus control QPs
 * between our first rank and every other process's. */
int
rg_qps_init(struct rg_state *st)
{
	unsigned int R = st->R, nq = st->o.n_qps, src, dst, ch, p, me = st->proc * st->o.n_ranks;
	uint8_t *pairs = calloc((size_t)R * R, 1);
	uint32_t k, max_qps = 2 * (st->o.n_procs - 1);
	int rc = 0;

	if (pairs == NULL)
		return -1;
	for (k = 0; k < st->sched_max.n; k++) {
		const struct rg_xfer *x = &st->sched_max.x[k];

		if (!pairs[x->src * R + x->dst] &&
		    rg_is_local(st, x->src) != rg_is_local(st, x->dst))
			max_qps += nq;
		pairs[x->src * R + x->dst] = 1;
	}
	st->qp_of_len = 2 * R * R * (nq + 1);
	st->qp_of = malloc(st->qp_of_len * sizeof(*st->qp_of));
	st->qps = calloc(max_qps, sizeof(*st->qps));
	st->msg_seq = calloc((size_t)R * R, sizeof(*st->msg_seq));
	st->nccl_msgs = calloc((size_t)R * R, sizeof(*st->nccl_msgs));
	if (st->qp_of == NULL || st->qps == NULL || st->msg_seq == NULL || st->nccl_msgs == NULL) {
		free(pairs);
		fprintf(stderr, "rocegen: out of memory for %u QPs\n", max_qps);
		return -1;
	}
	memset(st->qp_of, 0xff, st->qp_of_len * sizeof(*st->qp_of));
	for (k = 0; k < st->n_ports; k++)
		ep_pfc_init(&st->tp[k].pfc, st->o.line_mbps);
	for (src = 0; src < R && rc == 0; src++)
		for (dst = 0; dst < R && rc == 0; dst++) {
			bool ls = rg_is_local(st, src), ld = rg_is_local(st, dst);

			if (!pairs[src * R + dst] || ls == ld)
				continue;
			for (ch = 0; ch < nq && rc == 0; ch++)
				rc = rg_qp_add(st, src, dst, ch, ls);
		}
	for (p = 0; p < st->o.n_procs && rc == 0; p++) {
		if (p == st->proc)
			continue;
		rc = rg_qp_add(st, me, p * st->o.n_ranks, nq, true);
		if (rc == 0)
			rc = rg_qp_add(st, p * st->o.n_ranks, me, nq, false);
	}
	free(pairs);
	return rc;
}

static void
rg_dump_qps(const struct rg_state *st)
{
	unsigned int q;

	for (q = 0; q < st->n_ports; q++)
		fprintf(stderr, "rocegen: %u frames waiting for port %u\n", st->tp[q].txq_n,
			st->port_ids[q]);
	fprintf(stderr, "rocegen: %u mbufs free in the pool\n", rte_mempool_avail_count(st->pool));

	for (q = 0; q < st->n_qp; q++) {
		const struct rg_ep *qp = &st->qps[q].ep;

		/* tx_packets (counter 0 of RC and SRD): nothing ever sent, not even an ACK */
		if (rg_ep_idle(qp) && rg_ep_ctr(qp, 0) == 0)
			continue;
		rg_ep_dump(qp, stderr);
	}
}

int
rg_post_op(struct rg_state *st, struct rg_ep *qp, enum ep_wr_op op, const uint8_t *buf,
	   uint64_t len, uint64_t va, uint32_t imm)
{
	struct ep_wr wr = { .wr_id = imm, .op = op, .local = buf, .len = (uint32_t)len,
			    .remote_va = va, .imm = imm };
	int rc;

	while ((rc = rg_ep_post(qp, &wr)) == -ENOSPC) {
		if (rg_timed_out(st)) {
			fprintf(stderr, "rocegen: QP 0x%x: gave up waiting for room to post\n",
				rg_ep_qpn(qp));
			return -1;
		}
		rg_poll(st);
	}
	if (rc != 0) {
		fprintf(stderr, "rocegen: QP 0x%x: post failed (%s)\n", rg_ep_qpn(qp),
			strerror(-rc));
		return -1;
	}
	return 0;
}

static int
rg_post(struct rg_state *st, struct rg_ep *qp, const uint8_t *buf, uint64_t len, uint64_t va,
	uint32_t imm)
{
	return rg_post_op(st, qp, EP_WR_WRITE_IMM, buf, len, va, imm);
}

/* Wait until our writes are acknowledged and @p expected completions with @p imm arrived. */
int
rg_wait(struct rg_state *st, uint32_t imm, uint32_t expected, const char *what)
{
	struct rg_imm *e = &st->seen[imm % RG_IMM_SLOTS];

	for (;;) {
		bool idle = true;
		uint32_t got;
		unsigned int q;

		for (q = 0; q < st->n_qp; q++) {
			const struct rg_ep *qp = &st->qps[q].ep;

			if (rg_ep_failed(qp)) {
				fprintf(stderr, "rocegen: QP 0x%x in the error state (retries "
					"exhausted)\n", rg_ep_qpn(qp));
				rg_dump_qps(st);
				return -1;
			}
			idle = idle && (!st->qps[q].requester || rg_ep_idle(qp));
		}
		if (imm == RG_IMM_DATA)	/* --proto: no data arrives before its CTS went out */
			got = (uint32_t)st->data_cqes;
		else
			got = e->imm == imm ? e->count : 0;
		if (idle && got >= expected) {
			if (got > expected)
				st->imm_unexpected += got - expected;
			if (imm == RG_IMM_DATA)
				st->data_cqes = 0;
			else
				e->count = 0;
			return 0;
		}
		if (st->imm_unexpected != 0) {
			fprintf(stderr, "rocegen: %" PRIu64 " completions with an unexpected "
				"immediate (processes running different schedules?)\n",
				st->imm_unexpected);
			return -1;
		}
		if (rg_timed_out(st)) {
			if (__atomic_load_n(&rg_failed, __ATOMIC_RELAXED))
				return -1;	/* another shard failed and said why */
			fprintf(stderr, "rocegen: gave up waiting for %s (immediate %u: %u of %u "
				"arrived)\n", what, imm, got, expected);
			rg_dump_qps(st);
			return -1;
		}
		rg_poll(st);
	}
}

/* A barrier over all processes: a 4-byte write with immediate to every other process. */
static int
rg_barrier(struct rg_state *st, const char *what)
{
	uint32_t imm = st->imm++;
	unsigned int q;

	for (q = 0; q < st->n_qp; q++) {
		struct rg_ep *qp = &st->qps[q].ep;

		if (st->qps[q].requester && st->qps[q].ctrl &&
		    rg_post(st, qp, st->ctrl_src, 4, 4 * st->proc, imm) != 0)
			return -1;
	}
	return rg_wait(st, imm, st->o.n_procs - 1, what);
}

/* dst += src over n floats, answering the wire now and then (the peers' timers run). */
static void
rg_add(struct rg_state *st, float *dst, const float *src, uint64_t n)
{
	uint64_t i;

	for (i = 0; i < n; i++) {
		dst[i] += src[i];
		if ((i & 0xFFFF) == 0xFFFF)
			rg_poll(st);
	}
}

/* The node model's intra-node time of step @p s: the largest number of bytes one of our ranks
 * sends to ranks of this process, over the fabric (0 without the model). */
static uint64_t
rg_step_intra_ns(const struct rg_state *st, unsigned int s)
{
	const struct rg_sched *sc = &st->sched;
	uint64_t out[RG_MAX_LOCAL] = { 0 }, most = 0;
	unsigned int nl = st->o.n_ranks, k;

	if (!st->o.node_on)
		return 0;
	for (k = sc->step_first[s]; k < sc->step_first[s + 1]; k++) {
		const struct rg_xfer *x = &sc->x[k];

		/* --pxn: a send across rails first crosses to the relay GPU */
		if (rg_is_local(st, x->src) &&
		    (rg_is_local(st, x->dst) || rg_wire_src(st, x->src, x->dst) != x->src))
			out[x->src % nl] += x->len;
	}
	for (k = 0; k < nl; k++)
		most = RTE_MAX(most, out[k]);
	/* --workers: the shards' parts cross the node's fabric at once, sharing it */
	return node_intra_ns(&st->o.node_eval, most * st->n_shards);
}

/* GDR off: the largest message one of our ranks puts on the wire in step @p s waits for the
 * GPU to write it into the host buffer (0 without the model or with GDR). */
static uint64_t
rg_step_stage_ns(const struct rg_state *st, unsigned int s)
{
	const struct rg_sched *sc = &st->sched;
	uint64_t most = 0;
	unsigned int k;

	if (!st->o.node_on || st->o.node.gdr)
		return 0;
	for (k = sc->step_first[s]; k < sc->step_first[s + 1]; k++) {
		const struct rg_xfer *x = &sc->x[k];

		if (rg_is_local(st, x->src) && !rg_is_local(st, x->dst))
			most = RTE_MAX(most, x->len);
	}
	return node_stage_ns(&st->o.node, most * st->n_shards);
}

/* Poll until @p ns of the step's time (wall clock since @p t0 less the CPU's own copies and
 * reductions, @p cpu) went by. */
static void
rg_hold_until(struct rg_state *st, uint64_t t0, uint64_t cpu, uint64_t ns)
{
	while (rg_now_ns(st) - t0 - cpu < ns && !rg_timed_out(st))
		rg_poll(st);
}

/*
 * One step: post our transfers (copies for local destinations), wait, apply what landed.
 * With the node model, the step's time (st->step_ns) leaves out what this CPU spends copying
 * and reducing (a GPU does that at hundreds of GB/s) and lasts at least the model's time for
 * its intra-node transfers; with GDR off its sends wait for their staging in host memory.
 */
static int
rg_step(struct rg_state *st, unsigned int s)
{
	const struct rg_sched *sc = &st->sched;
	unsigned int nl = st->o.n_ranks, nq = st->o.n_qps, q;
	uint32_t imm = st->imm++, k, expected = 0;
	uint64_t t0 = rg_now_ns(st), cpu = 0, t, intra = rg_step_intra_ns(st, s);
	char what[64];

	rg_hold_until(st, t0, 0, rg_step_stage_ns(st, s));
	if (st->o.proto != RG_PROTO_NONE) {
		int64_t n = rg_nccl_post_cts(st, s);

		if (n < 0)
			return -1;
		expected = (uint32_t)n;
		imm = RG_IMM_DATA;
	}
	for (k = sc->step_first[s]; k < sc->step_first[s + 1]; k++) {
		const struct rg_xfer *x = &sc->x[k];
		bool ls = rg_is_local(st, x->src), ld = rg_is_local(st, x->dst);
		uint64_t off, plen, seq;

		if (ls && ld) {
			t = rg_now_ns(st);
			memcpy(st->land[x->dst % nl] + x->land_off, st->data[x->src % nl] + x->src_off,
			       x->len);
			st->local_bytes += x->len;
			cpu += rg_now_ns(st) - t;
			continue;
		}
		if (st->o.proto != RG_PROTO_NONE) {
			if (ls && rg_nccl_send(st, x) != 0)
				return -1;
			continue;
		}
		/* the receiver only counts the parts: one (round robin) or the non-empty ones */
		seq = ls ? st->msg_seq[x->src * st->R + x->dst]++ : 0;
		for (q = 0; q < nq; q++) {
			rg_qp_share(x->len, nq, st->o.split, seq, q, &off, &plen);
			if (plen == 0)
				continue;
			if (ld) {
				expected++;
				continue;
			}
			if (!ls)
				continue;
			if (rg_post(st, rg_qp_lookup(st, rg_qpn(st, x->src, x->dst, q, false)),
				    st->data[x->src % nl] + x->src_off + off, plen,
				    x->land_off + off, imm) != 0)
				return -1;
			st->wire_bytes += plen;
		}
	}
	snprintf(what, sizeof(what), "step %u of %s", s, rg_coll_name(sc->coll));
	if (rg_wait(st, imm, expected, what) != 0)
		return -1;
	t = rg_now_ns(st);
	if (rg_nccl_land(st) != 0)
		return -1;
	for (k = sc->step_first[s]; k < sc->step_first[s + 1]; k++) {
		const struct rg_xfer *x = &sc->x[k];
		uint8_t *d, *l;

		if (!rg_is_local(st, x->dst) || x->kind == RG_LAND)
			continue;
		d = st->data[x->dst % nl] + x->dst_off;
		l = st->land[x->dst % nl] + x->land_off;
		if (x->kind == RG_COPY)
			memcpy(d, l, x->len);
		else
			rg_add(st, (float *)d, (const float *)l, x->len / 4);
	}
	cpu += rg_now_ns(st) - t;
	if (st->o.node_on) {
		rg_hold_until(st, t0, cpu, intra);
		st->step_ns += rg_now_ns(st) - t0 - cpu;
		st->intra_ns += intra;
	}
	return 0;
}

static void
rg_data_init(struct rg_state *st)
{
	const struct rg_sched *sc = &st->sched;
	uint64_t i, n = sc->size / 4;
	unsigned int k;

	for (k = 0; k < st->o.n_ranks; k++) {
		float *d = (float *)st->data[k];
		unsigned int g = st->proc * st->o.n_ranks + k;

		for (i = 0; i < n; i++)
			d[i] = rg_init_value(sc->coll, st->R, sc->root, sc->size, g, i);
	}
}

/* Bytes the wire must have placed into our ranks in one iteration. */
static uint64_t
rg_wire_in(const struct rg_state *st)
{
	const struct rg_sched *sc = &st->sched;
	uint64_t sum = 0;
	uint32_t k;

	for (k = 0; k < sc->n; k++)
		if (rg_is_local(st, sc->x[k].dst) && !rg_is_local(st, sc->x[k].src))
			sum += sc->x[k].len;
	return sum;
}

/* Clear the landing bitmaps at the end of an iteration: no peer writes to us again before our
 * barrier message, so the next iteration's first write finds them clear. */
static void
rg_bitmap_clear(struct rg_state *st)
{
	unsigned int k;

	for (k = 0; k < st->o.n_ranks; k++)
		memset(st->bitmap[k], 0, (st->sched_max.land_len[st->proc * st->o.n_ranks + k] /
					  64 + 1) * sizeof(uint64_t));
}

/* After the first iteration of a size: every rank's result, and every byte from the wire
 * placed (the landing bitmaps: wire writes never overlap within an iteration). */
static int
rg_verify(struct rg_state *st)
{
	const struct rg_sched *sc = &st->sched;
	uint64_t placed = 0, want = rg_wire_in(st), bad = 0, first, t0 = rg_now_ns(st);
	unsigned int k;
	char shard[32] = "";

	for (k = 0; k < st->o.n_ranks; k++) {
		unsigned int g = st->proc * st->o.n_ranks + k;
		uint64_t b = rg_sched_verify(sc, g, (const float *)st->data[k],
					     (const float *)st->land[k], &first);

		rg_poll(st);
		if (b != 0)
			fprintf(stderr, "rocegen: rank %u: %" PRIu64 " floats wrong (first at "
				"float %" PRIu64 ")\n", g, b, first);
		bad += b;
		placed += ep_bitmap_count(st->bitmap[k], 0, sc->land_len[g]);
	}
	/* the time it took is not in the table but is on the wire (before the end barrier) */
	/* one printf: shards on other lcores print too (stdio locks each call) */
	if (st->n_shards > 1)
		snprintf(shard, sizeof(shard), " [shard %u of %u]", st->shard, st->n_shards);
	printf("rocegen: verify %" PRIu64 " bytes: %s, %" PRIu64 " of %" PRIu64
	       " bytes placed from the wire (%.1f us, untimed)%s\n", sc->size,
	       bad ? "DATA MISMATCH" : "data ok", placed, want,
	       (double)(rg_now_ns(st) - t0) / 1e3, shard);
	return bad != 0 || placed != want ? -1 : 0;
}

/* Buffers for the largest size: data, landing area and its bitmap per local rank. */
int
rg_alloc(struct rg_state *st)
{
	unsigned int k;

	for (k = 0; k < st->o.n_ranks; k++) {
		unsigned int g = st->proc * st->o.n_ranks + k;
		uint64_t land = st->sched_max.land_len[g];

		st->data[k] = calloc(1, st->sched_max.size);
		st->land[k] = calloc(1, land + 64);
		st->bitmap[k] = calloc(land / 64 + 1, sizeof(uint64_t));
		if (st->data[k] == NULL || st->land[k] == NULL || st->bitmap[k] == NULL) {
			fprintf(stderr, "rocegen: out of memory for rank %u's buffers (%" PRIu64
				" + %" PRIu64 " bytes)\n", g, st->sched_max.size, land);
			return -1;
		}
	}
	return 0;
}

int
rg_build(const struct rg_state *st, struct rg_sched *s, uint64_t size)
{
	if (st->o.algo == RG_ALGO_HIER)
		return rg_sched_build_hier(s, st->R, st->o.n_ranks, size);
	return rg_sched_build(s, st->o.coll, st->o.algo, st->R, st->o.root, size);
}

int
rg_run(struct rg_state *st)
{
	unsigned int total = st->o.warmup + st->o.iters, it, s;
	uint64_t size, t_iter, timed, intra;

	if (rg_barrier(st, "the start-up handshake (every process up)") != 0)
		return -1;
	if (st->shard == 0)
		printf("rocegen: all %u processes up\n", st->o.n_procs);
	fflush(stdout);
	for (size = st->o.min_size; size <= st->o.size && st->n_rows < RG_MAX_ROWS;
	     size *= st->o.factor) {
		rg_sched_free(&st->sched);
		/* --workers: this shard's part; the row is the sum of the parts */
		if (rg_build(st, &st->sched, rg_shard_part(size, st->R, st->shard,
							   st->n_shards)) != 0) {
			fprintf(stderr, "rocegen: cannot build the schedule for %" PRIu64 " bytes\n",
				size);
			return -1;
		}
		rg_data_init(st);
		timed = 0;
		intra = 0;
		for (it = 0; it < total; it++) {
			st->timing = it >= st->o.warmup;	/* cycles_per_frame: timed only */
			t_iter = rg_now_ns(st);
			st->step_ns = 0;
			st->intra_ns = 0;
			for (s = 0; s < st->sched.n_steps; s++)
				if (rg_step(st, s) != 0)
					return -1;
			if (it >= st->o.warmup) {
				/* the node model: the steps' own times (rg_step) */
				timed += st->o.node_on ? st->step_ns : rg_now_ns(st) - t_iter;
				intra += st->intra_ns;
			}
			if (it == 0 && rg_verify(st) != 0)
				return -1;
			rg_bitmap_clear(st);
			t_iter = rg_now_ns(st);
			if (rg_barrier(st, "the end-of-iteration barrier") != 0)
				return -1;
			if (it >= st->o.warmup)
				timed += rg_now_ns(st) - t_iter;
		}
		st->row_sizes[st->n_rows] = st->sched.size;	/* merged by main.c */
		st->row_intra_us[st->n_rows] = (double)intra / 1e3 / st->o.iters;
		st->row_us[st->n_rows++] = (double)timed / 1e3 / st->o.iters;
	}
	return 0;
}
