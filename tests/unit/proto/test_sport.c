/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The UDP source port: Linux's rule for an RC QP pair (worked by hand from the kernel code),
 * and its rewrite with an incremental ICRC. The GF(2) shift (roce_crc32_shift) against zero
 * bytes through the CRC, its tables against the bitwise multiply, roce_icrc_patch() against a
 * full recompute on 10^4 random frames of 64..9000 bytes (IPv4 and IPv6, random offsets and
 * lengths) and on 10^3 RoCEv1 frames, roce_patch_udp_sport() against roce_set_udp_sport()
 * byte for byte, also on the real captures.
 * Usage: test_proto_sport DATA_DIR [BUILD_DIR]
 */
#include <errno.h>

#include "lib/proto/roce_crc.h"
#include "lib/proto/roce_crc_shift_tables.h"
#include "lib/proto/roce_proto.h"
#include "test_util.h"

#define N_RANDOM 10000
#define MAX_FRAME 9216

static const char *data_dir = "tests/unit/proto/data";

/*
 * rdma_calc_flow_label() then rdma_flow_label_to_udp_sport() by hand:
 * (0x1a2b, 0x3c4d): v = 0x629f2ef; v >> 20 = 0x62, v = 0x629f28d; v >> 40 = 0;
 *   fl = 0x9f28d; lo = 0x328d, (fl & 0xFC000) >> 14 = 0x27; 0x328d ^ 0x27 = 0x32aa -> 0xf2aa.
 * (0xffffff, 0xffffff): v = 0xfffffe000001; v >> 20 = 0xfffffe0, v = 0xfffff1ffffe1;
 *   v >> 40 = 0xff, v = 0xfffff1ffff1e; fl = 0xfff1e; lo = 0x3f1e ^ 0x3f = 0x3f21 -> 0xff21.
 * (0x100, 0x200): fl = 0x20000, lo = 0 ^ 8 -> 0xc008 (49160, as docs/wire.md gives).
 */
static void
test_linux_rule(void **state)
{
	(void)state;
	assert_int_equal(roce_flow_label_from_qpns(0x1a2b, 0x3c4d), 0x9f28d);
	assert_int_equal(roce_udp_sport_from_flow_label(0x9f28d), 0xf2aa);
	assert_int_equal(roce_udp_sport_from_qpns(0x1a2b, 0x3c4d), 62122);
	assert_int_equal(roce_udp_sport_from_qpns(0x3c4d, 0x1a2b), 62122);
	assert_int_equal(roce_flow_label_from_qpns(0xffffff, 0xffffff), 0xfff1e);
	assert_int_equal(roce_udp_sport_from_qpns(0xffffff, 0xffffff), 0xff21);
	assert_int_equal(roce_udp_sport_from_qpns(0x100, 0x200), 49160);
	assert_int_equal(roce_udp_sport_from_qpns(0x101, 0x201), 49929);
	assert_int_equal(roce_udp_sport_from_qpns(0, 0x1234), 0xC000);
	assert_int_equal(roce_udp_sport_from_flow_label(0xFFFFF), 0xC000 | (0x3FFF ^ 0x3F));
}

static void
test_shift(void **state)
{
	static const uint8_t zeros[70000];
	uint64_t rng = 11;
	uint32_t x8 = 1u << 23, r = 1u << 31;
	unsigned int i;

	(void)state;
	/* the generated tables are powers of x^8 (gen_crc_shift_tables.py) */
	for (i = 0; i < 256; i++) {
		assert_int_equal(roce_crc32_x8n_lo[i], r);
		r = roce_crc32_multmod_bitwise(r, x8);
	}
	for (i = 0, r = 1u << 31; i < 256; i++) {
		assert_int_equal(roce_crc32_x8n_hi[i], r);
		r = roce_crc32_multmod_bitwise(r, roce_crc32_x8n_lo[255]);
		r = roce_crc32_multmod_bitwise(r, x8);
	}
	for (i = 0; i < 2000; i++) {
		uint32_t a = (uint32_t)test_rand(&rng), b = (uint32_t)test_rand(&rng);
		uint32_t n = (uint32_t)(test_rand(&rng) % (i < 100 ? 300 : sizeof(zeros)));

		assert_int_equal(roce_crc32_multmod(a, b), roce_crc32_multmod_bitwise(a, b));
		assert_int_equal(roce_crc32_shift(a, n), roce_crc32_update_table(a, zeros, n));
	}
	assert_int_equal(roce_crc32_x8n(0), 1u << 31);
	assert_int_equal(roce_crc32_x8n(1), x8);
	printf("shift: PCLMULQDQ %s\n", roce_crc32_has_clmul() ? "yes" : "no (bitwise path)");
}

