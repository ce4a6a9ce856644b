/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Builders: build -> parse -> same fields, for every defined opcode (RC, UC, RD, UD, CNP),
 * IPv4 and IPv6, tagged and untagged, PadCnt 0-3; ACK/NAK/RNR NAK; PFC and PAUSE; errors.
 * Usage: test_proto_build [DATA_DIR [BUILD_DIR]]
 *        test_proto_build --write-pcap FILE   every builder's output, for tshark (meson.build)
 */
#include <errno.h>

#include "lib/proto/roce_proto.h"
#include "test_util.h"

static const uint8_t mac_a[6] = { 0x02, 0x00, 0x00, 0x00, 0x00, 0x0a };
static const uint8_t mac_b[6] = { 0x02, 0x00, 0x00, 0x00, 0x00, 0x0b };

static struct roce_hdr_params
params(uint64_t *rng, uint8_t opcode, int ipv6, int vlan)
{
	struct roce_hdr_params hp = roce_hdr_params_default();
	unsigned int i;

	memcpy(hp.dst_mac, mac_b, 6);
	memcpy(hp.src_mac, mac_a, 6);
	hp.has_vlan = (uint8_t)vlan;
	hp.pcp = (uint8_t)(test_rand(rng) & 7);
	hp.vlan_id = (uint16_t)(1 + test_rand(rng) % 4094);
	hp.ip_version = ipv6 ? 6 : 4;
	if (ipv6) {
		hp.src_ip[0] = 0xfd;
		hp.dst_ip[0] = 0xfd;
		for (i = 1; i < 16; i++) {
			hp.src_ip[i] = (uint8_t)test_rand(rng);
			hp.dst_ip[i] = (uint8_t)test_rand(rng);
		}
		hp.flow_label = (uint32_t)test_rand(rng) & 0xFFFFF;
	} else {
		hp.src_ip[0] = 10;
		hp.dst_ip[0] = 10;
		for (i = 1; i < 4; i++) {
			hp.src_ip[i] = (uint8_t)test_rand(rng);
			hp.dst_ip[i] = (uint8_t)test_rand(rng);
		}
	}
	hp.dscp = (uint8_t)(test_rand(rng) & 63);
	hp.ecn = (uint8_t)(test_rand(rng) & 3);
	hp.ttl = (uint8_t)(1 + test_rand(rng) % 255);
	hp.ip_id = (uint16_t)test_rand(rng);
	hp.udp_sport = (uint16_t)(0xC000 | test_rand(rng));
	hp.opcode = opcode;
	hp.se = (uint8_t)(test_rand(rng) & 1);
	hp.migreq = (uint8_t)(test_rand(rng) & 1);
	hp.fecn = (uint8_t)(test_rand(rng) & 1);
	hp.becn = (uint8_t)(test_rand(rng) & 1);
	hp.ackreq = (uint8_t)(test_rand(rng) & 1);
	hp.pkey = (uint16_t)(0x8000 | test_rand(rng));
	hp.dest_qp = (uint32_t)test_rand(rng) & 0xFFFFFF;
	hp.psn = (uint32_t)test_rand(rng) & 0xFFFFFF;
	hp.rdeth_eecnxt = (uint32_t)test_rand(rng) & 0xFFFFFF;
	hp.deth_qkey = (uint32_t)test_rand(rng);
	hp.deth_src_qp = (uint32_t)test_rand(rng) & 0xFFFFFF;
	hp.reth_va = test_rand(rng);
	hp.reth_rkey = (uint32_t)test_rand(rng);
	hp.reth_len = (uint32_t)test_rand(rng) & 0xFFFFF;
	hp.atomic_va = test_rand(rng) & ~7ULL;
	hp.atomic_rkey = (uint32_t)test_rand(rng);
	hp.atomic_swap_add = test_rand(rng);
	hp.atomic_compare = test_rand(rng);
	hp.aeth_syndrome = (uint8_t)(test_rand(rng) & 0x1F);
	hp.msn = (uint32_t)test_rand(rng) & 0xFFFFFF;
	hp.atomic_ack_orig = test_rand(rng);
	hp.imm = (uint32_t)test_rand(rng);
	hp.ieth_rkey = (uint32_t)test_rand(rng);
	return hp;
}

