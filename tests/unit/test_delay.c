/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The delay stage: its ops driven as the runner drives them (release due packets at their due
 * time and before each arrival, then process the arrival). The output delay distribution is
 * checked against the configured one with a Kolmogorov-Smirnov test at 1%; order is kept unless
 * "reorder" is set; through the switch, held packets leave on time and are conserved.
 */
#include <math.h>

#include "test_common.h"
#include "lib/stages/stages.h"

static struct rte_mempool *pool;
static const char *const port_names[] = { "p0", "p1" };
static const uint8_t mac_a[6] = { 2, 0, 0, 0, 0, 0xa };
static const uint8_t mac_b[6] = { 2, 0, 0, 0, 0, 0xb };

struct dstage {
	uint8_t priv[8192];
	uint64_t ctr[16];
	struct emu_rng rng;
	struct emu_emit emit;
	struct emu_burst_ctx ctx;
};

static int
dstage_init(struct dstage *s, const char *json, struct emu_err *err)
{
	struct emu_stage_env env = { .path = "ingress[2]", .n_ports = 2, .port_names = port_names };
	json_error_t jerr;
	json_t *cfg = json_loads(json, JSON_REJECT_DUPLICATES, &jerr);
	int rc;

	memset(s, 0, sizeof(*s));
	assert_true(emu_stage_delay.priv_size <= sizeof(s->priv));
	if (cfg == NULL)
		fail_msg("bad JSON: %s", jerr.text);
	rc = emu_stage_delay.init(s->priv, cfg, &env, err);
	json_decref(cfg);
	emu_rng_seed(&s->rng, 5, 1);
	s->emit.pool = pool;
	s->ctx.rng = &s->rng;
	s->ctx.ctr = s->ctr;
	s->ctx.emit = &s->emit;
	return rc;
}

static struct dstage *
dstage_new(const char *json)
{
	struct dstage *s = malloc(sizeof(*s));
	struct emu_err err;

	assert_non_null(s);
	if (dstage_init(s, json, &err) != 0)
		fail_msg("init: %s", err.msg);
	return s;
}

static void
dstage_free(struct dstage *s)
{
	emu_stage_delay.free(s->priv);
	free(s);
}

/* Record one released packet: its delay and arrival index. */
static void
record(struct rte_mbuf *m, uint64_t now, double *delays, uint32_t *order, unsigned int *n_out)
{
	delays[*n_out] = (double)(now - emu_meta(m)->ts_ns) / 1000.0; /* us */
	order[*n_out] = test_frame_seq(m);
	(*n_out)++;
	rte_pktmbuf_free(m);
}

static void
release_due(struct dstage *s, uint64_t now, double *delays, uint32_t *order, unsigned int *n_out)
{
	struct rte_mbuf *burst[32];
	uint16_t n, i;

	s->ctx.now_ns = now;
	while ((n = emu_stage_delay.release(s->priv, burst, 32, &s->ctx)) > 0)
		for (i = 0; i < n; i++)
			record(burst[i], now, delays, order, n_out);
}

/* @p n packets arriving every @p gap_ns for port p1; delays (us) and order of departure. */
static void
drive(struct dstage *s, unsigned int n, uint64_t gap_ns, double *delays, uint32_t *order)
{
	unsigned int i = 0, n_out = 0;
	uint64_t t_arr, t_due;

	while (i < n || emu_stage_delay.next_due_ns(s->priv) != UINT64_MAX) {
		t_arr = i < n ? (uint64_t)i * gap_ns + 1000000000ULL : UINT64_MAX;
		t_due = emu_stage_delay.next_due_ns(s->priv);
		if (t_due <= t_arr) {
			release_due(s, t_due, delays, order, &n_out);
			continue;
		}
		{
			struct rte_mbuf *m = test_frame(pool, mac_b, mac_a, 64, i);
			struct emu_pkt_meta *meta = emu_meta(m);
			uint16_t k;

			memset(meta, 0, sizeof(*meta));
			meta->ts_ns = t_arr;
			meta->out_port = 1;
			s->ctx.now_ns = t_arr;
			k = emu_stage_delay.process(s->priv, &m, 1, &s->ctx);
			if (k == 1)
				record(m, t_arr, delays, order, &n_out);
		}
		i++;
	}
	assert_int_equal(n_out, n);
	assert_int_equal(emu_stage_delay.held(s->priv), 0);
}

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Kolmogorov-Smirnov statistic of @p x (sorted here) against CDF @p F. */
static double
ks_stat(double *x, unsigned int n, double (*F)(double, const double *), const double *par)
{
	double d = 0, f;
	unsigned int i;

	qsort(x, n, sizeof(*x), cmp_double);
	for (i = 0; i < n; i++) {
		f = F(x[i], par);
		d = fmax(d, fmax((double)(i + 1) / n - f, f - (double)i / n));
	}
	return d;
}

