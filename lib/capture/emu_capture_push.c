/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The capture ring's worker side: the push (records written in place, with their annotations
 * in the second ring), one frame or a burst. The record layout is in emu_capture_priv.h; the
 * main lcore's side (create, drain, the file) in emu_capture.c.
 */
#include <stddef.h>
#include <string.h>

#include <rte_common.h>
#include <rte_prefetch.h>
#include <rte_vect.h>

#include "lib/pkt/emu_pkt.h"
#include "lib/capture/emu_capture.h"
#include "lib/capture/emu_capture_priv.h"
#include "lib/capture/emu_pcapw.h"

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
