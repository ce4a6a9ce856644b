/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The capture ring, both of its sides: the worker's push (records written in place) and the
 * main lcore's drain into lib/capture's file writer, with rotation, the size cap and the
 * time-order window (emu_capsort.c). About 820 lines, over the ~600 of lib/: the two sides share the record layout and the ring's indices, which stay
 * private to this file (splitting it would put them in a header for two readers).
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_common.h>
#include <rte_errno.h>
#include <rte_lcore.h>
#include <rte_malloc.h>
#include <rte_prefetch.h>
#include <rte_vect.h>

#include "lib/base/emu_out.h"
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
};

/*
 * The writer's time-order window: records are held until one EMU_CAP_ORDER_NS newer was seen
 * (10 ms: a live pass lasts microseconds, a stalled one milliseconds), at most as many as the
 * ring holds and EMU_CAP_ORDER_MAX_BYTES of them (malloc'd on the main lcore, not EAL memory).
 */
#define EMU_CAP_ORDER_NS 10000000ULL
#define EMU_CAP_ORDER_MAX_BYTES (16u << 20)

/* Bytes of a slot: the header, then the frame's first bytes. */
static uint32_t
emu_capture_slot_size(uint32_t snaplen)
{
	return RTE_ALIGN_CEIL((uint32_t)sizeof(struct emu_cap_rec) + snaplen, 16);
}

uint64_t
emu_capture_bytes(uint32_t snaplen, uint32_t max_frame, uint32_t ring_size)
{
	/* at most: the slots and the second ring of an annotated capture */
	return (uint64_t)rte_align32pow2(ring_size) *
	       (emu_capture_slot_size(RTE_MIN(snaplen, max_frame)) + sizeof(struct emu_cap_ann));
}

/* Allocate @p bytes for a ring and touch every page now (without hugepages they would fault
 * in on the worker). */
static void *
emu_capture_ring_alloc(const char *what, size_t bytes)
{
	void *r = rte_malloc_socket(what, bytes, RTE_CACHE_LINE_SIZE, (int)rte_socket_id());

	if (r != NULL)
		memset(r, 0, bytes);
	return r;
}

/* Allocate the slots, and the second ring when annotating; the ring must be empty. */
static int
emu_capture_alloc(struct emu_capture *cap, struct emu_err *err)
{
	const size_t n = (size_t)cap->mask + 1;

	if (cap->slots == NULL) {
		cap->slot_size = emu_capture_slot_size(cap->snaplen);
		cap->slots = emu_capture_ring_alloc("emu_capture", n * cap->slot_size);
		if (cap->slots == NULL)
			return emu_err_setrc(err, -ENOMEM,
					     "capture ring of %zu records of %u bytes: out of memory; "
					     "lower snaplen or ring_size, or give EAL more memory", n,
					     cap->slot_size);
	}
	if (cap->annotating && cap->anns == NULL) {
		cap->anns = emu_capture_ring_alloc("emu_capture_ann", n * sizeof(*cap->anns));
		if (cap->anns == NULL)
			return emu_err_setrc(err, -ENOMEM,
					     "capture ring of %zu annotations of %zu bytes: out of "
					     "memory; lower ring_size, or give EAL more memory", n,
					     sizeof(*cap->anns));
	}
	return 0;
}

/* An entry of the time-order window: a slot, then its annotation. */
static uint32_t
emu_capture_order_bytes(const struct emu_capture *cap)
{
	return cap->slot_size + (uint32_t)sizeof(struct emu_cap_ann);
}

static uint32_t
emu_capture_order_entries(const struct emu_capture *cap)
{
	uint32_t by_bytes = EMU_CAP_ORDER_MAX_BYTES / emu_capture_order_bytes(cap);

	return RTE_MAX(RTE_MIN(cap->mask + 1, by_bytes), 64u);
}

struct emu_capture *
emu_capture_create(const char *file, uint32_t snaplen, uint32_t max_frame, uint32_t ring_size,
		   struct emu_err *err)
{
	static const char *const one[] = { "rocemu" };

	return emu_capture_create_ng(file, snaplen, max_frame, ring_size, 1, one, err);
}

