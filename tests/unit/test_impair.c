/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The impair stage, its ops called directly: loss models against their analytic loss rate and
 * mean burst length (10^6 packets, 3 sigma), reproducibility by seed, corruption and rewrites
 * checked with the ICRC and IPv4 checksum routines, duplication, profile changes, directions,
 * the delay action.
 */
#include <math.h>

#include "test_common.h"
#include "lib/stages/stages.h"

static struct rte_mempool *pool;
static const char *const port_names[] = { "p0", "p1" };

struct stage {
	uint8_t priv[65536];
	uint64_t ctr[64];
	struct emu_rng rng;
	struct rte_mbuf *emit_pkts[256];
	uint16_t emit_ports[256];
	struct emu_emit emit;
	struct emu_burst_ctx ctx;
};

static struct stage *
stage_new(const char *json, uint64_t seed)
{
	const struct emu_stage_ops *ops = &emu_stage_impair;
	struct stage *s = calloc(1, sizeof(*s));
	struct emu_stage_env env = { .path = "ingress[0]", .n_ports = 2, .port_names = port_names,
				     .out_port_known = true };
	json_error_t jerr;
	json_t *cfg = json_loads(json, JSON_REJECT_DUPLICATES, &jerr);
	struct emu_err err;

	assert_non_null(s);
	assert_true(ops->priv_size <= sizeof(s->priv));
	assert_true(ops->n_ctr <= 64);
	if (cfg == NULL)
		fail_msg("bad JSON: %s", jerr.text);
	if (ops->init(s->priv, cfg, &env, &err) != 0)
		fail_msg("init: %s", err.msg);
	json_decref(cfg);
	emu_rng_seed(&s->rng, seed, 1);
	s->emit.pkts = s->emit_pkts;
	s->emit.ports = s->emit_ports;
	s->emit.cap = 256;
	s->emit.pool = pool;
	s->ctx.rng = &s->rng;
	s->ctx.ctr = s->ctr;
	s->ctx.emit = &s->emit;
	return s;
}

static void
stage_free(struct stage *s)
{
	emu_stage_impair.free(s->priv);
	rte_pktmbuf_free_bulk(s->emit.pkts, s->emit.n);
	free(s);
}

static uint64_t
ctr(const struct stage *s, const char *name)
{
	unsigned int k;

	for (k = 0; k < emu_stage_impair.n_ctr; k++)
		if (strcmp(emu_stage_impair.ctr_names[k], name) == 0)
			return s->ctr[k];
	fail_msg("no counter %s", name);
	return 0;
}

struct loss_stats {
	uint64_t n, lost, bursts;
	uint64_t hash; /* of the lost packets' indexes */
};

/* Run @p n unparsed frames through @p s in bursts of 32; count losses and loss bursts. */
static void
run_loss(struct stage *s, uint64_t n, struct loss_stats *st)
{
	static const uint8_t mac[6] = { 2, 0, 0, 0, 0, 1 };
	struct rte_mbuf *burst[32];
	bool prev_lost = false;
	uint64_t seq = 0;
	uint16_t i, k, kept, j;

	memset(st, 0, sizeof(*st));
	st->hash = 1469598103934665603ULL;
	while (seq < n) {
		k = (uint16_t)RTE_MIN((uint64_t)32, n - seq);
		for (i = 0; i < k; i++) {
			burst[i] = test_frame(pool, mac, mac, 64, (uint32_t)(seq + i));
			memset(emu_meta(burst[i]), 0, sizeof(struct emu_pkt_meta));
		}
		kept = emu_stage_impair.process(s->priv, burst, k, &s->ctx);
		for (i = 0, j = 0; i < k; i++) {
			bool lost = j >= kept || test_frame_seq(burst[j]) != seq + i;

			if (!lost)
				j++;
			if (lost) {
				st->lost++;
				st->hash = (st->hash ^ (seq + i)) * 1099511628211ULL;
				if (!prev_lost)
					st->bursts++;
			}
			prev_lost = lost;
		}
		rte_pktmbuf_free_bulk(burst, kept);
		seq += k;
	}
	st->n = n;
}

