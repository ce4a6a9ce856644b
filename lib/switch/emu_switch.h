/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef EMU_SWITCH_H
#define EMU_SWITCH_H

/**
 * @file
 * The emulated switch and its runner: a pipeline file turned into ingress
 * stages, a traffic manager and egress stages, driven by whoever owns the
 * clock (the live worker lcore, or the replay loop). One lcore owns a switch:
 * nothing in it is shared or locked.
 *
 *     emu_switch_rx()  RX burst -> ingress stages -> TM enqueue
 *     emu_switch_tx_prepare()/emu_switch_tx_done()
 *                      TM dequeue (departure <= now) -> egress stages -> TX
 *
 * Conservation: rx + created = tx + drops + held + consumed, where drops are
 * every counter named drop_* (stages, TM, runner), held is what the TM, the
 * stages and the TX staging buffers still own, and consumed counts the MAC
 * control frames (PAUSE, PFC) the switch honoured instead of forwarding. Incast
 * frames (virtual senders) count as created when generated and as consumed when
 * the TM releases them and they are absorbed (not sent to a sink port).
 */

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <jansson.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include "lib/base/emu_err.h"
#include "lib/base/emu_json.h"
#include "lib/fabric/fab.h"
#include "lib/tm/emu_incast.h"
#include "lib/stage/emu_stage.h"
#include "lib/switch/emu_program.h"
#include "lib/tm/emu_tm.h"

#define EMU_BURST 32
#define EMU_MAX_STAGES 32
#define EMU_TX_STAGE_PKTS 512
#define EMU_MAX_WORKERS 16

struct emu_pipeline_port {
	const char *name; /**< switch port name ("p0") */
	const char *dev;  /**< DPDK device name or PCI address; NULL = the i-th DPDK port */
	uint32_t mtu;     /**< L3 MTU to configure (default 9216) */
	/** rx_guard (live mode): PFC XOFF for the port's lossless priorities out of the port
	 * while one of its RX queues holds xoff or more frames, XON once all hold at most xon
	 * (0: the live runner's default, half and an eighth of the ring) */
	bool rx_guard;
	uint32_t guard_xoff, guard_xon;
};

/** A loaded, validated pipeline document (the switch definition). */
struct emu_pipeline {
	json_t *root;
	char *file;
	char *dir; /**< directory of the file: relative names in it resolve here */
	unsigned int n_ports;
	struct emu_pipeline_port ports[EMU_MAX_PORTS];
	const char *port_names[EMU_MAX_PORTS + 1];
	struct emu_tm_cfg tm;
	uint32_t mbufs;      /**< mbuf pool size (0 = derived from the TM) */
	uint32_t max_mtu;
	unsigned int n_incast;
	struct emu_incast_cfg incast[EMU_MAX_INCAST]; /**< virtual senders ("incast") */
	struct fab_cfg *fabric; /**< the emulated fabric ("fabric"), NULL without one */
	/** every TM port's name: the ports, then the fabric's links; NULL-terminated */
	const char *tm_port_names[EMU_TM_MAX_PORTS + 1];
	bool check_only; /**< set before emu_switch_create() to validate without side effects */
};

/** Load and check the structure of pipeline @p file (stage parameters are checked by emu_switch_create()). */
int emu_pipeline_load(const char *file, struct emu_pipeline **out, struct emu_err *err);

/** Same, from a parsed document (takes a reference); @p file is used in messages and for relative paths. */
int emu_pipeline_from_json(json_t *root, const char *file, struct emu_pipeline **out,
			   struct emu_err *err);

/** Free a pipeline; accepts NULL. */
void emu_pipeline_free(struct emu_pipeline *pl);

/** Number of mbufs the switch needs for @p pl (TM slots + RX/TX rings + slack). */
uint32_t emu_pipeline_mbufs_needed(const struct emu_pipeline *pl, uint32_t n_rxd, uint32_t n_txd);

