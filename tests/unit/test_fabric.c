/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The fabric's next-hop choice (lib/fabric fab_route.c, fab.h) on random traffic: fab_route(),
 * whose common case (an ECMP switch, a flow its memo holds) is inline and whose lists of next
 * hops that are up are rebuilt only when the links-up word changes, against fab_route_any()
 * on a second, identical runtime state, and at every ECMP switch against the definition:
 * the next hops on a shortest path whose link is up, in configuration order, picked by
 * fab_hash_pick(fab_hash()) (no memo). Links go down and come back up during the run.
 * Resilient hashing (fab_res.c) against plain ECMP: test_resilient().
 */
#include <inttypes.h>
#include <string.h>

#include "lib/fabric/fab.h"
#include "tests/unit/test_common.h"

static uint64_t rs = 0x9E3779B97F4A7C15ULL;

static uint32_t
rnd(void)
{
	rs ^= rs << 13;
	rs ^= rs >> 7;
	rs ^= rs << 17;
	return (uint32_t)(rs >> 11);
}

/*
 * Two leaves and four spines, two parallel links between each leaf and each spine: eight
 * equal-cost paths from leaf to leaf. The leaves hash with CRC16 and Murmur3 (different
 * seeds), spine0-2 with ECMP of their own (Toeplitz on spine2), spine3 round robin.
 */
static const char *const fab_json =
	"{\"ports\": [{\"name\": \"p0\"}, {\"name\": \"p1\"}],"
	" \"ingress\": [{\"type\": \"parse\"}, {\"type\": \"forward\"}],"
	" \"fabric\": {\"switches\": ["
	" {\"name\": \"leaf0\", \"ports\": [\"p0\"], \"hash\": {\"function\": \"crc16_ccitt\"}},"
	" {\"name\": \"leaf1\", \"ports\": [\"p1\"], \"hash\": {\"function\": \"murmur3\","
	"   \"seed\": 7}},"
	" {\"name\": \"spine0\"}, {\"name\": \"spine1\", \"hash\": {\"seed\": 99}},"
	" {\"name\": \"spine2\", \"hash\": {\"function\": \"toeplitz\"}},"
	" {\"name\": \"spine3\", \"route\": \"round_robin\"}],"
	" \"links\": [{\"from\": \"leaf0\", \"to\": \"spine0\", \"count\": 2},"
	" {\"from\": \"leaf0\", \"to\": \"spine1\", \"count\": 2},"
	" {\"from\": \"leaf0\", \"to\": \"spine2\", \"count\": 2},"
	" {\"from\": \"leaf0\", \"to\": \"spine3\", \"count\": 2},"
	" {\"from\": \"spine0\", \"to\": \"leaf1\", \"count\": 2},"
	" {\"from\": \"spine1\", \"to\": \"leaf1\", \"count\": 2},"
	" {\"from\": \"spine2\", \"to\": \"leaf1\", \"count\": 2},"
	" {\"from\": \"spine3\", \"to\": \"leaf1\", \"count\": 2}]}}";

static struct fab_rt *
route_rt(void)
{
	struct fab_rt *rt = calloc(1, sizeof(*rt));

	assert_non_null(rt);
	rt->hash_memo = calloc(FAB_HASH_CACHE_SLOTS, sizeof(*rt->hash_memo));
	assert_non_null(rt->hash_memo);
	fab_rt_init(rt);
	return rt;
}

/* One of 600 flows (more than the memo holds without collisions), IPv4 or IPv6. */
static void
route_pkt(struct emu_pkt_meta *meta, unsigned int flow)
{
	struct roce_pkt *p = &meta->pkt;
	unsigned int i;

	memset(meta, 0, sizeof(*meta));
	meta->flags = flow % 97 == 0 ? 0 : EMU_META_PARSED; /* a few unparsed frames */
	p->cls = ROCE_CLASS_ROCEV2;
	p->ip_version = flow % 5 == 0 ? 6 : 4;
	for (i = 0; i < (p->ip_version == 4 ? 4u : 16u); i++) {
		p->src_ip[i] = (uint8_t)(10 + i + flow * 7);
		p->dst_ip[i] = (uint8_t)(20 + i + flow / 3);
	}
	p->udp_sport = (uint16_t)(0xC000 + flow * 977);
	p->udp_dport = 4791;
	p->dest_qp = 0x100 + flow % 64;
}

