/* SPDX-License-Identifier: BSD-3-Clause */
/* Internal to lib/proto: not installed, not for other modules. */
#ifndef ROCE_INTERNAL_H
#define ROCE_INTERNAL_H

#include <stdint.h>

/* Extension headers after the BTH, in wire order. */
#define ROCE_EXT_RDETH		0x01
#define ROCE_EXT_DETH		0x02
#define ROCE_EXT_RETH		0x04
#define ROCE_EXT_ATOMICETH	0x08
#define ROCE_EXT_AETH		0x10
#define ROCE_EXT_ATOMICACKETH	0x20
#define ROCE_EXT_IMMDT		0x40
#define ROCE_EXT_IETH		0x80
#define ROCE_EXT_CNP		0x100	/* 16 reserved bytes */
#define ROCE_EXT_VALID		0x8000	/* opcode is defined */

/* Extension header set of an opcode (0 if undefined). */
extern const uint16_t roce_opcode_ext[256];

/* Total length of the extension headers of a set. */
uint32_t roce_ext_len(uint16_t ext);

/* murmur3 pieces: cheap, good avalanche once finished by roce_hash_fmix(). */
static inline uint32_t
roce_hash_mix(uint32_t h, uint32_t k)
{
	k *= 0xcc9e2d51u;
	k = (k << 15) | (k >> 17);
	k *= 0x1b873593u;
	h ^= k;
	h = (h << 13) | (h >> 19);
	return h * 5 + 0xe6546b64u;
}

static inline uint32_t
roce_hash_fmix(uint32_t h)
{
	h ^= h >> 16;
	h *= 0x85ebca6bu;
	h ^= h >> 13;
	h *= 0xc2b2ae35u;
	h ^= h >> 16;
	return h;
}

struct roce_pkt;

/* The flow_hash of a parsed packet (addresses, ports, DestQP). */
uint32_t roce_pkt_flow_hash(const struct roce_pkt *p);

/* Largest header block the parser reads: 2 VLAN tags, 60-byte IPv4, UDP, BTH, 40 B of ext. */
#define ROCE_MAX_HDR_LEN (ROCE_ETH_HDR_LEN + 2 * ROCE_VLAN_HDR_LEN + ROCE_IPV4_MAX_HDR_LEN + \
	ROCE_UDP_HDR_LEN + ROCE_BTH_LEN + 48)

#endif /* ROCE_INTERNAL_H */