/** Data room (bytes) of each mbuf for @p pl's largest MTU. */
uint16_t emu_pipeline_data_room(const struct emu_pipeline *pl);

/** Create the packet pool with the private area every rocemu mbuf carries. */
struct rte_mempool *emu_pool_create(const char *name, uint32_t n, uint16_t data_room, int socket,
				    struct emu_err *err);

#define EMU_PIPELINE_MAX_FILES 32

/**
 * What a pipeline will take when built, from its configuration alone (no EAL): memory, with
 * the key that costs most, and the files its stages write. rocemu check and every run use it
 * before taking memory or opening files, so that check OK means the run starts.
 */
struct emu_pipeline_needs {
	uint32_t pool_mbufs;
	uint64_t pool_bytes;   /**< the packet pool */
	uint64_t eal_bytes;    /**< what comes from EAL memory (pool, capture pools) */
	uint64_t total_bytes;  /**< everything: pools, delay lines, queues, stage tables */
	char biggest[EMU_JSON_PATH_LEN]; /**< JSON path of the key that costs most */
	uint64_t biggest_bytes;
	unsigned int n_files;
	const char *files[EMU_PIPELINE_MAX_FILES];            /**< files stages write or read */
	char file_roles[EMU_PIPELINE_MAX_FILES][EMU_JSON_PATH_LEN]; /**< their JSON paths */
	bool file_input[EMU_PIPELINE_MAX_FILES];              /**< read (a table), not written */
	uint32_t file_rotates[EMU_PIPELINE_MAX_FILES];        /**< struct emu_file_ref's */
};

/** Fill @p nd for @p pl (validating the keys it reads). */
int emu_pipeline_needs(const struct emu_pipeline *pl, struct emu_pipeline_needs *nd,
		       struct emu_err *err);

/** Physical memory, or @p max_mem_mb (when not 0 and lower). */
uint64_t emu_mem_limit_bytes(uint64_t max_mem_mb);

/** Refuse, with the costliest key's path and the numbers, a pipeline above @p limit_bytes. */
int emu_pipeline_check_mem(const struct emu_pipeline_needs *nd, uint64_t limit_bytes,
			   bool limit_given, struct emu_err *err);

struct emu_switch;

/** Build a switch from @p pl: instantiate and validate every stage, the TM. */
struct emu_switch *emu_switch_create(struct emu_pipeline *pl, struct rte_mempool *pool,
				     uint64_t seed, struct emu_err *err);

/**
 * Another replica of @p primary (built from the same @p pl) for another worker lcore: as
 * emu_switch_create(), but its replicable stages (captures) join @p primary's instead of
 * opening files of their own: @p primary's emu_switch_service() serves both. Free the
 * replica before @p primary.
 */
struct emu_switch *emu_switch_create_replica(struct emu_pipeline *pl, struct rte_mempool *pool,
					     uint64_t seed, struct emu_switch *primary,
					     struct emu_err *err);

/** Free the switch and every packet it holds; accepts NULL. The pipeline stays the caller's. */
void emu_switch_free(struct emu_switch *sw);

/** Attach a program (NULL detaches) and set time zero of its timeline to @p t0_ns. */
void emu_switch_set_program(struct emu_switch *sw, struct emu_program *prog, uint64_t t0_ns);

/**
 * From another lcore: offer @p prog (compiled and validated against this switch) to replace
 * the running program; the owner takes it between bursts and starts its timeline then.
 */
void emu_switch_offer_program(struct emu_switch *sw, struct emu_program *prog);

/**
 * Apply every action of @p prog due at @p rel_ns (relative to its time zero), which is
 * @p now_ns on the switch's clock; returns how many. The runner does this between bursts
 * for the attached program; tests and the fuzzer call it directly.
 */
unsigned int emu_switch_apply_due(struct emu_switch *sw, struct emu_program *prog,
				  uint64_t rel_ns, uint64_t now_ns);

/** Whether the offered program was taken; then *@p retired is the one it replaced (to free). */
bool emu_switch_program_taken(const struct emu_switch *sw, struct emu_program **retired);

