/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef EMU_STAGE_H
#define EMU_STAGE_H

/**
 * @file
 * The stage contract. A stage is a function over a burst that returns how many
 * packets survive, compacted in place; every packet it removes it has freed and
 * counted under a counter whose name starts with "drop_" (or it still holds it,
 * reported by the held() op). Time and randomness come in through the burst
 * context; a stage never reads a clock, calls rand(), logs, or does I/O.
 */

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>
#include <rte_mbuf.h>

#include "lib/base/emu_err.h"
#include "lib/base/emu_keys.h"
#include "lib/base/emu_rng.h"
#include "lib/base/emu_set.h"
#include "lib/pkt/emu_pkt.h"
#include "lib/proto/roce_proto.h"

/** What every process() call gets from the runner. */
struct emu_burst_ctx {
	uint64_t now_ns;      /**< TSC-derived in live mode, pcap time in replay */
	struct emu_rng *rng;  /**< this stage's stream on this lcore, seeded from the run seed */
	uint64_t *ctr;        /**< this stage's counters on this lcore (single writer) */
	struct emu_emit *emit;
	const struct emu_dropper *drop; /**< the switch's drop path */
	uint32_t reason_base; /**< reason id of this stage's counter 0 */
	/** 1 + the port every packet of this burst arrived on (its meta->in_port): the ingress
	 * stages of a received burst; 0 when not known to be one port (released, egress, created
	 * frames, tests). A stage never changes a burst packet's in_port. */
	uint32_t in_port_plus1;
};

/**
 * What a stage will take when built, known from its configuration alone (no EAL), so a run
 * can be refused before any memory is taken and outputs checked before any file is opened.
 */
#define EMU_STAGE_MAX_FILES 16 /* a delay stage's tables: one per rule */
struct emu_stage_needs {
	uint64_t mem_bytes;              /**< memory init() allocates (pools, rings, tables) */
	char mem_key[64];                /**< the key that sizes it, e.g. "ring_size" */
	unsigned int n_files;
	const char *files[EMU_STAGE_MAX_FILES]; /**< files it writes or reads (strings live in
						 * the cfg) */
	char file_keys[EMU_STAGE_MAX_FILES][32]; /**< the key naming each, e.g. "file" */
	bool file_input[EMU_STAGE_MAX_FILES];   /**< read, not written (a table) */
	uint32_t file_rotates[EMU_STAGE_MAX_FILES]; /**< struct emu_file_ref's rotates */
};

/** What a stage's init() may ask about the switch it is part of. */
struct emu_stage_env {
	const char *path;           /**< JSON path of this stage's object, for messages */
	unsigned int n_ports;
	const char *const *port_names;
	unsigned int stage_index;   /**< unique within the switch, for naming DPDK objects */
	bool egress;                /**< true when in the egress list */
	bool out_port_known;        /**< packets have their egress port: egress, or after forward */
	bool check_only;            /**< validating only (rocemu check): open no files */
	uint32_t max_frame_bytes;   /**< largest frame any port can carry (MTU + L2 headers) */
	/**
	 * The switch's annotation of a packet (emu_switch_annotate(): its trace as a pcapng
	 * comment), for captures; @p drop_reason < 0 for a packet that was not dropped.
	 */
	size_t (*annotate)(const void *sw, const struct emu_pkt_meta *meta, int drop_reason,
			   bool all, char *buf, size_t len);
	const void *annotate_arg;
	/** Register a drop hook (a drop capture): 0, or -ENOSPC when the switch has no room. */
	int (*add_drop_hook)(void *sw, void (*fn)(void *arg, struct rte_mbuf *m, uint32_t reason),
			     void *arg);
	void *sw;
	/**
	 * This stage's counters (the array process() gets as ctx->ctr), for what a stage counts
	 * outside process(): a drop hook runs on the same lcore, between stages. NULL in checks.
	 */
	uint64_t *ctr;
	/**
	 * A replica's stage (live --workers, ops->replicable): the priv of the same stage in the
	 * first replica, whose service serves both; NULL for the first replica or a lone switch.
	 */
	void *primary;
};

