/* SPDX-License-Identifier: BSD-3-Clause */
/* Node files: the key table, the loader and the schema (node_load.h; docs/node.md). */
#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "lib/base/emu_json.h"
#include "lib/base/emu_keys.h"
#include "lib/node/node_load.h"

#define NODE_MAX_GPUS 8

static const char *const node_fabric_vals[] = {
	"nvlink3", "nvlink4", "nvlink5", "xgmi", "pcie", "pcie-acs", NULL,
};
static const char *const node_gpu_vals[] = {
	"volta", "ampere", "hopper", "blackwell", "cdna3", NULL,
};
static const char *const node_cpu_vals[] = { "intel", "amd", "arm", "other", NULL };

static const struct emu_key node_pcie_keys[] = {
	EMU_K_INT_DYN("gen", 1, 6, "PCIe generation, 1..6: 2.5, 5, 8, 16, 32, 64 GT/s per lane "
		      "(default 5)"),
	{ .name = "lanes", .type = EMU_KEY_INT, .imin = 0, .imax = INT32_MAX,
	  .schema = "{\"enum\": [1, 2, 4, 8, 16]}",
	  .desc = "link width: 1, 2, 4, 8 or 16 (default 16)" },
	{ .name = "mps", .type = EMU_KEY_INT, .imin = 0, .imax = INT32_MAX,
	  .schema = "{\"enum\": [128, 256, 512, 1024, 2048, 4096]}",
	  .desc = "max payload size in bytes: 128, 256, 512, 1024, 2048 or 4096 (default 256)" },
};
static const struct emu_key_table node_pcie_table =
	EMU_KEY_TABLE("pcie", "a PCIe link", node_pcie_keys);

static const struct emu_key node_keys[] = {
	EMU_K_SCHEMA_URI,
	EMU_K_INT_DYN("gpus", 1, NODE_MAX_GPUS, "GPUs per node = rocegen's ranks per process "
		      "(default: --ranks)"),
	EMU_K_ENUM("gpu", "hopper", node_gpu_vals, "GPU generation (NCCL's tuning keys on it)"),
	EMU_K_ENUM("cpu", "intel", node_cpu_vals, "CPU vendor (NCCL's tuning keys on it)"),
	EMU_K_ENUM("fabric", "nvlink4", node_fabric_vals,
		   "intra-node fabric: NVLink 3/4/5 through NVSwitch, xGMI full mesh, PCIe P2P "
		   "through a switch, or through the root complex (ACS)"),
	EMU_K_NUM_DYN("fabric_GBps", 0, true, 1e5, "intra-node bandwidth per GPU per direction "
		      "in GB/s (default: NCCL's figure for the fabric)"),
	EMU_K_NUM_DYN("fabric_latency_us", 0, false, 1e6, "latency of one intra-node step in us "
		      "(default: NCCL's ring latency for the fabric, 3.4 NVLink/xGMI, 5.7 PCIe)"),
	EMU_K_INT_DYN("nics", 1, NODE_MAX_GPUS, "NICs per node, one per rail, at most gpus "
		      "(default: gpus)"),
	EMU_K_NUM_DYN("nic_gbps", 0, true, 1000, "each NIC's line rate in Gb/s (default: "
		      "rocegen's --line-rate-mbps)"),
	EMU_K_OBJ("pcie", &node_pcie_table, "each NIC's PCIe slot (default 5x16, MPS 256)"),
	EMU_K_OBJ("gpu_pcie", &node_pcie_table, "each GPU's PCIe slot: the GDR-off path and "
		  "PCIe P2P cross it (default 5x16, MPS 256)"),
	EMU_K_BOOL("gdr", 1, "GPUDirect RDMA; false: the data goes through a pinned host buffer"),
	EMU_K_NUM_DYN("host_mem_GBps", 0, true, 1e5, "host DRAM bandwidth of the node in GB/s "
		      "(default 614.4: 2 sockets x 8 channels of DDR5-4800)"),
};
static const struct emu_key_table node_table =
	EMU_KEY_TABLE("node", "a GPU server as rocegen models it (docs/node.md)", node_keys);

