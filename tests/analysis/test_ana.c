/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lib/analysis without captures: the Linux/mlx5 UDP source port rule against docs/wire.md's
 * examples (recomputed by hand there), and a stream fed frame by frame through ana_feed:
 * a flow's counters, its pairing and the JSON it gives.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "lib/analysis/ana.h"
#include "lib/proto/roce_proto.h"

static void
test_linux_sport(void **state)
{
	(void)state;
	assert_int_equal(ana_linux_udp_sport(0x100, 0x200), 49160);
	assert_int_equal(ana_linux_udp_sport(0x101, 0x201), 49929);
	assert_int_equal(ana_linux_udp_sport(0x1a2b, 0x3c4d), 62122);
	/* symmetric in the two QPNs, always 0xC000-0xFFFF */
	assert_int_equal(ana_linux_udp_sport(0x3c4d, 0x1a2b), 62122);
	assert_true(ana_linux_udp_sport(1, 1) >= 0xC000);
}

static int
build(uint8_t *buf, uint8_t src, uint8_t dst, uint8_t opcode, uint32_t dqp, uint32_t psn,
      uint16_t sport, uint8_t ecn)
{
	struct roce_hdr_params hp = roce_hdr_params_default();

	hp.src_ip[0] = 10, hp.src_ip[3] = src;
	hp.dst_ip[0] = 10, hp.dst_ip[3] = dst;
	hp.src_mac[5] = src;
	hp.dst_mac[5] = dst;
	hp.opcode = opcode;
	hp.dest_qp = dqp;
	hp.psn = psn;
	hp.udp_sport = sport;
	hp.ecn = ecn;
	if (opcode == ROCE_OPCODE_RC_ACK)
		return roce_build_ack(buf, 256, &hp, ROCE_AETH_ACK | 0x1F, 0);
	return roce_build(buf, 2048, &hp, NULL, 512);
}

static void
test_stream(void **state)
{
	struct ana_opts o;
	struct ana *a;
	char err[256];
	uint8_t buf[2048];
	json_t *j, *flows, *f0;
	uint32_t i;
	int n;

	(void)state;
	ana_opts_default(&o);
	a = ana_create(&o, err, sizeof(err));
	assert_non_null(a);
	/* QP 0x11 on .1 writes PSNs 0..9 to QP 0x22 on .2 (PSN 4 CE-marked), .2 ACKs 9 */
	for (i = 0; i < 10; i++) {
		n = build(buf, 1, 2, ROCE_OP_RDMA_WRITE_MIDDLE, 0x22, i, 5000, i == 4 ? 3 : 2);
		assert_true(n > 0);
		ana_feed(a, buf, (uint32_t)n, (uint32_t)n, 1000 * (i + 1), 0, NULL);
	}
	n = build(buf, 2, 1, ROCE_OPCODE_RC_ACK, 0x11, 9, 5000, 2);
	assert_true(n > 0);
	ana_feed(a, buf, (uint32_t)n, (uint32_t)n, 12000, 0, NULL);
	ana_finish(a);
	j = ana_json(a);
	assert_non_null(j);
	flows = json_object_get(j, "flows");
	assert_int_equal(json_array_size(flows), 2);
	f0 = json_array_get(flows, 0);
	assert_string_equal(json_string_value(json_object_get(f0, "label")),
			    "10.0.0.1:0x11->10.0.0.2:0x22");
	assert_int_equal(json_integer_value(json_object_get(json_object_get(f0, "counters"),
							    "data_packets")), 10);
	assert_int_equal(json_integer_value(json_object_get(json_object_get(f0, "counters"),
							    "ce")), 1);
	assert_int_equal(json_integer_value(json_object_get(json_object_get(f0, "counters"),
							    "goodput_bytes")), 5120);
	assert_int_equal(json_integer_value(json_object_get(f0, "peer")), 1);
	assert_int_equal(ana_failures(a), 0);
	json_decref(j);
	ana_free(a);
	ana_free(NULL);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_linux_sport),
		cmocka_unit_test(test_stream),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