/* |x - mu| <= 3 sigma, with a message. */
static void
within_3sigma(const char *what, double x, double mu, double sigma)
{
	if (fabs(x - mu) > 3 * sigma)
		fail_msg("%s: %g, model %g +- 3 x %g", what, x, mu, sigma);
	printf("  %s: %.6g (model %.6g, sigma %.3g)\n", what, x, mu, sigma);
}

#define N_LOSS 1000000

static void
test_bernoulli(void **state)
{
	const double p = 0.02;
	struct loss_stats a, b, c;
	struct stage *s;
	double rate, burst, q = 1 - p;

	(void)state;
	s = stage_new("{\"events\": [{\"name\": \"b\", \"action\": \"drop\","
		      " \"loss\": {\"model\": \"bernoulli\", \"p\": 0.02}}]}", 7);
	run_loss(s, N_LOSS, &a);
	assert_int_equal(ctr(s, "b_matched"), N_LOSS);
	assert_int_equal(ctr(s, "drop_b"), a.lost);
	stage_free(s);
	/* Loss rate: binomial. Burst length: geometric, mean 1/q, variance p/q^2. */
	rate = (double)a.lost / N_LOSS;
	within_3sigma("bernoulli loss rate", rate, p, sqrt(p * q / N_LOSS));
	burst = (double)a.lost / (double)a.bursts;
	within_3sigma("bernoulli mean burst", burst, 1 / q, sqrt(p / (q * q) / (N_LOSS * p * q)));
	s = stage_new("{\"events\": [{\"name\": \"b\", \"action\": \"drop\","
		      " \"loss\": {\"model\": \"bernoulli\", \"p\": 0.02}}]}", 7);
	run_loss(s, N_LOSS, &b);
	stage_free(s);
	s = stage_new("{\"events\": [{\"name\": \"b\", \"action\": \"drop\","
		      " \"loss\": {\"model\": \"bernoulli\", \"p\": 0.02}}]}", 8);
	run_loss(s, N_LOSS, &c);
	stage_free(s);
	assert_int_equal(a.lost, b.lost);
	assert_int_equal(a.hash, b.hash);
	assert_true(a.hash != c.hash);
}

static void
test_gilbert_elliott(void **state)
{
	/* Simple Gilbert (1-h = 1, 1-k = 0): every packet in the bad state is lost. */
	const double p = 0.01, r = 0.25;
	const double pi_b = p / (p + r), lambda = 1 - p - r;
	struct loss_stats a, b, c;
	struct stage *s;
	double rate, burst, n_bursts;
	const char *cfg = "{\"events\": [{\"name\": \"ge\", \"action\": \"drop\","
			  " \"loss\": {\"model\": \"gilbert\", \"p\": 0.01, \"r\": 0.25}}]}";

	(void)state;
	s = stage_new(cfg, 11);
	run_loss(s, N_LOSS, &a);
	assert_int_equal(ctr(s, "drop_ge"), a.lost);
	stage_free(s);
	/*
	 * Loss rate = pi_B = p / (p + r). The state is a two-state Markov chain with second
	 * eigenvalue lambda = 1 - p - r:
	 *   Var(mean) = pi_B (1 - pi_B) / N * (1 + lambda) / (1 - lambda).
	 * Bursts are runs of the bad state: geometric, mean 1/r, variance (1 - r) / r^2, about
	 * N pi_G p of them.
	 */
	rate = (double)a.lost / N_LOSS;
	within_3sigma("gilbert loss rate", rate, pi_b,
		      sqrt(pi_b * (1 - pi_b) / N_LOSS * (1 + lambda) / (1 - lambda)));
	burst = (double)a.lost / (double)a.bursts;
	n_bursts = N_LOSS * (1 - pi_b) * p;
	within_3sigma("gilbert mean burst", burst, 1 / r, sqrt((1 - r) / (r * r) / n_bursts));
	s = stage_new(cfg, 11);
	run_loss(s, N_LOSS, &b);
	stage_free(s);
	s = stage_new(cfg, 12);
	run_loss(s, N_LOSS, &c);
	stage_free(s);
	assert_int_equal(a.hash, b.hash);
	assert_true(a.hash != c.hash);
}

