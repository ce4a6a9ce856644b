/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lib/analysis: capture analysis for rocestat. One streaming pass over the packets of a
 * capture (ana_feed per packet, in capture order), memory per flow and per PFC port, never
 * per packet; ana_finish pairs the two directions of each QP and runs the DCQCN validation.
 * Pure C over bytes (no EAL, no clock, no I/O except the output functions in ana_out.c,
 * ana_text.c, ana_json.c and ana_bw_out.c, which format into a caller's FILE).
 *
 * A *flow* is one direction of one QP: (source IP, destination IP, BTH DestQP). Data packets
 * A->B carry Qb; ACKs, NAKs and CNPs B->A carry Qa, so the flow (B->A, Qa) holds the
 * responses to, and the CNPs for, the data flow (A->B, Qb). lib/proto's QP pairing table
 * (roce_qpmap) finds the sender QPN of each packet, which names the flow of the other
 * direction.
 */
#ifndef ROCE_ANA_H
#define ROCE_ANA_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "lib/dcqcn/dcqcn.h"

#ifdef __cplusplus
extern "C" {
#endif

struct ana;
struct json_t;

/** Options; ana_opts_default fills the defaults. */
struct ana_opts {
	double link_gbps;               /**< --link-gbps: PFC quanta and the DCQCN line rate */
	uint64_t np_min_time_between_cnps_ns; /**< the CNP spacing to check */
	/** where it came from: "flag" (--np-min-time-between-cnps), "dcqcn" (the --dcqcn
	 *  file's min_time_between_cnps) or "default" (4 us) */
	char np_min_source[16];
	uint64_t timeout_ns;            /**< silence before a resend without NAK = timeout */
	uint64_t bin_ns;                /**< rate time-series bin (doubles when too many) */
	uint64_t window_ns;             /**< sliding window for the measured rate */
	uint64_t pfc_storm_ns;          /**< continuous pause longer than this = storm */
	uint64_t idle_gap_ns;           /**< collectives: idle time that ends an iteration */
	struct dcqcn_params dcqcn;      /**< --dcqcn: the parameters to validate against */
	char dcqcn_name[64];
	bool fit;                       /**< fit the DCQCN parameters */
	double tol_cut;                 /**< verdict: |measured - predicted| cut, relative */
	double tol_traj;                /**< verdict: trajectory error (bytes), relative */
	char collective[32];            /**< --collective (empty: none) */
	unsigned int ranks;             /**< --ranks */
	unsigned int expect_qps;        /**< --expect-qps: QPs expected per IP pair (0: any) */
	uint32_t qp_pairs_max;          /**< QP pairing table entries (default 65536) */
	uint32_t series_max_bins;       /**< bins of a time series before it coarsens (default
					 *   and maximum 2^18) */
};

void ana_opts_default(struct ana_opts *o);

/**
 * Load DCQCN parameters from a file: JSON object or `name value` lines, in NVIDIA's names
 * (sysfs roce_rp/roce_np names, or debugfs rp_/np_ names: rpg_time_reset or rp_time_reset,
 * ...). Units as NVIDIA's: us for times, Mb/s for rates, bytes, percent, /1024 for g and
 * alpha. Names not given keep the values in @p p. Returns 0 or -errno with a message in err.
 */
int ana_dcqcn_load(struct dcqcn_params *p, const char *path, char *err, size_t err_len);

/** New analysis; NULL and a message on failure. @p o is copied. */
struct ana *ana_create(const struct ana_opts *o, char *err, size_t err_len);

void ana_free(struct ana *a);

/**
 * One captured frame: its first @p caplen bytes, its original length, its time in ns, the
 * capture interface, and the text of its pcapng comments (NULL if none; "rocemu:" ones
 * are parsed). Frames must come in capture order; a time going backwards is counted.
 */
void ana_feed(struct ana *a, const uint8_t *frame, uint32_t caplen, uint32_t orig_len,
	      uint64_t t_ns, uint32_t ifindex, const char *comment);

/** Pair flows, close open intervals, run the DCQCN validation and the fits. */
void ana_finish(struct ana *a);

/** Text report (ethtool -S / nccl-tests style tables). Returns 0 or -EIO. */
int ana_write_text(struct ana *a, FILE *f);

/** The JSON report (docs/rocestat.md documents every field); NULL on allocation failure. */
struct json_t *ana_json(struct ana *a);

/** The CSV time series files, by name ("rate.csv", ...; docs/rocestat.md), NULL-terminated. */
extern const char *const ana_csv_files[];

/**
 * CSV file @p name (one of ana_csv_files) into @p f; the caller opens and places the file.
 * Returns 0, -EIO when @p f has an error, -EINVAL for an unknown name.
 */
int ana_write_csv_file(struct ana *a, const char *name, FILE *f);

/** What the capture held, for a caller's summary and its "nothing to analyse" refusal. */
struct ana_totals {
	uint64_t frames;    /**< every frame read */
	uint64_t roce;      /**< RoCE v1/v2 frames (RC, UC and UD) */
	uint64_t pfc;       /**< PFC and 802.3x PAUSE frames */
	uint64_t malformed; /**< frames that looked like RoCE but did not parse */
	uint64_t other;     /**< everything else (ARP, plain UDP, TCP, ...) */
};

void ana_totals(const struct ana *a, struct ana_totals *t);

/** Overall verdict: number of FAILed checks (retransmission, CNP, DCQCN). */
unsigned int ana_failures(const struct ana *a);

/** An nccl-tests or rocegen output file, for busbw next to the wire's. 0 or -errno. */
int ana_app_log(struct ana *a, const char *path, char *err, size_t err_len);

/**
 * An NCCL_DEBUG=INFO log (--nccl-log): which rank each address is and which NIC (rail) each
 * rank pair uses, for the "where the bandwidth went" report. 0 or -errno with a message.
 */
int ana_nccl_log(struct ana *a, const char *path, char *err, size_t err_len);

/**
 * A rocegen --json report (--rocegen-json): every process's first address (`hosts`), ranks per
 * process and rails, so that each address is a rank and each rank pair a rail (the sender's
 * local rank mod rails). 0 or -errno with a message that names the JSON path.
 */
int ana_rocegen_json(struct ana *a, const char *path, char *err, size_t err_len);

/** Whether --collective @p name is known (allreduce, allgather, ...). */
bool ana_collective_known(const char *name);

/** The Linux/mlx5 UDP source port for a QP pair (rdma_flow_label_to_udp_sport). */
uint16_t ana_linux_udp_sport(uint32_t lqpn, uint32_t rqpn);

#ifdef __cplusplus
}
#endif

#endif
