/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * CRC-32 of the IEEE 802.3 / zlib kind (reflected polynomial 0xEDB88320), with a seedable
 * running state so that the ICRC can be computed over a masked header copy followed by the
 * payload in place.
 *
 * Why not rte_net_crc_calc(): DPDK 22.11 only offers a one-shot call (init all ones, final
 * inversion, no seed), so a CRC over two discontiguous pieces would need a crc32_combine()
 * step (a GF(2) multiply by x^(8 * len) mod P per packet) or a temporary in-place masking of
 * the frame (impossible on a const or shared buffer). This module runs the same PCLMULQDQ
 * folding as DPDK (Intel, "Fast CRC Computation for Generic Polynomials Using PCLMULQDQ",
 * 2009), but takes a running state. Chosen at run time from cpuid: on CPUs with AVX-512
 * VPCLMULQDQ, sixteen 128-bit lanes (four 512-bit registers, 256 bytes per iteration);
 * else four 128-bit PCLMULQDQ lanes (64 bytes); else slice-by-8 tables, which also take the
 * short tails. tests/bench/bench_proto.c compares them.
 */
#ifndef ROCE_CRC_H
#define ROCE_CRC_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Initial running state of a CRC-32 computation. */
#define ROCE_CRC32_INIT 0xFFFFFFFFu

/**
 * Feed len bytes into a running CRC-32 state (no inversion on entry or exit) and return the
 * new state; the CRC of the whole input is ~state. Uses VPCLMULQDQ or PCLMULQDQ when the CPU
 * has it.
 */
uint32_t roce_crc32_update(uint32_t state, const void *buf, size_t len);

/** Same as roce_crc32_update() with slice-by-8 tables only (portable reference path). */
uint32_t roce_crc32_update_table(uint32_t state, const void *buf, size_t len);

/** Same as roce_crc32_update() one byte at a time with one table (the classic baseline). */
uint32_t roce_crc32_update_bytewise(uint32_t state, const void *buf, size_t len);

/** Same as roce_crc32_update() with PCLMULQDQ folding; call only if roce_crc32_has_clmul(). */
uint32_t roce_crc32_update_clmul(uint32_t state, const void *buf, size_t len);

/** Return 1 if this CPU runs the PCLMULQDQ path of roce_crc32_update(), else 0. */
int roce_crc32_has_clmul(void);

/**
 * Same as roce_crc32_update() with VPCLMULQDQ folding on 512-bit registers (AVX-512), 256 bytes
 * per iteration, the PCLMULQDQ path for the rest; call only if roce_crc32_has_vpclmul().
 */
uint32_t roce_crc32_update_vpclmul(uint32_t state, const void *buf, size_t len);

/** Return 1 if this CPU (and OS) runs the AVX-512 VPCLMULQDQ path, else 0. */
int roce_crc32_has_vpclmul(void);

/** Return the table entry tables[k][b] the slice-by-8 path uses (for the table self-test). */
uint32_t roce_crc32_table_entry(unsigned int k, unsigned int b);

/**
 * a * b mod P for two polynomials in zlib's reflected form (bit 31 is x^0, bit 0 is x^31),
 * with PCLMULQDQ when the CPU has it.
 */
uint32_t roce_crc32_multmod(uint32_t a, uint32_t b);

/** Same as roce_crc32_multmod() one bit at a time (zlib's multmodp(), the reference). */
uint32_t roce_crc32_multmod_bitwise(uint32_t a, uint32_t b);

/** x^(8 n) mod P, reflected: the operator of n zero bytes (roce_crc32_shift(1 << 31, n)). */
uint32_t roce_crc32_x8n(uint32_t n);

/**
 * A running CRC-32 state followed by n zero bytes, in a few table lookups and carry-less
 * multiplies instead of n byte steps: equal to roce_crc32_update(state, zeros, n). CRC-32 is
 * linear, so this moves the effect of a change at distance n from the end of the data to the
 * end (zlib's crc32_combine()), which is how roce_icrc_patch() updates an ICRC.
 */
uint32_t roce_crc32_shift(uint32_t state, uint64_t n_bytes);

/** CRC-32 of a buffer, as zlib's crc32(0, buf, len) returns it. */
static inline uint32_t
roce_crc32(const void *buf, size_t len)
{
	return ~roce_crc32_update(ROCE_CRC32_INIT, buf, len);
}

#ifdef __cplusplus
}
#endif

#endif /* ROCE_CRC_H */
