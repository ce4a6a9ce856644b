/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef FAB_HASH_H
#define FAB_HASH_H

/**
 * @file
 * ECMP hash functions as switches and simulators compute them, over a chosen set of header
 * fields, with a seed; the fabric picks a next hop with fab_hash_pick(). docs/ecmp-hash.md
 * says what each function is, where it comes from and how the seed enters.
 *
 * Pure functions of a parsed packet (struct roce_pkt) or of a plain tuple: no EAL, no
 * allocation, no globals. The configuration (fab_hash_parse(), in fab_hash_cfg.c) is apart
 * from the datapath (fab_hash.c).
 */

#include <stdint.h>

#include <jansson.h>

#include "lib/base/emu_err.h"

#ifdef __cplusplus
extern "C" {
#endif

struct roce_pkt;

/** Hash functions; names in fab_hash_fn_name(). */
enum fab_hash_fn {
	FAB_HASH_CRC16_CCITT,	/**< "crc16_ccitt": CRC-16/CCITT-FALSE, 16 bits */
	FAB_HASH_CRC32_LO,	/**< "crc32_lo": low 16 bits of the IEEE 802.3 CRC-32 */
	FAB_HASH_CRC32_HI,	/**< "crc32_hi": high 16 bits of the IEEE 802.3 CRC-32 */
	FAB_HASH_XOR,		/**< "xor": XOR of the key's 16-bit words, 16 bits */
	FAB_HASH_TOEPLITZ,	/**< "toeplitz": RSS Toeplitz (DPDK rte_softrss), 32 bits */
	FAB_HASH_MURMUR3,	/**< "murmur3": MurmurHash3_x86_32 as HPCC's ns-3, 32 bits */
	FAB_HASH_FN_MAX
};

/** Header fields a hash may cover (bit mask); names in fab_hash_field_name(). */
#define FAB_HASH_F_SRC_IP	(1u << 0)	/**< "src_ip": IPv4 or IPv6 (GRH) source */
#define FAB_HASH_F_DST_IP	(1u << 1)	/**< "dst_ip" */
#define FAB_HASH_F_SRC_PORT	(1u << 2)	/**< "src_port": UDP source port (RoCE's entropy) */
#define FAB_HASH_F_DST_PORT	(1u << 3)	/**< "dst_port" */
#define FAB_HASH_F_DEST_QP	(1u << 4)	/**< "dest_qp": BTH DestQP (SAI RDMA_BTH_DEST_QP) */
#define FAB_HASH_F_PROTOCOL	(1u << 5)	/**< "protocol": IP protocol / next header */
#define FAB_HASH_F_ALL		0x3Fu
/** The default: the 5-tuple. */
#define FAB_HASH_F_5TUPLE	(FAB_HASH_F_SRC_IP | FAB_HASH_F_DST_IP | FAB_HASH_F_SRC_PORT | \
	FAB_HASH_F_DST_PORT | FAB_HASH_F_PROTOCOL)
#define FAB_HASH_N_FIELDS	6

/**
 * Toeplitz key length: Microsoft's 40 bytes cover 9 input words (the IPv6 4-tuple); 4 more
 * for the 10th, the DestQP/protocol word.
 */
#define FAB_HASH_TOEPLITZ_KEY_LEN 44
#define FAB_HASH_MAX_BUCKETS 4096 /**< a resilient table's buckets at most */

/** A flow's header fields, network values in host integers, addresses as bytes. */
struct fab_tuple {
	uint8_t ip_version;	/**< 4 (addresses in the first 4 bytes) or 6 */
	uint8_t protocol;
	uint16_t src_port;
	uint16_t dst_port;
	uint32_t dest_qp;	/**< 24 bits */
	uint8_t src_ip[16];
	uint8_t dst_ip[16];
};