static void
test_gilbert_elliott_general(void **state)
{
	/*
	 * 1-h = 0.7, 1-k = 0.01: hit rate = (r (1-k) + p (1-h)) / (p + r). Hits are the chain
	 * thinned by independent draws, less correlated than the chain itself: the chain's
	 * (1 + lambda) / (1 - lambda) factor bounds the variance.
	 */
	const double p = 0.05, r = 0.2, one_h = 0.7, one_k = 0.01, lambda = 1 - p - r;
	const double rate_model = (r * one_k + p * one_h) / (p + r);
	struct loss_stats a;
	struct stage *s;

	(void)state;
	s = stage_new("{\"events\": [{\"name\": \"ge\", \"action\": \"drop\", \"loss\":"
		      " {\"model\": \"gilbert\", \"p\": 0.05, \"r\": 0.2, \"1-h\": 0.7,"
		      " \"1-k\": 0.01}}]}", 21);
	run_loss(s, N_LOSS, &a);
	stage_free(s);
	within_3sigma("gilbert-elliott (1-h 0.7, 1-k 0.01) loss rate", (double)a.lost / N_LOSS,
		      rate_model, sqrt(rate_model * (1 - rate_model) / N_LOSS * (1 + lambda) /
				       (1 - lambda)));
}

static void
test_four_state(void **state)
{
	/*
	 * netem's 4-state model with p23 = 0 (no return into a burst once sent in it) and
	 * p32 = 0: from state 1, loss of one (p14) or a burst (p13) that ends with p31, each
	 * loss of state 3 continuing with 1 - p31. Stationary: pi1 (p13 + p14) = pi4 + pi3 p31,
	 * pi4 = pi1 p14, pi3 p31 = pi1 p13, so loss rate = pi3 + pi4 with
	 * pi1 = 1 / (1 + p14 + p13 / p31).
	 */
	const double p13 = 0.005, p31 = 0.4, p14 = 0.01;
	const double pi1 = 1 / (1 + p14 + p13 / p31);
	const double loss = pi1 * (p14 + p13 / p31);
	struct loss_stats a;
	struct stage *s;
	double rate;

	(void)state;
	s = stage_new("{\"events\": [{\"name\": \"m4\", \"action\": \"drop\", \"loss\":"
		      " {\"model\": \"4state\", \"p13\": 0.005, \"p31\": 0.4,"
		      " \"p14\": 0.01}}]}", 3);
	run_loss(s, N_LOSS, &a);
	stage_free(s);
	rate = (double)a.lost / N_LOSS;
	/* Correlated losses: a generous sigma (bursts of mean 1/p31 make it ~ 2.5x binomial). */
	within_3sigma("4state loss rate", rate, loss, 3 * sqrt(loss * (1 - loss) / N_LOSS));
}

/* An RC RDMA WRITE_ONLY 10.0.0.1 -> 10.0.0.2 with 64 payload bytes, ECT(0), parsed. */
static struct rte_mbuf *
roce_frame(void)
{
	struct roce_hdr_params hp = roce_hdr_params_default();
	struct rte_mbuf *m = rte_pktmbuf_alloc(pool);
	struct emu_pkt_meta *meta;
	uint8_t buf[256], payload[64];
	int len;

	hp.src_ip[0] = 10;
	hp.src_ip[3] = 1;
	hp.dst_ip[0] = 10;
	hp.dst_ip[3] = 2;
	hp.udp_sport = 49152;
	hp.opcode = 0x0A;
	hp.dest_qp = 0x45;
	hp.psn = 17;
	hp.ecn = 2;
	memset(payload, 0x5a, sizeof(payload));
	len = roce_build(buf, sizeof(buf), &hp, payload, sizeof(payload));
	assert_true(len > 0);
	assert_non_null(m);
	memcpy(rte_pktmbuf_append(m, (uint16_t)len), buf, (size_t)len);
	meta = emu_meta(m);
	memset(meta, 0, sizeof(*meta));
	roce_parse(buf, (uint32_t)len, ROCE_UDP_PORT, &meta->pkt);
	assert_int_equal(meta->pkt.cls, ROCE_CLASS_ROCEV2);
	meta->flags = EMU_META_PARSED;
	meta->out_port = 1;
	return m;
}

