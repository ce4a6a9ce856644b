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
 * Not done: LL/LL128's line formats (flags in the data: their wire efficiency), adaptive
 * routing's WRITE + 0-byte WRITE_WITH_IMM (the endpoint has no 0-byte writes).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
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

static void
rg_put64(uint8_t *p, uint64_t v)
{
	memcpy(p, &v, 8);	/* host order, as ncclIbSendFifo is written */
}

int64_t
rg_nccl_post_cts(struct rg_state *st, unsigned int s)
{
	const struct rg_sched *sc = &st->sched;
	uint64_t m, n, off, len, poff, plen, idx;
	int64_t expected = 0;
	unsigned int q, nq = st->o.n_qps;
	uint32_t k;

	for (k = sc->step_first[s]; k < sc->step_first[s + 1]; k++) {
		const struct rg_xfer *x = &sc->x[k];

		if (!rg_is_local(st, x->dst) || rg_is_local(st, x->src))
			continue;
		n = rg_nccl_n_msgs(st, x);
		for (m = 0; m < n; m++) {
			struct rg_qp *cq;
			struct rg_ep *ep;
			uint8_t *e;

			rg_nccl_msg(st, x, m, &off, &len);
			idx = ++st->nccl_msgs[x->src * st->R + x->dst];
			for (q = 0; q < nq; q++) {
				rg_qp_share(len, nq, st->o.split, idx - 1, q, &poff, &plen);
				expected += plen > 0;
			}
			/* the responder of the pair's QP sends it back to the sender's FIFO */
			ep = rg_qp_lookup(st, rg_qpn(st, x->src, x->dst, rg_nccl_cts_qp(st, idx),
						     true));
			cq = (struct rg_qp *)(void *)ep;	/* ep is rg_qp's first member */
			e = cq->cts + (idx % RG_CTS_SLOTS) * RG_CTS_BYTES;
			memset(e, 0, RG_CTS_BYTES);
			rg_put64(e, x->land_off + off);		/* addr */
			rg_put64(e + 8, len);			/* size */
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
rg_nccl_wait_cts(struct rg_state *st, const uint8_t *fifo, uint64_t idx, uint64_t len)
{
	const uint8_t *e = fifo + (idx % RG_CTS_SLOTS) * RG_CTS_BYTES;
	uint64_t got_idx, got_len;

	for (;;) {
		memcpy(&got_idx, e + 56, 8);
		memcpy(&got_len, e + 8, 8);
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
		struct rg_ep *cts_ep;

		rg_nccl_msg(st, x, m, &off, &len);
		idx = ++st->nccl_msgs[x->src * st->R + x->dst];
		cts_ep = rg_qp_lookup(st, rg_qpn(st, x->src, x->dst, rg_nccl_cts_qp(st, idx), false));
		if (rg_nccl_wait_cts(st, ((struct rg_qp *)(void *)cts_ep)->cts, idx, len) != 0)
			return -1;
		for (q = 0; q < nq; q++) {
			rg_qp_share(len, nq, st->o.split, idx - 1, q, &poff, &plen);
			if (plen == 0)
				continue;
			if (rg_post_op(st, rg_qp_lookup(st, rg_qpn(st, x->src, x->dst, q, false)),
				       EP_WR_WRITE_IMM, st->data[x->src % nl] + x->src_off + off + poff,
				       plen, x->land_off + off + poff, (uint32_t)plen) != 0)
				return -1;
			st->wire_bytes += plen;
			st->nccl_msgs_posted++;
		}
	}
	return 0;
}