struct emu_capture *
emu_capture_create_ng(const char *file, uint32_t snaplen, uint32_t max_frame, uint32_t ring_size,
		      unsigned int n_if, const char *const *if_names, struct emu_err *err)
{
	struct emu_capture *cap;

	if (n_if > EMU_MAX_PORTS + 1) {
		emu_err_setrc(err, -EINVAL, "capture: %u interfaces, at most %d", n_if,
			      EMU_MAX_PORTS + 1);
		return NULL;
	}
	cap = rte_zmalloc("emu_capture_ctl", sizeof(*cap), RTE_CACHE_LINE_SIZE);
	if (cap == NULL)
		goto nomem;
	cap->snaplen = RTE_MIN(RTE_MIN(snaplen, max_frame), 65535u);
	cap->file = strdup(file);
	if (cap->file == NULL)
		goto nomem;
	cap->mask = rte_align32pow2(ring_size) - 1;
	if (emu_capture_alloc(cap, err) != 0)
		goto fail;
	cap->order = emu_capsort_create(emu_capture_order_entries(cap), emu_capture_order_bytes(cap),
					EMU_CAP_ORDER_NS);
	if (cap->order == NULL)
		goto nomem;
	cap->n_if = emu_pcapw_fmt_for(file) == EMU_PCAPW_PCAPNG ? n_if : 1;
	cap->if_names = if_names;
	cap->w = emu_pcapw_open(file, emu_pcapw_fmt_for(file), snaplen, cap->n_if, if_names, err);
	cap->snaplen_file = snaplen;
	if (cap->w == NULL)
		goto fail;
	return cap;
nomem:
	emu_err_setrc(err, -ENOMEM, "capture: out of memory");
fail:
	emu_capture_free(cap);
	return NULL;
}

/*
 * Copy @p n bytes of a frame into a slot, rounded up to 16 (the slot has room: its size is a
 * multiple of 16 and the caller checked that the mbuf's buffer holds the rounded length), in
 * 16-byte moves: n varies per frame, and rte_memcpy()'s size dispatch cost more than the
 * copy itself for a 128-byte snaplen (tests/bench/README.md, "Capture, fourth pass"). The
 * bytes past n are never written to a file (the writer takes caplen).
 */
static inline __attribute__((always_inline)) void
emu_capture_copy16(uint8_t *dst, const uint8_t *src, uint32_t n)
{
	uint32_t o = 0;

#ifdef RTE_ARCH_X86
	for (; o + 64 <= n; o += 64) {
		__m128i a = _mm_loadu_si128((const __m128i *)(const void *)(src + o));
		__m128i b = _mm_loadu_si128((const __m128i *)(const void *)(src + o + 16));
		__m128i c = _mm_loadu_si128((const __m128i *)(const void *)(src + o + 32));
		__m128i d = _mm_loadu_si128((const __m128i *)(const void *)(src + o + 48));

		_mm_storeu_si128((__m128i *)(void *)(dst + o), a);
		_mm_storeu_si128((__m128i *)(void *)(dst + o + 16), b);
		_mm_storeu_si128((__m128i *)(void *)(dst + o + 32), c);
		_mm_storeu_si128((__m128i *)(void *)(dst + o + 48), d);
	}
	for (; o < n; o += 16)
		_mm_storeu_si128((__m128i *)(void *)(dst + o),
				 _mm_loadu_si128((const __m128i *)(const void *)(src + o)));
#else
	for (; o < n; o += 16)
		memcpy(dst + o, src + o, 16);
#endif
}

/* The trace and the fields the annotation reads, copied as they lie in the metadata. */
_Static_assert(offsetof(struct emu_pkt_meta, in_port) == 8 &&
	       offsetof(struct emu_pkt_meta, out_port) == 10 &&
	       offsetof(struct emu_pkt_meta, prio) == 12 &&
	       offsetof(struct emu_pkt_meta, trace) == 24 && sizeof(struct emu_trace) == 40,
	       "emu_cap_ann mirrors meta bytes 8-16 and 24-64");

/* The snaplen push loops are also compiled for, as a constant: the header capture
 * pipelines/capture-annotated.json uses and bench_capture measures. */
#define EMU_CAP_SNAP_FIXED 128

/* Annotation modes, for emu_capture_put()'s callers to pass as a constant. */
#define EMU_CAP_ANN_NONE 0
#define EMU_CAP_ANN_EVENTS 1
#define EMU_CAP_ANN_ALL 2

