/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef ROCEMU_EP_SRD_H
#define ROCEMU_EP_SRD_H

/**
 * @file
 * An SRD-like reliable datagram connection (after AWS SRD, Shalev et al., IEEE Micro 2020) as a
 * pure state machine over byte buffers, with the same rules as ep_qp.h: frames in (parsed with
 * roce_parse()), frames out (built into a caller's buffer), time passed in. RDMA WRITEs only.
 *
 * Multipath: data packets leave on K paths, K UDP source ports (the path's entropy for ECMP):
 * path 0 is the QP pair's own port (cfg.qp.udp_sport), path k is
 * 0xC000 | ((port0 + k x 0x0F1D) & 0x3FFF); the sender moves to the next path every spray
 * packets (an oblivious round robin), retransmissions included.
 *
 * Receiver: a PSN window of EP_SRD_WIN packets; every packet carries its own target address,
 * so it is placed at once wherever it lands in the order (a bitmap marks the PSNs received, no
 * go-back-N); messages complete in PSN order once all their packets are in. Every
 * out-of-order, duplicate or AckReq packet asks for a SACK (coalesced: one per ep_srd_tx call);
 * the sender sets AckReq on the last packet of a message, every ackreq_every packets of it and
 * on every retransmission.
 *
 * Sender: retransmits only what the SACKs show missing: a PSN is lost when a packet sent
 * reorder_pkts (at most half the window of packets) or more transmissions after it has been
 * SACKed (RACK-like, counted per transmission, so a retransmission gets its own reorder
 * window), or when its retransmission timer (RTO = srtt + 4 rttvar, RFC 6298, within
 * [rto_min_ns, rto_max_ns], doubled per try) runs out. Timers that run out together resend
 * only the oldest packet, a probe (the others restart): when the peer was only slow, the
 * probe's SACK covers the rest; when they were lost, it shows the holes to the rule above.
 * After retry_cnt timeouts of one packet the connection goes to the error state.
 *
 * Congestion (cc_enabled; the sender paces data at its rate): an ECN-CE echo (the ECE flag of
 * a SACK, set when a CE-marked packet arrived since the previous SACK), a CNP, or an RTT sample
 * above rtt_thresh_ns (0: off) cut the rate: rate = max(min_rate, rate x md), at most once per
 * srtt (at least 10 us); every srtt without a cut adds ai_mbps, up to the line rate (AIMD).
 *
 * Wire encoding: BTH opcodes from the manufacturer-specific range 0xC0-0xFF of the IBA (BTH
 * opcode bits 7:5 = 110 or 111), which lib/proto parses as opcodes without extension headers
 * (everything after the BTH is payload) and names "UNKNOWN"; an RC ACK with a payload was not
 * used because every RC parser (and rocemu's "ack" match class) would take it for an RC ACK.
 * (Opcode classes that look only at bits 4:0, as rocemu's "data" and rocestat's data count,
 * take both for data; match them by number.)
 *  - 0xC0 SRD_DATA: BTH (PSN, DestQP, AckReq) | SRDETH 16 B: remote VA 8 | ImmDt 4 | flags 1
 *    (bit 0 LAST of its message, bit 1 ImmDt valid, bit 2 FIRST) | 3 zero | payload | ICRC.
 *  - 0xC1 SRD_SACK: BTH (PSN = cumulative: every PSN before it received, DestQP = the sender)
 *    | trigger PSN 3 | flags 1 (bit 0 ECE, bit 1 trigger valid) | bitmap 32 B: bit i (byte
 *    i / 8, LSB first) = PSN cumulative + 1 + i received | ICRC.
 */

#include <stdbool.h>
#include <stdint.h>

#include "ep_qp.h"

#define EP_SRD_OP_DATA 0xC0
#define EP_SRD_OP_SACK 0xC1
#define EP_SRD_HDR_LEN 16		/**< SRDETH in front of a data packet's payload */
#define EP_SRD_SACK_BITS 256
#define EP_SRD_SACK_LEN (4 + EP_SRD_SACK_BITS / 8)
#define EP_SRD_WIN 1024		/**< PSNs in flight (sender) and tracked (receiver) */
#define EP_SRD_MAX_PATHS 64
#define EP_SRD_FLAG_LAST 0x01
#define EP_SRD_FLAG_IMM 0x02
#define EP_SRD_FLAG_FIRST 0x04
#define EP_SRD_SACK_ECE 0x01
#define EP_SRD_SACK_TRIGGER 0x02

