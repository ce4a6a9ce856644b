/* SPDX-License-Identifier: BSD-3-Clause */
#include "roce_crc.h"
#include "roce_crc_shift_tables.h"
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

/*
 * GF(2) arithmetic mod P for the CRC "shift" (zlib's crc32_combine idea): polynomials in
 * zlib's reflected form, bit 31 = x^0 ... bit 0 = x^31. A CRC register s followed by n zero
 * bytes becomes s * x^(8n) mod P, so a change at distance n from the end of the covered bytes
 * changes the CRC by crc0(change) * x^(8n) mod P (crc0: no init, no final inversion).
 */
uint32_t
roce_crc32_multmod_bitwise(uint32_t a, uint32_t b)
{
	uint32_t m = 1u << 31, p = 0;

	/* zlib crc32.c multmodp(): add b * x^i for every x^i in a, b stepping by x each bit */
	while (m != 0) {
		if (a & m)
			p ^= b;
		m >>= 1;
		b = (b & 1) ? (b >> 1) ^ 0xEDB88320u : b >> 1;
	}
	return p;
}

/*
 * x^32 * v mod P for v reflected: the register v shifted through four zero bytes, i.e. a
 * slice-by-4 step with no data.
 */
static inline uint32_t
crc32_x32_mod(uint32_t v)
{
	return roce_crc32_tables[3][v & 0xFF] ^ roce_crc32_tables[2][(v >> 8) & 0xFF] ^
		roce_crc32_tables[1][(v >> 16) & 0xFF] ^ roce_crc32_tables[0][v >> 24];
}

#ifdef ROCE_CRC_X86
/*
 * a * b mod P with one carry-less multiply. In the reflected form the integer product of a and
 * b holds x^k at bit 62 - k; shifted left once, bit 63 is x^0: its high half is the product's
 * x^0..x^31 part, its low half L (in the same reflected form) stands for x^32 * L.
 */
__attribute__((target("pclmul,sse4.1"))) static uint32_t
crc32_multmod_clmul(uint32_t a, uint32_t b)
{
	__m128i x = _mm_clmulepi64_si128(_mm_cvtsi32_si128((int)a), _mm_cvtsi32_si128((int)b),
		0x00);
	uint64_t q = (uint64_t)_mm_cvtsi128_si64(x) << 1;

	return (uint32_t)(q >> 32) ^ crc32_x32_mod((uint32_t)q);
}
#endif

/* Without PCLMULQDQ, zlib's loop: 32 steps, still far from a CRC over kilobytes. */
static inline uint32_t
crc32_multmod(uint32_t a, uint32_t b, int clmul)
{
#ifdef ROCE_CRC_X86
	if (clmul)
		return crc32_multmod_clmul(a, b);
#else
	(void)clmul;
#endif
	return roce_crc32_multmod_bitwise(a, b);
}

uint32_t
roce_crc32_multmod(uint32_t a, uint32_t b)
{
	return crc32_multmod(a, b, roce_crc32_has_clmul());
}

uint32_t
roce_crc32_x8n(uint32_t n)
{
	return roce_crc32_shift(1u << 31, n);
}

