/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef EMU_CAPTURE_H
#define EMU_CAPTURE_H

/**
 * @file
 * Packet capture without I/O on the worker: the worker copies the first snaplen bytes of a
 * packet (and, for annotated pcapng, its metadata and trace) into a fixed-size record of a
 * single-producer/single-consumer ring of records; the main lcore writes the records to a
 * nanosecond pcap or pcapng in time order (a 10 ms window sorts what the worker pushed out
 * of order, emu_capsort.h; emu_pcapw: one write() per 256 KB, every write checked, the file put
 * in place only when complete). When the ring is full the packet is counted and not
 * captured; the forwarded packet is never affected. A write error stops the file, counts
 * what it lost and is reported.
 */

#include <stdbool.h>
#include <stdint.h>

#include <rte_mbuf.h>

#include "lib/base/emu_err.h"

struct emu_pkt_meta;

struct emu_capture;

struct emu_capture_stats {
	uint64_t captured;  /**< copies queued by the worker */
	uint64_t ring_full; /**< not captured: ring full */
	uint64_t nombuf;    /**< not captured: capture pool empty */
	uint64_t written;   /**< frames in the file(s): written out, not just buffered (main lcore) */
	uint64_t write_errors; /**< frames lost because the file failed (main lcore) */
	uint64_t filtered_drops; /**< dropped frames not written: reason not in the list (main) */
	uint64_t capped;    /**< not written: the size cap was reached (main lcore) */
	uint64_t late;      /**< later than the writer's time-order window: written at the
			     *   time of the record before them, so the file stays in order */
};

/**
 * Open @p file for writing and create the ring of @p ring_size (rounded up to a power of 2)
 * records of min(@p snaplen, @p max_frame) bytes of frame each.
 */
struct emu_capture *emu_capture_create(const char *file, uint32_t snaplen, uint32_t max_frame,
				       uint32_t ring_size, struct emu_err *err);

/**
 * Memory a capture of these sizes takes at most (its ring, annotated), for the pipeline's
 * memory check.
 */
uint64_t emu_capture_bytes(uint32_t snaplen, uint32_t max_frame, uint32_t ring_size);

/**
 * The same with pcapng interfaces @p if_names (@p n_if of them; a pcap file has one and
 * ignores them).
 */
struct emu_capture *emu_capture_create_ng(const char *file, uint32_t snaplen, uint32_t max_frame,
					  uint32_t ring_size, unsigned int n_if,
					  const char *const *if_names, struct emu_err *err);

/**
 * pcapng: annotate each record with @p fn (the switch's trace, emu_switch_annotate()) on the
 * main lcore; @p all: every frame, else only those something happened to; dropped frames
 * whose reason is not in @p drop_filter (NULL-terminated names; NULL = every reason) are
 * not written. The worker copies the packet's trace (48 bytes) into a second ring for each
 * record that is to get a comment (every one with @p all; else the dropped frames and those
 * emu_trace_eventful() says something happened to); @p fn formats it on the main lcore.
 * Before the first frame (the second ring is allocated here): returns 0, or -ENOMEM / -EBUSY
 * with @p err filled.
 */
int emu_capture_set_annotate(struct emu_capture *cap,
			     size_t (*fn)(const void *arg, const struct emu_pkt_meta *meta,
					  int drop_reason, bool all, char *buf, size_t len),
			     const void *arg, bool all, const char *const *drop_filter,
			     struct emu_err *err);

/**
 * With emu_capture_set_annotate(): the annotations only choose the dropped frames by reason;
 * no comment is written.
 */
void emu_capture_set_no_comments(struct emu_capture *cap);

/**
 * Rotation (tcpdump -C/-W): when the file would grow past @p bytes, put it in place and go on in
 * FILE-1.EXT, FILE-2.EXT, ...; with @p files > 0 the names cycle over FILE, FILE-1 ... FILE-(files-1),
 * replacing the oldest. Main lcore, before the first drain.
 */
void emu_capture_set_rotation(struct emu_capture *cap, uint64_t bytes, uint32_t files);

