/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * NCCL's net/IB wire pattern (--proto; NODE.md 1, NVIDIA/nccl 2.30 transport/net_ib/p2p.cc):
 * a transfer between ranks of different processes goes as NCCL messages of at most the
 * protocol's largest size (ring all-reduce/all-gather/reduce-scatter Simple: 2 steps of
 * NCCL_BUFFSIZE / NCCL_STEPS = 1 MiB; tree and broadcast Simple 512 KiB; p2p and all-to-all
 * NCCL_P2P_NET_CHUNKSIZE 128 KiB; LL 32 KiB of data, LL128 576,000 bytes of data). For each
 * message the receiver first writes a 64-byte clear-to-send element {addr, size, rkeys[8],
 * nreqs, tag, idx} into slot idx mod 256 of the sender's CTS FIFO (an RDMA WRITE on the same
 * QP pair, reverse direction); the sender waits for it, then sends the data and its
 * completion as one RDMA WRITE with immediate, the immediate holding the size. With
 * --split-data-on-qps 1 each message is cut over the QPs (one WRITE with immediate each, the
 * CTS on the first); with 0 whole messages go round robin, CTS and data on the same QP.
 * LL and LL128 messages go in NCCL's line formats (include/device.h): LL 16-byte lines
 * {data1, flag, data2, flag} (8 data bytes a line: 50 % of the wire is data), LL128
 * 128-byte lines of 15 data words and a flag word (120 of 128 bytes, 93.75 %); the receiver
 * checks every line's flag (the message's index) and decodes. --adaptive-routing 1: a message
 * over NCCL_IB_AR_THRESHOLD (8192) goes as an RDMA WRITE of the data and a 0-byte RDMA WRITE
 * with immediate (the size), two WRs on the same QP, as NCCL does on InfiniBand.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rg_main.h"

const char *
rg_proto_name(enum rg_proto p)
{
	static const char *const names[] = { "none", "simple", "ll128", "ll" };

	return p <= RG_PROTO_LL ? names[p] : "?";
}

uint64_t
rg_nccl_max_msg(const struct rg_state *st)
{
	switch (st->o.proto) {
	case RG_PROTO_LL:
		return 32 * 1024;	/* 64 KiB on the wire, half of it flags */
	case RG_PROTO_LL128:
		return 576000;		/* 614,400 B on the wire, 120 of 128 bytes data */
	default:
		break;
	}
	switch (st->o.coll) {
	case RG_COLL_P2P:
	case RG_COLL_ALLTOALL:
	case RG_COLL_INCAST:
		return 128 * 1024;	/* NCCL_P2P_NET_CHUNKSIZE */
	case RG_COLL_BROADCAST:
		return 512 * 1024;	/* one step */
	default:
		/* ring: chunkSteps 2 x 512 KiB; tree: 1 step */
		return st->o.coll == RG_COLL_ALLREDUCE && st->o.algo == RG_ALGO_TREE ?
		       512 * 1024 : 1024 * 1024;
	}
}

/* The QP that carries message @p idx's CTS (and its data, without split): round robin by
 * message (rg_qp_share), as NCCL's qpIndex; split: the first. Messages count from 1. */
static unsigned int
rg_nccl_cts_qp(const struct rg_state *st, uint64_t idx)
{
	return st->o.split ? 0 : (unsigned int)((idx - 1) % st->o.n_qps);
}

/* Message @p m of transfer @p x: [*off, *off + *len) of it. */
static void
rg_nccl_msg(const struct rg_state *st, const struct rg_xfer *x, uint64_t m, uint64_t *off,
	    uint64_t *len)
{
	uint64_t max = rg_nccl_max_msg(st);

	*off = m * max;
	*len = x->len - *off < max ? x->len - *off : max;
}

static uint64_t
rg_nccl_n_msgs(const struct rg_state *st, const struct rg_xfer *x)
{
	uint64_t max = rg_nccl_max_msg(st);

	return (x->len + max - 1) / max;
}

