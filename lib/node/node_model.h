/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef NODE_MODEL_H
#define NODE_MODEL_H

/**
 * @file
 * The GPU server around a NIC, as rocegen models it (docs/node.md; the figures and their
 * sources are in the project's NODE.md): how fast the NIC's PCIe slot carries data, how fast
 * the host-memory bounce buffer does when GPUDirect RDMA is off, and how long the intra-node
 * phase of a collective takes on NVLink, xGMI or PCIe. Pure arithmetic (no EAL, no JSON):
 * node_load.c fills struct node_cfg from a node file; tests/unit/test_node.c holds these
 * functions to NODE.md's numbers.
 *
 * Units are in the names: _GBps is 10^9 bytes/s (as NCCL and nccl-tests print), _gbps is
 * 10^9 bits/s (a line rate), _ns nanoseconds.
 */

#include <stdbool.h>
#include <stdint.h>

enum node_fabric {
	NODE_FABRIC_NVLINK3,	/**< A100-class: NVLink 3 through NVSwitch */
	NODE_FABRIC_NVLINK4,	/**< H100-class: NVLink 4 through NVSwitch */
	NODE_FABRIC_NVLINK5,	/**< B200-class: NVLink 5 through NVSwitch */
	NODE_FABRIC_XGMI,	/**< MI300X-class: xGMI full mesh */
	NODE_FABRIC_PCIE,	/**< P2P through a PCIe switch */
	NODE_FABRIC_PCIE_ACS,	/**< P2P redirected through the CPU root complex (ACS on) */
	NODE_FABRIC_MAX
};

enum node_gpu {
	NODE_GPU_VOLTA,
	NODE_GPU_AMPERE,
	NODE_GPU_HOPPER,
	NODE_GPU_BLACKWELL,
	NODE_GPU_CDNA3,		/**< AMD MI300X (RCCL); tuned as Hopper where NCCL has no row */
	NODE_GPU_MAX
};

enum node_cpu {
	NODE_CPU_INTEL,
	NODE_CPU_AMD,
	NODE_CPU_ARM,
	NODE_CPU_OTHER,
	NODE_CPU_MAX
};

/** One PCIe link. */
struct node_pcie {
	unsigned int gen;	/**< 1..6 */
	unsigned int lanes;	/**< 1, 2, 4, 8 or 16 */
	unsigned int mps;	/**< max payload size: 128, 256, 512, 1024, 2048 or 4096 */
};

/** A node as its file describes it (node_load.c gives every key its default). */
struct node_cfg {
	unsigned int gpus;		/**< GPUs per node: rocegen's ranks per process */
	enum node_gpu gpu;
	enum node_cpu cpu;
	enum node_fabric fabric;
	double fabric_GBps;		/**< per GPU per direction; 0: the model's figure */
	double fabric_latency_ns;	/**< per intra-node step; < 0: the model's figure */
	unsigned int nics;		/**< NICs per node, one per rail */
	double nic_gbps;		/**< each NIC's line rate */
	struct node_pcie pcie;		/**< each NIC's slot */
	struct node_pcie gpu_pcie;	/**< each GPU's slot (the GDR-off path crosses it) */
	bool gdr;			/**< GPUDirect RDMA: the NIC reads and writes GPU memory */
	double host_mem_GBps;		/**< host DRAM bandwidth of the node, both directions */
};

/** What the model computes from a node_cfg (node_model_eval). */
struct node_eval {
	double pcie_raw_GBps;		/**< NIC slot, after line encoding */
	double pcie_tlp_GBps;		/**< ... after ACK, FC update and SKIP overheads */
	double pcie_write_GBps;		/**< ... DMA writes of MPS-sized TLPs (wire -> memory) */
	double pcie_read_GBps;		/**< ... read completions (memory -> wire) */
	double pcie_nccl_GBps;		/**< NCCL's own figure for the slot (width x speed / 80) */
	double host_buf_GBps;		/**< per NIC, GDR off: the host-buffer path; 0 with GDR */
	double host_cap_gbps;		/**< per NIC: min(line, PCIe, host buffer), Gb/s */
	const char *host_cap_by;	/**< "line", "pcie" or "host_buffer" */
	double fabric_GBps;		/**< intra-node, per GPU per direction (model or override) */
	double fabric_nominal_GBps;	/**< the vendor's nominal figure (0 if none) */
	double fabric_latency_ns;
};

