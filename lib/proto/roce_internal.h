/* SPDX-License-Identifier: BSD-3-Clause */
/* Internal to lib/proto: not installed, not for other modules (the parse stage reaches it only
 * through roce_parse_fast.h, the parser's inline fast path). */
#ifndef ROCE_INTERNAL_H
#define ROCE_INTERNAL_H

#include <stdint.h>

#include "roce_wire.h"

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

/* Total length of the extension headers of a set (inline: the parser asks once a packet). */
static inline uint32_t
roce_ext_len(uint16_t ext)
{
	uint32_t n = 0;

	if (ext & ROCE_EXT_RDETH)
		n += ROCE_RDETH_LEN;
	if (ext & ROCE_EXT_DETH)
		n += ROCE_DETH_LEN;
	if (ext & ROCE_EXT_RETH)
		n += ROCE_RETH_LEN;
	if (ext & ROCE_EXT_ATOMICETH)
		n += ROCE_ATOMICETH_LEN;
	if (ext & ROCE_EXT_AETH)
		n += ROCE_AETH_LEN;
	if (ext & ROCE_EXT_ATOMICACKETH)
		n += ROCE_ATOMICACKETH_LEN;
	if (ext & ROCE_EXT_IMMDT)
		n += ROCE_IMMDT_LEN;
	if (ext & ROCE_EXT_IETH)
		n += ROCE_IETH_LEN;
	if (ext & ROCE_EXT_CNP)
		n += ROCE_CNP_RSVD_LEN;
	return n;
}

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


/* Largest header block the parser reads: 2 VLAN tags, 60-byte IPv4, UDP, BTH, 40 B of ext. */
#define ROCE_MAX_HDR_LEN (ROCE_ETH_HDR_LEN + 2 * ROCE_VLAN_HDR_LEN + ROCE_IPV4_MAX_HDR_LEN + \
	ROCE_UDP_HDR_LEN + ROCE_BTH_LEN + 48)

#endif /* ROCE_INTERNAL_H */