static int
node_one_of(const json_t *o, const char *path, const char *name, const int64_t *vals,
	    unsigned int n, unsigned int *out, struct emu_err *err)
{
	char p[EMU_JSON_PATH_LEN], list[128];
	size_t used = 0;
	int64_t v;
	unsigned int i;
	int rc;

	if (json_object_get(o, name) == NULL)
		return 0;
	rc = emu_key_int_def(o, path, &node_pcie_table, name, 0, &v, err);
	if (rc != 0)
		return rc;
	for (i = 0; i < n; i++)
		if (vals[i] == v) {
			*out = (unsigned int)v;
			return 0;
		}
	for (i = 0; i < n; i++)
		used += snprintf(list + used, sizeof(list) - used, "%s%" PRId64, i ? "," : "",
				 vals[i]);
	emu_json_path(p, sizeof(p), path, name);
	return emu_err_set(err, "%s: must be one of %s, got %" PRId64, p, list, v);
}

static int
node_pcie(const json_t *doc, const char *path, const char *name, struct node_pcie *pc,
	  struct emu_err *err)
{
	static const int64_t lanes[] = { 1, 2, 4, 8, 16 };
	static const int64_t mpss[] = { 128, 256, 512, 1024, 2048, 4096 };
	const json_t *o = json_object_get(doc, name);
	char p[EMU_JSON_PATH_LEN];
	int64_t gen;
	int rc;

	if (o == NULL)
		return 0;
	emu_json_path(p, sizeof(p), path, name);
	rc = emu_json_expect_object(o, p, err);
	if (rc == 0)
		rc = emu_keys_check(o, p, &node_pcie_table, err);
	if (rc == 0)
		rc = emu_key_int_def(o, p, &node_pcie_table, "gen", pc->gen, &gen, err);
	if (rc == 0)
		rc = node_one_of(o, p, "lanes", lanes, 5, &pc->lanes, err);
	if (rc == 0)
		rc = node_one_of(o, p, "mps", mpss, 6, &pc->mps, err);
	if (rc == 0)
		pc->gen = (unsigned int)gen;
	return rc;
}

static int
node_enum(const json_t *doc, const char *path, const char *name, int (*by_name)(const char *),
	  unsigned int *out, struct emu_err *err)
{
	const char *s;
	int rc;

	if (json_object_get(doc, name) == NULL)
		return 0;
	rc = emu_key_str(doc, path, &node_table, name, &s, err);
	if (rc == 0)
		*out = (unsigned int)by_name(s);
	return rc;
}

int
node_load_json(const json_t *doc, const char *path, struct node_cfg *c, struct emu_err *err)
{
	unsigned int gpu = c->gpu, cpu = c->cpu, fabric = c->fabric;
	int64_t gpus, nics;
	double lat_us = c->fabric_latency_ns / 1e3;
	bool nics_given = json_object_get(doc, "nics") != NULL;
	int rc;

	rc = emu_json_expect_object(doc, path, err);
	if (rc == 0)
		rc = emu_keys_check(doc, path, &node_table, err);
	if (rc == 0)
		rc = emu_key_int_def(doc, path, &node_table, "gpus", c->gpus, &gpus, err);
	if (rc == 0)
		rc = node_enum(doc, path, "gpu", node_gpu_by_name, &gpu, err);
	if (rc == 0)
		rc = node_enum(doc, path, "cpu", node_cpu_by_name, &cpu, err);
	if (rc == 0)
		rc = node_enum(doc, path, "fabric", node_fabric_by_name, &fabric, err);
	if (rc == 0)
		rc = emu_key_num_def(doc, path, &node_table, "fabric_GBps", c->fabric_GBps,
				     &c->fabric_GBps, err);
	if (rc == 0 && json_object_get(doc, "fabric_latency_us") != NULL)
		rc = emu_key_num_def(doc, path, &node_table, "fabric_latency_us", 0, &lat_us, err);
	if (rc == 0)
		rc = emu_key_int_def(doc, path, &node_table, "nics", gpus, &nics, err);
	if (rc == 0)
		rc = emu_key_num_def(doc, path, &node_table, "nic_gbps", c->nic_gbps, &c->nic_gbps,
				     err);
	if (rc == 0)
		rc = node_pcie(doc, path, "pcie", &c->pcie, err);
	if (rc == 0)
		rc = node_pcie(doc, path, "gpu_pcie", &c->gpu_pcie, err);
	if (rc == 0 && json_object_get(doc, "gdr") != NULL)
		rc = emu_key_bool(doc, path, &node_table, "gdr", &c->gdr, err);
	if (rc == 0)
		rc = emu_key_num_def(doc, path, &node_table, "host_mem_GBps", c->host_mem_GBps,
				     &c->host_mem_GBps, err);
	if (rc != 0)
		return rc;
	if (nics_given && nics > gpus)
		return emu_err_set(err, "%s%snics: must be <= gpus (%" PRId64 "), got %" PRId64,
				   path, path[0] ? "." : "", gpus, nics);
	c->gpus = (unsigned int)gpus;
	c->nics = (unsigned int)(nics > gpus ? gpus : nics);
	c->gpu = (enum node_gpu)gpu;
	c->cpu = (enum node_cpu)cpu;
	c->fabric = (enum node_fabric)fabric;
	if (json_object_get(doc, "fabric_latency_us") != NULL)
		c->fabric_latency_ns = lat_us * 1e3;
	return 0;
}

