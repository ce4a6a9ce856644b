/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef EMU_MATCH_H
#define EMU_MATCH_H

/**
 * @file
 * Match expressions shared by the impairment stages: a JSON object whose conditions are ANDed.
 *
 *   {"ports": ["p0"], "out_ports": ["p1"] | "direction": "p0->p1", "src_ip": "10.0.0.0/24", "dst_ip": "fd00::2", "udp_sport": 49152,
 *    "opcode": "data" | 0x0a, "dest_qp": 69, "psn": 17 | [10, 20], "ackreq": true,
 *    "priority": 3, "ecn": 2, "iteration": 2, "every_nth": 100, "nth": 5,
 *    "from_s": 1.5, "until_s": 2.0}
 *
 * "ports" are ingress ports, "out_ports" egress ports (as chosen by forward: a stage that uses
 * them must come after forward, see emu_match_parse()); "direction": "A->B" is short for
 * "ports": ["A"], "out_ports": ["B"]. Conditions on packet fields are checked first; "iteration" needs the packet's transmission
 * iteration from an emu_iter table; then the time window, relative to the first packet the
 * match was asked about (time zero; see emu_match_test()); counting conditions ("every_nth",
 * "nth") count only packets that passed all the others.
 *
 * Pure: no EAL, no allocation after parsing, no clock: time comes in as an argument.
 */

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "lib/base/emu_err.h"
#include "lib/base/emu_keys.h"
#include "lib/proto/roce_proto.h"

/** Opcode classes for "opcode": "data", "ack", ... */
enum emu_match_opclass {
	EMU_OPCLASS_NONE = 0,
	EMU_OPCLASS_DATA,  /**< RC/UC/UD SEND, RDMA WRITE, RDMA READ responses */
	EMU_OPCLASS_ACK,   /**< ACKNOWLEDGE / ATOMIC_ACKNOWLEDGE with an ACK syndrome */
	EMU_OPCLASS_NAK,   /**< ACKNOWLEDGE with a NAK or RNR NAK syndrome */
	EMU_OPCLASS_CNP,   /**< 0x81 */
	EMU_OPCLASS_READ,  /**< RDMA READ request and responses */
	EMU_OPCLASS_SEND,  /**< SEND_* (also _WITH_IMMEDIATE, _WITH_INVALIDATE) */
	EMU_OPCLASS_WRITE, /**< RDMA_WRITE_* */
};

#define EMU_MATCH_PORTS 0x0001u
#define EMU_MATCH_SRC_IP 0x0002u
#define EMU_MATCH_DST_IP 0x0004u
#define EMU_MATCH_UDP_SPORT 0x0008u
#define EMU_MATCH_OPCODE 0x0010u
#define EMU_MATCH_OPCLASS 0x0020u
#define EMU_MATCH_DEST_QP 0x0040u
#define EMU_MATCH_PSN 0x0080u
#define EMU_MATCH_ACKREQ 0x0100u
#define EMU_MATCH_PRIORITY 0x0200u
#define EMU_MATCH_ECN 0x0400u
#define EMU_MATCH_ITERATION 0x0800u
#define EMU_MATCH_TIME 0x1000u
#define EMU_MATCH_OUT_PORTS 0x2000u
/** Conditions that only RoCE packets can satisfy. */
#define EMU_MATCH_NEEDS_ROCE (EMU_MATCH_OPCODE | EMU_MATCH_OPCLASS | EMU_MATCH_DEST_QP | \
			      EMU_MATCH_PSN | EMU_MATCH_ACKREQ | EMU_MATCH_ITERATION)

/** One CIDR prefix: IPv4 (version 4, first 4 bytes) or IPv6. */
struct emu_match_prefix {
	uint8_t addr[16];
	uint8_t version;
	uint8_t plen;
};

/** A parsed match expression and its counting state. */
struct emu_match {
	uint32_t flags;               /**< EMU_MATCH_* present */
	uint32_t port_mask;           /**< ingress ports */
	uint32_t out_port_mask;       /**< egress ports */
	struct emu_match_prefix src, dst;
	uint16_t udp_sport;
	uint8_t opcode;
	uint8_t opclass;              /**< enum emu_match_opclass */
	uint32_t dest_qp;
	uint32_t psn_lo, psn_hi;      /**< inclusive, mod 2^24: lo..hi walking up (may wrap) */
	uint8_t ackreq, priority, ecn;
	uint32_t iteration;
	uint64_t every_nth;           /**< 0: not set */
	uint64_t nth;                 /**< 0: not set */
	uint64_t from_ns, until_ns;   /**< window [from, until) relative to time zero */
	/* state */
	uint64_t seen;                /**< packets that passed everything but every_nth/nth */
	uint64_t t0_ns;
	bool t0_set;
};

