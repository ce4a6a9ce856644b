/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lib/proto cost, as ratios against baselines measured in the same run (never fails on time):
 * - parse: ns per packet for a 62-byte RC ACK and a 4 KB RDMA WRITE (4154-byte frame);
 * - ICRC: GB/s over 4 KB payloads for roce_icrc_compute() (masked header copy + seeded
 *   VPCLMULQDQ/PCLMULQDQ CRC in place), against the same ICRC on the 128-bit PCLMULQDQ path
 *   only (the code before issue 34; the target is 20 GB/s), rte_net_crc_calc() over the same
 *   bytes (one shot, unseeded: what the ICRC would cost if no masking were needed), the
 *   slice-by-8 tables and a plain one-table CRC-32;
 * - QP pairing: ns per learn + lookup;
 * - UDP source port rewrite of a 4 KB RDMA WRITE: roce_set_udp_sport() (ICRC recomputed over
 *   the frame) against roce_patch_udp_sport() (ICRC patched for the two bytes), ns per packet
 *   and their ratio (goal: the patch under 30 ns);
 * - ECMP hash (lib/fabric fab_hash()) of a parsed IPv4 packet over the 5-tuple and DestQP, ns
 *   per packet for each function.
 * Usage: bench_proto [iterations_scale | --quick]   (no EAL; rte_net_crc picks its algorithm
 *        itself; --quick: 1/100 of the iterations, a smoke test of the self-check and every loop)
 */
/* rte_vect_{get,set}_max_simd_bitwidth() are experimental in DPDK 22.11 */
#define ALLOW_EXPERIMENTAL_API 1

#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rte_net_crc.h>
#include <rte_vect.h>

#include "lib/base/emu_compat.h"
#include "lib/fabric/fab_hash.h"
#include "lib/proto/roce_crc.h"
#include "lib/proto/roce_proto.h"

static volatile uint32_t bench_sink;
static struct emu_compat_crc bench_rte_crc;

static double
now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int
build_frame(uint8_t *buf, size_t cap, uint8_t opcode, uint32_t payload_len)
{
	struct roce_hdr_params hp = roce_hdr_params_default();
	int len;

	hp.src_ip[0] = 10;
	hp.dst_ip[0] = 10;
	hp.dst_ip[3] = 1;
	hp.opcode = opcode;
	hp.dest_qp = 0x48;
	hp.udp_sport = 0xC123;
	len = roce_build(buf, cap, &hp, NULL, payload_len);
	if (len < 0) {
		fprintf(stderr, "bench_proto: cannot build frame: %d\n", len);
		exit(1);
	}
	return len;
}

/* Best of 5 runs of n parses, in ns per packet. */
static double
bench_parse(const uint8_t *f, uint32_t len, uint64_t n)
{
	double best = 1e30;
	int r;

	for (r = 0; r < 5; r++) {
		struct roce_pkt p;
		double t0 = now_s(), dt;
		uint64_t i;
		uint32_t acc = 0;

		for (i = 0; i < n; i++) {
			roce_parse(f, len, ROCE_UDP_PORT, &p);
			acc += p.psn;
		}
		dt = now_s() - t0;
		bench_sink = acc;
		if (dt < best)
			best = dt;
	}
	return best * 1e9 / (double)n;
}

enum crc_kind { CRC_ICRC, CRC_ICRC_SSE, CRC_RTE, CRC_SLICE8, CRC_BYTEWISE };

/*
 * roce_icrc_compute() as it was before the AVX-512 path (issue 34): the same masked header,
 * then the 128-bit PCLMULQDQ folding (four lanes) over the rest, whatever the CPU has.
 */
static uint32_t
icrc_sse(const uint8_t *f, uint32_t len, const struct roce_pkt *p)
{
	uint32_t start = (uint32_t)p->bth_off + ROCE_BTH_LEN, state;

	if (roce_icrc_begin(f, len, p, &state) != 0)
		return 0;
	if (roce_crc32_has_clmul())
		return ~roce_crc32_update_clmul(state, f + start, p->icrc_off - start);
	return ~roce_crc32_update_table(state, f + start, p->icrc_off - start);
}

