/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lib/endpoint's SRD-like transport (ep_srd.h) against RC (ep_qp.h) in one in-memory network on
 * a virtual clock: every step takes all the frames one side may send, drops some (seeded
 * Bernoulli, data and SACKs/ACKs apart), duplicates some, permutes them at random within
 * blocks of `reorder` frames, and hands them to the other side. SRD must complete with the
 * right data, retransmit exactly the dropped packets when no SACK is lost (no go-back-N),
 * spread its packets over its K paths; RC in the same network NAKs and goes back N even
 * without a single drop.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "lib/endpoint/ep_srd.h"

#define KB 1024u
#define MAX_BATCH 4096

struct end {
	bool srd;
	struct ep_qp qp;
	struct ep_srd s;
};

struct net {
	struct end a, b;	/* a sends, b receives */
	uint64_t now;
	uint8_t *src, *dst;
	uint64_t *bitmap;
	uint32_t size;
	uint32_t data_loss_ppm, ack_loss_ppm, dup_ppm, reorder;
	uint64_t rng;
	uint64_t data_dropped, acks_dropped, duplicated;
	uint64_t ce_until_ns;		/* CE-mark data before this time */
	uint32_t ports_seen[EP_SRD_MAX_PATHS];
	unsigned int n_ports;
};

static uint8_t *batch[MAX_BATCH];
static uint32_t batch_len[MAX_BATCH];

static uint64_t
net_rand(struct net *n)
{
	n->rng ^= n->rng >> 12;
	n->rng ^= n->rng << 25;
	n->rng ^= n->rng >> 27;
	return (n->rng * 2685821657736338717ULL) >> 16;
}

static bool
net_chance(struct net *n, uint32_t ppm)
{
	return ppm != 0 && net_rand(n) % 1000000 < ppm;
}

static void
end_cfg(struct ep_srd_cfg *c, bool a, uint32_t mtu)
{
	static const uint8_t mac_a[6] = { 2, 0, 0, 0, 0, 1 }, mac_b[6] = { 2, 0, 0, 0, 0, 2 };
	static const uint8_t ip_a[4] = { 10, 0, 0, 1 }, ip_b[4] = { 10, 0, 0, 2 };

	ep_srd_cfg_default(c);
	c->qp.qpn = a ? 0x11 : 0x22;
	c->qp.dest_qpn = a ? 0x22 : 0x11;
	c->qp.mtu = mtu;
	c->qp.window_bytes = 64ULL * mtu;
	c->qp.timeout = 4; /* RC: 65.5 us */
	c->qp.dcqcn_enabled = false;
	c->qp.udp_sport = roce_udp_sport_from_qpns(0x11, 0x22);
	c->cc_enabled = false;
	memcpy(c->qp.src_mac, a ? mac_a : mac_b, 6);
	memcpy(c->qp.dst_mac, a ? mac_b : mac_a, 6);
	memcpy(c->qp.src_ip, a ? ip_a : ip_b, 4);
	memcpy(c->qp.dst_ip, a ? ip_b : ip_a, 4);
}

/* A network of two SRD (srd) or RC ends. */
static struct net *
net_new(bool srd, uint32_t size, uint32_t n_paths, uint32_t spray, bool cc)
{
	struct net *n = calloc(1, sizeof(*n));
	struct ep_srd_cfg ca, cb;
	uint32_t i;

	assert_non_null(n);
	n->size = size;
	n->src = malloc(size);
	n->dst = calloc(1, size);
	n->bitmap = calloc(size / 64 + 1, sizeof(uint64_t));
	assert_non_null(n->src);
	for (i = 0; i < size; i++)
		n->src[i] = (uint8_t)(i * 13 + (i >> 9));
	n->rng = 0x5EED;
	end_cfg(&ca, true, 1024);
	end_cfg(&cb, false, 1024);
	ca.n_paths = cb.n_paths = n_paths;
	ca.spray = cb.spray = spray;
	ca.cc_enabled = cb.cc_enabled = cc;
	cb.qp.mr = n->dst;
	cb.qp.mr_len = size;
	cb.qp.placed_bitmap = n->bitmap;
	n->a.srd = n->b.srd = srd;
	if (srd) {
		assert_int_equal(ep_srd_init(&n->a.s, &ca, NULL, 0), 0);
		assert_int_equal(ep_srd_init(&n->b.s, &cb, NULL, 0), 0);
	} else {
		assert_int_equal(ep_qp_init(&n->a.qp, &ca.qp, NULL, 0), 0);
		assert_int_equal(ep_qp_init(&n->b.qp, &cb.qp, NULL, 0), 0);
	}
	return n;
}

