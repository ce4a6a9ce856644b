/* SPDX-License-Identifier: BSD-3-Clause */
/* QP pairing table: the sport and pair rules, ambiguity, ageing, UD, bounded size. */
#include <errno.h>

#include "lib/proto/roce_proto.h"
#include "test_util.h"

#define HOST_A 1
#define HOST_B 2
#define SEC 1000000000ULL

static struct roce_pkt
pkt(unsigned int src, unsigned int dst, uint16_t sport, uint8_t opcode, uint32_t dest_qp)
{
	struct roce_pkt p;

	memset(&p, 0, sizeof(p));
	p.cls = ROCE_CLASS_ROCEV2;
	p.reason = ROCE_REASON_OK;
	p.ip_version = 4;
	p.src_ip[0] = 10;
	p.src_ip[1] = (uint8_t)(src >> 16);
	p.src_ip[2] = (uint8_t)(src >> 8);
	p.src_ip[3] = (uint8_t)src;
	p.dst_ip[0] = 10;
	p.dst_ip[1] = (uint8_t)(dst >> 16);
	p.dst_ip[2] = (uint8_t)(dst >> 8);
	p.dst_ip[3] = (uint8_t)dst;
	p.udp_sport = sport;
	p.udp_dport = ROCE_UDP_PORT;
	p.opcode = opcode;
	p.transport = opcode >> 5;
	p.dest_qp = dest_qp;
	return p;
}

/* Linux: rdma_flow_label_to_udp_sport(rdma_calc_flow_label(lqpn, rqpn)), symmetric. */
static uint16_t
linux_sport(uint32_t lqpn, uint32_t rqpn)
{
	uint64_t v = (uint64_t)lqpn * rqpn;
	uint32_t fl, lo, hi;

	v ^= v >> 20;
	v ^= v >> 40;
	fl = (uint32_t)v & 0xFFFFF;
	lo = fl & 0x03FFF;
	hi = fl & 0xFC000;
	lo ^= hi >> 14;
	return (uint16_t)(lo | 0xC000);
}

static const uint8_t WRITE = ROCE_TRANSPORT_RC | ROCE_OP_RDMA_WRITE_MIDDLE;
static const uint8_t ACK = ROCE_OPCODE_RC_ACK;

/* Many QPs between two hosts, same sport both ways (Linux): each data packet finds its QP. */
static void
test_sport_rule(void **state)
{
	struct roce_qpmap *map = roce_qpmap_create(4096, SEC);
	uint32_t i, qpn;

	(void)state;
	for (i = 0; i < 100; i++) {
		uint32_t qa = 0x100 + i, qb = 0x900 + 3 * i;
		struct roce_pkt ack = pkt(HOST_B, HOST_A, linux_sport(qb, qa), ACK, qa);

		roce_qpmap_learn(map, &ack, 10);
	}
	for (i = 0; i < 100; i++) {
		uint32_t qa = 0x100 + i, qb = 0x900 + 3 * i;
		struct roce_pkt data = pkt(HOST_A, HOST_B, linux_sport(qa, qb), WRITE, qb);

		assert_int_equal(roce_qpmap_lookup_sender(map, &data, 20, &qpn), 0);
		assert_int_equal(qpn, qa);
	}
	assert_int_equal(roce_qpmap_counters(map)[ROCE_QPMAP_CTR_HIT_SPORT], 100);
	roce_qpmap_free(map);
}

/* One QP each way, different sports (as the Huawei NIC): the pair rule finds it. */
static void
test_pair_rule_and_ambiguity(void **state)
{
	struct roce_qpmap *map = roce_qpmap_create(64, SEC);
	struct roce_pkt data = pkt(HOST_A, HOST_B, 69, WRITE, 0x48);
	struct roce_pkt ack1 = pkt(HOST_B, HOST_A, 72, ACK, 0x45);
	struct roce_pkt ack2 = pkt(HOST_B, HOST_A, 73, ACK, 0x46);
	const uint64_t *ctr;
	uint32_t qpn = 0;

	(void)state;
	assert_int_equal(roce_qpmap_lookup_sender(map, &data, 0, &qpn), -ENOENT);
	roce_qpmap_learn(map, &ack1, 1);
	assert_int_equal(roce_qpmap_lookup_sender(map, &data, 2, &qpn), 0);
	assert_int_equal(qpn, 0x45);
	/* learning the data direction does not answer its own lookup */
	roce_qpmap_learn(map, &data, 3);
	assert_int_equal(roce_qpmap_lookup_sender(map, &data, 4, &qpn), 0);
	assert_int_equal(qpn, 0x45);
	/* a second QP on A addressed by B: now ambiguous, no guess */
	roce_qpmap_learn(map, &ack2, 5);
	assert_int_equal(roce_qpmap_lookup_sender(map, &data, 6, &qpn), -ENOENT);
	ctr = roce_qpmap_counters(map);
	assert_int_equal(ctr[ROCE_QPMAP_CTR_AMBIGUOUS], 1);
	assert_int_equal(ctr[ROCE_QPMAP_CTR_MISS], 1);
	assert_int_equal(ctr[ROCE_QPMAP_CTR_HIT_PAIR], 2);
	/* QP 0x46 goes quiet; after the ageing time only 0x45 is seen: unique again */
	roce_qpmap_learn(map, &ack1, 5 + SEC / 2);
	assert_int_equal(roce_qpmap_lookup_sender(map, &data, 5 + SEC / 2, &qpn), -ENOENT);
	roce_qpmap_learn(map, &ack1, 10 + 2 * SEC);
	assert_int_equal(roce_qpmap_lookup_sender(map, &data, 10 + 2 * SEC, &qpn), 0);
	assert_int_equal(qpn, 0x45);
	/* nothing for 2 s: aged out */
	assert_int_equal(roce_qpmap_lookup_sender(map, &data, 10 + 4 * SEC, &qpn), -ENOENT);
	roce_qpmap_free(map);
}

