/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "roce_proto.h"
#include "roce_internal.h"

#define QPMAP_WAYS		8
#define QPMAP_KIND_PAIR		1
#define QPMAP_KIND_SPORT	2
#define QPMAP_F_CONFLICT	0x01

/* One cache line. */
struct qpmap_entry {
	uint8_t src_ip[16];	/* the learned packet's source (B of a lookup A->B) */
	uint8_t dst_ip[16];	/* its destination (A) */
	uint32_t sig;		/* key hash, 0 = empty */
	uint16_t sport;		/* KIND_SPORT only */
	uint8_t kind;
	uint8_t ip_version;
	uint32_t qpn;		/* last DestQP seen: a QPN on dst_ip */
	uint8_t flags;
	uint8_t pad[3];
	uint64_t seen_ns;	/* last refresh */
	uint64_t conflict_ns;	/* last time a different QPN replaced qpn */
};

struct roce_qpmap {
	struct qpmap_entry *entries;
	uint32_t bucket_mask;
	uint32_t n_buckets;
	uint64_t ageing_ns;
	uint64_t ctr[ROCE_QPMAP_CTR_MAX];
};

struct qpmap_key {
	const uint8_t *src_ip;
	const uint8_t *dst_ip;
	uint8_t ip_version;
	uint8_t kind;
	uint16_t sport;
	uint32_t sig;
};

#define ROCE_QPMAP_CTR_NAME_(n, s) [ROCE_QPMAP_CTR_##n] = s,
static const char *const qpmap_ctr_names[ROCE_QPMAP_CTR_MAX] = {
	ROCE_QPMAP_FOREACH_CTR(ROCE_QPMAP_CTR_NAME_)
};

const char *
roce_qpmap_ctr_name(enum roce_qpmap_ctr c)
{
	if ((unsigned int)c >= ROCE_QPMAP_CTR_MAX)
		return "unknown";
	return qpmap_ctr_names[c];
}

struct roce_qpmap *
roce_qpmap_create(uint32_t max_entries, uint64_t ageing_ns)
{
	struct roce_qpmap *map;
	uint32_t nb = 1;

	if (max_entries == 0 || max_entries > (1u << 28))
		return NULL;
	while ((uint64_t)nb * QPMAP_WAYS < max_entries)
		nb <<= 1;
	map = calloc(1, sizeof(*map));
	if (map == NULL)
		return NULL;
	map->entries = aligned_alloc(64, (size_t)nb * QPMAP_WAYS * sizeof(struct qpmap_entry));
	if (map->entries == NULL) {
		free(map);
		return NULL;
	}
	memset(map->entries, 0, (size_t)nb * QPMAP_WAYS * sizeof(struct qpmap_entry));
	map->n_buckets = nb;
	map->bucket_mask = nb - 1;
	map->ageing_ns = ageing_ns;
	return map;
}

void
roce_qpmap_free(struct roce_qpmap *map)
{
	if (map == NULL)
		return;
	free(map->entries);
	free(map);
}

const uint64_t *
roce_qpmap_counters(const struct roce_qpmap *map)
{
	return map->ctr;
}

uint32_t
roce_qpmap_capacity(const struct roce_qpmap *map)
{
	return map->n_buckets * QPMAP_WAYS;
}

/* Never 0: 0 marks an empty entry. */
static inline uint32_t
qp_fmix(uint32_t h)
{
	h = roce_hash_fmix(h);
	return h == 0 ? 1 : h;
}

/* Hash of the address pair; the sport key hashes the pair hash once more. */
static uint32_t
qpmap_pair_hash(const uint8_t *src_ip, const uint8_t *dst_ip, uint8_t ip_version)
{
	unsigned int words = ip_version == 4 ? 1 : 4, i;
	uint32_t h = 0x9e3779b9u ^ ip_version;

	for (i = 0; i < words; i++) {
		h = roce_hash_mix(h, roce_get_be32(src_ip + 4 * i));
		h = roce_hash_mix(h, roce_get_be32(dst_ip + 4 * i));
	}
	return h;
}

