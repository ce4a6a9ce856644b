/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <string.h>

#include "roce_proto.h"
#include "roce_internal.h"

static inline int
pkt_is_roce_ok(const struct roce_pkt *p)
{
	return (p->cls == ROCE_CLASS_ROCEV2 || p->cls == ROCE_CLASS_ROCEV1) &&
		p->reason == ROCE_REASON_OK;
}

/* Replace the 16-bit word at w (inside an IPv4 header at ip) and fix the header checksum. */
static inline void
ipv4_set_word(uint8_t *ip, uint8_t *w, uint16_t new_word)
{
	uint16_t old_word = roce_get_be16(w);

	roce_put_be16(w, new_word);
	roce_put_be16(ip + 10, roce_cksum_adjust(roce_get_be16(ip + 10), old_word, new_word));
}

/* Set the traffic class (DSCP << 2 | ECN) of the IP header or GRH. */
static int
set_tc(uint8_t *frame, struct roce_pkt *p, uint8_t tc)
{
	uint8_t *ip = frame + p->l3_off;

	if (p->ip_version == 4) {
		ipv4_set_word(ip, ip, (uint16_t)(ip[0] << 8 | tc));
	} else if (p->ip_version == 6) {
		ip[0] = (uint8_t)((ip[0] & 0xF0) | tc >> 4);
		ip[1] = (uint8_t)((ip[1] & 0x0F) | (tc & 0x0F) << 4);
	} else {
		return -EINVAL;
	}
	p->dscp = tc >> 2;
	p->ecn = tc & 3;
	return 0;
}

int
roce_set_ecn(uint8_t *frame, struct roce_pkt *p, uint8_t ecn)
{
	if (ecn > 3)
		return -EINVAL;
	return set_tc(frame, p, (uint8_t)(p->dscp << 2 | ecn));
}

int
roce_set_dscp(uint8_t *frame, struct roce_pkt *p, uint8_t dscp)
{
	if (dscp > 63)
		return -EINVAL;
	return set_tc(frame, p, (uint8_t)(dscp << 2 | p->ecn));
}

int
roce_set_ttl(uint8_t *frame, struct roce_pkt *p, uint8_t ttl)
{
	uint8_t *ip = frame + p->l3_off;

	if (p->ip_version == 4)
		ipv4_set_word(ip, ip + 8, (uint16_t)(ttl << 8 | ip[9]));
	else if (p->ip_version == 6)
		ip[7] = ttl;
	else
		return -EINVAL;
	p->ttl = ttl;
	return 0;
}

int
roce_set_fecn_becn(uint8_t *frame, struct roce_pkt *p, uint8_t fecn, uint8_t becn)
{
	uint8_t *b;

	if (!pkt_is_roce_ok(p))
		return -EINVAL;
	b = frame + p->bth_off + 4;
	*b = (uint8_t)((*b & ~(ROCE_BTH_FECN | ROCE_BTH_BECN)) | (fecn ? ROCE_BTH_FECN : 0) |
		(becn ? ROCE_BTH_BECN : 0));
	p->fecn = fecn != 0;
	p->becn = becn != 0;
	return 0;
}

/* Fold a change of n 16-bit words from old to new into a nonzero UDP checksum. */
static void
udp_cksum_adjust(uint8_t *udp, const uint8_t *old_words, const uint8_t *new_words, unsigned int n)
{
	uint16_t ck = roce_get_be16(udp + 6);
	unsigned int i;

	if (ck == 0)		/* no checksum (IPv4 RoCE) */
		return;
	for (i = 0; i < n; i++)
		ck = roce_cksum_adjust(ck, roce_get_be16(old_words + 2 * i),
			roce_get_be16(new_words + 2 * i));
	roce_put_be16(udp + 6, ck == 0 ? 0xFFFF : ck);
}