static void
net_free(struct net *n)
{
	unsigned int i;

	for (i = 0; i < MAX_BATCH; i++) {
		free(batch[i]);
		batch[i] = NULL;
	}
	free(n->src);
	free(n->dst);
	free(n->bitmap);
	free(n);
}

#define end_tx(e, now, buf, cap) \
	((e)->srd ? ep_srd_tx(&(e)->s, now, buf, cap) : ep_qp_tx(&(e)->qp, now, buf, cap))
#define end_rx(e, f, len, p, now) \
	((e)->srd ? ep_srd_rx(&(e)->s, f, len, p, now) : ep_qp_rx(&(e)->qp, f, len, p, now))

static bool
is_data(const struct roce_pkt *p)
{
	return p->opcode == EP_SRD_OP_DATA || p->opcode <= ROCE_OP_RDMA_WRITE_ONLY_WITH_IMMEDIATE;
}

static void
note_port(struct net *n, uint16_t port)
{
	unsigned int i;

	for (i = 0; i < n->n_ports; i++)
		if (n->ports_seen[i] == port)
			return;
	if (n->n_ports < EP_SRD_MAX_PATHS)
		n->ports_seen[n->n_ports++] = port;
}

/* Everything @p from may send now: lose, duplicate, permute, deliver to @p to. */
static void
net_move(struct net *n, struct end *from, struct end *to)
{
	struct roce_pkt p;
	unsigned int k = 0, i, j;
	int len;

	for (;;) {
		batch[k] = batch[k] != NULL ? batch[k] : malloc(8192);
		assert_non_null(batch[k]);
		len = end_tx(from, n->now, batch[k], 8192);
		if (len <= 0)
			break;
		assert_int_equal(roce_parse(batch[k], (uint32_t)len, ROCE_UDP_PORT, &p),
				 ROCE_CLASS_ROCEV2);
		assert_true(roce_icrc_verify(batch[k], (uint32_t)len, &p));
		if (is_data(&p)) {
			note_port(n, p.udp_sport);
			if (net_chance(n, n->data_loss_ppm)) {
				n->data_dropped++;
				continue;
			}
			if (n->now < n->ce_until_ns)
				assert_int_equal(roce_set_ecn(batch[k], &p, 3), 0);
		} else if (net_chance(n, n->ack_loss_ppm)) {
			n->acks_dropped++;
			continue;
		}
		batch_len[k++] = (uint32_t)len;
		assert_true(k < MAX_BATCH - 1);
		if (is_data(&p) && net_chance(n, n->dup_ppm)) {
			batch[k] = batch[k] != NULL ? batch[k] : malloc(8192);
			memcpy(batch[k], batch[k - 1], (size_t)len);
			batch_len[k++] = (uint32_t)len;
			n->duplicated++;
		}
	}
	assert_int_equal(len, 0);
	/* a random permutation within each block of `reorder` frames */
	for (i = 0; n->reorder > 1 && i < k; i += n->reorder) {
		unsigned int m = k - i < n->reorder ? k - i : n->reorder;

		for (j = m - 1; j > 0; j--) {
			unsigned int r = (unsigned int)(net_rand(n) % (j + 1));
			uint8_t *t = batch[i + j];
			uint32_t tl = batch_len[i + j];

			batch[i + j] = batch[i + r];
			batch_len[i + j] = batch_len[i + r];
			batch[i + r] = t;
			batch_len[i + r] = tl;
		}
	}
	for (i = 0; i < k; i++) {
		roce_parse(batch[i], batch_len[i], ROCE_UDP_PORT, &p);
		end_rx(to, batch[i], batch_len[i], &p, n->now);
	}
}