/* Critical value at 1% (asymptotic: sqrt(-ln(0.005) / 2) / sqrt(n)). */
static double
ks_crit(unsigned int n)
{
	return 1.6276 / sqrt((double)n);
}

static double
cdf_uniform(double x, const double *p)
{
	return fmin(1, fmax(0, (x - p[0]) / (p[1] - p[0])));
}

static double
cdf_normal(double x, const double *p)
{
	return 0.5 * erfc(-(x - p[0]) / (p[1] * sqrt(2.0)));
}

static double
cdf_pareto(double x, const double *p)
{
	return x < p[0] ? 0 : 1 - pow(p[0] / x, p[1]);
}

/* Table (0 us, 0), (10 us, 0.5), (100 us, 1). */
static double
cdf_table(double x, const double *p)
{
	(void)p;
	if (x <= 0)
		return 0;
	if (x <= 10)
		return 0.05 * x;
	if (x <= 100)
		return 0.5 + 0.5 * (x - 10) / 90;
	return 1;
}

#define N_KS 20000

static void
ks_case(const char *json, double (*F)(double, const double *), const double *par,
	const char *what)
{
	static double delays[N_KS];
	static uint32_t order[N_KS];
	struct dstage *s = dstage_new(json);
	double d;

	/* 1 ms apart: far more than any delay here, so the in-order rule never stretches one. */
	drive(s, N_KS, 1000000, delays, order);
	d = ks_stat(delays, N_KS, F, par);
	printf("  %s: KS D = %.5f (1%% critical %.5f)\n", what, d, ks_crit(N_KS));
	if (d > ks_crit(N_KS))
		fail_msg("%s: KS D %g > %g", what, d, ks_crit(N_KS));
	dstage_free(s);
}

static void
test_distributions(void **state)
{
	static const double uni[] = { 60, 140 }, nor[] = { 100, 10 }, par[] = { 10, 2.5 };
	static const double wrong[] = { 62, 142 };
	static double delays[N_KS];
	static uint32_t order[N_KS];
	const char *table = "/tmp/rocemu_test_delay_table.txt";
	char json[512];
	struct dstage *s;
	FILE *f;

	(void)state;
	ks_case("{\"rules\": [{\"dist\": \"uniform\", \"delay_us\": 100, \"jitter_us\": 40}]}",
		cdf_uniform, uni, "uniform 100 +- 40 us");
	ks_case("{\"rules\": [{\"dist\": \"normal\", \"delay_us\": 100, \"jitter_us\": 10}]}",
		cdf_normal, nor, "normal 100, sigma 10 us");
	ks_case("{\"rules\": [{\"dist\": \"pareto\", \"delay_us\": 10, \"shape\": 2.5}]}",
		cdf_pareto, par, "pareto 10 us, shape 2.5");
	f = fopen(table, "w");
	assert_non_null(f);
	fprintf(f, "# delay_us cumulative_probability\n0 0\n10 0.5\n\n100 1\n");
	fclose(f);
	snprintf(json, sizeof(json), "{\"rules\": [{\"dist\": \"table\", \"table\": \"%s\"}]}",
		 table);
	ks_case(json, cdf_table, NULL, "table");
	/* The test has power: the same uniform samples against a distribution 2 us off fail. */
	s = dstage_new("{\"rules\": [{\"dist\": \"uniform\", \"delay_us\": 100,"
		       " \"jitter_us\": 40}]}");
	drive(s, N_KS, 1000000, delays, order);
	assert_true(ks_stat(delays, N_KS, cdf_uniform, wrong) > ks_crit(N_KS));
	dstage_free(s);
	/* Constant: exactly the delay. */
	s = dstage_new("{\"rules\": [{\"delay_us\": 12.5}]}");
	drive(s, 100, 1000, delays, order);
	assert_true(delays[0] == 12.5 && delays[99] == 12.5);
	dstage_free(s);
	unlink(table);
}

static void
test_order(void **state)
{
	static double delays[N_KS];
	static uint32_t order[N_KS];
	struct dstage *s;
	unsigned int i, inversions;

	(void)state;
	/* 1 us apart with 100 +- 90 us of jitter: in order by default... */
	s = dstage_new("{\"rules\": [{\"dist\": \"uniform\", \"delay_us\": 100,"
		       " \"jitter_us\": 90}]}");
	drive(s, 5000, 1000, delays, order);
	for (i = 0; i < 5000; i++)
		assert_int_equal(order[i], i);
	dstage_free(s);
	/* ... and reordered when allowed. */
	s = dstage_new("{\"reorder\": true, \"rules\": [{\"dist\": \"uniform\", \"delay_us\": 100,"
		       " \"jitter_us\": 90}]}");
	drive(s, 5000, 1000, delays, order);
	for (i = 1, inversions = 0; i < 5000; i++)
		inversions += order[i] < order[i - 1];
	assert_true(inversions > 1000);
	dstage_free(s);
	/* Per match: a rule for arrivals on p1; these arrive on p0 and pass at once. */
	s = dstage_new("{\"rules\": [{\"match\": {\"ports\": [\"p1\"]}, \"delay_us\": 5}]}");
	drive(s, 10, 1000, delays, order);
	assert_true(delays[0] == 0 && delays[9] == 0);
	dstage_free(s);
}

