/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The two real captures (data/real/PROVENANCE.md): every frame classified, every ICRC valid,
 * fields as Wireshark shows them, the ConnectX-4 Lx CNP rebuilt byte for byte, and the QP
 * pairing 0x45 <-> 0x48 learned from the Huawei RC SEND trace.
 * Usage: test_proto_real DATA_DIR [BUILD_DIR]
 */
#include <errno.h>

#include "lib/proto/roce_proto.h"
#include "test_util.h"

static const char *data_dir = "tests/unit/proto/data";

static void
load(const char *name, struct test_pcap *pc)
{
	char path[1024];

	snprintf(path, sizeof(path), "%s/real/%s", data_dir, name);
	test_pcap_load(path, pc);
}

static void
test_huawei_classes_and_icrc(void **state)
{
	struct test_pcap pc;
	uint32_t i, n_roce = 0, n_icrc = 0, n_ack = 0, n_first = 0, n_last_imm = 0;

	(void)state;
	load("huawei_rc_send.pcap", &pc);
	assert_int_equal(pc.n, 123);
	for (i = 0; i < pc.n; i++) {
		const uint8_t *f = pc.frames[i].data;
		uint32_t len = pc.frames[i].len, no = i + 1;
		struct roce_pkt p;

		roce_parse(f, len, ROCE_UDP_PORT, &p);
		assert_int_equal(p.reason, ROCE_REASON_OK);
		if (no <= 2)		/* MLD report behind a hop-by-hop header */
			assert_int_equal(p.cls, ROCE_CLASS_IPV6_OTHER);
		else if (no <= 4)	/* router solicitation */
			assert_int_equal(p.cls, ROCE_CLASS_IPV6_ND);
		else if (no <= 14)	/* TCP */
			assert_int_equal(p.cls, ROCE_CLASS_IPV4_OTHER);
		else if (no >= 118 && no <= 121)
			assert_int_equal(p.cls, ROCE_CLASS_ARP);
		else
			assert_int_equal(p.cls, ROCE_CLASS_ROCEV2);
		if (p.cls != ROCE_CLASS_ROCEV2)
			continue;
		n_roce++;
		n_icrc += roce_icrc_verify(f, len, &p);
		/* quirks of this NIC (PROVENANCE.md): ECT(0), MigReq, UDP checksum 0, sport 69/72 */
		assert_int_equal(p.ecn, 2);
		assert_int_equal(p.dscp, 0);
		assert_int_equal(p.ttl, 64);
		assert_int_equal(p.migreq, 1);
		assert_int_equal(p.pkey, 0xFFFF);
		assert_int_equal(p.tver, 0);
		assert_int_equal(p.icrc_off + 4u, len);
		assert_int_equal(p.payload_off + p.payload_len + p.padcnt, p.icrc_off);
		if (p.src_ip[3] == 4) {
			assert_int_equal(p.udp_sport, 69);
			assert_int_equal(p.dest_qp, 0x48);
		} else {
			assert_int_equal(p.udp_sport, 72);
			assert_int_equal(p.dest_qp, 0x45);
		}
		switch (p.opcode) {
		case ROCE_OPCODE_RC_ACK:
			n_ack++;
			assert_true(p.has_aeth);
			assert_int_equal(p.aeth_kind, ROCE_AETH_KIND_ACK);
			assert_true(p.aeth_code == 5 || p.aeth_code == 6);
			assert_int_equal(p.payload_len, 0);
			break;
		case ROCE_TRANSPORT_RC | ROCE_OP_SEND_FIRST:
			n_first++;
			assert_int_equal(p.payload_len, 1024);	/* MTU 1024 */
			break;
		case ROCE_TRANSPORT_RC | ROCE_OP_SEND_LAST_WITH_IMMEDIATE:
			n_last_imm++;
			assert_true(p.has_imm);
			assert_int_equal(p.imm, 1);
			break;
		case ROCE_TRANSPORT_RC | ROCE_OP_SEND_ONLY_WITH_IMMEDIATE:
			assert_true(p.has_imm);
			break;
		default:
			assert_true(0);
		}
	}
	assert_int_equal(n_roce, 105);
	assert_int_equal(n_icrc, 105);
	assert_int_equal(n_ack, 37);
	assert_int_equal(n_first, 33);
	assert_int_equal(n_last_imm, 33);
	test_pcap_free(&pc);
}

