/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The fabric's next-hop choice (lib/fabric fab_route.c, fab.h) on random traffic: fab_route(),
 * whose common case (an ECMP switch, a flow its memo holds) is inline and whose lists of next
 * hops that are up are rebuilt only when the links-up word changes, against fab_route_any()
 * on a second, identical runtime state, and at every ECMP switch against the definition:
 * the next hops on a shortest path whose link is up, in configuration order, picked by
 * fab_hash_pick(fab_hash()) (no memo). Links go down and come back up during the run.
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

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_route_same),
		cmocka_unit_test(test_levels),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
