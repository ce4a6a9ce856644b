/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The node model's arithmetic (node_model.h). Sources, as NODE.md cites them: PCIe rates,
 * encodings, TLP and DLLP sizes and the ACK / FC update intervals from pcie-bench's
 * pcie-model (model/pcie.py, the PCIe base spec's tables 2-46..48 and 3-7..9); NCCL's PCIe
 * and NVLink figures from NVIDIA/nccl src/graph/topo.h and topo.cc; RCCL's xGMI figure from
 * ROCm/rccl src/graph/topo.h; ring latencies from nccl src/graph/tuning.cc.
 */
#include <math.h>
#include <string.h>

#include "node_model.h"

static const unsigned int node_lanes[] = { 1, 2, 4, 8, 16 };
static const unsigned int node_mpss[] = { 128, 256, 512, 1024, 2048, 4096 };
#define NODE_N_LANES 5
#define NODE_N_MPS 6

/*
 * ACK limits and FC update intervals in bytes, by width and MPS (the spec's recommended
 * values as pcie-model has them; the two tables hold the same numbers for x1..x16). Gen3 and
 * later share one table; pcie-model copies Gen5's for Gen6 ("guesses"), and so do we.
 */
static const uint16_t node_ack_gen1[NODE_N_LANES][NODE_N_MPS] = {
	{ 237, 416, 559, 1071, 2095, 4143 },
	{ 128, 217, 289, 545, 1057, 2081 },
	{ 73, 118, 154, 282, 538, 1050 },
	{ 67, 107, 86, 150, 278, 534 },
	{ 48, 72, 86, 150, 278, 534 },
};
static const uint16_t node_ack_gen2[NODE_N_LANES][NODE_N_MPS] = {
	{ 288, 467, 610, 1122, 2146, 4194 },
	{ 179, 268, 340, 596, 1108, 2132 },
	{ 124, 169, 205, 333, 589, 1101 },
	{ 118, 158, 137, 201, 329, 585 },
	{ 99, 123, 137, 201, 329, 585 },
};
static const uint16_t node_ack_gen3[NODE_N_LANES][NODE_N_MPS] = {
	{ 333, 512, 655, 1167, 2191, 4239 },
	{ 224, 313, 385, 641, 1153, 2177 },
	{ 169, 214, 250, 378, 634, 1146 },
	{ 163, 203, 182, 246, 374, 630 },
	{ 144, 168, 182, 246, 374, 630 },
};

#define NODE_DLLP_BYTES 8	/* an ACK or FC update DLLP with framing */
#define NODE_SKIP_BYTES 4	/* SKIP ordered set ... */
#define NODE_SKIP_EVERY 1538	/* ... every this many bytes */
#define NODE_MWR_OVERHEAD 24	/* framing + DLL 8, TLP header 4, MWr 64-bit address 12 */
#define NODE_CPLD_OVERHEAD 20	/* framing + DLL 8, TLP header 4, CplD 8 */

double
node_pcie_gts(unsigned int gen)
{
	static const double gts[] = { 0, 2.5, 5.0, 8.0, 16.0, 32.0, 64.0 };

	return gen >= 1 && gen <= 6 ? gts[gen] : 0;
}

double
node_pcie_encoding(unsigned int gen)
{
	if (gen == 1 || gen == 2)
		return 8.0 / 10.0;
	if (gen >= 3 && gen <= 5)
		return 128.0 / 130.0;
	if (gen == 6)
		return 242.0 / 256.0;
	return 0;
}

double
node_pcie_raw_GBps(unsigned int gen, unsigned int lanes)
{
	return node_pcie_gts(gen) * node_pcie_encoding(gen) * lanes / 8.0;
}

static int
node_index(const unsigned int *vals, unsigned int n, unsigned int v)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		if (vals[i] == v)
			return (int)i;
	return -1;
}

double
node_pcie_tlp_share(unsigned int gen, unsigned int lanes, unsigned int mps)
{
	int l = node_index(node_lanes, NODE_N_LANES, lanes);
	int m = node_index(node_mpss, NODE_N_MPS, mps);
	const uint16_t (*t)[NODE_N_MPS];
	double every;

	if (l < 0 || m < 0 || node_pcie_gts(gen) == 0)
		return 0;
	t = gen == 1 ? node_ack_gen1 : gen == 2 ? node_ack_gen2 : node_ack_gen3;
	every = t[l][m];
	/* one ACK and one FC update DLLP per interval (the same interval in both tables) */
	return 1.0 - 2.0 * NODE_DLLP_BYTES / every - (double)NODE_SKIP_BYTES / NODE_SKIP_EVERY;
}

