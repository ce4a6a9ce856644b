/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lib/capture's ring, record by record: what the worker pushes (bursts chosen by port, single
 * packets with a drop reason) comes out of the file exactly, in order, with what the ring had
 * no room for counted and nothing else lost. A small ring is pushed and drained in random
 * amounts so that it wraps and fills in the middle of bursts; frames are of every length
 * around the snaplen, some chained (the copy that goes through rte_pktmbuf_read), some header
 * captures (EMU_META_SNAP: the original length is the metadata's). With annotations on, the
 * writer's callback must see each packet's ports, priority and trace as the worker had them:
 * every record's with "all"; with "events" (the default), exactly those of the dropped frames
 * and the frames something happened to (emu_trace_eventful()), which alone the worker copies
 * (into the capture's second ring, whose entries must stay paired with their records as both
 * wrap).
 */

#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/unit/test_common.h"

#include "lib/capture/emu_capture.h"
#include "lib/capture/emu_pcapr.h"

#define CAP_RING 64
#define CAP_SNAP 128
#define CAP_MAX_RECS 20000

struct cap_expect {
	uint64_t ts_ns;
	uint32_t caplen, origlen;
	uint8_t data[CAP_SNAP];
	/* what the annotation callback must see */
	uint16_t in_port, out_port;
	uint8_t prio;
	struct emu_trace trace;
	bool annotated; /* the writer must annotate it */
};

enum cap_mode { CAP_HEADERS, CAP_ANN_ALL, CAP_ANN_EVENTS };

static struct rte_mempool *pool;
static struct cap_expect *expect;
static unsigned int n_expect, n_seen, n_annotated;
static enum cap_mode mode;
static unsigned int n_calls;
static uint64_t rng_state = 0x9e3779b97f4a7c15ULL;

static uint32_t
cap_rand(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return (uint32_t)(rng_state >> 11);
}

/* A frame of @p len random bytes, chained in two segments when @p chain (the first holds 40). */
static struct rte_mbuf *
cap_frame(uint32_t len, bool chain)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(pool), *m2 = NULL;
	uint32_t first = chain ? 40 : len, i;
	uint8_t *p;

	assert_non_null(m);
	p = (uint8_t *)rte_pktmbuf_append(m, (uint16_t)first);
	assert_non_null(p);
	for (i = 0; i < first; i++)
		p[i] = (uint8_t)cap_rand();
	if (chain) {
		m2 = rte_pktmbuf_alloc(pool);
		assert_non_null(m2);
		p = (uint8_t *)rte_pktmbuf_append(m2, (uint16_t)(len - first));
		assert_non_null(p);
		for (i = 0; i < len - first; i++)
			p[i] = (uint8_t)cap_rand();
		assert_int_equal(rte_pktmbuf_chain(m, m2), 0);
	}
	memset(emu_meta(m), 0, sizeof(struct emu_pkt_meta));
	return m;
}

/* Metadata with every field the record or the annotation takes set at random. */
static void
cap_fill_meta(struct rte_mbuf *m, uint64_t ts)
{
	struct emu_pkt_meta *meta = emu_meta(m);

	meta->ts_ns = ts;
	meta->in_port = (uint16_t)(cap_rand() % 3);
	meta->out_port = (uint16_t)(cap_rand() % 3);
	meta->prio = (uint8_t)(cap_rand() % 8);
	meta->trace.t_in_ns = ts - (cap_rand() % 1000);
	meta->trace.t_enq_ns = ts - (cap_rand() % 500);
	meta->trace.qdepth_bytes = cap_rand();
	meta->trace.wait_ns = cap_rand();
	meta->trace.delay_ns = cap_rand();
	meta->trace.event_reason = (uint16_t)cap_rand();
	meta->trace.marks = (uint8_t)cap_rand();
	meta->trace.created_by = (uint8_t)cap_rand();
	meta->trace.path = (uint8_t)cap_rand();
	if (mode == CAP_ANN_EVENTS && cap_rand() % 3 != 0) {
		/* most frames uneventful, the others with one of the three signs of an event */
		unsigned int k = cap_rand() % 6;

		if (k != 0)
			meta->trace.marks = 0;
		if (k != 1)
			meta->trace.created_by = 0;
		if (k != 2)
			meta->trace.event_reason = 0;
	}
	if (cap_rand() % 8 == 0) {
		/* a header capture replayed: the wire length is the metadata's */
		meta->flags |= EMU_META_SNAP;
		meta->wire_len = rte_pktmbuf_pkt_len(m) + 1 + cap_rand() % 4000;
	}
}