/** Counters per connection: one X-macro list gives the enum and the names. */
#define EP_SRD_FOREACH_CTR(_) \
	_(TX_PKTS, "tx_packets") \
	_(TX_BYTES, "tx_bytes") \
	_(TX_DATA_PKTS, "tx_data_packets") \
	_(TX_PAYLOAD_BYTES, "tx_payload_bytes") \
	_(RETX_PKTS, "retransmitted_packets") \
	_(RETX_BYTES, "retransmitted_payload_bytes") \
	_(RETX_SACK, "retransmits_for_sack_holes") \
	_(RETX_CANCELLED, "retransmits_cancelled_by_sack") \
	_(TIMEOUTS, "timeouts") \
	_(RX_PKTS, "rx_packets") \
	_(RX_BYTES, "rx_bytes") \
	_(RX_PLACED_BYTES, "rx_placed_bytes") \
	_(RX_DUP_PKTS, "rx_duplicate_packets") \
	_(RX_OOO_PKTS, "rx_out_of_order_packets") \
	_(RX_BEYOND_WIN, "rx_beyond_window") \
	_(RX_BAD_PKTS, "rx_bad_packets") \
	_(RX_CE_PKTS, "rx_ce_packets") \
	_(SACKS_SENT, "sacks_sent") \
	_(SACKS_RCVD, "sacks_received") \
	_(ECE_RCVD, "ecn_echoes_received") \
	_(CNPS_RCVD, "cnps_received") \
	_(CC_DECREASES, "rate_decreases") \
	_(CC_INCREASES, "rate_increases") \
	_(RTT_SAMPLES, "rtt_samples") \
	_(PAUSED_NS, "paused_ns") \
	_(MSGS_SENT, "messages_completed") \
	_(MSGS_RCVD, "messages_received")

#define EP_SRD_CTR_ENUM_(n, s) EP_SRD_CTR_##n,
enum ep_srd_ctr {
	EP_SRD_FOREACH_CTR(EP_SRD_CTR_ENUM_)
	EP_SRD_CTR_MAX
};
#undef EP_SRD_CTR_ENUM_

/** Name of a counter ("tx_packets", ...). */
const char *ep_srd_ctr_name(enum ep_srd_ctr c);

/** Configuration: the QP's (addresses, QPNs, MTU, window, memory region) and SRD's own. */
struct ep_srd_cfg {
	struct ep_qp_cfg qp;	/**< dcqcn.line_rate_mbps is the line rate; ackreq_every used */
	uint32_t n_paths;	/**< K entropy values, 1..EP_SRD_MAX_PATHS */
	uint32_t spray;		/**< packets per path before the next one, >= 1 */
	uint32_t reorder_pkts;	/**< later transmissions SACKed before a PSN counts as lost */
	uint32_t retry_cnt;	/**< timeouts of one packet before the error state */
	uint64_t rto_init_ns;	/**< before the first RTT sample */
	uint64_t rto_min_ns;
	uint64_t rto_max_ns;
	bool cc_enabled;
	double md;		/**< multiplicative decrease factor, 0 < md < 1 */
	double ai_mbps;		/**< additive increase per RTT */
	double min_rate_mbps;
	uint64_t rtt_thresh_ns;	/**< an RTT sample above it signals congestion (0: off) */
};

/** Defaults: ep_qp_cfg_default(), 16 paths, spray 1, reorder 64, 16 retries, RTO 1 ms initial
 * within 200 us..100 ms, AIMD on: md 0.5, ai 1% of the line rate, floor 0.1%, RTT off. */
void ep_srd_cfg_default(struct ep_srd_cfg *cfg);

/** UDP source port of path @p k of a connection whose own port is @p port0. */
uint16_t ep_srd_path_sport(uint16_t port0, uint32_t k);

struct ep_srd_txs {		/* one PSN in flight */
	uint64_t sent_ns;
	uint64_t due_ns;	/* its retransmission timer */
	uint64_t tx_seq;	/* transmission number of its last send */
	uint8_t sacked;
	uint8_t queued;		/* in the retransmission queue */
	uint8_t tries;		/* retransmissions so far */
};

