/* SPDX-License-Identifier: BSD-3-Clause */
/* lib/analysis internals shared by its files; not for apps. */
#ifndef ROCE_ANA_INTERNAL_H
#define ROCE_ANA_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "ana.h"

struct roce_qpmap;

/* A time series in fixed bins; the bin width doubles (pairs merged) when it would pass cap. */
struct ana_series {
	uint64_t t0_ns;
	uint64_t bin_ns;
	uint32_t n;
	uint32_t cap;
	uint32_t max_bins; /* coarsen beyond this many bins (ana_opts.series_max_bins) */
	double *v;
	bool started;
	bool max_mode; /* bins keep the maximum (queue depth) instead of the sum (bytes) */
	/* the bin the last sample fell in, [c_lo, c_hi) (c_hi 0: none): packets come in time
	 * order, mostly into the bin of the one before, and a 64-bit division per sample was the
	 * largest single cost of rocestat's pass (4 series per data packet) */
	uint64_t c_lo, c_hi, c_idx;
};

#define ANA_SERIES_CAP (1u << 18)
#define ANA_MSG_GAPS_CAP (1u << 16)
#define ANA_STALL_IV_CAP 4096

/* Events kept per flow for the report and the markers of the plots (bounded). */
enum ana_ev_type {
	ANA_EV_GAP,          /* PSNs psn..psn2 missing at the capture point */
	ANA_EV_NAK,          /* NAK (sequence error) for psn */
	ANA_EV_DOUBLE_NAK,   /* a second NAK for psn while the first is outstanding */
	ANA_EV_RETX,         /* a go-back-N round starting at psn after a NAK; val = latency ns */
	ANA_EV_RESTART_BAD,  /* a round after a NAK for psn2 starting at psn */
	ANA_EV_LOST_RETX,    /* the resend of psn..psn2 missing in a round */
	ANA_EV_TIMEOUT,      /* a resend from psn without NAK after val ns of silence */
	ANA_EV_DUP,          /* a resend from psn without NAK and without a timeout's silence */
	ANA_EV_OOO,          /* psn arrived late, val = reorder degree (PSNs) */
	ANA_EV_ACK_BACK,     /* an ACK PSN going back from psn2 to psn */
	ANA_EV_CNP_FAST,     /* a CNP val ns after the previous one (< min_time_between_cnps) */
	ANA_EV_MAX
};

struct ana_event {
	uint8_t type;
	uint64_t pkt;        /* packet number in the capture, from 1 */
	uint64_t pkt2;       /* the other deciding packet (0: none) */
	uint64_t t_ns;
	uint32_t psn;
	uint32_t psn2;
	int64_t val;
};

#define ANA_EVENTS_CAP 512

/* Per-flow counters, one X-macro list for the enum, the text report and the JSON. */
#define ANA_FOREACH_FLOW_CTR(_) \
	_(PKTS, "packets") \
	_(BYTES, "bytes") \
	_(DATA_PKTS, "data_packets") \
	_(PAYLOAD_BYTES, "payload_bytes") \
	_(GOODPUT_BYTES, "goodput_bytes") \
	_(MESSAGES, "messages") \
	_(ACKS, "acks") \
	_(ACKED_PSNS, "acked_psns") \
	_(NAKS_SEQ, "naks_seq_err") \
	_(NAKS_RNR, "naks_rnr") \
	_(NAKS_OTHER, "naks_other") \
	_(CNPS, "cnps") \
	_(READ_REQS, "read_requests") \
	_(NOT_ECT, "not_ect") \
	_(ECT1, "ect1") \
	_(ECT0, "ect0") \
	_(CE, "ce") \
	_(ICRC_BAD, "icrc_bad") \
	_(HEADER_ONLY, "header_only") \
	_(PSN_WRAPS, "psn_wraps") \
	_(GAPS, "gaps") \
	_(GAP_PSNS, "gap_psns") \
	_(RETX_ROUNDS, "retx_rounds") \
	_(RETX_PKTS, "retx_packets") \
	_(LOST_RETX_PSNS, "lost_retx_psns") \
	_(TIMEOUTS, "timeouts") \
	_(DUP_RUNS, "duplicates") \
	_(OOO_PKTS, "out_of_order") \
	_(DOUBLE_NAKS, "double_naks") \
	_(RESTART_BAD, "restart_not_at_nak") \
	_(ACK_BACK, "ack_psn_back") \
	_(CNPS_FAST, "cnps_under_min_time") \
	_(CNPS_NO_BECN, "cnps_without_becn") \
	_(CNPS_WITH_NAK, "cnps_with_nak") \
	_(DROPS_ANNOTATED, "drops_annotated")