/* Post @p nmsg WRITE_WITH_IMM messages covering the buffer; step until all complete. */
static void
net_run(struct net *n, unsigned int nmsg, uint64_t step_ns, uint64_t limit_ns)
{
	uint32_t per = n->size / nmsg, i, sq = 0, rq = 0;
	struct ep_cqe c;

	for (i = 0; i < nmsg; i++) {
		struct ep_wr wr = { .wr_id = i, .op = EP_WR_WRITE_IMM, .local = n->src + i * per,
				    .len = per, .remote_va = (uint64_t)i * per, .imm = 0x100 + i };

		assert_int_equal(n->a.srd ? ep_srd_post(&n->a.s, &wr) : ep_qp_post(&n->a.qp, &wr),
				 0);
	}
	while ((sq < nmsg || rq < nmsg) && n->now < limit_ns) {
		net_move(n, &n->a, &n->b);
		net_move(n, &n->b, &n->a);
		while (n->a.srd ? ep_srd_poll_sq(&n->a.s, &c) : ep_qp_poll_sq(&n->a.qp, &c)) {
			assert_int_equal(c.wr_id, sq);
			sq++;
		}
		while (n->a.srd ? ep_srd_poll_rq(&n->b.s, &c) : ep_qp_poll_rq(&n->b.qp, &c)) {
			/* messages complete in order, with their immediate and length */
			assert_int_equal(c.len, per);
			assert_true(c.has_imm);
			assert_int_equal(c.imm, 0x100 + rq);
			rq++;
		}
		n->now += step_ns;
	}
	assert_int_equal(sq, nmsg);
	assert_int_equal(rq, nmsg);
	assert_int_equal(ep_bitmap_count(n->bitmap, 0, n->size), n->size);
	assert_memory_equal(n->src, n->dst, n->size);
}

