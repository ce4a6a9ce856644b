/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/capture/emu_pcapr.h"

/* The block reader's block: any record libpcap accepts (caplen <= 262144) fits whole. */
#define EMU_PCAPR_BLOCK (1u << 20)

/*
 * Is the open file a classic pcap (16-byte record headers after a 24-byte file header)? Sets
 * @p micro for a microsecond file.
 */
static bool
emu_pcapr_classic(FILE *f, long offset, bool *micro)
{
	uint8_t b[4];
	uint32_t magic;

	if (offset != 24 || f == NULL || pread(fileno(f), b, 4, 0) != 4)
		return false;
	magic = (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3];
	*micro = magic == 0xa1b2c3d4u || magic == 0xd4c3b2a1u;
	return magic == 0xa1b2c3d4u || magic == 0xd4c3b2a1u || magic == 0xa1b23c4du ||
	       magic == 0x4d3cb2a1u;
}

/*
 * The block reader for a classic pcap in a regular file whose records libpcap reads as they
 * are written (version 2.4: older ones may have their lengths swapped, which libpcap undoes).
 */
static void
emu_pcapr_fast_init(struct emu_pcapr *r, bool micro)
{
	struct stat st;
	FILE *f = pcap_file(r->pc);

	if (!r->counted || f == NULL || fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode) ||
	    pcap_major_version(r->pc) != 2 || pcap_minor_version(r->pc) != 4 ||
	    pcap_snapshot(r->pc) <= 0)
		return;
	r->blk = malloc(EMU_PCAPR_BLOCK);
	if (r->blk == NULL)
		return; /* libpcap reads it all */
	r->fast = true;
	r->swapped = pcap_is_swapped(r->pc) != 0;
	r->micro = micro;
	r->snapshot = (uint32_t)pcap_snapshot(r->pc);
	r->blk_off = 0;
	r->blk_len = 0;
}

void
emu_pcapr_libpcap_only(struct emu_pcapr *r)
{
	if (r->fast)
		fseek(pcap_file(r->pc), r->offset, SEEK_SET);
	r->fast = false;
}

/* Read the file from @p off into the block; true when at least @p need bytes came. */
static bool
emu_pcapr_fill(struct emu_pcapr *r, long off, size_t need)
{
	int fd = fileno(pcap_file(r->pc));
	size_t got = 0;
	ssize_t n;

	r->blk_off = off;
	r->blk_len = 0;
	while (got < EMU_PCAPR_BLOCK) {
		n = pread(fd, r->blk + got, EMU_PCAPR_BLOCK - got, (off_t)(off + (long)got));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break; /* the end, or an error libpcap will meet and report */
		got += (size_t)n;
		if (got >= need && got >= 65536)
			break;
	}
	r->blk_len = got;
	return got >= need;
}

static inline uint32_t
emu_pcapr_u32(const uint8_t *p, bool swapped)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return swapped ? __builtin_bswap32(v) : v;
}

/*
 * The next record from the block: 1 when it was well formed and whole, 0 when libpcap must
 * read it (at r->offset).
 */
static int
emu_pcapr_next_fast(struct emu_pcapr *r, struct emu_pcap_rec *rec)
{
	long off = r->offset;
	size_t rel = (size_t)(off - r->blk_off);
	const uint8_t *h;
	uint32_t caplen;
	uint64_t frac;

	if (off < r->blk_off || rel + 16 > r->blk_len) {
		if (!emu_pcapr_fill(r, off, 16))
			return 0;
		rel = 0;
	}
	h = r->blk + rel;
	caplen = emu_pcapr_u32(h + 8, r->swapped);
	if (caplen > r->snapshot)
		return 0; /* libpcap cuts it to the snapshot, or refuses it */
	if (rel + 16 + caplen > r->blk_len) {
		if (!emu_pcapr_fill(r, off, 16 + (size_t)caplen))
			return 0;
		h = r->blk;
	}
	/* A fraction of a second past a second is libpcap's to read (1.10.3 sign-extends it in
	 * a file of the host's byte order, not in the other). */
	frac = emu_pcapr_u32(h + 4, r->swapped);
	if (frac >= (r->micro ? 1000000u : 1000000000u))
		return 0;
	if (r->micro)
		frac *= 1000;
	rec->ts_ns = (uint64_t)emu_pcapr_u32(h, r->swapped) * 1000000000ULL + frac;
	rec->caplen = caplen;
	rec->origlen = emu_pcapr_u32(h + 12, r->swapped);
	rec->data = h + 16;
	r->offset = off + 16 + (long)caplen;
	return 1;
}

static void
emu_pcapr_where(long at, char *where, size_t size)
{
	if (at >= 0)
		snprintf(where, size, "at offset %ld", at);
	else
		snprintf(where, size, "(offset unknown)");
}