static inline void
qpmap_key_init(struct qpmap_key *k, uint32_t pair_hash, const uint8_t *src_ip,
	const uint8_t *dst_ip, uint8_t ip_version, uint8_t kind, uint16_t sport)
{
	k->src_ip = src_ip;
	k->dst_ip = dst_ip;
	k->ip_version = ip_version;
	k->kind = kind;
	k->sport = kind == QPMAP_KIND_SPORT ? sport : 0;
	k->sig = qp_fmix(roce_hash_mix(pair_hash, (uint32_t)kind << 16 | k->sport));
}

static inline int
qpmap_match(const struct qpmap_entry *e, const struct qpmap_key *k)
{
	return e->sig == k->sig && e->kind == k->kind && e->sport == k->sport &&
		e->ip_version == k->ip_version && memcmp(e->src_ip, k->src_ip, 16) == 0 &&
		memcmp(e->dst_ip, k->dst_ip, 16) == 0;
}

/* Older than the ageing time? Time running backwards (a new replay) counts as fresh. */
static inline int
qpmap_aged(const struct roce_qpmap *map, uint64_t t, uint64_t now_ns)
{
	return map->ageing_ns != 0 && now_ns > t && now_ns - t > map->ageing_ns;
}

static inline struct qpmap_entry *
qpmap_bucket(const struct roce_qpmap *map, uint32_t sig)
{
	return &map->entries[(size_t)(sig & map->bucket_mask) * QPMAP_WAYS];
}

static struct qpmap_entry *
qpmap_find(const struct roce_qpmap *map, const struct qpmap_key *k, uint64_t now_ns)
{
	struct qpmap_entry *b = qpmap_bucket(map, k->sig);
	unsigned int i;

	for (i = 0; i < QPMAP_WAYS; i++) {
		if (qpmap_match(&b[i], k))
			return qpmap_aged(map, b[i].seen_ns, now_ns) ? NULL : &b[i];
	}
	return NULL;
}

static void
qpmap_insert(struct roce_qpmap *map, const struct qpmap_key *k, uint32_t qpn, uint64_t now_ns)
{
	struct qpmap_entry *b = qpmap_bucket(map, k->sig), *e = NULL, *victim = NULL;
	unsigned int i;

	for (i = 0; i < QPMAP_WAYS; i++) {
		if (qpmap_match(&b[i], k)) {
			e = &b[i];
			break;
		}
		if (victim == NULL || b[i].sig == 0 ||
				(victim->sig != 0 && b[i].seen_ns < victim->seen_ns))
			victim = &b[i];
	}
	if (e != NULL && !qpmap_aged(map, e->seen_ns, now_ns)) {
		if (e->qpn != qpn) {
			e->qpn = qpn;
			e->flags |= QPMAP_F_CONFLICT;
			e->conflict_ns = now_ns;
			map->ctr[ROCE_QPMAP_CTR_QPN_CHANGED] += 1;
		} else {
			map->ctr[ROCE_QPMAP_CTR_REFRESHED] += 1;
		}
		e->seen_ns = now_ns;
		return;
	}
	if (e != NULL) {
		/* Same key, but aged: start afresh, forgetting old conflicts. */
		victim = e;
		map->ctr[ROCE_QPMAP_CTR_EXPIRED] += 1;
	} else if (victim->sig != 0) {
		if (qpmap_aged(map, victim->seen_ns, now_ns))
			map->ctr[ROCE_QPMAP_CTR_EXPIRED] += 1;
		else
			map->ctr[ROCE_QPMAP_CTR_EVICTED] += 1;
	}
	memset(victim, 0, sizeof(*victim));
	memcpy(victim->src_ip, k->src_ip, 16);
	memcpy(victim->dst_ip, k->dst_ip, 16);
	victim->sig = k->sig;
	victim->sport = k->sport;
	victim->kind = k->kind;
	victim->ip_version = k->ip_version;
	victim->qpn = qpn;
	victim->seen_ns = now_ns;
	map->ctr[ROCE_QPMAP_CTR_LEARNED] += 1;
}

