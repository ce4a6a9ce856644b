/* SPDX-License-Identifier: BSD-3-Clause */
/* NCCL's all-reduce tuning, as node_tune.h says; constants from NODE.md 2 (graph/tuning.cc). */
#include <math.h>
#include <stddef.h>

#include "lib/node/node_tune.h"

/* baseLat [algo][proto] (us): Tree 6.8/14.0/8.4, Ring 6.6/14.0/8.4 */
static const double node_base_lat[NODE_N_ALGOS][NODE_N_PROTOS] = {
	{ 6.8, 14.0, 8.4 }, { 6.6, 14.0, 8.4 },
};
/* hwLat [link: NVLINK, PCI, NET][algo][proto] (us) */
static const double node_hw_lat[3][NODE_N_ALGOS][NODE_N_PROTOS] = {
	{ { 0.6, 1.25, 4.0 }, { 0.6, 1.9, 3.4 } },
	{ { 1.0, 1.9, 4.0 }, { 1.0, 2.5, 5.7 } },
	{ { 5.0, 8.5, 14.0 }, { 2.7, 4.0, 14.0 } },
};
enum { NODE_HW_NVLINK, NODE_HW_PCI, NODE_HW_NET };

/* GB/s by GPU generation (Volta, Ampere, Hopper, Blackwell; CDNA3 takes Hopper's) and column
 * N1/N2/N4 (1, 2, >= 3 nodes) */
static const double node_ring_ll128[4][3] = {
	{ 20, 20, 20 }, { 20, 20, 20 }, { 36.7, 36.7, 36.7 }, { 40, 40, 40 },
};
static const double node_tree_ll128[4][3] = {
	{ 20, 20, 20 }, { 20, 20, 20 }, { 36.7, 36.7, 29.0 }, { 55.6, 31.67, 20.0 },
};
static const double node_tree[4][3] = {
	{ 26.5, 18.5, 10.0 }, { 24.0, 23.6, 17.8 }, { 38.7, 41.4, 36.0 }, { 70.0, 42.8, 24.0 },
};
/* llMaxBw: one node by GPU; several by CPU (Intel row, AMD row), N2 and N4 */
static const double node_ll_max_1[4] = { 39.0, 87.7, 141.0, 282.0 };
static const double node_ll_max_intel[2] = { 39.0, 20.4 };
static const double node_ll_max_amd[2] = { 22.5, 19.0 };

static unsigned int
node_gen(const struct node_tune_in *in)
{
	switch (in->node->gpu) {
	case NODE_GPU_VOLTA:
		return 0;
	case NODE_GPU_AMPERE:
		return 1;
	case NODE_GPU_BLACKWELL:
		return 3;
	default:
		return 2;	/* Hopper, and CDNA3 (no NCCL row) */
	}
}

static unsigned int
node_intra_hw(const struct node_tune_in *in)
{
	return in->node->fabric == NODE_FABRIC_PCIE || in->node->fabric == NODE_FABRIC_PCIE_ACS ?
	       NODE_HW_PCI : NODE_HW_NVLINK;	/* xGMI takes NVLink's row */
}

static unsigned int
node_log2i(unsigned int n)
{
	unsigned int l = 0;

	while (n >>= 1)
		l++;
	return l;
}

unsigned int
node_tune_channels(const struct node_tune_in *in)
{
	unsigned int c = 2 * in->node->nics;

	return c < 2 ? 2 : c;
}