/** The keys a match object may have (NULL-terminated), for documentation and checks. */
extern const char *const emu_match_keys[];

/** The same keys with their types and ranges (lib/base/emu_keys.h); names: emu_match_keys. */
extern const struct emu_key_table emu_match_table;

/**
 * Parse match object @p obj (at JSON path @p path) into @p m. Port names are resolved against
 * @p port_names. @p out_port_known: the stage sees packets whose egress port is decided (an
 * egress stage, or an ingress stage after forward); otherwise "out_ports" and "direction" are
 * refused. Returns 0, or -EINVAL with @p err filled (path first).
 */
int emu_match_parse(const json_t *obj, const char *path, const char *const *port_names,
		    unsigned int n_ports, bool out_port_known, struct emu_match *m,
		    struct emu_err *err);

/**
 * Whether emu_match_test() of @p m reads only the parse fields roce_parse_partial_dp() fills
 * (lib/proto/roce_proto.h) and the metadata: not for "ackreq", "iteration" (the tracker reads
 * more of the BTH) or the "ack" and "nak" opcode classes (the AETH syndrome).
 */
bool emu_match_reads_dp_fields(const struct emu_match *m);

/** The class of @p opcode that @p cls names (with the AETH of @p p for ACK/NAK). */
bool emu_match_opclass_has(uint8_t cls, const struct roce_pkt *p);

/**
 * Does a packet match? @p p is the parse result (NULL if unparsed), @p in_port, @p out_port
 * and @p prio come from the packet's metadata (an out_port that is not one port, e.g. a flood,
 * matches no "out_ports"), @p iteration from emu_iter_track() (0: not a tracked packet),
 * @p now_ns the burst time. Updates the counting state: call once per packet, in order.
 * Time zero is the @p now_ns of the first call.
 */
bool emu_match_test(struct emu_match *m, const struct roce_pkt *p, uint16_t in_port,
		    uint16_t out_port, uint8_t prio, uint32_t iteration, uint64_t now_ns);

/** Forget the counting state and time zero (a new run). */
void emu_match_reset(struct emu_match *m);

/* ---- Transmission iterations ---- */

/** PSNs remembered per QP behind the highest one seen. */
#define EMU_ITER_WINDOW 1024u
#define EMU_ITER_WAYS 4

/** One tracked QP: (destination address, DestQP). */
struct emu_iter_qp {
	uint8_t ip[16];
	uint32_t qpn;
	uint32_t sig;       /**< 0: empty */
	uint32_t highest;   /**< highest PSN seen, mod 2^24 */
	uint64_t used;      /**< LRU stamp */
	uint8_t count[EMU_ITER_WINDOW]; /**< sends of PSN p at [p % WINDOW], saturating at 255 */
};

/**
 * Transmission iterations of request PSNs, learned per (destination IP, DestQP): a PSN ahead of
 * the highest seen (by less than 2^23, mod 2^24) is a first send; a PSN at or behind it is sent
 * once more. Sized at creation; a full bucket reuses its least recently used QP.
 */
struct emu_iter {
	struct emu_iter_qp *qps;
	uint32_t bucket_mask;
	uint64_t stamp;
	uint64_t evicted;
};

/** Allocate room for about @p max_qps QPs; -ENOMEM. */
int emu_iter_init(struct emu_iter *it, uint32_t max_qps);

void emu_iter_free(struct emu_iter *it);

/** Does @p p carry a request-side PSN whose retransmissions can be counted? */
bool emu_iter_tracks(const struct roce_pkt *p);

/**
 * Record one transmission of @p p and return its iteration: 1 first send, 2 first
 * retransmission, ... (255 at most); a PSN more than EMU_ITER_WINDOW behind the highest
 * counts as 2. Returns 0 when @p p is not tracked (emu_iter_tracks()).
 */
uint32_t emu_iter_track(struct emu_iter *it, const struct roce_pkt *p);

#endif
