/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef EMU_RNG_H
#define EMU_RNG_H

/**
 * @file
 * Seeded random streams handed to stages (DESIGN.md: randomness is an input).
 * xoshiro256** seeded through splitmix64: fast, 2^256 period, and each
 * (seed, stream) pair gives an independent, reproducible sequence.
 */

#include <stdint.h>

struct emu_rng {
	uint64_t s[4];
};

static inline uint64_t
emu_rng_splitmix64(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/** Seed @p rng for stream @p stream of run seed @p seed. */
static inline void
emu_rng_seed(struct emu_rng *rng, uint64_t seed, uint64_t stream)
{
	uint64_t x = seed ^ (stream * 0xd1b54a32d192ed03ULL);
	int i;

	for (i = 0; i < 4; i++)
		rng->s[i] = emu_rng_splitmix64(&x);
}

/**
 * The stream number of a named user of randomness (a stage's name, "tm"): FNV-1a of the name,
 * so that a stage's decisions depend on the seed and its own name only, never on where it sits
 * in the pipeline or what other stages there are (DESIGN.md: streams by name).
 */
static inline uint64_t
emu_rng_stream_of(const char *name)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	while (*name != '\0') {
		h ^= (uint8_t)*name++;
		h *= 0x100000001b3ULL;
	}
	return h;
}

static inline uint64_t
emu_rng_rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

/** Next 64 random bits. */
static inline uint64_t
emu_rng_u64(struct emu_rng *rng)
{
	uint64_t *s = rng->s;
	uint64_t result = emu_rng_rotl(s[1] * 5, 7) * 9;
	uint64_t t = s[1] << 17;

	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = emu_rng_rotl(s[3], 45);
	return result;
}

/** Uniform double in [0, 1) with 53 random bits. */
static inline double
emu_rng_uniform(struct emu_rng *rng)
{
	return (double)(emu_rng_u64(rng) >> 11) * 0x1.0p-53;
}

#endif