static void
cap_expect_add(struct rte_mbuf *m, uint64_t ts, int drop_reason)
{
	const struct emu_pkt_meta *meta = emu_meta(m);
	struct cap_expect *e;
	const void *d;

	assert_true(n_expect < CAP_MAX_RECS);
	e = &expect[n_expect++];
	e->ts_ns = ts;
	e->caplen = RTE_MIN(rte_pktmbuf_pkt_len(m), (uint32_t)CAP_SNAP);
	e->origlen = (meta->flags & EMU_META_SNAP) ? meta->wire_len : rte_pktmbuf_pkt_len(m);
	d = rte_pktmbuf_read(m, 0, e->caplen, e->data);
	assert_non_null(d);
	if (d != e->data)
		memcpy(e->data, d, e->caplen);
	e->in_port = meta->in_port;
	e->out_port = meta->out_port;
	e->prio = meta->prio;
	e->trace = meta->trace;
	e->trace.drop_reason = (uint16_t)(drop_reason < 0 ? 0 : drop_reason + 1);
	e->annotated = mode == CAP_ANN_ALL ||
		       (mode == CAP_ANN_EVENTS && (drop_reason >= 0 || emu_trace_eventful(&e->trace)));
	n_annotated += e->annotated;
}

/* The writer's annotation callback: the metadata it gets is the worker's, field by field, for
 * the next record that must be annotated. */
static size_t
cap_annotate(const void *arg, const struct emu_pkt_meta *meta, int drop_reason, bool all,
	     char *buf, size_t len)
{
	const struct cap_expect *e;

	(void)arg;
	(void)drop_reason;
	assert_int_equal(all, mode == CAP_ANN_ALL);
	while (n_seen < n_expect && !expect[n_seen].annotated)
		n_seen++;
	assert_true(n_seen < n_expect);
	e = &expect[n_seen++];
	n_calls++;
	assert_int_equal(meta->in_port, e->in_port);
	assert_int_equal(meta->out_port, e->out_port);
	assert_int_equal(meta->prio, e->prio);
	assert_int_equal(meta->trace.t_in_ns, e->trace.t_in_ns);
	assert_int_equal(meta->trace.t_enq_ns, e->trace.t_enq_ns);
	assert_int_equal(meta->trace.qdepth_bytes, e->trace.qdepth_bytes);
	assert_int_equal(meta->trace.wait_ns, e->trace.wait_ns);
	assert_int_equal(meta->trace.delay_ns, e->trace.delay_ns);
	assert_int_equal(meta->trace.event_reason, e->trace.event_reason);
	assert_int_equal(meta->trace.marks, e->trace.marks);
	assert_int_equal(meta->trace.created_by, e->trace.created_by);
	assert_int_equal(meta->trace.path, e->trace.path);
	assert_int_equal(meta->trace.drop_reason, e->trace.drop_reason);
	return (size_t)snprintf(buf, len, "rocemu: seq=%u", n_seen - 1);
}

/*
 * Push 600 bursts (and single drop copies) through a ring of CAP_RING records, draining a
 * random amount after each; the file must hold exactly the records the ring took.
 */