/** Transfers per second per lane (GT/s) of PCIe generation @p gen, 0 if unknown. */
double node_pcie_gts(unsigned int gen);

/** The line encoding's efficiency: 8b/10b (Gen1-2), 128b/130b (Gen3-5), 242/256 (Gen6). */
double node_pcie_encoding(unsigned int gen);

/** Raw bandwidth of a link after encoding, GB/s. */
double node_pcie_raw_GBps(unsigned int gen, unsigned int lanes);

/**
 * The share of the raw bandwidth left to TLPs: 1 - ACK - FC update - SKIP, with the ACK and
 * FC update DLLPs (8 B each) every Ack_Limit / FC_Guide bytes of the PCIe spec's tables for
 * this generation, width and MPS, and a 4-byte SKIP every 1538 (pcie-model's TLP_bw).
 * 0 for an unknown combination.
 */
double node_pcie_tlp_share(unsigned int gen, unsigned int lanes, unsigned int mps);

/** Per-TLP efficiency of a DMA write (MWr, 64-bit address, no ECRC): MPS / (MPS + 24). */
double node_pcie_write_eff(unsigned int mps);

/** Per-TLP efficiency of a read completion (CplD, no ECRC): MPS / (MPS + 20). */
double node_pcie_read_eff(unsigned int mps);

/** Goodput of DMA writes on a link: raw x TLP share x write efficiency, GB/s. */
double node_pcie_write_GBps(const struct node_pcie *p);

/** Goodput of read completions on a link, GB/s. */
double node_pcie_read_GBps(const struct node_pcie *p);

/** NCCL's figure for a PCIe link (topo.cc): width x speed code / 80, GB/s. */
double node_pcie_nccl_GBps(unsigned int gen, unsigned int lanes);

/**
 * The host-buffer path per NIC with GDR off (NODE.md 4: each byte crosses host DRAM twice
 * on its way out, GPU write and NIC read, and twice on its way in): a collective that sends
 * and receives at once at rate B per NIC costs 4 x B x nics of DRAM bandwidth, so
 * B = host_mem_GBps / (4 x nics); also bounded by the GPU's PCIe slot (crossed once each
 * way). GB/s.
 */
double node_host_buf_GBps(const struct node_cfg *c);

/** NCCL's intra-node figure per GPU per direction (links x per-link bandwidth), GB/s. */
double node_fabric_nccl_GBps(const struct node_cfg *c);

/** The vendor's nominal figure per GPU per direction, GB/s (0 when there is none). */
double node_fabric_nominal_GBps(enum node_fabric f);

/** NCCL's hardware latency of one ring step on the fabric (Simple protocol), ns. */
double node_fabric_latency_ns(enum node_fabric f);

/** Everything above for @p c. */
void node_model_eval(const struct node_cfg *c, struct node_eval *e);

/**
 * The model's time for one intra-node step in which one GPU sends @p bytes to its
 * neighbours over the fabric: bytes / fabric bandwidth + the fabric's latency, ns
 * (0 for 0 bytes).
 */
uint64_t node_intra_ns(const struct node_eval *e, uint64_t bytes);

/**
 * GDR off: the time a message of @p bytes waits before the NIC may read it, the GPU writing
 * it into the pinned host buffer across its PCIe slot (store and forward per step), ns;
 * 0 with GDR on.
 */
uint64_t node_stage_ns(const struct node_cfg *c, uint64_t bytes);

/** Names as the node file spells them ("nvlink4", "hopper", "intel"), and back (-1). */
const char *node_fabric_name(enum node_fabric f);
const char *node_gpu_name(enum node_gpu g);
const char *node_cpu_name(enum node_cpu c);
int node_fabric_by_name(const char *s);
int node_gpu_by_name(const char *s);
int node_cpu_by_name(const char *s);

/** The defaults of a node file without keys (an H100-like node with one 100G NIC). */
void node_cfg_default(struct node_cfg *c);

#endif
