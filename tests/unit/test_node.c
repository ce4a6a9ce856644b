/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lib/node: the node model's arithmetic against NODE.md's figures (PCIe rates and encodings,
 * the TLP-layer share at MPS 128/256 on Gen3 x16, per-TLP efficiency at MPS 128/256/512,
 * NCCL's own PCIe and NVLink figures, the host-buffer path with GDR off, the per-NIC cap and
 * what sets it), and the loader: defaults kept, keys read, and errors that start with the
 * JSON path.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "lib/node/node_load.h"
#include "lib/node/node_model.h"
#include "lib/node/node_tune.h"

#define near(a, b, tol) assert_true((a) > (b) - (tol) && (a) < (b) + (tol))

static void
test_pcie(void **state)
{
	struct node_pcie g4 = { 4, 16, 256 };

	(void)state;
	/* raw after encoding: Gen1 x16 4.0, Gen2 8.0, Gen3 15.75, Gen4 31.5, Gen5 63.0, Gen6 121 */
	near(node_pcie_raw_GBps(1, 16), 4.0, 1e-9);
	near(node_pcie_raw_GBps(2, 16), 8.0, 1e-9);
	near(node_pcie_raw_GBps(3, 16), 15.754, 0.001);
	near(node_pcie_raw_GBps(4, 16), 31.508, 0.001);
	near(node_pcie_raw_GBps(5, 16), 63.015, 0.001);
	near(node_pcie_raw_GBps(6, 16), 121.0, 0.001);
	near(node_pcie_raw_GBps(4, 8), 15.754, 0.001);
	assert_true(node_pcie_raw_GBps(7, 16) == 0);
	/* TLP share on Gen3 x16: 88.6% at MPS 128, 90.2% at MPS 256 (NODE.md 5) */
	near(node_pcie_tlp_share(3, 16, 128), 0.886, 0.0005);
	near(node_pcie_tlp_share(3, 16, 256), 0.902, 0.0005);
	near(node_pcie_tlp_share(3, 16, 512), 1 - 16.0 / 182 - 4.0 / 1538, 1e-12);
	assert_true(node_pcie_tlp_share(3, 3, 256) == 0);
	assert_true(node_pcie_tlp_share(3, 16, 100) == 0);
	/* per-TLP efficiency: writes 84.2/91.4/95.5%, completions 86.5/92.8/96.2% */
	near(node_pcie_write_eff(128), 0.842, 0.0005);
	near(node_pcie_write_eff(256), 0.914, 0.0005);
	near(node_pcie_write_eff(512), 0.955, 0.0005);
	near(node_pcie_read_eff(128), 0.865, 0.0005);
	near(node_pcie_read_eff(256), 0.928, 0.0005);
	near(node_pcie_read_eff(512), 0.962, 0.0005);
	/* Gen4 x16 at MPS 256: "about 26" GB/s (issue 33, NODE.md) */
	near(node_pcie_write_GBps(&g4), 26.0, 0.05);
	assert_true(node_pcie_read_GBps(&g4) > node_pcie_write_GBps(&g4));
	/* NCCL's figures, width x speed / 80: Gen3 12, Gen4 24, Gen5 48, Gen6 96; width 0 = 16 */
	near(node_pcie_nccl_GBps(3, 16), 12, 1e-9);
	near(node_pcie_nccl_GBps(4, 16), 24, 1e-9);
	near(node_pcie_nccl_GBps(5, 16), 48, 1e-9);
	near(node_pcie_nccl_GBps(6, 16), 96, 1e-9);
	near(node_pcie_nccl_GBps(4, 0), 24, 1e-9);
	near(node_pcie_nccl_GBps(4, 8), 12, 1e-9);
}