static inline int
emu_capture_ann_mode(const struct emu_capture *cap)
{
	return !cap->annotating ? EMU_CAP_ANN_NONE :
	       cap->annotate_all ? EMU_CAP_ANN_ALL : EMU_CAP_ANN_EVENTS;
}

/* Write one record in @p slot (not yet published), and its annotation when it gets one (@p ann,
 * emu_capture_ann_mode()) at *@p ann_tail (the caller's copy of cap->ann_tail, kept in a
 * register over a burst). */
static inline __attribute__((always_inline)) void
emu_capture_put(const struct emu_capture *cap, uint8_t *slot, struct rte_mbuf *m,
		uint64_t ts_ns, uint16_t ifidx, uint8_t epb_dir, int drop_reason,
		const int ann, uint32_t *ann_tail, const uint32_t snap)
{
	struct emu_cap_rec *r = (struct emu_cap_rec *)slot;
	const struct emu_pkt_meta *meta = emu_meta(m);
	const uint32_t pkt_len = rte_pktmbuf_pkt_len(m);
	const uint32_t n = RTE_MIN(pkt_len, snap != 0 ? snap : cap->snaplen);
	uint8_t *data = slot + sizeof(struct emu_cap_rec);
	struct emu_cap_rec h = {
		.ts_ns = ts_ns,
		.origlen = (meta->flags & EMU_META_SNAP) ? meta->wire_len : pkt_len,
		.caplen = (uint16_t)n,
		.ifidx = (uint8_t)ifidx,
		.info = (uint8_t)(epb_dir & EMU_CAP_DIR_MASK),
	};

	if (ann == EMU_CAP_ANN_ALL || (ann == EMU_CAP_ANN_EVENTS &&
				       (drop_reason >= 0 || emu_trace_eventful(&meta->trace)))) {
		struct emu_cap_ann *a = &cap->anns[(*ann_tail)++ & cap->mask];
		const uint8_t *mb = (const uint8_t *)meta;

		memcpy(a, mb + 8, 8);
		memcpy(&a->trace, mb + 24, sizeof(a->trace));
		a->trace.drop_reason = (uint16_t)(drop_reason < 0 ? 0 : drop_reason + 1);
		h.info |= EMU_CAP_ANN;
	}
	memcpy(r, &h, sizeof(h));
	if (snap != 0 && likely(n == snap && rte_pktmbuf_data_len(m) >= snap))
		/* the whole snap in the first segment: a copy of a constant length, unrolled
		 * (a multiple of 16, so within the data: no rounding to check) */
		emu_capture_copy16(data, rte_pktmbuf_mtod(m, const uint8_t *), snap);
	else if (likely(rte_pktmbuf_data_len(m) >= n &&
			(uint32_t)m->buf_len - m->data_off >= RTE_ALIGN_CEIL(n, 16)))
		emu_capture_copy16(data, rte_pktmbuf_mtod(m, const uint8_t *), n);
	else if (rte_pktmbuf_data_len(m) >= n)
		memcpy(data, rte_pktmbuf_mtod(m, const void *), n);
	else
		/* a chained mbuf */
		rte_pktmbuf_read(m, 0, n, data);
}

/* The slot of ring index @p idx. */
static inline uint8_t *
emu_capture_slot(const struct emu_capture *cap, uint32_t idx)
{
	return cap->slots + (size_t)(idx & cap->mask) * cap->slot_size;
}

/* Make the records before @p tail visible to the main lcore. */
static inline void
emu_capture_publish(struct emu_capture *cap, uint32_t tail)
{
	__atomic_store_n(&cap->tail, tail, __ATOMIC_RELEASE);
}

/* Free slots for the worker, reading the consumer's index only when it must. */
static inline uint32_t
emu_capture_room(struct emu_capture *cap, uint32_t want)
{
	uint32_t room = cap->mask + 1 - (cap->tail - cap->head_seen);

	if (room < want) {
		cap->head_seen = __atomic_load_n(&cap->head, __ATOMIC_ACQUIRE);
		room = cap->mask + 1 - (cap->tail - cap->head_seen);
	}
	return room;
}

/*
 * Ask for the lines of the next @p n slots from @p from on, for writing: far from the cache in
 * a large ring, they arrive while the pipeline works on the next burst, not when it copies.
 * With "all", the next @p n entries of the second ring too.
 */
