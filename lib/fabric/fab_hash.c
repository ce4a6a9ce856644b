/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ECMP hash functions (datapath). The key a function reads is built from the selected fields
 * in a fixed order:
 * - CRC and XOR functions: bytes in network order: src_ip (4 or 16), dst_ip, protocol (1),
 *   src_port (2), dst_port (2), dest_qp (3);
 * - Toeplitz and Murmur3: 32-bit words: src_ip (1 or 4 words, each the address bytes read
 *   big-endian), dst_ip, one port word, one word dest_qp | protocol << 24. The port word is
 *   sport << 16 | dport for Toeplitz (RSS's order, so that Microsoft's verification vectors
 *   hold) and sport | dport << 16 for Murmur3 (HPCC's ns-3 switch-node.cc GetOutDev()).
 * An unselected field is left out, or reads as 0 inside a shared word.
 */
#include <errno.h>
#include <string.h>

#include <rte_thash.h>

#include "lib/proto/roce_crc.h"
#include "lib/proto/roce_proto.h"

#include "lib/fabric/fab_hash.h"

#define FAB_KEY_MAX (16 + 16 + 1 + 2 + 2 + 3)
#define FAB_WORDS_MAX (4 + 4 + 1 + 1)

/*
 * CRC-16/CCITT-FALSE: polynomial 0x1021 MSB first, register 0xFFFF, no reflection, no final
 * XOR; check value 0x29B1 for "123456789". This is what p4lang/behavioral-model calls
 * crcCCITT (src/bm_sim/calculations.cpp), the reference software switch behind P4's ECMP
 * examples; the hash key is a bit string fed MSB first, as hardware does. DPDK's
 * rte_net_crc RTE_NET_CRC16_CCITT is the reflected variant with a final inversion
 * (CRC-16/X-25, check 0x906E, verified by test_fab_hash.c), so it is not used here.
 */
static const uint16_t fab_crc16_table[256] = {
	0x0000, 0x1021, 0x2042, 0x3063, 0x4084, 0x50a5, 0x60c6, 0x70e7,
	0x8108, 0x9129, 0xa14a, 0xb16b, 0xc18c, 0xd1ad, 0xe1ce, 0xf1ef,
	0x1231, 0x0210, 0x3273, 0x2252, 0x52b5, 0x4294, 0x72f7, 0x62d6,
	0x9339, 0x8318, 0xb37b, 0xa35a, 0xd3bd, 0xc39c, 0xf3ff, 0xe3de,
	0x2462, 0x3443, 0x0420, 0x1401, 0x64e6, 0x74c7, 0x44a4, 0x5485,
	0xa56a, 0xb54b, 0x8528, 0x9509, 0xe5ee, 0xf5cf, 0xc5ac, 0xd58d,
	0x3653, 0x2672, 0x1611, 0x0630, 0x76d7, 0x66f6, 0x5695, 0x46b4,
	0xb75b, 0xa77a, 0x9719, 0x8738, 0xf7df, 0xe7fe, 0xd79d, 0xc7bc,
	0x48c4, 0x58e5, 0x6886, 0x78a7, 0x0840, 0x1861, 0x2802, 0x3823,
	0xc9cc, 0xd9ed, 0xe98e, 0xf9af, 0x8948, 0x9969, 0xa90a, 0xb92b,
	0x5af5, 0x4ad4, 0x7ab7, 0x6a96, 0x1a71, 0x0a50, 0x3a33, 0x2a12,
	0xdbfd, 0xcbdc, 0xfbbf, 0xeb9e, 0x9b79, 0x8b58, 0xbb3b, 0xab1a,
	0x6ca6, 0x7c87, 0x4ce4, 0x5cc5, 0x2c22, 0x3c03, 0x0c60, 0x1c41,
	0xedae, 0xfd8f, 0xcdec, 0xddcd, 0xad2a, 0xbd0b, 0x8d68, 0x9d49,
	0x7e97, 0x6eb6, 0x5ed5, 0x4ef4, 0x3e13, 0x2e32, 0x1e51, 0x0e70,
	0xff9f, 0xefbe, 0xdfdd, 0xcffc, 0xbf1b, 0xaf3a, 0x9f59, 0x8f78,
	0x9188, 0x81a9, 0xb1ca, 0xa1eb, 0xd10c, 0xc12d, 0xf14e, 0xe16f,
	0x1080, 0x00a1, 0x30c2, 0x20e3, 0x5004, 0x4025, 0x7046, 0x6067,
	0x83b9, 0x9398, 0xa3fb, 0xb3da, 0xc33d, 0xd31c, 0xe37f, 0xf35e,
	0x02b1, 0x1290, 0x22f3, 0x32d2, 0x4235, 0x5214, 0x6277, 0x7256,
	0xb5ea, 0xa5cb, 0x95a8, 0x8589, 0xf56e, 0xe54f, 0xd52c, 0xc50d,
	0x34e2, 0x24c3, 0x14a0, 0x0481, 0x7466, 0x6447, 0x5424, 0x4405,
	0xa7db, 0xb7fa, 0x8799, 0x97b8, 0xe75f, 0xf77e, 0xc71d, 0xd73c,
	0x26d3, 0x36f2, 0x0691, 0x16b0, 0x6657, 0x7676, 0x4615, 0x5634,
	0xd94c, 0xc96d, 0xf90e, 0xe92f, 0x99c8, 0x89e9, 0xb98a, 0xa9ab,
	0x5844, 0x4865, 0x7806, 0x6827, 0x18c0, 0x08e1, 0x3882, 0x28a3,
	0xcb7d, 0xdb5c, 0xeb3f, 0xfb1e, 0x8bf9, 0x9bd8, 0xabbb, 0xbb9a,
	0x4a75, 0x5a54, 0x6a37, 0x7a16, 0x0af1, 0x1ad0, 0x2ab3, 0x3a92,
	0xfd2e, 0xed0f, 0xdd6c, 0xcd4d, 0xbdaa, 0xad8b, 0x9de8, 0x8dc9,
	0x7c26, 0x6c07, 0x5c64, 0x4c45, 0x3ca2, 0x2c83, 0x1ce0, 0x0cc1,
	0xef1f, 0xff3e, 0xcf5d, 0xdf7c, 0xaf9b, 0xbfba, 0x8fd9, 0x9ff8,
	0x6e17, 0x7e36, 0x4e55, 0x5e74, 0x2e93, 0x3eb2, 0x0ed1, 0x1ef0,
};

/* Microsoft's RSS verification key (also DPDK's test key), then its first 4 bytes again. */
static const uint8_t fab_ms_rss_key[FAB_HASH_TOEPLITZ_KEY_LEN] = {
	0x6d, 0x5a, 0x56, 0xda, 0x25, 0x5b, 0x0e, 0xc2, 0x41, 0x67, 0x25, 0x3d, 0x43, 0xa3, 0x8f,
	0xb0, 0xd0, 0xca, 0x2b, 0xcb, 0xae, 0x7b, 0x30, 0xb4, 0x77, 0xcb, 0x2d, 0xa3, 0x80, 0x30,
	0xf2, 0x0c, 0x6a, 0x42, 0xb7, 0x3b, 0xbe, 0xac, 0x01, 0xfa, 0x6d, 0x5a, 0x56, 0xda,
};

static const char *const fab_fn_names[FAB_HASH_FN_MAX] = {
	"crc16_ccitt", "crc32_lo", "crc32_hi", "xor", "toeplitz", "murmur3",
};

static const char *const fab_field_names[FAB_HASH_N_FIELDS] = {
	"src_ip", "dst_ip", "src_port", "dst_port", "dest_qp", "protocol",
};

const char *
fab_hash_fn_name(enum fab_hash_fn fn)
{
	return (unsigned int)fn < FAB_HASH_FN_MAX ? fab_fn_names[fn] : NULL;
}

int
fab_hash_fn_from_name(const char *name)
{
	unsigned int i;

	for (i = 0; i < FAB_HASH_FN_MAX; i++)
		if (strcmp(name, fab_fn_names[i]) == 0)
			return (int)i;
	return -1;
}

const char *
fab_hash_field_name(unsigned int i)
{
	return i < FAB_HASH_N_FIELDS ? fab_field_names[i] : NULL;
}

unsigned int
fab_hash_width(enum fab_hash_fn fn)
{
	switch (fn) {
	case FAB_HASH_CRC16_CCITT:
	case FAB_HASH_CRC32_LO:
	case FAB_HASH_CRC32_HI:
	case FAB_HASH_XOR:
		return 16;
	case FAB_HASH_TOEPLITZ:
	case FAB_HASH_MURMUR3:
		return 32;
	default:
		return 0;
	}
}

/* splitmix64 (Steele et al.): the Toeplitz key bytes of a nonzero seed. */
static uint64_t
fab_splitmix64(uint64_t *s)
{
	uint64_t z = (*s += 0x9E3779B97F4A7C15ULL);

	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
	return z ^ (z >> 31);
}

int
fab_hash_cfg_init(struct fab_hash_cfg *cfg, enum fab_hash_fn fn, uint32_t fields, uint32_t seed)
{
	uint64_t s = seed;
	unsigned int i;

	if ((unsigned int)fn >= FAB_HASH_FN_MAX || fields == 0 || (fields & ~FAB_HASH_F_ALL) != 0)
		return -EINVAL;
	memset(cfg, 0, sizeof(*cfg));
	cfg->fn = fn;
	cfg->fields = fields;
	cfg->seed = seed;
	if (seed == 0) {
		memcpy(cfg->toeplitz_key, fab_ms_rss_key, sizeof(cfg->toeplitz_key));
	} else {
		for (i = 0; i < FAB_HASH_TOEPLITZ_KEY_LEN; i += 4)
			roce_put_le32(cfg->toeplitz_key + i, (uint32_t)fab_splitmix64(&s));
	}
	rte_convert_rss_key((const uint32_t *)(const void *)cfg->toeplitz_key,
		(uint32_t *)(void *)cfg->toeplitz_key_be, FAB_HASH_TOEPLITZ_KEY_LEN);
	return 0;
}

uint16_t
fab_crc16_ccitt(uint16_t crc, const uint8_t *buf, uint32_t len)
{
	while (len-- > 0)
		crc = (uint16_t)(fab_crc16_table[(crc >> 8) ^ *buf++] ^ (crc << 8));
	return crc;
}

static inline uint32_t
fab_rotl32(uint32_t v, unsigned int r)
{
	return (v << r) | (v >> (32 - r));
}

/* One MurmurHash3_x86_32 block. */
static inline uint32_t
fab_murmur3_k(uint32_t k)
{
	k *= 0xcc9e2d51u;
	k = fab_rotl32(k, 15);
	return k * 0x1b873593u;
}

uint32_t
fab_murmur3_32(const uint8_t *key, uint32_t len, uint32_t seed)
{
	uint32_t h = seed, i, k, tail = len & 3;

	for (i = 0; i + 4 <= len; i += 4) {
		k = (uint32_t)key[i] | (uint32_t)key[i + 1] << 8 | (uint32_t)key[i + 2] << 16 |
			(uint32_t)key[i + 3] << 24;
		h ^= fab_murmur3_k(k);
		h = fab_rotl32(h, 13);
		h = h * 5 + 0xe6546b64u;
	}
	if (tail != 0) {
		k = 0;
		if (tail == 3)
			k ^= (uint32_t)key[i + 2] << 16;
		if (tail >= 2)
			k ^= (uint32_t)key[i + 1] << 8;
		k ^= key[i];
		h ^= fab_murmur3_k(k);
	}
	h ^= len;
	h ^= h >> 16;
	h *= 0x85ebca6bu;
	h ^= h >> 13;
	h *= 0xc2b2ae35u;
	h ^= h >> 16;
	return h;
}

static unsigned int
fab_key_bytes(uint32_t f, const struct fab_tuple *t, uint8_t *k)
{
	unsigned int alen = t->ip_version == 4 ? 4 : 16, n = 0;

	if (f & FAB_HASH_F_SRC_IP) {
		memcpy(k + n, t->src_ip, alen);
		n += alen;
	}
	if (f & FAB_HASH_F_DST_IP) {
		memcpy(k + n, t->dst_ip, alen);
		n += alen;
	}
	if (f & FAB_HASH_F_PROTOCOL)
		k[n++] = t->protocol;
	if (f & FAB_HASH_F_SRC_PORT) {
		k[n++] = (uint8_t)(t->src_port >> 8);
		k[n++] = (uint8_t)t->src_port;
	}
	if (f & FAB_HASH_F_DST_PORT) {
		k[n++] = (uint8_t)(t->dst_port >> 8);
		k[n++] = (uint8_t)t->dst_port;
	}
	if (f & FAB_HASH_F_DEST_QP) {
		k[n++] = (uint8_t)(t->dest_qp >> 16);
		k[n++] = (uint8_t)(t->dest_qp >> 8);
		k[n++] = (uint8_t)t->dest_qp;
	}
	return n;
}

static unsigned int
fab_key_words(uint32_t f, const struct fab_tuple *t, uint32_t *w, int murmur)
{
	unsigned int alen = t->ip_version == 4 ? 4 : 16, n = 0, i;

	if (f & FAB_HASH_F_SRC_IP)
		for (i = 0; i < alen; i += 4)
			w[n++] = roce_get_be32(t->src_ip + i);
	if (f & FAB_HASH_F_DST_IP)
		for (i = 0; i < alen; i += 4)
			w[n++] = roce_get_be32(t->dst_ip + i);
	if (f & (FAB_HASH_F_SRC_PORT | FAB_HASH_F_DST_PORT)) {
		uint32_t sp = (f & FAB_HASH_F_SRC_PORT) ? t->src_port : 0;
		uint32_t dp = (f & FAB_HASH_F_DST_PORT) ? t->dst_port : 0;

		w[n++] = murmur ? sp | dp << 16 : sp << 16 | dp;
	}
	if (f & (FAB_HASH_F_DEST_QP | FAB_HASH_F_PROTOCOL))
		w[n++] = ((f & FAB_HASH_F_DEST_QP) ? t->dest_qp & 0xFFFFFF : 0) |
			((f & FAB_HASH_F_PROTOCOL) ? (uint32_t)t->protocol << 24 : 0);
	return n;
}

uint32_t
fab_hash_tuple(const struct fab_hash_cfg *cfg, const struct fab_tuple *t)
{
	uint8_t k[FAB_KEY_MAX > 4 * FAB_WORDS_MAX ? FAB_KEY_MAX : 4 * FAB_WORDS_MAX];
	uint32_t w[FAB_WORDS_MAX], h = 0, crc;
	unsigned int n, i, width = 16, off = cfg->bit_offset;

	switch (cfg->fn) {
	case FAB_HASH_CRC16_CCITT:
		n = fab_key_bytes(cfg->fields, t, k);
		h = fab_crc16_ccitt((uint16_t)(0xFFFF ^ (cfg->seed & 0xFFFF)), k, n);
		break;
	case FAB_HASH_CRC32_LO:
	case FAB_HASH_CRC32_HI:
		/* lib/proto's CRC-32 is rte_net_crc's RTE_NET_CRC32_ETH (test_crc.c) but takes a
		 * starting register, which the seed needs; rte_net_crc_calc() starts at ~0 */
		n = fab_key_bytes(cfg->fields, t, k);
		crc = ~roce_crc32_update(ROCE_CRC32_INIT ^ cfg->seed, k, n);
		h = cfg->fn == FAB_HASH_CRC32_LO ? crc & 0xFFFF : crc >> 16;
		break;
	case FAB_HASH_XOR:
		n = fab_key_bytes(cfg->fields, t, k);
		if (n & 1)
			k[n++] = 0;
		for (i = 0; i < n; i += 2)
			h ^= (uint32_t)k[i] << 8 | k[i + 1];
		h ^= cfg->seed & 0xFFFF;
		break;
	case FAB_HASH_TOEPLITZ:
		n = fab_key_words(cfg->fields, t, w, 0);
		h = rte_softrss_be(w, n, cfg->toeplitz_key_be);
		width = 32;
		break;
	case FAB_HASH_MURMUR3:
		n = fab_key_words(cfg->fields, t, w, 1);
		for (i = 0; i < n; i++)
			roce_put_le32(k + 4 * i, w[i]);
		h = fab_murmur3_32(k, 4 * n, cfg->seed);
		width = 32;
		break;
	default:
		return 0;
	}
	off %= width;
	if (off != 0)
		h = ((h >> off) | (h << (width - off))) & (width == 32 ? 0xFFFFFFFFu : 0xFFFFu);
	return h;
}

void
fab_tuple_from_pkt(const struct roce_pkt *p, struct fab_tuple *t)
{
	memset(t, 0, sizeof(*t));
	t->ip_version = p->ip_version == 4 ? 4 : 6;
	memcpy(t->src_ip, p->src_ip, 16);
	memcpy(t->dst_ip, p->dst_ip, 16);
	t->src_port = p->udp_sport;
	t->dst_port = p->udp_dport;
	if (p->cls == ROCE_CLASS_ROCEV2) {
		t->protocol = ROCE_IPPROTO_UDP;
		t->dest_qp = p->dest_qp;
	} else if (p->cls == ROCE_CLASS_ROCEV1) {
		t->protocol = ROCE_GRH_NXT_BTH;
		t->dest_qp = p->dest_qp;
	}
}

uint32_t
fab_hash(const struct fab_hash_cfg *cfg, const struct roce_pkt *p)
{
	struct fab_tuple t;

	fab_tuple_from_pkt(p, &t);
	return fab_hash_tuple(cfg, &t);
}
