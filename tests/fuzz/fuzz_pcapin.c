/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Fuzz the replay input path (lib/capture/emu_pcapr: libpcap reading pcap/pcapng with
 * rocemu's checks) and the writer it feeds (emu_pcapw): the input is a whole capture file.
 * Every record read must have caplen <= origlen and caplen within libpcap's maximum; reading
 * ends in at most one error, after which nothing more is read; each record is written to
 * /dev/null as pcap and pcapng without error.
 */
#include "lib/capture/emu_pcapr.h"
#include "lib/capture/emu_pcapw.h"
#include "fuzz_common.h"

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
	fp = fmemopen((void *)(uintptr_t)data, size, "rb");
	if (fp == NULL)
		return 0;
	if (emu_pcapr_open(&r, "fuzz.pcap", fp, &err) != 0) {
		FUZZ_CHECK(err.msg[0] != '\0');
		return 0;
	}
	w4 = emu_pcapw_open("/dev/null", EMU_PCAPW_PCAP, 65535, 1, ifs, &err);
	wng = emu_pcapw_open("/dev/null", EMU_PCAPW_PCAPNG, 65535, 2, ifs, &err);
	FUZZ_CHECK(w4 != NULL && wng != NULL);
	while ((rc = emu_pcapr_next(&r, &rec, &err)) == 1) {
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
	FUZZ_CHECK(emu_pcapw_close(w4, &err) == 0);
	FUZZ_CHECK(emu_pcapw_close(wng, &err) == 0);
	emu_pcapr_close(&r);
	return 0;
}