/* The definition at ECMP switch @p s towards @p d, as fab_route() documents it. */
static uint16_t
route_ref(const struct fab_cfg *cfg, uint64_t links_up, unsigned int s, unsigned int d,
	  const struct emu_pkt_meta *meta)
{
	uint16_t up[FAB_MAX_NEXT];
	unsigned int i, n = 0;

	for (i = 0; i < cfg->n_next[s][d]; i++)
		if ((links_up >> cfg->next[s][d][i]) & 1)
			up[n++] = cfg->next[s][d][i];
	if (n == 0)
		return FAB_NONE;
	if (n == 1 || !(meta->flags & EMU_META_PARSED))
		return up[0];
	return up[fab_hash_pick(fab_hash(&cfg->sw[s].hash, &meta->pkt), n)];
}

static void
test_route_same(void **state)
{
	struct emu_pipeline *pl = test_pipeline(fab_json);
	const struct fab_cfg *cfg = pl->fabric;
	struct fab_rt *a = route_rt(), *b = route_rt();
	unsigned int it, checked = 0, none = 0, changes = 0, down_max = 0, used[FAB_MAX_LINKS];
	uint64_t all = 0;
	struct emu_rng ra, rb;

	(void)state;
	assert_non_null(cfg);
	assert_int_equal(cfg->n_links, 32);
	for (it = 0; it < cfg->n_links; it++)
		all |= 1ULL << it;
	a->links_up = b->links_up = all;
	memset(used, 0, sizeof(used));
	emu_rng_seed(&ra, 3, 3);
	emu_rng_seed(&rb, 3, 3);
	for (it = 0; it < 400000; it++) {
		struct emu_pkt_meta meta;
		unsigned int s = rnd() % cfg->n_switches, d = rnd() % 2; /* to leaf0 or leaf1 */
		uint16_t la, lb;

		if (rnd() % 5000 == 0) {
			/* a link goes down or comes back (the runner rewrites the word) */
			a->links_up ^= 1ULL << (rnd() % cfg->n_links);
			if (rnd() % 4 == 0)
				a->links_up = all;
			b->links_up = a->links_up;
			changes++;
			if ((unsigned int)__builtin_popcountll(all & ~a->links_up) > down_max)
				down_max = (unsigned int)__builtin_popcountll(all & ~a->links_up);
		}
		route_pkt(&meta, rnd() % 600);
		if (s == d)
			continue;
		la = fab_route(cfg, a, NULL, s, d, &meta, it, &ra);
		lb = fab_route_any(cfg, b, NULL, s, d, &meta, it, &rb);
		assert_int_equal(la, lb);
		if (cfg->sw[s].mode == FAB_ROUTE_ECMP) {
			assert_int_equal(la, route_ref(cfg, a->links_up, s, d, &meta));
			checked++;
		}
		if (la == FAB_NONE) {
			none++;
			continue;
		}
		/* a link out of s towards d that is up */
		assert_true(la < cfg->n_links);
		assert_int_equal(cfg->links[la].from, s);
		assert_true((a->links_up >> la) & 1);
		used[la]++;
	}
	for (it = 0; it < cfg->n_links; it++)
		assert_true(used[it] > 0);
	print_message("fab_route: %u choices at ECMP switches against the definition, %u with "
		      "no link up, %u changes of the links up (at most %u down): same\n", checked,
		      none, changes, down_max);
	assert_true(changes > 20);
	free(a->hash_memo);
	free(b->hash_memo);
	free(a);
	free(b);
	emu_pipeline_free(pl);
}

/* A fabric of @p links (JSON) among leaves with one port each (p0 on leaf0, ...) and spines. */
static struct emu_pipeline *
levels_pipeline(const char *switches, const char *links)
{
	static char json[2048];

	snprintf(json, sizeof(json),
		 "{\"ports\": [{\"name\": \"p0\"}, {\"name\": \"p1\"}, {\"name\": \"p2\"}],"
		 " \"ingress\": [{\"type\": \"parse\"}, {\"type\": \"forward\"}],"
		 " \"fabric\": {\"switches\": [%s], \"links\": [%s]}}", switches, links);
	return test_pipeline(json);
}

/*
 * The levels the runner processes a fabric by (fab_cfg.c fab_levels()): only the routes that
 * packets take count, towards the leaves that have real ports. A leaf-spine is two levels (up,
 * then down, the down links the last: their packets leave for their real port), whatever
 * else its links could carry; a line of three leaves, where one link is fed both by a real
 * port and by another link, is not processed level by level.
 */