/* A few frames checked field by field against `tshark -V`. */
static void
test_huawei_fields(void **state)
{
	struct test_pcap pc;
	struct roce_pkt p;

	(void)state;
	load("huawei_rc_send.pcap", &pc);
	/* 15: 192.168.70.4 -> .6 RC SEND_ONLY_WITH_IMMEDIATE, PadCnt 3, AckReq, ICRC 72 c3 40 a7 */
	roce_parse(pc.frames[14].data, pc.frames[14].len, ROCE_UDP_PORT, &p);
	assert_int_equal(p.opcode, 0x05);
	assert_string_equal(roce_opcode_name(p.opcode), "RC_SEND_ONLY_WITH_IMMEDIATE");
	assert_int_equal(p.padcnt, 3);
	assert_int_equal(p.ackreq, 1);
	assert_int_equal(p.se, 0);
	assert_int_equal(p.psn, 0);
	assert_int_equal(p.dest_qp, 0x48);
	assert_int_equal(roce_get_be32(p.src_ip), 0xC0A84604u);
	assert_int_equal(roce_get_be32(p.dst_ip), 0xC0A84606u);
	assert_int_equal(p.imm, 1);
	assert_int_equal(roce_get_be32(pc.frames[14].data + p.icrc_off), 0x72c340a7u);
	assert_int_equal(roce_icrc_compute(pc.frames[14].data, pc.frames[14].len, &p),
		0xa740c372u);
	assert_int_equal(p.l3_off, 14);
	assert_int_equal(p.l4_off, 34);
	assert_int_equal(p.bth_off, 42);
	assert_int_equal(p.payload_off, 58);
	assert_int_equal(p.payload_len, 206 - 58 - 4 - 3);
	/* 16: ACK, syndrome 6 (credits 6), MSN 1 */
	roce_parse(pc.frames[15].data, pc.frames[15].len, ROCE_UDP_PORT, &p);
	assert_string_equal(roce_opcode_name(p.opcode), "RC_ACKNOWLEDGE");
	assert_int_equal(p.aeth_syndrome, 6);
	assert_int_equal(p.msn, 1);
	assert_int_equal(p.psn, 0);
	/* 26: ACK PSN 5, syndrome 5, MSN 3 */
	roce_parse(pc.frames[25].data, pc.frames[25].len, ROCE_UDP_PORT, &p);
	assert_int_equal(p.psn, 5);
	assert_int_equal(p.aeth_code, 5);
	assert_int_equal(p.msn, 3);
	/* 18: SEND_LAST_WITH_IMMEDIATE, PSN 1, AckReq 1 */
	roce_parse(pc.frames[17].data, pc.frames[17].len, ROCE_UDP_PORT, &p);
	assert_int_equal(p.opcode, 0x03);
	assert_int_equal(p.psn, 1);
	assert_int_equal(p.ackreq, 1);
	test_pcap_free(&pc);
}

static void
test_cnp_parse(void **state)
{
	struct test_pcap pc;
	const uint8_t *f;
	struct roce_pkt p;

	(void)state;
	load("connectx4lx_cnp.pcap", &pc);
	assert_int_equal(pc.n, 1);
	f = pc.frames[0].data;
	assert_int_equal(roce_parse(f, pc.frames[0].len, ROCE_UDP_PORT, &p), ROCE_CLASS_ROCEV2);
	assert_int_equal(p.reason, ROCE_REASON_OK);
	assert_string_equal(roce_opcode_name(p.opcode), "CNP");
	assert_int_equal(p.transport, 4);
	assert_int_equal(p.dscp, 48);
	assert_int_equal(p.ecn, 2);
	assert_int_equal(p.udp_sport, 0);
	assert_int_equal(p.becn, 1);
	assert_int_equal(p.fecn, 0);
	assert_int_equal(p.pkey, 0xFFFF);
	assert_int_equal(p.dest_qp, 0x118);
	assert_int_equal(p.psn, 0);
	assert_int_equal(p.ext_len, 16);
	assert_int_equal(p.payload_len, 0);
	assert_true(roce_icrc_verify(f, pc.frames[0].len, &p));
	assert_int_equal(roce_get_be32(f + p.icrc_off), 0x82fd002au);
	test_pcap_free(&pc);
}

