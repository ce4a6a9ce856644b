/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef EMU_TM_H
#define EMU_TM_H

/**
 * @file
 * Traffic manager, first version: per egress port one FIFO with a byte and a
 * packet limit, a shaper that serialises packets at the port's link rate, and
 * a propagation delay line. It owns every packet between ingress and egress.
 *
 * Link model (per port), with all times derived from the caller's now_ns:
 *
 *     wire_bits  = (max(frame_len, 60) + 4 FCS + 20 preamble/IFG) * 8
 *     start      = max(link_free, arrival)
 *     finish     = start + wire_bits / rate          (kept in picoseconds)
 *     departure  = finish + delay_ns                 (the packet's output time)
 *
 * A packet leaves the queue (and its bytes stop counting against the limit) at
 * its start time, and is released to the egress stages at its departure time.
 * This equals "departure = max(now, previous departure) + wire time" for a
 * constant rate, and stays right when the rate changes at run time.
 */

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>
#include <rte_mbuf.h>

#include "lib/core/emu_err.h"
#include "lib/core/emu_stage.h"

#define EMU_TM_WIRE_OVERHEAD_BYTES 24 /* FCS 4 + preamble/SFD 8 + IFG 12 */
#define EMU_TM_MIN_FRAME_BYTES 60     /* without FCS */

#define EMU_TM_FOREACH_CTR(_) \
	_(ENQ_PKTS, "enq_pkts") \
	_(ENQ_BYTES, "enq_bytes") \
	_(DEQ_PKTS, "deq_pkts") \
	_(DEQ_BYTES, "deq_bytes") \
	_(DROP_QUEUE_FULL, "drop_queue_full") \
	_(MAX_QUEUE_BYTES, "max_queue_bytes") \
	_(BUSY_NS, "busy_ns")

enum emu_tm_ctr {
#define EMU_TM_CTR_ENUM(e, s) EMU_TM_CTR_##e,
	EMU_TM_FOREACH_CTR(EMU_TM_CTR_ENUM)
#undef EMU_TM_CTR_ENUM
	EMU_TM_CTR_MAX
};

extern const char *const emu_tm_ctr_names[EMU_TM_CTR_MAX];

struct emu_tm_port_cfg {
	uint64_t rate_bps;    /**< link rate */
	uint64_t limit_bytes; /**< queue byte limit (tail drop above it) */
	uint32_t queue_pkts;  /**< queue slots (power of two, rounded up) */
	uint64_t delay_ns;    /**< propagation delay added after serialisation */
};

struct emu_tm_cfg {
	unsigned int n_ports;
	struct emu_tm_port_cfg ports[EMU_MAX_PORTS];
};

/** Defaults: 100 Gb/s, 4 MB, 4096 slots, no delay. */
void emu_tm_port_cfg_default(struct emu_tm_port_cfg *pc);

/**
 * Parse the pipeline's "tm" object (may be NULL: all defaults). @p names are the
 * switch port names; tm.ports[] entries refer to them with "port".
 */
int emu_tm_cfg_parse(const json_t *tm, unsigned int n_ports, const char *const *names,
		     struct emu_tm_cfg *cfg, struct emu_err *err);

struct emu_tm;

/** Slots of port @p pc's delay line: rate x delay of minimum frames plus the queue, capped. */
uint32_t emu_tm_wire_slots(const struct emu_tm_port_cfg *pc);

/** Allocate the TM for @p cfg (all memory up front). */
struct emu_tm *emu_tm_create(const struct emu_tm_cfg *cfg, struct emu_err *err);

/** Free the TM and every packet it still holds; accepts NULL. */
void emu_tm_free(struct emu_tm *tm);

/**
 * Admit @p m to port @p port's queue at @p now_ns. Returns true when queued; false
 * when dropped (the TM freed it and counted drop_queue_full).
 */
bool emu_tm_enqueue(struct emu_tm *tm, uint16_t port, struct rte_mbuf *m, uint64_t now_ns);

/**
 * Release up to @p max packets of port @p port whose departure time is <= @p now_ns,
 * in order; each mbuf's meta ts_ns is set to its departure time.
 */
uint16_t emu_tm_dequeue(struct emu_tm *tm, uint16_t port, uint64_t now_ns, struct rte_mbuf **out,
			uint16_t max);

/** Earliest time at which something changes in the TM, UINT64_MAX when empty. */
uint64_t emu_tm_next_event_ns(const struct emu_tm *tm);

/** Packets held (queued or on the wire) in all ports. */
uint64_t emu_tm_held(const struct emu_tm *tm);

/** Packets held by port @p port. */
uint64_t emu_tm_port_held(const struct emu_tm *tm, uint16_t port);

/** Counters of port @p port (EMU_TM_CTR_MAX values). */
const uint64_t *emu_tm_port_ctrs(const struct emu_tm *tm, uint16_t port);

/** Current configuration of port @p port. */
const struct emu_tm_port_cfg *emu_tm_port_cfg(const struct emu_tm *tm, uint16_t port);

/**
 * Profile change of port @p port's @p key ("rate_gbps", "delay_us", "buffer_kb"):
 * validate only when !apply. @p path names the value in messages.
 */
int emu_tm_set(struct emu_tm *tm, uint16_t port, const char *key, const json_t *val, bool apply,
	       const char *path, struct emu_err *err);

/** Wire time of a frame of @p len bytes at @p rate_bps, in picoseconds. */
static inline uint64_t
emu_tm_wire_ps(uint32_t len, uint64_t rate_bps)
{
	uint64_t bytes = (len < EMU_TM_MIN_FRAME_BYTES ? EMU_TM_MIN_FRAME_BYTES : len) +
			 EMU_TM_WIRE_OVERHEAD_BYTES;

	/* bytes * 8e12 fits in 64 bits for frames up to 2.3 MB */
	return (bytes * 8ULL * 1000000000000ULL + rate_bps / 2) / rate_bps;
}

#endif