/* A random RoCEv2 frame of 64..9000 bytes; half of them with a UDP checksum. */
static int
random_frame(uint64_t *rng, uint8_t *buf)
{
	struct roce_hdr_params hp = roce_hdr_params_default();
	static const uint8_t ops[] = { 0x04, 0x0A, 0x06, 0x11, 0x24, 0x81, 0x64, 0x0B };
	uint32_t hdr, plen;
	unsigned int i;

	hp.ip_version = (test_rand(rng) & 1) ? 6 : 4;
	for (i = 0; i < 16; i++) {
		hp.src_ip[i] = (uint8_t)test_rand(rng);
		hp.dst_ip[i] = (uint8_t)test_rand(rng);
	}
	hp.has_vlan = (uint8_t)(test_rand(rng) & 1);
	hp.udp_sport = (uint16_t)test_rand(rng);
	hp.udp_cksum = (uint8_t)(test_rand(rng) & 1);
	hp.flow_label = (uint32_t)test_rand(rng) & 0xFFFFF;
	hp.opcode = ops[test_rand(rng) % sizeof(ops)];
	hp.dest_qp = (uint32_t)test_rand(rng) & 0xFFFFFF;
	hp.psn = (uint32_t)test_rand(rng) & 0xFFFFFF;
	hp.ecn = (uint8_t)(test_rand(rng) & 3);
	hdr = 14 + 4 * hp.has_vlan + (hp.ip_version == 4 ? 20 : 40) + 8 + 12 + 16 + 4;
	plen = (uint32_t)(64 + test_rand(rng) % (9000 - 64 + 1));
	plen = plen > hdr ? plen - hdr : 0;
	if (hp.opcode == 0x81)
		plen = 0;
	return roce_build(buf, MAX_FRAME, &hp, NULL, plen);
}

static void
test_patch_random(void **state)
{
	static uint8_t buf[MAX_FRAME];
	uint64_t rng = 2024;
	unsigned int i, n_v6 = 0, n_long = 0;

	(void)state;
	for (i = 0; i < N_RANDOM; i++) {
		int len = random_frame(&rng, buf);
		uint8_t old[16], new_bytes[16];
		uint32_t off, icrc_before, err;
		unsigned int n, k;
		struct roce_pkt p;

		assert_true(len >= 60);
		roce_parse(buf, (uint32_t)len, ROCE_UDP_PORT, &p);
		assert_int_equal(p.cls, ROCE_CLASS_ROCEV2);
		assert_true(roce_icrc_verify(buf, (uint32_t)len, &p));
		n_v6 += p.ip_version == 6;
		n_long += len > 4096;
		/* random bytes anywhere from the Ethernet header to the ICRC; the patch skips
		 * what the ICRC does not cover, masked fields included */
		n = 1 + (unsigned int)(test_rand(&rng) % sizeof(old));
		off = (uint32_t)(test_rand(&rng) % (p.icrc_off - n + 1));
		if (i & 1)	/* half inside the covered region for sure */
			off = p.l3_off + (uint32_t)(test_rand(&rng) % (p.icrc_off - p.l3_off - n + 1));
		for (k = 0; k < n; k++) {
			old[k] = buf[off + k];
			new_bytes[k] = (uint8_t)test_rand(&rng);
			buf[off + k] = new_bytes[k];
		}
		roce_icrc_patch(buf, (uint32_t)len, &p, off, old, new_bytes, n);
		assert_int_equal(roce_get_le32(buf + p.icrc_off),
			roce_icrc_compute(buf, (uint32_t)len, &p));

		/* a wrong ICRC stays wrong by the same error */
		err = (uint32_t)test_rand(&rng) | 1;
		icrc_before = roce_get_le32(buf + p.icrc_off) ^ err;
		roce_put_le32(buf + p.icrc_off, icrc_before);
		for (k = 0; k < n; k++) {
			old[k] = buf[off + k];
			new_bytes[k] = (uint8_t)~old[k];
			buf[off + k] = new_bytes[k];
		}
		roce_icrc_patch(buf, (uint32_t)len, &p, off, old, new_bytes, n);
		assert_int_equal(roce_get_le32(buf + p.icrc_off) ^ err,
			roce_icrc_compute(buf, (uint32_t)len, &p));
	}
	printf("patch: %u frames, %u IPv6, %u longer than 4 KB\n", N_RANDOM, n_v6, n_long);
	assert_true(n_v6 > N_RANDOM / 3 && n_long > N_RANDOM / 3);
}