double
node_pcie_write_eff(unsigned int mps)
{
	return (double)mps / (mps + NODE_MWR_OVERHEAD);
}

double
node_pcie_read_eff(unsigned int mps)
{
	return (double)mps / (mps + NODE_CPLD_OVERHEAD);
}

double
node_pcie_write_GBps(const struct node_pcie *p)
{
	return node_pcie_raw_GBps(p->gen, p->lanes) * node_pcie_tlp_share(p->gen, p->lanes, p->mps) *
	       node_pcie_write_eff(p->mps);
}

double
node_pcie_read_GBps(const struct node_pcie *p)
{
	return node_pcie_raw_GBps(p->gen, p->lanes) * node_pcie_tlp_share(p->gen, p->lanes, p->mps) *
	       node_pcie_read_eff(p->mps);
}

double
node_pcie_nccl_GBps(unsigned int gen, unsigned int lanes)
{
	/* kvDictPciGen: 2.5 GT -> 15, 5 -> 30, 8 -> 60, 16 -> 120, 32 -> 240, 64 -> 480 */
	static const double code[] = { 0, 15, 30, 60, 120, 240, 480 };

	if (gen < 1 || gen > 6)
		return 0;
	return (lanes == 0 ? 16 : lanes) * code[gen] / 80.0;
}

static double
node_min(double a, double b)
{
	return a < b ? a : b;
}

double
node_host_buf_GBps(const struct node_cfg *c)
{
	double dram = c->host_mem_GBps / (4.0 * (c->nics > 0 ? c->nics : 1));
	double gpu = node_min(node_pcie_write_GBps(&c->gpu_pcie), node_pcie_read_GBps(&c->gpu_pcie));

	return node_min(dram, gpu);
}

/* NVLink per link (SM80 20.0, SM90 20.6, SM100 40.1 GB/s) x links per GPU (12, 18, 18);
 * RCCL's gfx94x xGMI 48 GB/s x 7 links (MI300X). Link counts are vendor figures. */
double
node_fabric_nccl_GBps(const struct node_cfg *c)
{
	double pci = node_pcie_nccl_GBps(c->gpu_pcie.gen, c->gpu_pcie.lanes);

	switch (c->fabric) {
	case NODE_FABRIC_NVLINK3:
		return 12 * 20.0;
	case NODE_FABRIC_NVLINK4:
		return 18 * 20.6;
	case NODE_FABRIC_NVLINK5:
		return 18 * 40.1;
	case NODE_FABRIC_XGMI:
		return 7 * 48.0;
	case NODE_FABRIC_PCIE:
		return pci;
	case NODE_FABRIC_PCIE_ACS:
		/* through the root complex: NCCL charges Intel P2P bw x 6/5 ("64B PCI TLPs") */
		return pci * 5.0 / 6.0;
	default:
		return 0;
	}
}

double
node_fabric_nominal_GBps(enum node_fabric f)
{
	switch (f) {
	case NODE_FABRIC_NVLINK3:
		return 300;	/* 12 links x 25 GB/s */
	case NODE_FABRIC_NVLINK4:
		return 450;	/* 18 links x 25 GB/s */
	case NODE_FABRIC_NVLINK5:
		return 900;	/* 18 links x 50 GB/s */
	case NODE_FABRIC_XGMI:
		return 448;	/* 7 links x 64 GB/s */
	default:
		return 0;
	}
}

double
node_fabric_latency_ns(enum node_fabric f)
{
	/* hwLat[NVLINK or PCI][RING][SIMPLE]: 3.4 and 5.7 us; xGMI takes NVLink's row */
	return f == NODE_FABRIC_PCIE || f == NODE_FABRIC_PCIE_ACS ? 5700 : 3400;
}