static void
test_cnp_rebuild(void **state)
{
	static const uint8_t dmac[6] = { 0xe4, 0x1d, 0x2d, 0xab, 0x2b, 0xc2 };
	static const uint8_t smac[6] = { 0x7c, 0xfe, 0x90, 0x64, 0x3b, 0x32 };
	static const uint8_t sip[4] = { 10, 0, 17, 1 }, dip[4] = { 10, 0, 18, 1 };
	struct roce_cnp_params cp = roce_cnp_params_default();
	struct test_pcap pc;
	uint8_t buf[128];
	int len;

	(void)state;
	load("connectx4lx_cnp.pcap", &pc);
	memcpy(cp.dst_mac, dmac, 6);
	memcpy(cp.src_mac, smac, 6);
	memcpy(cp.src_ip, sip, 4);
	memcpy(cp.dst_ip, dip, 4);
	cp.ip_id = 0x718c;
	cp.dest_qp = 0x118;
	/* the defaults are NVIDIA's: DSCP 48, ECT(0), TTL 64, sport 0, P_Key 0xFFFF */
	len = roce_build_cnp(buf, sizeof(buf), &cp);
	assert_int_equal(len, pc.frames[0].len);
	assert_memory_equal(buf, pc.frames[0].data, (size_t)len);
	assert_int_equal(roce_build_cnp(buf, (size_t)len - 1, &cp), -ENOSPC);
	test_pcap_free(&pc);
}

/* Replay the Huawei trace through the pairing table: each data packet's sender is found. */
static void
test_huawei_qp_pairing(void **state)
{
	struct roce_qpmap *map = roce_qpmap_create(1024, 1000000000ULL);
	const uint64_t *ctr;
	struct test_pcap pc;
	uint32_t i, n_data = 0, n_found = 0;

	(void)state;
	assert_non_null(map);
	load("huawei_rc_send.pcap", &pc);
	for (i = 0; i < pc.n; i++) {
		uint64_t now = (uint64_t)i * 1000;
		struct roce_pkt p;
		uint32_t qpn;

		if (roce_parse(pc.frames[i].data, pc.frames[i].len, ROCE_UDP_PORT, &p) !=
				ROCE_CLASS_ROCEV2)
			continue;
		if (p.opcode != ROCE_OPCODE_RC_ACK) {
			n_data++;
			if (roce_qpmap_lookup_sender(map, &p, now, &qpn) == 0) {
				n_found++;
				/* .4 owns QP 0x45, .6 owns QP 0x48 */
				assert_int_equal(qpn, p.src_ip[3] == 4 ? 0x45 : 0x48);
			} else {
				/* only the very first packet comes before any reverse traffic */
				assert_int_equal(i, 14);
			}
		}
		roce_qpmap_learn(map, &p, now);
	}
	assert_int_equal(n_data, 68);
	assert_int_equal(n_found, 67);
	ctr = roce_qpmap_counters(map);
	/* different sports per direction on this NIC: all hits come from the address pair rule */
	assert_int_equal(ctr[ROCE_QPMAP_CTR_HIT_PAIR], 67);
	assert_int_equal(ctr[ROCE_QPMAP_CTR_HIT_SPORT], 0);
	assert_int_equal(ctr[ROCE_QPMAP_CTR_AMBIGUOUS], 0);
	assert_int_equal(ctr[ROCE_QPMAP_CTR_LEARNED], 4);
	test_pcap_free(&pc);
	roce_qpmap_free(map);
}

int
main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_huawei_classes_and_icrc),
		cmocka_unit_test(test_huawei_fields),
		cmocka_unit_test(test_cnp_parse),
		cmocka_unit_test(test_cnp_rebuild),
		cmocka_unit_test(test_huawei_qp_pairing),
	};

	if (argc > 1)
		data_dir = argv[1];
	return cmocka_run_group_tests(tests, NULL, NULL);
}
