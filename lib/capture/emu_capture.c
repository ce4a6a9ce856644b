/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_common.h>
#include <rte_errno.h>
#include <rte_lcore.h>
#include <rte_malloc.h>
#include <rte_memcpy.h>

#include "lib/pkt/emu_pkt.h"
#include "lib/capture/emu_capture.h"
#include "lib/capture/emu_pcapw.h"

/*
 * The ring: fixed-size records written in place by the worker (one producer) and read by the
 * main lcore (one consumer). Written here rather than with rte_ring + a mempool of copies (as
 * before): rte_ring carries pointers, so every captured frame cost an mbuf allocation and an
 * rte_pktmbuf_copy; records inline cost one memcpy of the headers.
 */
struct emu_cap_rec {
	uint64_t ts_ns;
	uint32_t caplen;
	uint32_t origlen;
	uint16_t ifidx;
	uint8_t dir;       /* epb_flags direction */
	uint8_t has_meta;
	int32_t drop_reason;
	struct emu_pkt_meta meta; /* up to (not including) the parse result, when annotating */
};
#define EMU_CAP_HDR RTE_ALIGN_CEIL(offsetof(struct emu_cap_rec, meta) + \
				   offsetof(struct emu_pkt_meta, pkt), 16)

struct emu_capture {
	char *file;
	uint32_t snaplen;
	uint8_t *slots;       /* n_slots records of slot_size bytes */
	uint32_t slot_size;
	uint32_t mask;        /* n_slots - 1 */
	uint32_t head __rte_cache_aligned; /* consumer */
	uint32_t tail __rte_cache_aligned; /* producer */
	struct emu_pcapw *w;
	/* worker-written */
	uint64_t captured, ring_full, nombuf;
	/* main-written */
	uint64_t written;
	uint64_t write_errors; /* frames not written because the file failed */
	bool closed;
	char errmsg[EMU_ERR_LEN]; /* the first write or close error, "" when none */
	/* pcapng: comments from the switch's trace (main lcore), interface and direction per copy */
	size_t (*annotate)(const void *arg, const struct emu_pkt_meta *meta, int drop_reason,
			   bool all, char *buf, size_t len);
	const void *annotate_arg;
	bool annotate_all;
	const char *const *drop_filter; /* NULL: every drop reason; else these names only */
	uint64_t filtered_drops;
	/* rotation (tcpdump -C/-W): a new file when this one reaches rotate_bytes */
	uint64_t rotate_bytes;
	uint32_t rotate_files;   /* 0: no limit; else the names cycle over this many */
	uint32_t file_idx;
	uint64_t files_done;
	uint32_t snaplen_file;
	unsigned int n_if;
	const char *const *if_names;
};