/** A hash: function, fields, seed, output rotation. Fill with fab_hash_cfg_init(). */
struct fab_hash_cfg {
	enum fab_hash_fn fn;
	uint32_t fields;	/**< FAB_HASH_F_* */
	uint32_t seed;
	uint8_t bit_offset;	/**< rotate the result right by this, within fab_hash_width() */
	/** resilient hashing: a table of this many buckets picks the next hop (0: hash mod the
	 * next hops up; lib/fabric fab_res.c) */
	uint16_t res_buckets;
	/** Toeplitz key from the seed (Microsoft's key when 0), as rte_softrss() takes it */
	uint8_t toeplitz_key[FAB_HASH_TOEPLITZ_KEY_LEN] __attribute__((aligned(4)));
	/** the same converted by rte_convert_rss_key(), for rte_softrss_be() */
	uint8_t toeplitz_key_be[FAB_HASH_TOEPLITZ_KEY_LEN] __attribute__((aligned(4)));
};

/**
 * Set @p cfg to function @p fn over @p fields with @p seed and no bit offset; derives the
 * Toeplitz key. Returns 0, or -EINVAL for an unknown function or an empty or unknown field set.
 */
int fab_hash_cfg_init(struct fab_hash_cfg *cfg, enum fab_hash_fn fn, uint32_t fields,
		uint32_t seed);

/**
 * Read a hash object {"function": NAME, "fields": [NAME, ...], "seed": N, "bit_offset": N,
 * "resilient_buckets": N} at JSON path @p path into @p out. Every key is optional:
 * crc16_ccitt, the 5-tuple, seed 0, offset 0, no resilient table. Unknown keys, functions and fields, repeated fields, a seed outside
 * 0..4294967295 and an offset outside 0..width-1 fail with a message that starts with the
 * path of the offending value. Returns 0 or -EINVAL.
 */
int fab_hash_parse(const json_t *obj, const char *path, struct fab_hash_cfg *out,
		struct emu_err *err);

/** Hash of a plain tuple: 16-bit functions return 0..65535, the others 32 bits. */
uint32_t fab_hash_tuple(const struct fab_hash_cfg *cfg, const struct fab_tuple *t);

/**
 * The tuple of a parsed packet: addresses and ports as parsed (a RoCEv1 GRH counts as IPv6);
 * protocol 17 for RoCEv2, 0x1B (the GRH next header) for RoCEv1, 0 otherwise; DestQP of a
 * RoCE packet, else 0.
 */
void fab_tuple_from_pkt(const struct roce_pkt *p, struct fab_tuple *t);

/** fab_hash_tuple() of fab_tuple_from_pkt(p). */
uint32_t fab_hash(const struct fab_hash_cfg *cfg, const struct roce_pkt *p);

/**
 * Next hop 0..n-1 for hash @p h: h modulo n, as switches index an ECMP group and HPCC's ns-3
 * does (EcmpHash() % nexthops). Not the multiply-high trick ((uint64_t)h * n >> 32): half of
 * the functions give 16-bit values, whose high bits are zero, and modulo keeps the low-bit
 * behaviour of hardware (polarization included). Bias for n not a power of two: at most
 * n / 65536 relative for a 16-bit hash. n == 0 gives 0.
 */
static inline unsigned int
fab_hash_pick(uint32_t h, unsigned int n)
{
	if ((n & (n - 1)) == 0) /* 0, 1, 2, 4, ...: the same, without a division */
		return n == 0 ? 0 : h & (n - 1);
	return h % n;
}

/** Bits in the function's result (16 or 32); 0 for an unknown function. */
unsigned int fab_hash_width(enum fab_hash_fn fn);

/** Name of a function ("crc16_ccitt", ...); NULL if out of range. */
const char *fab_hash_fn_name(enum fab_hash_fn fn);

/** Function of a name, or -1. */
int fab_hash_fn_from_name(const char *name);

/** Name of field bit @p i (0..FAB_HASH_N_FIELDS-1: "src_ip", ...); NULL if out of range. */
const char *fab_hash_field_name(unsigned int i);

/** CRC-16/CCITT-FALSE register update (poly 0x1021, MSB first, no reflection). */
uint16_t fab_crc16_ccitt(uint16_t crc, const uint8_t *buf, uint32_t len);

/** MurmurHash3_x86_32 (Appleby, SMHasher) of @p len bytes with @p seed. */
uint32_t fab_murmur3_32(const uint8_t *key, uint32_t len, uint32_t seed);

#ifdef __cplusplus
}
#endif

#endif /* FAB_HASH_H */