#define ANA_CTR_ENUM_(n, s) ANA_C_##n,
enum ana_ctr {
	ANA_FOREACH_FLOW_CTR(ANA_CTR_ENUM_)
	ANA_C_MAX
};
#undef ANA_CTR_ENUM_

struct ana_flow {
	uint8_t src_ip[16];
	uint8_t dst_ip[16];
	uint8_t ip_version;
	uint32_t dqp;
	uint32_t sqp;             /* the sender's QPN, from the pairing table */
	bool sqp_known;
	int32_t peer;             /* the flow of the other direction, -1 if none */
	int32_t conn;             /* index of the connection (report row), -1 before pairing */
	uint16_t sport;           /* of its data and ACKs (the first CNP's if it has only CNPs) */
	uint16_t last_sport;
	uint16_t cnp_sport;
	bool have_sport, have_cnp_sport;
	bool sport_varies;
	uint64_t qpmap_epoch;     /* the table's learn count at the last failed lookup */
	uint32_t psn_rule_tries;  /* ACKs tried against the PSN rule while unpaired */
	uint64_t bulk_pkts;       /* data packets with more than 64 payload bytes, each PSN once */
	uint8_t src_mac[6];
	/* the PFC priority of its data (the first data packet's VLAN PCP, else DSCP >> 3: the
	 * NICs' default DSCP map, and rocemu's for DSCP 26 and 48): the pauses that hold its
	 * sender back (ana_dcqcn.c) */
	uint8_t data_prio;
	bool have_data_prio;
	uint8_t transport;        /* of the first RC/UC/UD packet */
	bool rocev1;              /* GRH + BTH: no UDP header */
	uint64_t c[ANA_C_MAX];
	uint64_t ops[256];
	uint64_t first_pkt;
	uint64_t t_first_ns, t_last_ns;
	uint64_t t_first_data_ns, t_last_data_ns;
	/* PSNs of data packets */
	bool have_psn;
	uint32_t psn_first, psn_max;
	uint64_t *seen;           /* bitmap of the last 2^16 PSNs (data flows only) */
	bool round_active;
	uint32_t round_next, round_end;
	bool nak_pending;         /* a NAK for nak_psn came, no round since */
	uint32_t nak_psn;
	uint64_t nak_t_ns, nak_pkt;
	uint64_t retx_lat_sum_ns, retx_lat_max_ns, retx_lat_min_ns, retx_lat_n;
	bool gap_open;            /* the last gap seen, not yet NAKed */
	uint32_t gap_psn;
	uint64_t gap_t_ns;
	uint64_t nak_gen_sum_ns, nak_gen_max_ns, nak_gen_n;
	int64_t reorder_max;
	/* ACKs (this flow carries responses) */
	bool have_ack;
	uint32_t last_ack_psn;
	uint64_t last_ack_pkt;
	/* CE on this flow's data; CNPs answering it travel on the peer */
	uint64_t ce_first_open_ns;  /* first CE not yet answered by a CNP (0: none) */
	uint64_t cnp_lat_sum_ns, cnp_lat_max_ns, cnp_lat_n, cnp_lat_first_ns;
	/* CNPs this flow carries (to the sender QPN = dqp) */
	uint64_t *cnp_t;
	uint32_t n_cnp, cap_cnp;
	int32_t bw_pair;          /* its IP pair in ana.bw, -1 before its first data packet */
	uint64_t cnp_min_gap_ns;
	uint64_t last_nak_ns;     /* last NAK this flow carried (0: none) */
	uint8_t cnp_dscp, cnp_pcp, cnp_ecn;
	bool cnp_fields_vary;
	/* measured wire bytes of data per bin */
	struct ana_series rate;
	struct ana_series ce_series;
	/* pacing: per bin the sum and count of the rate each inter-packet gap implies
	 * (previous frame's wire bytes over the gap), for the DCQCN fit */
	struct ana_series gap_sum;
	struct ana_series gap_n;
	uint64_t t_prev_tx_ns;
	uint64_t prev_gap_ns;      /* the gap before the flow's last data packet */
	uint32_t prev_wire;
	/* once the capture has CNPs, gaps between two data packets longer than 1/64 of --window
	 * and than two frame times at the link's rate after a message's last one (the sender
	 * may have had nothing to send: the DCQCN validation leaves out the windows such idle
	 * time falls in), four inside a message (a stall: reported, ana_dcqcn.c) */
	struct ana_msg_gap {
		uint64_t from_ns, to_ns; /* the packet before the gap, the next data packet */
		uint64_t spacing_ns;     /* the sender's own: the gap before that packet (0: none) */
		uint32_t wire;           /* the packet before's wire bytes */
		bool in_msg;             /* inside a message */
	} *msg_gaps;
	uint32_t n_msg_gaps, cap_msg_gaps;
	uint64_t msg_gaps_dropped; /* not kept: over ANA_MSG_GAPS_CAP */
	bool prev_ended_msg;
	struct ana_event *ev;
	uint32_t n_ev;
	uint64_t ev_dropped;
};