/* Best of 5 runs, GB/s of payload bytes (the 4 KB the ICRC covers beyond the headers). */
static double
bench_crc(enum crc_kind k, const uint8_t *f, uint32_t len, const struct roce_pkt *p, uint64_t n)
{
	const uint8_t *pl = f + p->payload_off;
	uint32_t plen = p->payload_len;
	double best = 1e30;
	int r;

	for (r = 0; r < 5; r++) {
		double t0 = now_s(), dt;
		uint32_t acc = 0;
		uint64_t i;

		for (i = 0; i < n; i++) {
			switch (k) {
			case CRC_ICRC:
				acc += roce_icrc_compute(f, len, p);
				break;
			case CRC_ICRC_SSE:
				acc += icrc_sse(f, len, p);
				break;
			case CRC_RTE:
				acc += emu_compat_crc_calc(&bench_rte_crc, pl, plen);
				break;
			case CRC_SLICE8:
				acc += roce_crc32_update_table(ROCE_CRC32_INIT, pl, plen);
				break;
			case CRC_BYTEWISE:
				acc += roce_crc32_update_bytewise(ROCE_CRC32_INIT, pl, plen);
				break;
			}
		}
		dt = now_s() - t0;
		bench_sink = acc;
		if (dt < best)
			best = dt;
	}
	return (double)plen * (double)n / best / 1e9;
}

static double
bench_qpmap(uint64_t n)
{
	struct roce_qpmap *map = roce_qpmap_create(65536, 1000000000ULL);
	struct roce_pkt p;
	double t0, dt;
	uint64_t i;
	uint32_t qpn, acc = 0;

	if (map == NULL)
		return 0;
	memset(&p, 0, sizeof(p));
	p.cls = ROCE_CLASS_ROCEV2;
	p.ip_version = 4;
	p.src_ip[0] = 10;
	p.dst_ip[0] = 10;
	p.opcode = ROCE_TRANSPORT_RC | ROCE_OP_RDMA_WRITE_MIDDLE;
	t0 = now_s();
	for (i = 0; i < n; i++) {
		p.src_ip[3] = (uint8_t)i;
		p.dst_ip[2] = (uint8_t)(i >> 8);
		p.udp_sport = (uint16_t)(i * 7);
		p.dest_qp = (uint32_t)i & 0xFFF;
		roce_qpmap_learn(map, &p, i);
		if (roce_qpmap_lookup_sender(map, &p, i, &qpn) == 0)
			acc += qpn;
	}
	dt = now_s() - t0;
	bench_sink = acc;
	roce_qpmap_free(map);
	return dt * 1e9 / (double)n;
}

/* Best of 5 runs of n sport rewrites of one frame, in ns per packet. */
static double
bench_sport(bool patch, uint8_t *f, uint32_t len, uint64_t n)
{
	double best = 1e30;
	int r;

	for (r = 0; r < 5; r++) {
		struct roce_pkt p;
		double t0, dt;
		uint64_t i;

		roce_parse(f, len, ROCE_UDP_PORT, &p);
		t0 = now_s();
		for (i = 0; i < n; i++) {
			uint16_t port = (uint16_t)(0xC000 | (i & 0x3FFF));

			if (patch)
				roce_patch_udp_sport(f, len, &p, port);
			else
				roce_set_udp_sport(f, len, &p, port);
		}
		dt = now_s() - t0;
		bench_sink = roce_get_le32(f + p.icrc_off);
		if (dt < best)
			best = dt;
	}
	return best * 1e9 / (double)n;
}