void
roce_qpmap_learn(struct roce_qpmap *map, const struct roce_pkt *p, uint64_t now_ns)
{
	struct qpmap_key k;
	uint32_t h;

	if (p->reason != ROCE_REASON_OK ||
			(p->cls != ROCE_CLASS_ROCEV2 && p->cls != ROCE_CLASS_ROCEV1) ||
			(p->transport != (ROCE_TRANSPORT_RC >> 5) &&
			 p->transport != (ROCE_TRANSPORT_UC >> 5) &&
			 p->opcode != ROCE_OPCODE_CNP)) {
		map->ctr[ROCE_QPMAP_CTR_IGNORED] += 1;
		return;
	}
	h = qpmap_pair_hash(p->src_ip, p->dst_ip, p->ip_version);
	qpmap_key_init(&k, h, p->src_ip, p->dst_ip, p->ip_version, QPMAP_KIND_PAIR, 0);
	qpmap_insert(map, &k, p->dest_qp, now_ns);
	if (p->cls == ROCE_CLASS_ROCEV2) {
		qpmap_key_init(&k, h, p->src_ip, p->dst_ip, p->ip_version, QPMAP_KIND_SPORT,
			p->udp_sport);
		qpmap_insert(map, &k, p->dest_qp, now_ns);
	}
}

/* 1 if e names one QPN: no other QPN replaced it within the ageing time. */
static inline int
qpmap_unique(const struct roce_qpmap *map, const struct qpmap_entry *e, uint64_t now_ns)
{
	if (!(e->flags & QPMAP_F_CONFLICT))
		return 1;
	return map->ageing_ns != 0 && qpmap_aged(map, e->conflict_ns, now_ns);
}

int
roce_qpmap_lookup_sender(struct roce_qpmap *map, const struct roce_pkt *data_pkt,
	uint64_t now_ns, uint32_t *sender_qpn)
{
	const struct roce_pkt *p = data_pkt;
	struct qpmap_entry *e;
	struct qpmap_key k;
	int ambiguous = 0;
	uint32_t h;

	map->ctr[ROCE_QPMAP_CTR_LOOKUPS] += 1;
	if (p->reason != ROCE_REASON_OK ||
			(p->cls != ROCE_CLASS_ROCEV2 && p->cls != ROCE_CLASS_ROCEV1)) {
		map->ctr[ROCE_QPMAP_CTR_MISS] += 1;
		return -ENOENT;
	}
	if (p->has_deth) {
		*sender_qpn = p->deth_src_qp;
		map->ctr[ROCE_QPMAP_CTR_HIT_DETH] += 1;
		return 0;
	}
	/* Reverse direction: entries learned from packets dst -> src. */
	h = qpmap_pair_hash(p->dst_ip, p->src_ip, p->ip_version);
	if (p->cls == ROCE_CLASS_ROCEV2) {
		qpmap_key_init(&k, h, p->dst_ip, p->src_ip, p->ip_version, QPMAP_KIND_SPORT,
			p->udp_sport);
		e = qpmap_find(map, &k, now_ns);
		if (e != NULL) {
			if (qpmap_unique(map, e, now_ns)) {
				*sender_qpn = e->qpn;
				map->ctr[ROCE_QPMAP_CTR_HIT_SPORT] += 1;
				return 0;
			}
			ambiguous = 1;
		}
	}
	qpmap_key_init(&k, h, p->dst_ip, p->src_ip, p->ip_version, QPMAP_KIND_PAIR, 0);
	e = qpmap_find(map, &k, now_ns);
	if (e != NULL) {
		if (qpmap_unique(map, e, now_ns)) {
			*sender_qpn = e->qpn;
			map->ctr[ROCE_QPMAP_CTR_HIT_PAIR] += 1;
			return 0;
		}
		ambiguous = 1;
	}
	map->ctr[ambiguous ? ROCE_QPMAP_CTR_AMBIGUOUS : ROCE_QPMAP_CTR_MISS] += 1;
	return -ENOENT;
}