static void
cap_run(enum cap_mode m)
{
	static const char *const ifs[] = { "p0", "p1", "p2", "drop" };
	char file[] = "/tmp/rocemu_test_capture_XXXXXX.pcapng";
	uint64_t ts = 1000000000ULL, offered_all = 0, captured_all = 0, occupancy = 0;
	struct emu_capture_stats st;
	struct emu_capture *cap;
	struct emu_pcap_rec rec;
	struct emu_pcapr rd;
	struct emu_err err;
	unsigned int round, i;
	int fd, rc;

	mode = m;
	n_expect = n_seen = n_annotated = 0;
	n_calls = 0;
	fd = mkstemps(file, 7);
	assert_true(fd >= 0);
	close(fd);
	cap = emu_capture_create_ng(file, CAP_SNAP, 9216, CAP_RING, 4, ifs, &err);
	assert_non_null(cap);
	if (mode != CAP_HEADERS)
		assert_int_equal(emu_capture_set_annotate(cap, cap_annotate, NULL,
							  mode == CAP_ANN_ALL, NULL, &err), 0);
	for (round = 0; round < 600; round++) {
		struct rte_mbuf *burst[32];
		unsigned int n = 1 + cap_rand() % 32, offered, got, room, want = 0;
		const bool egress = cap_rand() % 2;
		const uint32_t mask = cap_rand() % 3 == 0 ? UINT32_MAX : 1u << (cap_rand() % 3);

		for (i = 0; i < n; i++) {
			uint32_t len = cap_rand() % 4 == 0 ? CAP_SNAP - 8 + cap_rand() % 17 :
							    60 + cap_rand() % 1500;

			burst[i] = cap_frame(len, len > 40 && cap_rand() % 6 == 0);
			cap_fill_meta(burst[i], ts += 1 + cap_rand() % 100);
		}
		/* what the ring must take: the chosen ports' packets, as many as it has room for */
		room = (unsigned int)(CAP_RING - occupancy);
		for (i = 0; i < n; i++) {
			const struct emu_pkt_meta *meta = emu_meta(burst[i]);
			uint16_t port = egress ? meta->out_port : meta->in_port;

			if (mask != UINT32_MAX && (mask & (1u << port)) == 0)
				continue;
			if (want++ < room)
				cap_expect_add(burst[i], meta->ts_ns, -1);
		}
		got = emu_capture_push_burst_ports(cap, burst, n, egress, mask, &offered);
		assert_int_equal(offered, want);
		assert_int_equal(got, RTE_MIN(want, room));
		occupancy += got;
		offered_all += offered;
		captured_all += got;
		rte_pktmbuf_free_bulk(burst, n);
		/* now and then a dropped frame on the "drop" interface, with its reason */
		if (cap_rand() % 5 == 0) {
			struct rte_mbuf *m = cap_frame(60 + cap_rand() % 200, false);
			int reason = (int)(cap_rand() % 40);
			bool ok;

			cap_fill_meta(m, ts += 7);
			if (occupancy < CAP_RING)
				cap_expect_add(m, emu_meta(m)->ts_ns, reason);
			ok = emu_capture_push_if(cap, m, emu_meta(m)->ts_ns, 3, 0, reason);
			assert_int_equal(ok, occupancy < CAP_RING);
			occupancy += ok;
			offered_all++;
			captured_all += ok;
			rte_pktmbuf_free(m);
		}
		occupancy -= emu_capture_drain(cap, cap_rand() % 10 == 0 ? CAP_RING : cap_rand() % 16);
	}
	assert_int_equal(emu_capture_close(cap), 0);
	emu_capture_stats(cap, &st);
	assert_int_equal(st.captured, captured_all);
	assert_int_equal(st.ring_full, offered_all - captured_all);
	assert_int_equal(st.written, n_expect);
	assert_int_equal(st.write_errors, 0);
	assert_true(st.ring_full > 0);     /* the ring did fill in the middle of bursts */
	assert_true(n_expect > 4 * CAP_RING); /* and wrapped many times */
	/* the callback ran once for each record to annotate, and for no other */
	assert_int_equal(n_calls, n_annotated);
	if (mode == CAP_ANN_ALL)
		assert_int_equal(n_annotated, n_expect);
	if (mode == CAP_ANN_EVENTS) /* both kinds, many of each */
		assert_true(n_annotated > n_expect / 8 && n_annotated < n_expect - n_expect / 8);
	emu_capture_free(cap);

	/* the file: every record the ring took, in order, its bytes and lengths exact */
	memset(&rd, 0, sizeof(rd));
	assert_int_equal(emu_pcapr_open(&rd, file, NULL, &err), 0);
	for (i = 0; i < n_expect; i++) {
		rc = emu_pcapr_next(&rd, &rec, &err);
		assert_int_equal(rc, 1);
		assert_int_equal(rec.ts_ns, expect[i].ts_ns);
		assert_int_equal(rec.caplen, expect[i].caplen);
		assert_int_equal(rec.origlen, expect[i].origlen);
		assert_memory_equal(rec.data, expect[i].data, expect[i].caplen);
	}
	assert_int_equal(emu_pcapr_next(&rd, &rec, &err), 0);
	emu_pcapr_close(&rd);
	unlink(file);
}

