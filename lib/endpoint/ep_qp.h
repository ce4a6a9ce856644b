/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef ROCEMU_EP_QP_H
#define ROCEMU_EP_QP_H

/**
 * @file
 * A RoCEv2 RC queue pair as a pure state machine over byte buffers: frames in (already
 * parsed with roce_parse()), frames out (built into a caller's buffer), time passed in as
 * nanoseconds. No clock, RNG, allocation or I/O: rocegen drives it from DPDK ports, the unit
 * tests from a virtual clock and an in-memory wire.
 *
 * Requester: work requests (RDMA WRITE, SEND, optionally with immediate on the last packet as
 * NCCL does) segmented at the path MTU, PSNs mod 2^24, AckReq on the last packet of a message
 * and every ackreq_every packets, a window of outstanding bytes, go-back-N from the PSN a NAK
 * names, a retransmission timeout of 4.096 us x 2^timeout with retry_cnt retries (then the QP
 * goes to the error state), a DCQCN reaction point (lib/dcqcn) that paces data at Rc, and PFC
 * honouring (a pause-until time per priority, shared by the QPs of a port).
 *
 * Responder: in-order acceptance only; each accepted byte is placed in the memory region and
 * marked in an optional bitmap (1 bit per byte); ACKs are coalesced (one ACK names the latest
 * PSN accepted); a gap gives one NAK PSN sequence error (syndrome 0x60) carrying the expected
 * PSN, once per gap; duplicates are re-ACKed; CE-marked packets give CNPs paced by
 * min_time_between_cnps (dcqcn_np_may_send).
 */

#include <stdbool.h>
#include <stdint.h>

#include "lib/dcqcn/dcqcn.h"
#include "lib/proto/roce_proto.h"

#define EP_PSN_MASK 0xFFFFFFu
#define EP_MAX_WR 64		/**< work requests queued or in flight per QP */
#define EP_MAX_CQE 64		/**< completions kept until drained */
#define EP_N_PRIO 8
#define EP_FRAME_OVERHEAD 24	/**< preamble + IFG + FCS: wire bytes beyond the frame */

/** Counters per QP: one X-macro list gives the enum and the names. */
#define EP_FOREACH_CTR(_) \
	_(TX_PKTS, "tx_packets") \
	_(TX_BYTES, "tx_bytes") \
	_(TX_DATA_PKTS, "tx_data_packets") \
	_(TX_PAYLOAD_BYTES, "tx_payload_bytes") \
	_(RETX_PKTS, "retransmitted_packets") \
	_(RETX_BYTES, "retransmitted_payload_bytes") \
	_(RX_PKTS, "rx_packets") \
	_(RX_BYTES, "rx_bytes") \
	_(RX_PLACED_BYTES, "rx_placed_bytes") \
	_(RX_DUP_PKTS, "rx_duplicate_packets") \
	_(RX_OOO_PKTS, "rx_out_of_order_packets") \
	_(RX_BAD_PKTS, "rx_bad_packets") \
	_(RX_CE_PKTS, "rx_ce_packets") \
	_(ACKS_SENT, "acks_sent") \
	_(ACKS_RCVD, "acks_received") \
	_(NAKS_SENT, "naks_sent") \
	_(NAKS_RCVD, "naks_received") \
	_(TIMEOUTS, "timeouts") \
	_(CNPS_SENT, "cnps_sent") \
	_(CNPS_RCVD, "cnps_received") \
	_(CNPS_PACED, "cnps_suppressed_by_pacing") \
	_(PAUSED_NS, "paused_ns") \
	_(MSGS_SENT, "messages_completed") \
	_(MSGS_RCVD, "messages_received")

#define EP_CTR_ENUM_(n, s) EP_CTR_##n,
enum ep_ctr {
	EP_FOREACH_CTR(EP_CTR_ENUM_)
	EP_CTR_MAX
};
#undef EP_CTR_ENUM_

/** Name of a counter ("tx_packets", ...). */
const char *ep_ctr_name(enum ep_ctr c);

/** Pause state of one port, per priority: honours PFC (and PAUSE, as all priorities). */
struct ep_pfc {
	uint64_t pause_until_ns[EP_N_PRIO];
	double link_mbps;	/**< to turn quanta (512 bit times) into time */
	uint64_t pfc_rcvd;
	uint64_t pause_rcvd;
};

/** Initialise for a link of @p link_mbps (100 Gb/s if not > 0). */
void ep_pfc_init(struct ep_pfc *pfc, double link_mbps);