int
node_load_file(const char *file, json_t **out, struct emu_err *err)
{
	return emu_json_load_file(file, out, err);
}

json_t *
node_schema(struct emu_err *err)
{
	json_t *s = emu_keys_schema(&node_table, err);

	if (s != NULL)
		json_object_set_new(s, "$schema", json_string(EMU_KEYS_SCHEMA_DIALECT));
	return s;
}

static json_t *
node_pcie_json(const struct node_pcie *p)
{
	return json_pack("{s:i, s:i, s:i}", "gen", (int)p->gen, "lanes", (int)p->lanes, "mps",
			 (int)p->mps);
}

json_t *
node_json(const struct node_cfg *c, const struct node_eval *e)
{
	json_t *o = json_object(), *caps = json_array();
	unsigned int i;

	if (o == NULL || caps == NULL) {
		json_decref(o);
		json_decref(caps);
		return NULL;
	}
	json_object_set_new(o, "gpus", json_integer(c->gpus));
	json_object_set_new(o, "gpu", json_string(node_gpu_name(c->gpu)));
	json_object_set_new(o, "cpu", json_string(node_cpu_name(c->cpu)));
	json_object_set_new(o, "fabric", json_string(node_fabric_name(c->fabric)));
	json_object_set_new(o, "fabric_GBps", json_real(e->fabric_GBps));
	json_object_set_new(o, "fabric_nominal_GBps", json_real(e->fabric_nominal_GBps));
	json_object_set_new(o, "fabric_latency_us", json_real(e->fabric_latency_ns / 1e3));
	json_object_set_new(o, "nics", json_integer(c->nics));
	json_object_set_new(o, "nic_gbps", json_real(c->nic_gbps));
	json_object_set_new(o, "pcie", node_pcie_json(&c->pcie));
	json_object_set_new(o, "gpu_pcie", node_pcie_json(&c->gpu_pcie));
	json_object_set_new(o, "gdr", json_boolean(c->gdr));
	json_object_set_new(o, "host_mem_GBps", json_real(c->host_mem_GBps));
	json_object_set_new(o, "pcie_raw_GBps", json_real(e->pcie_raw_GBps));
	json_object_set_new(o, "pcie_tlp_GBps", json_real(e->pcie_tlp_GBps));
	json_object_set_new(o, "pcie_write_GBps", json_real(e->pcie_write_GBps));
	json_object_set_new(o, "pcie_read_GBps", json_real(e->pcie_read_GBps));
	json_object_set_new(o, "pcie_nccl_GBps", json_real(e->pcie_nccl_GBps));
	json_object_set_new(o, "host_buffer_GBps", json_real(e->host_buf_GBps));
	json_object_set_new(o, "host_cap_by", json_string(e->host_cap_by));
	/* every NIC of the node has the same slot: one cap each */
	for (i = 0; i < c->nics; i++)
		json_array_append_new(caps, json_real(e->host_cap_gbps));
	json_object_set_new(o, "host_cap_gbps", caps);
	return o;
}
