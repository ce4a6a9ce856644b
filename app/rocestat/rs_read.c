/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rocestat's capture reader: pcap or pcapng (us or ns) through libpcap in one streaming pass,
 * pcapng packet comments ("rocemu: key=value ...") read by a small block walker that follows
 * libpcap packet by packet, every frame handed to ana_feed(). Apart from main.c so that
 * tests/fuzz/fuzz_rocestat.c runs the very reader rocestat runs.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pcap/pcap.h>

#include "app/rocestat/rocestat.h"
#include "lib/analysis/ana.h"

/* ---- pcapng comments: walk the blocks beside libpcap ---- */

struct rs_ng {
	FILE *f;
	bool swap;
	char comment[4096];
	uint32_t ifindex;
};

static uint32_t
rs_u32(const struct rs_ng *w, const uint8_t *b)
{
	uint32_t v;

	memcpy(&v, b, 4);
	return w->swap ? __builtin_bswap32(v) : v;
}

static uint16_t
rs_u16(const struct rs_ng *w, const uint8_t *b)
{
	uint16_t v;

	memcpy(&v, b, 2);
	return w->swap ? __builtin_bswap16(v) : v;
}

/*
 * Advance to the next packet block (EPB 6, SPB 3, obsolete PB 2) and collect its comments.
 * Returns 1 with w->comment set ("" if none), 0 at the end, -1 on a malformed file (then
 * comments are no longer read; libpcap still reads the packets or reports the error).
 */
static int
rs_ng_next(struct rs_ng *w)
{
	uint8_t hdr[8], *body = NULL;

	for (;;) {
		uint32_t type, len, opt_off = 0;

		if (fread(hdr, 1, 8, w->f) != 8)
			return 0;
		memcpy(&type, hdr, 4);
		if (type == 0x0A0D0D0A) {
			uint8_t bom[4];
			uint32_t magic;

			if (fread(bom, 1, 4, w->f) != 4)
				return -1;
			memcpy(&magic, bom, 4);
			w->swap = magic != 0x1A2B3C4D;
			if (w->swap && magic != 0x4D3C2B1A)
				return -1;
			len = rs_u32(w, hdr + 4);
			if (len < 12 || len % 4 || fseek(w->f, (long)len - 12, SEEK_CUR) != 0)
				return -1;
			continue;
		}
		type = rs_u32(w, hdr);
		len = rs_u32(w, hdr + 4);
		if (len < 12 || len % 4 || len > (64u << 20))
			return -1;
		if (type != 6 && type != 3 && type != 2) {
			if (fseek(w->f, (long)len - 8, SEEK_CUR) != 0)
				return -1;
			continue;
		}
		body = malloc(len - 8);
		if (body == NULL || fread(body, 1, len - 8, w->f) != len - 8) {
			free(body);
			return -1;
		}
		w->comment[0] = '\0';
		w->ifindex = 0;
		if (type == 6 && len >= 32) {
			uint32_t cap = rs_u32(w, body + 12);

			w->ifindex = rs_u32(w, body);
			opt_off = 20 + ((cap + 3) & ~3u);
		} else if (type == 2 && len >= 32) {
			uint32_t cap = rs_u32(w, body + 12);

			w->ifindex = rs_u16(w, body);
			opt_off = 20 + ((cap + 3) & ~3u);
		} else {
			opt_off = len; /* SPB: no options */
		}
		/* options until opt_endofopt or the trailing length */
		while (opt_off + 4 <= len - 12) {
			uint16_t code = rs_u16(w, body + opt_off);
			uint16_t ol = rs_u16(w, body + opt_off + 2);

			if (code == 0 || opt_off + 4 + ol > len - 12)
				break;
			if (code == 1) {
				size_t cur = strlen(w->comment);

				if (cur + ol + 2 < sizeof(w->comment)) {
					if (cur)
						w->comment[cur++] = ' ';
					memcpy(w->comment + cur, body + opt_off + 4, ol);
					w->comment[cur + ol] = '\0';
				}
			}
			opt_off += 4 + ((ol + 3u) & ~3u);
		}
		free(body);
		return 1;
	}
}

int
rs_read(struct ana *a, const char *path)
{
	char errbuf[PCAP_ERRBUF_SIZE];
	struct pcap_pkthdr *h;
	const u_char *data;
	static uint8_t cooked[65536 + 14];
	struct rs_ng ng = { 0 };
	bool use_ng = false;
	int dlt;
	pcap_t *p;
	FILE *f;
	int rc;

	f = fopen(path, "rb");
	if (f == NULL) {
		fprintf(stderr, "rocestat: %s: %s\n", path, strerror(errno));
		return -errno;
	}
	{
		uint32_t magic = 0;

		if (fread(&magic, 1, 4, f) == 4 && magic == 0x0A0D0D0A) {
			use_ng = true;
			rewind(f);
			ng.f = f;
		} else {
			fclose(f);
		}
	}
	p = pcap_open_offline_with_tstamp_precision(path, PCAP_TSTAMP_PRECISION_NANO, errbuf);
	if (p == NULL) {
		fprintf(stderr, "rocestat: %s: %s\n", path, errbuf);
		if (use_ng)
			fclose(f);
		return -EINVAL;
	}
	dlt = pcap_datalink(p);
	if (dlt != DLT_EN10MB && dlt != DLT_LINUX_SLL && dlt != DLT_LINUX_SLL2) {
		fprintf(stderr, "rocestat: %s: link type %s not supported (Ethernet, Linux cooked "
			"v1/v2)\n", path, pcap_datalink_val_to_name(dlt) ?: "?");
		pcap_close(p);
		if (use_ng)
			fclose(f);
		return -EINVAL;
	}
	while ((rc = pcap_next_ex(p, &h, &data)) == 1) {
		uint64_t t = (uint64_t)h->ts.tv_sec * 1000000000ULL + (uint64_t)h->ts.tv_usec;
		const char *comment = NULL;
		uint32_t ifx = 0;

		if (use_ng) {
			if (rs_ng_next(&ng) == 1) {
				comment = ng.comment[0] ? ng.comment : NULL;
				ifx = ng.ifindex;
			} else {
				use_ng = false;
			}
		}
		if (dlt == DLT_EN10MB) {
			ana_feed(a, data, h->caplen, h->len, t, ifx, comment);
			continue;
		}
		/* Linux cooked capture (tcpdump -i any): an Ethernet header in its place, the
		 * source address from the cooked header */
		{
			uint32_t hl = dlt == DLT_LINUX_SLL ? 16 : 20, cap, len;
			uint16_t proto_off = dlt == DLT_LINUX_SLL ? 14 : 0;
			uint16_t addr_off = dlt == DLT_LINUX_SLL ? 6 : 12;

			if (h->caplen < hl || h->len < hl) {
				ana_feed(a, data, 0, 0, t, ifx, comment);
				continue;
			}
			cap = h->caplen - hl;
			len = h->len - hl;
			if (cap > sizeof(cooked) - 14)
				cap = sizeof(cooked) - 14;
			memset(cooked, 0, 6);
			memcpy(cooked + 6, data + addr_off, 6);
			memcpy(cooked + 12, data + proto_off, 2);
			memcpy(cooked + 14, data + hl, cap);
			ana_feed(a, cooked, cap + 14, len + 14, t, ifx, comment);
		}
	}
	if (ng.f != NULL)
		fclose(ng.f);
	if (rc == -1) {
		fprintf(stderr, "rocestat: %s: %s\n", path, pcap_geterr(p));
		pcap_close(p);
		return -EINVAL;
	}
	pcap_close(p);
	return 0;
}