/** Take a received burst on port @p port at @p now_ns; the switch owns the mbufs afterwards. */
void emu_switch_rx(struct emu_switch *sw, uint16_t port, struct rte_mbuf **pkts, uint16_t n,
		   uint64_t now_ns);

/**
 * Same, for frames of which the mbufs hold only the first bytes (replayed header captures):
 * @p wire_lens (NULL = none) gives each frame's length on the wire, which the switch then
 * buffers, shapes and counts (EMU_META_SNAP).
 */
void emu_switch_rx_lens(struct emu_switch *sw, uint16_t port, struct rte_mbuf **pkts, uint16_t n,
			const uint32_t *wire_lens, uint64_t now_ns);

/**
 * Move what the TM releases by @p now_ns on port @p port through the egress stages into
 * the port's TX staging buffer; return the staged packets (*pkts) and their count.
 */
uint16_t emu_switch_tx_prepare(struct emu_switch *sw, uint16_t port, uint64_t now_ns,
			       struct rte_mbuf ***pkts);

/**
 * What emu_switch_tx_prepare() does for every port before it drains its own: the program's
 * due actions and incast frames, the fabric's hops, the ingress stages' held packets, all
 * up to @p now_ns. Done again at the same @p now_ns it changes nothing.
 */
void emu_switch_tick(struct emu_switch *sw, uint64_t now_ns);

/**
 * After emu_switch_tick() at some time, emu_switch_tx_prepare() of @p port at that time would
 * change nothing and return no packet: nothing staged, nothing in the port's TM, no PFC frame
 * to build, no egress stage releasing held packets. A caller that polls every port (replay)
 * may skip it.
 */
bool emu_switch_tx_idle(const struct emu_switch *sw, uint16_t port);

/** The first @p sent staged packets of @p port were transmitted (ownership passed on). */
void emu_switch_tx_done(struct emu_switch *sw, uint16_t port, uint16_t sent);

/** Earliest time anything in the switch changes (TM, profile), UINT64_MAX when idle. */
uint64_t emu_switch_next_event_ns(const struct emu_switch *sw);

/**
 * emu_switch_next_event_ns() in two parts, for a caller on a virtual clock that may take
 * departures late: returns the earliest event but a packet leaving a port's delay line, and
 * sets @p wire_ns to the earliest such departure and @p n_wire to the ports with one pending.
 * A departure is set apart only where it changes nothing in the switch (no egress stage, no
 * incast source, no fabric, one worker): taken at a later tx_prepare, the packet leaves with
 * the same time (its metadata's ts_ns), in the same order on its port, and nothing the switch
 * decided in between depended on it (a queue's buffer is released when its packet starts).
 * Elsewhere @p wire_ns is UINT64_MAX and the return is emu_switch_next_event_ns().
 */
uint64_t emu_switch_next_change_ns(const struct emu_switch *sw, uint64_t *wire_ns,
				   unsigned int *n_wire);

/** Packets the switch holds (TM + stages + TX staging). */
uint64_t emu_switch_held(const struct emu_switch *sw);

/** Non-worker work of the stages (capture files). @p final flushes and closes. */
void emu_switch_service(struct emu_switch *sw, bool final);

/**
 * Worker side (live): the worker's clock at the end of a pass, after everything the pass did,
 * for the stages that order several workers' output by it (a capture's one file).
 */
void emu_switch_publish_clock(struct emu_switch *sw, uint64_t now_ns);

/**
 * Discard held packets (TM, TX staging, stages' delay lines), counting them as
 * drop_discarded_at_exit.
 */
void emu_switch_discard_held(struct emu_switch *sw);

struct emu_conservation {
	uint64_t rx, created, tx, drops, held;
	uint64_t consumed;   /**< MAC control frames honoured, never forwarded */
	/** Frames given to other workers' replicas and taken from them (emu_switch_set_worker()):
	 * what is in the rings between workers is handoff_out - handoff_in of all of them. */
	uint64_t handoff_out, handoff_in;
	/** rx + created + handoff_in - tx - drops - held - consumed - handoff_out: zero when
	 * correct */
	int64_t unaccounted;
};