/* A connection: the two directions of one QP pair (b may be -1: one direction seen). */
struct ana_conn {
	int32_t a, b;
	bool sport_linux;         /* the source port(s) match the Linux/mlx5 formula */
	bool sport_checked;
	uint16_t sport_expected;
	const char *sport_rule;   /* linux, symmetric_other, per_direction, varies, other */
};

#define ANA_PRIOS 9 /* 0..7 PFC priorities, 8 = 802.3x PAUSE (all traffic) */

struct ana_interval {
	uint64_t start_ns, end_ns;
};

struct ana_pfc_prio {
	bool paused;
	uint64_t start_ns, until_ns;
	uint64_t frames, xoff, xon;
	uint64_t paused_ns;
	uint64_t longest_ns;
	uint64_t storms;
	struct ana_interval *iv;
	uint32_t n_iv, cap_iv;
	uint64_t iv_dropped;
};

struct ana_pfc_port {
	uint8_t mac[6];
	uint32_t ifindex;
	struct ana_pfc_prio prio[ANA_PRIOS];
};

/* Per-CNP result of the DCQCN validation. */
struct ana_cut {
	uint64_t t_ns;
	double before_mbps;
	double meas_after_mbps;
	double pred_after_mbps;
	bool ok;
};

#define ANA_EXPLAIN_MAX 8

struct ana_dcqcn_res {
	int32_t flow;             /* the data flow (sender) */
	uint32_t n_cnp;
	double err_traj;          /* relative RMS error of bytes per window, predicted vs measured */
	double err_traj_line;     /* the same for a sender that ignores CNPs (line rate) */
	struct ana_cut *cuts;
	uint32_t n_cuts;
	uint32_t cuts_ok;
	double recovery_meas_ns;  /* last CNP to 95% of line rate */
	double recovery_pred_ns;
	uint64_t pred_fast, pred_additive, pred_hyper;
	bool pass;
	char why[256];
	bool fitted;
	bool fit_on_gaps;         /* fitted on inter-packet gaps (else bytes per window) */
	struct dcqcn_params fit;
	double fit_err;
	char fit_differs[160];    /* names of parameters that differ from --dcqcn by > 5% */
	/* on a FAIL with --fit: the parameters that, changed alone, explain the trace */
	char explained[160];
	struct ana_explained {
		const char *name;
		double value;     /* its best value, in NVIDIA's units */
		double error;     /* the trajectory error with it */
	} expl[ANA_EXPLAIN_MAX];
	uint32_t n_explained;
	/* idle time: windows left out because the sender had no message to send (a gap after a
	 * message's last packet longer than one pacing gap at the model's rate and than 1/64
	 * of a window), and the cuts whose windows hold such time */
	uint32_t windows;         /* windows compared, idle ones included */
	uint32_t windows_idle;
	uint32_t cuts_idle;
	uint32_t idle_gaps;       /* the gaps found idle */
	double idle_ns;           /* their idle time in all */
	uint64_t idle_unknown;    /* message gaps not kept (over ANA_MSG_GAPS_CAP) */
	/* PFC pauses of the sender: the paused intervals of its data's priority and 802.3x
	 * PAUSE, from any port but the sender's own MAC, longer than 1/64 of a window; their
	 * windows are left out as idle ones are (and counted in windows_idle too), a gap inside
	 * a message during one is not a stall */
	uint32_t pauses;          /* the intervals that overlap the trace */
	double paused_ns;         /* their time within it */
	uint32_t windows_paused;
	uint32_t gaps_paused;     /* gaps inside a message during a pause (not stalls) */
	/* stalls: gaps inside a message beyond four pacing gaps at the model's rate and 1/64 of a
	 * window (the window, the host; not a PFC pause): counted against the sender, and
	 * reported */
	uint32_t stalls;
	double stall_ns, stall_max_ns;
	struct ana_interval *stall_iv; /* each stall's gap, the first ANA_STALL_IV_CAP */
	uint32_t n_stall_iv, cap_stall_iv;
	/* predicted rate per bin of the flow's series (for CSV/plots) */
	double *pred;
	uint32_t n_pred;
};