static void
test_levels(void **state)
{
	struct emu_pipeline *pl = test_pipeline(fab_json);
	const struct fab_cfg *cfg = pl->fabric;
	unsigned int l;

	(void)state;
	assert_true(cfg->levels_exact);
	assert_int_equal(cfg->n_levels, 2);
	for (l = 0; l < cfg->n_links; l++) {
		const bool up = strncmp(cfg->sw[cfg->links[l].from].name, "leaf", 4) == 0;

		assert_int_equal(cfg->level[l], up ? 0 : 1);
	}
	assert_false(cfg->level_last[0]);
	assert_true(cfg->level_last[1]);
	emu_pipeline_free(pl);

	/* two leaves, links between them only: one level, the last */
	pl = levels_pipeline("{\"name\": \"leaf0\", \"ports\": [\"p0\"]},"
			     " {\"name\": \"leaf1\", \"ports\": [\"p1\", \"p2\"]}",
			     "{\"from\": \"leaf0\", \"to\": \"leaf1\", \"count\": 3}");
	cfg = pl->fabric;
	assert_true(cfg->levels_exact);
	assert_int_equal(cfg->n_levels, 1);
	assert_true(cfg->level_last[0]);
	emu_pipeline_free(pl);

	/* leaf0 - leaf1 - leaf2 in a line: leaf1-leaf2 carries p1's packets (first hop) and
	 * p0's (second hop) */
	pl = levels_pipeline("{\"name\": \"leaf0\", \"ports\": [\"p0\"]},"
			     " {\"name\": \"leaf1\", \"ports\": [\"p1\"]},"
			     " {\"name\": \"leaf2\", \"ports\": [\"p2\"]}",
			     "{\"from\": \"leaf0\", \"to\": \"leaf1\"},"
			     " {\"from\": \"leaf1\", \"to\": \"leaf2\"}");
	cfg = pl->fabric;
	assert_false(cfg->levels_exact);
	emu_pipeline_free(pl);
}

/*
 * Groups of real ports whose packets share no link (fab_groups.c), the split of a fabric over
 * workers: two leaves split by leaf; three leaves on two spines do not (a leaf's up-links carry
 * packets to both others).
 */
static void
test_port_groups(void **state)
{
	struct emu_pipeline *pl;
	uint8_t g[EMU_MAX_PORTS];

	(void)state;
	pl = levels_pipeline("{\"name\": \"leaf0\", \"ports\": [\"p0\", \"p1\"]},"
			     " {\"name\": \"leaf1\", \"ports\": [\"p2\"]},"
			     " {\"name\": \"spine0\"}, {\"name\": \"spine1\"}",
			     "{\"from\": \"leaf0\", \"to\": \"spine0\"},"
			     " {\"from\": \"leaf0\", \"to\": \"spine1\"},"
			     " {\"from\": \"leaf1\", \"to\": \"spine0\"},"
			     " {\"from\": \"leaf1\", \"to\": \"spine1\"}");
	assert_int_equal(fab_port_groups(pl->fabric, g), 2);
	assert_int_equal(g[0], 0);
	assert_int_equal(g[1], 0);
	assert_int_equal(g[2], 1);
	assert_int_equal(fab_shared_link(pl->fabric, 0, 2), FAB_NONE);
	assert_int_not_equal(fab_shared_link(pl->fabric, 0, 1), FAB_NONE);
	emu_pipeline_free(pl);

	pl = levels_pipeline("{\"name\": \"leaf0\", \"ports\": [\"p0\"]},"
			     " {\"name\": \"leaf1\", \"ports\": [\"p1\"]},"
			     " {\"name\": \"leaf2\", \"ports\": [\"p2\"]},"
			     " {\"name\": \"spine0\"}, {\"name\": \"spine1\"}",
			     "{\"from\": \"leaf0\", \"to\": \"spine0\"},"
			     " {\"from\": \"leaf1\", \"to\": \"spine0\"},"
			     " {\"from\": \"leaf2\", \"to\": \"spine0\"},"
			     " {\"from\": \"leaf0\", \"to\": \"spine1\"},"
			     " {\"from\": \"leaf1\", \"to\": \"spine1\"},"
			     " {\"from\": \"leaf2\", \"to\": \"spine1\"}");
	assert_int_equal(fab_port_groups(pl->fabric, g), 1);
	/* leaf0's up-link to spine0 carries packets to p1 and to p2 */
	assert_string_equal(pl->fabric->links[fab_shared_link(pl->fabric, 1, 2)].name,
			    "leaf0-spine0");
	emu_pipeline_free(pl);
}

/* Two leaves joined by four parallel links (and four back); leaf0 hashes (CRC16-CCITT of the
 * 5-tuple), with a resilient table of @p buckets when not 0. */