/* RoCEv1 (EtherType 0x8915, GRH, BTH): the patch masks the GRH as the ICRC does. */
static void
test_patch_rocev1(void **state)
{
	static uint8_t f[2048];
	uint64_t rng = 31;
	unsigned int i;

	(void)state;
	for (i = 0; i < 1000; i++) {
		uint32_t plen = 4 * (uint32_t)(test_rand(&rng) % 400), len = 14 + 40 + 12 + plen + 4;
		uint8_t old[8], new_bytes[8];
		struct roce_pkt p;
		uint32_t off, k;

		for (k = 0; k < len; k++)
			f[k] = (uint8_t)test_rand(&rng);
		roce_put_be16(f + 12, 0x8915);
		f[14] = (uint8_t)(0x60 | (f[14] & 0x0F));	/* version 6 */
		roce_put_be16(f + 14 + 4, (uint16_t)(12 + plen + 4));
		f[14 + 6] = ROCE_GRH_NXT_BTH;
		f[54] = ROCE_TRANSPORT_RC | ROCE_OP_RDMA_WRITE_MIDDLE;
		f[55] &= 0x0F;				/* SE, M, PadCnt 0, TVer 0 */
		roce_parse(f, len, ROCE_UDP_PORT, &p);
		assert_int_equal(p.cls, ROCE_CLASS_ROCEV1);
		roce_icrc_update(f, len, &p);
		off = 14 + (uint32_t)(test_rand(&rng) % 48);	/* GRH and BTH */
		for (k = 0; k < sizeof(old); k++) {
			old[k] = f[off + k];
			new_bytes[k] = (uint8_t)test_rand(&rng);
			f[off + k] = new_bytes[k];
		}
		roce_icrc_patch(f, len, &p, off, old, new_bytes, sizeof(old));
		assert_int_equal(roce_get_le32(f + p.icrc_off), roce_icrc_compute(f, len, &p));
	}
}

/* patch_udp_sport gives the frame set_udp_sport gives; returns 1 if the frame was RoCEv2. */
static int
check_sport_same(const uint8_t *f, uint32_t len, uint16_t port)
{
	static uint8_t a[MAX_FRAME], b[MAX_FRAME];
	struct roce_pkt pa, pb;

	assert_true(len <= MAX_FRAME);
	memcpy(a, f, len);
	memcpy(b, f, len);
	roce_parse(a, len, ROCE_UDP_PORT, &pa);
	pb = pa;
	if (pa.cls != ROCE_CLASS_ROCEV2 || pa.reason != ROCE_REASON_OK) {
		assert_int_equal(roce_patch_udp_sport(a, len, &pa, port), -EINVAL);
		return 0;
	}
	assert_int_equal(roce_set_udp_sport(a, len, &pa, port), 0);
	assert_int_equal(roce_patch_udp_sport(b, len, &pb, port), 0);
	assert_memory_equal(a, b, len);
	assert_memory_equal(&pa, &pb, sizeof(pa));
	assert_true(roce_icrc_verify(b, len, &pb));
	return 1;
}

static void
test_patch_sport(void **state)
{
	static uint8_t buf[MAX_FRAME];
	uint64_t rng = 99;
	unsigned int i;

	(void)state;
	for (i = 0; i < N_RANDOM; i++) {
		int len = random_frame(&rng, buf);

		assert_int_equal(check_sport_same(buf, (uint32_t)len, (uint16_t)test_rand(&rng)), 1);
	}
}

static void
test_patch_sport_real(void **state)
{
	static const char *const names[] = { "huawei_rc_send.pcap", "connectx4lx_cnp.pcap" };
	unsigned int f, n_roce = 0;
	uint64_t rng = 5;

	(void)state;
	for (f = 0; f < 2; f++) {
		struct test_pcap pc;
		char path[1024];
		uint32_t i;

		snprintf(path, sizeof(path), "%s/real/%s", data_dir, names[f]);
		test_pcap_load(path, &pc);
		for (i = 0; i < pc.n; i++)
			n_roce += (unsigned int)check_sport_same(pc.frames[i].data, pc.frames[i].len,
				(uint16_t)test_rand(&rng));
		test_pcap_free(&pc);
	}
	assert_int_equal(n_roce, 105 + 1);
}

int
main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_linux_rule),
		cmocka_unit_test(test_shift),
		cmocka_unit_test(test_patch_random),
		cmocka_unit_test(test_patch_rocev1),
		cmocka_unit_test(test_patch_sport),
		cmocka_unit_test(test_patch_sport_real),
	};

	if (argc > 1)
		data_dir = argv[1];
	return cmocka_run_group_tests(tests, NULL, NULL);
}