uint32_t
roce_crc32_shift(uint32_t state, uint64_t n_bytes)
{
	int clmul = roce_crc32_has_clmul();

	while (n_bytes >= 65536) {	/* x^(8 * 65535) = hi[255] * lo[255] */
		state = crc32_multmod(state, roce_crc32_x8n_lo[255], clmul);
		state = crc32_multmod(state, roce_crc32_x8n_hi[255], clmul);
		n_bytes -= 65535;
	}
	if ((n_bytes & 0xFF) != 0)
		state = crc32_multmod(state, roce_crc32_x8n_lo[n_bytes & 0xFF], clmul);
	if ((n_bytes >> 8) != 0)
		state = crc32_multmod(state, roce_crc32_x8n_hi[n_bytes >> 8], clmul);
	return state;
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

/*
 * Fold the remaining 16-byte blocks (len a multiple of 16) into the 128-bit remainder x1, then
 * reduce it to the 32-bit CRC register (128 -> 64 bits, Barrett).
 */
__attribute__((target("pclmul,sse4.1"))) static uint32_t
crc32_fold_tail(__m128i x1, const uint8_t *buf, size_t len)
{
	__m128i x0, x2, x3, x5;

	x0 = _mm_load_si128((const __m128i *)(const void *)crc_k3k4);
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
	return crc32_fold_tail(x1, buf, len);
}

/*
 * The same folding four times wider: VPCLMULQDQ multiplies the four 128-bit lanes of a 512-bit
 * register at once, and four such registers (256 bytes) fold by 2048 bits per iteration, with
 * k = x^(2048+32) mod P and x^(2048-32) mod P, each written as bitreflect32(x^n mod P) << 1 like
 * k1..k4 above. The four registers then fold into one by 512 bits (k1, k2), its four lanes into
 * one by 128 bits (k3, k4), and crc32_fold_tail() finishes. The exact tests (test_crc.c) hold
 * every constant: a wrong one changes the CRC of every input long enough to use it.
 */
static const uint64_t crc_k2048[2] __attribute__((aligned(16))) = {
	0x011542778aULL, 0x01322d1430ULL };

#define CRC_AVX512_TARGET "avx512f,vpclmulqdq,pclmul,sse4.1"

/* x * x^d + y: the two 64-bit halves of every lane of x times their constants in k, plus y. */
__attribute__((target(CRC_AVX512_TARGET))) static inline __m512i
crc32_fold512(__m512i x, __m512i k, __m512i y)
{
	return _mm512_ternarylogic_epi64(_mm512_clmulepi64_epi128(x, k, 0x00),
		_mm512_clmulepi64_epi128(x, k, 0x11), y, 0x96);
}

/* Fold len bytes (len >= 256, a multiple of 16) into the running state. */
__attribute__((target(CRC_AVX512_TARGET))) static uint32_t
crc32_fold_vpclmul(uint32_t state, const uint8_t *buf, size_t len)
{
	__m512i z0, z1, z2, z3, k;
	__m128i x0, x1, x5;

	z0 = _mm512_loadu_si512((const void *)(buf + 0x00));
	z1 = _mm512_loadu_si512((const void *)(buf + 0x40));
	z2 = _mm512_loadu_si512((const void *)(buf + 0x80));
	z3 = _mm512_loadu_si512((const void *)(buf + 0xC0));
	z0 = _mm512_xor_si512(z0, _mm512_zextsi128_si512(_mm_cvtsi32_si128((int)state)));
	k = _mm512_broadcast_i32x4(_mm_load_si128((const __m128i *)(const void *)crc_k2048));
	buf += 256;
	len -= 256;

	while (len >= 256) {
		z0 = crc32_fold512(z0, k, _mm512_loadu_si512((const void *)(buf + 0x00)));
		z1 = crc32_fold512(z1, k, _mm512_loadu_si512((const void *)(buf + 0x40)));
		z2 = crc32_fold512(z2, k, _mm512_loadu_si512((const void *)(buf + 0x80)));
		z3 = crc32_fold512(z3, k, _mm512_loadu_si512((const void *)(buf + 0xC0)));
		buf += 256;
		len -= 256;
	}

	/* Four registers into one, then what is left in 64-byte blocks. */
	k = _mm512_broadcast_i32x4(_mm_load_si128((const __m128i *)(const void *)crc_k1k2));
	z0 = crc32_fold512(z0, k, z1);
	z0 = crc32_fold512(z0, k, z2);
	z0 = crc32_fold512(z0, k, z3);
	while (len >= 64) {
		z0 = crc32_fold512(z0, k, _mm512_loadu_si512((const void *)buf));
		buf += 64;
		len -= 64;
	}

	/* The four lanes into one. */
	x0 = _mm_load_si128((const __m128i *)(const void *)crc_k3k4);
	x1 = _mm512_extracti32x4_epi32(z0, 0);
	x5 = _mm_clmulepi64_si128(x1, x0, 0x00);
	x1 = _mm_clmulepi64_si128(x1, x0, 0x11);
	x1 = _mm_xor_si128(_mm_xor_si128(x1, _mm512_extracti32x4_epi32(z0, 1)), x5);
	x5 = _mm_clmulepi64_si128(x1, x0, 0x00);
	x1 = _mm_clmulepi64_si128(x1, x0, 0x11);
	x1 = _mm_xor_si128(_mm_xor_si128(x1, _mm512_extracti32x4_epi32(z0, 2)), x5);
	x5 = _mm_clmulepi64_si128(x1, x0, 0x00);
	x1 = _mm_clmulepi64_si128(x1, x0, 0x11);
	x1 = _mm_xor_si128(_mm_xor_si128(x1, _mm512_extracti32x4_epi32(z0, 3)), x5);
	return crc32_fold_tail(x1, buf, len);
}

int
roce_crc32_has_vpclmul(void)
{
	return roce_crc32_has_clmul() && __builtin_cpu_supports("avx512f") &&
		__builtin_cpu_supports("vpclmulqdq");
}

uint32_t
roce_crc32_update_vpclmul(uint32_t state, const void *buf, size_t len)
{
	const uint8_t *p = buf;

	if (len >= 256) {
		size_t n = len & ~(size_t)15;

		state = crc32_fold_vpclmul(state, p, n);
		p += n;
		len -= n;
	}
	return roce_crc32_update_clmul(state, p, len);
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
	if (len >= 256 && roce_crc32_has_vpclmul())
		return roce_crc32_update_vpclmul(state, buf, len);
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

int
roce_crc32_has_vpclmul(void)
{
	return 0;
}

uint32_t
roce_crc32_update_vpclmul(uint32_t state, const void *buf, size_t len)
{
	return roce_crc32_update_table(state, buf, len);
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