struct emu_snap;

/** A worker's handoff counters, read from its snapshot. */
struct emu_snap_view {
	uint64_t handoff_in, handoff_out, drop_full;
	uint64_t delay_ns;         /**< sum over handoff_in of the time from RX (or creation) */
	uint64_t pfc;              /**< PFC frames among them: made or received by another worker */
	uint64_t pfc_delay_max_ns; /**< the longest of those */
};

/** The handoff counters of snapshot @p sn. */
void emu_snap_view(const struct emu_snap *sn, struct emu_snap_view *v);

/** The program the switch runs (NULL: none). Not while it runs on another lcore. */
struct emu_program *emu_switch_program(const struct emu_switch *sw);

/**
 * Make @p sw one of @p n_workers replicas of a switch, one per worker lcore: it owns the
 * egress of the ports in @p owned (TM, egress stages, TX); a frame for port p outside it goes
 * to worker owner_of[p] through rings[owner_of[p]] (an SPSC rte_ring this replica alone
 * enqueues on), and so does a MAC control frame received on such a port (its pause belongs to
 * p's egress). Call before the switch runs; rings[own index] is not used.
 */
int emu_switch_set_worker(struct emu_switch *sw, uint64_t owned, const uint8_t *owner_of,
			  unsigned int n_workers, struct rte_ring *const *rings,
			  struct emu_err *err);

/**
 * Push the frames staged for other workers into their rings (once a poll). A full ring drops
 * what does not fit as runner.drop_handoff_full. Returns the frames pushed.
 */
unsigned int emu_switch_handoff_flush(struct emu_switch *sw);

/**
 * Worker side (live --rx-spread): frames received on @p port that a full ring to another
 * worker refused, before any stage: counted as received and dropped as
 * runner.drop_handoff_full (a ring between workers was full).
 */
void emu_switch_rx_refused(struct emu_switch *sw, uint16_t port, struct rte_mbuf **pkts,
			   uint16_t n, uint64_t now_ns);

/**
 * Send PFC frame @p f out of port f->port for rocemu itself (live's RX guard): counted as
 * created, queued on the port's control queue here, or handed to the worker that sends from
 * the port. false when the pool was empty (runner.pfc_not_sent_nombuf).
 */
bool emu_switch_pfc_out(struct emu_switch *sw, const struct emu_tm_pfc_frame *f,
			uint64_t now_ns);

/** Frames another worker handed over (taken from its ring): into this replica's TMs. */
void emu_switch_rx_handoff(struct emu_switch *sw, struct rte_mbuf **pkts, uint16_t n,
			   uint64_t now_ns);

/** Frames staged for other workers and not yet pushed (held, for the conservation line). */
uint64_t emu_switch_handoff_staged(const struct emu_switch *sw);

/**
 * Add the counters of replica @p src into @p dst (both stopped): ports, stages, TM, fabric,
 * incast and runner, so that @p dst's reports show the whole switch.
 */
void emu_switch_absorb(struct emu_switch *dst, const struct emu_switch *src);

/** Add snapshot @p src (another replica's) into @p dst: sums, maxima of max_*, any of flags. */
void emu_snap_absorb(const struct emu_switch *sw, struct emu_snap *dst,
		     const struct emu_snap *src);

/** Print the interval line from snapshot @p sn (any thread; remembers it for the next). */
void emu_switch_print_interval_snap(struct emu_switch *sw, const struct emu_snap *sn, FILE *f,
				    double t_s);

/** Compute the conservation totals from all counters. */
void emu_switch_conservation(const struct emu_switch *sw, struct emu_conservation *c);

/** The conservation line: "conservation: rx N + created N = tx N + drops N + held N + consumed N: OK". */
void emu_switch_conservation_line(const struct emu_switch *sw, char *buf, size_t len);