static bool
icrc_ok(struct rte_mbuf *m)
{
	struct roce_pkt p;
	const uint8_t *f = rte_pktmbuf_mtod(m, const uint8_t *);

	roce_parse(f, rte_pktmbuf_data_len(m), ROCE_UDP_PORT, &p);
	return roce_icrc_verify(f, rte_pktmbuf_data_len(m), &p) == 1;
}

static bool
ip_cksum_ok(struct rte_mbuf *m)
{
	const uint8_t *ip = rte_pktmbuf_mtod_offset(m, const uint8_t *, 14);

	return roce_ipv4_cksum(ip, 20) == (uint16_t)((ip[10] << 8) | ip[11]);
}

/* One frame through a one-event stage; returns the survivor (or NULL). */
static struct rte_mbuf *
one(struct stage *s, struct rte_mbuf *m)
{
	uint16_t n = emu_stage_impair.process(s->priv, &m, 1, &s->ctx);

	return n == 1 ? m : NULL;
}

static void
test_corrupt_rewrite(void **state)
{
	struct stage *s;
	struct rte_mbuf *m;
	const uint8_t *f;

	(void)state;
	m = roce_frame();
	assert_true(icrc_ok(m));
	assert_true(ip_cksum_ok(m));
	rte_pktmbuf_free(m);

	s = stage_new("{\"events\": [{\"name\": \"c\", \"action\": \"corrupt\"}]}", 1);
	m = one(s, roce_frame());
	assert_false(icrc_ok(m));
	assert_true(ip_cksum_ok(m));
	assert_int_equal(ctr(s, "c_corrupted"), 1);
	rte_pktmbuf_free(m);
	stage_free(s);

	s = stage_new("{\"events\": [{\"name\": \"c\", \"action\": \"corrupt\","
		      " \"corrupt\": \"payload\"}]}", 1);
	m = one(s, roce_frame());
	f = rte_pktmbuf_mtod(m, const uint8_t *);
	assert_int_equal(f[emu_meta(m)->pkt.payload_off + 32], 0x5b);
	assert_false(icrc_ok(m));
	assert_true(ip_cksum_ok(m));
	rte_pktmbuf_free(m);
	stage_free(s);

	s = stage_new("{\"events\": [{\"name\": \"mark\", \"action\": \"ecn_mark\"},"
		      " {\"name\": \"d\", \"action\": \"rewrite\", \"rewrite\": {\"dscp\": 46}},"
		      " {\"name\": \"u\", \"action\": \"rewrite\","
		      " \"rewrite\": {\"udp_sport\": 1234}}"
		      "]}", 1);
	m = one(s, roce_frame());
	f = rte_pktmbuf_mtod(m, const uint8_t *);
	assert_int_equal(f[15], (46 << 2) | 3);
	assert_int_equal((f[34] << 8) | f[35], 1234);
	assert_true(icrc_ok(m));
	assert_true(ip_cksum_ok(m));
	assert_int_equal(ctr(s, "mark_marked"), 1);
	assert_int_equal(ctr(s, "d_rewritten"), 1);
	assert_int_equal(ctr(s, "u_rewritten"), 1);
	rte_pktmbuf_free(m);
	/* Not-ECT: not marked, counted as skipped. */
	m = roce_frame();
	roce_set_ecn(rte_pktmbuf_mtod(m, uint8_t *), &emu_meta(m)->pkt, 0);
	m = one(s, m);
	assert_int_equal(rte_pktmbuf_mtod(m, const uint8_t *)[15] & 3, 0);
	assert_int_equal(ctr(s, "mark_skipped"), 1);
	rte_pktmbuf_free(m);
	stage_free(s);
}