static void
test_table_errors(void **state)
{
	const char *table = "/tmp/rocemu_test_delay_bad.txt";
	struct emu_err err;
	struct dstage s;
	char json[256];
	FILE *f;

	(void)state;
	snprintf(json, sizeof(json), "{\"rules\": [{\"dist\": \"table\", \"table\": \"%s\"}]}",
		 table);
	f = fopen(table, "w");
	assert_non_null(f);
	fprintf(f, "0 0\n10 0.6\n5 1\n");
	fclose(f);
	assert_int_not_equal(dstage_init(&s, json, &err), 0);
	emu_stage_delay.free(s.priv);
	assert_string_equal(err.msg, "ingress[2].rules[0].table: /tmp/rocemu_test_delay_bad.txt "
			    "line 3: delays >= 0 and probabilities in [0, 1] must not decrease");
	f = fopen(table, "w");
	fprintf(f, "0 0\n10 0.9\n");
	fclose(f);
	assert_int_not_equal(dstage_init(&s, json, &err), 0);
	emu_stage_delay.free(s.priv);
	assert_string_equal(err.msg, "ingress[2].rules[0].table: /tmp/rocemu_test_delay_bad.txt: "
			    "need at least 2 points and a last probability of 1");
	f = fopen(table, "w");
	fprintf(f, "0 0 x\n");
	fclose(f);
	assert_int_not_equal(dstage_init(&s, json, &err), 0);
	emu_stage_delay.free(s.priv);
	assert_string_equal(err.msg, "ingress[2].rules[0].table: /tmp/rocemu_test_delay_bad.txt "
			    "line 1: want \"delay_us probability\"");
	unlink(table);
	assert_int_not_equal(dstage_init(&s, json, &err), 0);
	emu_stage_delay.free(s.priv);
	assert_string_equal(err.msg, "ingress[2].rules[0].table: cannot open "
			    "\"/tmp/rocemu_test_delay_bad.txt\": No such file or directory");
}

/* Through the switch: the runner wakes at the due time and the packet leaves then. */
static void
test_switch_release(void **state)
{
	struct emu_pipeline *pl = test_pipeline(
		"{\"ports\": [{\"name\": \"a\"}, {\"name\": \"b\"}],"
		" \"ingress\": [{\"type\": \"forward\"}, {\"type\": \"delay\","
		" \"rules\": [{\"delay_us\": 50}]}]}");
	struct emu_switch *sw = test_switch(pool, pl);
	struct emu_conservation c;
	struct rte_mbuf *m, **pkts;
	uint64_t t;
	uint16_t n;

	(void)state;
	m = test_frame(pool, mac_b, mac_a, 100, 7);
	emu_switch_rx(sw, 0, &m, 1, 1000);
	assert_int_equal(emu_switch_held(sw), 1);
	assert_int_equal(emu_switch_next_event_ns(sw), 51000);
	emu_switch_conservation(sw, &c);
	assert_int_equal(c.unaccounted, 0);
	n = emu_switch_tx_prepare(sw, 1, 50999, &pkts);
	assert_int_equal(n, 0);
	t = emu_switch_next_event_ns(sw);
	assert_int_equal(t, 51000);
	n = emu_switch_tx_prepare(sw, 1, t, &pkts);
	/* Released at 51000 into the TM; it leaves after serialisation (100 B at 100 Gb/s). */
	while (n == 0 && (t = emu_switch_next_event_ns(sw)) != UINT64_MAX)
		n = emu_switch_tx_prepare(sw, 1, t, &pkts);
	assert_int_equal(n, 1);
	assert_true(t >= 51000 && t < 51000 + 100);
	assert_int_equal(test_frame_seq(pkts[0]), 7);
	rte_pktmbuf_free(pkts[0]);
	emu_switch_tx_done(sw, 1, 1);
	emu_switch_conservation(sw, &c);
	assert_int_equal(c.tx, 1);
	assert_int_equal(c.held, 0);
	assert_int_equal(c.unaccounted, 0);
	assert_int_equal(emu_switch_stage_counter(sw, "delay", "released"), 1);
	emu_switch_free(sw);
	emu_pipeline_free(pl);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_distributions),
		cmocka_unit_test(test_order),
		cmocka_unit_test(test_table_errors),
		cmocka_unit_test(test_switch_release),
	};

	pool = test_eal_pool("test_delay", 16384);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