/* The wire encoding: data and SACK frames parse as RoCEv2 with manufacturer opcodes. */
static void
test_wire_format(void **state)
{
	struct net *n = net_new(true, 8 * KB, 4, 1, false);
	struct ep_wr wr = { .wr_id = 1, .op = EP_WR_WRITE_IMM, .local = n->src, .len = 2 * KB,
			    .remote_va = 4096, .imm = 0xA1B2C3D4 };
	uint8_t f[8192];
	struct roce_pkt p;
	int len;

	(void)state;
	assert_int_equal(ep_srd_post(&n->a.s, &wr), 0);
	len = ep_srd_tx(&n->a.s, 0, f, sizeof(f));
	assert_true(len > 0);
	assert_int_equal(roce_parse(f, (uint32_t)len, ROCE_UDP_PORT, &p), ROCE_CLASS_ROCEV2);
	assert_int_equal(p.opcode, EP_SRD_OP_DATA);
	assert_int_equal(p.transport, 6);
	assert_string_equal(roce_opcode_name(p.opcode), "UNKNOWN");
	assert_int_equal(p.payload_len, EP_SRD_HDR_LEN + KB);
	assert_int_equal(p.dest_qp, 0x22);
	assert_int_equal(p.udp_sport, n->a.s.cfg.qp.udp_sport); /* path 0: the QP's own port */
	assert_int_equal(f[p.payload_off + 6], 0x10);	/* VA 4096, big-endian */
	assert_int_equal(f[p.payload_off + 8], 0xA1);
	assert_int_equal(f[p.payload_off + 12], EP_SRD_FLAG_FIRST | EP_SRD_FLAG_IMM);
	ep_srd_rx(&n->b.s, f, (uint32_t)len, &p, 0);
	len = ep_srd_tx(&n->a.s, 0, f, sizeof(f));
	assert_int_equal(roce_parse(f, (uint32_t)len, ROCE_UDP_PORT, &p), ROCE_CLASS_ROCEV2);
	assert_int_equal(p.udp_sport, ep_srd_path_sport(n->a.s.cfg.qp.udp_sport, 1));
	assert_int_equal(f[p.payload_off + 12], EP_SRD_FLAG_LAST | EP_SRD_FLAG_IMM);
	assert_true(p.ackreq);
	ep_srd_rx(&n->b.s, f, (uint32_t)len, &p, 0);
	len = ep_srd_tx(&n->b.s, 0, f, sizeof(f));
	assert_int_equal(roce_parse(f, (uint32_t)len, ROCE_UDP_PORT, &p), ROCE_CLASS_ROCEV2);
	assert_true(roce_icrc_verify(f, (uint32_t)len, &p));
	assert_int_equal(p.opcode, EP_SRD_OP_SACK);
	assert_int_equal(p.payload_len, EP_SRD_SACK_LEN);
	assert_int_equal(p.psn, 2);	/* cumulative: PSNs 0 and 1 in */
	assert_int_equal(p.dest_qp, 0x11);
	assert_int_equal(f[p.payload_off + 2], 1);	/* trigger PSN 1 */
	assert_int_equal(f[p.payload_off + 3], EP_SRD_SACK_TRIGGER);
	ep_srd_rx(&n->a.s, f, (uint32_t)len, &p, 1000);
	assert_true(ep_srd_idle(&n->a.s));
	assert_int_equal(n->a.s.ctrs[EP_SRD_CTR_RTT_SAMPLES], 1);
	assert_int_equal(n->a.s.srtt_ns, 1000);
	/* short SRD frames are counted as bad, not read beyond their end */
	{
		struct roce_hdr_params hp = n->a.s.hp;
		uint64_t bad = n->b.s.ctrs[EP_SRD_CTR_RX_BAD_PKTS];

		hp.opcode = EP_SRD_OP_DATA;
		len = roce_build(f, sizeof(f), &hp, NULL, EP_SRD_HDR_LEN - 4);
		assert_true(len > 0);
		assert_int_equal(roce_parse(f, (uint32_t)len, ROCE_UDP_PORT, &p),
				 ROCE_CLASS_ROCEV2);
		ep_srd_rx(&n->b.s, f, (uint32_t)len, &p, 0);
		hp.opcode = EP_SRD_OP_SACK;
		len = roce_build(f, sizeof(f), &hp, NULL, EP_SRD_SACK_LEN - 4);
		roce_parse(f, (uint32_t)len, ROCE_UDP_PORT, &p);
		ep_srd_rx(&n->a.s, f, (uint32_t)len, &p, 0);
		hp.opcode = 0xC7; /* another manufacturer opcode */
		len = roce_build(f, sizeof(f), &hp, NULL, 64);
		roce_parse(f, (uint32_t)len, ROCE_UDP_PORT, &p);
		ep_srd_rx(&n->b.s, f, (uint32_t)len, &p, 0);
		assert_int_equal(n->b.s.ctrs[EP_SRD_CTR_RX_BAD_PKTS], bad + 2);
		assert_int_equal(n->a.s.ctrs[EP_SRD_CTR_RX_BAD_PKTS], 1);
		assert_int_equal(n->b.s.msn, 1);
	}
	/* K distinct ports in 0xC000..0xFFFF */
	{
		uint16_t seen[EP_SRD_MAX_PATHS];
		unsigned int k, j;

		for (k = 0; k < EP_SRD_MAX_PATHS; k++) {
			seen[k] = ep_srd_path_sport(0xC123, k);
			assert_true(seen[k] >= 0xC000);
			for (j = 0; j < k; j++)
				assert_int_not_equal(seen[j], seen[k]);
		}
	}
	net_free(n);
}