/* A classic pcap written field by field: @p swapped in the other byte order, microseconds. */
static void
pcapr_put32(FILE *f, uint32_t v, bool swapped)
{
	if (swapped)
		v = __builtin_bswap32(v);
	assert_int_equal(fwrite(&v, 4, 1, f), 1);
}

/*
 * emu_pcapr's block reader against libpcap alone, over a file of 3 MB (records across the
 * 1 MB blocks), a record over the snapshot length (libpcap cuts it: read by libpcap, the next
 * ones by the block reader again), a microsecond field past 2^31 (libpcap's to read) and a
 * last record cut short (libpcap's error): the same records, offsets and message.
 */
static void
pcapr_compare(bool swapped)
{
	char file[] = "/tmp/rocemu-pcapr-XXXXXX";
	int fd = mkstemp(file);
	struct emu_pcap_rec a, b;
	struct emu_pcapr ra, rb;
	struct emu_err ea, eb;
	uint8_t data[300];
	unsigned int i, n = 0;
	uint64_t bytes = 0;
	int rca, rcb;
	FILE *f;

	assert_true(fd >= 0);
	f = fdopen(fd, "wb");
	assert_non_null(f);
	pcapr_put32(f, 0xa1b2c3d4, swapped);
	pcapr_put32(f, 2 | 4u << 16, false); /* version 2.4, as two 16-bit fields */
	if (swapped) { /* the two 16-bit fields in the file's order */
		fseek(f, 4, SEEK_SET);
		assert_int_equal(fwrite("\x00\x02\x00\x04", 4, 1, f), 1);
	}
	pcapr_put32(f, 0, swapped);
	pcapr_put32(f, 0, swapped);
	pcapr_put32(f, 200, swapped); /* snapshot */
	pcapr_put32(f, 1, swapped);
	for (i = 0; i < sizeof(data); i++)
		data[i] = (uint8_t)(i * 7 + 1);
	for (i = 0; bytes < 3u << 20; i++) {
		uint32_t caplen = 14 + (i * 37) % 187, frac = i * 3 % 1000000;

		if (i == 5000)
			caplen = 300; /* over the snapshot */
		if (i == 7000)
			frac = 0xfffffff0u; /* past a second: read as libpcap reads it */
		pcapr_put32(f, 1700000000 + i / 1000, swapped);
		pcapr_put32(f, frac, swapped);
		pcapr_put32(f, caplen, swapped);
		pcapr_put32(f, caplen + (i % 3) * 100, swapped);
		assert_int_equal(fwrite(data, caplen, 1, f), 1);
		bytes += 16 + caplen;
		n++;
	}
	/* the last record cut short */
	pcapr_put32(f, 1800000000, swapped);
	pcapr_put32(f, 0, swapped);
	pcapr_put32(f, 100, swapped);
	pcapr_put32(f, 100, swapped);
	assert_int_equal(fwrite(data, 40, 1, f), 1);
	assert_int_equal(fclose(f), 0);

	assert_int_equal(emu_pcapr_open(&ra, file, NULL, &ea), 0);
	assert_int_equal(emu_pcapr_open(&rb, file, NULL, &eb), 0);
	assert_true(ra.fast); /* the block reader */
	emu_pcapr_libpcap_only(&rb);
	for (i = 0;; i++) {
		rca = emu_pcapr_next(&ra, &a, &ea);
		rcb = emu_pcapr_next(&rb, &b, &eb);
		assert_int_equal(rca, rcb);
		if (rca != 1)
			break;
		assert_int_equal(a.ts_ns, b.ts_ns);
		assert_int_equal(a.caplen, b.caplen);
		assert_int_equal(a.origlen, b.origlen);
		assert_memory_equal(a.data, b.data, a.caplen);
		assert_int_equal(ra.offset, rb.offset);
		if (i == 5000)
			assert_int_equal(a.caplen, 200); /* cut by libpcap */
	}
	assert_int_equal(i, n);
	assert_int_equal(rca, -1);
	assert_string_equal(ea.msg, eb.msg);
	assert_non_null(strstr(ea.msg, "truncated"));
	assert_true(ra.fast); /* back to the block reader after the cut record */
	emu_pcapr_close(&ra);
	emu_pcapr_close(&rb);
	unlink(file);
}