static inline void
emu_capture_prefetch(const struct emu_capture *cap, const uint8_t *from, unsigned int n)
{
	if (emu_capture_ann_mode(cap) == EMU_CAP_ANN_ALL) {
		const uint8_t *a = (const uint8_t *)&cap->anns[cap->ann_tail & cap->mask];
		const uint8_t *a_end = (const uint8_t *)&cap->anns[cap->mask + 1];
		const uint8_t *a_stop = a + (size_t)RTE_MIN(n, cap->mask + 1) * sizeof(*cap->anns);

		for (a = RTE_PTR_ALIGN_FLOOR(a, RTE_CACHE_LINE_SIZE); a < a_stop && a < a_end;
		     a += RTE_CACHE_LINE_SIZE)
			__builtin_prefetch(a, 1, 3);
	}

	const uint8_t *end = cap->slots + (size_t)(cap->mask + 1) * cap->slot_size;
	const uint8_t *p = RTE_PTR_ALIGN_FLOOR(from, RTE_CACHE_LINE_SIZE);
	const uint8_t *stop = from + (size_t)RTE_MIN(n, cap->mask + 1) * cap->slot_size;

	if (stop > end) {
		const uint8_t *q, *wrap = cap->slots + (stop - end);

		for (q = cap->slots; q < wrap; q += RTE_CACHE_LINE_SIZE)
			__builtin_prefetch(q, 1, 3);
		stop = end;
	}
	for (; p < stop; p += RTE_CACHE_LINE_SIZE)
		__builtin_prefetch(p, 1, 3);
}

bool
emu_capture_push(struct emu_capture *cap, struct rte_mbuf *m, uint64_t ts_ns)
{
	return emu_capture_push_if(cap, m, ts_ns, 0, 0, -1);
}

bool
emu_capture_push_if(struct emu_capture *cap, struct rte_mbuf *m, uint64_t ts_ns,
		    uint16_t ifidx, uint8_t epb_dir, int drop_reason)
{
	if (emu_capture_room(cap, 1) == 0) {
		cap->ring_full += 1;
		return false;
	}
	emu_capture_put(cap, emu_capture_slot(cap, cap->tail), m, ts_ns, ifidx, epb_dir,
			drop_reason, emu_capture_ann_mode(cap), &cap->ann_tail, 0);
	emu_capture_publish(cap, cap->tail + 1);
	cap->captured += 1;
	return true;
}

/*
 * emu_capture_push_burst_ports() with the direction, the annotation mode and, for a snaplen
 * of 128 bytes, the snaplen constants (the copy of a whole snap then unrolled, with one test
 * of the segment's length): the per-packet loop is the capture's whole cost on the worker
 * besides the memory the records go to, so it walks the slots by pointer and makes no call.
 */
static inline __attribute__((always_inline)) unsigned int
emu_capture_push_run(struct emu_capture *cap, struct rte_mbuf **pkts, unsigned int n,
		     const bool egress, const int ann, const uint32_t snap, uint32_t port_mask,
		     unsigned int *offered)
{
	const uint32_t tail = cap->tail, room = emu_capture_room(cap, n);
	const uint32_t slot_size = cap->slot_size;
	uint8_t *const first = cap->slots;
	uint8_t *const end = first + (size_t)(cap->mask + 1) * slot_size;
	uint8_t *slot = emu_capture_slot(cap, tail);
	const uint8_t dir = egress ? EMU_PCAPW_OUTBOUND : EMU_PCAPW_INBOUND;
	uint32_t ann_tail = cap->ann_tail;
	unsigned int i, k = 0, want = 0;

	for (i = 0; i < n; i++) {
		const struct emu_pkt_meta *meta = emu_meta(pkts[i]);
		const uint16_t port = egress ? meta->out_port : meta->in_port;

		if (port_mask != UINT32_MAX && (port >= 32 || (port_mask & (1u << port)) == 0))
			continue;
		want++;
		if (unlikely(k == room))
			continue;
		emu_capture_put(cap, slot, pkts[i], meta->ts_ns, port, dir, -1, ann, &ann_tail,
				snap);
		k++;
		slot += slot_size;
		if (unlikely(slot == end))
			slot = first;
	}
	cap->ann_tail = ann_tail;
	if (k != 0)
		emu_capture_publish(cap, tail + k);
	cap->captured += k;
	cap->ring_full += want - k;
	emu_capture_prefetch(cap, slot, want);
	*offered = want;
	return k;
}