struct ep_srd_rxs {		/* one PSN of the receive window */
	uint8_t got;
	uint8_t flags;
	uint32_t len;
	uint32_t imm;
};

struct ep_srd {
	struct ep_srd_cfg cfg;
	enum ep_qp_state state;
	struct ep_pfc *pfc;
	struct roce_hdr_params hp;
	uint32_t max_out;		/* packets in flight: window_bytes / mtu, <= EP_SRD_WIN */
	uint32_t reorder;		/* reorder_pkts, at most max_out / 2 (else unreachable) */
	/* sender */
	struct ep_wr_slot wrs[EP_MAX_WR];
	uint32_t wr_head, wr_send, wr_tail;
	uint32_t next_psn;		/* PSN the next posted WR starts at */
	uint32_t snd_una;		/* oldest PSN not SACKed */
	uint32_t snd_nxt;		/* next new PSN */
	uint64_t tx_seq;		/* transmissions so far */
	uint64_t hi_sacked_seq;		/* highest tx_seq SACKed (0: none) */
	struct ep_srd_txs txs[EP_SRD_WIN];
	uint32_t rtxq[EP_SRD_WIN];	/* PSNs to retransmit, FIFO */
	uint32_t rtxq_head, rtxq_tail;
	uint64_t next_rto_check_ns;
	uint64_t srtt_ns, rttvar_ns;	/* srtt 0: no sample yet */
	uint32_t path, path_left;	/* current path, packets left on it */
	double rate_mbps;
	double min_rate_seen_mbps;
	uint64_t next_send_ns;
	bool pace_busy;			/* had data to send since its last packet (as ep_qp) */
	uint64_t cut_ok_ns, inc_ok_ns;	/* earliest next decrease / increase */
	uint64_t pause_start_ns;
	struct ep_cqe sq_cqes[EP_MAX_CQE];
	uint32_t sq_cq_head, sq_cq_tail;
	uint8_t scratch[EP_SRD_HDR_LEN + 4096];
	/* receiver */
	uint32_t epsn;
	struct ep_srd_rxs rxs[EP_SRD_WIN];
	uint32_t msg_bytes;
	uint32_t msn;
	bool sack_pending, ece_pending, trigger_valid;
	uint32_t trigger_psn;
	struct ep_cqe rq_cqes[EP_MAX_CQE];
	uint32_t rq_cq_head, rq_cq_tail;
	/* counters */
	uint64_t ctrs[EP_SRD_CTR_MAX];
	uint64_t path_pkts[EP_SRD_MAX_PATHS];	/* data packets sent per path */
};

/** Set up @p s at @p now_ns; 0 or -EINVAL (MTU, window, paths, spray, md out of range). */
int ep_srd_init(struct ep_srd *s, const struct ep_srd_cfg *cfg, struct ep_pfc *pfc,
		uint64_t now_ns);

/** Set the peer's MAC address. */
void ep_srd_set_dst_mac(struct ep_srd *s, const uint8_t mac[6]);

/** Post an RDMA WRITE (with or without immediate); 0, -ENOSPC, -EINVAL (SEND, zero length),
 * -EIO (error state). */
int ep_srd_post(struct ep_srd *s, const struct ep_wr *wr);

/** Next frame to send at @p now_ns (a SACK first, then retransmissions, then new data): its
 * length, 0 when nothing may go now, or a negative errno from the builder. */
int ep_srd_tx(struct ep_srd *s, uint64_t now_ns, uint8_t *buf, uint32_t cap);

/** A received frame parsed as @p p (DestQP = this connection's QPN) at @p now_ns. */
void ep_srd_rx(struct ep_srd *s, const uint8_t *frame, uint32_t len, const struct roce_pkt *p,
	       uint64_t now_ns);

/** Run the retransmission timers up to @p now_ns. */
void ep_srd_advance(struct ep_srd *s, uint64_t now_ns);

/** Pop a sender completion; 1 or 0. */
int ep_srd_poll_sq(struct ep_srd *s, struct ep_cqe *cqe);

/** Pop a receiver completion (a message complete in PSN order); 1 or 0. */
int ep_srd_poll_rq(struct ep_srd *s, struct ep_cqe *cqe);

/** True when every posted WR is SACKed. */
bool ep_srd_idle(const struct ep_srd *s);

#endif