static void
test_pcapr_blocks(void **state)
{
	(void)state;
	pcapr_compare(false);
	pcapr_compare(true);
}

static void
test_ring_headers(void **state)
{
	(void)state;
	cap_run(CAP_HEADERS);
}

static void
test_ring_annotated(void **state)
{
	(void)state;
	cap_run(CAP_ANN_ALL);
}

static void
test_ring_annotated_events(void **state)
{
	(void)state;
	cap_run(CAP_ANN_EVENTS);
}

/*
 * Read @p file back and remove it: its records, how often time went back, and the sum of the
 * times of its first @p sum_first records.
 */
static void
cap_read_order(const char *file, unsigned int sum_first, unsigned int *n_out,
	       unsigned int *backwards, uint64_t *sum_out)
{
	struct emu_pcap_rec rec;
	struct emu_pcapr rd;
	struct emu_err err;
	uint64_t prev = 0;

	*n_out = 0;
	*backwards = 0;
	*sum_out = 0;
	memset(&rd, 0, sizeof(rd));
	assert_int_equal(emu_pcapr_open(&rd, file, NULL, &err), 0);
	while (emu_pcapr_next(&rd, &rec, &err) == 1) {
		*backwards += rec.ts_ns < prev;
		prev = rec.ts_ns;
		if (*n_out < sum_first)
			*sum_out += rec.ts_ns;
		(*n_out)++;
	}
	emu_pcapr_close(&rd);
	unlink(file);
}

/*
 * Time order, as capinfos checks it: the worker pushes what a live pass makes, frames dropped
 * at arrival stamped with the pass's time before the frames the TM releases stamped with their
 * departures earlier in the pass, port after port. The file must hold every record, each no
 * earlier than the one before it, with their own times (none later than the window). A record
 * later than the 10 ms window is still written in order, at the time before it, and counted.
 */
static void
test_time_order(void **state)
{
	char file[] = "/tmp/rocemu_test_capture_XXXXXX.pcapng";
	static const char *const ifs[] = { "p0", "p1", "drop" };
	uint64_t now = 5000000000ULL, sum_in = 0, sum_out = 0;
	struct emu_capture_stats st;
	struct emu_capture *cap;
	struct emu_err err;
	unsigned int pass, i, n_in = 0, n_out = 0, backwards = 0;
	int fd;

	(void)state;
	mode = CAP_HEADERS;
	fd = mkstemps(file, 7);
	assert_true(fd >= 0);
	close(fd);
	cap = emu_capture_create_ng(file, CAP_SNAP, 9216, 4096, 3, ifs, &err);
	assert_non_null(cap);
	for (pass = 0; pass < 400; pass++) {
		uint64_t prev_now = now;
		struct rte_mbuf *m;

		now += 1000 + cap_rand() % 20000;
		/* a frame dropped at arrival, stamped now */
		m = cap_frame(100, false);
		cap_fill_meta(m, now);
		assert_true(emu_capture_push_if(cap, m, now, 2, 0, 3));
		sum_in += now;
		n_in++;
		rte_pktmbuf_free(m);
		/* then each port's departures since the last pass */
		for (i = 0; i < 2; i++) {
			struct rte_mbuf *burst[8];
			unsigned int k, n = 1 + cap_rand() % 8;
			uint64_t t = prev_now;

			for (k = 0; k < n; k++) {
				burst[k] = cap_frame(60 + cap_rand() % 1000, false);
				t += 1 + (now - prev_now) / (n + 1);
				cap_fill_meta(burst[k], t);
				emu_meta(burst[k])->out_port = (uint16_t)i;
				sum_in += t;
				n_in++;
			}
			assert_int_equal(emu_capture_push_burst(cap, burst, n, true), n);
			rte_pktmbuf_free_bulk(burst, n);
		}
		if (cap_rand() % 3 == 0)
			emu_capture_drain(cap, cap_rand() % 64);
	}
	/* one record 20 ms late: beyond the window */
	{
		struct rte_mbuf *m = cap_frame(100, false);

		now += 50000000ULL;
		cap_fill_meta(m, now);
		assert_true(emu_capture_push_if(cap, m, now, 2, 0, 3));
		cap_fill_meta(m, now - 20000000ULL);
		assert_true(emu_capture_push_if(cap, m, now - 20000000ULL, 2, 0, 3));
		rte_pktmbuf_free(m);
		emu_capture_drain(cap, 8);
		cap_fill_meta(m = cap_frame(100, false), now + 11000000ULL);
		assert_true(emu_capture_push_if(cap, m, now + 11000000ULL, 2, 0, 3));
		rte_pktmbuf_free(m);
		cap_fill_meta(m = cap_frame(100, false), now - 1);
		assert_true(emu_capture_push_if(cap, m, now - 1, 2, 0, 3));
		rte_pktmbuf_free(m);
	}
	assert_int_equal(emu_capture_close(cap), 0);
	emu_capture_stats(cap, &st);
	assert_int_equal(st.written, n_in + 4);
	assert_int_equal(st.late, 1); /* now - 1, after now + 11 ms had pushed now out */
	emu_capture_free(cap);

	cap_read_order(file, n_in, &n_out, &backwards, &sum_out);
	assert_int_equal(backwards, 0);
	assert_int_equal(n_out, n_in + 4);
	assert_true(sum_out == sum_in); /* the records of the passes kept their own times */
}