/** The conservation line of totals @p c (frames in rings between workers count as held). */
void emu_conservation_text(const struct emu_conservation *c, char *buf, size_t len);

/** Print the human summary (ports, stages, TM, drops by reason, conservation). */
void emu_switch_print_summary(const struct emu_switch *sw, FILE *f);

/** One line of rates/counters for --stats-interval. */
void emu_switch_print_interval(const struct emu_switch *sw, FILE *f, double t_s);

/** All counters as JSON (for --stats), from a snapshot the caller takes: the owner's lcore. */
json_t *emu_switch_stats_json(const struct emu_switch *sw);

/** A consistent copy of every counter the stats show. */
struct emu_snap;
struct emu_snap *emu_switch_snap_alloc(const struct emu_switch *sw);
void emu_switch_snap_take(const struct emu_switch *sw, struct emu_snap *sn);
json_t *emu_switch_snap_json(const struct emu_switch *sw, const struct emu_snap *sn);

/** Bytes of a snapshot of @p sw. */
size_t emu_switch_snap_size(const struct emu_switch *sw);

/** Another thread: a snapshot the owner takes between bursts, into @p dst; 0, -ETIMEDOUT. */
int emu_switch_snap_fetch(struct emu_switch *sw, bool owner_gone, uint64_t timeout_us,
			  struct emu_snap *dst);

/** The owner, between bursts: take a snapshot if another thread asked for one. */
void emu_switch_snap_serve(struct emu_switch *sw);

/**
 * Another thread (telemetry): the stats JSON of a snapshot the owner takes between bursts,
 * without stopping it; NULL when it did not answer in @p timeout_us. With @p owner_gone (the
 * worker has stopped) the snapshot is taken here.
 */
json_t *emu_switch_snap_request(struct emu_switch *sw, bool owner_gone, uint64_t timeout_us);

/** The pipeline the switch was built from. */
const struct emu_pipeline *emu_switch_pipeline(const struct emu_switch *sw);

/** The TM, for the profile loader and tests. */
struct emu_tm *emu_switch_tm(struct emu_switch *sw);

/**
 * For tests: with @p on, the fabric takes packets one at a time (no burst onto the links, no
 * bulk merge of the last level) and the TM its general steps (emu_tm_set_general_only()),
 * which must give the same result; off from emu_switch_create().
 */
void emu_switch_set_general_only(struct emu_switch *sw, bool on);

/** A TM change (emu_tm_set()) at @p now_ns, with the switch's TM random stream: tests. */
int emu_switch_tm_set(struct emu_switch *sw, uint16_t port, const char *key, const json_t *val,
		      bool apply, uint64_t now_ns, const char *path, struct emu_err *err);

/**
 * The value the pipeline gave a key a profile can change (TM port, stage or incast source
 * @p index), as a new JSON reference that the compile functions take; NULL when unknown.
 * Read from a copy taken when the switch was built: never from the running switch.
 */
json_t *emu_switch_setting(const struct emu_switch *sw, enum emu_target t, int index,
			   const char *key);

/**
 * Compile a change of @p key of target @p t / @p index to @p val into a typed change the
 * worker applies (control path; validates; reads nothing the worker writes).
 */
int emu_switch_compile(const struct emu_switch *sw, enum emu_target t, int index,
		       const char *key, const json_t *val, struct emu_set *out, const char *path,
		       struct emu_err *err);

/** Index of the stage named @p name (its "name", or its type), or -1. */
int emu_switch_stage_index(const struct emu_switch *sw, const char *name);

/** Port counters: rx/tx packets and bytes. */
struct emu_port_stats {
	uint64_t rx_pkts, rx_bytes, tx_pkts, tx_bytes;
};
void emu_switch_port_stats(const struct emu_switch *sw, uint16_t port, struct emu_port_stats *s);