/* Where the bandwidth went (ana_bw.c): the time of one IP pair's data, split. */
#define ANA_FOREACH_BW_PART(_) \
	_(LINE, "line_rate") \
	_(RETX, "retransmitting") \
	_(PAUSED, "pfc_paused") \
	_(DCQCN, "dcqcn_limited") \
	_(HOST, "host_limited") \
	_(IDLE, "idle")

#define ANA_BW_ENUM_(n, s) ANA_BW_##n,
enum ana_bw_part {
	ANA_FOREACH_BW_PART(ANA_BW_ENUM_)
	ANA_BW_PARTS
};
#undef ANA_BW_ENUM_

#define ANA_BW_FINDINGS_MAX 6

struct ana_bw_finding {
	const char *kind;         /* host_cap, pfc, dcqcn, retransmission, idle, qps */
	const char *layer;        /* the likely layer, for the reader */
	char text[256];           /* the one-line diagnosis */
};

struct ana_bw_pair {
	uint8_t src_ip[16], dst_ip[16];
	uint8_t ip_version;
	uint8_t src_mac[6];
	uint8_t prio;             /* the first data packet's (as ana_flow.data_prio) */
	uint64_t t_first_ns, t_prev_ns;
	uint32_t prev_wire;
	bool prev_retx;
	uint64_t pkts, retx_pkts, wire_bytes, goodput_bytes;
	uint64_t cnps, last_cnp_ns;
	bool limited;             /* a CNP came and no gap at line rate since */
	double part_ns[ANA_BW_PARTS];
	uint32_t idle_gaps;
	uint64_t idle_max_ns;
	struct ana_series rate;   /* wire bytes per bin: the peak over --window */
	/* at ana_bw_finish */
	double span_ns, peak_gbps;
	uint32_t qps;
	int32_t src_rank, dst_rank, rail; /* -1: not known */
	struct ana_bw_finding find[ANA_BW_FINDINGS_MAX];
	uint32_t n_find;
};

/* What an NCCL_DEBUG=INFO log says of an address (ana_nccl.c). */
struct ana_rank_ip {
	uint8_t ip[16];
	int32_t rank;
	char host[64];            /* "host:pid" of the process */
	char nic[32];             /* its first NIC ("mlx5_0") */
};

#define ANA_RANKS_MAX 1024

/* rail of a rank pair: "Channel cc/x : r0[d] -> r1[d] [send] via NET/IB/N..." */
struct ana_rank_rail {
	int32_t from, to, rail;
};

struct ana_iter {
	uint64_t start_ns, end_ns;
	uint64_t bytes;
	uint64_t pkts;
};

#define ANA_ITERS_CAP 4096

#define ANA_DROP_REASONS 32

