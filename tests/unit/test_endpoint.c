/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lib/endpoint: two RC QPs wired back to back in memory on a virtual clock. A step moves every
 * frame A may send to B (dropping the first transmission of chosen PSNs, CE-marking data when
 * asked), then every frame B may send back to A. Expectations come from an independent
 * go-back-N round model and from the DCQCN numbers of docs/wire.md.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "lib/endpoint/ep_qp.h"

#define MB (1u << 20)
#define MAX_DROPS 16

struct wire {
	struct ep_qp a, b;
	struct ep_pfc pfc_a;
	uint64_t now;
	uint32_t base_psn;
	uint32_t drops[MAX_DROPS];	/* offsets from base_psn, first transmission only */
	bool dropped[MAX_DROPS];
	unsigned int n_drops;
	uint64_t ce_until_ns;		/* CE-mark A's data before this time */
	uint64_t cnp_times[4096];
	unsigned int n_cnps;
	uint64_t a_tx_data_bytes_after;	/* data frame bytes A sent since mark_ns */
	uint64_t mark_ns;
	bool ref_on;			/* replay A's sends and CNPs into a reference RP */
	struct dcqcn_rp ref;
	double rate_at_40us, ref_at_40us;
	uint8_t *src;
	uint8_t *dst;
	uint64_t *bitmap;
	uint32_t loss_ppm;		/* random loss of every frame, both ways */
	uint64_t rng;
	uint64_t lost;
};

static bool
wire_rand_loss(struct wire *w)
{
	if (w->loss_ppm == 0)
		return false;
	w->rng ^= w->rng >> 12;
	w->rng ^= w->rng << 25;
	w->rng ^= w->rng >> 27;
	if ((w->rng * 2685821657736338717ULL >> 32) % 1000000 < w->loss_ppm) {
		w->lost++;
		return true;
	}
	return false;
}

static uint8_t frame[8192];

static void
wire_cfg(struct ep_qp_cfg *c, uint32_t qpn, uint32_t dest, uint32_t mtu)
{
	static const uint8_t mac_a[6] = { 2, 0, 0, 0, 0, 1 }, mac_b[6] = { 2, 0, 0, 0, 0, 2 };
	static const uint8_t ip_a[4] = { 10, 0, 0, 1 }, ip_b[4] = { 10, 0, 0, 2 };

	ep_qp_cfg_default(c);
	c->qpn = qpn;
	c->dest_qpn = dest;
	c->mtu = mtu;
	c->window_bytes = 64ULL * mtu;
	c->timeout = 4; /* 65.5 us */
	memcpy(c->src_mac, qpn == 0x11 ? mac_a : mac_b, 6);
	memcpy(c->dst_mac, qpn == 0x11 ? mac_b : mac_a, 6);
	memcpy(c->src_ip, qpn == 0x11 ? ip_a : ip_b, 4);
	memcpy(c->dst_ip, qpn == 0x11 ? ip_b : ip_a, 4);
}

static struct wire *
wire_new(uint32_t mtu, uint32_t psn, bool dcqcn, uint32_t size)
{
	struct wire *w = calloc(1, sizeof(*w));
	struct ep_qp_cfg ca, cb;
	uint32_t i;

	assert_non_null(w);
	w->src = malloc(size);
	w->dst = calloc(1, size);
	w->bitmap = calloc(size / 64 + 1, sizeof(uint64_t));
	assert_non_null(w->src);
	for (i = 0; i < size; i++)
		w->src[i] = (uint8_t)(i * 7 + (i >> 10));
	w->base_psn = psn;
	ep_pfc_init(&w->pfc_a, 100000.0);
	wire_cfg(&ca, 0x11, 0x22, mtu);
	wire_cfg(&cb, 0x22, 0x11, mtu);
	ca.sq_psn = psn;
	cb.rq_psn = psn;
	ca.dcqcn_enabled = dcqcn;
	cb.dcqcn_enabled = dcqcn;
	cb.mr = w->dst;
	cb.mr_len = size;
	cb.placed_bitmap = w->bitmap;
	assert_int_equal(ep_qp_init(&w->a, &ca, &w->pfc_a, 0), 0);
	assert_int_equal(ep_qp_init(&w->b, &cb, NULL, 0), 0);
	return w;
}

static void
wire_free(struct wire *w)
{
	free(w->src);
	free(w->dst);
	free(w->bitmap);
	free(w);
}

static bool
wire_drop(struct wire *w, uint32_t psn)
{
	unsigned int i;

	for (i = 0; i < w->n_drops; i++) {
		if (!w->dropped[i] && ((w->base_psn + w->drops[i]) & EP_PSN_MASK) == psn) {
			w->dropped[i] = true;
			return true;
		}
	}
	return false;
}

