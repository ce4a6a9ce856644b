/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Fuzz the replay input path (lib/capture/emu_pcapr: libpcap reading pcap/pcapng with
 * rocemu's checks) and the writer it feeds (emu_pcapw): the input is a whole capture file.
 * Every record read must have caplen <= origlen and caplen within libpcap's maximum; reading
 * ends in at most one error, after which nothing more is read; each record is written to
 * /dev/null as pcap and pcapng without error. The file is read twice, from a memfd (a regular
 * file, so a classic pcap takes emu_pcapr's own block reader) and through libpcap alone: both
 * must give the same records, the same end and the same error message.
 */
#include <sys/mman.h>
#include <unistd.h>

#include "lib/capture/emu_pcapr.h"
#include "lib/capture/emu_pcapw.h"
#include "fuzz_common.h"

/* @p data in a memfd, open for reading (NULL if that failed) */
static FILE *
fuzz_file(const uint8_t *data, size_t size)
{
	int fd = memfd_create("fuzz.pcap", 0);
	FILE *fp;

	if (fd < 0)
		return NULL;
	if (write(fd, data, size) != (ssize_t)size || lseek(fd, 0, SEEK_SET) != 0 ||
	    (fp = fdopen(fd, "rb")) == NULL) {
		close(fd);
		return NULL;
	}
	return fp;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const ifs[] = { "p0", "p1" };
	struct emu_pcapw *w4, *wng;
	struct emu_pcap_rec rec;
	struct emu_pcapr r;
	struct emu_err err;
	uint64_t n = 0;
	FILE *fp;
	int rc;

	if (size == 0)
		return 0;
	struct emu_pcap_rec rec2;
	struct emu_pcapr r2;
	struct emu_err err2;
	FILE *fp2;
	int rc2, open1, open2;

	fp = fuzz_file(data, size);
	fp2 = fuzz_file(data, size);
	FUZZ_CHECK(fp != NULL && fp2 != NULL);
	open1 = emu_pcapr_open(&r, "fuzz.pcap", fp, &err);
	open2 = emu_pcapr_open(&r2, "fuzz.pcap", fp2, &err2);
	FUZZ_CHECK(open1 == open2);
	if (open1 != 0) {
		FUZZ_CHECK(err.msg[0] != '\0' && strcmp(err.msg, err2.msg) == 0);
		return 0;
	}
	emu_pcapr_libpcap_only(&r2);
	w4 = emu_pcapw_open("/dev/null", EMU_PCAPW_PCAP, 65535, 1, ifs, &err);
	wng = emu_pcapw_open("/dev/null", EMU_PCAPW_PCAPNG, 65535, 2, ifs, &err);
	FUZZ_CHECK(w4 != NULL && wng != NULL);
	for (;;) {
		rc = emu_pcapr_next(&r, &rec, &err);
		rc2 = emu_pcapr_next(&r2, &rec2, &err2);
		FUZZ_CHECK(rc == rc2);
		if (rc != 1)
			break;
		FUZZ_CHECK(rec.ts_ns == rec2.ts_ns && rec.caplen == rec2.caplen &&
			   rec.origlen == rec2.origlen &&
			   memcmp(rec.data, rec2.data, rec.caplen) == 0);
		FUZZ_CHECK(r.offset == r2.offset);
		FUZZ_CHECK(rec.caplen <= rec.origlen);
		FUZZ_CHECK(rec.caplen <= 262144);
		FUZZ_CHECK(emu_pcapw_write(w4, 0, rec.ts_ns, rec.data, rec.caplen, rec.origlen, 0,
					   NULL) == 0);
		FUZZ_CHECK(emu_pcapw_write(wng, (unsigned int)(n & 1), rec.ts_ns, rec.data,
					   rec.caplen, rec.origlen, EMU_PCAPW_OUTBOUND,
					   n % 3 == 0 ? "rocemu: fuzz" : NULL) == 0);
		n++;
		FUZZ_CHECK(r.frames == n);
	}
	FUZZ_CHECK(rc == 0 || (rc == -1 && strstr(err.msg, "frame ") != NULL));
	FUZZ_CHECK(rc == 0 || strcmp(err.msg, err2.msg) == 0);
	FUZZ_CHECK(r.frames == r2.frames);
	emu_pcapr_close(&r2);
	FUZZ_CHECK(emu_pcapw_close(w4, &err) == 0);
	FUZZ_CHECK(emu_pcapw_close(wng, &err) == 0);
	emu_pcapr_close(&r);
	return 0;
}