/* Every field of the parse equals what was built. */
static void
check_roundtrip(const uint8_t *f, int len, const struct roce_hdr_params *hp,
	const uint8_t *payload, uint32_t payload_len)
{
	uint8_t op = hp->opcode & ROCE_OP_MASK, tr = hp->opcode & ROCE_TRANSPORT_MASK;
	struct roce_pkt p;

	assert_true(len >= ROCE_ETH_MIN_FRAME);
	assert_int_equal(roce_parse(f, (uint32_t)len, ROCE_UDP_PORT, &p), ROCE_CLASS_ROCEV2);
	assert_int_equal(p.reason, ROCE_REASON_OK);
	assert_true(roce_icrc_verify(f, (uint32_t)len, &p));
	assert_int_equal(p.n_vlans, hp->has_vlan ? 1 : 0);
	if (hp->has_vlan) {
		assert_int_equal(p.vlan_id, hp->vlan_id);
		assert_int_equal(p.pcp, hp->pcp);
	}
	assert_int_equal(p.ip_version, hp->ip_version);
	if (hp->ip_version == 4)
		assert_int_equal(roce_ipv4_cksum(f + p.l3_off, 20), roce_get_be16(f + p.l3_off + 10));
	assert_memory_equal(p.src_ip, hp->src_ip, 16);
	assert_memory_equal(p.dst_ip, hp->dst_ip, 16);
	assert_int_equal(p.dscp, hp->dscp);
	assert_int_equal(p.ecn, hp->ecn);
	assert_int_equal(p.ttl, hp->ttl);
	assert_int_equal(p.udp_sport, hp->udp_sport);
	assert_int_equal(p.udp_dport, ROCE_UDP_PORT);
	assert_int_equal(p.opcode, hp->opcode);
	assert_int_equal(p.transport, hp->opcode >> 5);
	assert_int_equal(p.se, hp->se);
	assert_int_equal(p.migreq, hp->migreq);
	assert_int_equal(p.padcnt, (4 - (payload_len & 3)) & 3);
	assert_int_equal(p.tver, 0);
	assert_int_equal(p.fecn, hp->fecn);
	assert_int_equal(p.becn, hp->becn);
	assert_int_equal(p.ackreq, hp->ackreq);
	assert_int_equal(p.pkey, hp->pkey);
	assert_int_equal(p.dest_qp, hp->dest_qp);
	assert_int_equal(p.psn, hp->psn);
	assert_int_equal(p.ext_len, roce_opcode_ext_len(hp->opcode));
	assert_int_equal(p.payload_len, payload_len);
	assert_int_equal(p.payload_off + payload_len + p.padcnt, p.icrc_off);
	if (payload != NULL)
		assert_memory_equal(f + p.payload_off, payload, payload_len);

	/* extension headers, from the opcode tables of IBA vol. 1, 9.2 */
	if (hp->opcode == ROCE_OPCODE_CNP) {
		assert_int_equal(p.ext_len, 16);
		return;
	}
	assert_int_equal(p.has_deth, tr == ROCE_TRANSPORT_UD ||
		(tr == ROCE_TRANSPORT_RD && (op <= ROCE_OP_RDMA_READ_REQUEST ||
		 op == ROCE_OP_COMPARE_SWAP || op == ROCE_OP_FETCH_ADD || op == ROCE_OP_RESYNC)));
	if (p.has_deth) {
		assert_int_equal(p.deth_src_qp, hp->deth_src_qp);
		assert_int_equal(p.deth_qkey, hp->deth_qkey);
	}
	assert_int_equal(p.has_reth, op == ROCE_OP_RDMA_WRITE_FIRST || op == ROCE_OP_RDMA_WRITE_ONLY ||
		op == ROCE_OP_RDMA_WRITE_ONLY_WITH_IMMEDIATE || op == ROCE_OP_RDMA_READ_REQUEST);
	if (p.has_reth) {
		assert_int_equal(p.reth_va, hp->reth_va);
		assert_int_equal(p.reth_rkey, hp->reth_rkey);
		assert_int_equal(p.reth_len, hp->reth_len);
	}
	assert_int_equal(p.has_aeth, op == ROCE_OP_RDMA_READ_RESPONSE_FIRST ||
		op == ROCE_OP_RDMA_READ_RESPONSE_LAST || op == ROCE_OP_RDMA_READ_RESPONSE_ONLY ||
		op == ROCE_OP_ACKNOWLEDGE || op == ROCE_OP_ATOMIC_ACKNOWLEDGE);
	if (p.has_aeth) {
		assert_int_equal(p.aeth_syndrome, hp->aeth_syndrome);
		assert_int_equal(p.msn, hp->msn);
	}
	assert_int_equal(p.has_imm, op == ROCE_OP_SEND_LAST_WITH_IMMEDIATE ||
		op == ROCE_OP_SEND_ONLY_WITH_IMMEDIATE || op == ROCE_OP_RDMA_WRITE_LAST_WITH_IMMEDIATE ||
		op == ROCE_OP_RDMA_WRITE_ONLY_WITH_IMMEDIATE);
	if (p.has_imm)
		assert_int_equal(p.imm, hp->imm);
	assert_int_equal(p.has_ieth, op == ROCE_OP_SEND_LAST_WITH_INVALIDATE ||
		op == ROCE_OP_SEND_ONLY_WITH_INVALIDATE);
	if (p.has_ieth)
		assert_int_equal(p.imm, hp->ieth_rkey);
	assert_int_equal(p.has_atomiceth, op == ROCE_OP_COMPARE_SWAP || op == ROCE_OP_FETCH_ADD);
	if (p.has_atomiceth) {
		assert_int_equal(p.atomic_va, hp->atomic_va);
		assert_int_equal(p.atomic_rkey, hp->atomic_rkey);
		assert_int_equal(p.atomic_swap_add, hp->atomic_swap_add);
		assert_int_equal(p.atomic_compare, hp->atomic_compare);
	}
}

