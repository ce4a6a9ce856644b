/* SPDX-License-Identifier: BSD-3-Clause */
#include "roce_crc.h"
#include "roce_crc_tables.h"

#if defined(__x86_64__) || defined(__i386__)
#define ROCE_CRC_X86 1
#include <immintrin.h>
#endif

uint32_t
roce_crc32_table_entry(unsigned int k, unsigned int b)
{
	return roce_crc32_tables[k & 7][b & 0xFF];
}

uint32_t
roce_crc32_update_bytewise(uint32_t state, const void *buf, size_t len)
{
	const uint8_t *p = buf;

	while (len-- > 0)
		state = roce_crc32_tables[0][(state ^ *p++) & 0xFF] ^ (state >> 8);
	return state;
}

static inline uint32_t
crc_load_le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

uint32_t
roce_crc32_update_table(uint32_t state, const void *buf, size_t len)
{
	const uint8_t *p = buf;

	while (len >= 8) {
		uint32_t lo = crc_load_le32(p) ^ state;
		uint32_t hi = crc_load_le32(p + 4);

		state = roce_crc32_tables[7][lo & 0xFF] ^
			roce_crc32_tables[6][(lo >> 8) & 0xFF] ^
			roce_crc32_tables[5][(lo >> 16) & 0xFF] ^
			roce_crc32_tables[4][lo >> 24] ^
			roce_crc32_tables[3][hi & 0xFF] ^
			roce_crc32_tables[2][(hi >> 8) & 0xFF] ^
			roce_crc32_tables[1][(hi >> 16) & 0xFF] ^
			roce_crc32_tables[0][hi >> 24];
		p += 8;
		len -= 8;
	}
	return roce_crc32_update_bytewise(state, p, len);
}

#ifdef ROCE_CRC_X86

/*
 * Folding constants for the bit-reflected polynomial 0x1DB710641, from the Intel paper
 * (the same values zlib-ng, Chromium's zlib and DPDK use):
 * k1 = x^(4*128+32) mod P, k2 = x^(4*128-32) mod P  (fold by 512 bits),
 * k3 = x^(128+32) mod P,   k4 = x^(128-32) mod P    (fold by 128 bits),
 * k5 = x^64 mod P, and the Barrett constants P' and mu.
 */
static const uint64_t crc_k1k2[2] __attribute__((aligned(16))) = {
	0x0154442bd4ULL, 0x01c6e41596ULL };
static const uint64_t crc_k3k4[2] __attribute__((aligned(16))) = {
	0x01751997d0ULL, 0x00ccaa009eULL };
static const uint64_t crc_k5k0[2] __attribute__((aligned(16))) = {
	0x0163cd6124ULL, 0x0000000000ULL };
static const uint64_t crc_poly[2] __attribute__((aligned(16))) = {
	0x01db710641ULL, 0x01f7011641ULL };