/** "type" and "name", the keys every stage object has (the switch reads them). */
extern const char *const emu_stage_extra_names[];

/** Index of port @p name in @p env, or -1. */
int emu_stage_env_port(const struct emu_stage_env *env, const char *name);

/**
 * Read @p key of @p cfg, an optional array of port names, into a bit mask of port indexes
 * (every port when the key is absent; an empty array is refused).
 */
int emu_stage_port_mask(const json_t *cfg, const struct emu_stage_env *env, const char *key,
			uint32_t *mask, struct emu_err *err);

/** The port a stage filters on: the egress port on egress, the ingress port on ingress. */
static inline bool
emu_stage_port_in(const struct emu_pkt_meta *meta, bool egress, uint32_t mask)
{
	uint16_t port = egress ? meta->out_port : meta->in_port;

	return mask == UINT32_MAX || (port < 32 && (mask & (1u << port)) != 0);
}

/** What a stage reads of a packet's parse result (struct roce_pkt), least first. */
enum emu_parse_need {
	EMU_PARSE_CLASS, /**< the class and what the switch itself reads (roce_parse_partial_min()) */
	EMU_PARSE_QP,    /**< that and the packet's QP and PSN (roce_parse_partial_qp()) */
	EMU_PARSE_DP,    /**< the fields roce_parse_partial_dp() fills (lib/proto/roce_proto.h) */
	EMU_PARSE_FULL,  /**< any field (roce_parse_partial()) */
};