static void
test_fabric(void **state)
{
	struct node_cfg c;
	struct node_eval e;

	(void)state;
	node_cfg_default(&c);
	/* NCCL: H100 18 x 20.6 = 370.8, A100 12 x 20 = 240, B200 18 x 40.1 */
	near(node_fabric_nccl_GBps(&c), 370.8, 1e-9);
	near(node_fabric_nominal_GBps(NODE_FABRIC_NVLINK4), 450, 1e-9);
	c.fabric = NODE_FABRIC_NVLINK3;
	near(node_fabric_nccl_GBps(&c), 240, 1e-9);
	c.fabric = NODE_FABRIC_NVLINK5;
	near(node_fabric_nccl_GBps(&c), 721.8, 1e-9);
	c.fabric = NODE_FABRIC_XGMI;
	near(node_fabric_nccl_GBps(&c), 336, 1e-9);
	/* PCIe P2P: NCCL's slot figure; through the root complex x 5/6 (INTEL_P2P_OVERHEAD) */
	c.gpu_pcie = (struct node_pcie){ 4, 16, 256 };
	c.fabric = NODE_FABRIC_PCIE;
	near(node_fabric_nccl_GBps(&c), 24, 1e-9);
	c.fabric = NODE_FABRIC_PCIE_ACS;
	near(node_fabric_nccl_GBps(&c), 20, 1e-9);
	/* intra-node step: bytes / bw + latency (NCCL ring Simple: NVLink 3.4 us, PCI 5.7) */
	node_cfg_default(&c);
	node_model_eval(&c, &e);
	assert_int_equal(node_intra_ns(&e, 1 << 20), 2828 + 3400);
	assert_int_equal(node_intra_ns(&e, 0), 0);
	c.fabric = NODE_FABRIC_PCIE;
	node_model_eval(&c, &e);
	near(e.fabric_latency_ns, 5700, 1e-9);
	c.fabric_GBps = 100;
	c.fabric_latency_ns = 0;
	node_model_eval(&c, &e);
	assert_int_equal(node_intra_ns(&e, 1000000), 10000);
}

static void
test_caps(void **state)
{
	struct node_cfg c;
	struct node_eval e;

	(void)state;
	/* DGX H100-like: 400G on Gen5 x16 (52 GB/s = 416 Gb/s of writes): the line caps */
	node_cfg_default(&c);
	node_model_eval(&c, &e);
	near(e.host_cap_gbps, 400, 1e-9);
	assert_string_equal(e.host_cap_by, "line");
	near(e.host_buf_GBps, 0, 1e-12);
	/* the same NIC in a Gen4 x16 slot: 26 GB/s = 208 Gb/s */
	c.pcie.gen = 4;
	node_model_eval(&c, &e);
	near(e.host_cap_gbps, 208, 0.5);
	assert_string_equal(e.host_cap_by, "pcie");
	/* GDR off: 614.4 GB/s of DRAM / (4 crossings x 8 NICs) = 19.2 GB/s = 153.6 Gb/s */
	c.gdr = false;
	node_model_eval(&c, &e);
	near(e.host_buf_GBps, 19.2, 1e-9);
	near(e.host_cap_gbps, 153.6, 1e-9);
	assert_string_equal(e.host_cap_by, "host_buffer");
	/* one NIC: DRAM gives 153.6 GB/s, the GPU's Gen5 x16 slot less (52 GB/s of writes) */
	c.nics = 1;
	near(node_host_buf_GBps(&c), node_pcie_write_GBps(&c.gpu_pcie), 1e-9);
	/* staging one 1 MiB message through the host buffer: 1 MiB / the GPU slot's writes */
	near((double)node_stage_ns(&c, 1 << 20), (1 << 20) / node_pcie_write_GBps(&c.gpu_pcie),
	     1.0);
	c.gdr = true;
	assert_int_equal(node_stage_ns(&c, 1 << 20), 0);
}

