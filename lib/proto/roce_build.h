/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Frame builders: RoCEv2 packets of every opcode, CNP, ACK/NAK, PFC and PAUSE. Every builder
 * returns the frame length written (without FCS) or a negative errno (-ENOSPC if cap is too
 * small, -EINVAL for parameters it cannot encode), with the IPv4 checksum and the ICRC right,
 * and pads frames shorter than 60 bytes with zeros.
 */
#ifndef ROCE_BUILD_H
#define ROCE_BUILD_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct roce_pkt;

/** Header fields of a RoCEv2 packet; extension header fields are used when the opcode has them. */
struct roce_hdr_params {
	uint8_t dst_mac[6];
	uint8_t src_mac[6];
	uint8_t has_vlan;	/**< add one 802.1Q tag */
	uint8_t pcp;		/**< 802.1p priority of the tag */
	uint16_t vlan_id;
	uint8_t ip_version;	/**< 4 or 6 */
	uint8_t dscp;
	uint8_t ecn;
	uint8_t ttl;		/**< IPv4 TTL or IPv6 hop limit */
	uint8_t ip_df;		/**< IPv4 don't-fragment flag (RoCE NICs set it) */
	uint16_t ip_id;
	uint32_t flow_label;	/**< IPv6 only, 20 bits */
	uint8_t src_ip[16];	/**< IPv4 in the first 4 bytes */
	uint8_t dst_ip[16];
	uint16_t udp_sport;
	uint16_t udp_dport;	/**< 4791 by default */
	uint8_t udp_cksum;	/**< fill in the UDP checksum (NICs send 0, also over IPv6) */
	/* BTH */
	uint8_t opcode;
	uint8_t se;
	uint8_t migreq;
	uint8_t tver;
	uint8_t fecn;
	uint8_t becn;
	uint8_t bth_rsvd;	/**< reserved bits 5:0 of BTH byte 4 (some NICs set 0x10) */
	uint8_t ackreq;
	uint16_t pkey;
	uint32_t dest_qp;
	uint32_t psn;
	/* Extension headers */
	uint32_t rdeth_eecnxt;		/**< RD */
	uint32_t deth_qkey;		/**< UD, RD */
	uint32_t deth_src_qp;
	uint64_t reth_va;
	uint32_t reth_rkey;
	uint32_t reth_len;
	uint64_t atomic_va;		/**< COMPARE_SWAP, FETCH_ADD */
	uint32_t atomic_rkey;
	uint64_t atomic_swap_add;
	uint64_t atomic_compare;
	uint8_t aeth_syndrome;		/**< ROCE_AETH_ACK | credit, ROCE_AETH_NAK | code, ... */
	uint32_t msn;
	uint64_t atomic_ack_orig;	/**< ATOMIC_ACKNOWLEDGE */
	uint32_t imm;			/**< ImmDt */
	uint32_t ieth_rkey;		/**< SEND_*_WITH_INVALIDATE */
};

/** Header fields of a CNP. */
struct roce_cnp_params {
	uint8_t dst_mac[6];
	uint8_t src_mac[6];
	uint8_t has_vlan;
	uint8_t pcp;		/**< default 6, NVIDIA's cnp_802p_prio */
	uint16_t vlan_id;
	uint8_t ip_version;	/**< 4 or 6 */
	uint8_t src_ip[16];	/**< the congested data packet's destination */
	uint8_t dst_ip[16];	/**< the congested data packet's source */
	uint8_t dscp;		/**< default 48, NVIDIA's cnp_dscp */
	uint8_t ecn;		/**< default 2, ECT(0) */
	uint8_t ttl;		/**< default 64 */
	uint16_t ip_id;
	uint16_t udp_sport;	/**< default 0, as ConnectX-4 Lx sends */
	uint16_t pkey;		/**< default 0xFFFF */
	uint32_t dest_qp;	/**< QPN of the data sender, the QP that must slow down */
};

/** Defaults: IPv4, TTL 64, DF, DSCP 26 + ECT(0), UDP dport 4791, P_Key 0xFFFF, RC SEND_ONLY. */
struct roce_hdr_params roce_hdr_params_default(void);

/** Defaults: IPv4, DSCP 48, ECT(0), TTL 64, sport 0, P_Key 0xFFFF, priority 6 if tagged. */
struct roce_cnp_params roce_cnp_params_default(void);

/**
 * CNP parameters answering a congested data packet (parsed from frame): addresses and MACs
 * swapped, the tag kept, dest_qp = sender_qpn (learned elsewhere, see roce_qpmap.h).
 */
struct roce_cnp_params roce_cnp_params_for(const uint8_t *frame, const struct roce_pkt *data,
		uint32_t sender_qpn);

/**
 * Build a RoCEv2 frame with hp's headers, the extension headers hp->opcode needs, payload_len
 * bytes of payload (zeros if payload is NULL), PadCnt pad bytes to a multiple of 4 and the ICRC.
 */
int roce_build(uint8_t *buf, size_t cap, const struct roce_hdr_params *hp,
		const uint8_t *payload, uint32_t payload_len);

/** roce_build() restricted to data opcodes (SEND and RDMA WRITE families); -EINVAL otherwise. */
int roce_build_data(uint8_t *buf, size_t cap, const struct roce_hdr_params *hp,
		const uint8_t *payload, uint32_t payload_len);

/**
 * Build an RC ACKNOWLEDGE with AETH syndrome (ROCE_AETH_ACK | credits, ROCE_AETH_RNR_NAK | timer,
 * ROCE_AETH_NAK | code) and msn; hp->opcode is ignored.
 */
int roce_build_ack(uint8_t *buf, size_t cap, const struct roce_hdr_params *hp, uint8_t syndrome,
		uint32_t msn);

/** Build a RoCEv2 CNP (BTH opcode 0x81, BECN, 16 zero bytes). */
int roce_build_cnp(uint8_t *buf, size_t cap, const struct roce_cnp_params *p);

/** Build an 802.1Qbb PFC frame: class-enable vector (bit n = priority n) and 8 pause times. */
int roce_build_pfc(uint8_t *buf, size_t cap, const uint8_t src_mac[6], uint16_t enable_vector,
		const uint16_t quanta[8]);

/** Build an 802.3x PAUSE frame with one pause time in quanta of 512 bit times. */
int roce_build_pause(uint8_t *buf, size_t cap, const uint8_t src_mac[6], uint16_t quanta);

/**
 * Linux rdma_calc_flow_label() (include/rdma/ib_verbs.h, since 5.8): the 20-bit flow label of
 * an RC QP pair whose GRH flow label is 0, symmetric in the two QPNs.
 */
uint32_t roce_flow_label_from_qpns(uint32_t lqpn, uint32_t rqpn);

/** Linux rdma_flow_label_to_udp_sport(): fold a flow label into 0xC000..0xFFFF. */
uint16_t roce_udp_sport_from_flow_label(uint32_t flow_label);

/**
 * The UDP source port Linux RoCE drivers (mlx5 mlx5_set_path_udp_sport, hns, rxe, irdma) send
 * for a QP pair with a zero GRH flow label, as NCCL sets it:
 * rdma_flow_label_to_udp_sport(rdma_calc_flow_label(lqpn, rqpn)). Both directions of a pair
 * carry the same port.
 */
uint16_t roce_udp_sport_from_qpns(uint32_t lqpn, uint32_t rqpn);

#ifdef __cplusplus
}
#endif

#endif /* ROCE_BUILD_H */