static void
test_roundtrip_all_opcodes(void **state)
{
	static uint8_t buf[9216], payload[9000];
	uint64_t rng = 1;
	unsigned int op, n_ops = 0, n = 0, i;

	(void)state;
	for (i = 0; i < sizeof(payload); i++)
		payload[i] = (uint8_t)test_rand(&rng);
	for (op = 0; op < 256; op++) {
		int ipv6, vlan;
		uint32_t plen;

		if (!roce_opcode_is_valid((uint8_t)op)) {
			assert_string_equal(roce_opcode_name((uint8_t)op), "UNKNOWN");
			continue;
		}
		n_ops++;
		for (ipv6 = 0; ipv6 < 2; ipv6++) {
			for (vlan = 0; vlan < 2; vlan++) {
				for (plen = 0; plen < 12; plen++) {
					struct roce_hdr_params hp = params(&rng, (uint8_t)op, ipv6, vlan);
					uint32_t len = plen < 8 ? plen : 4093 + plen;
					int r = roce_build(buf, sizeof(buf), &hp, payload, len);

					assert_true(r > 0);
					check_roundtrip(buf, r, &hp, payload, len);
					n++;
				}
			}
		}
	}
	/* RC 23, UC 12, RD 22, UD 2, CNP 1 */
	assert_int_equal(n_ops, 60);
	printf("%u frames round-tripped over %u opcodes\n", n, n_ops);
}

static void
test_opcode_names(void **state)
{
	(void)state;
	assert_string_equal(roce_opcode_name(0x00), "RC_SEND_FIRST");
	assert_string_equal(roce_opcode_name(0x0B), "RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE");
	assert_string_equal(roce_opcode_name(0x11), "RC_ACKNOWLEDGE");
	assert_string_equal(roce_opcode_name(0x15), "UNKNOWN");
	assert_string_equal(roce_opcode_name(0x2A), "UC_RDMA_WRITE_ONLY");
	assert_string_equal(roce_opcode_name(0x2C), "UNKNOWN");
	assert_string_equal(roce_opcode_name(0x55), "RD_RESYNC");
	assert_string_equal(roce_opcode_name(0x64), "UD_SEND_ONLY");
	assert_string_equal(roce_opcode_name(0x60), "UNKNOWN");
	assert_string_equal(roce_opcode_name(0x81), "CNP");
	assert_string_equal(roce_opcode_name(0xFF), "UNKNOWN");
	assert_string_equal(roce_class_name(ROCE_CLASS_INVALID), "invalid");
	assert_string_equal(roce_class_name(ROCE_CLASS_MAX), "unknown");
	assert_string_equal(roce_reason_name(ROCE_REASON_OK), "ok");
	assert_string_equal(roce_reason_name(ROCE_REASON_BAD_PAD), "bad_pad");
	assert_string_equal(roce_reason_name(ROCE_REASON_MAX), "unknown");
}

