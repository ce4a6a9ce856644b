/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mbuf variants on chains of hand-made mbufs (no EAL, no mempool): every real and built frame
 * split at random points, down to 1-byte segments, parses and checks like the flat frame.
 * Usage: test_proto_mbuf DATA_DIR
 */
#include "lib/proto/roce_mbuf.h"
#include "test_util.h"

#define MAX_SEGS 16

static const char *data_dir = "tests/unit/proto/data";

struct chain {
	struct rte_mbuf m[MAX_SEGS];
};

/* Make a chain over copies of frame split at n-1 random cuts (each segment its own heap block). */
static struct rte_mbuf *
make_chain(struct chain *c, uint8_t **bufs, const uint8_t *frame, uint32_t len, unsigned int n,
	uint64_t *rng)
{
	uint32_t cuts[MAX_SEGS + 1];
	unsigned int i, j;

	memset(c, 0, sizeof(*c));
	cuts[0] = 0;
	cuts[n] = len;
	for (i = 1; i < n; i++)
		cuts[i] = len ? (uint32_t)(test_rand(rng) % (len + 1)) : 0;
	for (i = 1; i < n; i++)		/* sort */
		for (j = i + 1; j < n; j++)
			if (cuts[j] < cuts[i]) {
				uint32_t t = cuts[i];

				cuts[i] = cuts[j];
				cuts[j] = t;
			}
	for (i = 0; i < n; i++) {
		uint32_t sl = cuts[i + 1] - cuts[i];

		bufs[i] = malloc(sl ? sl : 1);
		assert_non_null(bufs[i]);
		memcpy(bufs[i], frame + cuts[i], sl);
		c->m[i].buf_addr = bufs[i];
		c->m[i].data_off = 0;
		c->m[i].data_len = (uint16_t)sl;
		c->m[i].buf_len = (uint16_t)(sl ? sl : 1);
		c->m[i].next = i + 1 < n ? &c->m[i + 1] : NULL;
	}
	c->m[0].pkt_len = len;
	c->m[0].nb_segs = (uint16_t)n;
	return &c->m[0];
}

static void
chain_to_flat(const struct rte_mbuf *m, uint8_t *out)
{
	uint32_t off = 0;

	for (; m != NULL; m = m->next) {
		memcpy(out + off, rte_pktmbuf_mtod(m, const uint8_t *), m->data_len);
		off += m->data_len;
	}
}

static void
check_frame(const uint8_t *frame, uint32_t len, uint64_t *rng)
{
	static uint8_t flat[16384];
	struct roce_pkt p, q;
	unsigned int n, i;

	roce_parse(frame, len, ROCE_UDP_PORT, &p);
	for (n = 1; n <= MAX_SEGS; n += (n < 4 ? 1 : 4)) {
		uint8_t *bufs[MAX_SEGS];
		struct chain c;
		struct rte_mbuf *m = make_chain(&c, bufs, frame, len, n, rng);

		roce_parse_mbuf(m, ROCE_UDP_PORT, &q);
		assert_memory_equal(&p, &q, sizeof(p));
		if ((p.cls == ROCE_CLASS_ROCEV2 || p.cls == ROCE_CLASS_ROCEV1) &&
				p.reason == ROCE_REASON_OK) {
			assert_int_equal(roce_icrc_compute_mbuf(m, &q),
				roce_icrc_compute(frame, len, &p));
			assert_int_equal(roce_icrc_verify_mbuf(m, &q), roce_icrc_verify(frame, len, &p));
			/* break the ICRC in place (it may straddle segments), then fix it */
			chain_to_flat(m, flat);
			roce_corrupt_icrc(flat, len, &p);
			for (i = 0; i < n; i++) {
				uint32_t off = 0, k;
				const struct rte_mbuf *s;

				for (s = m; s != &c.m[i]; s = s->next)
					off += s->data_len;
				for (k = 0; k < c.m[i].data_len; k++)
					bufs[i][k] = flat[off + k];
			}
			assert_false(roce_icrc_verify_mbuf(m, &q));
			roce_icrc_update_mbuf(m, &q);
			assert_true(roce_icrc_verify_mbuf(m, &q));
			chain_to_flat(m, flat);
			if (roce_icrc_verify(frame, len, &p))
				assert_memory_equal(flat, frame, len);
		} else {
			assert_int_equal(roce_icrc_verify_mbuf(m, &q), 0);
		}
		for (i = 0; i < n; i++)
			free(bufs[i]);
	}
}

static void
test_real_frames_segmented(void **state)
{
	static const char *const files[] = { "huawei_rc_send.pcap", "connectx4lx_cnp.pcap" };
	uint64_t rng = 3;
	unsigned int f, round;

	(void)state;
	for (f = 0; f < 2; f++) {
		struct test_pcap pc;
		char path[1024];
		uint32_t i;

		snprintf(path, sizeof(path), "%s/real/%s", data_dir, files[f]);
		test_pcap_load(path, &pc);
		for (round = 0; round < 4; round++)
			for (i = 0; i < pc.n; i++)
				check_frame(pc.frames[i].data, pc.frames[i].len, &rng);
		test_pcap_free(&pc);
	}
}

static void
test_built_frames_segmented(void **state)
{
	static uint8_t buf[9216];
	uint64_t rng = 11;
	unsigned int i;

	(void)state;
	for (i = 0; i < 3000; i++) {
		struct roce_hdr_params hp = roce_hdr_params_default();
		uint32_t plen = (uint32_t)(test_rand(&rng) % (i % 10 == 0 ? 9000 : 300));
		int len;

		hp.ip_version = (i & 1) ? 6 : 4;
		hp.has_vlan = (i >> 1) & 1;
		hp.opcode = (uint8_t)(test_rand(&rng) & 0xFF);
		if (!roce_opcode_is_valid(hp.opcode))
			hp.opcode = ROCE_TRANSPORT_RC | ROCE_OP_RDMA_WRITE_FIRST;
		hp.psn = (uint32_t)i;
		len = roce_build(buf, sizeof(buf), &hp, NULL, plen);
		assert_true(len > 0);
		check_frame(buf, (uint32_t)len, &rng);
		/* and truncated copies: mbuf and flat parse agree on the reason too */
		check_frame(buf, (uint32_t)(test_rand(&rng) % (uint32_t)len), &rng);
	}
}

int
main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_real_frames_segmented),
		cmocka_unit_test(test_built_frames_segmented),
	};

	if (argc > 1)
		data_dir = argv[1];
	return cmocka_run_group_tests(tests, NULL, NULL);
}