/* Best of 5 runs of n fab_hash() calls on one packet, in ns per packet. */
static double
bench_hash(enum fab_hash_fn fn, const struct roce_pkt *p, uint64_t n)
{
	struct fab_hash_cfg cfg;
	double best = 1e30;
	int r;

	if (fab_hash_cfg_init(&cfg, fn, FAB_HASH_F_5TUPLE | FAB_HASH_F_DEST_QP, 7) != 0)
		return 0;
	for (r = 0; r < 5; r++) {
		struct roce_pkt q = *p;
		double t0 = now_s(), dt;
		uint32_t acc = 0;
		uint64_t i;

		for (i = 0; i < n; i++) {
			q.udp_sport = (uint16_t)i;
			acc += fab_hash_pick(fab_hash(&cfg, &q), 4);
		}
		dt = now_s() - t0;
		bench_sink = acc;
		if (dt < best)
			best = dt;
	}
	return best * 1e9 / (double)n;
}

int
main(int argc, char **argv)
{
	static uint8_t ack[128], wr[8192];
	bool quick = argc > 1 && strcmp(argv[1], "--quick") == 0;
	uint64_t scale = argc > 1 && !quick ? strtoull(argv[1], NULL, 0) : 1;
	uint64_t div = quick ? 100 : 1;
	int ack_len, wr_len;
	struct roce_pkt pa, pw;
	double ns_ack, ns_wr, g_icrc, g_sse, g_rte, g_s8, g_b1, ns_qp, ns_icrc_ack, ns_sp_full;
	double ns_sp_patch;

	if (scale == 0)
		scale = 1;
	/*
	 * Without rte_eal_init() the EAL's max SIMD width is 0, so rte_net_crc falls back to its
	 * scalar table (it logs "Requirements not met"). Raise the limit by hand to compare with
	 * its PCLMULQDQ path, then ask for the best algorithm the CPU has.
	 */
	printf("rte_net_crc without EAL: %s\n", rte_vect_get_max_simd_bitwidth() == 0 ?
		"scalar only (max SIMD width 0)" : "SIMD allowed");
	rte_vect_set_max_simd_bitwidth(RTE_VECT_SIMD_512);
	if (emu_compat_crc_init(&bench_rte_crc, RTE_NET_CRC_AVX512) != 0) {
		fprintf(stderr, "bench_proto: rte_net_crc: no memory for a context\n");
		return 1;
	}
	ack_len = build_frame(ack, sizeof(ack), ROCE_OPCODE_RC_ACK, 0);
	wr_len = build_frame(wr, sizeof(wr), ROCE_TRANSPORT_RC | ROCE_OP_RDMA_WRITE_MIDDLE, 4096);
	roce_parse(ack, (uint32_t)ack_len, ROCE_UDP_PORT, &pa);
	roce_parse(wr, (uint32_t)wr_len, ROCE_UDP_PORT, &pw);
	if (!roce_icrc_verify(wr, (uint32_t)wr_len, &pw) ||
			icrc_sse(wr, (uint32_t)wr_len, &pw) !=
				roce_icrc_compute(wr, (uint32_t)wr_len, &pw) ||
			emu_compat_crc_calc(&bench_rte_crc, wr + pw.payload_off, pw.payload_len) !=
			~roce_crc32_update_table(ROCE_CRC32_INIT, wr + pw.payload_off,
				pw.payload_len)) {
		fprintf(stderr, "bench_proto: CRC self-check failed\n");
		return 1;
	}

	ns_ack = bench_parse(ack, (uint32_t)ack_len, 2000000 * scale / div);
	ns_wr = bench_parse(wr, (uint32_t)wr_len, 2000000 * scale / div);
	/* the new path and the old one alternate, so a stall of the VM hits both alike */
	g_icrc = bench_crc(CRC_ICRC, wr, (uint32_t)wr_len, &pw, 50000 * scale / div);
	g_sse = bench_crc(CRC_ICRC_SSE, wr, (uint32_t)wr_len, &pw, 50000 * scale / div);
	g_icrc = fmax(g_icrc, bench_crc(CRC_ICRC, wr, (uint32_t)wr_len, &pw,
		50000 * scale / div));
	g_sse = fmax(g_sse, bench_crc(CRC_ICRC_SSE, wr, (uint32_t)wr_len, &pw,
		50000 * scale / div));
	g_rte = bench_crc(CRC_RTE, wr, (uint32_t)wr_len, &pw, 50000 * scale / div);
	g_s8 = bench_crc(CRC_SLICE8, wr, (uint32_t)wr_len, &pw, 10000 * scale / div);
	g_b1 = bench_crc(CRC_BYTEWISE, wr, (uint32_t)wr_len, &pw, 5000 * scale / div);
	{
		double best = 1e30, t0;
		int r;
		uint64_t i, n = 2000000 * scale / div;

		for (r = 0; r < 5; r++) {
			uint32_t acc = 0;

			t0 = now_s();
			for (i = 0; i < n; i++)
				acc += (uint32_t)roce_icrc_verify(ack, (uint32_t)ack_len, &pa);
			bench_sink = acc;
			if (now_s() - t0 < best)
				best = now_s() - t0;
		}
		ns_icrc_ack = best * 1e9 / (double)n;
	}
	ns_qp = bench_qpmap(2000000 * scale / div);
	ns_sp_full = bench_sport(false, wr, (uint32_t)wr_len, 50000 * scale / div);
	ns_sp_patch = bench_sport(true, wr, (uint32_t)wr_len, 2000000 * scale / div);
	roce_parse(wr, (uint32_t)wr_len, ROCE_UDP_PORT, &pw);
	if (!roce_icrc_verify(wr, (uint32_t)wr_len, &pw)) {
		fprintf(stderr, "bench_proto: ICRC wrong after the sport rewrites\n");
		return 1;
	}

	printf("bench_proto: PCLMULQDQ %s, AVX-512 VPCLMULQDQ %s\n",
		roce_crc32_has_clmul() ? "yes" : "no", roce_crc32_has_vpclmul() ? "yes" : "no");
	printf("parse  RC ACK %4d B:            %8.1f ns/packet\n", ack_len, ns_ack);
	printf("parse  RDMA WRITE %4d B:        %8.1f ns/packet (ratio to ACK %.2f)\n", wr_len,
		ns_wr, ns_wr / ns_ack);
	printf("ICRC   verify RC ACK:            %8.1f ns/packet\n", ns_icrc_ack);
	printf("ICRC   roce_icrc_compute, 4 KB:  %8.2f GB/s (%.0f ns/packet)\n", g_icrc,
		4096 / g_icrc);
	printf("ICRC   128-bit PCLMULQDQ (old):  %8.2f GB/s (%.0f ns/packet)\n", g_sse,
		4096 / g_sse);
	printf("ratio  ICRC / old ICRC:          %8.2f (goal: ICRC >= 20 GB/s, %s)\n",
		g_icrc / g_sse, g_icrc >= 20.0 ? "met" : "NOT met");
	printf("CRC-32 rte_net_crc_calc, 4 KB:   %8.2f GB/s\n", g_rte);
	printf("CRC-32 slice-by-8, 4 KB:         %8.2f GB/s\n", g_s8);
	printf("CRC-32 one table (baseline):     %8.2f GB/s\n", g_b1);
	printf("ratio  ICRC / rte_net_crc:       %8.2f\n", g_icrc / g_rte);
	printf("ratio  ICRC / one-table CRC:     %8.2f\n", g_icrc / g_b1);
	printf("ratio  rte_net_crc / one-table:  %8.2f\n", g_rte / g_b1);
	printf("qpmap  learn + lookup:           %8.1f ns/packet\n", ns_qp);
	printf("sport  rewrite 4 KB, full ICRC:  %8.1f ns/packet\n", ns_sp_full);
	printf("sport  rewrite 4 KB, ICRC patch: %8.1f ns/packet (goal < 30)\n", ns_sp_patch);
	printf("ratio  sport full / patch:       %8.2f\n", ns_sp_full / ns_sp_patch);
	{
		unsigned int fn;

		for (fn = 0; fn < FAB_HASH_FN_MAX; fn++)
			printf("hash   %-12s 5-tuple+QP:     %8.1f ns/packet\n",
				fab_hash_fn_name((enum fab_hash_fn)fn),
				bench_hash((enum fab_hash_fn)fn, &pa, 2000000 * scale / div));
	}
	emu_compat_crc_fini(&bench_rte_crc);
	return 0;
}
