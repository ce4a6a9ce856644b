/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pcap/pcap.h>
#include <rte_errno.h>
#include <rte_lcore.h>
#include <rte_ring.h>

#include "lib/core/emu_stage.h"
#include "emu_capture.h"

#define EMU_CAPTURE_STDIO_BUF (1u << 20)

struct emu_capture {
	char *file;
	uint32_t snaplen;
	struct rte_ring *ring;
	struct rte_mempool *pool;
	pcap_t *pd;
	pcap_dumper_t *dumper;
	char *iobuf;
	uint8_t *linear; /* snaplen bytes, to write multi-segment copies */
	/* worker-written */
	uint64_t captured, ring_full, nombuf;
	/* main-written */
	uint64_t written;
};

static uint32_t emu_capture_seq;

struct emu_capture *
emu_capture_create(const char *file, uint32_t snaplen, uint32_t max_frame, uint32_t ring_size,
		   struct emu_err *err)
{
	struct emu_capture *cap;
	char name[RTE_MEMZONE_NAMESIZE];
	uint32_t id = __atomic_fetch_add(&emu_capture_seq, 1, __ATOMIC_RELAXED);
	uint16_t room;
	FILE *fp;

	cap = calloc(1, sizeof(*cap));
	if (cap == NULL)
		goto nomem;
	cap->snaplen = snaplen;
	cap->file = strdup(file);
	cap->linear = malloc(snaplen);
	cap->iobuf = malloc(EMU_CAPTURE_STDIO_BUF);
	if (cap->file == NULL || cap->linear == NULL || cap->iobuf == NULL)
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
	cap->pd = pcap_open_dead_with_tstamp_precision(DLT_EN10MB, (int)snaplen,
						       PCAP_TSTAMP_PRECISION_NANO);
	if (cap->pd == NULL)
		goto nomem;
	cap->dumper = pcap_dump_open(cap->pd, file);
	if (cap->dumper == NULL) {
		emu_err_setrc(err, -EIO, "%s: cannot open for writing: %s", file,
			      pcap_geterr(cap->pd));
		goto fail;
	}
	fp = pcap_dump_file(cap->dumper);
	setvbuf(fp, cap->iobuf, _IOFBF, EMU_CAPTURE_STDIO_BUF);
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
	struct rte_mbuf *c;

	c = rte_pktmbuf_copy(m, cap->pool, 0, cap->snaplen);
	if (c == NULL) {
		cap->nombuf += 1;
		return false;
	}
	emu_meta(c)->ts_ns = ts_ns;
	c->hash.usr = rte_pktmbuf_pkt_len(m); /* original length for the pcap header */
	if (rte_ring_sp_enqueue(cap->ring, c) != 0) {
		rte_pktmbuf_free(c);
		cap->ring_full += 1;
		return false;
	}
	cap->captured += 1;
	return true;
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
			struct pcap_pkthdr h;
			uint64_t ts = emu_meta(c)->ts_ns;
			const void *data;

			h.ts.tv_sec = (time_t)(ts / 1000000000ULL);
			h.ts.tv_usec = (suseconds_t)(ts % 1000000000ULL); /* ns: NANO precision */
			h.caplen = rte_pktmbuf_pkt_len(c);
			h.len = c->hash.usr;
			data = rte_pktmbuf_read(c, 0, h.caplen, cap->linear);
			pcap_dump((u_char *)cap->dumper, &h, data);
			rte_pktmbuf_free(c);
		}
		done += n;
	}
	cap->written += done;
	return done;
}

void
emu_capture_flush(struct emu_capture *cap)
{
	while (emu_capture_drain(cap, UINT32_MAX) > 0)
		;
	if (cap->dumper != NULL)
		pcap_dump_flush(cap->dumper);
}

void
emu_capture_free(struct emu_capture *cap)
{
	if (cap == NULL)
		return;
	if (cap->ring != NULL && cap->dumper != NULL)
		emu_capture_flush(cap);
	if (cap->dumper != NULL)
		pcap_dump_close(cap->dumper);
	if (cap->pd != NULL)
		pcap_close(cap->pd);
	if (cap->ring != NULL) {
		struct rte_mbuf *c;

		while (rte_ring_sc_dequeue(cap->ring, (void **)&c) == 0)
			rte_pktmbuf_free(c);
		rte_ring_free(cap->ring);
	}
	rte_mempool_free(cap->pool);
	free(cap->iobuf);
	free(cap->linear);
	free(cap->file);
	free(cap);
}

void
emu_capture_stats(const struct emu_capture *cap, struct emu_capture_stats *s)
{
	s->captured = cap->captured;
	s->ring_full = cap->ring_full;
	s->nombuf = cap->nombuf;
	s->written = cap->written;
}

const char *
emu_capture_file(const struct emu_capture *cap)
{
	return cap->file;
}
