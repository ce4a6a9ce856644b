/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ICRC: CRC-32 over 8 bytes of 0xFF, then the IP header (or RoCEv1 GRH), UDP header, BTH and
 * everything up to the ICRC, with the fields a switch may change set to all ones (docs/wire.md).
 * The masked headers are copied to a small stack buffer; the rest is fed in place.
 */
#include <errno.h>
#include <string.h>

#include "roce_proto.h"
#include "roce_crc.h"
#include "roce_internal.h"

static inline int
pkt_is_roce(const struct roce_pkt *p)
{
	return (p->cls == ROCE_CLASS_ROCEV2 || p->cls == ROCE_CLASS_ROCEV1) &&
		p->reason == ROCE_REASON_OK;
}

int
roce_icrc_begin(const uint8_t *hdr, uint32_t avail, const struct roce_pkt *p, uint32_t *state)
{
	/* 0xFF prefix, largest IPv4 header, UDP, BTH */
	uint8_t buf[8 + ROCE_IPV4_MAX_HDR_LEN + ROCE_UDP_HDR_LEN + ROCE_BTH_LEN];
	uint32_t hlen, bth_end = (uint32_t)p->bth_off + ROCE_BTH_LEN;
	uint8_t *m = buf + 8;

	if (!pkt_is_roce(p) || bth_end > avail || p->bth_off < p->l3_off)
		return -EINVAL;
	hlen = bth_end - p->l3_off;
	if (hlen > sizeof(buf) - 8)
		return -EINVAL;
	memset(buf, 0xFF, 8);
	memcpy(m, hdr + p->l3_off, hlen);
	if (p->cls == ROCE_CLASS_ROCEV2 && p->ip_version == 4) {
		m[1] = 0xFF;			/* TOS: DSCP, ECN */
		m[8] = 0xFF;			/* TTL */
		m[10] = 0xFF;			/* header checksum */
		m[11] = 0xFF;
	} else {
		m[0] |= 0x0F;			/* traffic class, flow label */
		m[1] = 0xFF;
		m[2] = 0xFF;
		m[3] = 0xFF;
		m[7] = 0xFF;			/* hop limit */
	}
	if (p->cls == ROCE_CLASS_ROCEV2) {
		uint8_t *udp = m + (p->l4_off - p->l3_off);

		udp[6] = 0xFF;			/* UDP checksum */
		udp[7] = 0xFF;
	}
	m[p->bth_off - p->l3_off + 4] = 0xFF;	/* FECN, BECN, reserved */
	*state = roce_crc32_update(ROCE_CRC32_INIT, buf, 8 + hlen);
	return 0;
}

uint32_t
roce_icrc_compute(const uint8_t *frame, uint32_t len, const struct roce_pkt *p)
{
	uint32_t start = (uint32_t)p->bth_off + ROCE_BTH_LEN;
	uint32_t state;

	if ((uint32_t)p->icrc_off + ROCE_ICRC_LEN > len || p->icrc_off < start ||
			roce_icrc_begin(frame, len, p, &state) != 0)
		return 0;
	state = roce_crc32_update(state, frame + start, p->icrc_off - start);
	return ~state;
}

int
roce_icrc_verify(const uint8_t *frame, uint32_t len, const struct roce_pkt *p)
{
	if (!pkt_is_roce(p) || (uint32_t)p->icrc_off + ROCE_ICRC_LEN > len)
		return 0;
	return roce_icrc_compute(frame, len, p) == roce_get_le32(frame + p->icrc_off);
}

void
roce_icrc_update(uint8_t *frame, uint32_t len, const struct roce_pkt *p)
{
	if (!pkt_is_roce(p) || (uint32_t)p->icrc_off + ROCE_ICRC_LEN > len)
		return;
	roce_put_le32(frame + p->icrc_off, roce_icrc_compute(frame, len, p));
}

/* Bits of the frame byte at off that the ICRC covers (0 outside IP header .. ICRC). */
static inline uint8_t
icrc_covered_bits(const struct roce_pkt *p, uint32_t off)
{
	uint32_t o;

	if (off < p->l3_off || off >= p->icrc_off)
		return 0;
	o = off - p->l3_off;
	if (p->cls == ROCE_CLASS_ROCEV2 && p->ip_version == 4) {
		if (o == 1 || o == 8 || o == 10 || o == 11)	/* TOS, TTL, checksum */
			return 0;
	} else if (o == 0) {
		return 0xF0;					/* version stays, TC high nibble not */
	} else if (o == 1 || o == 2 || o == 3 || o == 7) {	/* TC, flow label, hop limit */
		return 0;
	}
	if (p->cls == ROCE_CLASS_ROCEV2 && (off == p->l4_off + 6u || off == p->l4_off + 7u))
		return 0;					/* UDP checksum */
	if (off == p->bth_off + 4u)
		return 0;					/* FECN, BECN, reserved */
	return 0xFF;
}

void
roce_icrc_patch(uint8_t *frame, uint32_t len, const struct roce_pkt *p, uint32_t off,
	const uint8_t *old_bytes, const uint8_t *new_bytes, unsigned int n)
{
	uint8_t d[64];
	uint32_t state = 0, end, i;
	unsigned int k, m = 0;

	if (!pkt_is_roce(p) || (uint32_t)p->icrc_off + ROCE_ICRC_LEN > len || off >= p->icrc_off)
		return;
	if (n > p->icrc_off - off)	/* bytes from the ICRC on are not covered */
		n = p->icrc_off - off;
	/* crc0 (no init, no inversion) of the masked difference, moved to the end of the data */
	end = off + n;
	for (i = off, k = 0; k < n; i++, k++) {
		d[m++] = (uint8_t)((old_bytes[k] ^ new_bytes[k]) & icrc_covered_bits(p, i));
		if (m == sizeof(d) || k + 1 == n) {
			state = roce_crc32_update_bytewise(state, d, m);
			m = 0;
		}
	}
	state = roce_crc32_shift(state, p->icrc_off - end);
	roce_put_le32(frame + p->icrc_off, roce_get_le32(frame + p->icrc_off) ^ state);
}

uint16_t
roce_udp_cksum(const uint8_t *frame, const struct roce_pkt *p)
{
	const uint8_t *udp = frame + p->l4_off;
	uint32_t alen = p->ip_version == 4 ? 4 : 16, ulen = roce_get_be16(udp + 4), sum, i;

	sum = ROCE_IPPROTO_UDP + ulen;
	for (i = 0; i < alen; i += 2)
		sum += roce_get_be16(p->src_ip + i) + roce_get_be16(p->dst_ip + i);
	for (i = 0; i + 1 < ulen; i += 2) {
		if (i != 6)
			sum += roce_get_be16(udp + i);
		if (sum >= 0x80000000u)
			sum = (sum & 0xFFFF) + (sum >> 16);
	}
	if (ulen & 1)
		sum += (uint32_t)udp[ulen - 1] << 8;
	while (sum >> 16)
		sum = (sum & 0xFFFF) + (sum >> 16);
	sum = ~sum & 0xFFFF;
	return sum == 0 ? 0xFFFF : (uint16_t)sum;
}

uint16_t
roce_ipv4_cksum(const uint8_t *ip_hdr, uint32_t hdr_len)
{
	uint32_t sum = 0, i;

	for (i = 0; i + 1 < hdr_len; i += 2) {
		if (i != 10)
			sum += roce_get_be16(ip_hdr + i);
	}
	while (sum >> 16)
		sum = (sum & 0xFFFF) + (sum >> 16);
	return (uint16_t)~sum;
}