static void
wire_step(struct wire *w)
{
	struct roce_pkt p;
	int len;

	while ((len = ep_qp_tx(&w->a, w->now, frame, sizeof(frame))) > 0) {
		assert_int_equal(roce_parse(frame, (uint32_t)len, ROCE_UDP_PORT, &p),
				 ROCE_CLASS_ROCEV2);
		assert_true(roce_icrc_verify(frame, (uint32_t)len, &p));
		assert_int_equal(p.dscp, 26);
		if (p.opcode <= ROCE_OP_RDMA_WRITE_ONLY_WITH_IMMEDIATE) {
			assert_int_equal(p.ecn, 2); /* ECT(0) */
			if (w->now >= w->mark_ns)
				w->a_tx_data_bytes_after += (uint64_t)len + EP_FRAME_OVERHEAD;
			if (w->ref_on)
				dcqcn_rp_on_bytes(&w->ref, &w->a.cfg.dcqcn, (uint64_t)len, w->now);
			if (wire_drop(w, p.psn))
				continue;
		}
		if (wire_rand_loss(w))
			continue;
		if (p.opcode <= ROCE_OP_RDMA_WRITE_ONLY_WITH_IMMEDIATE) {
			if (w->now < w->ce_until_ns)
				assert_int_equal(roce_set_ecn(frame, &p, 3), 0);
		}
		ep_qp_rx(&w->b, frame, (uint32_t)len, &p, w->now);
	}
	assert_true(len == 0);
	while ((len = ep_qp_tx(&w->b, w->now, frame, sizeof(frame))) > 0) {
		assert_int_equal(roce_parse(frame, (uint32_t)len, ROCE_UDP_PORT, &p),
				 ROCE_CLASS_ROCEV2);
		assert_true(roce_icrc_verify(frame, (uint32_t)len, &p));
		if (p.opcode == ROCE_OPCODE_CNP) {
			assert_int_equal(p.dest_qp, 0x11);
			assert_int_equal(p.dscp, 48);
			if (w->n_cnps < 4096)
				w->cnp_times[w->n_cnps++] = w->now;
			if (w->ref_on)
				dcqcn_rp_on_cnp(&w->ref, &w->a.cfg.dcqcn, w->now);
		}
		if (wire_rand_loss(w))
			continue;
		ep_qp_rx(&w->a, frame, (uint32_t)len, &p, w->now);
	}
	assert_true(len == 0);
}

/* Post one WRITE_WITH_IMM of size bytes and step until it completes on both sides. */
static void
wire_write(struct wire *w, uint32_t size, uint64_t step_ns, uint64_t limit_ns)
{
	struct ep_wr wr = { .wr_id = 7, .op = EP_WR_WRITE_IMM, .local = w->src, .len = size,
			    .remote_va = 0, .rkey = 0x1234, .imm = 0xABCD };
	struct ep_cqe c;
	int got_sq = 0, got_rq = 0;

	assert_int_equal(ep_qp_post(&w->a, &wr), 0);
	while ((!got_sq || !got_rq) && w->now < limit_ns) {
		wire_step(w);
		if (ep_qp_poll_sq(&w->a, &c)) {
			assert_int_equal(c.wr_id, 7);
			got_sq++;
		}
		if (ep_qp_poll_rq(&w->b, &c)) {
			assert_int_equal(c.len, size);
			assert_int_equal(c.imm, 0xABCD);
			assert_true(c.has_imm);
			got_rq++;
		}
		w->now += step_ns;
	}
	assert_int_equal(got_sq, 1);
	assert_int_equal(got_rq, 1);
	assert_true(ep_qp_idle(&w->a));
	assert_int_equal(w->a.state, EP_QP_RTS);
	/* every byte placed, once, with the right value */
	assert_int_equal(ep_bitmap_count(w->bitmap, 0, size), size);
	assert_int_equal(w->b.ctrs[EP_CTR_RX_PLACED_BYTES], size);
	assert_memory_equal(w->src, w->dst, size);
}

static void
test_write_1mb(void **state)
{
	static const uint32_t mtus[] = { 1024, 4096 };
	unsigned int i;

	(void)state;
	for (i = 0; i < 2; i++) {
		struct wire *w = wire_new(mtus[i], 0xFFFFF0, false, MB); /* PSNs wrap */

		wire_write(w, MB, 1000, 100000000);
		assert_int_equal(w->a.ctrs[EP_CTR_TX_DATA_PKTS], MB / mtus[i]);
		assert_int_equal(w->a.ctrs[EP_CTR_RETX_PKTS], 0);
		assert_int_equal(w->b.ctrs[EP_CTR_NAKS_SENT], 0);
		assert_int_equal(w->a.ctrs[EP_CTR_TIMEOUTS], 0);
		assert_int_equal(w->b.epsn, (0xFFFFF0 + MB / mtus[i]) & EP_PSN_MASK);
		/* coalesced ACKs: far fewer than packets */
		assert_true(w->b.ctrs[EP_CTR_ACKS_SENT] < MB / mtus[i] / 4);
		wire_free(w);
	}
}