struct ana {
	struct ana_opts o;
	uint64_t pkts, bytes;
	uint64_t t_first_ns, t_last_ns;
	uint64_t time_back;
	uint64_t cls[16];
	uint64_t reasons[32];
	uint64_t roce_pkts, pfc_frames, pause_frames, other_pkts;
	uint64_t ud_pkts, invalid_pkts;
	uint64_t cnps_seen;
	/* flows */
	struct ana_flow *flows;
	uint32_t n_flows, cap_flows;
	int32_t *hash;
	uint32_t hash_size;
	uint64_t flows_dropped_pkts;
	struct roce_qpmap *qpmap;
	struct ana_conn *conns;
	uint32_t n_conns;
	/* PFC */
	struct ana_pfc_port *pfc;
	uint32_t n_pfc, cap_pfc;
	/* annotations */
	uint64_t ann_pkts, ann_bad;
	char drop_reason[ANA_DROP_REASONS][32];
	uint64_t drop_count[ANA_DROP_REASONS];
	uint32_t n_drop_reasons;
	uint64_t wait_sum_ns, wait_max_ns, wait_n;
	double qdepth_max;
	struct ana_series qdepth;
	/* collectives */
	struct ana_iter *iters;
	uint32_t n_iters;
	uint64_t iters_dropped;
	uint64_t last_data_ns;
	bool in_iter;
	bool barrier_seen;        /* a tiny message on a control QP since the last bulk packet */
	/* app log */
	bool app_seen;
	double app_busbw_gbs;
	double app_algbw_gbs;
	double app_time_us;
	uint64_t app_size;
	char app_kind[32];
	/* where the bandwidth went */
	struct ana_bw_pair *bw;
	uint32_t n_bw, cap_bw;
	struct ana_rank_ip *rank_ips;
	uint32_t n_rank_ips;
	struct ana_rank_rail *rails;
	uint32_t n_rails, cap_rails;
	bool nccl_seen;
	/* --rocegen-json: rank = process x per_process + offset from its first address; a pair's
	 * rail = the sender's local rank mod rails */
	uint32_t rg_per_process, rg_rails;
	bool rocegen_seen;
	/* results */
	struct ana_dcqcn_res *dres;
	uint32_t n_dres;
	bool finished;
};

#define PSN_MASK 0xFFFFFFu

/* Signed distance a - b between two 24-bit PSNs, in (-2^23, 2^23]. */
static inline int32_t
psn_diff(uint32_t a, uint32_t b)
{
	int32_t d = (int32_t)((a - b) & PSN_MASK);

	return d >= (1 << 23) ? d - (1 << 24) : d;
}

struct roce_pkt;

/* ana_flows.c: the flow table and the pairing of directions (for the pass in ana_core.c) */
int32_t ana_find(struct ana *a, const uint8_t *src, const uint8_t *dst, uint32_t dqp);
struct ana_flow *ana_flow_get(struct ana *a, const struct roce_pkt *p, uint64_t pktno,
			      uint64_t t_ns);
struct ana_flow *ana_peer(struct ana *a, struct ana_flow *f, const struct roce_pkt *p,
			  uint64_t t_ns);

/* ana_util.c */
/* Memory whose pages are faulted in one system call (madvise MADV_POPULATE_WRITE) rather than
 * one trap per 4 KiB page on first touch: a page fault costs microseconds on a VM, and a rate
 * series of a 100 ms capture is 800 KB per flow. Blocks under 64 KiB as plain libc. */
void ana_prefault(void *p, size_t len);
void *ana_realloc(void *v, size_t old_len, size_t new_len);
void *ana_calloc(size_t n, size_t size);
void ana_series_init(struct ana_series *s, uint64_t bin_ns, uint32_t max_bins, bool max_mode);
/* A growable array v of *cap elements of size bytes, n used: doubled (from first, up to max
 * elements) when full; returns the array, moved or not. The caller tests n < *cap after (no
 * room: a counter then says what was not kept). */
void *ana_grow(void *v, uint32_t *cap, uint32_t n, size_t size, uint32_t first, uint32_t max);
void ana_series_add_slow(struct ana_series *s, uint64_t t_ns, double v);

/* v into allocated bin idx (< cap): added, or its maximum in max_mode. */
static inline void
ana_series_put(struct ana_series *s, uint64_t idx, double v)
{
	if (idx >= s->n)
		s->n = (uint32_t)idx + 1;
	if (s->max_mode)
		s->v[idx] = s->v[idx] > v ? s->v[idx] : v;
	else
		s->v[idx] += v;
}