/* Reorder within 16, no loss: SRD completes without a retransmission; RC goes back N. */
static void
test_reorder_srd_vs_rc(void **state)
{
	struct net *s = net_new(true, 512 * KB, 8, 1, false);
	struct net *r = net_new(false, 512 * KB, 1, 1, false);
	unsigned int k;

	(void)state;
	s->reorder = r->reorder = 16;
	net_run(s, 4, 1000, 1000000000);
	assert_int_equal(s->a.s.ctrs[EP_SRD_CTR_TX_DATA_PKTS], 512);
	assert_int_equal(s->a.s.ctrs[EP_SRD_CTR_RETX_PKTS], 0);
	assert_int_equal(s->a.s.ctrs[EP_SRD_CTR_TIMEOUTS], 0);
	assert_true(s->b.s.ctrs[EP_SRD_CTR_RX_OOO_PKTS] > 100);
	assert_int_equal(s->b.s.ctrs[EP_SRD_CTR_RX_DUP_PKTS], 0);
	assert_true(s->b.s.ctrs[EP_SRD_CTR_SACKS_SENT] > 0);
	assert_int_equal(s->b.s.ctrs[EP_SRD_CTR_SACKS_SENT], s->a.s.ctrs[EP_SRD_CTR_SACKS_RCVD]);
	for (k = 0; k < 8; k++)
		assert_int_equal(s->a.s.path_pkts[k], 512 / 8);
	assert_int_equal(s->n_ports, 8);
	net_run(r, 4, 1000, 10000000000ULL);
	print_message("reorder 16: SRD %lu data packets, %lu out of order placed, %lu SACKs; "
		      "RC %lu "
		      "data packets, %lu NAKs, %lu retransmitted (go-back-N), %lu timeouts\n",
		      (unsigned long)s->a.s.ctrs[EP_SRD_CTR_TX_DATA_PKTS],
		      (unsigned long)s->b.s.ctrs[EP_SRD_CTR_RX_OOO_PKTS],
		      (unsigned long)s->b.s.ctrs[EP_SRD_CTR_SACKS_SENT],
		      (unsigned long)r->a.qp.ctrs[EP_CTR_TX_DATA_PKTS],
		      (unsigned long)r->b.qp.ctrs[EP_CTR_NAKS_SENT],
		      (unsigned long)r->a.qp.ctrs[EP_CTR_RETX_PKTS],
		      (unsigned long)r->a.qp.ctrs[EP_CTR_TIMEOUTS]);
	assert_true(r->b.qp.ctrs[EP_CTR_NAKS_SENT] > 0);
	assert_true(r->a.qp.ctrs[EP_CTR_RETX_PKTS] > r->b.qp.ctrs[EP_CTR_NAKS_SENT]);
	assert_int_equal(r->a.qp.ctrs[EP_CTR_TX_DATA_PKTS], 512 + r->a.qp.ctrs[EP_CTR_RETX_PKTS]);
	net_free(s);
	net_free(r);
}