/*
 * Go-back-N, by rounds: each step the requester sends [nxt, una + W), the responder accepts in
 * order, NAKs the first gap (once) or ACKs what it accepted; a step that sends nothing while
 * something is unacknowledged ends in a timeout, which goes back to una.
 */
static void
gbn_model(uint32_t n, uint32_t w, const uint32_t *drops, unsigned int nd, uint64_t *retx,
	  uint64_t *naks, uint64_t *timeouts)
{
	bool used[MAX_DROPS] = { false };
	uint32_t una = 0, nxt = 0, max = 0, psn, end, epsn;
	unsigned int i;
	bool gap;

	*retx = *naks = *timeouts = 0;
	while (una < n) {
		end = una + w < n ? una + w : n;
		if (nxt >= end) {
			(*timeouts)++;
			nxt = una;
			continue;
		}
		epsn = una;
		gap = false;
		for (psn = nxt; psn < end; psn++) {
			bool lost = false;

			if (psn < max)
				(*retx)++;
			for (i = 0; i < nd; i++)
				if (!used[i] && drops[i] == psn) {
					used[i] = true;
					lost = true;
					break;
				}
			if (lost || gap)
				continue;
			if (psn == epsn)
				epsn++;
			else
				gap = true;
		}
		if (end > max)
			max = end;
		if (gap) {
			(*naks)++;
			una = nxt = epsn;
		} else {
			una = epsn;
			nxt = end;
		}
	}
}

static void
check_drops(const uint32_t *drops, unsigned int nd, uint32_t psn)
{
	struct wire *w = wire_new(1024, psn, false, MB);
	uint64_t retx, naks, timeouts;

	memcpy(w->drops, drops, nd * sizeof(drops[0]));
	w->n_drops = nd;
	gbn_model(MB / 1024, 64, drops, nd, &retx, &naks, &timeouts);
	wire_write(w, MB, 1000, 100000000);
	print_message("drops %u: model retx %lu naks %lu timeouts %lu; got retx %lu naks %lu/%lu "
		      "timeouts %lu\n", nd, (unsigned long)retx, (unsigned long)naks,
		      (unsigned long)timeouts, (unsigned long)w->a.ctrs[EP_CTR_RETX_PKTS],
		      (unsigned long)w->b.ctrs[EP_CTR_NAKS_SENT],
		      (unsigned long)w->a.ctrs[EP_CTR_NAKS_RCVD],
		      (unsigned long)w->a.ctrs[EP_CTR_TIMEOUTS]);
	assert_int_equal(w->a.ctrs[EP_CTR_RETX_PKTS], retx);
	assert_int_equal(w->b.ctrs[EP_CTR_NAKS_SENT], naks);
	assert_int_equal(w->a.ctrs[EP_CTR_NAKS_RCVD], naks);
	assert_int_equal(w->a.ctrs[EP_CTR_TIMEOUTS], timeouts);
	assert_int_equal(w->a.ctrs[EP_CTR_TX_DATA_PKTS], MB / 1024 + retx);
	wire_free(w);
}

static void
test_gbn_nak(void **state)
{
	static const uint32_t one[] = { 100 };
	static const uint32_t several[] = { 5, 100, 300, 301, 640, 700 };

	(void)state;
	check_drops(one, 1, 0);
	/* round of 64..127 with 100 lost: 28 resent from the NAKed PSN */
	{
		uint64_t r, n, t;

		gbn_model(1024, 64, one, 1, &r, &n, &t);
		assert_int_equal(r, 28);
		assert_int_equal(n, 1);
		assert_int_equal(t, 0);
	}
	check_drops(several, 6, 0xFFFF00); /* and across the PSN wrap */
}

static void
test_timeout_last_packet(void **state)
{
	static const uint32_t last[] = { 1023 };
	struct wire *w;

	(void)state;
	check_drops(last, 1, 0);
	w = wire_new(1024, 0, false, MB);
	w->drops[0] = 1023;
	w->n_drops = 1;
	wire_write(w, MB, 1000, 100000000);
	assert_int_equal(w->a.ctrs[EP_CTR_TIMEOUTS], 1);
	assert_int_equal(w->a.ctrs[EP_CTR_RETX_PKTS], 1);
	assert_int_equal(w->b.ctrs[EP_CTR_NAKS_SENT], 0);
	/* recovered no earlier than one timeout (65.5 us) after the last packet went out */
	assert_true(w->now >= ep_timeout_ns(4));
	wire_free(w);
}

