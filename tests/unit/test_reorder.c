/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The reorder stage: its ops driven as the runner drives them (release what is due before each
 * arrival burst and at the stage's next due time, then process the burst). Permuted PSN
 * sequences of several QPs leave in PSN order per QP; duplicates and retransmissions pass at
 * once; a hole is given up exactly timeout_us after its oldest packet was held; PSNs wrap at
 * 2^24; the held-packet and QP-table limits act as their policy says; every packet is out,
 * held or dropped with its reason, and the pool is full again at the end. Then through the
 * switch: conservation with packets held, and their discard at exit. Over 600 lines (about
 * 720): the stage's cases and its run through the switch share the frame builders and the
 * checks of order and accounting.
 */
#include "test_common.h"
#include "lib/stages/stages.h"

static struct rte_mempool *pool;
static unsigned int pool_full;
static const char *const port_names[] = { "p0", "p1" };
static const uint8_t mac_a[6] = { 2, 0, 0, 0, 0, 0xa };
static const uint8_t mac_b[6] = { 2, 0, 0, 0, 0, 0xb };

#define OP_WRITE_ONLY 0x0A
#define OP_READ_REQ 0x0C
#define OP_ACK 0x11
#define PSN_MOD 16777216u

/* Four QPs: 0 and 1 share the QPN on two hosts, 2 and 3 two QPNs on one host. */
static const uint32_t qp_qpn[] = { 0x45, 0x45, 0x46, 0x47, 0x48, 0x49, 0x4a, 0x4b, 0x4c, 0x4d };
static const uint8_t qp_host[] = { 2, 3, 3, 3, 3, 3, 3, 3, 3, 3 };

struct rstage {
	uint8_t priv[4096];
	uint64_t ctr[32];
	struct emu_rng rng;
	struct emu_emit emit;
	struct emu_dropper dropper;
	struct emu_burst_ctx ctx;
	uint64_t in, dropped;
	uint32_t last_reason;
};

struct rec {
	uint64_t t, ts;
	uint32_t qp, psn, id, delay_ns;
	uint8_t marks, opcode;
};

#define MAX_REC 200000
static struct rec recs[MAX_REC];
static unsigned int n_recs;

static void
drop_hook(void *arg, struct rte_mbuf *m, uint32_t reason)
{
	struct rstage *s = arg;

	(void)m;
	s->dropped++;
	s->last_reason = reason;
}

static int
rstage_init(struct rstage *s, const char *json, bool egress, struct emu_err *err)
{
	struct emu_stage_env env = { .path = "egress[0]", .n_ports = 2, .port_names = port_names,
				     .egress = egress, .out_port_known = true };
	json_error_t jerr;
	json_t *cfg = json_loads(json, JSON_REJECT_DUPLICATES, &jerr);
	int rc;

	memset(s, 0, sizeof(*s));
	assert_true(emu_stage_reorder.priv_size <= sizeof(s->priv));
	assert_true(emu_stage_reorder.n_ctr <= RTE_DIM(s->ctr));
	if (cfg == NULL)
		fail_msg("bad JSON: %s", jerr.text);
	rc = emu_stage_reorder.init(s->priv, cfg, &env, err);
	json_decref(cfg);
	s->emit.pool = pool;
	s->dropper.n_hooks = 1;
	s->dropper.hooks[0].fn = drop_hook;
	s->dropper.hooks[0].arg = s;
	s->ctx.rng = &s->rng;
	s->ctx.ctr = s->ctr;
	s->ctx.emit = &s->emit;
	s->ctx.drop = &s->dropper;
	s->ctx.reason_base = 1000;
	return rc;
}

static struct rstage *
rstage_new(const char *json)
{
	struct rstage *s = malloc(sizeof(*s));
	struct emu_err err;

	assert_non_null(s);
	if (rstage_init(s, json, true, &err) != 0)
		fail_msg("init: %s", err.msg);
	n_recs = 0;
	return s;
}

static uint64_t
ctr(const struct rstage *s, const char *name)
{
	unsigned int i;

	for (i = 0; i < emu_stage_reorder.n_ctr; i++)
		if (strcmp(emu_stage_reorder.ctr_names[i], name) == 0)
			return s->ctr[i];
	fail_msg("no counter %s", name);
	return 0;
}

static unsigned int
ctr_idx(const char *name)
{
	unsigned int i;

	for (i = 0; i < emu_stage_reorder.n_ctr; i++)
		if (strcmp(emu_stage_reorder.ctr_names[i], name) == 0)
			return i;
	fail_msg("no counter %s", name);
	return 0;
}

/* Conservation of the stage: in = out + held + dropped; then freed, the pool is full. */
static void
rstage_free(struct rstage *s)
{
	assert_int_equal(s->in, n_recs + emu_stage_reorder.held(s->priv) + s->dropped);
	assert_int_equal(s->dropped, ctr(s, "drop_reorder_full"));
	emu_stage_reorder.free(s->priv);
	free(s);
	assert_int_equal(rte_mempool_avail_count(pool), pool_full);
}

/* A RoCEv2 packet of QP @p qp (an index into qp_qpn) with PSN @p psn, leaving by p1. */
static struct rte_mbuf *
pkt(unsigned int qp, uint32_t psn, uint8_t opcode, uint32_t id, uint64_t ts)
{
	struct roce_hdr_params hp = roce_hdr_params_default();
	struct rte_mbuf *m = rte_pktmbuf_alloc(pool);
	struct emu_pkt_meta *meta;
	uint8_t payload[16] = { 0 };
	char *p;
	int n;

	assert_non_null(m);
	memcpy(hp.dst_mac, mac_b, 6);
	memcpy(hp.src_mac, mac_a, 6);
	hp.src_ip[0] = 10;
	hp.src_ip[3] = 1;
	hp.dst_ip[0] = 10;
	hp.dst_ip[3] = qp_host[qp];
	hp.opcode = opcode;
	hp.dest_qp = qp_qpn[qp];
	hp.psn = psn;
	hp.reth_va = id; /* tells packets apart (the READ request has a RETH too) */
	p = rte_pktmbuf_append(m, 128);
	assert_non_null(p);
	n = roce_build((uint8_t *)p, 128, &hp, payload, opcode == OP_ACK ? 0 : sizeof(payload));
	assert_true(n > 0);
	rte_pktmbuf_trim(m, (uint16_t)(128 - n));
	meta = emu_meta(m);
	memset(meta, 0, sizeof(*meta));
	roce_parse_mbuf(m, 4791, &meta->pkt);
	assert_int_equal(meta->pkt.cls, ROCE_CLASS_ROCEV2);
	meta->flags = EMU_META_PARSED;
	meta->in_port = 0;
	meta->out_port = 1;
	meta->ts_ns = ts;
	return m;
}

static void
take(struct rte_mbuf *m, uint64_t t)
{
	struct emu_pkt_meta *meta = emu_meta(m);
	unsigned int qp;

	assert_true(n_recs < MAX_REC);
	for (qp = 0; qp < RTE_DIM(qp_qpn); qp++)
		if (qp_qpn[qp] == meta->pkt.dest_qp && qp_host[qp] == meta->pkt.dst_ip[3])
			break;
	recs[n_recs] = (struct rec){ .t = t, .ts = meta->ts_ns, .qp = qp, .psn = meta->pkt.psn,
				     .id = (uint32_t)meta->pkt.reth_va,
				     .delay_ns = meta->trace.delay_ns, .marks = meta->trace.marks,
				     .opcode = meta->pkt.opcode };
	n_recs++;
	rte_pktmbuf_free(m);
}

/* The runner's release at @p now: as many bursts as the stage hands over. */
static unsigned int
rel(struct rstage *s, uint64_t now)
{
	struct rte_mbuf *b[32];
	unsigned int got = 0;
	uint16_t n, i;

	s->ctx.now_ns = now;
	while ((n = emu_stage_reorder.release(s->priv, b, 32, &s->ctx)) > 0)
		for (i = 0; i < n; i++, got++) {
			emu_meta(b[i])->ts_ns = now; /* as the runner does: its departure */
			take(b[i], now);
		}
	return got;
}

/* Everything due up to @p t, at its due time. */
static void
run_until(struct rstage *s, uint64_t t)
{
	uint64_t due;

	while ((due = emu_stage_reorder.next_due_ns(s->priv)) <= t)
		rel(s, due);
}

/* A burst arriving at @p now (after what is due); returns what process() passed. */
static uint16_t
arrive_raw(struct rstage *s, uint64_t now, struct rte_mbuf **b, uint16_t n)
{
	uint16_t k, i;

	run_until(s, now);
	s->in += n;
	s->ctx.now_ns = now;
	k = emu_stage_reorder.process(s->priv, b, n, &s->ctx);
	for (i = 0; i < k; i++)
		take(b[i], now);
	return k;
}

/* The same, and what leaves at that time through release(): how many left at @p now. */
static unsigned int
arrive(struct rstage *s, uint64_t now, struct rte_mbuf **b, uint16_t n)
{
	unsigned int before = n_recs;

	arrive_raw(s, now, b, n);
	run_until(s, now);
	return n_recs - before;
}

static unsigned int
arrive1(struct rstage *s, uint64_t now, unsigned int qp, uint32_t psn, uint32_t id)
{
	struct rte_mbuf *m = pkt(qp, psn, OP_WRITE_ONLY, id, now);

	return arrive(s, now, &m, 1);
}

/* The PSNs QP @p qp left with, in departure order. */
static unsigned int
psns_of(unsigned int qp, uint32_t *out)
{
	unsigned int i, n = 0;

	for (i = 0; i < n_recs; i++)
		if (recs[i].qp == qp)
			out[n++] = recs[i].psn;
	return n;
}

static uint64_t lcg = 12345;

static uint32_t
rnd(uint32_t n)
{
	lcg = lcg * 6364136223846793005ULL + 1442695040888963407ULL;
	return (uint32_t)((lcg >> 33) % n);
}

/*
 * Four QPs of @p n packets each from PSN @p start, each QP's sequence permuted within blocks
 * of 16 (a packet overtakes at most 15 others), interleaved at random, in bursts of 1-32.
 */
static void
permutation_case(uint32_t start, unsigned int n)
{
	static uint32_t seq[4][4096], got[4096];
	unsigned int next[4] = { 0 }, qp, i, j, left = 4 * n;
	char json[128];
	struct rstage *s;
	uint64_t t = 1000;

	snprintf(json, sizeof(json), "{\"start\": %u, \"timeout_us\": 1000000}", start);
	s = rstage_new(json);
	for (qp = 0; qp < 4; qp++) {
		for (i = 0; i < n; i++)
			seq[qp][i] = (start + i) % PSN_MOD;
		for (i = 0; i < n; i += 16)
			for (j = 15; j > 0; j--) {
				uint32_t k = rnd(j + 1), x = seq[qp][i + j];

				seq[qp][i + j] = seq[qp][i + k];
				seq[qp][i + k] = x;
			}
	}
	while (left > 0) {
		struct rte_mbuf *b[32];
		uint16_t nb = (uint16_t)(1 + rnd(32));

		for (i = 0; i < nb && left > 0; i++, left--) {
			do
				qp = rnd(4);
			while (next[qp] == n);
			b[i] = pkt(qp, seq[qp][next[qp]], OP_WRITE_ONLY, next[qp], t);
			next[qp]++;
		}
		arrive(s, t, b, (uint16_t)i);
		t += 100;
	}
	run_until(s, t); /* what did not fit a burst leaves at the same time */
	for (qp = 0; qp < 4; qp++) {
		assert_int_equal(psns_of(qp, got), n);
		for (i = 0; i < n; i++)
			if (got[i] != (start + i) % PSN_MOD)
				fail_msg("QP %u: packet %u left with PSN %u, want %u", qp, i,
					 got[i], (start + i) % PSN_MOD);
	}
	assert_int_equal(emu_stage_reorder.held(s->priv), 0);
	assert_int_equal(ctr(s, "passed_in_order") + ctr(s, "released_in_order"), 4 * n);
	assert_int_equal(ctr(s, "held"), ctr(s, "released_in_order"));
	assert_true(ctr(s, "held") > n); /* it did reorder */
	assert_int_equal(ctr(s, "timeouts") + ctr(s, "passed_late") + ctr(s, "qps_evicted"), 0);
	assert_int_equal(ctr(s, "qps"), 4);
	assert_true(ctr(s, "max_depth") >= 2 && ctr(s, "max_depth") <= 15);
	/* a packet released in a burst leaves with the departure time of the one that freed it */
	for (i = 0; i < n_recs; i++)
		assert_int_equal(recs[i].ts, recs[i].t);
	rstage_free(s);
}

static void
test_permutations(void **state)
{
	(void)state;
	permutation_case(0, 4096);
	permutation_case(PSN_MOD - 1000, 2048); /* across the wrap */
}

/* Held packets in sequence leave right behind the packet that fills the hole: in the same
 * burst when there are free slots, else at the same time through release(), and an in-order
 * packet of that QP later in the burst waits behind them. */
static void
test_same_burst(void **state)
{
	struct rte_mbuf *b[4];
	struct rstage *s;
	unsigned int i;

	(void)state;
	s = rstage_new("{\"start\": 0}");
	b[0] = pkt(0, 2, OP_WRITE_ONLY, 2, 5000);
	b[1] = pkt(0, 1, OP_WRITE_ONLY, 1, 5000);
	b[2] = pkt(0, 0, OP_WRITE_ONLY, 0, 5000);
	assert_int_equal(arrive_raw(s, 5000, b, 3), 3);
	for (i = 0; i < 3; i++)
		assert_int_equal(recs[i].psn, i);
	/* 4, 5 held; a burst [3, 6, ACK]: 3 passes, 4 and 5 do not fit, 6 waits behind them */
	assert_int_equal(arrive1(s, 6000, 0, 5, 5), 0);
	assert_int_equal(arrive1(s, 6500, 0, 4, 4), 0);
	b[0] = pkt(0, 3, OP_WRITE_ONLY, 3, 7000);
	b[1] = pkt(0, 6, OP_WRITE_ONLY, 6, 7000);
	b[2] = pkt(0, 0, OP_ACK, 99, 7000);
	assert_int_equal(arrive_raw(s, 7000, b, 3), 2);
	assert_int_equal(recs[3].psn, 3);
	assert_int_equal(recs[4].opcode, OP_ACK); /* passed through */
	assert_int_equal(emu_stage_reorder.held(s->priv), 3);
	assert_int_equal(emu_stage_reorder.next_due_ns(s->priv), 7000);
	assert_int_equal(rel(s, 7000), 3);
	for (i = 5; i < 8; i++) {
		assert_int_equal(recs[i].psn, i - 1);
		assert_int_equal(recs[i].t, 7000);
	}
	/* the trace: held 1000 ns and 500 ns, marked delayed; 6 was not held */
	assert_int_equal(recs[5].delay_ns, 500);
	assert_int_equal(recs[6].delay_ns, 1000);
	assert_true(recs[5].marks & EMU_TRACE_DELAYED);
	assert_int_equal(recs[7].delay_ns, 0);
	assert_false(recs[7].marks & EMU_TRACE_DELAYED);
	assert_int_equal(ctr(s, "passed_through"), 1);
	assert_int_equal(emu_stage_reorder.next_due_ns(s->priv), UINT64_MAX);
	rstage_free(s);
}

/* Duplicates and go-back-N retransmissions pass at once; "first" learns E from the first. */
static void
test_late(void **state)
{
	struct rstage *s;
	uint32_t got[16];
	unsigned int i;

	(void)state;
	s = rstage_new("{}");
	assert_int_equal(arrive1(s, 1000, 0, 100, 0), 1); /* first: E = 100 */
	assert_int_equal(arrive1(s, 1100, 0, 101, 1), 1);
	assert_int_equal(arrive1(s, 1200, 0, 103, 2), 0); /* ahead: held */
	assert_int_equal(arrive1(s, 1300, 0, 99, 3), 1);  /* before the first: late */
	assert_int_equal(arrive1(s, 1400, 0, 100, 4), 1); /* go-back-N from 100 */
	assert_int_equal(arrive1(s, 1500, 0, 101, 5), 1);
	assert_int_equal(arrive1(s, 1600, 0, 103, 6), 0); /* duplicate of a held one: held too */
	assert_int_equal(arrive1(s, 1700, 0, 102, 7), 3); /* 102, then both 103 */
	assert_int_equal(ctr(s, "passed_late"), 3);
	assert_int_equal(ctr(s, "released_in_order"), 2);
	assert_int_equal(psns_of(0, got), 8);
	{
		static const uint32_t want[] = { 100, 101, 99, 100, 101, 102, 103, 103 };

		for (i = 0; i < RTE_DIM(want); i++)
			assert_int_equal(got[i], want[i]);
	}
	/* 2^23 - 1 ahead is ahead (held), 2^23 ahead is behind (passes) */
	assert_int_equal(arrive1(s, 1800, 0, 104 + 0x7fffff, 8), 0);
	assert_int_equal(arrive1(s, 1900, 0, 104 + 0x800000, 9), 1);
	assert_int_equal(ctr(s, "passed_late"), 4);
	rstage_free(s);
}

/* A hole is given up exactly timeout_us after its oldest held packet arrived. */
static void
test_timeout(void **state)
{
	struct rstage *s;

	(void)state;
	s = rstage_new("{\"start\": 0, \"timeout_us\": 10}");
	assert_int_equal(arrive1(s, 1000, 0, 3, 3), 0);
	assert_int_equal(arrive1(s, 1500, 0, 1, 1), 0);
	assert_int_equal(arrive1(s, 2000, 0, 2, 2), 0);
	assert_int_equal(emu_stage_reorder.next_due_ns(s->priv), 11000);
	assert_int_equal(rel(s, 10999), 0);
	/* the hole before 1 is given up: 1, 2, 3 leave in order */
	assert_int_equal(rel(s, 11000), 3);
	assert_int_equal(recs[0].psn, 1);
	assert_int_equal(recs[2].psn, 3);
	assert_int_equal(recs[0].delay_ns, 9500);
	assert_int_equal(recs[2].delay_ns, 10000);
	assert_int_equal(ctr(s, "timeouts"), 1);
	assert_int_equal(ctr(s, "released_timeout"), 3);
	assert_int_equal(arrive1(s, 12000, 0, 0, 0), 1); /* the lost one, late: passes */
	assert_int_equal(ctr(s, "passed_late"), 1);
	/* two holes: 6 (t 20000) and 8 (t 20500); the first goes at 30000, the second at 30500 */
	assert_int_equal(arrive1(s, 20000, 0, 6, 6), 0);
	assert_int_equal(arrive1(s, 20500, 0, 8, 8), 0);
	assert_int_equal(arrive1(s, 21000, 1, 0, 1), 1); /* another QP: unaffected */
	assert_int_equal(rel(s, 29999), 0);
	assert_int_equal(rel(s, 30000), 1);
	assert_int_equal(recs[n_recs - 1].psn, 6);
	assert_int_equal(emu_stage_reorder.next_due_ns(s->priv), 30500);
	assert_int_equal(rel(s, 30499), 0);
	assert_int_equal(rel(s, 30500), 1);
	assert_int_equal(recs[n_recs - 1].psn, 8);
	assert_int_equal(ctr(s, "timeouts"), 3);
	/* the oldest packet may lie behind a second hole: both holes go at its time */
	assert_int_equal(arrive1(s, 40000, 0, 13, 13), 0);
	assert_int_equal(arrive1(s, 40001, 0, 11, 11), 0);
	assert_int_equal(rel(s, 50000), 2);
	assert_int_equal(recs[n_recs - 2].psn, 11);
	assert_int_equal(recs[n_recs - 1].psn, 13);
	assert_int_equal(ctr(s, "timeouts"), 5);
	assert_int_equal(emu_stage_reorder.held(s->priv), 0);
	rstage_free(s);
}

/* After a READ request E is learned again (the response count needs the path MTU). */
static void
test_read(void **state)
{
	struct rte_mbuf *m;
	struct rstage *s;

	(void)state;
	s = rstage_new("{\"start\": 0}");
	assert_int_equal(arrive1(s, 1000, 0, 0, 0), 1);
	m = pkt(0, 1, OP_READ_REQ, 1, 1100);
	assert_int_equal(arrive(s, 1100, &m, 1), 1);
	assert_int_equal(arrive1(s, 1200, 0, 9, 9), 1); /* 1 + 8 responses: learned, passes */
	assert_int_equal(arrive1(s, 1300, 0, 11, 11), 0);
	assert_int_equal(arrive1(s, 1400, 0, 10, 10), 2);
	assert_int_equal(ctr(s, "timeouts"), 0);
	rstage_free(s);
}

/* max_held_pkts and max_qps, with both policies; drops go through the drop path. */
static void
test_limits(void **state)
{
	struct rstage *s;
	unsigned int qp;

	(void)state;
	/* held limit, flush: QP 0 holds 1..4 (0 lost); QP 1's ahead packet flushes QP 0 */
	s = rstage_new("{\"start\": 0, \"max_held_pkts\": 4}");
	for (qp = 1; qp <= 4; qp++)
		assert_int_equal(arrive1(s, 1000 + qp, 0, qp, qp), 0);
	assert_int_equal(arrive1(s, 2000, 1, 1, 1), 4);
	assert_int_equal(recs[0].psn, 1);
	assert_int_equal(recs[3].psn, 4);
	assert_int_equal(recs[3].ts, 2000);
	assert_int_equal(ctr(s, "flush_full"), 1);
	assert_int_equal(ctr(s, "released_flush"), 4);
	assert_int_equal(emu_stage_reorder.held(s->priv), 1);
	assert_int_equal(arrive1(s, 2100, 0, 5, 5), 1); /* E of QP 0 moved on to 5 */
	/* QP 1 holds 1, 3, 4, 5 (0 and 2 missing); its own 2 flushes it (its 1 is the oldest):
	 * 1, 3, 4, 5 leave in order, E moves to 6 and 2 is late: it follows at once */
	for (qp = 2; qp <= 4; qp++)
		assert_int_equal(arrive1(s, 3000 + qp, 1, qp + 1, qp), 0);
	assert_int_equal(arrive1(s, 3100, 1, 2, 2), 5);
	assert_int_equal(recs[n_recs - 2].psn, 5);
	assert_int_equal(recs[n_recs - 1].psn, 2);
	assert_int_equal(ctr(s, "passed_late"), 1);
	assert_int_equal(ctr(s, "flush_full"), 2);
	rstage_free(s);

	/* held limit, drop */
	s = rstage_new("{\"start\": 0, \"max_held_pkts\": 4, \"policy\": \"drop\"}");
	for (qp = 1; qp <= 4; qp++)
		assert_int_equal(arrive1(s, 1000 + qp, 0, qp, qp), 0);
	assert_int_equal(arrive1(s, 2000, 1, 1, 1), 0);
	assert_int_equal(ctr(s, "drop_reorder_full"), 1);
	assert_int_equal(s->last_reason, 1000 + ctr_idx("drop_reorder_full"));
	assert_int_equal(arrive1(s, 2100, 1, 0, 0), 1); /* in order needs no room */
	assert_int_equal(arrive1(s, 2200, 0, 0, 0), 5);
	rstage_free(s);

	/* table of 8 (one bucket), drop: 8 QPs hold a packet each, a 9th is refused ... */
	s = rstage_new("{\"start\": 0, \"max_qps\": 8, \"policy\": \"drop\"}");
	for (qp = 0; qp < 8; qp++)
		assert_int_equal(arrive1(s, 1000 + qp, qp, 1, qp), 0);
	assert_int_equal(arrive1(s, 2000, 8, 0, 8), 0);
	assert_int_equal(ctr(s, "drop_reorder_full"), 1);
	/* ... until one has nothing held: its entry is reused (it forgets its E) */
	assert_int_equal(arrive1(s, 2100, 3, 0, 30), 2);
	assert_int_equal(arrive1(s, 2200, 8, 0, 8), 1);
	assert_int_equal(ctr(s, "qps_evicted"), 1);
	assert_int_equal(ctr(s, "qps"), 9);
	rstage_free(s);

	/* table of 8, flush: the least recently used QP is flushed and its entry reused */
	s = rstage_new("{\"start\": 0, \"max_qps\": 8}");
	for (qp = 0; qp < 8; qp++)
		assert_int_equal(arrive1(s, 1000 + qp, qp, 1, qp), 0);
	assert_int_equal(arrive1(s, 2000, 8, 0, 8), 2); /* QP 0's PSN 1, then QP 8's 0 */
	assert_int_equal(recs[0].qp, 0);
	assert_int_equal(recs[1].qp, 8);
	assert_int_equal(ctr(s, "flush_full"), 1);
	assert_int_equal(ctr(s, "qps_evicted"), 1);
	assert_int_equal(emu_stage_reorder.held(s->priv), 7);
	rstage_free(s); /* frees the 7 it still holds */
}

/* A caller that never calls release(): the ready ring (2 x max_held_pkts + 1024, rounded up
 * to a power of two) fills, then what would go there is dropped through the drop path. */
static void
test_ring_full(void **state)
{
	struct rte_mbuf *m;
	struct rstage *s;
	unsigned int i, passed = 0;

	(void)state;
	s = rstage_new("{\"start\": 0, \"max_held_pkts\": 1}");
	assert_int_equal(arrive1(s, 1000, 0, 1, 1), 0);
	for (i = 0; i < 2100; i++) {
		m = pkt(0, i == 0 ? 0 : i + 1, OP_WRITE_ONLY, i, 2000);
		s->in++;
		s->ctx.now_ns = 2000;
		if (emu_stage_reorder.process(s->priv, &m, 1, &s->ctx) == 1) {
			take(m, 2000);
			passed++;
		}
	}
	/* PSN 0 went on; 1 and 2..2047 wait in the ring (2048 slots), the rest were dropped */
	assert_int_equal(passed, 1);
	assert_int_equal(emu_stage_reorder.held(s->priv), 2048);
	assert_int_equal(ctr(s, "drop_reorder_full"), 2100 - 1 - 2047);
	{
		struct rte_mbuf *b[32];
		uint16_t k;

		s->ctx.now_ns = 2000;
		assert_int_equal(emu_stage_reorder.release(s->priv, b, 32, &s->ctx), 32);
		for (k = 0; k < 32; k++) {
			take(b[k], 2000);
			assert_int_equal(recs[n_recs - 1].psn, k + 1u); /* in order */
		}
	}
	assert_int_equal(emu_stage_reorder.held(s->priv), 2048 - 32);
	rstage_free(s); /* frees what is still in the ring */
}

/* Only requests leaving by "ports" and selected by "match" are sorted; the rest pass. */
static void
test_filters(void **state)
{
	struct rte_mbuf *m;
	struct rstage *s;

	(void)state;
	s = rstage_new("{\"start\": 0, \"ports\": [\"p1\"], \"match\": {\"dest_qp\": 70}}");
	assert_int_equal(arrive1(s, 1000, 0, 5, 5), 1); /* QPN 0x45: not matched */
	assert_int_equal(arrive1(s, 1100, 2, 5, 5), 0); /* QPN 0x46 = 70: held */
	m = pkt(2, 6, OP_WRITE_ONLY, 6, 1200);
	emu_meta(m)->out_port = 0; /* to p0: not sorted */
	assert_int_equal(arrive(s, 1200, &m, 1), 1);
	m = pkt(2, 7, OP_WRITE_ONLY, 7, 1300);
	emu_meta(m)->flags = 0; /* not parsed */
	assert_int_equal(arrive(s, 1300, &m, 1), 1);
	assert_int_equal(ctr(s, "passed_through"), 3);
	assert_int_equal(ctr(s, "held"), 1);
	assert_int_equal(ctr(s, "qps"), 1);
	rstage_free(s);
}

/* Bad keys are refused with the path first; ingress is refused. */
static void
test_config(void **state)
{
	static const char *const bad[][2] = {
		{ "{\"timeout_us\": 0}", "egress[0].timeout_us: must be > 0, got 0" },
		{ "{\"timeout_us\": 0.0001}",
		  "egress[0].timeout_us: must be at least 0.001 (1 ns), got 0.0001" },
		{ "{\"policy\": \"wait\"}",
		  "egress[0].policy: must be \"flush\" or \"drop\", got \"wait\"" },
		{ "{\"start\": \"last\"}",
		  "egress[0].start: must be \"first\" or a PSN 0-16777215, got \"last\"" },
		{ "{\"start\": 16777216}",
		  "egress[0].start: must be in [0, 16777215], got 16777216" },
		{ "{\"max_qps\": 4}", "egress[0].max_qps: must be in [8, 1048576], got 4" },
		{ "{\"ports\": []}",
		  "egress[0].ports: must name at least one port; omit it for all ports" },
		{ "{\"match\": {\"iteration\": 1}}",
		  "egress[0].match.iteration: not in a reorder stage (no iteration tracker there)" },
	};
	struct emu_err err;
	struct rstage s;
	unsigned int i;

	(void)state;
	for (i = 0; i < RTE_DIM(bad); i++) {
		assert_int_not_equal(rstage_init(&s, bad[i][0], true, &err), 0);
		emu_stage_reorder.free(s.priv);
		assert_string_equal(err.msg, bad[i][1]);
	}
	assert_int_not_equal(rstage_init(&s, "{}", false, &err), 0);
	emu_stage_reorder.free(s.priv);
	assert_non_null(strstr(err.msg, "must be in the egress list"));
}

/* Through the switch: held packets count in the conservation line; the runner wakes up at
 * the timeout; what is held at exit is discarded and counted. */
static void
test_switch_conservation(void **state)
{
	struct emu_pipeline *pl = test_pipeline(
		"{\"ports\": [{\"name\": \"a\"}, {\"name\": \"b\"}],"
		" \"ingress\": [{\"type\": \"parse\"}, {\"type\": \"forward\"}],"
		" \"egress\": [{\"type\": \"reorder\", \"start\": 0, \"timeout_us\": 50}]}");
	struct emu_switch *sw = test_switch(pool, pl);
	struct emu_conservation c;
	struct rte_mbuf *m[3], **pkts;
	uint64_t t, n_out = 0;
	uint16_t n;

	(void)state;
	m[0] = pkt(0, 2, OP_WRITE_ONLY, 2, 0);
	m[1] = pkt(0, 1, OP_WRITE_ONLY, 1, 0);
	m[2] = pkt(1, 5, OP_WRITE_ONLY, 5, 0);
	emu_switch_rx(sw, 0, m, 3, 1000);
	while ((t = emu_switch_next_event_ns(sw)) < 40000) {
		n = emu_switch_tx_prepare(sw, 1, t, &pkts);
		n_out += n;
		rte_pktmbuf_free_bulk(pkts, n);
		emu_switch_tx_done(sw, 1, n);
	}
	assert_int_equal(n_out, 0);
	assert_int_equal(emu_switch_held(sw), 3);
	emu_switch_conservation(sw, &c);
	assert_int_equal(c.unaccounted, 0);
	/* QP 0's hole times out 50 us after the TM delivered its packets */
	n = emu_switch_tx_prepare(sw, 1, t, &pkts);
	assert_true(t > 51000 && t < 52000);
	assert_int_equal(n, 2);
	assert_int_equal(emu_meta(pkts[0])->pkt.psn, 1);
	assert_int_equal(emu_meta(pkts[0])->ts_ns, t);
	rte_pktmbuf_free_bulk(pkts, n);
	emu_switch_tx_done(sw, 1, n);
	/* QP 1 never saw PSN 0..4 and still holds PSN 5 when the run stops (before its timeout) */
	emu_switch_discard_held(sw);
	emu_switch_conservation(sw, &c);
	assert_int_equal(c.held, 0);
	assert_int_equal(c.unaccounted, 0);
	assert_int_equal(c.drops, 1); /* drop_discarded_at_exit */
	assert_int_equal(c.tx, 2);
	assert_int_equal(emu_switch_stage_counter(sw, "reorder", "timeouts"), 1);
	emu_switch_free(sw);
	emu_pipeline_free(pl);
	assert_int_equal(rte_mempool_avail_count(pool), pool_full);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_permutations),
		cmocka_unit_test(test_same_burst),
		cmocka_unit_test(test_late),
		cmocka_unit_test(test_timeout),
		cmocka_unit_test(test_read),
		cmocka_unit_test(test_limits),
		cmocka_unit_test(test_filters),
		cmocka_unit_test(test_ring_full),
		cmocka_unit_test(test_config),
		cmocka_unit_test(test_switch_conservation),
	};

	pool = test_eal_pool("test_reorder", 16384);
	pool_full = rte_mempool_avail_count(pool);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