/* Reorder, duplicates and 2% data loss, SACKs intact: retransmissions = drops exactly. */
static void
test_loss_exact(void **state)
{
	static const uint32_t spray[] = { 1, 4 };
	unsigned int t, k;

	(void)state;
	for (t = 0; t < 2; t++) {
		struct net *n = net_new(true, 2048 * KB, 16, spray[t], false);
		const struct ep_srd *a = &n->a.s, *b = &n->b.s;
		uint64_t lo = UINT64_MAX, hi = 0;

		n->reorder = 16;
		n->data_loss_ppm = 20000;
		n->dup_ppm = 5000;
		n->rng += t;
		net_run(n, 8, 1000, 2000000000);
		print_message("spray %u: %lu data packets, %lu dropped, %lu duplicated; %lu "
			      "retransmitted (%lu for SACK holes, %lu after timeouts), %lu out of "
			      "order, %lu duplicates, %lu SACKs\n", spray[t],
			      (unsigned long)a->ctrs[EP_SRD_CTR_TX_DATA_PKTS],
			      (unsigned long)n->data_dropped, (unsigned long)n->duplicated,
			      (unsigned long)a->ctrs[EP_SRD_CTR_RETX_PKTS],
			      (unsigned long)a->ctrs[EP_SRD_CTR_RETX_SACK],
			      (unsigned long)a->ctrs[EP_SRD_CTR_TIMEOUTS],
			      (unsigned long)b->ctrs[EP_SRD_CTR_RX_OOO_PKTS],
			      (unsigned long)b->ctrs[EP_SRD_CTR_RX_DUP_PKTS],
			      (unsigned long)b->ctrs[EP_SRD_CTR_SACKS_SENT]);
		assert_true(n->data_dropped > 20);
		assert_true(n->duplicated > 0);
		assert_int_equal(a->ctrs[EP_SRD_CTR_RETX_PKTS], n->data_dropped);
		assert_int_equal(a->ctrs[EP_SRD_CTR_TX_DATA_PKTS], 2048 + n->data_dropped);
		assert_int_equal(a->ctrs[EP_SRD_CTR_RETX_SACK] + a->ctrs[EP_SRD_CTR_TIMEOUTS],
				 n->data_dropped);
		/* every duplicate seen is the network's: no retransmission was needless */
		assert_int_equal(b->ctrs[EP_SRD_CTR_RX_DUP_PKTS], n->duplicated);
		for (k = 0; k < 16; k++) {
			lo = a->path_pkts[k] < lo ? a->path_pkts[k] : lo;
			hi = a->path_pkts[k] > hi ? a->path_pkts[k] : hi;
		}
		assert_true(hi - lo <= spray[t]);
		assert_true(lo > 0);
		net_free(n);
	}
}

/* Lost SACKs too (and 5% data loss): still complete and correct; retransmissions >= drops. */
static void
test_sack_loss(void **state)
{
	struct net *n = net_new(true, 1024 * KB, 4, 2, true);

	(void)state;
	n->reorder = 8;
	n->data_loss_ppm = 50000;
	n->ack_loss_ppm = 100000;
	n->dup_ppm = 10000;
	net_run(n, 16, 1000, 4000000000ULL);
	print_message("5%% data, 10%% SACK loss: %lu dropped, %lu SACKs dropped, %lu "
		      "retransmitted, %lu timeouts\n", (unsigned long)n->data_dropped,
		      (unsigned long)n->acks_dropped,
		      (unsigned long)n->a.s.ctrs[EP_SRD_CTR_RETX_PKTS],
		      (unsigned long)n->a.s.ctrs[EP_SRD_CTR_TIMEOUTS]);
	assert_true(n->acks_dropped > 0);
	assert_true(n->a.s.ctrs[EP_SRD_CTR_RETX_PKTS] >= n->data_dropped);
	assert_int_equal(n->a.s.state, EP_QP_RTS);
	net_free(n);
}

