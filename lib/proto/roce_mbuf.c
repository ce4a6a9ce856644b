/* SPDX-License-Identifier: BSD-3-Clause */
#include <string.h>

#include "roce_mbuf.h"
#include "roce_crc.h"
#include "roce_internal.h"

/* Copy len bytes at off of the chain to dst; return the bytes copied (fewer at the end). */
static uint32_t
mbuf_copy(const struct rte_mbuf *m, uint32_t off, uint8_t *dst, uint32_t len)
{
	uint32_t done = 0;

	for (; m != NULL && done < len; m = m->next) {
		uint32_t dl = m->data_len, n;

		if (off >= dl) {
			off -= dl;
			continue;
		}
		n = dl - off;
		if (n > len - done)
			n = len - done;
		memcpy(dst + done, rte_pktmbuf_mtod_offset(m, const uint8_t *, off), n);
		done += n;
		off = 0;
	}
	return done;
}

_Static_assert(ROCE_PARSE_MAX_HDR == ROCE_MAX_HDR_LEN, "roce_mbuf.h: ROCE_PARSE_MAX_HDR");

enum roce_class
roce_parse_mbuf_chain(const struct rte_mbuf *m, uint16_t roce_port, struct roce_pkt *out)
{
	uint8_t buf[ROCE_MAX_HDR_LEN];
	uint32_t want = m->pkt_len < sizeof(buf) ? m->pkt_len : (uint32_t)sizeof(buf);

	if (m->data_len >= want)
		return roce_parse_partial(rte_pktmbuf_mtod(m, const uint8_t *), m->data_len,
			m->pkt_len, roce_port, out);
	want = mbuf_copy(m, 0, buf, want);
	return roce_parse_partial(buf, want, m->pkt_len, roce_port, out);
}

uint32_t
roce_icrc_compute_mbuf(const struct rte_mbuf *m, const struct roce_pkt *p)
{
	uint8_t buf[ROCE_MAX_HDR_LEN];
	uint32_t start = (uint32_t)p->bth_off + ROCE_BTH_LEN, end = p->icrc_off, state, hl, left;
	const uint8_t *hdr;

	if (end + ROCE_ICRC_LEN > m->pkt_len || end < start || start > sizeof(buf))
		return 0;
	if (m->data_len >= start) {
		hdr = rte_pktmbuf_mtod(m, const uint8_t *);
		hl = m->data_len;
	} else {
		hl = mbuf_copy(m, 0, buf, start);
		hdr = buf;
	}
	if (roce_icrc_begin(hdr, hl, p, &state) != 0)
		return 0;
	/* Feed [start, end) segment by segment. */
	left = end - start;
	for (; m != NULL && left > 0; m = m->next) {
		uint32_t dl = m->data_len, n;

		if (start >= dl) {
			start -= dl;
			continue;
		}
		n = dl - start;
		if (n > left)
			n = left;
		state = roce_crc32_update(state, rte_pktmbuf_mtod_offset(m, const uint8_t *, start),
			n);
		left -= n;
		start = 0;
	}
	if (left != 0)		/* chain shorter than pkt_len says */
		return 0;
	return ~state;
}

int
roce_icrc_verify_mbuf(const struct rte_mbuf *m, const struct roce_pkt *p)
{
	uint8_t icrc[ROCE_ICRC_LEN];

	if ((p->cls != ROCE_CLASS_ROCEV2 && p->cls != ROCE_CLASS_ROCEV1) ||
			p->reason != ROCE_REASON_OK ||
			mbuf_copy(m, p->icrc_off, icrc, ROCE_ICRC_LEN) != ROCE_ICRC_LEN)
		return 0;
	return roce_icrc_compute_mbuf(m, p) == roce_get_le32(icrc);
}

void
roce_icrc_update_mbuf(struct rte_mbuf *m, const struct roce_pkt *p)
{
	uint8_t icrc[ROCE_ICRC_LEN];
	uint32_t off = p->icrc_off, i = 0;

	if ((p->cls != ROCE_CLASS_ROCEV2 && p->cls != ROCE_CLASS_ROCEV1) ||
			p->reason != ROCE_REASON_OK || off + ROCE_ICRC_LEN > m->pkt_len)
		return;
	roce_put_le32(icrc, roce_icrc_compute_mbuf(m, p));
	for (; m != NULL && i < ROCE_ICRC_LEN; m = m->next) {
		uint32_t dl = m->data_len;

		if (off >= dl) {
			off -= dl;
			continue;
		}
		for (; off < dl && i < ROCE_ICRC_LEN; off++, i++)
			*rte_pktmbuf_mtod_offset(m, uint8_t *, off) = icrc[i];
		off = 0;
	}
}
