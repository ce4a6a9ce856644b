/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Wire constants of the formats lib/proto handles and byte accessors for them.
 * Wire structures are byte arrays read through these accessors: no bit-fields,
 * no packed structs, no alignment assumptions.
 */
#ifndef ROCE_WIRE_H
#define ROCE_WIRE_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Ethernet */
#define ROCE_ETH_HDR_LEN	14
#define ROCE_VLAN_HDR_LEN	4
#define ROCE_ETH_MIN_FRAME	60	/**< minimum frame length without FCS */
#define ROCE_MAX_VLANS		2
#define ROCE_ETHERTYPE_IPV4	0x0800
#define ROCE_ETHERTYPE_ARP	0x0806
#define ROCE_ETHERTYPE_VLAN	0x8100
#define ROCE_ETHERTYPE_QINQ	0x88A8
#define ROCE_ETHERTYPE_QINQ_OLD	0x9100
#define ROCE_ETHERTYPE_IPV6	0x86DD
#define ROCE_ETHERTYPE_MACCTL	0x8808	/**< DPDK 22.11 has no constant for it */
#define ROCE_ETHERTYPE_LLDP	0x88CC
#define ROCE_ETHERTYPE_ROCEV1	0x8915

/* MAC control (802.3x PAUSE, 802.1Qbb PFC) */
#define ROCE_MACCTL_OP_PAUSE	0x0001
#define ROCE_MACCTL_OP_PFC	0x0101
#define ROCE_MACCTL_PAUSE_LEN	4	/**< opcode + one time */
#define ROCE_MACCTL_PFC_LEN	20	/**< opcode + enable vector + 8 times */

/* IP / UDP */
#define ROCE_IPV4_HDR_LEN	20
#define ROCE_IPV4_MAX_HDR_LEN	60
#define ROCE_IPV6_HDR_LEN	40
#define ROCE_IPPROTO_UDP	17
#define ROCE_IPPROTO_TCP	6
#define ROCE_IPPROTO_ICMPV6	58
#define ROCE_IPV4_DF		0x4000
#define ROCE_IPV4_MF		0x2000
#define ROCE_IPV4_FRAG_OFF_MASK	0x1FFF
#define ROCE_UDP_HDR_LEN	8
#define ROCE_UDP_PORT		4791	/**< IANA RoCEv2 port */

/* InfiniBand transport */
#define ROCE_GRH_LEN		40	/**< RoCEv1 global route header */
#define ROCE_GRH_NXT_BTH	0x1B	/**< GRH next header for an IBA transport header */
#define ROCE_BTH_LEN		12
#define ROCE_ICRC_LEN		4
#define ROCE_RDETH_LEN		4
#define ROCE_DETH_LEN		8
#define ROCE_RETH_LEN		16
#define ROCE_ATOMICETH_LEN	28
#define ROCE_AETH_LEN		4
#define ROCE_ATOMICACKETH_LEN	8
#define ROCE_IMMDT_LEN		4
#define ROCE_IETH_LEN		4
#define ROCE_CNP_RSVD_LEN	16	/**< reserved bytes after the BTH of a CNP */
#define ROCE_PSN_MASK		0xFFFFFFu
#define ROCE_QPN_MASK		0xFFFFFFu

/* BTH byte 1 */
#define ROCE_BTH_SE		0x80
#define ROCE_BTH_MIGREQ		0x40
#define ROCE_BTH_PADCNT_SHIFT	4
#define ROCE_BTH_TVER_MASK	0x0F
/* BTH byte 4 */
#define ROCE_BTH_FECN		0x80
#define ROCE_BTH_BECN		0x40
/* BTH byte 8 */
#define ROCE_BTH_ACKREQ		0x80

/* Transport families: opcode bits 7:5 (value of opcode & 0xE0). */
#define ROCE_TRANSPORT_RC	0x00
#define ROCE_TRANSPORT_UC	0x20
#define ROCE_TRANSPORT_RD	0x40
#define ROCE_TRANSPORT_UD	0x60
#define ROCE_TRANSPORT_CNP	0x80
#define ROCE_TRANSPORT_MASK	0xE0

/* Operations: opcode bits 4:0, OR them with a ROCE_TRANSPORT_* value. */
#define ROCE_OP_SEND_FIRST			0x00
#define ROCE_OP_SEND_MIDDLE			0x01
#define ROCE_OP_SEND_LAST			0x02
#define ROCE_OP_SEND_LAST_WITH_IMMEDIATE	0x03
#define ROCE_OP_SEND_ONLY			0x04
#define ROCE_OP_SEND_ONLY_WITH_IMMEDIATE	0x05
#define ROCE_OP_RDMA_WRITE_FIRST		0x06
#define ROCE_OP_RDMA_WRITE_MIDDLE		0x07
#define ROCE_OP_RDMA_WRITE_LAST			0x08
#define ROCE_OP_RDMA_WRITE_LAST_WITH_IMMEDIATE	0x09
#define ROCE_OP_RDMA_WRITE_ONLY			0x0A
#define ROCE_OP_RDMA_WRITE_ONLY_WITH_IMMEDIATE	0x0B
#define ROCE_OP_RDMA_READ_REQUEST		0x0C
#define ROCE_OP_RDMA_READ_RESPONSE_FIRST	0x0D
#define ROCE_OP_RDMA_READ_RESPONSE_MIDDLE	0x0E
#define ROCE_OP_RDMA_READ_RESPONSE_LAST		0x0F
#define ROCE_OP_RDMA_READ_RESPONSE_ONLY		0x10
#define ROCE_OP_ACKNOWLEDGE			0x11
#define ROCE_OP_ATOMIC_ACKNOWLEDGE		0x12
#define ROCE_OP_COMPARE_SWAP			0x13
#define ROCE_OP_FETCH_ADD			0x14
#define ROCE_OP_RESYNC				0x15	/**< RD only */
#define ROCE_OP_SEND_LAST_WITH_INVALIDATE	0x16	/**< RC only */
#define ROCE_OP_SEND_ONLY_WITH_INVALIDATE	0x17	/**< RC only */
#define ROCE_OP_MASK				0x1F

