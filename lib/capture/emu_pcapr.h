/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef EMU_PCAPR_H
#define EMU_PCAPR_H

/**
 * @file
 * Reading replay inputs with libpcap (pcap and pcapng, microsecond or nanosecond files),
 * record by record, with what a replay needs to be exact and honest: nanosecond times with
 * pcap seconds read as unsigned (libpcap sign-extends seconds >= 2^31), the frame's original
 * length next to its captured length (header captures), and every unreadable record reported
 * with its frame number and file offset. No EAL: fuzzed on its own.
 *
 * A classic pcap in a regular file is read by rocemu itself, in 1 MB blocks, record by record
 * with no copy (libpcap's pcap_next_ex() copies each record out of stdio's buffer, about 390
 * instructions of a replayed frame's 3,400): only the well-formed record, whole in the file,
 * no longer than the file's snapshot length. Anything else (a record cut short, one over the
 * snapshot, the end of the file) is handed to libpcap at that record's offset, so every
 * answer, message and error is libpcap's own. pcapng, pipes and odd headers go through
 * libpcap throughout.
 */

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <pcap/pcap.h>

#include "lib/base/emu_err.h"

struct emu_pcapr {
	char *file;
	pcap_t *pc;
	uint64_t frames;   /**< records read */
	long offset;       /**< file offset of the next record, -1 when not known (a pipe) */
	bool counted;      /**< classic pcap file: offset counted, not asked of ftell() per record */
	/* the block reader (classic pcap in a regular file) */
	bool fast;         /**< records are read from @c blk while they are well formed */
	bool swapped;      /**< the file's byte order is not the host's */
	bool micro;        /**< microsecond timestamps (scaled as libpcap scales them) */
	uint32_t snapshot; /**< libpcap's snapshot length for the file */
	uint8_t *blk;      /**< a block of the file, from file offset @c blk_off */
	long blk_off;
	size_t blk_len;    /**< bytes of the block read */
};

struct emu_pcap_rec {
	uint64_t ts_ns;
	uint32_t caplen;   /**< bytes in the file */
	uint32_t origlen;  /**< bytes on the wire (>= caplen) */
	const uint8_t *data;
};

/** Open @p file (or an already open @p fp when not NULL, which the reader then owns). */
int emu_pcapr_open(struct emu_pcapr *r, const char *file, FILE *fp, struct emu_err *err);

/**
 * Next record: 1 with @p rec filled, 0 at the end of the file, -1 on a bad record (a message
 * with the frame number and offset; the reader cannot go on after it).
 */
int emu_pcapr_next(struct emu_pcapr *r, struct emu_pcap_rec *rec, struct emu_err *err);

/** Read every further record through libpcap (tests and the fuzzer compare the two readers). */
void emu_pcapr_libpcap_only(struct emu_pcapr *r);

/** Close; accepts a reader that was never opened (zeroed). */
void emu_pcapr_close(struct emu_pcapr *r);

#endif
