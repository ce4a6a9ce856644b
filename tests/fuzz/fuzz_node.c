/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Fuzz rocegen's node files (lib/node: node_load_file() and node_load_json(), then the model,
 * node_model_eval()). The input is the file. A refusal is a negative errno whose message
 * starts with the JSON path ("node" or "node.KEY..."); an accepted node has every value in its
 * documented range (1..8 GPUs, 1..gpus NICs, a known PCIe generation, width and MPS), and the
 * model computes finite, positive figures from it: the host cap per NIC at most the NIC's
 * line rate and named by what sets it, an intra-node step that takes at least the fabric's
 * latency and grows with its bytes; --json's "node" object builds and serialises; a second
 * load from the same defaults gives the same node, or the same message.
 */
#include <errno.h>
#include <math.h>

#include "lib/node/node_load.h"
#include "fuzz_file.h"

static int
load(const uint8_t *data, size_t size, struct node_cfg *c, struct emu_err *err)
{
	char path[64];
	json_t *doc = NULL;
	int fd = fuzz_file(data, size, path, sizeof(path)), rc;

	if (fd < 0)
		return 1;
	node_cfg_default(c);
	c->gpus = 2;		/* rocegen: --ranks */
	c->nic_gbps = 100;	/* rocegen: --line-rate-mbps 100000 */
	memset(err, 0, sizeof(*err));
	rc = node_load_file(path, &doc, err);
	close(fd);
	if (rc != 0) {
		FUZZ_CHECK(rc < 0 && doc == NULL && err->msg[0] != '\0');
		return rc;
	}
	rc = node_load_json(doc, "node", c, err);
	json_decref(doc);
	if (rc != 0) {
		FUZZ_CHECK(rc == -EINVAL);
		FUZZ_CHECK(strncmp(err->msg, "node", 4) == 0);
	}
	return rc;
}

static int
finite_pos(double x)
{
	return isfinite(x) && x > 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct node_cfg c, d;
	struct node_eval e;
	struct emu_err err, err2;
	uint64_t t1, t2;
	json_t *j;
	char *s;
	int rc;

	memset(&c, 0, sizeof(c));
	memset(&d, 0, sizeof(d));
	rc = load(data, size, &c, &err);
	if (rc == 1)
		return 0;
	FUZZ_CHECK(load(data, size, &d, &err2) == rc);
	if (rc != 0) {
		FUZZ_CHECK(strcmp(err.msg, err2.msg) == 0 ||
			   /* a syntax error names the file, whose descriptor may differ */
			   strncmp(err.msg, "node", 4) != 0);
		return 0;
	}
	FUZZ_CHECK(memcmp(&c, &d, sizeof(c)) == 0);
	FUZZ_CHECK(c.gpus >= 1 && c.gpus <= 8 && c.nics >= 1 && c.nics <= c.gpus);
	FUZZ_CHECK(c.pcie.gen >= 1 && c.pcie.gen <= 6 && c.gpu_pcie.gen >= 1 &&
		   c.gpu_pcie.gen <= 6);
	FUZZ_CHECK(c.pcie.lanes >= 1 && c.pcie.lanes <= 16 && (c.pcie.lanes & (c.pcie.lanes - 1)) == 0);
	FUZZ_CHECK(c.pcie.mps >= 128 && c.pcie.mps <= 4096 && (c.pcie.mps & (c.pcie.mps - 1)) == 0);
	FUZZ_CHECK(finite_pos(c.nic_gbps) && finite_pos(c.host_mem_GBps));
	node_model_eval(&c, &e);
	FUZZ_CHECK(finite_pos(e.pcie_raw_GBps) && finite_pos(e.pcie_tlp_GBps));
	FUZZ_CHECK(finite_pos(e.pcie_write_GBps) && finite_pos(e.pcie_read_GBps));
	FUZZ_CHECK(finite_pos(e.pcie_nccl_GBps) && finite_pos(e.fabric_GBps));
	FUZZ_CHECK(isfinite(e.host_buf_GBps) && e.host_buf_GBps >= 0);
	FUZZ_CHECK(c.gdr ? e.host_buf_GBps == 0 : e.host_buf_GBps > 0);
	FUZZ_CHECK(finite_pos(e.host_cap_gbps) && e.host_cap_gbps <= c.nic_gbps * (1 + 1e-9));
	FUZZ_CHECK(e.host_cap_by != NULL &&
		   (strcmp(e.host_cap_by, "line") == 0 || strcmp(e.host_cap_by, "pcie") == 0 ||
		    strcmp(e.host_cap_by, "host_buffer") == 0));
	FUZZ_CHECK(isfinite(e.fabric_latency_ns) && e.fabric_latency_ns >= 0);
	/* an intra-node step: at least the latency, more with more bytes */
	t1 = node_intra_ns(&e, 1 << 20);
	t2 = node_intra_ns(&e, 1 << 24);
	FUZZ_CHECK((double)t1 + 1 >= e.fabric_latency_ns && t2 >= t1);
	FUZZ_CHECK(node_stage_ns(&c, 1 << 24) >= node_stage_ns(&c, 1 << 20));
	j = node_json(&c, &e);
	FUZZ_CHECK(j != NULL);
	s = json_dumps(j, JSON_COMPACT);
	FUZZ_CHECK(s != NULL);
	free(s);
	json_decref(j);
	return 0;
}