static void
test_retry_exhaustion(void **state)
{
	struct wire *w = wire_new(1024, 0, false, 64 * 1024);
	struct ep_wr wr = { .wr_id = 1, .op = EP_WR_WRITE, .local = w->src, .len = 64 * 1024 };
	unsigned int i;

	(void)state;
	w->a.cfg.retry_cnt = 3;
	for (i = 0; i < MAX_DROPS; i++)
		w->drops[i] = 63; /* the last packet, lost on every transmission up to 16 */
	w->n_drops = MAX_DROPS;
	assert_int_equal(ep_qp_post(&w->a, &wr), 0);
	while (w->a.state == EP_QP_RTS && w->now < 10000000) {
		wire_step(w);
		w->now += 1000;
	}
	assert_int_equal(w->a.state, EP_QP_ERROR);
	assert_int_equal(w->a.ctrs[EP_CTR_TIMEOUTS], 4); /* 3 retries, then the error */
	assert_int_equal(w->a.ctrs[EP_CTR_RETX_PKTS], 3);
	assert_int_equal(ep_qp_post(&w->a, &wr), -EIO);
	wire_free(w);
}

static void
test_dcqcn_cnp(void **state)
{
	struct dcqcn_params par;
	struct dcqcn_rp ref;
	struct wire *w = wire_new(1024, 0, true, 4 * MB);
	struct ep_wr wr = { .wr_id = 1, .op = EP_WR_WRITE, .local = w->src, .len = 4 * MB };
	struct ep_cqe c;
	double rate_after_first = 0, measured;
	unsigned int i, seen = 0;
	uint64_t t_end;

	(void)state;
	w->a.cfg.window_bytes = 4 * MB;
	w->b.cfg.window_bytes = 4 * MB;
	w->ce_until_ns = 40000;
	assert_int_equal(ep_qp_post(&w->a, &wr), 0);
	dcqcn_params_nvidia(&par, 100000.0);
	w->ref_on = true;
	dcqcn_rp_init(&w->ref, &par, 0);
	while (!ep_qp_poll_sq(&w->a, &c) && w->now < 100000000) {
		wire_step(w);
		if (w->a.rp.decreases == 1 && seen == 0) {
			rate_after_first = w->a.rp.rc_mbps;
			seen = 1;
		}
		if (w->now == 40000) {
			dcqcn_rp_advance(&w->ref, &par, w->now);
			dcqcn_rp_advance(&w->a.rp, &par, w->now);
			w->rate_at_40us = w->a.rp.rc_mbps;
			w->ref_at_40us = w->ref.rc_mbps;
		}
		if (w->now == 60000) {
			w->mark_ns = 60000;
			w->a_tx_data_bytes_after = 0;
		}
		if (w->now == 160000) {
			/* the sending rate over 100 us follows Rc (it only rises here) */
			measured = (double)w->a_tx_data_bytes_after * 8000.0 / 100000.0;
			print_message("Rc %.1f Mb/s at 160 us, measured %.1f Mb/s over "
				      "60..160 us\n",
				      w->a.rp.rc_mbps, measured);
			assert_true(measured <= w->a.rp.rc_mbps * 1.02 + 1000);
			assert_true(measured >= w->a.rp.rc_mbps * 0.5);
		}
		w->now += 100;
	}
	t_end = w->now;
	/* the first CNP's cut, one monitor period (4 us) later after 4 alpha decays:
	 * Rc = 100000 (1 - 1023/1024 (1019/1024)^4 / 2) */
	assert_true(fabs(rate_after_first - 51017.3146101629) < 1e-6);
	print_message("%u CNPs at", w->n_cnps);
	for (i = 0; i < w->n_cnps; i++)
		print_message(" %lu", (unsigned long)w->cnp_times[i]);
	print_message(" ns\n");
	/* CNPs paced at min_time_between_cnps (4 us) during the 40 us of CE marks */
	/* (fewer than 40 / 4 + 1 as the rate falls and CE packets come further apart) */
	assert_true(w->n_cnps >= 5 && w->n_cnps <= 11);
	assert_int_equal(w->b.ctrs[EP_CTR_RX_CE_PKTS],
			 w->b.ctrs[EP_CTR_CNPS_SENT] + w->b.ctrs[EP_CTR_CNPS_PACED]);
	for (i = 1; i < w->n_cnps; i++)
		assert_true(w->cnp_times[i] - w->cnp_times[i - 1] >= par.min_time_between_cnps_ns);
	assert_int_equal(w->b.ctrs[EP_CTR_CNPS_SENT], w->n_cnps);
	assert_int_equal(w->a.ctrs[EP_CTR_CNPS_RCVD], w->n_cnps);
	assert_true(w->b.ctrs[EP_CTR_CNPS_PACED] > 0);
	/* the rate fell: the decreases the model allows (one per 4 us monitor period) */
	assert_int_equal(w->a.rp.decreases, w->n_cnps);
	assert_true(w->rate_at_40us < 100000.0 / 8);
	/* and exactly as the model fed the same sends and CNPs at the same times */
	assert_true(fabs(w->rate_at_40us - w->ref_at_40us) < 1e-9);
	assert_true(fabs(w->a.rp.rc_mbps - w->ref.rc_mbps) < 1e-9);
	/* the model with the same CNP times and no byte counter would be lower or equal */
	dcqcn_rp_init(&ref, &par, 0);
	for (i = 0; i < w->n_cnps; i++)
		dcqcn_rp_on_cnp(&ref, &par, w->cnp_times[i]);
	dcqcn_rp_advance(&ref, &par, 40000); /* the cuts come at monitor-period boundaries */
	print_message("%u CNPs; Rc at 40 us %.1f (model without byte counter %.1f); Rc at "
		      "%lu ns %.1f, %lu byte-counter and %lu timer increases\n", w->n_cnps,
		      w->rate_at_40us, ref.rc_mbps, (unsigned long)t_end, w->a.rp.rc_mbps,
		      (unsigned long)w->a.rp.bc_events, (unsigned long)w->a.rp.t_events);
	assert_true(w->rate_at_40us >= ref.rc_mbps - 1e-6);
	assert_memory_equal(w->src, w->dst, 4 * MB);
	wire_free(w);
}

