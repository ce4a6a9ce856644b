/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_errno.h>
#include <rte_lcore.h>
#include <rte_ring.h>

#include "lib/core/emu_stage.h"
#include "emu_capture.h"
#include "emu_pcapw.h"

struct emu_capture {
	char *file;
	uint32_t snaplen;
	struct rte_ring *ring;
	struct rte_mempool *pool;
	struct emu_pcapw *w;
	uint8_t *linear; /* snaplen bytes, to write multi-segment copies */
	/* worker-written */
	uint64_t captured, ring_full, nombuf;
	/* main-written */
	uint64_t written;
	uint64_t write_errors; /* frames not written because the file failed */
	bool closed;
	char errmsg[EMU_ERR_LEN]; /* the first write or close error, "" when none */
	/* pcapng: comments from the switch's trace (main lcore), interface and direction per copy */
	size_t (*annotate)(const void *arg, struct rte_mbuf *m, int drop_reason, bool all,
			   char *buf, size_t len);
	const void *annotate_arg;
	bool annotate_all;
	const char *const *drop_filter; /* NULL: every drop reason; else these names only */
	uint64_t filtered_drops;
	/* rotation (tcpdump -C/-W): a new file when this one reaches rotate_bytes */
	uint64_t rotate_bytes;
	uint32_t rotate_files;   /* 0: no limit; else the names cycle over this many */
	uint32_t file_idx;
	uint64_t files_done;
	unsigned int n_if;
	const char *const *if_names;
};

static uint32_t emu_capture_seq;

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
	char name[RTE_MEMZONE_NAMESIZE];
	uint32_t id = __atomic_fetch_add(&emu_capture_seq, 1, __ATOMIC_RELAXED);
	uint16_t room;

	cap = calloc(1, sizeof(*cap));
	if (cap == NULL)
		goto nomem;
	cap->snaplen = snaplen;
	cap->file = strdup(file);
	cap->linear = malloc(snaplen);
	if (cap->file == NULL || cap->linear == NULL)
		goto nomem;
	snprintf(name, sizeof(name), "emu_capr_%u", id);
	cap->ring = rte_ring_create(name, rte_align32pow2(ring_size), rte_socket_id(),
				    RING_F_SP_ENQ | RING_F_SC_DEQ);
	if (cap->ring == NULL) {
		emu_err_setrc(err, -ENOMEM, "capture ring of %u slots: %s", ring_size,
			      rte_strerror(rte_errno));
		goto fail;
	}
	/* One segment per copy: no frame is longer than the largest port MTU allows. */
	room = (uint16_t)(RTE_MIN(snaplen, max_frame) + RTE_PKTMBUF_HEADROOM);
	snprintf(name, sizeof(name), "emu_capp_%u", id);
	cap->pool = rte_pktmbuf_pool_create(name, rte_align32pow2(ring_size) + 512, 256,
					    EMU_MBUF_PRIV_SIZE, room, rte_socket_id());
	if (cap->pool == NULL) {
		emu_err_setrc(err, -ENOMEM,
			      "capture pool for %u frames of %u bytes: %s; lower snaplen or "
			      "ring_size, or give EAL more memory",
			      ring_size, snaplen, rte_strerror(rte_errno));
		goto fail;
	}
	cap->n_if = emu_pcapw_fmt_for(file) == EMU_PCAPW_PCAPNG ? n_if : 1;
	cap->if_names = if_names;
	cap->w = emu_pcapw_open(file, emu_pcapw_fmt_for(file), snaplen, cap->n_if, if_names, err);
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
	struct rte_mbuf *c;

	c = rte_pktmbuf_copy(m, cap->pool, 0, cap->snaplen);
	if (c == NULL) {
		cap->nombuf += 1;
		return false;
	}
	if (cap->annotate != NULL) {
		/* what the writer annotates from: the metadata up to the parse result */
		memcpy(emu_meta(c), emu_meta(m), offsetof(struct emu_pkt_meta, pkt));
		emu_meta(c)->trace.drop_reason = (uint16_t)(drop_reason + 1);
	}
	emu_meta(c)->reserved = ifidx;
	/* bits 6-7: the epb_flags direction (the copy's other flags matter only to annotate) */
	emu_meta(c)->flags = (uint8_t)((cap->annotate != NULL ?
					(emu_meta(c)->flags & ~EMU_META_SNAP & 0x3f) : 0) |
				       (epb_dir << 6));
	emu_meta(c)->ts_ns = ts_ns;
	c->hash.usr = emu_wire_len(m); /* original length for the pcap header */
	if (rte_ring_sp_enqueue(cap->ring, c) != 0) {
		rte_pktmbuf_free(c);
		cap->ring_full += 1;
		return false;
	}
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
			 size_t (*fn)(const void *arg, struct rte_mbuf *m, int drop_reason, bool all,
				      char *buf, size_t len),
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
	struct rte_mbuf *burst[64];
	unsigned int done = 0, n, i;

	while (done < max) {
		n = rte_ring_sc_dequeue_burst(cap->ring, (void **)burst,
					      RTE_MIN(64u, max - done), NULL);
		if (n == 0)
			break;
		for (i = 0; i < n; i++) {
			struct rte_mbuf *c = burst[i];
			uint32_t caplen = rte_pktmbuf_pkt_len(c);
			const void *data = rte_pktmbuf_read(c, 0, caplen, cap->linear);
			struct emu_pkt_meta *cm = emu_meta(c);
			char comment[512];
			const char *com = NULL;
			int rc = -EBADF;

			if (cap->annotate != NULL &&
			    cap->annotate(cap->annotate_arg, c, -1, cap->annotate_all, comment,
					  sizeof(comment)) > 0) {
				com = comment;
				if (cm->trace.drop_reason != 0 && !emu_capture_drop_wanted(cap, com)) {
					cap->filtered_drops++;
					rte_pktmbuf_free(c);
					continue;
				}
			}
			if (!cap->closed && cap->rotate_bytes != 0 &&
			    emu_pcapw_size(cap->w) + 64 + caplen > cap->rotate_bytes &&
			    emu_pcapw_records(cap->w) > 0)
				emu_capture_rotate(cap);
			if (!cap->closed)
				rc = emu_pcapw_write(cap->w, cm->reserved, cm->ts_ns, data, caplen,
						     (uint32_t)c->hash.usr, (uint32_t)(cm->flags >> 6),
						     com);
			if (rc == 0) {
				cap->written++;
			} else {
				cap->write_errors++;
				emu_capture_failed(cap, rc);
			}
			rte_pktmbuf_free(c);
		}
		done += n;
	}
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
	if (cap->ring != NULL) {
		struct rte_mbuf *c;

		while (rte_ring_sc_dequeue(cap->ring, (void **)&c) == 0)
			rte_pktmbuf_free(c);
		rte_ring_free(cap->ring);
	}
	rte_mempool_free(cap->pool);
	free(cap->linear);
	free(cap->file);
	free(cap);
}

uint32_t
emu_capture_ring_size(const struct emu_capture *cap)
{
	return rte_ring_get_size(cap->ring);
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
