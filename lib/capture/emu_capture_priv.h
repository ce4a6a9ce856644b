/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef EMU_CAPTURE_PRIV_H
#define EMU_CAPTURE_PRIV_H

/*
 * The capture ring's record layout and its indices, shared by its two sides: the worker's push
 * (emu_capture_push.c) and the main lcore's drain and file writing (emu_capture.c).
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <rte_common.h>

#include "lib/base/emu_err.h"
#include "lib/pkt/emu_pkt.h"
#include "lib/capture/emu_capsort.h"
#include "lib/capture/emu_capture.h"
#include "lib/capture/emu_pcapw.h"

/*
 * The ring: fixed-size records written in place by the worker (one producer) and read by the
 * main lcore (one consumer). Written here rather than with rte_ring + a mempool of copies (as
 * before): rte_ring carries pointers, so every captured frame cost an mbuf allocation and an
 * rte_pktmbuf_copy; records inline cost one copy of the headers.
 *
 * What a record costs the worker (tests/bench/README.md, bench_capture): the copy into memory
 * far beyond the cache (a ring that holds 10 ms of a busy port is tens of MB) and the
 * bookkeeping around it. The record is compact: a 16-byte header, then the frame's first
 * bytes. When annotating, the 48 bytes of the packet's trace that the writer formats into the
 * comment (on the main lcore, never here) go to a second ring, and only for the frames that
 * get a comment (every frame with "all"; else the dropped ones and those something happened
 * to, emu_trace_eventful()): a frame nothing happened to costs what a header capture costs.
 * The second ring needs no index of its own from the writer: it has as many entries as the
 * first, each belongs to a record in order, so it can never hold more entries than the first
 * holds records; the writer reads an entry before it hands back its record's slot. The
 * producer keeps its own copy of the consumer's index and reads the shared one only when the
 * ring looks full, and publishes its own once per burst: no cache line goes back and forth
 * per packet. Ordinary stores, not non-temporal ones: on
 * the AMD EPYC this was measured on, streaming 192-byte records into a 192 MB ring cost
 * 40 cycles a record with movntdq against 25 with memcpy (the hardware prefetches the
 * store stream), 75 when records do not fill whole lines. In the pipeline itself
 * (bench_capture, hugepages) streaming stores into whole-line slots cost the same as these
 * (+45-48% against +47-49%): the record's cost there is the memory it goes to, not the stores.
 */
struct emu_cap_rec {
	uint64_t ts_ns;
	uint32_t origlen;
	uint16_t caplen;
	uint8_t ifidx;
	uint8_t info;      /* EMU_CAP_DIR_MASK: epb_flags direction; EMU_CAP_ANN: emu_cap_ann follows */
};
#define EMU_CAP_DIR_MASK 0x03
#define EMU_CAP_ANN 0x80 /* the record's emu_cap_ann is the next entry of the second ring */
#define EMU_CAP_PREFETCH 4 /* slots the writer prefetches ahead */
#define EMU_CAP_MAX_PEERS 15 /* producers besides the writer's own ring (EMU_MAX_WORKERS - 1) */

/* What emu_switch_annotate_meta() reads of a packet's metadata: its bytes 8-16 and its trace
 * (bytes 24-64), copied as they are (see emu_capture_put()). */
struct emu_cap_ann {
	uint16_t in_port;
	uint16_t out_port;
	uint8_t prio;
	uint8_t meta_flags;
	uint16_t meta_reserved;
	struct emu_trace trace;
}; /* trace.drop_reason: 1 + the reason of a drop capture's copy, 0 for a frame that passed */

_Static_assert(sizeof(struct emu_cap_rec) == 16, "one 16-byte store");
_Static_assert(sizeof(struct emu_cap_ann) == 48, "three 16-byte stores");
_Static_assert(EMU_MAX_PORTS + 1 <= UINT8_MAX, "ifidx is a byte");

struct emu_capture {
	/* producer (worker) */
	uint32_t tail __rte_cache_aligned; /* next slot the worker writes */
	uint32_t head_seen;   /* the consumer's head as the worker last read it */
	uint32_t ann_tail;    /* next entry of anns[] the worker writes */
	uint64_t captured, ring_full, nombuf;
	/* the worker's clock after its last pass (emu_capture_publish_clock(); UINT64_MAX:
	 * never published) */
	uint64_t clock_ns;
	/* consumer (main lcore) */
	uint32_t head __rte_cache_aligned; /* next slot the main lcore reads */
	uint32_t ann_head;    /* next entry of anns[] it reads (its own: see the file's header) */
	/* set up before the run, read by both */
	uint8_t *slots __rte_cache_aligned; /* n_slots records of slot_size bytes */
	uint32_t slot_size;
	struct emu_cap_ann *anns; /* annotating: n_slots entries, the second ring */
	uint32_t mask;        /* n_slots - 1 */
	uint32_t snaplen;
	bool annotating;      /* the worker fills anns[] for the frames that get a comment */
	char *file;
	struct emu_pcapw *w;
	/* main-written */
	uint64_t accepted;     /* frames the file writer took (buffered or in the file) */
	uint64_t written_done; /* frames in the files rotation closed */
	uint64_t write_errors; /* frames the writer refused: the file had failed */
	bool closed;
	char errmsg[EMU_ERR_LEN]; /* the first write or close error, "" when none */
	/* pcapng: comments from the switch's trace (main lcore), interface and direction per copy */
	size_t (*annotate)(const void *arg, const struct emu_pkt_meta *meta, int drop_reason,
			   bool all, char *buf, size_t len);
	const void *annotate_arg;
	bool annotate_all;
	bool no_comments;     /* annotate only to choose dropped frames by reason: write none */
	const char *const *drop_filter; /* NULL: every drop reason; else these names only */
	uint64_t filtered_drops;
	/* rotation (tcpdump -C/-W): a new file when this one reaches rotate_bytes */
	uint64_t rotate_bytes;
	uint32_t rotate_files;   /* 0: no limit; else the names cycle over this many */
	uint32_t file_idx;
	uint64_t files_done;
	uint32_t snaplen_file;
	/* max_bytes: a size cap over every file of the capture; reached, the capture stops */
	uint64_t max_bytes;      /* 0: none */
	uint64_t bytes_done;     /* bytes of the files rotation closed */
	uint64_t capped;         /* frames not written after the cap was reached */
	bool cap_reached;
	bool io_failed;          /* a write, rotation or close failed: the file is not in place */
	/* the writer's time-order window (emu_capsort.h) */
	struct emu_capsort *order;
	uint64_t last_ts_ns;     /* the last time written */
	uint64_t late;           /* records later than the window: written at last_ts_ns */
	unsigned int n_if;
	const char *const *if_names;
	/* several producers (live --workers): one ring per worker, one file. A peer is a ring
	 * without a file whose records this writer drains with its own (emu_capture_create_peer) */
	struct emu_capture *writer;	/* a peer's writer; NULL for a writer */
	struct emu_capture *peers[EMU_CAP_MAX_PEERS];
	unsigned int n_peers;
};

#endif