static void
test_ack_nak(void **state)
{
	struct roce_hdr_params hp = roce_hdr_params_default();
	uint8_t buf[128];
	unsigned int s;

	(void)state;
	memcpy(hp.src_mac, mac_b, 6);
	memcpy(hp.dst_mac, mac_a, 6);
	hp.src_ip[0] = 10;
	hp.dst_ip[0] = 11;
	hp.dest_qp = 0x45;
	hp.psn = 0xFFFFFF;
	for (s = 0; s < 128; s++) {
		uint8_t kind = (uint8_t)(s >> 5);
		struct roce_pkt p;
		int len;

		if (kind == ROCE_AETH_KIND_RESERVED ||
				(kind == ROCE_AETH_KIND_NAK && (s & 0x1F) > ROCE_NAK_INVALID_RD_REQ))
			continue;
		len = roce_build_ack(buf, sizeof(buf), &hp, (uint8_t)s, 0x123456);
		assert_int_equal(len, 62);	/* 14 + 20 + 8 + 12 + 4 + 4 */
		roce_parse(buf, (uint32_t)len, ROCE_UDP_PORT, &p);
		assert_int_equal(p.cls, ROCE_CLASS_ROCEV2);
		assert_true(roce_icrc_verify(buf, (uint32_t)len, &p));
		assert_int_equal(p.opcode, ROCE_OPCODE_RC_ACK);
		assert_true(p.has_aeth);
		assert_int_equal(p.aeth_kind, kind);
		assert_int_equal(p.aeth_code, s & 0x1F);
		assert_int_equal(p.msn, 0x123456);
		assert_int_equal(p.psn, 0xFFFFFF);
	}
	/* the four NAK codes docs/wire.md names */
	for (s = 0x60; s <= 0x63; s++) {
		struct roce_pkt p;
		int len = roce_build_ack(buf, sizeof(buf), &hp, (uint8_t)s, 7);

		roce_parse(buf, (uint32_t)len, ROCE_UDP_PORT, &p);
		assert_int_equal(p.aeth_kind, ROCE_AETH_KIND_NAK);
		assert_int_equal(p.aeth_syndrome, s);
	}
}

static void
test_short_frame_padded(void **state)
{
	struct roce_hdr_params hp = roce_hdr_params_default();
	uint8_t buf[128];
	struct roce_pkt p;
	int len;

	(void)state;
	memset(buf, 0xAA, sizeof(buf));
	hp.opcode = ROCE_TRANSPORT_RC | ROCE_OP_SEND_ONLY;
	len = roce_build(buf, sizeof(buf), &hp, NULL, 0);	/* 58 bytes of headers */
	assert_int_equal(len, 60);
	assert_int_equal(buf[58], 0);
	assert_int_equal(buf[59], 0);
	roce_parse(buf, (uint32_t)len, ROCE_UDP_PORT, &p);
	assert_int_equal(p.icrc_off, 54);	/* from the IP length, not the frame end */
	assert_true(roce_icrc_verify(buf, (uint32_t)len, &p));
	assert_int_equal(roce_build(buf, 59, &hp, NULL, 0), -ENOSPC);
}