/* Wire bytes of a message of @p len data bytes in the protocol's line format. */
static uint64_t
rg_nccl_wire_len(const struct rg_state *st, uint64_t len)
{
	if (st->o.proto == RG_PROTO_LL)
		return (len + 7) / 8 * 16;
	if (st->o.proto == RG_PROTO_LL128)
		return (len + 119) / 120 * 128;
	return len;
}

int
rg_nccl_alloc(struct rg_state *st)
{
	unsigned int k;

	if (st->o.proto != RG_PROTO_LL && st->o.proto != RG_PROTO_LL128)
		return 0;
	/* a step's messages at most: LL 2x, LL128 128/120 + a line per message of >= 64 B */
	st->ll_tx_len = 4 * st->o.n_ranks * st->sched_max.size + 4096;
	st->ll_tx = calloc(1, st->ll_tx_len);
	for (k = 0; k < st->o.n_ranks; k++) {
		st->ll_rx_len[k] = 4 * st->sched_max.land_len[st->proc * st->o.n_ranks + k] + 4096;
		st->ll_rx[k] = calloc(1, st->ll_rx_len[k]);
		if (st->ll_rx[k] == NULL)
			break;
	}
	if (st->ll_tx == NULL || k < st->o.n_ranks) {
		fprintf(stderr, "rocegen: out of memory for --proto %s's line buffers\n",
			rg_proto_name(st->o.proto));
		return -1;
	}
	return 0;
}

void
rg_nccl_free(struct rg_state *st)
{
	unsigned int k;

	free(st->ll_tx);
	st->ll_tx = NULL;
	for (k = 0; k < RG_MAX_LOCAL; k++) {
		free(st->ll_rx[k]);
		st->ll_rx[k] = NULL;
	}
	free(st->ll_pend);
	st->ll_pend = NULL;
}

/* Encode @p len data bytes into lines at @p w, every flag @p flag. */
static void
rg_ll_encode(const struct rg_state *st, uint8_t *w, const uint8_t *d, uint64_t len,
	     uint64_t flag)
{
	uint32_t f32 = (uint32_t)flag;
	uint64_t i, n;

	if (st->o.proto == RG_PROTO_LL) {
		for (i = 0; i < len; i += 8, w += 16) {
			memset(w, 0, 16);
			memcpy(w, d + i, len - i < 4 ? len - i : 4);
			memcpy(w + 4, &f32, 4);
			if (len - i > 4)
				memcpy(w + 8, d + i + 4, len - i - 4 < 4 ? len - i - 4 : 4);
			memcpy(w + 12, &f32, 4);
		}
		return;
	}
	for (i = 0; i < len; i += 120, w += 128) {
		n = len - i < 120 ? len - i : 120;
		memset(w, 0, 128);
		memcpy(w, d + i, n);
		memcpy(w + 120, &flag, 8);	/* element 15 */
	}
}

/* Decode; false if a line's flag is not @p flag. */
static bool
rg_ll_decode(const struct rg_state *st, uint8_t *d, const uint8_t *w, uint64_t len,
	     uint64_t flag)
{
	uint32_t f1, f2;
	uint64_t i, n, f;

	if (st->o.proto == RG_PROTO_LL) {
		for (i = 0; i < len; i += 8, w += 16) {
			memcpy(&f1, w + 4, 4);
			memcpy(&f2, w + 12, 4);
			if (f1 != (uint32_t)flag || f2 != (uint32_t)flag)
				return false;
			memcpy(d + i, w, len - i < 4 ? len - i : 4);
			if (len - i > 4)
				memcpy(d + i + 4, w + 8, len - i - 4 < 4 ? len - i - 4 : 4);
		}
		return true;
	}
	for (i = 0; i < len; i += 120, w += 128) {
		n = len - i < 120 ? len - i : 120;
		memcpy(&f, w + 120, 8);
		if (f != flag)
			return false;
		memcpy(d + i, w, n);
	}
	return true;
}

