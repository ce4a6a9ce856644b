/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef ROCEMU_TEST_COMMON_H
#define ROCEMU_TEST_COMMON_H

/* Shared helpers for unit tests that need mbufs: EAL without hugepages or PCI, in
 * memory only (so tests can run in parallel), and a pool with rocemu's private area. */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <rte_eal.h>
#include <rte_mbuf.h>

#include "lib/stage/emu_stage.h"
#include "lib/switch/emu_switch.h"
#include "lib/proto/roce_build.h"
#include "lib/proto/roce_mbuf.h"

static char test_runtime_dir[256];

/* EAL leaves an empty /var/run/dpdk/<prefix> behind; tests use one prefix per process. */
static inline void
test_eal_cleanup(void)
{
	rte_eal_cleanup();
	if (test_runtime_dir[0] != '\0')
		rmdir(test_runtime_dir);
}

static inline struct rte_mempool *
test_eal_pool(const char *prog, uint32_t n)
{
	char prefix[64];
	char *argv[] = { (char *)(uintptr_t)prog, "--no-huge", "--no-pci", "--no-shconf",
			 prefix, "--no-telemetry", "-l", "0", "--log-level=lib.eal:error", "-m",
			 "512", NULL };
	struct emu_err err;
	struct rte_mempool *mp;

	snprintf(prefix, sizeof(prefix), "--file-prefix=%s_%d", prog, (int)getpid());
	if (rte_eal_init(11, argv) < 0) {
		fprintf(stderr, "%s: EAL init failed\n", prog);
		exit(1);
	}
	snprintf(test_runtime_dir, sizeof(test_runtime_dir), "%s", rte_eal_get_runtime_dir());
	atexit(test_eal_cleanup);
	mp = emu_pool_create("test_pool", n, 2048 + RTE_PKTMBUF_HEADROOM, 0, &err);
	if (mp == NULL) {
		fprintf(stderr, "%s: %s\n", prog, err.msg);
		exit(1);
	}
	return mp;
}

/* A frame of @p len bytes: dst MAC, src MAC, EtherType 0x88b5 (local experimental), then a
 * 32-bit sequence number so tests can tell packets apart. */
static inline struct rte_mbuf *
test_frame(struct rte_mempool *mp, const uint8_t dst[6], const uint8_t src[6], uint32_t len,
	   uint32_t seq)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(mp);
	uint8_t hdr[18];
	char *p = NULL;

	if (m == NULL || len < sizeof(hdr) || (p = rte_pktmbuf_append(m, (uint16_t)len)) == NULL)
	{
		fail_msg("test_frame: no mbuf or bad length %u", len);
		return NULL;
	}
	memcpy(hdr, dst, 6);
	memcpy(hdr + 6, src, 6);
	hdr[12] = 0x88;
	hdr[13] = 0xb5;
	memcpy(hdr + 14, &seq, sizeof(seq));
	memset(p, 0, len);
	memcpy(p, hdr, sizeof(hdr));
	memset(emu_meta(m), 0, sizeof(struct emu_pkt_meta));
	return m;
}

static inline uint32_t
test_frame_seq(struct rte_mbuf *m)
{
	uint32_t seq;

	memcpy(&seq, rte_pktmbuf_mtod_offset(m, uint8_t *, 14), sizeof(seq));
	return seq;
}

/* A RoCEv2 RDMA WRITE_ONLY frame of exactly @p len bytes (len - 74 payload bytes: Ethernet
 * 14, IPv4 20, UDP 8, BTH 12, RETH 16, ICRC 4; len - 74 must be a multiple of 4) with PSN
 * @p seq, DSCP @p dscp and ECN @p ecn, parsed into its metadata. */
static inline struct rte_mbuf *
test_roce_frame(struct rte_mempool *mp, const uint8_t dst[6], const uint8_t src[6], uint32_t len,
		uint32_t seq, uint8_t dscp, uint8_t ecn)
{
	struct roce_hdr_params hp = roce_hdr_params_default();
	struct rte_mbuf *m = rte_pktmbuf_alloc(mp);
	struct emu_pkt_meta *meta;
	char *p = NULL;
	int n;

	if (m == NULL || len < 74 || (p = rte_pktmbuf_append(m, (uint16_t)len)) == NULL)
	{
		fail_msg("test_roce_frame: no mbuf or bad length %u", len);
		return NULL;
	}
	memcpy(hp.dst_mac, dst, 6);
	memcpy(hp.src_mac, src, 6);
	hp.opcode = 0x0A; /* RDMA_WRITE_ONLY */
	hp.dscp = dscp;
	hp.ecn = ecn;
	hp.psn = seq;
	hp.dest_qp = 0x45;
	n = roce_build((uint8_t *)p, len, &hp, NULL, len - 74);
	if (n != (int)len)
		fail_msg("test_roce_frame: built %d bytes, wanted %u", n, len);
	meta = emu_meta(m);
	memset(meta, 0, sizeof(*meta));
	roce_parse_mbuf(m, 4791, &meta->pkt);
	meta->flags = EMU_META_PARSED;
	return m;
}

/* A pipeline from a JSON string (the test's own literal). */
static inline struct emu_pipeline *
test_pipeline(const char *json)
{
	json_error_t jerr;
	json_t *root = json_loads(json, JSON_REJECT_DUPLICATES, &jerr);
	struct emu_pipeline *pl = NULL;
	struct emu_err err;

	if (root == NULL) {
		fprintf(stderr, "bad test JSON: %s\n", jerr.text);
		fail();
	}
	if (emu_pipeline_from_json(root, "test.json", &pl, &err) != 0) {
		fprintf(stderr, "pipeline: %s\n", err.msg);
		fail();
	}
	json_decref(root);
	return pl;
}

/* A switch built from @p pl with seed 1, or the test fails with the builder's message. */
static inline struct emu_switch *
test_switch(struct rte_mempool *mp, struct emu_pipeline *pl)
{
	struct emu_err err;
	struct emu_switch *sw = emu_switch_create(pl, mp, 1, &err);

	if (sw == NULL)
		fprintf(stderr, "switch: %s\n", err.msg);
	assert_non_null(sw);
	return sw;
}

#endif