static void
test_pfc_pause(void **state)
{
	static const uint8_t da[6] = { 0x01, 0x80, 0xC2, 0x00, 0x00, 0x01 };
	const uint16_t quanta[8] = { 0, 1, 2, 0xFFFF, 4, 5, 6, 7 };
	uint8_t buf[64];
	struct roce_pkt p;
	unsigned int i;
	int len;

	(void)state;
	len = roce_build_pfc(buf, sizeof(buf), mac_a, 0x0048, quanta);
	assert_int_equal(len, 60);
	assert_memory_equal(buf, da, 6);
	assert_memory_equal(buf + 6, mac_a, 6);
	assert_int_equal(roce_get_be16(buf + 12), 0x8808);
	assert_int_equal(roce_get_be16(buf + 14), 0x0101);
	for (i = 34; i < 60; i++)
		assert_int_equal(buf[i], 0);
	assert_int_equal(roce_parse(buf, (uint32_t)len, ROCE_UDP_PORT, &p), ROCE_CLASS_MAC_CONTROL);
	assert_int_equal(p.reason, ROCE_REASON_OK);
	assert_int_equal(p.macctl_opcode, ROCE_MACCTL_OP_PFC);
	assert_int_equal(p.pfc_enable, 0x0048);
	for (i = 0; i < 8; i++)
		assert_int_equal(p.pause_quanta[i], quanta[i]);

	len = roce_build_pause(buf, sizeof(buf), mac_b, 0x1234);
	assert_int_equal(len, 60);
	assert_int_equal(roce_get_be16(buf + 14), 0x0001);
	roce_parse(buf, (uint32_t)len, ROCE_UDP_PORT, &p);
	assert_int_equal(p.cls, ROCE_CLASS_MAC_CONTROL);
	assert_int_equal(p.macctl_opcode, ROCE_MACCTL_OP_PAUSE);
	assert_int_equal(p.pause_quanta[0], 0x1234);
	for (i = 18; i < 60; i++)
		assert_int_equal(buf[i], 0);
	assert_int_equal(roce_build_pfc(buf, 59, mac_a, 1, quanta), -ENOSPC);
	assert_int_equal(roce_build_pause(buf, 59, mac_a, 1), -ENOSPC);
}

static void
test_errors(void **state)
{
	struct roce_hdr_params hp = roce_hdr_params_default();
	static uint8_t buf[70000];

	(void)state;
	hp.ip_version = 5;
	assert_int_equal(roce_build(buf, sizeof(buf), &hp, NULL, 0), -EINVAL);
	hp.ip_version = 4;
	assert_int_equal(roce_build(buf, sizeof(buf), &hp, NULL, 65535), -EINVAL);
	assert_true(roce_build(buf, sizeof(buf), &hp, NULL, 9000) > 0);
	hp.opcode = ROCE_OPCODE_RC_ACK;
	assert_int_equal(roce_build_data(buf, sizeof(buf), &hp, NULL, 0), -EINVAL);
	hp.opcode = ROCE_OPCODE_CNP;
	assert_int_equal(roce_build_data(buf, sizeof(buf), &hp, NULL, 0), -EINVAL);
	hp.opcode = ROCE_TRANSPORT_RC | ROCE_OP_RDMA_WRITE_ONLY_WITH_IMMEDIATE;
	assert_true(roce_build_data(buf, sizeof(buf), &hp, NULL, 100) > 0);
	hp.opcode = ROCE_TRANSPORT_UD | ROCE_OP_SEND_ONLY;
	assert_true(roce_build_data(buf, sizeof(buf), &hp, NULL, 100) > 0);
	hp.opcode = ROCE_TRANSPORT_UD | ROCE_OP_SEND_FIRST;
	assert_int_equal(roce_build_data(buf, sizeof(buf), &hp, NULL, 100), -EINVAL);
}

/* A CNP answering a data packet: addresses swapped, tag kept, DSCP 48, priority 6. */
static void
test_cnp_params_for(void **state)
{
	struct roce_hdr_params hp = roce_hdr_params_default();
	struct roce_cnp_params cp;
	uint8_t data[256], cnp[128];
	struct roce_pkt d, c;
	uint64_t rng = 7;
	int len;

	(void)state;
	hp = params(&rng, ROCE_TRANSPORT_RC | ROCE_OP_RDMA_WRITE_MIDDLE, 1, 1);
	len = roce_build(data, sizeof(data), &hp, NULL, 64);
	roce_parse(data, (uint32_t)len, ROCE_UDP_PORT, &d);
	cp = roce_cnp_params_for(data, &d, 0xABCDEF);
	len = roce_build_cnp(cnp, sizeof(cnp), &cp);
	assert_true(len > 0);
	roce_parse(cnp, (uint32_t)len, ROCE_UDP_PORT, &c);
	assert_int_equal(c.cls, ROCE_CLASS_ROCEV2);
	assert_true(roce_icrc_verify(cnp, (uint32_t)len, &c));
	assert_int_equal(c.opcode, ROCE_OPCODE_CNP);
	assert_int_equal(c.becn, 1);
	assert_int_equal(c.dest_qp, 0xABCDEF);
	assert_int_equal(c.ackreq, 0);
	assert_int_equal(c.psn, 0);
	assert_int_equal(c.dscp, 48);
	assert_int_equal(c.ecn, 2);
	assert_int_equal(c.pcp, 6);
	assert_int_equal(c.vlan_id, d.vlan_id);
	assert_int_equal(c.pkey, d.pkey);
	assert_memory_equal(c.src_ip, d.dst_ip, 16);
	assert_memory_equal(c.dst_ip, d.src_ip, 16);
	assert_memory_equal(cnp, data + 6, 6);
	assert_memory_equal(cnp + 6, data, 6);
}