int
rg_nccl_land(struct rg_state *st)
{
	uint32_t i;

	for (i = 0; i < st->ll_n_pend; i++) {
		const struct rg_ll_msg *m = &st->ll_pend[i];

		if (!rg_ll_decode(st, st->land[m->lr] + m->land_off, st->ll_rx[m->lr] + m->wire_off,
				  m->len, m->flag)) {
			fprintf(stderr, "rocegen: --proto %s: a line of message %" PRIu64 " to rank "
				"%u has a wrong flag\n", rg_proto_name(st->o.proto), m->flag, m->lr);
			return -1;
		}
		ep_bitmap_set(st->bitmap[m->lr], m->land_off, m->len);
	}
	st->ll_n_pend = 0;
	return 0;
}

static void
rg_put64(uint8_t *p, uint64_t v)
{
	memcpy(p, &v, 8);	/* host order, as ncclIbSendFifo is written */
}

static int
rg_nccl_pend(struct rg_state *st, unsigned int lr, uint64_t wire_off, uint64_t land_off,
	     uint64_t len, uint64_t flag)
{
	if (st->ll_n_pend == st->ll_cap_pend) {
		uint32_t cap = st->ll_cap_pend ? 2 * st->ll_cap_pend : 64;
		struct rg_ll_msg *p = realloc(st->ll_pend, cap * sizeof(*p));

		if (p == NULL) {
			fprintf(stderr, "rocegen: out of memory\n");
			return -1;
		}
		st->ll_pend = p;
		st->ll_cap_pend = cap;
	}
	st->ll_pend[st->ll_n_pend++] = (struct rg_ll_msg){ .lr = lr, .wire_off = wire_off,
							    .land_off = land_off, .len = len,
							    .flag = flag };
	return 0;
}

int64_t
rg_nccl_post_cts(struct rg_state *st, unsigned int s)
{
	const struct rg_sched *sc = &st->sched;
	uint64_t m, n, off, len, poff, plen, idx;
	int64_t expected = 0;
	unsigned int q, nq = st->o.n_qps;
	uint32_t k;
	bool ll = st->ll_tx != NULL;

	/* the previous step's messages are all acknowledged and decoded */
	st->ll_tx_used = 0;
	memset(st->ll_rx_used, 0, sizeof(st->ll_rx_used));
	for (k = sc->step_first[s]; k < sc->step_first[s + 1]; k++) {
		const struct rg_xfer *x = &sc->x[k];

		if (!rg_is_local(st, x->dst) || rg_is_local(st, x->src))
			continue;
		n = rg_nccl_n_msgs(st, x);
		for (m = 0; m < n; m++) {
			struct rg_qp *cq;
			struct rg_ep *ep;
			uint8_t *e;

			uint64_t addr, wlen;

			rg_nccl_msg(st, x, m, &off, &len);
			idx = ++st->nccl_msgs[x->src * st->R + x->dst];
			addr = x->land_off + off;
			wlen = rg_nccl_wire_len(st, len);
			if (ll) {
				unsigned int lr = x->dst % st->o.n_ranks;

				if (rg_nccl_pend(st, lr, st->ll_rx_used[lr], addr, len, idx) != 0)
					return -1;
				addr = st->ll_rx_used[lr];
				st->ll_rx_used[lr] += wlen;
			}
			for (q = 0; q < nq; q++) {
				rg_qp_share(wlen, nq, st->o.split, idx - 1, q, &poff, &plen);
				expected += plen > 0;
			}
			/* the responder of the pair's QP sends it back to the sender's FIFO */
			ep = rg_qp_lookup(st, rg_qpn(st, x->src, x->dst, rg_nccl_cts_qp(st, idx),
						     true));
			cq = (struct rg_qp *)(void *)ep;	/* ep is rg_qp's first member */
			e = cq->cts + (idx % RG_CTS_SLOTS) * RG_CTS_BYTES;
			memset(e, 0, RG_CTS_BYTES);
			rg_put64(e, addr);			/* addr */
			rg_put64(e + 8, wlen);			/* size */
			e[48] = 1;				/* nreqs (rkeys[8] at 16) */
			rg_put64(e + 56, idx);			/* idx (tag at 52) */
			if (rg_post_op(st, ep, EP_WR_WRITE, e, RG_CTS_BYTES,
				       (idx % RG_CTS_SLOTS) * RG_CTS_BYTES, 0) != 0)
				return -1;
			st->cts_posted++;
		}
	}
	return expected;
}

