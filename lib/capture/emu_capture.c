/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The capture ring's main lcore side: create and free, the drain into lib/capture's file
 * writer, with rotation, the size cap and the time-order window (emu_capsort.c), and the
 * stats. The worker's push is in emu_capture_push.c; the record layout and the ring's indices,
 * which both sides share, in emu_capture_priv.h.
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
#include "lib/capture/emu_capture_priv.h"
#include "lib/capture/emu_pcapw.h"

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
	cap->clock_ns = UINT64_MAX;
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

struct emu_capture *
emu_capture_create_peer(struct emu_capture *writer, uint32_t ring_size, struct emu_err *err)
{
	struct emu_capture *cap;

	if (writer->writer != NULL || writer->n_peers >= EMU_CAP_MAX_PEERS) {
		emu_err_setrc(err, -EINVAL, "capture: at most %d producers of one file",
			      EMU_CAP_MAX_PEERS + 1);
		return NULL;
	}
	cap = rte_zmalloc("emu_capture_ctl", sizeof(*cap), RTE_CACHE_LINE_SIZE);
	if (cap == NULL) {
		emu_err_setrc(err, -ENOMEM, "capture: out of memory");
		return NULL;
	}
	/* what the worker's push reads (emu_capture_push.c): the record layout, and which
	 * frames get the trace the writer formats */
	cap->snaplen = writer->snaplen;
	cap->annotating = writer->annotating;
	cap->annotate_all = writer->annotate_all;
	cap->mask = rte_align32pow2(ring_size) - 1;
	cap->clock_ns = UINT64_MAX;
	if (emu_capture_alloc(cap, err) != 0) {
		emu_capture_free(cap);
		return NULL;
	}
	cap->writer = writer;
	writer->peers[writer->n_peers++] = cap;
	return cap;
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

/* Up to @p max records of @p cap's ring (the writer's own or a peer's) into @p w's window. */
static unsigned int
emu_capture_drain_ring(struct emu_capture *w, struct emu_capture *cap, unsigned int max)
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
		emu_capsort_add(w->order, r->ts_ns, r, sizeof(*r) + r->caplen, a, w->slot_size,
				sizeof(*a), emu_capture_emit, w);
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
emu_capture_publish_clock(struct emu_capture *cap, uint64_t now_ns)
{
	/* release: the records pushed before it are in the ring when the writer sees it */
	__atomic_store_n(&cap->clock_ns, now_ns, __ATOMIC_RELEASE);
}

/*
 * The writer's own ring, then each peer's, up to @p max records each, into one time-order
 * window: the workers' clocks are one (the TSC), so their records interleave by time. A
 * record leaves the window once it is a window (10 ms) older than the newest record and than
 * every producer's published clock, so a worker descheduled for longer than the window finds
 * its records' place still open (while the window has room). The clocks are read before the
 * rings: what a producer pushed before publishing its clock is then drained first.
 */
unsigned int
emu_capture_drain(struct emu_capture *cap, unsigned int max)
{
	uint64_t bound = __atomic_load_n(&cap->clock_ns, __ATOMIC_ACQUIRE), c;
	unsigned int done, i;

	if (cap->writer != NULL)
		return 0; /* a peer: its writer drains it */
	for (i = 0; i < cap->n_peers; i++)
		if (cap->peers[i] != NULL) {
			c = __atomic_load_n(&cap->peers[i]->clock_ns, __ATOMIC_ACQUIRE);
			bound = c < bound ? c : bound;
		}
	done = emu_capture_drain_ring(cap, cap, max);
	for (i = 0; i < cap->n_peers; i++)
		if (cap->peers[i] != NULL)
			done += emu_capture_drain_ring(cap, cap->peers[i], max);
	emu_capsort_bound(cap->order, bound, emu_capture_emit, cap);
	return done;
}

void
emu_capture_flush(struct emu_capture *cap)
{
	if (cap->writer != NULL)
		return; /* a peer: its writer flushes it */
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

	if (cap->writer != NULL)
		return 0; /* a peer has no file: its writer closes it */
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
	unsigned int i;

	if (cap == NULL)
		return;
	if (cap->writer != NULL) {
		/* a peer: what it still holds goes to the file first (the run's last records) */
		if (!cap->writer->closed && cap->writer->order != NULL)
			emu_capture_drain_ring(cap->writer, cap, UINT32_MAX);
		for (i = 0; i < cap->writer->n_peers; i++)
			if (cap->writer->peers[i] == cap)
				cap->writer->peers[i] = NULL;
	}
	for (i = 0; i < cap->n_peers; i++)
		if (cap->peers[i] != NULL)
			cap->peers[i]->writer = NULL;
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
	unsigned int i;

	s->captured = cap->captured;
	s->ring_full = cap->ring_full;
	s->nombuf = cap->nombuf;
	for (i = 0; i < cap->n_peers; i++)
		if (cap->peers[i] != NULL) {
			s->captured += cap->peers[i]->captured;
			s->ring_full += cap->peers[i]->ring_full;
			s->nombuf += cap->peers[i]->nombuf;
		}
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