static struct emu_pipeline *
res_pipeline(unsigned int buckets)
{
	char sw[256], hash[64] = "";

	if (buckets != 0)
		snprintf(hash, sizeof(hash), ", \"hash\": {\"resilient_buckets\": %u}", buckets);
	snprintf(sw, sizeof(sw), "{\"name\": \"leaf0\", \"ports\": [\"p0\"]%s},"
		 " {\"name\": \"leaf1\", \"ports\": [\"p1\"]}", hash);
	return levels_pipeline(sw, "{\"from\": \"leaf0\", \"to\": \"leaf1\", \"count\": 4}");
}

#define RES_FLOWS 10000

/* Where each of RES_FLOWS random RoCEv2 flows (seeded, the same every call) goes from leaf0. */
static void
res_route_all(const struct fab_cfg *cfg, struct fab_rt *rt, uint16_t *link)
{
	uint64_t saved = rs;
	struct emu_rng rng;
	unsigned int f, i;

	rs = 0x1234567887654321ULL;
	emu_rng_seed(&rng, 1, 1);
	for (f = 0; f < RES_FLOWS; f++) {
		struct emu_pkt_meta meta;
		struct roce_pkt *p = &meta.pkt;

		memset(&meta, 0, sizeof(meta));
		meta.flags = EMU_META_PARSED;
		p->cls = ROCE_CLASS_ROCEV2;
		p->ip_version = 4;
		for (i = 0; i < 4; i++) {
			p->src_ip[i] = (uint8_t)rnd();
			p->dst_ip[i] = (uint8_t)rnd();
		}
		p->udp_sport = (uint16_t)rnd();
		p->udp_dport = 4791;
		p->dest_qp = rnd() & 0xffffff;
		link[f] = fab_route(cfg, rt, NULL, 0, 1, &meta, 0, &rng);
	}
	rs = saved;
}

/* Buckets of leaf0's table towards leaf1 holding link @p l. */
static unsigned int
res_count(const struct fab_rt *rt, unsigned int buckets, uint16_t l)
{
	const uint8_t *tbl = rt->res + rt->res_at[0] + buckets;
	unsigned int i, n = 0;

	for (i = 0; i < buckets; i++)
		n += tbl[i] == l;
	return n;
}

/*
 * Resilient hashing (fab_res.c) against plain ECMP on 10^4 random flows over four links:
 * a link going down moves only the flows it carried (plain ECMP, hash mod 3 instead of mod 4,
 * moves most of the others too), and coming back it takes a quarter of the buckets, from the
 * others only; then random sequences of links going down and up (all of them at times): every
 * bucket on a link up, the links within one bucket of each other, no link both giving and
 * taking buckets in one change, and the counter equal to the buckets that changed.
 */