void
node_model_eval(const struct node_cfg *c, struct node_eval *e)
{
	double pcie_gbps, cap;

	memset(e, 0, sizeof(*e));
	e->pcie_raw_GBps = node_pcie_raw_GBps(c->pcie.gen, c->pcie.lanes);
	e->pcie_tlp_GBps = e->pcie_raw_GBps * node_pcie_tlp_share(c->pcie.gen, c->pcie.lanes,
								   c->pcie.mps);
	e->pcie_write_GBps = node_pcie_write_GBps(&c->pcie);
	e->pcie_read_GBps = node_pcie_read_GBps(&c->pcie);
	e->pcie_nccl_GBps = node_pcie_nccl_GBps(c->pcie.gen, c->pcie.lanes);
	e->host_buf_GBps = c->gdr ? 0 : node_host_buf_GBps(c);
	cap = c->nic_gbps;
	e->host_cap_by = "line";
	pcie_gbps = 8 * node_min(e->pcie_write_GBps, e->pcie_read_GBps);
	if (pcie_gbps < cap) {
		cap = pcie_gbps;
		e->host_cap_by = "pcie";
	}
	if (!c->gdr && 8 * e->host_buf_GBps < cap) {
		cap = 8 * e->host_buf_GBps;
		e->host_cap_by = "host_buffer";
	}
	e->host_cap_gbps = cap;
	e->fabric_GBps = c->fabric_GBps > 0 ? c->fabric_GBps : node_fabric_nccl_GBps(c);
	e->fabric_nominal_GBps = node_fabric_nominal_GBps(c->fabric);
	e->fabric_latency_ns = c->fabric_latency_ns >= 0 ? c->fabric_latency_ns :
			       node_fabric_latency_ns(c->fabric);
}

uint64_t
node_intra_ns(const struct node_eval *e, uint64_t bytes)
{
	if (bytes == 0 || e->fabric_GBps <= 0)
		return 0;
	return (uint64_t)llround((double)bytes / e->fabric_GBps + e->fabric_latency_ns);
}

uint64_t
node_stage_ns(const struct node_cfg *c, uint64_t bytes)
{
	double bw;

	if (c->gdr || bytes == 0)
		return 0;
	bw = node_pcie_write_GBps(&c->gpu_pcie);
	return bw > 0 ? (uint64_t)llround((double)bytes / bw) : 0;
}

static const char *const node_fabric_names[NODE_FABRIC_MAX] = {
	"nvlink3", "nvlink4", "nvlink5", "xgmi", "pcie", "pcie-acs",
};
static const char *const node_gpu_names[NODE_GPU_MAX] = {
	"volta", "ampere", "hopper", "blackwell", "cdna3",
};
static const char *const node_cpu_names[NODE_CPU_MAX] = {
	"intel", "amd", "arm", "other",
};

static int
node_by_name(const char *const *names, int n, const char *s)
{
	int i;

	for (i = 0; s != NULL && i < n; i++)
		if (strcmp(names[i], s) == 0)
			return i;
	return -1;
}

const char *
node_fabric_name(enum node_fabric f)
{
	return f < NODE_FABRIC_MAX ? node_fabric_names[f] : "?";
}

const char *
node_gpu_name(enum node_gpu g)
{
	return g < NODE_GPU_MAX ? node_gpu_names[g] : "?";
}

const char *
node_cpu_name(enum node_cpu c)
{
	return c < NODE_CPU_MAX ? node_cpu_names[c] : "?";
}

int
node_fabric_by_name(const char *s)
{
	return node_by_name(node_fabric_names, NODE_FABRIC_MAX, s);
}

int
node_gpu_by_name(const char *s)
{
	return node_by_name(node_gpu_names, NODE_GPU_MAX, s);
}

int
node_cpu_by_name(const char *s)
{
	return node_by_name(node_cpu_names, NODE_CPU_MAX, s);
}

void
node_cfg_default(struct node_cfg *c)
{
	memset(c, 0, sizeof(*c));
	c->gpus = 8;
	c->gpu = NODE_GPU_HOPPER;
	c->cpu = NODE_CPU_INTEL;
	c->fabric = NODE_FABRIC_NVLINK4;
	c->fabric_GBps = 0;
	c->fabric_latency_ns = -1;
	c->nics = 8;
	c->nic_gbps = 400;
	c->pcie = (struct node_pcie){ .gen = 5, .lanes = 16, .mps = 256 };
	c->gpu_pcie = (struct node_pcie){ .gen = 5, .lanes = 16, .mps = 256 };
	c->gdr = true;
	/* two sockets x 8 channels of DDR5-4800 x 8 bytes: 614.4 GB/s (not in NODE.md) */
	c->host_mem_GBps = 614.4;
}