static void
test_ud_and_ignored(void **state)
{
	struct roce_qpmap *map = roce_qpmap_create(16, 0);
	struct roce_pkt ud = pkt(HOST_A, HOST_B, 1, ROCE_TRANSPORT_UD | ROCE_OP_SEND_ONLY, 0x10);
	struct roce_pkt bad = pkt(HOST_B, HOST_A, 1, ACK, 0x10);
	struct roce_pkt cnp = pkt(HOST_B, HOST_A, 0, ROCE_OPCODE_CNP, 0x33);
	struct roce_pkt data = pkt(HOST_A, HOST_B, 5, WRITE, 0x99);
	uint32_t qpn = 0;

	(void)state;
	ud.has_deth = 1;
	ud.deth_src_qp = 0xABC;
	assert_int_equal(roce_qpmap_lookup_sender(map, &ud, 0, &qpn), 0);
	assert_int_equal(qpn, 0xABC);
	roce_qpmap_learn(map, &ud, 0);
	bad.reason = ROCE_REASON_BAD_PAD;
	bad.cls = ROCE_CLASS_INVALID;
	roce_qpmap_learn(map, &bad, 0);
	assert_int_equal(roce_qpmap_counters(map)[ROCE_QPMAP_CTR_IGNORED], 2);
	assert_int_equal(roce_qpmap_lookup_sender(map, &bad, 0, &qpn), -ENOENT);
	/* a CNP B->A names a QP on A too */
	roce_qpmap_learn(map, &cnp, 0);
	assert_int_equal(roce_qpmap_lookup_sender(map, &data, 1000 * SEC, &qpn), 0);
	assert_int_equal(qpn, 0x33);	/* ageing 0: never ages */
	assert_string_equal(roce_qpmap_ctr_name(ROCE_QPMAP_CTR_HIT_DETH), "hit_deth");
	assert_string_equal(roce_qpmap_ctr_name(ROCE_QPMAP_CTR_MAX), "unknown");
	roce_qpmap_free(map);
	roce_qpmap_free(NULL);
	assert_true(roce_qpmap_create(0, 0) == NULL);
}

/* A full table evicts the least recently refreshed entries and never grows. */
static void
test_bounded(void **state)
{
	struct roce_qpmap *map = roce_qpmap_create(1000, 0);
	uint32_t cap = roce_qpmap_capacity(map), i, found = 0, qpn;
	const uint64_t *ctr = roce_qpmap_counters(map);

	(void)state;
	assert_true(cap >= 1000 && cap <= 2048);
	for (i = 0; i < 100000; i++) {
		struct roce_pkt ack = pkt(1000 + i, 1, 7, ACK, i & 0xFFFFFF);

		roce_qpmap_learn(map, &ack, i);
	}
	assert_int_equal(roce_qpmap_capacity(map), cap);
	assert_int_equal(ctr[ROCE_QPMAP_CTR_LEARNED], 200000);
	assert_true(ctr[ROCE_QPMAP_CTR_EVICTED] >= 200000 - cap);
	assert_true(ctr[ROCE_QPMAP_CTR_EVICTED] <= 200000);
	/* the most recent flows are still there */
	for (i = 100000 - 100; i < 100000; i++) {
		struct roce_pkt data = pkt(1, 1000 + i, 9, WRITE, 5);

		if (roce_qpmap_lookup_sender(map, &data, 100000, &qpn) == 0) {
			assert_int_equal(qpn, i);
			found++;
		}
	}
	assert_true(found >= 90);
	roce_qpmap_free(map);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sport_rule),
		cmocka_unit_test(test_pair_rule_and_ambiguity),
		cmocka_unit_test(test_ud_and_ignored),
		cmocka_unit_test(test_bounded),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