/* Recompute the ICRC and fold its change into a nonzero UDP checksum (which covers it). */
static void
icrc_refresh(uint8_t *frame, uint32_t len, const struct roce_pkt *p)
{
	uint8_t old[ROCE_ICRC_LEN];

	memcpy(old, frame + p->icrc_off, ROCE_ICRC_LEN);
	roce_icrc_update(frame, len, p);
	/* icrc_off - l4_off is a multiple of 4: the ICRC is two aligned 16-bit words */
	udp_cksum_adjust(frame + p->l4_off, old, frame + p->icrc_off, 2);
}

int
roce_set_udp_sport(uint8_t *frame, uint32_t len, struct roce_pkt *p, uint16_t port)
{
	uint8_t *udp, new_port[2];

	if (p->cls != ROCE_CLASS_ROCEV2 || p->reason != ROCE_REASON_OK)
		return -EINVAL;
	udp = frame + p->l4_off;
	roce_put_be16(new_port, port);
	udp_cksum_adjust(udp, udp, new_port, 1);
	memcpy(udp, new_port, 2);
	p->udp_sport = port;
	icrc_refresh(frame, len, p);
	return 0;
}

int
roce_patch_udp_sport(uint8_t *frame, uint32_t len, struct roce_pkt *p, uint16_t port)
{
	uint8_t *udp, old_port[2], new_port[2], old_icrc[ROCE_ICRC_LEN];

	if (p->cls != ROCE_CLASS_ROCEV2 || p->reason != ROCE_REASON_OK ||
			(uint32_t)p->icrc_off + ROCE_ICRC_LEN > len)
		return -EINVAL;
	udp = frame + p->l4_off;
	memcpy(old_port, udp, 2);
	roce_put_be16(new_port, port);
	udp_cksum_adjust(udp, old_port, new_port, 1);
	memcpy(udp, new_port, 2);
	p->udp_sport = port;
	memcpy(old_icrc, frame + p->icrc_off, ROCE_ICRC_LEN);
	roce_icrc_patch(frame, len, p, p->l4_off, old_port, new_port, 2);
	/* icrc_off - l4_off is a multiple of 4: the ICRC is two aligned 16-bit words */
	udp_cksum_adjust(udp, old_icrc, frame + p->icrc_off, 2);
	return 0;
}

int
roce_set_ip_addrs(uint8_t *frame, uint32_t len, struct roce_pkt *p, const uint8_t *src_ip,
	const uint8_t *dst_ip)
{
	uint32_t alen = p->ip_version == 4 ? 4 : 16;
	uint8_t *ip = frame + p->l3_off;
	uint8_t *src = ip + (p->ip_version == 4 ? 12 : 8);
	uint8_t *dst = src + alen;
	uint8_t *udp = frame + p->l4_off;

	if (p->cls != ROCE_CLASS_ROCEV2 || p->reason != ROCE_REASON_OK)
		return -EINVAL;
	if (src_ip != NULL) {
		udp_cksum_adjust(udp, src, src_ip, alen / 2);
		memcpy(src, src_ip, alen);
		memcpy(p->src_ip, src_ip, alen);
	}
	if (dst_ip != NULL) {
		udp_cksum_adjust(udp, dst, dst_ip, alen / 2);
		memcpy(dst, dst_ip, alen);
		memcpy(p->dst_ip, dst_ip, alen);
	}
	if (p->ip_version == 4)
		roce_put_be16(ip + 10, roce_ipv4_cksum(ip, p->l4_off - p->l3_off));
	icrc_refresh(frame, len, p);
	return 0;
}

int
roce_corrupt_icrc(uint8_t *frame, uint32_t len, const struct roce_pkt *p)
{
	uint8_t *c;

	if (!pkt_is_roce_ok(p) || (uint32_t)p->icrc_off + ROCE_ICRC_LEN > len)
		return -EINVAL;
	c = frame + p->icrc_off;
	c[0] ^= 0xFF;
	c[1] ^= 0xFF;
	c[2] ^= 0xFF;
	c[3] ^= 0xFF;
	return 0;
}