int
emu_pcapr_open(struct emu_pcapr *r, const char *file, FILE *fp, struct emu_err *err)
{
	char errbuf[PCAP_ERRBUF_SIZE] = "";
	bool micro = false;

	memset(r, 0, sizeof(*r));
	if (file[0] == '\0') {
		if (fp != NULL)
			fclose(fp);
		return emu_err_setrc(err, -EINVAL, "empty input file name");
	}
	r->file = strdup(file);
	if (r->file == NULL) {
		if (fp != NULL)
			fclose(fp);
		return emu_err_setrc(err, -ENOMEM, "%s: out of memory", file);
	}
	if (fp != NULL)
		r->pc = pcap_fopen_offline_with_tstamp_precision(fp, PCAP_TSTAMP_PRECISION_NANO,
								 errbuf);
	else
		r->pc = pcap_open_offline_with_tstamp_precision(file, PCAP_TSTAMP_PRECISION_NANO,
								errbuf);
	if (r->pc == NULL) {
		if (fp != NULL)
			fclose(fp);
		emu_err_setrc(err, -EINVAL, "%s: %s", file, errbuf[0] ? errbuf : "cannot read");
		goto fail;
	}
	if (pcap_datalink(r->pc) != DLT_EN10MB) {
		emu_err_setrc(err, -EINVAL, "%s: link type %s, need Ethernet (EN10MB)", file,
			      pcap_datalink_val_to_name(pcap_datalink(r->pc)) ?
			      pcap_datalink_val_to_name(pcap_datalink(r->pc)) : "unknown");
		goto fail;
	}
	r->offset = ftell(pcap_file(r->pc));
	r->counted = emu_pcapr_classic(pcap_file(r->pc), r->offset, &micro);
	emu_pcapr_fast_init(r, micro);
	return 0;
fail:
	emu_pcapr_close(r);
	return -EINVAL;
}

int
emu_pcapr_next(struct emu_pcapr *r, struct emu_pcap_rec *rec, struct emu_err *err)
{
	struct pcap_pkthdr *h;
	const u_char *data;
	long at = r->offset;
	char where[64];
	int rc;

	if (r->fast) {
		if (emu_pcapr_next_fast(r, rec) == 1) {
			r->frames++;
			if (rec->caplen <= rec->origlen)
				return 1;
			emu_pcapr_where(at, where, sizeof(where));
			emu_err_setrc(err, -EINVAL,
				      "%s: frame %llu %s: captured length %u is larger than the "
				      "original length %u", r->file, (unsigned long long)r->frames,
				      where, rec->caplen, rec->origlen);
			return -1;
		}
		/* libpcap reads this one, from where it starts */
		if (fseek(pcap_file(r->pc), at, SEEK_SET) != 0) {
			emu_pcapr_where(at, where, sizeof(where));
			emu_err_setrc(err, -EINVAL, "%s: frame %llu %s: %s", r->file,
				      (unsigned long long)r->frames + 1, where, strerror(errno));
			return -1;
		}
	}
	rc = pcap_next_ex(r->pc, &h, &data);
	if (rc == PCAP_ERROR_BREAK)
		return 0;
	if (rc != 1) {
		emu_pcapr_where(at, where, sizeof(where));
		emu_err_setrc(err, -EINVAL, "%s: frame %llu %s: %s", r->file,
			      (unsigned long long)r->frames + 1, where, pcap_geterr(r->pc));
		return -1;
	}
	r->frames++;
	/* ftell() is a system call per record: count instead where the record's length is its
	 * header and its captured bytes (libpcap cuts a record longer than the snapshot). */
	if (r->counted && h->caplen < (uint32_t)pcap_snapshot(r->pc))
		r->offset += 16 + (long)h->caplen;
	else
		r->offset = ftell(pcap_file(r->pc));
	if (h->caplen > h->len) {
		emu_pcapr_where(at, where, sizeof(where));
		emu_err_setrc(err, -EINVAL,
			      "%s: frame %llu %s: captured length %u is larger than the original "
			      "length %u", r->file, (unsigned long long)r->frames, where, h->caplen,
			      h->len);
		return -1;
	}
	/* The file holds seconds as 32 bits, which libpcap sign-extends: read them unsigned. */
	rec->ts_ns = (uint64_t)(uint32_t)h->ts.tv_sec * 1000000000ULL + (uint64_t)h->ts.tv_usec;
	rec->caplen = h->caplen;
	rec->origlen = h->len;
	rec->data = data;
	return 1;
}

void
emu_pcapr_close(struct emu_pcapr *r)
{
	if (r->pc != NULL)
		pcap_close(r->pc);
	free(r->blk);
	free(r->file);
	memset(r, 0, sizeof(*r));
}
