/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * QP pairing table: which QPN sent a data packet. A RoCE data packet A->B carries only the
 * receiver's QPN (DestQP = Qb); a CNP for it must go to the sender's QPN Qa. Packets of the
 * same connection in the other direction (B->A: ACKs, NAKs, read responses, data the other
 * way, CNPs) carry Qa as their DestQP, so the table learns from every RC/UC packet and CNP:
 *
 *   learn(X->Y, DestQP q, UDP sport s):  pair[X,Y] = q   and   sport[X,Y,s] = q
 *   lookup(data A->B, sport s):  sport[B,A,s] if one QPN was seen there, else
 *                                pair[B,A]    if one QPN was seen there, else -ENOENT.
 *   UD (and RD) packets name their sender in the DETH: lookup returns it without the table.
 *
 * Rule "sport" holds on NICs that use the same UDP source port in both directions of a
 * connection (Linux drivers: the port is a symmetric hash of both QPNs); it then tells apart
 * any number of QPs between two hosts. Rule "pair" holds whenever B addresses only one QP on
 * A; it covers NICs that pick a different source port per direction (the Huawei NIC in
 * testdata/real/huawei_rc_send.pcap sends sport 69 from QP 0x45 and 72 from QP 0x48).
 * An entry is ambiguous while a second QPN was seen there within ageing_ns; ambiguous
 * entries are skipped (and counted) rather than guessed.
 *
 * Bounded, O(1): a fixed array of buckets of 8 entries, each one cache line; a full bucket
 * reuses its aged or least recently refreshed entry. rte_hash is not used because it needs
 * EAL memory and this module must run (and be fuzzed) without EAL. Not thread-safe: one
 * table per lcore (single writer), like the stage counters.
 */
#ifndef ROCE_QPMAP_H
#define ROCE_QPMAP_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct roce_pkt;
struct roce_qpmap;

#define ROCE_QPMAP_FOREACH_CTR(_) \
	_(LEARNED, "learned") \
	_(REFRESHED, "refreshed") \
	_(QPN_CHANGED, "qpn_changed") \
	_(EVICTED, "evicted") \
	_(EXPIRED, "expired") \
	_(IGNORED, "ignored") \
	_(LOOKUPS, "lookups") \
	_(HIT_DETH, "hit_deth") \
	_(HIT_SPORT, "hit_sport") \
	_(HIT_PAIR, "hit_pair") \
	_(AMBIGUOUS, "ambiguous") \
	_(MISS, "miss")

#define ROCE_QPMAP_CTR_ENUM_(n, s) ROCE_QPMAP_CTR_##n,
/** Counters of a QP pairing table. */
enum roce_qpmap_ctr {
	ROCE_QPMAP_FOREACH_CTR(ROCE_QPMAP_CTR_ENUM_)
	ROCE_QPMAP_CTR_MAX
};
#undef ROCE_QPMAP_CTR_ENUM_

/**
 * Create a table holding at least max_entries entries (two per learned direction and port);
 * entries not refreshed for ageing_ns are ignored and reused (0: no ageing). NULL on failure.
 */
struct roce_qpmap *roce_qpmap_create(uint32_t max_entries, uint64_t ageing_ns);

/** Free a table; accepts NULL. */
void roce_qpmap_free(struct roce_qpmap *map);

/** Learn from a parsed packet (RC/UC/CNP RoCE packets; others are counted as ignored). */
void roce_qpmap_learn(struct roce_qpmap *map, const struct roce_pkt *p, uint64_t now_ns);

/**
 * Find the QPN that sent data_pkt. Returns 0 and sets *sender_qpn, or -ENOENT if nothing
 * unambiguous was learned from the reverse direction.
 */
int roce_qpmap_lookup_sender(struct roce_qpmap *map, const struct roce_pkt *data_pkt,
		uint64_t now_ns, uint32_t *sender_qpn);

/** Counters, indexed by enum roce_qpmap_ctr. */
const uint64_t *roce_qpmap_counters(const struct roce_qpmap *map);

/** Name of a counter ("learned", "hit_pair", ...); "unknown" if out of range. */
const char *roce_qpmap_ctr_name(enum roce_qpmap_ctr c);

/** Number of entries the table can hold. */
uint32_t roce_qpmap_capacity(const struct roce_qpmap *map);

#ifdef __cplusplus
}
#endif

#endif /* ROCE_QPMAP_H */