/* Poll until the CTS of message @p idx is in @p fifo. */
static int
rg_nccl_wait_cts(struct rg_state *st, const uint8_t *fifo, uint64_t idx, uint64_t len,
		 uint64_t *addr)
{
	const uint8_t *e = fifo + (idx % RG_CTS_SLOTS) * RG_CTS_BYTES;
	uint64_t got_idx, got_len;

	for (;;) {
		memcpy(&got_idx, e + 56, 8);
		memcpy(&got_len, e + 8, 8);
		memcpy(addr, e, 8);
		if (got_idx == idx) {
			if (got_len != len) {
				fprintf(stderr, "rocegen: CTS %" PRIu64 " asks for %" PRIu64
					" bytes, the message has %" PRIu64 " (processes running "
					"different schedules?)\n", idx, got_len, len);
				return -1;
			}
			return 0;
		}
		if (rg_timed_out(st)) {
			fprintf(stderr, "rocegen: gave up waiting for the CTS of message %" PRIu64
				"\n", idx);
			return -1;
		}
		rg_poll(st);
	}
}

int
rg_nccl_send(struct rg_state *st, const struct rg_xfer *x)
{
	unsigned int nl = st->o.n_ranks, nq = st->o.n_qps, q;
	uint64_t m, n = rg_nccl_n_msgs(st, x), off, len, poff, plen, idx;

	for (m = 0; m < n; m++) {
		const uint8_t *src;
		struct rg_ep *cts_ep;
		uint64_t wlen, addr;

		rg_nccl_msg(st, x, m, &off, &len);
		idx = ++st->nccl_msgs[x->src * st->R + x->dst];
		wlen = rg_nccl_wire_len(st, len);
		src = st->data[x->src % nl] + x->src_off + off;
		if (st->ll_tx != NULL) {	/* in lines, flagged with the message's index */
			rg_ll_encode(st, st->ll_tx + st->ll_tx_used, src, len, idx);
			src = st->ll_tx + st->ll_tx_used;
			st->ll_tx_used += wlen;
		}
		cts_ep = rg_qp_lookup(st, rg_qpn(st, x->src, x->dst, rg_nccl_cts_qp(st, idx), false));
		if (rg_nccl_wait_cts(st, ((struct rg_qp *)(void *)cts_ep)->cts, idx, wlen,
				     &addr) != 0)
			return -1;
		for (q = 0; q < nq; q++) {
			rg_qp_share(wlen, nq, st->o.split, idx - 1, q, &poff, &plen);
			if (plen == 0)
				continue;
			struct rg_ep *ep = rg_qp_lookup(st, rg_qpn(st, x->src, x->dst, q, false));

			/* where the CTS said, as NCCL's sender does; with adaptive routing and a
			 * message over the threshold, the data as a plain WRITE and the completion
			 * as a 0-byte WRITE with immediate after it (ncclIbMultiSend) */
			if (st->o.ar && wlen > st->o.ar_threshold) {
				if (rg_post_op(st, ep, EP_WR_WRITE, src + poff, plen, addr + poff,
					       0) != 0 ||
				    rg_post_op(st, ep, EP_WR_WRITE_IMM, src + poff, 0,
					       addr + poff + plen, (uint32_t)plen) != 0)
					return -1;
				st->ar_imm_posted++;
			} else if (rg_post_op(st, ep, EP_WR_WRITE_IMM, src + poff, plen,
					      addr + poff, (uint32_t)plen) != 0) {
				return -1;
			}
			st->wire_bytes += plen;
			st->nccl_msgs_posted++;
		}
	}
	return 0;
}