/* Data packets A sends in one wire_step at the current time. */
static uint64_t
wire_step_data(struct wire *w)
{
	uint64_t before = w->a.ctrs[EP_CTR_TX_DATA_PKTS];

	wire_step(w);
	return w->a.ctrs[EP_CTR_TX_DATA_PKTS] - before;
}

/*
 * The DCQCN pacer at 1 Gb/s (a 1 KB frame every 8.4 us): a QP that had nothing to send starts
 * its next message at Rc from now, with no burst of saved-up credit (at its first message
 * and after 10 ms idle); a backlogged QP that was not polled for 50 us catches up.
 */
static void
test_pacer_idle(void **state)
{
	struct wire *w = wire_new(1024, 0, true, 64 * 1024);
	struct ep_wr wr = { .op = EP_WR_WRITE, .local = w->src, .len = 32 * 1024 };
	struct ep_cqe c = { 0 };
	uint64_t n, first, msg;

	(void)state;
	dcqcn_params_nvidia(&w->a.cfg.dcqcn, 1000.0);
	dcqcn_rp_init(&w->a.rp, &w->a.cfg.dcqcn, 0);
	w->now = 5000000; /* 5 ms after the QP came up */
	for (msg = 0; msg < 2; msg++) {
		wr.wr_id = msg;
		assert_int_equal(ep_qp_post(&w->a, &wr), 0);
		first = wire_step_data(w);
		print_message("message %lu: %lu data packet(s) in its first poll\n",
			      (unsigned long)msg, (unsigned long)first);
		assert_int_equal(first, 1);
		w->now += 1000;
		n = 0;
		while (!ep_qp_poll_sq(&w->a, &c) && w->now < 20000000) {
			if (msg == 1 && w->a.ctrs[EP_CTR_TX_DATA_PKTS] == 40) {
				/* backlogged, not polled for 50 us: it catches up 5-6 frames */
				w->now += 50000;
				n = wire_step_data(w);
				print_message("after 50 us unpolled: %lu packets\n", (unsigned long)n);
				assert_true(n >= 5 && n <= 7);
			} else {
				assert_true(wire_step_data(w) <= 1);
			}
			w->now += 1000;
		}
		assert_true(w->now < 20000000);
		assert_int_equal(c.wr_id, msg);
		assert_true(msg == 0 || n > 0);
		w->now += 10000000; /* 10 ms with nothing to send */
	}
	wire_free(w);
}

static void
test_pfc_pause(void **state)
{
	struct wire *w = wire_new(1024, 0, false, MB);
	uint16_t quanta[8] = { 0 };
	struct roce_pkt p;
	uint8_t pfc[64];
	uint64_t sent;
	int len;

	(void)state;
	quanta[3] = 0xFFFF; /* 335.5 us at 100G */
	len = roce_build_pfc(pfc, sizeof(pfc), w->b.cfg.src_mac, 1u << 3, quanta);
	assert_true(len > 0);
	assert_int_equal(roce_parse(pfc, (uint32_t)len, ROCE_UDP_PORT, &p),
			 ROCE_CLASS_MAC_CONTROL);
	{
		struct ep_wr wr = { .wr_id = 1, .op = EP_WR_WRITE, .local = w->src, .len = MB };

		assert_int_equal(ep_qp_post(&w->a, &wr), 0);
	}
	wire_step(w);
	sent = w->a.ctrs[EP_CTR_TX_DATA_PKTS];
	assert_true(sent > 0);
	ep_pfc_on_frame(&w->pfc_a, &p, w->now);
	for (w->now = 1000; w->now < 335000; w->now += 1000)
		wire_step(w);
	assert_int_equal(w->a.ctrs[EP_CTR_TX_DATA_PKTS], sent); /* paused */
	for (; w->now < 400000; w->now += 1000)
		wire_step(w);
	assert_true(w->a.ctrs[EP_CTR_TX_DATA_PKTS] > sent);
	assert_true(w->a.ctrs[EP_CTR_PAUSED_NS] >= 334000 && w->a.ctrs[EP_CTR_PAUSED_NS] <= 337000);
	wire_free(w);
}