static void
test_resilient(void **state)
{
	static uint16_t before[RES_FLOWS], after[RES_FLOWS], again[RES_FLOWS];
	const unsigned int B = 64;
	struct emu_pipeline *pl = res_pipeline(B), *plain = res_pipeline(0);
	const struct fab_cfg *cfg = pl->fabric;
	struct fab_rt *rt = route_rt(), *rp = route_rt();
	uint64_t ctr[FAB_MAX_SWITCHES][FAB_SW_CTR_MAX];
	unsigned int f, k, it, kept_plain = 0, others = 0, moved_back = 0, lo, hi;
	uint64_t all = 0, total = 0;
	uint8_t *block;
	uint16_t l1;

	(void)state;
	assert_int_equal(cfg->n_next[0][1], 4);
	assert_int_equal(plain->fabric->sw[0].hash.res_buckets, 0);
	block = malloc(fab_res_bytes(cfg));
	assert_non_null(block);
	assert_int_equal(fab_res_bytes(cfg), (size_t)B * cfg->n_switches);
	fab_res_init(cfg, rt, block);
	memset(ctr, 0, sizeof(ctr));
	rt->sw_ctr = ctr;
	for (k = 0; k < cfg->n_links; k++)
		all |= 1ULL << k;
	rt->links_up = rp->links_up = all;
	res_route_all(cfg, rt, before);
	for (k = 0; k < 4; k++)
		assert_int_equal(res_count(rt, B, cfg->next[0][1][k]), B / 4);
	assert_int_equal(ctr[0][FAB_SW_CTR_BUCKETS_MOVED], 0);

	/* the second link goes down */
	l1 = cfg->next[0][1][1];
	rt->links_up = rp->links_up = all & ~(1ULL << l1);
	res_route_all(cfg, rt, after);
	for (f = 0; f < RES_FLOWS; f++) {
		assert_true(after[f] != l1);
		if (before[f] != l1)
			assert_int_equal(after[f], before[f]); /* the others stay */
	}
	assert_int_equal(ctr[0][FAB_SW_CTR_BUCKETS_MOVED], B / 4);
	for (k = 0; k < 4; k++)
		if (cfg->next[0][1][k] != l1)
			assert_true(res_count(rt, B, cfg->next[0][1][k]) == B / 3 ||
				    res_count(rt, B, cfg->next[0][1][k]) == B / 3 + 1);
	/* plain ECMP: the flows the link did not carry move too */
	{
		static uint16_t pb[RES_FLOWS], pa[RES_FLOWS];

		rp->links_up = all;
		res_route_all(plain->fabric, rp, pb);
		rp->links_up = all & ~(1ULL << l1);
		res_route_all(plain->fabric, rp, pa);
		for (f = 0; f < RES_FLOWS; f++)
			if (pb[f] != l1) {
				others++;
				kept_plain += pa[f] == pb[f];
			}
		assert_true(kept_plain < others * 6 / 10);
	}

	/* it comes back: a quarter of the buckets, taken from the others */
	rt->links_up = all;
	res_route_all(cfg, rt, again);
	for (f = 0; f < RES_FLOWS; f++)
		if (again[f] != after[f]) {
			assert_int_equal(again[f], l1);
			moved_back++;
		}
	assert_true(moved_back > RES_FLOWS * 18 / 100 && moved_back < RES_FLOWS * 32 / 100);
	assert_int_equal(ctr[0][FAB_SW_CTR_BUCKETS_MOVED], B / 4 + B / 4);
	for (k = 0; k < 4; k++)
		assert_int_equal(res_count(rt, B, cfg->next[0][1][k]), B / 4);
	print_message("resilient, 64 buckets, 4 links, %u flows: link down moves only its own "
		      "(plain ECMP keeps %u of the other %u), link back moves %u flows\n",
		      RES_FLOWS, kept_plain, others, moved_back);

	/* random changes; the table checked after each */
	for (it = 0; it < 2000; it++) {
		const uint8_t *tbl = rt->res + rt->res_at[0] + B;
		uint8_t old[64];
		unsigned int gave[FAB_MAX_LINKS] = { 0 }, took[FAB_MAX_LINKS] = { 0 }, changed = 0;
		uint64_t was = ctr[0][FAB_SW_CTR_BUCKETS_MOVED];
		struct emu_pkt_meta meta;
		struct emu_rng rng;
		uint16_t l;

		memcpy(old, tbl, B);
		rt->links_up ^= 1ULL << cfg->next[0][1][rnd() % 4];
		if (rnd() % 7 == 0)
			rt->links_up = all;
		memset(&meta, 0, sizeof(meta));
		meta.flags = EMU_META_PARSED;
		meta.pkt.cls = ROCE_CLASS_ROCEV2;
		meta.pkt.ip_version = 4;
		meta.pkt.udp_sport = (uint16_t)rnd();
		emu_rng_seed(&rng, 1, 1);
		l = fab_route(cfg, rt, NULL, 0, 1, &meta, 0, &rng);
		if (rt->n_up[0][1] == 0) {
			assert_int_equal(l, FAB_NONE);
			continue;
		}
		assert_true((rt->links_up >> l) & 1);
		lo = B;
		hi = 0;
		for (k = 0; k < 4; k++) {
			uint16_t lk = cfg->next[0][1][k];
			unsigned int c = res_count(rt, B, lk);

			if (!((rt->links_up >> lk) & 1)) {
				assert_int_equal(c, 0);
				continue;
			}
			lo = c < lo ? c : lo;
			hi = c > hi ? c : hi;
		}
		assert_true(hi - lo <= 1);
		for (k = 0; k < B; k++)
			if (tbl[k] != old[k]) {
				changed++;
				gave[old[k]]++;
				took[tbl[k]]++;
			}
		for (k = 0; k < FAB_MAX_LINKS; k++)
			assert_false(gave[k] > 0 && took[k] > 0); /* no move in a circle */
		assert_int_equal(ctr[0][FAB_SW_CTR_BUCKETS_MOVED] - was, changed);
		total += changed;
	}
	print_message("resilient: 2000 random changes of the links up, %" PRIu64 " buckets "
		      "moved, each change the fewest\n", total);
	free(block);
	free(rt->hash_memo);
	free(rp->hash_memo);
	free(rt);
	free(rp);
	emu_pipeline_free(pl);
	emu_pipeline_free(plain);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_route_same),
		cmocka_unit_test(test_levels),
		cmocka_unit_test(test_port_groups),
		cmocka_unit_test(test_resilient),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