unsigned int
emu_capture_push_burst_ports(struct emu_capture *cap, struct rte_mbuf **pkts, unsigned int n,
			     bool egress, uint32_t port_mask, unsigned int *offered)
{
#define EMU_CAP_RUN(eg, ann) (cap->snaplen == EMU_CAP_SNAP_FIXED ? \
	emu_capture_push_run(cap, pkts, n, eg, ann, EMU_CAP_SNAP_FIXED, port_mask, offered) : \
	emu_capture_push_run(cap, pkts, n, eg, ann, 0, port_mask, offered))
	switch (emu_capture_ann_mode(cap)) {
	case EMU_CAP_ANN_NONE:
		return egress ? EMU_CAP_RUN(true, EMU_CAP_ANN_NONE) :
				EMU_CAP_RUN(false, EMU_CAP_ANN_NONE);
	case EMU_CAP_ANN_EVENTS:
		return egress ? EMU_CAP_RUN(true, EMU_CAP_ANN_EVENTS) :
				EMU_CAP_RUN(false, EMU_CAP_ANN_EVENTS);
	default:
		return egress ? EMU_CAP_RUN(true, EMU_CAP_ANN_ALL) :
				EMU_CAP_RUN(false, EMU_CAP_ANN_ALL);
	}
#undef EMU_CAP_RUN
}

unsigned int
emu_capture_push_burst(struct emu_capture *cap, struct rte_mbuf **pkts, unsigned int n,
		       bool egress)
{
	unsigned int offered;

	return emu_capture_push_burst_ports(cap, pkts, n, egress, UINT32_MAX, &offered);
}

/* The first failure of the file: say it once, keep counting what is lost. */
static void
emu_capture_failed(struct emu_capture *cap, int rc)
{
	cap->io_failed = true;
	if (cap->errmsg[0] == '\0')
		snprintf(cap->errmsg, sizeof(cap->errmsg), "%s: write failed: %s", cap->file,
			 strerror(-rc));
}

/* A dropped frame's annotation "rocemu: drop=NAME ..." names one of the filter's reasons. */
static bool
emu_capture_drop_wanted(const struct emu_capture *cap, const char *comment)
{
	const char *d = strstr(comment, " drop=");
	unsigned int i;

	if (cap->drop_filter == NULL)
		return true;
	if (d == NULL)
		return false;
	d += 6;
	for (i = 0; cap->drop_filter[i] != NULL; i++) {
		size_t l = strlen(cap->drop_filter[i]);

		if (strncmp(d, cap->drop_filter[i], l) == 0 && (d[l] == ' ' || d[l] == '\0'))
			return true;
	}
	return false;
}

int
emu_capture_set_annotate(struct emu_capture *cap,
			 size_t (*fn)(const void *arg, const struct emu_pkt_meta *meta,
				      int drop_reason, bool all, char *buf, size_t len),
			 const void *arg, bool all, const char *const *drop_filter,
			 struct emu_err *err)
{
	if (cap->tail != 0)
		return emu_err_setrc(err, -EBUSY, "capture: annotations set after the first frame");
	cap->annotate = fn;
	cap->annotate_arg = arg;
	cap->annotate_all = all;
	cap->drop_filter = drop_filter;
	cap->annotating = fn != NULL;
	return emu_capture_alloc(cap, err);
}

void
emu_capture_set_no_comments(struct emu_capture *cap)
{
	cap->no_comments = true;
}

/* File @p idx of a rotation: FILE for 0, else FILE with "-IDX" before its extension. */
static void
emu_capture_name(const struct emu_capture *cap, uint32_t idx, char *buf, size_t len)
{
	emu_out_rotated_name(cap->file, idx, buf, len);
}