/* Full opcodes used by name in the emulator. */
#define ROCE_OPCODE_RC_ACK	(ROCE_TRANSPORT_RC | ROCE_OP_ACKNOWLEDGE)	/* 0x11 */
#define ROCE_OPCODE_CNP		0x81
/* The manufacturer-specific range (transport bits 110 and 111: opcodes 0xC0-0xFF) carries no
 * IBA operation; rocegen's SRD-like transport (lib/endpoint/ep_srd.h) uses two of it. */
#define ROCE_OPCODE_VENDOR_FIRST	0xC0
#define ROCE_OPCODE_SRD_DATA	0xC0
#define ROCE_OPCODE_SRD_SACK	0xC1

/* AETH syndrome: bits 6:5 select the kind, bits 4:0 carry credit, timer or NAK code. */
#define ROCE_AETH_ACK		0x00	/**< | credit count (0x1F: unlimited) */
#define ROCE_AETH_RNR_NAK	0x20	/**< | RNR timer */
#define ROCE_AETH_NAK		0x60	/**< | NAK code */
#define ROCE_AETH_KIND_MASK	0x60
#define ROCE_AETH_CODE_MASK	0x1F
#define ROCE_AETH_CREDIT_UNLIMITED	0x1F
#define ROCE_NAK_PSN_SEQ_ERR	0x00
#define ROCE_NAK_INVALID_REQ	0x01
#define ROCE_NAK_REMOTE_ACCESS	0x02
#define ROCE_NAK_REMOTE_OP	0x03
#define ROCE_NAK_INVALID_RD_REQ	0x04

/** Kinds of AETH, from the syndrome's bits 6:5 (0x40 is reserved). */
enum roce_aeth_kind {
	ROCE_AETH_KIND_ACK = 0,
	ROCE_AETH_KIND_RNR_NAK = 1,
	ROCE_AETH_KIND_RESERVED = 2,
	ROCE_AETH_KIND_NAK = 3,
};

/** Load a big-endian 16-bit value from unaligned bytes. */
static inline uint16_t
roce_get_be16(const uint8_t *b)
{
	return (uint16_t)((uint16_t)b[0] << 8 | b[1]);
}

/** Load a big-endian 24-bit value from unaligned bytes. */
static inline uint32_t
roce_get_be24(const uint8_t *b)
{
	return (uint32_t)b[0] << 16 | (uint32_t)b[1] << 8 | b[2];
}

/** Load a big-endian 32-bit value from unaligned bytes. */
static inline uint32_t
roce_get_be32(const uint8_t *b)
{
	return (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3];
}

/** Load a big-endian 64-bit value from unaligned bytes. */
static inline uint64_t
roce_get_be64(const uint8_t *b)
{
	return (uint64_t)roce_get_be32(b) << 32 | roce_get_be32(b + 4);
}

/** Load a little-endian 32-bit value (the ICRC's wire order) from unaligned bytes. */
static inline uint32_t
roce_get_le32(const uint8_t *b)
{
	return (uint32_t)b[3] << 24 | (uint32_t)b[2] << 16 | (uint32_t)b[1] << 8 | b[0];
}

/** Store a big-endian 16-bit value to unaligned bytes. */
static inline void
roce_put_be16(uint8_t *b, uint16_t v)
{
	b[0] = (uint8_t)(v >> 8);
	b[1] = (uint8_t)v;
}

/** Store a big-endian 24-bit value (the low 24 bits of v) to unaligned bytes. */
static inline void
roce_put_be24(uint8_t *b, uint32_t v)
{
	b[0] = (uint8_t)(v >> 16);
	b[1] = (uint8_t)(v >> 8);
	b[2] = (uint8_t)v;
}

/** Store a big-endian 32-bit value to unaligned bytes. */
static inline void
roce_put_be32(uint8_t *b, uint32_t v)
{
	b[0] = (uint8_t)(v >> 24);
	b[1] = (uint8_t)(v >> 16);
	b[2] = (uint8_t)(v >> 8);
	b[3] = (uint8_t)v;
}

/** Store a big-endian 64-bit value to unaligned bytes. */
static inline void
roce_put_be64(uint8_t *b, uint64_t v)
{
	roce_put_be32(b, (uint32_t)(v >> 32));
	roce_put_be32(b + 4, (uint32_t)v);
}

/** Store a little-endian 32-bit value (the ICRC's wire order) to unaligned bytes. */
static inline void
roce_put_le32(uint8_t *b, uint32_t v)
{
	b[0] = (uint8_t)v;
	b[1] = (uint8_t)(v >> 8);
	b[2] = (uint8_t)(v >> 16);
	b[3] = (uint8_t)(v >> 24);
}

#ifdef __cplusplus
}
#endif

#endif /* ROCE_WIRE_H */