/**
 * A size cap (@p bytes over every file of a rotation; 0: none): the record that would take the
 * capture past it stops the capture: its file stays complete and is put in place at close,
 * later frames are counted in capped, and emu_capture_error() says so (the run's exit status
 * is 1). Main lcore, before the first drain.
 */
void emu_capture_set_max_bytes(struct emu_capture *cap, uint64_t bytes);

/** Worker side: copy @p m stamped @p ts_ns. Returns false when it could not be captured. */
bool emu_capture_push(struct emu_capture *cap, struct rte_mbuf *m, uint64_t ts_ns);

/**
 * Worker side, pcapng: on interface @p ifidx with epb_flags direction @p epb_dir (1 in,
 * 2 out), and @p drop_reason >= 0 for a dropped frame.
 */
bool emu_capture_push_if(struct emu_capture *cap, struct rte_mbuf *m, uint64_t ts_ns,
			 uint16_t ifidx, uint8_t epb_dir, int drop_reason);

/**
 * Worker side, a burst: copy the @p n packets, each stamped with its metadata's ts_ns, on
 * the interface of its out port (@p egress, epb_flags outbound) or in port (inbound).
 * Returns how many were captured; the others (the ring was full) are counted in ring_full.
 * One index update for the burst.
 */
unsigned int emu_capture_push_burst(struct emu_capture *cap, struct rte_mbuf **pkts,
				    unsigned int n, bool egress);
/**
 * emu_capture_push_burst() of the packets whose out port (@p egress) or in port is in
 * @p port_mask (bit per port; all ones: every packet, ports past 31 included); @p offered
 * says how many were (captured or counted in ring_full).
 */
unsigned int emu_capture_push_burst_ports(struct emu_capture *cap, struct rte_mbuf **pkts,
					  unsigned int n, bool egress, uint32_t port_mask,
					  unsigned int *offered);

/** Main-lcore side: write up to @p max queued frames; returns how many. */
unsigned int emu_capture_drain(struct emu_capture *cap, unsigned int max);

/** Write everything queued and flush the file. */
void emu_capture_flush(struct emu_capture *cap);

/**
 * End of the run: write everything queued and put the file in place. Returns 0, or -EIO when
 * the file failed (emu_capture_error() says how and where its data is).
 */
int emu_capture_close(struct emu_capture *cap);

/** The file's first failure (or the size cap reached) as one line, NULL when none. */
const char *emu_capture_error(const struct emu_capture *cap);

/**
 * Another producer of @p writer's file (live --workers: one per worker beyond the first): a
 * ring of @p ring_size records of the writer's layout (snaplen, annotations), pushed to as
 * any capture, with no file of its own. @p writer's emu_capture_drain() reads it with its own
 * ring into the one time-order window, and its emu_capture_stats() add its counters.
 * Created before the first frame; at most 15 per writer. Freed with emu_capture_free()
 * (what is still in it is written first, unless the writer is closed or freed).
 */
struct emu_capture *emu_capture_create_peer(struct emu_capture *writer, uint32_t ring_size,
					    struct emu_err *err);

/**
 * Producer side (the worker, live --workers): its clock at the end of a pass, after every
 * record the pass pushed. What it pushes later is no earlier than @p now_ns (but for frames
 * held back in a full TX staging, within the writer's window): the writer holds the other
 * producers' records until this clock passes them. A producer that never publishes holds
 * nothing back (replay; tests).
 */
void emu_capture_publish_clock(struct emu_capture *cap, uint64_t now_ns);

/**
 * After close: whether the file is not where it was asked to be (a write or close error; the
 * message says where its data is). A capture stopped by its size cap alone is in place.
 */
bool emu_capture_file_failed(const struct emu_capture *cap);

/** Ring slots. */
uint32_t emu_capture_ring_size(const struct emu_capture *cap);

/**
 * Free; accepts NULL. A capture never closed (a refused or failed run) removes its
 * temporary file and leaves any existing file of that name as it was.
 */
void emu_capture_free(struct emu_capture *cap);

/** Counters (worker ones are read racily, which is fine for 64-bit loads on x86). */
void emu_capture_stats(const struct emu_capture *cap, struct emu_capture_stats *s);

/** The file name. */
const char *emu_capture_file(const struct emu_capture *cap);

#endif