/* Put the full file in place and go on in the next one of the rotation. */
static void
emu_capture_rotate(struct emu_capture *cap)
{
	char name[4096];
	struct emu_err err;

	emu_pcapw_flush(cap->w);
	cap->written_done += emu_pcapw_records_out(cap->w);
	cap->bytes_done += emu_pcapw_size(cap->w);
	if (emu_pcapw_close(cap->w, &err) != 0) {
		cap->w = NULL;
		cap->closed = true;
		cap->io_failed = true;
		snprintf(cap->errmsg, sizeof(cap->errmsg), "%s", err.msg);
		return;
	}
	cap->files_done++;
	cap->file_idx++;
	if (cap->rotate_files != 0)
		cap->file_idx %= cap->rotate_files;
	emu_capture_name(cap, cap->file_idx, name, sizeof(name));
	cap->w = emu_pcapw_open(name, emu_pcapw_fmt_for(cap->file), cap->snaplen, cap->n_if,
				cap->if_names, &err);
	if (cap->w == NULL) {
		cap->closed = true;
		cap->io_failed = true;
		snprintf(cap->errmsg, sizeof(cap->errmsg), "%s", err.msg);
	}
}

void
emu_capture_set_rotation(struct emu_capture *cap, uint64_t bytes, uint32_t files)
{
	cap->rotate_bytes = bytes;
	cap->rotate_files = files;
}

void
emu_capture_set_max_bytes(struct emu_capture *cap, uint64_t bytes)
{
	cap->max_bytes = bytes;
}

/* Whether the record of @p caplen bytes would take the capture past its size cap; the first
 * time, the capture stops (what it wrote stays a complete file) and says so once. */
static bool
emu_capture_over_cap(struct emu_capture *cap, uint32_t caplen)
{
	uint64_t now;

	if (cap->max_bytes == 0)
		return false;
	if (cap->cap_reached)
		return true;
	now = cap->bytes_done + (cap->w != NULL ? emu_pcapw_size(cap->w) : 0);
	if (now + 64 + caplen <= cap->max_bytes)
		return false;
	cap->cap_reached = true;
	if (cap->errmsg[0] == '\0')
		snprintf(cap->errmsg, sizeof(cap->errmsg), "%s: reached its size cap of %.6g MB: "
			 "capture stopped there (the file is complete up to it), forwarding went "
			 "on", cap->file, (double)cap->max_bytes / 1e6);
	return true;
}

/* One record leaving the reorder window: its comment, the drop filter, the cap and rotation,
 * then the file. A record later than the window allowed is written at the time of the one
 * before it (counted): the file stays in time order. */
static void
emu_capture_emit(void *arg, uint64_t ts_ns, const uint8_t *entry)
{
	struct emu_capture *cap = arg;
	const struct emu_cap_rec *r = (const struct emu_cap_rec *)entry;
	const struct emu_cap_ann *a = (r->info & EMU_CAP_ANN) ?
		(const struct emu_cap_ann *)(entry + cap->slot_size) : NULL;
	char comment[512];
	const char *com = NULL;
	int rc = -EBADF;

	if (a != NULL && cap->annotate != NULL) {
		struct emu_pkt_meta mt;

		memset(&mt, 0, offsetof(struct emu_pkt_meta, pkt));
		memcpy(&mt.trace, &a->trace, sizeof(mt.trace));
		mt.in_port = a->in_port;
		mt.out_port = a->out_port;
		mt.prio = a->prio;
		if (cap->annotate(cap->annotate_arg, &mt, -1, cap->annotate_all, comment,
				  sizeof(comment)) > 0)
			com = comment;
		if (a->trace.drop_reason != 0 && (com == NULL ||
						  !emu_capture_drop_wanted(cap, com))) {
			cap->filtered_drops++;
			return;
		}
		if (cap->no_comments)
			com = NULL;
	}
	if (!cap->closed && emu_capture_over_cap(cap, r->caplen)) {
		cap->capped++;
		return;
	}
	if (ts_ns < cap->last_ts_ns) {
		cap->late++;
		ts_ns = cap->last_ts_ns;
	}
	cap->last_ts_ns = ts_ns;
	if (!cap->closed && cap->rotate_bytes != 0 &&
	    emu_pcapw_size(cap->w) + 64 + r->caplen > cap->rotate_bytes &&
	    emu_pcapw_records(cap->w) > 0)
		emu_capture_rotate(cap);
	if (!cap->closed)
		rc = emu_pcapw_write(cap->w, r->ifidx, ts_ns, (const uint8_t *)(r + 1), r->caplen,
				     r->origlen, r->info & EMU_CAP_DIR_MASK, com);
	if (rc == 0) {
		cap->accepted++;
	} else {
		cap->write_errors++;
		emu_capture_failed(cap, rc);
	}
}