/* SEND (placed one after the other from offset 0) and single-packet WRITE ONLY, in one queue */
static void
test_send_and_write_only(void **state)
{
	struct wire *w = wire_new(1024, 100, false, 64 * 1024);
	struct ep_wr wrs[] = {
		{ .wr_id = 1, .op = EP_WR_SEND_IMM, .local = w->src, .len = 3000, .imm = 11 },
		{ .wr_id = 2, .op = EP_WR_WRITE, .local = w->src + 5000, .len = 100,
		  .remote_va = 8192 },
		{ .wr_id = 3, .op = EP_WR_SEND, .local = w->src + 7000, .len = 10 },
		{ .wr_id = 4, .op = EP_WR_WRITE_IMM, .local = w->src + 9000, .len = 1024,
		  .remote_va = 16384, .imm = 44 },
	};
	static const uint8_t last_ops[] = { ROCE_OP_SEND_LAST_WITH_IMMEDIATE,
		ROCE_OP_RDMA_WRITE_ONLY, ROCE_OP_SEND_ONLY,
		ROCE_OP_RDMA_WRITE_ONLY_WITH_IMMEDIATE };
	static const uint32_t lens[] = { 3000, 100, 10, 1024 };
	struct ep_cqe c;
	unsigned int i, n_rq = 0, n_sq = 0;

	(void)state;
	for (i = 0; i < 4; i++)
		assert_int_equal(ep_qp_post(&w->a, &wrs[i]), 0);
	for (i = 0; i < 100 && (n_rq < 4 || n_sq < 4); i++) {
		wire_step(w);
		while (ep_qp_poll_rq(&w->b, &c)) {
			assert_int_equal(c.len, lens[n_rq]);
			assert_int_equal(c.opcode, last_ops[n_rq]);
			assert_int_equal(c.has_imm, n_rq == 0 || n_rq == 3);
			if (c.has_imm)
				assert_int_equal(c.imm, n_rq == 0 ? 11 : 44);
			n_rq++;
		}
		while (ep_qp_poll_sq(&w->a, &c))
			assert_int_equal(c.wr_id, ++n_sq);
		w->now += 1000;
	}
	assert_int_equal(n_rq, 4);
	assert_int_equal(n_sq, 4);
	assert_int_equal(w->a.ctrs[EP_CTR_TX_DATA_PKTS], 3 + 1 + 1 + 1);
	assert_memory_equal(w->dst, w->src, 3000);
	assert_memory_equal(w->dst + 3000, w->src + 7000, 10);
	assert_memory_equal(w->dst + 8192, w->src + 5000, 100);
	assert_memory_equal(w->dst + 16384, w->src + 9000, 1024);
	assert_int_equal(ep_bitmap_count(w->bitmap, 0, 64 * 1024), 3000 + 10 + 100 + 1024);
	wire_free(w);
}

/* NCCL's pattern under adaptive routing (NODE.md): the data as an RDMA WRITE, then a 0-byte
 * RDMA WRITE ONLY with immediate (one packet: BTH, RETH of DMA length 0, ImmDt, no payload)
 * whose completion, carrying the size, tells the receiver the data is there; a 0-byte WRITE
 * or SEND without an immediate is refused */
static void
test_zero_byte_write_imm(void **state)
{
	struct wire *w = wire_new(1024, 7, false, 64 * 1024);
	struct ep_wr data = { .wr_id = 1, .op = EP_WR_WRITE, .local = w->src, .len = 20000,
			      .remote_va = 4096 };
	struct ep_wr imm = { .wr_id = 2, .op = EP_WR_WRITE_IMM, .local = w->src, .len = 0,
			     .remote_va = 4096 + 20000, .imm = 20000 };
	struct ep_wr bad = { .wr_id = 3, .op = EP_WR_WRITE, .local = w->src, .len = 0 };
	struct ep_cqe c;
	unsigned int i, n_rq = 0, n_sq = 0;

	(void)state;
	assert_int_equal(ep_qp_post(&w->a, &bad), -EINVAL);
	bad.op = EP_WR_SEND;
	assert_int_equal(ep_qp_post(&w->a, &bad), -EINVAL);
	assert_int_equal(ep_qp_post(&w->a, &data), 0);
	assert_int_equal(ep_qp_post(&w->a, &imm), 0);
	for (i = 0; i < 100 && (n_rq < 2 || n_sq < 2); i++) {
		wire_step(w);
		while (ep_qp_poll_rq(&w->b, &c)) {
			n_rq++;
			assert_int_equal(c.len, n_rq == 1 ? 20000 : 0);
			assert_int_equal(c.has_imm, n_rq == 2);
			assert_int_equal(c.opcode, n_rq == 1 ? ROCE_OP_RDMA_WRITE_LAST :
					 ROCE_OP_RDMA_WRITE_ONLY_WITH_IMMEDIATE);
			if (c.has_imm)
				assert_int_equal(c.imm, 20000);
		}
		while (ep_qp_poll_sq(&w->a, &c))
			assert_int_equal(c.wr_id, ++n_sq);
		w->now += 1000;
	}
	assert_int_equal(n_rq, 2);
	assert_int_equal(n_sq, 2);
	/* 20 packets of data and the empty one; its PSN counted like any other */
	assert_int_equal(w->a.ctrs[EP_CTR_TX_DATA_PKTS], 20 + 1);
	assert_int_equal(w->a.ctrs[EP_CTR_TX_PAYLOAD_BYTES], 20000);
	assert_int_equal(w->b.epsn, 7 + 21);
	assert_int_equal(w->b.ctrs[EP_CTR_RX_PLACED_BYTES], 20000);
	assert_memory_equal(w->dst + 4096, w->src, 20000);
	assert_true(ep_qp_idle(&w->a));
	wire_free(w);
}