static void
test_duplicate_and_set(void **state)
{
	struct stage *s;
	struct rte_mbuf *m;
	struct emu_err err;
	struct emu_set set;
	json_t *v;

	(void)state;
	s = stage_new("{\"events\": [{\"name\": \"dup\", \"action\": \"duplicate\","
		      " \"match\": {\"psn\": 17, \"iteration\": 1}},"
		      " {\"name\": \"x\", \"action\": \"drop\", \"match\": {\"nth\": 3}}]}", 1);
	m = one(s, roce_frame());
	assert_non_null(m);
	assert_int_equal(s->emit.n, 1);
	assert_int_equal(s->emit.ports[0], 1);
	assert_int_equal(rte_pktmbuf_data_len(s->emit.pkts[0]), rte_pktmbuf_data_len(m));
	rte_pktmbuf_free(m);
	/* Second send of PSN 17: iteration 2, not duplicated. */
	m = one(s, roce_frame());
	assert_int_equal(s->emit.n, 1);
	assert_int_equal(ctr(s, "dup_duplicated"), 1);
	rte_pktmbuf_free(m);
	/* Profile: disable x before its 3rd packet; validation alone changes nothing. */
	v = json_pack("{s:b}", "enabled", 0);
	assert_int_equal(emu_stage_impair.compile(s->priv, "x", v, &set, "p.x", &err), 0);
	emu_stage_impair.apply(s->priv, &set);
	json_decref(v);
	m = one(s, roce_frame());
	assert_non_null(m);
	rte_pktmbuf_free(m);
	assert_int_equal(ctr(s, "x_matched"), 0); /* "nth": 3 never came */
	assert_int_equal(ctr(s, "drop_x"), 0);
	v = json_pack("{s:f}", "p", 0.5);
	assert_int_not_equal(emu_stage_impair.compile(s->priv, "x", v, &set, "p.x", &err), 0);
	assert_string_equal(err.msg, "p.x.p: event \"x\" has no bernoulli or gilbert loss model");
	assert_int_not_equal(emu_stage_impair.compile(s->priv, "nope", v, &set, "p.nope", &err), 0);
	json_decref(v);
	stage_free(s);
}

/* Through the switch, on egress: each frame leaves twice, and the copy is not copied again. */
static void
test_egress_duplicate(void **state)
{
	struct emu_pipeline *pl = test_pipeline(
		"{\"ports\": [{\"name\": \"a\"}, {\"name\": \"b\"}],"
		" \"ingress\": [{\"type\": \"parse\"}, {\"type\": \"forward\"}],"
		" \"egress\": [{\"type\": \"impair\", \"events\": [{\"name\": \"dup\","
		" \"action\": \"duplicate\"}]}]}");
	struct emu_switch *sw = test_switch(pool, pl);
	struct emu_conservation c;
	struct rte_mbuf *m[3], **pkts;
	unsigned int sent = 0, i;
	uint64_t t;
	uint16_t n;

	(void)state;
	for (i = 0; i < 3; i++)
		m[i] = roce_frame();
	emu_switch_rx(sw, 0, m, 3, 0);
	while ((t = emu_switch_next_event_ns(sw)) != UINT64_MAX && sent < 100) {
		n = emu_switch_tx_prepare(sw, 1, t, &pkts);
		rte_pktmbuf_free_bulk(pkts, n);
		emu_switch_tx_done(sw, 1, n);
		sent += n;
	}
	assert_int_equal(sent, 6);
	assert_int_equal(emu_switch_stage_counter(sw, "impair", "dup_duplicated"), 3);
	assert_int_equal(emu_switch_stage_counter(sw, "impair", "dup_matched"), 3);
	emu_switch_conservation(sw, &c);
	assert_int_equal(c.created, 3);
	assert_int_equal(c.unaccounted, 0);
	emu_switch_free(sw);
	emu_pipeline_free(pl);
}

/* A frame from @p in to @p out (meta as forward leaves it), payload index @p seq. */
static struct rte_mbuf *
dir_frame(uint16_t in, uint16_t out, uint32_t seq)
{
	static const uint8_t mac[6] = { 2, 0, 0, 0, 0, 1 };
	struct rte_mbuf *m = test_frame(pool, mac, mac, 64, seq);
	struct emu_pkt_meta *meta = emu_meta(m);

	memset(meta, 0, sizeof(*meta));
	meta->in_port = in;
	meta->out_port = out;
	return m;
}