/*
 * Several producers of one file (live --workers): the writer's own ring and a peer's, each
 * pushed by "its worker" with times that interleave with the other's (each ring in its own
 * order, the two clocks one). Drained in random amounts, the file must hold every record of
 * both, in time order, with their own times; the writer's counters add the peer's; a peer
 * freed with records still in its ring writes them first; the writer's ring full while the
 * peer's has room (and the reverse) is counted per ring and summed.
 */
static void
test_peers(void **state)
{
	char file[] = "/tmp/rocemu_test_capture_XXXXXX.pcap";
	uint64_t t[2] = { 1000000000ULL, 1000000500ULL }, sum_in = 0, sum_out = 0;
	struct emu_capture *cap, *peer, *ring[2];
	struct emu_capture_stats st;
	struct emu_err err;
	unsigned int i, k, n_in = 0, n_out = 0, backwards = 0, full = 0;
	int fd;

	(void)state;
	mode = CAP_HEADERS;
	fd = mkstemps(file, 5);
	assert_true(fd >= 0);
	close(fd);
	cap = emu_capture_create(file, CAP_SNAP, 9216, 256, &err);
	assert_non_null(cap);
	peer = emu_capture_create_peer(cap, 256, &err);
	assert_non_null(peer);
	/* a peer of a peer is refused: one writer per file */
	assert_null(emu_capture_create_peer(peer, 16, &err));
	ring[0] = cap;
	ring[1] = peer;
	for (i = 0; i < 3000; i++) {
		unsigned int w = cap_rand() % 2;
		struct rte_mbuf *m = cap_frame(60 + cap_rand() % 200, false);

		t[w] += 1 + cap_rand() % 2000; /* each worker's own time goes on */
		cap_fill_meta(m, t[w]);
		emu_meta(m)->out_port = 0;
		if (emu_capture_push_burst(ring[w], &m, 1, true) == 1) {
			sum_in += t[w];
			n_in++;
		} else {
			full++;
		}
		rte_pktmbuf_free(m);
		if (cap_rand() % 16 == 0) {
			/* the peer's drain goes through its writer: on its own it reads nothing */
			assert_int_equal(emu_capture_drain(peer, 64), 0);
			emu_capture_drain(cap, cap_rand() % 300);
		}
	}
	/* records left in the peer's ring: freeing it writes them (the run's end) */
	for (k = 0; k < 5; k++) {
		struct rte_mbuf *m = cap_frame(80, false);

		t[1] += 10;
		cap_fill_meta(m, t[1]);
		assert_int_equal(emu_capture_push_burst(peer, &m, 1, true), 1);
		sum_in += t[1];
		n_in++;
		rte_pktmbuf_free(m);
	}
	emu_capture_stats(cap, &st);
	assert_int_equal(st.captured, n_in);
	assert_int_equal(st.ring_full, full);
	emu_capture_free(peer);
	assert_int_equal(emu_capture_close(cap), 0);
	emu_capture_stats(cap, &st);
	assert_int_equal(st.written, n_in);
	assert_int_equal(st.late, 0);
	emu_capture_free(cap);

	cap_read_order(file, UINT_MAX, &n_out, &backwards, &sum_out);
	assert_int_equal(n_out, n_in);
	assert_int_equal(backwards, 0);
	assert_true(sum_out == sum_in);
}