/* A lost last packet has nothing behind it to reveal the hole: the timer resends it alone. */
static void
test_tail_loss_timeout(void **state)
{
	struct net *n = net_new(true, 16 * KB, 4, 1, false);
	struct ep_wr wr = { .wr_id = 0, .op = EP_WR_WRITE, .local = n->src, .len = 16 * KB };
	uint8_t f[8192];
	struct roce_pkt p;
	struct ep_cqe c;
	int len, i;

	(void)state;
	n->a.s.cfg.qp.ackreq_every = 4; /* PSNs 3, 7, 11 ask for a SACK */
	assert_int_equal(ep_srd_post(&n->a.s, &wr), 0);
	for (i = 0; i < 16; i++) {
		len = ep_srd_tx(&n->a.s, 0, f, sizeof(f));
		assert_true(len > 0);
		roce_parse(f, (uint32_t)len, ROCE_UDP_PORT, &p);
		if (i != 15)
			ep_srd_rx(&n->b.s, f, (uint32_t)len, &p, 0);
	}
	n->now = 1000;
	net_move(n, &n->b, &n->a);
	assert_false(ep_srd_idle(&n->a.s));
	assert_int_equal(n->a.s.snd_una, 15);
	/* the SACK timed PSN 14 at 1 us, but PSN 15's timer was set when it left: the initial
	 * RTO, 1 ms */
	assert_int_equal(n->a.s.srtt_ns, 1000);
	n->now = 1000000 - 1;
	net_move(n, &n->a, &n->b);
	assert_int_equal(n->a.s.ctrs[EP_SRD_CTR_TIMEOUTS], 0);
	n->now = 1000000;
	net_move(n, &n->a, &n->b);
	net_move(n, &n->b, &n->a);
	assert_int_equal(n->a.s.ctrs[EP_SRD_CTR_TIMEOUTS], 1);
	assert_int_equal(n->a.s.ctrs[EP_SRD_CTR_RETX_PKTS], 1);
	assert_true(ep_srd_idle(&n->a.s));
	assert_int_equal(ep_srd_poll_rq(&n->b.s, &c), 1);
	assert_int_equal(c.len, 16 * KB);
	assert_false(c.has_imm);
	assert_memory_equal(n->src, n->dst, 16 * KB);
	net_free(n);
}

/* Retries exhausted: a black hole takes the connection to the error state. */
static void
test_retry_exhaustion(void **state)
{
	struct net *n = net_new(true, 4 * KB, 1, 1, false);
	struct ep_wr wr = { .wr_id = 0, .op = EP_WR_WRITE, .local = n->src, .len = 4 * KB };
	uint8_t f[8192];

	(void)state;
	assert_int_equal(ep_srd_post(&n->a.s, &wr), 0);
	while (n->a.s.state == EP_QP_RTS && n->now < 100000000000ULL) {
		while (ep_srd_tx(&n->a.s, n->now, f, sizeof(f)) > 0)
			;
		n->now += 100000;
	}
	assert_int_equal(n->a.s.state, EP_QP_ERROR);
	/* one probe per expiry: the oldest packet's retries run out first */
	assert_int_equal(n->a.s.txs[0].tries, n->a.s.cfg.retry_cnt);
	assert_true(n->a.s.ctrs[EP_SRD_CTR_TIMEOUTS] >= n->a.s.cfg.retry_cnt + 1);
	assert_int_equal(n->a.s.ctrs[EP_SRD_CTR_RETX_PKTS] + 1, n->a.s.ctrs[EP_SRD_CTR_TIMEOUTS]);
	assert_int_equal(ep_srd_post(&n->a.s, &wr), -EIO);
	wr.op = EP_WR_SEND;
	n->a.s.state = EP_QP_RTS;
	assert_int_equal(ep_srd_post(&n->a.s, &wr), -EINVAL);
	net_free(n);
}

/* ECN-CE on the data comes back as ECE in the SACKs: AIMD halves the rate, then grows it;
 * a CNP cuts too; PFC pauses data. */