uint64_t
emu_capture_bytes(uint32_t snaplen, uint32_t max_frame, uint32_t ring_size)
{
	return (uint64_t)rte_align32pow2(ring_size) *
	       RTE_ALIGN_CEIL(EMU_CAP_HDR + RTE_MIN(snaplen, max_frame), 64);
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

	cap = calloc(1, sizeof(*cap));
	if (cap == NULL)
		goto nomem;
	cap->snaplen = RTE_MIN(snaplen, max_frame);
	cap->file = strdup(file);
	if (cap->file == NULL)
		goto nomem;
	cap->slot_size = (uint32_t)RTE_ALIGN_CEIL(EMU_CAP_HDR + cap->snaplen, 64);
	cap->mask = rte_align32pow2(ring_size) - 1;
	cap->slots = rte_malloc_socket("emu_capture", (size_t)(cap->mask + 1) * cap->slot_size,
				       RTE_CACHE_LINE_SIZE, (int)rte_socket_id());
	if (cap->slots == NULL) {
		emu_err_setrc(err, -ENOMEM,
			      "capture ring of %u records of %u bytes: %s; lower snaplen or "
			      "ring_size, or give EAL more memory", cap->mask + 1, cap->slot_size,
			      rte_strerror(rte_errno));
		goto fail;
	}
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

bool
emu_capture_push(struct emu_capture *cap, struct rte_mbuf *m, uint64_t ts_ns)
{
	return emu_capture_push_if(cap, m, ts_ns, 0, 0, -1);
}

bool
emu_capture_push_if(struct emu_capture *cap, struct rte_mbuf *m, uint64_t ts_ns,
		    uint16_t ifidx, uint8_t epb_dir, int drop_reason)
{
	uint32_t tail = cap->tail, head = __atomic_load_n(&cap->head, __ATOMIC_ACQUIRE);
	struct emu_cap_rec *r;
	uint8_t *data;
	const void *p;
	uint32_t n;

	if (tail - head > cap->mask) {
		cap->ring_full += 1;
		return false;
	}
	r = (struct emu_cap_rec *)(cap->slots + (size_t)(tail & cap->mask) * cap->slot_size);
	data = (uint8_t *)r + EMU_CAP_HDR;
	n = RTE_MIN(rte_pktmbuf_pkt_len(m), cap->snaplen);
	p = rte_pktmbuf_read(m, 0, n, data);
	if (p != data)
		rte_memcpy(data, p, n);
	r->ts_ns = ts_ns;
	r->caplen = n;
	r->origlen = emu_wire_len(m);
	r->ifidx = ifidx;
	r->dir = epb_dir;
	r->drop_reason = drop_reason;
	r->has_meta = cap->annotate != NULL;
	if (r->has_meta)
		/* what the writer annotates from: the metadata up to the parse result */
		memcpy(&r->meta, emu_meta(m), offsetof(struct emu_pkt_meta, pkt));
	__atomic_store_n(&cap->tail, tail + 1, __ATOMIC_RELEASE);
	cap->captured += 1;
	return true;
}

/* The first failure of the file: say it once, keep counting what is lost. */
static void
emu_capture_failed(struct emu_capture *cap, int rc)
{
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

void
emu_capture_set_annotate(struct emu_capture *cap,
			 size_t (*fn)(const void *arg, const struct emu_pkt_meta *meta,
				      int drop_reason, bool all, char *buf, size_t len),
			 const void *arg, bool all, const char *const *drop_filter)
{
	cap->annotate = fn;
	cap->annotate_arg = arg;
	cap->annotate_all = all;
	cap->drop_filter = drop_filter;
}

/* File @p idx of a rotation: FILE for 0, else FILE with "-IDX" before its extension. */
static void
emu_capture_name(const struct emu_capture *cap, uint32_t idx, char *buf, size_t len)
{
	const char *dot = strrchr(cap->file, '.'), *slash = strrchr(cap->file, '/');

	if (idx == 0)
		snprintf(buf, len, "%s", cap->file);
	else if (dot != NULL && (slash == NULL || dot > slash))
		snprintf(buf, len, "%.*s-%u%s", (int)(dot - cap->file), cap->file, idx, dot);
	else
		snprintf(buf, len, "%s-%u", cap->file, idx);
}

/* Put the full file in place and go on in the next one of the rotation. */
static void
emu_capture_rotate(struct emu_capture *cap)
{
	char name[4096];
	struct emu_err err;

	if (emu_pcapw_close(cap->w, &err) != 0) {
		cap->w = NULL;
		cap->closed = true;
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
		snprintf(cap->errmsg, sizeof(cap->errmsg), "%s", err.msg);
	}
}

void
emu_capture_set_rotation(struct emu_capture *cap, uint64_t bytes, uint32_t files)
{
	cap->rotate_bytes = bytes;
	cap->rotate_files = files;
}

unsigned int
emu_capture_drain(struct emu_capture *cap, unsigned int max)
{
	uint32_t head = cap->head, tail = __atomic_load_n(&cap->tail, __ATOMIC_ACQUIRE);
	unsigned int done = 0;

	while (done < max && head != tail) {
		const struct emu_cap_rec *r = (const struct emu_cap_rec *)(cap->slots +
			(size_t)(head & cap->mask) * cap->slot_size);
		const uint8_t *data = (const uint8_t *)r + EMU_CAP_HDR;
		char comment[512];
		const char *com = NULL;
		int rc = -EBADF;

		if (r->has_meta && cap->annotate != NULL) {
			struct emu_pkt_meta mt;

			memcpy(&mt, &r->meta, offsetof(struct emu_pkt_meta, pkt));
			mt.trace.drop_reason = (uint16_t)(r->drop_reason + 1);
			if (cap->annotate(cap->annotate_arg, &mt, -1, cap->annotate_all, comment,
					  sizeof(comment)) > 0)
				com = comment;
			if (r->drop_reason >= 0 && (com == NULL ||
						    !emu_capture_drop_wanted(cap, com))) {
				cap->filtered_drops++;
				goto next;
			}
		}
		if (!cap->closed && cap->rotate_bytes != 0 &&
		    emu_pcapw_size(cap->w) + 64 + r->caplen > cap->rotate_bytes &&
		    emu_pcapw_records(cap->w) > 0)
			emu_capture_rotate(cap);
		if (!cap->closed)
			rc = emu_pcapw_write(cap->w, r->ifidx, r->ts_ns, data, r->caplen, r->origlen,
					     r->dir, com);
		if (rc == 0) {
			cap->written++;
		} else {
			cap->write_errors++;
			emu_capture_failed(cap, rc);
		}
next:
		head++;
		done++;
		if (head == tail)
			tail = __atomic_load_n(&cap->tail, __ATOMIC_ACQUIRE);
		if ((done & 63) == 0)
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
	rc = cap->w != NULL ? emu_pcapw_close(cap->w, &err) : 0;
	cap->w = NULL;
	cap->closed = true;
	if (rc != 0)
		/* the commit's message says where the data is: it replaces the short one */
		snprintf(cap->errmsg, sizeof(cap->errmsg), "%s", err.msg);
	return cap->errmsg[0] != '\0' ? -EIO : 0;
}

const char *
emu_capture_error(const struct emu_capture *cap)
{
	return cap->errmsg[0] != '\0' ? cap->errmsg : NULL;
}

void
emu_capture_free(struct emu_capture *cap)
{
	if (cap == NULL)
		return;
	/* Not closed: the run never finished (refused, or failed): leave the old file alone. */
	emu_pcapw_abort(cap->w);
	rte_free(cap->slots);
	free(cap->file);
	free(cap);
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
	s->written = cap->written;
	s->write_errors = cap->write_errors;
}

const char *
emu_capture_file(const struct emu_capture *cap)
{
	return cap->file;
}