/* Adds v to the bin of t_ns (its maximum in max_mode), growing or coarsening the series as
 * needed. Inline: the common case, a sample in the bin of the one before (up to five per data
 * packet), costs a compare and an add. */
static inline void
ana_series_add(struct ana_series *s, uint64_t t_ns, double v)
{
	if (t_ns >= s->c_lo && t_ns < s->c_hi && s->c_idx < s->cap)
		ana_series_put(s, s->c_idx, v);
	else
		ana_series_add_slow(s, t_ns, v);
}
void ana_series_free(struct ana_series *s);
void ana_flow_event(struct ana_flow *f, enum ana_ev_type type, uint64_t pkt, uint64_t pkt2,
		    uint64_t t_ns, uint32_t psn, uint32_t psn2, int64_t val);
const char *ana_ev_name(enum ana_ev_type t);
const char *ana_ctr_name(enum ana_ctr c);
void ana_ip_str(const uint8_t *ip, uint8_t version, char *buf, size_t len);
double ana_flow_mean_mbps(const struct ana_flow *f);
double ana_flow_peak_mbps(const struct ana *a, const struct ana_flow *f);
unsigned int ana_flow_check_fails(const struct ana_flow *f);

/* ana_out.c: what the text (ana_text.c) and the JSON (ana_json.c) share */
struct ana_scope {
	uint64_t min_gap_ns;
	uint64_t violations;
	uint64_t groups;
};

#define ANA_SCOPES 4
extern const char *const ana_scope_names[ANA_SCOPES];
/* CNP spacing per scope: 0 per QP, 1 per IP pair, 2 per NP port, 3 per destination IP */
void ana_scope(const struct ana *a, int scope, struct ana_scope *out);
/* The broadest scope without violations; "none", "no_cnps". */
const char *ana_scope_inferred(const struct ana_scope *s);

struct ana_hpair {
	const uint8_t *src, *dst;
	uint8_t version;
	uint32_t qps;
	uint64_t bytes;
};

/* Host pairs carrying bulk data (at most cap) and the pattern they form. */
uint32_t ana_host_pairs(const struct ana *a, struct ana_hpair *hp, uint32_t cap,
			const char **pattern);
void ana_flow_label(const struct ana *a, const struct ana_flow *f, char *buf, size_t len);

/* ana_pfc.c */
void ana_pfc_frame(struct ana *a, const uint8_t *src_mac, uint32_t ifindex, uint16_t opcode,
		   uint16_t enable, const uint16_t *quanta, uint64_t t_ns);
void ana_pfc_finish(struct ana *a);
void ana_pfc_free(struct ana *a);

/* ana_dcqcn.c */
void ana_dcqcn_run(struct ana *a);
void ana_dcqcn_free(struct ana *a);

/* ana_bw.c */
void ana_bw_data(struct ana *a, struct ana_flow *f, uint64_t t_ns, uint32_t wire, bool fresh,
		 uint64_t payload);
void ana_bw_cnp(struct ana *a, const struct ana_flow *c, uint64_t t_ns);
void ana_bw_finish(struct ana *a);
void ana_bw_free(struct ana *a);
const char *ana_bw_part_name(enum ana_bw_part p);
/* ana_bw_out.c: the report's "where the bandwidth went" section, its JSON and CSV */
void ana_bw_write_text(const struct ana *a, FILE *out);
struct json_t *ana_bw_json(const struct ana *a);
void ana_bw_csv(const struct ana *a, FILE *f);
double ana_series_peak_mbps(const struct ana_series *s, uint64_t window_ns);

/* ana_pfc.c: the time within [from, to] that priority prio (or 802.3x PAUSE) was paused by
 * any port whose MAC is not own_mac, as far as the capture has told by now */
uint64_t ana_pfc_paused_within(const struct ana *a, uint8_t prio, const uint8_t *own_mac,
			       uint64_t from, uint64_t to);

/* ana_coll.c */
void ana_coll_data(struct ana *a, struct ana_flow *f, uint64_t t_ns, uint64_t bytes);
void ana_coll_finish(struct ana *a);
double ana_coll_factor(const char *collective, unsigned int ranks, double *bus);

#endif