/* Fold len bytes (len >= 64, a multiple of 16) into the running state. */
__attribute__((target("pclmul,sse4.1"))) static uint32_t
crc32_fold_clmul(uint32_t state, const uint8_t *buf, size_t len)
{
	__m128i x0, x1, x2, x3, x4, x5, x6, x7, x8, y5, y6, y7, y8;

	x1 = _mm_loadu_si128((const __m128i *)(const void *)(buf + 0x00));
	x2 = _mm_loadu_si128((const __m128i *)(const void *)(buf + 0x10));
	x3 = _mm_loadu_si128((const __m128i *)(const void *)(buf + 0x20));
	x4 = _mm_loadu_si128((const __m128i *)(const void *)(buf + 0x30));
	x1 = _mm_xor_si128(x1, _mm_cvtsi32_si128((int)state));
	x0 = _mm_load_si128((const __m128i *)(const void *)crc_k1k2);
	buf += 64;
	len -= 64;

	/* Four independent lanes hide the PCLMULQDQ latency. */
	while (len >= 64) {
		x5 = _mm_clmulepi64_si128(x1, x0, 0x00);
		x6 = _mm_clmulepi64_si128(x2, x0, 0x00);
		x7 = _mm_clmulepi64_si128(x3, x0, 0x00);
		x8 = _mm_clmulepi64_si128(x4, x0, 0x00);
		x1 = _mm_clmulepi64_si128(x1, x0, 0x11);
		x2 = _mm_clmulepi64_si128(x2, x0, 0x11);
		x3 = _mm_clmulepi64_si128(x3, x0, 0x11);
		x4 = _mm_clmulepi64_si128(x4, x0, 0x11);
		y5 = _mm_loadu_si128((const __m128i *)(const void *)(buf + 0x00));
		y6 = _mm_loadu_si128((const __m128i *)(const void *)(buf + 0x10));
		y7 = _mm_loadu_si128((const __m128i *)(const void *)(buf + 0x20));
		y8 = _mm_loadu_si128((const __m128i *)(const void *)(buf + 0x30));
		x1 = _mm_xor_si128(_mm_xor_si128(x1, x5), y5);
		x2 = _mm_xor_si128(_mm_xor_si128(x2, x6), y6);
		x3 = _mm_xor_si128(_mm_xor_si128(x3, x7), y7);
		x4 = _mm_xor_si128(_mm_xor_si128(x4, x8), y8);
		buf += 64;
		len -= 64;
	}

	/* Fold the four lanes into one. */
	x0 = _mm_load_si128((const __m128i *)(const void *)crc_k3k4);
	x5 = _mm_clmulepi64_si128(x1, x0, 0x00);
	x1 = _mm_clmulepi64_si128(x1, x0, 0x11);
	x1 = _mm_xor_si128(_mm_xor_si128(x1, x2), x5);
	x5 = _mm_clmulepi64_si128(x1, x0, 0x00);
	x1 = _mm_clmulepi64_si128(x1, x0, 0x11);
	x1 = _mm_xor_si128(_mm_xor_si128(x1, x3), x5);
	x5 = _mm_clmulepi64_si128(x1, x0, 0x00);
	x1 = _mm_clmulepi64_si128(x1, x0, 0x11);
	x1 = _mm_xor_si128(_mm_xor_si128(x1, x4), x5);

	while (len >= 16) {
		x2 = _mm_loadu_si128((const __m128i *)(const void *)buf);
		x5 = _mm_clmulepi64_si128(x1, x0, 0x00);
		x1 = _mm_clmulepi64_si128(x1, x0, 0x11);
		x1 = _mm_xor_si128(_mm_xor_si128(x1, x2), x5);
		buf += 16;
		len -= 16;
	}

	/* 128 -> 64 bits. */
	x2 = _mm_clmulepi64_si128(x1, x0, 0x10);
	x3 = _mm_setr_epi32(~0, 0, ~0, 0);
	x1 = _mm_srli_si128(x1, 8);
	x1 = _mm_xor_si128(x1, x2);
	x0 = _mm_loadl_epi64((const __m128i *)(const void *)crc_k5k0);
	x2 = _mm_srli_si128(x1, 4);
	x1 = _mm_and_si128(x1, x3);
	x1 = _mm_clmulepi64_si128(x1, x0, 0x00);
	x1 = _mm_xor_si128(x1, x2);

	/* Barrett reduction to 32 bits. */
	x0 = _mm_load_si128((const __m128i *)(const void *)crc_poly);
	x2 = _mm_and_si128(x1, x3);
	x2 = _mm_clmulepi64_si128(x2, x0, 0x10);
	x2 = _mm_and_si128(x2, x3);
	x2 = _mm_clmulepi64_si128(x2, x0, 0x00);
	x1 = _mm_xor_si128(x1, x2);
	return (uint32_t)_mm_extract_epi32(x1, 1);
}

int
roce_crc32_has_clmul(void)
{
	return __builtin_cpu_supports("pclmul") && __builtin_cpu_supports("sse4.1");
}

uint32_t
roce_crc32_update_clmul(uint32_t state, const void *buf, size_t len)
{
	const uint8_t *p = buf;

	if (len >= 64) {
		size_t n = len & ~(size_t)15;

		state = crc32_fold_clmul(state, p, n);
		p += n;
		len -= n;
	}
	return roce_crc32_update_table(state, p, len);
}

uint32_t
roce_crc32_update(uint32_t state, const void *buf, size_t len)
{
	if (len >= 64 && roce_crc32_has_clmul())
		return roce_crc32_update_clmul(state, buf, len);
	return roce_crc32_update_table(state, buf, len);
}

#else /* !ROCE_CRC_X86 */

int
roce_crc32_has_clmul(void)
{
	return 0;
}

uint32_t
roce_crc32_update_clmul(uint32_t state, const void *buf, size_t len)
{
	return roce_crc32_update_table(state, buf, len);
}

uint32_t
roce_crc32_update(uint32_t state, const void *buf, size_t len)
{
	return roce_crc32_update_table(state, buf, len);
}

#endif /* ROCE_CRC_X86 */