/* Push one record of time @p ts into @p ring (a writer or a peer). */
static void
cap_push_at(struct emu_capture *ring, uint64_t ts, uint64_t *sum)
{
	struct rte_mbuf *m = cap_frame(60 + cap_rand() % 200, false);

	cap_fill_meta(m, ts);
	emu_meta(m)->out_port = 0;
	assert_int_equal(emu_capture_push_burst(ring, &m, 1, true), 1);
	*sum += ts;
	rte_pktmbuf_free(m);
}

/*
 * One run of a worker behind the other (descheduled for 40 ms, four times the writer's
 * window): the writer's worker pushes 200 records over 40 ms, publishing its clock after
 * each; the peer's worker published its clock at the start, then pushes 50 records of those
 * 40 ms at once (its TM's departures, stamped when they left), then its clock. With
 * @p peer_clock the writer holds the first worker's records until the peer's clock passes
 * them: nothing is late. Without (a producer that publishes nothing), the first worker's
 * records go once a window old, and the peer's are late. Returns the late count.
 */
static uint64_t
cap_run_behind(bool peer_clock)
{
	char file[] = "/tmp/rocemu_test_capture_XXXXXX.pcap";
	const uint64_t t0 = 2000000000ULL;
	uint64_t sum_in = 0, sum_out = 0, late;
	struct emu_capture *cap, *peer;
	struct emu_capture_stats st;
	struct emu_err err;
	unsigned int i, n_out = 0, backwards = 0;
	int fd;

	fd = mkstemps(file, 5);
	assert_true(fd >= 0);
	close(fd);
	cap = emu_capture_create(file, CAP_SNAP, 9216, 1024, &err);
	assert_non_null(cap);
	peer = emu_capture_create_peer(cap, 1024, &err);
	assert_non_null(peer);
	if (peer_clock)
		emu_capture_publish_clock(peer, t0);
	for (i = 1; i <= 200; i++) {
		cap_push_at(cap, t0 + i * 200000ULL, &sum_in);
		emu_capture_publish_clock(cap, t0 + i * 200000ULL);
		if (i % 10 == 0)
			emu_capture_drain(cap, 64);
	}
	for (i = 0; i < 50; i++)
		cap_push_at(peer, t0 + 100000ULL + i * 600000ULL, &sum_in);
	if (peer_clock)
		emu_capture_publish_clock(peer, t0 + 40000000ULL);
	emu_capture_drain(cap, 1024);
	assert_int_equal(emu_capture_close(cap), 0);
	emu_capture_stats(cap, &st);
	assert_int_equal(st.written, 250);
	late = st.late;
	emu_capture_free(peer);
	emu_capture_free(cap);

	cap_read_order(file, UINT_MAX, &n_out, &backwards, &sum_out);
	assert_int_equal(n_out, 250);
	assert_int_equal(backwards, 0); /* late records are written at the time before them */
	if (late == 0)
		assert_true(sum_out == sum_in); /* every record with its own time */
	return late;
}

/* A worker descheduled for longer than the window: the published clocks keep its place. */
static void
test_peer_behind(void **state)
{
	(void)state;
	mode = CAP_HEADERS;
	assert_int_equal(cap_run_behind(true), 0);
	/* what the clocks prevent: without them most of the peer's 50 records are late */
	assert_true(cap_run_behind(false) > 25);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ring_headers),
		cmocka_unit_test(test_ring_annotated),
		cmocka_unit_test(test_ring_annotated_events),
		cmocka_unit_test(test_time_order),
		cmocka_unit_test(test_peers),
		cmocka_unit_test(test_peer_behind),
		cmocka_unit_test(test_pcapr_blocks),
	};

	pool = test_eal_pool("test_capture", 512);
	expect = calloc(CAP_MAX_RECS, sizeof(*expect));
	if (expect == NULL)
		return 1;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