unsigned int
emu_capture_drain(struct emu_capture *cap, unsigned int max)
{
	uint32_t head = cap->head, tail = __atomic_load_n(&cap->tail, __ATOMIC_ACQUIRE);
	unsigned int done = 0;

	while (done < max && head != tail) {
		const uint8_t *slot = cap->slots + (size_t)(head & cap->mask) * cap->slot_size;
		const struct emu_cap_rec *r = (const struct emu_cap_rec *)slot;
		const uint8_t *ahead = cap->slots +
			(size_t)((head + EMU_CAP_PREFETCH) & cap->mask) * cap->slot_size;
		const struct emu_cap_ann *a = NULL;
		uint32_t l;

		/* the worker wrote around the cache: the slots come from memory */
		for (l = 0; l < cap->slot_size; l += RTE_CACHE_LINE_SIZE)
			rte_prefetch0(ahead + l);
		if (r->info & EMU_CAP_ANN) {
			a = &cap->anns[cap->ann_head++ & cap->mask];
			rte_prefetch0(&cap->anns[(cap->ann_head + EMU_CAP_PREFETCH) & cap->mask]);
		}
		/* into the time-order window (emu_capsort.h); what is due goes to the file */
		emu_capsort_add(cap->order, r->ts_ns, r, sizeof(*r) + r->caplen, a, cap->slot_size,
				sizeof(*a), emu_capture_emit, cap);
		head++;
		done++;
		if (head == tail)
			tail = __atomic_load_n(&cap->tail, __ATOMIC_ACQUIRE);
		if ((done & 255) == 0)
			__atomic_store_n(&cap->head, head, __ATOMIC_RELEASE);
	}
	__atomic_store_n(&cap->head, head, __ATOMIC_RELEASE);
	return done;
}

void
emu_capture_flush(struct emu_capture *cap)
{
	while (emu_capture_drain(cap, UINT32_MAX) > 0)
		;
	emu_capsort_drain(cap->order, emu_capture_emit, cap);
	if (!cap->closed) {
		int rc = emu_pcapw_flush(cap->w);

		if (rc != 0)
			emu_capture_failed(cap, rc);
	}
}

int
emu_capture_close(struct emu_capture *cap)
{
	struct emu_err err;
	int rc;

	if (cap->closed)
		return cap->errmsg[0] != '\0' ? -EIO : 0;
	emu_capture_flush(cap);
	if (cap->w != NULL)
		cap->written_done += emu_pcapw_records_out(cap->w);
	rc = cap->w != NULL ? emu_pcapw_close(cap->w, &err) : 0;
	cap->w = NULL;
	cap->closed = true;
	if (rc != 0) {
		/* the commit's message says where the data is: it replaces the short one */
		cap->io_failed = true;
		snprintf(cap->errmsg, sizeof(cap->errmsg), "%s", err.msg);
	}
	return cap->errmsg[0] != '\0' ? -EIO : 0;
}

const char *
emu_capture_error(const struct emu_capture *cap)
{
	return cap->errmsg[0] != '\0' ? cap->errmsg : NULL;
}

bool
emu_capture_file_failed(const struct emu_capture *cap)
{
	return cap->io_failed;
}

void
emu_capture_free(struct emu_capture *cap)
{
	if (cap == NULL)
		return;
	/* Not closed: the run never finished (refused, or failed): leave the old file alone. */
	emu_pcapw_abort(cap->w);
	emu_capsort_free(cap->order);
	rte_free(cap->slots);
	rte_free(cap->anns);
	free(cap->file);
	rte_free(cap);
}

uint32_t
emu_capture_ring_size(const struct emu_capture *cap)
{
	return cap->mask + 1;
}

void
emu_capture_stats(const struct emu_capture *cap, struct emu_capture_stats *s)
{
	s->captured = cap->captured;
	s->ring_full = cap->ring_full;
	s->nombuf = cap->nombuf;
	s->filtered_drops = cap->filtered_drops;
	s->capped = cap->capped;
	s->late = cap->late;
	s->written = cap->written_done + (cap->w != NULL ? emu_pcapw_records_out(cap->w) : 0);
	/* once the file failed, what the writer had taken but did not get out is lost too */
	s->write_errors = cap->write_errors +
			  (cap->io_failed ? cap->accepted - s->written : 0);
}

const char *
emu_capture_file(const struct emu_capture *cap)
{
	return cap->file;
}