/* Two directions through one stage: only p0 -> p1 is hit. */
static void
test_direction(void **state)
{
	struct rte_mbuf *burst[8];
	struct stage *s;
	uint16_t n, i;

	(void)state;
	s = stage_new("{\"events\": [{\"name\": \"ab\", \"action\": \"drop\","
		      " \"match\": {\"direction\": \"p0->p1\"}},"
		      " {\"name\": \"to_a\", \"action\": \"ecn_mark\","
		      " \"match\": {\"out_ports\": [\"p0\"]}}]}", 1);
	for (i = 0; i < 8; i++)
		burst[i] = i % 2 == 0 ? dir_frame(0, 1, i) : dir_frame(1, 0, i);
	n = emu_stage_impair.process(s->priv, burst, 8, &s->ctx);
	assert_int_equal(n, 4);
	for (i = 0; i < n; i++) {
		assert_int_equal(test_frame_seq(burst[i]), 2 * i + 1);
		assert_int_equal(emu_meta(burst[i])->in_port, 1);
	}
	assert_int_equal(ctr(s, "ab_matched"), 4);
	assert_int_equal(ctr(s, "drop_ab"), 4);
	assert_int_equal(ctr(s, "to_a_matched"), 4);
	rte_pktmbuf_free_bulk(burst, n);
	stage_free(s);
}

/* The delay action, ops called directly: exact release times, order, counters, a full heap. */
static void
test_delay_action(void **state)
{
	struct rte_mbuf *burst[80];
	unsigned int avail;
	struct stage *s;
	uint16_t n, i;

	(void)state;
	avail = rte_mempool_avail_count(pool);
	s = stage_new("{\"max_held_pkts\": 64, \"events\": [{\"name\": \"slow\", \"action\": \"delay\","
		      " \"delay_us\": 10, \"match\": {\"ports\": [\"p0\"]}}]}", 1);
	assert_int_equal(emu_stage_impair.next_due_ns(s->priv), UINT64_MAX);
	/* at t = 1000 ns: 8 frames, even ones from p0 (held 10 us), odd ones from p1 (pass) */
	for (i = 0; i < 8; i++)
		burst[i] = dir_frame(i % 2, 1 - i % 2, i);
	s->ctx.now_ns = 1000;
	n = emu_stage_impair.process(s->priv, burst, 8, &s->ctx);
	assert_int_equal(n, 4);
	for (i = 0; i < n; i++)
		assert_int_equal(test_frame_seq(burst[i]), 2 * i + 1);
	rte_pktmbuf_free_bulk(burst, n);
	/* 2 more from p0 at t = 5000: due at 15000 */
	burst[0] = dir_frame(0, 1, 100);
	burst[1] = dir_frame(0, 1, 101);
	s->ctx.now_ns = 5000;
	assert_int_equal(emu_stage_impair.process(s->priv, burst, 2, &s->ctx), 0);
	assert_int_equal(emu_stage_impair.held(s->priv), 6);
	assert_int_equal(emu_stage_impair.next_due_ns(s->priv), 11000);
	s->ctx.now_ns = 10999;
	assert_int_equal(emu_stage_impair.release(s->priv, burst, 32, &s->ctx), 0);
	s->ctx.now_ns = 11000;
	n = emu_stage_impair.release(s->priv, burst, 32, &s->ctx);
	assert_int_equal(n, 4);
	for (i = 0; i < n; i++)
		assert_int_equal(test_frame_seq(burst[i]), 2 * i);
	rte_pktmbuf_free_bulk(burst, n);
	assert_int_equal(emu_stage_impair.next_due_ns(s->priv), 15000);
	s->ctx.now_ns = 14999;
	assert_int_equal(emu_stage_impair.release(s->priv, burst, 32, &s->ctx), 0);
	s->ctx.now_ns = 15000;
	assert_int_equal(emu_stage_impair.release(s->priv, burst, 1, &s->ctx), 1); /* cap */
	assert_int_equal(test_frame_seq(burst[0]), 100);
	rte_pktmbuf_free(burst[0]);
	assert_int_equal(emu_stage_impair.release(s->priv, burst, 32, &s->ctx), 1);
	assert_int_equal(test_frame_seq(burst[0]), 101);
	rte_pktmbuf_free(burst[0]);
	assert_int_equal(ctr(s, "slow_matched"), 6);
	assert_int_equal(ctr(s, "slow_delayed"), 6);
	assert_int_equal(ctr(s, "delay_released"), 6);
	/* 70 held at once into 64 slots: 6 dropped and counted; in = out + drops + held */
	for (i = 0; i < 70; i++)
		burst[i] = dir_frame(0, 1, i);
	assert_int_equal(emu_stage_impair.process(s->priv, burst, 70, &s->ctx), 0);
	assert_int_equal(ctr(s, "drop_delay_full"), 6);
	assert_int_equal(emu_stage_impair.held(s->priv), 64);
	assert_int_equal(ctr(s, "slow_delayed"), 70);
	/* freeing the stage frees what it still holds */
	stage_free(s);
	assert_int_equal(rte_mempool_avail_count(pool), avail);
}