/* 1% random loss of data and ACKs/NAKs: 4 messages of 1 MB complete, every byte placed */
static void
test_random_loss(void **state)
{
	unsigned int seed;

	(void)state;
	for (seed = 1; seed <= 20; seed++) {
		struct wire *w = wire_new(1024, 0xFFF000, false, MB);
		unsigned int k;

		w->loss_ppm = 10000;
		w->rng = seed * 0x9E3779B97F4A7C15ULL;
		w->a.cfg.window_bytes = 256 * 1024;
		for (k = 0; k < 4; k++) {
			memset(w->bitmap, 0, (MB / 64 + 1) * sizeof(uint64_t));
			w->b.ctrs[EP_CTR_RX_PLACED_BYTES] = 0;
			wire_write(w, MB, 1000, w->now + 2000000000ULL);
		}
		print_message("seed %u: lost %lu, retx %lu, NAKs %lu, timeouts %lu\n", seed,
			      (unsigned long)w->lost, (unsigned long)w->a.ctrs[EP_CTR_RETX_PKTS],
			      (unsigned long)w->a.ctrs[EP_CTR_NAKS_RCVD],
			      (unsigned long)w->a.ctrs[EP_CTR_TIMEOUTS]);
		wire_free(w);
	}
}

/* A FIFO link with a delay and a frame budget per step, as a veth between two pollers is. */
#define LINK_SLOTS 8192
struct link {
	uint8_t (*frames)[1200];
	uint16_t lens[LINK_SLOTS];
	uint64_t due[LINK_SLOTS];
	uint32_t head, tail;
};

static void
link_push(struct link *l, const uint8_t *f, int len, uint64_t due)
{
	if (l->tail - l->head >= LINK_SLOTS)
		return; /* ring overflow: a loss like any other */
	memcpy(l->frames[l->tail % LINK_SLOTS], f, (size_t)len);
	l->lens[l->tail % LINK_SLOTS] = (uint16_t)len;
	l->due[l->tail % LINK_SLOTS] = due;
	l->tail++;
}

static void
link_deliver(struct wire *w, struct link *l, struct ep_qp *to, unsigned int budget)
{
	struct roce_pkt p;

	while (l->head != l->tail && l->due[l->head % LINK_SLOTS] <= w->now && budget-- > 0) {
		uint8_t *f = l->frames[l->head % LINK_SLOTS];
		uint32_t len = l->lens[l->head % LINK_SLOTS];

		l->head++;
		if (wire_rand_loss(w))
			continue;
		assert_int_equal(roce_parse(f, len, ROCE_UDP_PORT, &p), ROCE_CLASS_ROCEV2);
		ep_qp_rx(to, f, len, &p, w->now);
	}
}

static void
link_send(struct wire *w, struct link *l, struct ep_qp *from, unsigned int budget,
	  uint64_t delay_ns)
{
	int len;

	while (budget-- > 0 && (len = ep_qp_tx(from, w->now, frame, sizeof(frame))) > 0)
		link_push(l, frame, len, w->now + delay_ns);
}