/* NODE.md's worked example: 2 x 8 H100, Intel, all-reduce latency terms (us) */
static void
test_tune(void **state)
{
	struct node_cfg c;
	struct node_eval e;
	struct node_tune_in in = { .nodes = 2, .ppn = 8, .node = &c, .eval = &e };
	double t[NODE_N_ALGOS][NODE_N_PROTOS];
	enum node_algo a;
	enum node_proto p;

	(void)state;
	node_cfg_default(&c);
	node_model_eval(&c, &e);
	near(node_tune_lat_us(NODE_ALGO_TREE, NODE_PROTO_LL, &in, 0), 25.2, 1e-9);
	near(node_tune_lat_us(NODE_ALGO_TREE, NODE_PROTO_LL128, &in, 0), 48.5, 1e-9);
	near(node_tune_lat_us(NODE_ALGO_RING, NODE_PROTO_LL, &in, 0), 40.0, 1e-9);
	near(node_tune_lat_us(NODE_ALGO_RING, NODE_PROTO_LL128, &in, 0), 75.2, 1e-9);
	near(node_tune_lat_us(NODE_ALGO_TREE, NODE_PROTO_SIMPLE, &in, 0), 92.4, 1e-9);
	near(node_tune_lat_us(NODE_ALGO_RING, NODE_PROTO_SIMPLE, &in, 0), 131.6, 1e-9);
	/* ... x1.4 for Ring Simple once each channel and rank has 64 bytes */
	near(node_tune_lat_us(NODE_ALGO_RING, NODE_PROTO_SIMPLE, &in, 1 << 20), 131.6 * 1.4,
	     1e-9);
	/* 16 nodes: Tree LL 55.2, Ring LL 311.6 */
	in.nodes = 16;
	near(node_tune_lat_us(NODE_ALGO_TREE, NODE_PROTO_LL, &in, 0), 55.2, 1e-9);
	near(node_tune_lat_us(NODE_ALGO_RING, NODE_PROTO_LL, &in, 0), 311.6, 1e-9);
	/* "Tree/LL wins small sizes"; large sizes go to Ring Simple once bandwidth dominates */
	in.nodes = 2;
	node_tune_pick(&in, 1024, &a, &p, t);
	assert_int_equal(a, NODE_ALGO_TREE);
	assert_int_equal(p, NODE_PROTO_LL);
	node_tune_pick(&in, 1ULL << 30, &a, &p, t);
	assert_int_equal(a, NODE_ALGO_RING);
	assert_int_equal(p, NODE_PROTO_SIMPLE);
	/* no LL128 without NVLink inside or without GDR */
	c.fabric = NODE_FABRIC_PCIE;
	node_model_eval(&c, &e);
	node_tune_pick(&in, 1 << 20, &a, &p, t);
	assert_true(t[NODE_ALGO_RING][NODE_PROTO_LL128] < 0);
	assert_true(t[NODE_ALGO_TREE][NODE_PROTO_LL128] < 0);
	assert_true(p != NODE_PROTO_LL128);
}

static int
load(const char *text, struct node_cfg *c, struct emu_err *err)
{
	json_t *j = json_loads(text, JSON_REJECT_DUPLICATES, NULL);
	int rc;

	assert_non_null(j);
	node_cfg_default(c);
	rc = node_load_json(j, "node", c, err);
	json_decref(j);
	return rc;
}

static void
test_load(void **state)
{
	struct node_cfg c;
	struct emu_err err;
	json_t *s;

	(void)state;
	assert_int_equal(load("{}", &c, &err), 0);
	assert_int_equal(c.gpus, 8);
	assert_int_equal(c.pcie.gen, 5);
	assert_int_equal(load("{\"gpus\": 4, \"fabric\": \"xgmi\", \"cpu\": \"amd\", "
			      "\"pcie\": {\"gen\": 4, \"lanes\": 8}, \"gdr\": false, "
			      "\"fabric_latency_us\": 2}", &c, &err), 0);
	assert_int_equal(c.gpus, 4);
	assert_int_equal(c.nics, 4);
	assert_int_equal(c.fabric, NODE_FABRIC_XGMI);
	assert_int_equal(c.cpu, NODE_CPU_AMD);
	assert_int_equal(c.pcie.lanes, 8);
	assert_int_equal(c.pcie.mps, 256);
	assert_false(c.gdr);
	near(c.fabric_latency_ns, 2000, 1e-9);
	assert_int_equal(load("{\"pcie\": {\"lanes\": 3}}", &c, &err), -EINVAL);
	assert_string_equal(err.msg, "node.pcie.lanes: must be one of 1,2,4,8,16, got 3");
	assert_int_equal(load("{\"gpu_pcie\": {\"mps\": 64}}", &c, &err), -EINVAL);
	assert_string_equal(err.msg, "node.gpu_pcie.mps: must be one of 128,256,512,1024,2048,"
			    "4096, got 64");
	assert_int_equal(load("{\"gpus\": 4, \"nics\": 8}", &c, &err), -EINVAL);
	assert_string_equal(err.msg, "node.nics: must be <= gpus (4), got 8");
	assert_int_equal(load("{\"nvlink\": 4}", &c, &err), -EINVAL);
	assert_true(strncmp(err.msg, "node.nvlink: unknown key (known: ", 33) == 0);
	assert_int_equal(load("{\"fabric\": \"nvlink6\"}", &c, &err), -EINVAL);
	assert_true(strncmp(err.msg, "node.fabric: must be ", 21) == 0);
	s = node_schema(&err);
	assert_non_null(s);
	assert_non_null(json_object_get(json_object_get(s, "properties"), "pcie"));
	json_decref(s);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pcie),
		cmocka_unit_test(test_fabric),
		cmocka_unit_test(test_caps),
		cmocka_unit_test(test_tune),
		cmocka_unit_test(test_load),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
