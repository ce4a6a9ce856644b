/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef EMU_PCAPW_H
#define EMU_PCAPW_H

/**
 * @file
 * pcap and pcapng writer with nanosecond timestamps over an emu_out (atomic replace, every
 * write checked). Written here rather than with libpcap's pcap_dump(): pcap_dump() reports no
 * error, pcap_dump_close() returns none (fclose's is lost), and libpcap cannot write pcapng
 * (interfaces per port, packet comments, epb_flags). Records are buffered whole and the buffer
 * is written only at record boundaries, so a file cut short by a kill or a full disk ends
 * with a complete record.
 *
 * pcapng: one Section Header Block, one Interface Description Block per interface (if_name,
 * if_tsresol = 9), Enhanced Packet Blocks with optional epb_flags and opt_comment.
 */

#include <stdbool.h>
#include <stdint.h>

#include "lib/base/emu_err.h"

enum emu_pcapw_fmt {
	EMU_PCAPW_PCAP,   /**< classic pcap, nanosecond magic a1b23c4d */
	EMU_PCAPW_PCAPNG, /**< pcapng */
};

/** epb_flags direction bits */
#define EMU_PCAPW_INBOUND 0x1u
#define EMU_PCAPW_OUTBOUND 0x2u

struct emu_pcapw;

/** pcapng when @p path ends in ".pcapng", else pcap. */
enum emu_pcapw_fmt emu_pcapw_fmt_for(const char *path);

/**
 * Open @p path (see emu_out_open()) and write the file header: @p n_if interfaces named
 * @p if_names (pcapng; a pcap file has one, and n_if must be 1). Returns NULL with a message.
 */
struct emu_pcapw *emu_pcapw_open(const char *path, enum emu_pcapw_fmt fmt, uint32_t snaplen,
				 unsigned int n_if, const char *const *if_names,
				 struct emu_err *err);

/**
 * Append one record: @p caplen bytes of a frame that was @p origlen long on the wire, at
 * @p ts_ns on interface @p ifidx, with pcapng's epb_flags @p flags (0 = none) and comment
 * (NULL = none; pcap files drop both). Returns 0 or -errno (the output's first error, sticky).
 */
int emu_pcapw_write(struct emu_pcapw *w, unsigned int ifidx, uint64_t ts_ns, const void *data,
		    uint32_t caplen, uint32_t origlen, uint32_t flags, const char *comment);

/** Write what is buffered; returns 0 or -errno. */
int emu_pcapw_flush(struct emu_pcapw *w);

/** Flush, close and put the file in place (emu_out_commit()); frees @p w. Accepts NULL. */
int emu_pcapw_close(struct emu_pcapw *w, struct emu_err *err);

/** A refused run: close and remove the temporary file; frees @p w. Accepts NULL. */
void emu_pcapw_abort(struct emu_pcapw *w);

/** Bytes of the file so far (written or buffered). */
uint64_t emu_pcapw_size(const struct emu_pcapw *w);

/** Records accepted so far (written or buffered). */
uint64_t emu_pcapw_records(const struct emu_pcapw *w);

/**
 * Of those, records in the file: written out by a flush (a failed flush keeps the whole
 * records that reached the disk). After a failure the others are lost.
 */
uint64_t emu_pcapw_records_out(const struct emu_pcapw *w);

/** First write error's errno, 0 when none. */
int emu_pcapw_error(const struct emu_pcapw *w);

/** The path as given. */
const char *emu_pcapw_path(const struct emu_pcapw *w);

#endif