/** A parsed MAC control frame arrived at @p now_ns (ignored unless PAUSE or PFC). */
void ep_pfc_on_frame(struct ep_pfc *pfc, const struct roce_pkt *p, uint64_t now_ns);

/** Whether priority @p prio may transmit at @p now_ns. */
bool ep_pfc_may_send(const struct ep_pfc *pfc, uint8_t prio, uint64_t now_ns);

/** QP configuration. */
struct ep_qp_cfg {
	uint32_t qpn;
	uint32_t dest_qpn;		/**< the peer QP */
	uint32_t sq_psn;		/**< first PSN this QP sends */
	uint32_t rq_psn;		/**< first PSN this QP expects */
	uint32_t mtu;			/**< path MTU: 256..4096 */
	uint32_t ackreq_every;		/**< AckReq every N packets (0: off) */
	uint64_t window_bytes;		/**< outstanding payload bytes allowed */
	uint8_t timeout;		/**< retransmission timeout 4.096 us x 2^timeout, 1..31 */
	uint8_t retry_cnt;		/**< retries after a timeout before the error state */
	uint8_t dscp;			/**< data and ACKs: 26 */
	uint8_t ecn;			/**< 2: ECT(0) */
	uint8_t prio;			/**< PFC priority of data and ACKs: 3 */
	uint8_t cnp_dscp;		/**< 48 */
	uint8_t cnp_prio;		/**< 6 */
	uint8_t src_mac[6];
	uint8_t dst_mac[6];
	uint8_t src_ip[4];
	uint8_t dst_ip[4];
	uint16_t udp_sport;		/**< flow entropy, fixed per QP */
	bool dcqcn_enabled;		/**< reaction point paces data at Rc */
	struct dcqcn_params dcqcn;	/**< DCQCN parameters; line_rate_mbps also for PFC */
	uint8_t *mr;			/**< responder memory: WRITEs at va, SENDs in order */
	uint64_t mr_len;
	uint64_t *placed_bitmap;	/**< optional: 1 bit per byte of mr */
};

/** Defaults: MTU 1024, ackreq every 16, 1 MB window, timeout 14 (67 ms), 7 retries, DSCP 26
 * ECT(0) priority 3, CNP DSCP 48 priority 6, DCQCN on with NVIDIA parameters at 100 Gb/s. */
void ep_qp_cfg_default(struct ep_qp_cfg *cfg);

enum ep_wr_op {
	EP_WR_WRITE,
	EP_WR_WRITE_IMM,
	EP_WR_SEND,
	EP_WR_SEND_IMM,
};

/** A work request; local is read while the WR is outstanding (NULL sends zeros). */
struct ep_wr {
	uint64_t wr_id;
	enum ep_wr_op op;
	const uint8_t *local;
	uint32_t len;
	uint64_t remote_va;	/**< WRITE: offset into the responder's mr */
	uint32_t rkey;
	uint32_t imm;
};

/** A completion: on the requester when a WR is acknowledged, on the responder for a message. */
struct ep_cqe {
	uint64_t wr_id;		/**< requester: the WR's id; responder: message number */
	uint32_t len;
	uint32_t imm;
	uint8_t opcode;		/**< responder: opcode of the last packet */
	uint8_t has_imm;
};

struct ep_wr_slot {
	struct ep_wr wr;
	uint32_t first_psn;
	uint32_t npkts;
};

enum ep_qp_state {
	EP_QP_RTS,
	EP_QP_ERROR,	/**< retries exhausted */
};

