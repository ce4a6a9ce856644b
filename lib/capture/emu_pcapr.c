/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/capture/emu_pcapr.h"

/* Is the open file a classic pcap (16-byte record headers after a 24-byte file header)? */
static bool
emu_pcapr_classic(FILE *f, long offset)
{
	uint8_t b[4];
	uint32_t magic;

	if (offset != 24 || f == NULL || pread(fileno(f), b, 4, 0) != 4)
		return false;
	magic = (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3];
	return magic == 0xa1b2c3d4u || magic == 0xd4c3b2a1u || magic == 0xa1b23c4du ||
	       magic == 0x4d3cb2a1u;
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
	r->counted = emu_pcapr_classic(pcap_file(r->pc), r->offset);
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
	free(r->file);
	memset(r, 0, sizeof(*r));
}