/** Value of counter @p name of stage @p stage ("forward", "capture", ...), or -1 when unknown. */
int64_t emu_switch_stage_counter(const struct emu_switch *sw, const char *stage, const char *name);

/** Index of the incast source named @p name, or -1. */
int emu_switch_incast_index(const struct emu_switch *sw, const char *name);

/** Value of counter @p ctr of incast source @p name, or -1 when unknown. */
int64_t emu_switch_incast_counter(const struct emu_switch *sw, const char *name, const char *ctr);

/** Arrival time of incast source @p name's next frame, UINT64_MAX when disabled or unknown. */
uint64_t emu_switch_incast_next_ns(const struct emu_switch *sw, const char *name);

/**
 * Print a WARNING line for each input port from which no frame can reach an output port
 * (no forward stage, an unpaired port); returns how many.
 */
unsigned int emu_switch_route_warnings(const struct emu_switch *sw, FILE *f);

/** After emu_switch_service(final): print one line per stage that failed; returns how many. */
unsigned int emu_switch_report_failures(const struct emu_switch *sw, FILE *f);

/** The same, each line starting "@p prog: " ("rocemu replay") instead of "rocemu: ". */
unsigned int emu_switch_report_failures_as(const struct emu_switch *sw, FILE *f, const char *prog);

/**
 * Have the switch write every packet's trace (struct emu_trace) although no stage reads it:
 * for a caller that formats annotations itself (emu_switch_annotate(): replay's pcapng
 * outputs and --drops). Without it, and without a stage that reads traces (an annotated
 * capture), the trace's fields are not written and say nothing. Before the switch runs.
 */
void emu_switch_want_trace(struct emu_switch *sw);

/**
 * The one drop path: every drop (stages, TM, incast sinks, runner) is counted under a reason id
 * and passed to each hook added here before the packet is freed (drop captures, replay
 * --drops); up to EMU_DROP_MAX_HOOKS, -ENOSPC beyond. Before the switch runs.
 */
int emu_switch_add_drop_hook(struct emu_switch *sw,
			     void (*hook)(void *arg, struct rte_mbuf *m, uint32_t reason),
			     void *arg);

/** Reason ids run from 0 to this (exclusive); not every id is a drop reason. */
uint32_t emu_switch_n_reasons(const struct emu_switch *sw);

/**
 * Name of reason @p id as the summary's "drops by reason" shows it ("impair.drop_gilbert",
 * "tm.p1.drop_queue_full", "runner.drop_no_route"); true when it is a drop reason.
 */
bool emu_switch_reason_name(const struct emu_switch *sw, uint32_t id, char *buf, size_t len);

/**
 * The annotation of @p m (a pcapng packet comment, documented in docs/capture.md): "rocemu:" then
 * key=value fields of its trace: in, out, t_in (ns), prio, qdepth (bytes ahead of it at
 * enqueue), wait (enqueue to serialisation, ns), ce=red|event, delayed=NS, corrupted,
 * rewritten, duplicate, event=COUNTER, created=STAGE|switch|incast, and drop=REASON when
 * @p drop_reason >= 0. Empty (returns 0) when nothing happened to it and not @p all.
 */
size_t emu_switch_annotate(const struct emu_switch *sw, struct rte_mbuf *m, int drop_reason,
			   bool all, char *buf, size_t len);

/** The same from a packet's metadata alone (a capture's copy of it). */
size_t emu_switch_annotate_meta(const struct emu_switch *sw, const struct emu_pkt_meta *meta,
				int drop_reason, bool all, char *buf, size_t len);

/** The counter behind reason @p id. */
uint64_t emu_switch_reason_count(const struct emu_switch *sw, uint32_t id);

/** Stop every incast source and PFC storm, the sources that never run dry (replay: the
 *  input and the profile are exhausted, or a stop signal). */
void emu_switch_sources_stop(struct emu_switch *sw);

/** Profile changes applied so far (the runner's profile_changes counter). */
uint64_t emu_switch_profile_changes(const struct emu_switch *sw);

#endif