struct ep_qp {
	struct ep_qp_cfg cfg;
	enum ep_qp_state state;
	struct ep_pfc *pfc;		/**< the port's pause state (may be NULL) */
	struct roce_hdr_params hp;	/**< header template */
	/* requester */
	struct ep_wr_slot wrs[EP_MAX_WR];
	uint32_t wr_head;		/**< oldest not yet acknowledged */
	uint32_t wr_send;		/**< the WR holding snd_nxt */
	uint32_t wr_tail;		/**< next free */
	uint32_t next_psn;		/**< PSN the next posted WR starts at */
	uint32_t snd_una;		/**< oldest unacknowledged PSN */
	uint32_t snd_nxt;		/**< next PSN to transmit */
	uint32_t snd_max;		/**< one past the highest PSN ever sent */
	uint64_t outstanding_bytes;
	uint32_t pkts_since_ackreq;
	uint64_t last_progress_ns;	/**< last ACK advancing snd_una */
	uint32_t retries;
	uint64_t next_send_ns;		/**< rate limiter */
	bool pace_busy;			/**< had data to send since its last packet */
	struct dcqcn_rp rp;
	struct ep_cqe sq_cqes[EP_MAX_CQE];
	uint32_t sq_cq_head, sq_cq_tail;
	/* responder */
	uint32_t epsn;			/**< expected PSN */
	uint32_t msn;
	bool nak_outstanding;		/**< a NAK was sent for the current gap */
	bool ack_pending;
	bool nak_pending;
	uint32_t cnp_pending;
	uint64_t last_cnp_ns;
	uint64_t wr_va;			/**< where the next byte of the message goes */
	uint32_t msg_bytes;
	bool in_msg;
	uint64_t recv_off;		/**< SENDs are placed here in mr (wrapping) */
	struct ep_cqe rq_cqes[EP_MAX_CQE];
	uint32_t rq_cq_head, rq_cq_tail;
	uint64_t rq_cq_overflow;
	/* counters */
	uint64_t ctrs[EP_CTR_MAX];
	double min_rate_mbps;		/**< lowest DCQCN rate reached */
	uint64_t pause_start_ns;	/**< UINT64_MAX when not paused */
};

/** Set up @p qp from @p cfg at @p now_ns; returns 0 or -EINVAL (bad MTU, timeout). */
int ep_qp_init(struct ep_qp *qp, const struct ep_qp_cfg *cfg, struct ep_pfc *pfc,
	       uint64_t now_ns);

/** Set the peer's MAC address (learned by ARP after the QP was set up). */
void ep_qp_set_dst_mac(struct ep_qp *qp, const uint8_t mac[6]);

/** Post a work request; returns 0, -ENOSPC (queue full), -EINVAL (zero length without an
 * immediate: a 0-byte WRITE or SEND with immediate is one empty packet), -EIO (error). */
int ep_qp_post(struct ep_qp *qp, const struct ep_wr *wr);

/**
 * Build the next frame this QP wants to send at @p now_ns into buf: first a pending NAK, ACK or
 * CNP, then data when the window, the rate limiter and PFC allow. Returns the frame length,
 * 0 when there is nothing to send now, or a negative errno from the builder.
 */
int ep_qp_tx(struct ep_qp *qp, uint64_t now_ns, uint8_t *buf, uint32_t cap);

/** Hand the QP a received RoCEv2 frame parsed as @p p (DestQP = this QP) at @p now_ns. */
void ep_qp_rx(struct ep_qp *qp, const uint8_t *frame, uint32_t len, const struct roce_pkt *p,
	      uint64_t now_ns);

/** Run the timers (retransmission timeout, DCQCN) up to @p now_ns. */
void ep_qp_advance(struct ep_qp *qp, uint64_t now_ns);

/** Earliest time something may change without input (timeout, rate limiter, pause end). */
uint64_t ep_qp_next_event_ns(const struct ep_qp *qp, uint64_t now_ns);

/** Pop a requester completion into *cqe; returns 1 or 0 when none. */
int ep_qp_poll_sq(struct ep_qp *qp, struct ep_cqe *cqe);

/** Pop a responder completion (a message received) into *cqe; returns 1 or 0 when none. */
int ep_qp_poll_rq(struct ep_qp *qp, struct ep_cqe *cqe);

/** True when every posted WR is acknowledged. */
bool ep_qp_idle(const struct ep_qp *qp);

/** Current DCQCN rate (line rate when DCQCN is off). */
double ep_qp_rate_mbps(const struct ep_qp *qp);

/** Retransmission timeout in ns: 4096 << timeout. */
uint64_t ep_timeout_ns(uint8_t timeout);

/** Signed distance a - b between 24-bit PSNs. */
static inline int32_t
ep_psn_diff(uint32_t a, uint32_t b)
{
	return (int32_t)((a - b) << 8) >> 8;
}

/** Set the bits [off, off + len) of a placed-bytes bitmap. */
/* Copy @p len payload bytes into a memory region (non-temporal stores from 1 KB up). */
void ep_place(uint8_t *dst, const uint8_t *src, uint64_t len);
void ep_bitmap_set(uint64_t *bm, uint64_t off, uint64_t len);

/** Count of set bits over [off, off + len) of a placed-bytes bitmap. */
uint64_t ep_bitmap_count(const uint64_t *bm, uint64_t off, uint64_t len);

#endif