/* Through the switch: matched frames leave exactly delay_us later, the others are untouched;
 * conservation holds with packets held, and at exit they are discarded and counted. */
static void
test_delay_action_switch(void **state)
{
	struct emu_pipeline *pl = test_pipeline(
		"{\"ports\": [{\"name\": \"a\"}, {\"name\": \"b\"}],"
		" \"ingress\": [{\"type\": \"parse\"}, {\"type\": \"forward\"},"
		"  {\"type\": \"impair\", \"events\": [{\"name\": \"slow\", \"action\": \"delay\","
		"   \"delay_us\": 100, \"match\": {\"direction\": \"a->b\"}}]}],"
		" \"tm\": {\"ports\": [{\"port\": \"a\", \"rate_gbps\": 10},"
		"  {\"port\": \"b\", \"rate_gbps\": 10}]}}");
	struct emu_switch *sw = test_switch(pool, pl);
	uint64_t deps[2][8], t;
	unsigned int nd[2] = { 0, 0 }, i, p;
	struct emu_conservation c;
	struct rte_mbuf *m, **pkts;
	uint16_t n, k;

	(void)state;
	/* one RoCE frame each way at t = 0 and t = 1 us */
	for (i = 0; i < 2; i++) {
		m = roce_frame();
		emu_switch_rx(sw, 0, &m, 1, i * 1000);
		m = roce_frame();
		emu_switch_rx(sw, 1, &m, 1, i * 1000);
	}
	emu_switch_conservation(sw, &c);
	assert_int_equal(c.held, 4);
	assert_int_equal(c.unaccounted, 0);
	while ((t = emu_switch_next_event_ns(sw)) != UINT64_MAX) {
		for (p = 0; p < 2; p++) {
			n = emu_switch_tx_prepare(sw, (uint16_t)p, t, &pkts);
			for (k = 0; k < n; k++)
				deps[p][nd[p]++] = emu_meta(pkts[k])->ts_ns;
			rte_pktmbuf_free_bulk(pkts, n);
			emu_switch_tx_done(sw, (uint16_t)p, n);
		}
	}
	/* b -> a: not delayed, leaves after its wire time (< 1 us); a -> b: exactly 100 us later */
	assert_int_equal(nd[0], 2);
	assert_int_equal(nd[1], 2);
	for (i = 0; i < 2; i++) {
		assert_true(deps[0][i] > i * 1000 && deps[0][i] < i * 1000 + 1000);
		assert_int_equal(deps[1][i], deps[0][i] + 100000);
	}
	assert_int_equal(emu_switch_stage_counter(sw, "impair", "slow_delayed"), 2);
	assert_int_equal(emu_switch_stage_counter(sw, "impair", "delay_released"), 2);
	/* two more held when the run ends: discarded and counted */
	for (i = 0; i < 2; i++) {
		m = roce_frame();
		emu_switch_rx(sw, 0, &m, 1, 1000000);
	}
	assert_int_equal(emu_switch_held(sw), 2);
	emu_switch_discard_held(sw);
	emu_switch_conservation(sw, &c);
	assert_int_equal(c.held, 0);
	assert_int_equal(c.rx, 6);
	assert_int_equal(c.tx, 4);
	assert_int_equal(c.drops, 2);
	assert_int_equal(c.unaccounted, 0);
	emu_switch_free(sw);
	emu_pipeline_free(pl);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bernoulli),
		cmocka_unit_test(test_gilbert_elliott),
		cmocka_unit_test(test_gilbert_elliott_general),
		cmocka_unit_test(test_four_state),
		cmocka_unit_test(test_corrupt_rewrite),
		cmocka_unit_test(test_duplicate_and_set),
		cmocka_unit_test(test_egress_duplicate),
		cmocka_unit_test(test_direction),
		cmocka_unit_test(test_delay_action),
		cmocka_unit_test(test_delay_action_switch),
	};

	pool = test_eal_pool("test_impair", 8192);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