static void
test_ecn_aimd(void **state)
{
	struct net *n = net_new(true, 4096 * KB, 4, 1, true);
	struct ep_srd_cfg bad;
	double line = n->a.s.cfg.qp.dcqcn.line_rate_mbps;
	unsigned int i;

	(void)state;
	n->ce_until_ns = 200000;
	net_run(n, 4, 1000, 2000000000);
	print_message("CE for 200 us: %lu CE packets, %lu ECE echoes, %lu decreases (lowest %.0f "
		      "Mb/s), %lu increases, final %.0f Mb/s\n",
		      (unsigned long)n->b.s.ctrs[EP_SRD_CTR_RX_CE_PKTS],
		      (unsigned long)n->a.s.ctrs[EP_SRD_CTR_ECE_RCVD],
		      (unsigned long)n->a.s.ctrs[EP_SRD_CTR_CC_DECREASES],
		      n->a.s.min_rate_seen_mbps,
		      (unsigned long)n->a.s.ctrs[EP_SRD_CTR_CC_INCREASES], n->a.s.rate_mbps);
	assert_true(n->b.s.ctrs[EP_SRD_CTR_RX_CE_PKTS] > 0);
	assert_true(n->a.s.ctrs[EP_SRD_CTR_ECE_RCVD] > 0);
	/* at most one cut per guard time (10 us here: the RTT is 1 step) over the 200 us */
	assert_true(n->a.s.ctrs[EP_SRD_CTR_CC_DECREASES] >= 2);
	assert_true(n->a.s.ctrs[EP_SRD_CTR_CC_DECREASES] <= 200000 / 10000 + 1);
	assert_true(n->a.s.min_rate_seen_mbps <= line * 0.25);
	assert_true(n->a.s.ctrs[EP_SRD_CTR_CC_INCREASES] > 0);
	assert_true(n->a.s.rate_mbps > n->a.s.min_rate_seen_mbps);
	assert_int_equal(n->a.s.ctrs[EP_SRD_CTR_RETX_PKTS], 0);
	/* a CNP cuts the rate too (once per guard time); PFC holds data and counts the pause */
	{
		struct roce_cnp_params cp = roce_cnp_params_default();
		struct ep_pfc pfc;
		struct ep_wr wr = { .op = EP_WR_WRITE, .local = n->src, .len = 4096 };
		struct roce_pkt p;
		uint8_t f[8192];
		double before = n->a.s.rate_mbps;
		int len;

		cp.dest_qp = 0x11;
		len = roce_build_cnp(f, sizeof(f), &cp);
		roce_parse(f, (uint32_t)len, ROCE_UDP_PORT, &p);
		ep_srd_rx(&n->a.s, f, (uint32_t)len, &p, n->now);
		assert_int_equal(n->a.s.ctrs[EP_SRD_CTR_CNPS_RCVD], 1);
		assert_true(n->a.s.rate_mbps <= before * 0.5 + 1e-9);
		ep_pfc_init(&pfc, 100000.0);
		pfc.pause_until_ns[3] = n->now + 5000;
		n->a.s.pfc = &pfc;
		n->a.s.next_send_ns = 0;
		assert_int_equal(ep_srd_post(&n->a.s, &wr), 0);
		assert_int_equal(ep_srd_tx(&n->a.s, n->now, f, sizeof(f)), 0);
		assert_true(ep_srd_tx(&n->a.s, n->now + 5000, f, sizeof(f)) > 0);
		assert_int_equal(n->a.s.ctrs[EP_SRD_CTR_PAUSED_NS], 5000);
	}
	/* bad configurations */
	for (i = 0; i < 4; i++) {
		ep_srd_cfg_default(&bad);
		bad.n_paths = i == 0 ? 0 : i == 1 ? EP_SRD_MAX_PATHS + 1 : bad.n_paths;
		bad.spray = i == 2 ? 0 : bad.spray;
		bad.md = i == 3 ? 1.0 : bad.md;
		assert_int_equal(ep_srd_init(&n->b.s, &bad, NULL, 0), -EINVAL);
	}
	net_free(n);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_wire_format),
		cmocka_unit_test(test_reorder_srd_vs_rc),
		cmocka_unit_test(test_loss_exact),
		cmocka_unit_test(test_sack_loss),
		cmocka_unit_test(test_tail_loss_timeout),
		cmocka_unit_test(test_retry_exhaustion),
		cmocka_unit_test(test_ecn_aimd),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