/* Every builder's output, deterministic, for tshark_compare.py. */
static int
write_pcap(const char *path)
{
	static uint8_t buf[9216], payload[4200];
	FILE *f = test_pcap_create(path);
	uint32_t ts = 0, i;
	uint64_t rng = 99;
	unsigned int op;
	int len;

	for (i = 0; i < sizeof(payload); i++)
		payload[i] = (uint8_t)i;
	for (op = 0; op < 256; op++) {
		uint8_t o = (uint8_t)(op & ROCE_OP_MASK);
		int has_payload, ipv6, vlan;

		/* RD: Wireshark 4.0 misplaces the RDETH/DETH fields (and no RoCE NIC has RD) */
		if (!roce_opcode_is_valid((uint8_t)op) || op == ROCE_OPCODE_CNP ||
				(op & ROCE_TRANSPORT_MASK) == ROCE_TRANSPORT_RD)
			continue;
		has_payload = o <= ROCE_OP_RDMA_WRITE_ONLY_WITH_IMMEDIATE ||
			(o >= ROCE_OP_RDMA_READ_RESPONSE_FIRST &&
			 o <= ROCE_OP_RDMA_READ_RESPONSE_ONLY) ||
			o == ROCE_OP_SEND_LAST_WITH_INVALIDATE || o == ROCE_OP_SEND_ONLY_WITH_INVALIDATE;
		for (ipv6 = 0; ipv6 < 2; ipv6++) {
			for (vlan = 0; vlan < 2; vlan++) {
				struct roce_hdr_params hp = params(&rng, (uint8_t)op, ipv6, vlan);
				uint32_t plen = has_payload ? (uint32_t)(1 + ipv6 * 2 + vlan) *
					(uint32_t)(op % 7 == 0 ? 1024 : 1) + (op & 3) : 0;

				/* a UDP checksum on some (tshark verifies it), none on the rest */
				hp.udp_cksum = (uint8_t)((op + (unsigned int)vlan) & 1);
				hp.aeth_syndrome = (uint8_t)(op % 3 == 0 ? 0x1F : op % 3 == 1 ?
					0x60 | (op & 3) : 0x20 | (op & 0x1F));
				len = roce_build(buf, sizeof(buf), &hp, payload, plen);
				if (len < 0)
					abort();
				test_pcap_write(f, ts++, buf, (uint32_t)len);
			}
		}
	}
	for (i = 0; i < 2; i++) {
		struct roce_cnp_params cp = roce_cnp_params_default();

		memcpy(cp.src_mac, mac_a, 6);
		memcpy(cp.dst_mac, mac_b, 6);
		cp.ip_version = i ? 6 : 4;
		cp.src_ip[0] = 10;
		cp.dst_ip[0] = 10;
		cp.dst_ip[15] = 1;
		cp.dest_qp = 0x118 + i;
		cp.has_vlan = (uint8_t)i;
		cp.vlan_id = 100;
		len = roce_build_cnp(buf, sizeof(buf), &cp);
		test_pcap_write(f, ts++, buf, (uint32_t)len);
	}
	{
		const uint16_t q[8] = { 0xFFFF, 0, 0, 0x100, 0, 0, 0xFFFF, 0 };

		len = roce_build_pfc(buf, sizeof(buf), mac_a, 0x49, q);
		test_pcap_write(f, ts++, buf, (uint32_t)len);
		len = roce_build_pause(buf, sizeof(buf), mac_a, 0xFFFF);
		test_pcap_write(f, ts++, buf, (uint32_t)len);
	}
	if (fclose(f) != 0)
		return 1;
	return 0;
}

int
main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_roundtrip_all_opcodes),
		cmocka_unit_test(test_opcode_names),
		cmocka_unit_test(test_ack_nak),
		cmocka_unit_test(test_short_frame_padded),
		cmocka_unit_test(test_pfc_pause),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_cnp_params_for),
	};

	if (argc == 3 && strcmp(argv[1], "--write-pcap") == 0)
		return write_pcap(argv[2]);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