double
node_tune_lat_us(enum node_algo a, enum node_proto p, const struct node_tune_in *in,
		 uint64_t bytes)
{
	unsigned int nodes = in->nodes, ranks = in->nodes * in->ppn;
	double intra = node_hw_lat[node_intra_hw(in)][a][p];
	double inter = node_hw_lat[NODE_HW_NET][in->ppn == 1 ? NODE_ALGO_TREE : a][p];
	double overhead = in->node->cpu == NODE_CPU_AMD ? 2.0 : 1.0, lat;

	if (p == NODE_PROTO_SIMPLE)
		overhead *= 3;
	if (nodes == 1)
		inter = 0;
	if (a == NODE_ALGO_TREE)
		return node_base_lat[a][p] +
		       2 * ((in->ppn - 1) * intra + node_log2i(nodes) * inter);
	{
		unsigned int nsteps = 2 * (ranks - 1), ninter = 2 * (nodes - 1);

		lat = node_base_lat[a][p] + (nsteps - ninter) * fmax(intra, overhead) +
		      ninter * inter;
		/* Ring Simple all-reduce over several nodes: x1.4 on compute capability >= 8.0
		 * (x1.9 before) once each channel and rank has >= 64 bytes */
		if (p == NODE_PROTO_SIMPLE && nodes > 1 &&
		    bytes / ((uint64_t)node_tune_channels(in) * ranks) >= 64)
			lat *= in->node->gpu == NODE_GPU_VOLTA ? 1.9 : 1.4;
	}
	return lat;
}

double
node_tune_bw_GBps(enum node_algo a, enum node_proto p, const struct node_tune_in *in)
{
	unsigned int nodes = in->nodes, ranks = in->nodes * in->ppn, g = node_gen(in);
	unsigned int col = nodes <= 2 ? nodes - 1 : 2, nch = node_tune_channels(in);
	double nic = in->eval->host_cap_gbps / 8, bus, ll_max, bw;

	/* the simplified graph: inside a node the fabric, across nodes the NICs' host caps */
	bus = nodes == 1 ? in->eval->fabric_GBps : fmin(nic * in->node->nics,
							   in->eval->fabric_GBps);
	if (nodes == 1)
		ll_max = node_ll_max_1[g];
	else
		ll_max = (in->node->cpu == NODE_CPU_INTEL ? node_ll_max_intel :
			  node_ll_max_amd)[nodes <= 2 ? 0 : 1];
	/* LL128 on compute capability >= 9.0 needs NVLink inside (typeIntra <= NVB) and GDR
	 * (typeInter <= PXN); before 9.0 a PCIe-switch path to the NIC (GDR) */
	if (p == NODE_PROTO_LL128 && (!in->node->gdr || node_intra_hw(in) == NODE_HW_PCI))
		return 0;
	if (a == NODE_ALGO_RING) {
		if (p == NODE_PROTO_LL)
			bw = fmin(ll_max, bus * 0.5);
		else if (p == NODE_PROTO_LL128)
			bw = fmin(bus * 0.92, nch * node_ring_ll128[g][col]);
		else
			bw = bus;
		return bw * ranks / (2.0 * (ranks - 1));
	}
	if (nodes == 1 && ranks <= 2)
		return 0;
	if (p == NODE_PROTO_LL)
		bw = fmin(bus / 3.8, ll_max);
	else if (p == NODE_PROTO_LL128)
		bw = fmin(bus * 120 / 128, nch * node_tree_ll128[g][col]);
	else
		bw = fmin(bus * 0.92, nch * node_tree[g][col]);
	return bw * 0.5;
}

int
node_tune_pick(const struct node_tune_in *in, uint64_t bytes, enum node_algo *a,
	       enum node_proto *p, double times[NODE_N_ALGOS][NODE_N_PROTOS])
{
	double best = -1, t, bw;
	unsigned int i, j;

	*a = NODE_ALGO_RING;
	*p = NODE_PROTO_SIMPLE;
	for (i = 0; i < NODE_N_ALGOS; i++)
		for (j = 0; j < NODE_N_PROTOS; j++) {
			bw = node_tune_bw_GBps((enum node_algo)i, (enum node_proto)j, in);
			t = bw > 0 ? node_tune_lat_us((enum node_algo)i, (enum node_proto)j, in,
						      bytes) + (double)bytes / (1000 * bw) : -1;
			if (times != NULL)
				times[i][j] = t;
			if (t >= 0 && (best < 0 || t < best)) {
				best = t;
				*a = (enum node_algo)i;
				*p = (enum node_proto)j;
			}
		}
	return 0;
}

const char *
node_algo_name(enum node_algo a)
{
	return a == NODE_ALGO_TREE ? "tree" : "ring";
}

const char *
node_proto_name(enum node_proto p)
{
	return p == NODE_PROTO_LL ? "ll" : p == NODE_PROTO_LL128 ? "ll128" : "simple";
}