struct emu_stage_ops {
	const char *type;             /**< the "type" value in a pipeline file */
	size_t priv_size;
	const char *const *ctr_names; /**< "drop_*" names count as drops in the conservation check */
	unsigned int n_ctr;
	const char *const *keys;      /**< keys allowed in the stage object besides type and name */
	/**
	 * The same keys with their types, ranges, defaults and descriptions: init() reads them
	 * through it and `rocemu schema` writes it out. Its names list is @c keys (held
	 * together by emu_keys_schema()); its extra_names are emu_stage_extra_names.
	 */
	const struct emu_key_table *key_table;
	/**
	 * With compile: the keys a profile may change (for the profile schema); a table with
	 * any_key set stands for keys that are names of the stage's own (impair events).
	 */
	const struct emu_key_table *set_table;
	/**
	 * The stage chooses every packet's egress port (forward): stages after it on ingress
	 * see out_port (emu_stage_env.out_port_known). The runner knows no stage by name.
	 */
	bool sets_out_port;
	/**
	 * Optional: what this instance reads of the parse result (besides the metadata); the
	 * switch parses with the least that covers every stage (emu_switch.c,
	 * emu_switch_choose_parse()). Absent: EMU_PARSE_FULL, any field.
	 */
	enum emu_parse_need (*parse_need)(const void *priv);
	/**
	 * Optional: true when this instance reads the packets' traces (an annotated capture).
	 * The switch and its TM write the trace only when a stage does or someone outside
	 * asked (emu_switch_want_trace()). Absent: false.
	 */
	bool (*reads_trace)(const void *priv);
	/** Validate @p cfg and set up @p priv (zeroed). On error, fill @p err (path first). */
	int (*init)(void *priv, const json_t *cfg, const struct emu_stage_env *env,
		    struct emu_err *err);
	/** Process a burst in place; return the survivors, compacted at the front of @p pkts. */
	uint16_t (*process)(void *priv, struct rte_mbuf **pkts, uint16_t n,
			    struct emu_burst_ctx *ctx);
	/** Release everything; must accept a half-initialised priv. */
	void (*free)(void *priv);
	/**
	 * Optional: compile a profile change of @p key to @p val into a typed change (control
	 * path, at load: validates, may read only what init() set and the worker never writes).
	 * The worker then applies *@p out with apply(): no strings, no JSON, cannot fail.
	 */
	int (*compile)(const void *priv, const char *key, const json_t *val, struct emu_set *out,
		       const char *path, struct emu_err *err);
	/** With compile: apply a compiled change (worker, between bursts). */
	void (*apply)(void *priv, const struct emu_set *s);
	/**
	 * With compile: every key compile() takes, as one object of the values init() gave
	 * them (JSON that compile() accepts and that brings the key fully back). The switch
	 * calls it once, before it runs: profiles compute the values a timed phase puts back
	 * from it, never from the running stage. For a key whose value is an object of
	 * independent members (impair events), a change gives only the members it changes.
	 */
	json_t *(*settings)(const void *priv);
	/** Optional: non-worker work (file writing). @p final flushes everything. */
	void (*service)(void *priv, bool final);
	/**
	 * With service: the stage runs on several replicas of a switch (live --workers): a
	 * replica's init gets env->primary, the same stage of the first replica, and the
	 * primary's service serves every replica (a capture: one file, a ring per worker).
	 * Without it, a stage with a service is refused with --workers above 1.
	 */
	bool replicable;
	/**
	 * Optional, with replicable: the worker's clock at the end of each of its passes, after
	 * everything the pass did (live; emu_switch_publish_clock()). A capture's writer holds
	 * the other workers' records until every worker's clock has passed them.
	 */
	void (*clock)(void *priv, uint64_t now_ns);
	/** Optional: packets the stage holds right now (delay lines, reorder buffers). */
	uint64_t (*held)(const void *priv);
	/** Optional: one line of extra summary text (e.g. "12 packets written to x.pcap"). */
	void (*summary)(const void *priv, char *buf, size_t len);
	/**
	 * Optional, with release (stages that hold packets: delay lines, reorder buffers; ingress
	 * or egress): the earliest time a held packet is due, UINT64_MAX when none. The runner
	 * wakes up then.
	 */
	uint64_t (*next_due_ns)(const void *priv);
	/**
	 * Optional, with next_due_ns: hand over up to @p cap held packets due at ctx->now_ns, in
	 * departure order. The runner passes them through the stages after this one: from an
	 * ingress stage into the TM; from an egress stage into their port's TX staging, leaving
	 * at the release time. Called before every rx and tx_prepare, so that nothing is due
	 * when process() runs; not called while next_due_ns() is later than ctx->now_ns (it
	 * would hand over nothing then).
	 */
	uint16_t (*release)(void *priv, struct rte_mbuf **pkts, uint16_t cap,
			    struct emu_burst_ctx *ctx);
	/**
	 * Optional: fill @p needs from @p cfg without building anything (validating what it
	 * reads, path first). Stages that allocate more than their priv or write files have it.
	 */
	int (*needs)(const json_t *cfg, const struct emu_stage_env *env,
		     struct emu_stage_needs *needs, struct emu_err *err);
	/**
	 * Optional: after service(final), whether the stage failed at something the user must
	 * hear of (a capture file that could not be written): true with one line in @p msg.
	 */
	bool (*failed)(const void *priv, char *msg, size_t len);
	/**
	 * Optional (stages that choose the egress port): for each input port, the mask of output
	 * ports a frame arriving there can reach; lets the runner warn about ports without a route.
	 */
	void (*routes)(const void *priv, unsigned int n_ports, uint32_t *out_masks);
};

/** The explicit registry (lib/stages/registry.c): NULL when @p type is unknown. */
const struct emu_stage_ops *emu_stage_find(const char *type);

/** The registry as a NULL-terminated array, for messages and --help. */
extern const struct emu_stage_ops *const emu_stage_registry[];

/** A stage drops @p m, counted in its counter @p idx (a drop_* one), through the drop path. */
static inline void
emu_stage_drop(struct emu_burst_ctx *ctx, struct rte_mbuf *m, unsigned int idx)
{
	emu_drop(ctx->drop, m, ctx->reason_base + idx, &ctx->ctr[idx]);
}

#endif