/* Both ways at once over delayed FIFO links with 1% loss: the case the app hits on veth. */
static void
test_bidir_delay_loss(void **state)
{
	unsigned int seed;

	(void)state;
	for (seed = 1; seed <= 10; seed++) {
		struct wire *w = wire_new(1024, 0, false, 4 * MB);
		struct link *ab = calloc(1, sizeof(*ab)), *ba = calloc(1, sizeof(*ba));
		uint8_t *dst_a = calloc(1, 4 * MB);
		struct ep_wr wa = { .wr_id = 1, .op = EP_WR_WRITE_IMM, .local = w->src,
				    .len = 4 * MB };
		struct ep_wr wb = wa;
		struct ep_cqe c;
		int done = 0;

		ab->frames = malloc(LINK_SLOTS * sizeof(*ab->frames));
		ba->frames = malloc(LINK_SLOTS * sizeof(*ba->frames));
		w->a.cfg.mr = dst_a;
		w->a.cfg.mr_len = 4 * MB;
		w->a.cfg.placed_bitmap = NULL;
		w->a.cfg.window_bytes = w->b.cfg.window_bytes = 256 * 1024;
		w->a.cfg.timeout = w->b.cfg.timeout = 8; /* 1 ms */
		w->a.cfg.rq_psn = 0;
		w->b.cfg.sq_psn = 0;
		w->loss_ppm = 10000;
		w->rng = seed * 0x9E3779B97F4A7C15ULL;
		assert_int_equal(ep_qp_post(&w->a, &wa), 0);
		assert_int_equal(ep_qp_post(&w->b, &wb), 0);
		while (done < 4 && w->now < 20000000000ULL) {
			link_send(w, ab, &w->a, 4, 30000);
			link_send(w, ba, &w->b, 4, 30000);
			link_deliver(w, ab, &w->b, 4);
			link_deliver(w, ba, &w->a, 4);
			done += ep_qp_poll_sq(&w->a, &c) + ep_qp_poll_sq(&w->b, &c) +
				ep_qp_poll_rq(&w->a, &c) + ep_qp_poll_rq(&w->b, &c);
			assert_int_equal(w->a.state, EP_QP_RTS);
			assert_int_equal(w->b.state, EP_QP_RTS);
			w->now += 1000;
		}
		print_message("seed %u: done %d at %lu us, lost %lu, retx %lu/%lu, "
			      "timeouts %lu/%lu\n",
			      seed, done, (unsigned long)(w->now / 1000), (unsigned long)w->lost,
			      (unsigned long)w->a.ctrs[EP_CTR_RETX_PKTS],
			      (unsigned long)w->b.ctrs[EP_CTR_RETX_PKTS],
			      (unsigned long)w->a.ctrs[EP_CTR_TIMEOUTS],
			      (unsigned long)w->b.ctrs[EP_CTR_TIMEOUTS]);
		assert_int_equal(done, 4);
		assert_memory_equal(w->src, w->dst, 4 * MB);
		assert_memory_equal(w->src, dst_a, 4 * MB);
		free(ab->frames);
		free(ba->frames);
		free(ab);
		free(ba);
		free(dst_a);
		wire_free(w);
	}
}

/* ep_place (non-temporal stores from 1 KB up) writes exactly what memcpy writes, at every
 * alignment of source and destination, and nothing outside [dst, dst + len); ep_bitmap_set
 * sets exactly the bits of the range. */
static void
test_place_and_bitmap(void **state)
{
	static const uint64_t lens[] = { 0, 1, 15, 16, 17, 1023, 1024, 1025, 4096, 4099, 9000 };
	uint8_t *src = malloc(9100), *got = malloc(9200), *want = malloc(9200);
	uint64_t bm[160], i, k, off;
	unsigned int a, b;

	(void)state;
	assert_non_null(src);
	assert_non_null(got);
	assert_non_null(want);
	for (i = 0; i < 9100; i++)
		src[i] = (uint8_t)(i * 131 + 7);
	for (k = 0; k < sizeof(lens) / sizeof(lens[0]); k++)
		for (a = 0; a < 17; a += 3)
			for (b = 0; b < 17; b += 5) {
				memset(got, 0xAA, 9200);
				memset(want, 0xAA, 9200);
				ep_place(got + 32 + a, src + b, lens[k]);
				memcpy(want + 32 + a, src + b, lens[k]);
				assert_memory_equal(got, want, 9200);
			}
	for (off = 0; off < 130; off += 13)
		for (k = 0; k < 8; k++) {
			uint64_t len = lens[k] % 4000, n = 0;

			memset(bm, 0, sizeof(bm));
			ep_bitmap_set(bm, off, len);
			for (i = 0; i < 160 * 64; i++) {
				bool set = (bm[i >> 6] >> (i & 63)) & 1;

				assert_int_equal(set, i >= off && i < off + len);
				n += set;
			}
			assert_int_equal(n, len);
			assert_int_equal(ep_bitmap_count(bm, off, len), len);
		}
	free(src);
	free(got);
	free(want);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_write_1mb),
		cmocka_unit_test(test_gbn_nak),
		cmocka_unit_test(test_timeout_last_packet),
		cmocka_unit_test(test_retry_exhaustion),
		cmocka_unit_test(test_dcqcn_cnp),
		cmocka_unit_test(test_pacer_idle),
		cmocka_unit_test(test_pfc_pause),
		cmocka_unit_test(test_send_and_write_only),
		cmocka_unit_test(test_zero_byte_write_imm),
		cmocka_unit_test(test_random_loss),
		cmocka_unit_test(test_bidir_delay_loss),
		cmocka_unit_test(test_place_and_bitmap),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
