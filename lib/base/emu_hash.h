/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef EMU_HASH_H
#define EMU_HASH_H

#include <stdint.h>
#include <string.h>

/**
 * Signature of (16-byte IP address, QPN) for the small per-QP tables of stages: the murmur3
 * finaliser over the address words and the QPN; never 0 (0 marks an empty entry).
 */
static inline uint32_t
emu_ip_qpn_sig(const uint8_t *ip, uint32_t qpn)
{
	uint32_t h = qpn * 0x9e3779b1u, w;
	unsigned int i;

	for (i = 0; i < 16; i += 4) {
		memcpy(&w, ip + i, 4);
		h ^= w;
		h ^= h >> 16;
		h *= 0x85ebca6bu;
		h ^= h >> 13;
		h *= 0xc2b2ae35u;
		h ^= h >> 16;
	}
	return h == 0 ? 1 : h;
}

#endif
