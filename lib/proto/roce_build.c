/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <string.h>

#include "roce_proto.h"
#include "roce_crc.h"
#include "roce_internal.h"

static const uint8_t roce_macctl_da[6] = { 0x01, 0x80, 0xC2, 0x00, 0x00, 0x01 };

struct roce_hdr_params
roce_hdr_params_default(void)
{
	struct roce_hdr_params hp;

	memset(&hp, 0, sizeof(hp));
	hp.ip_version = 4;
	hp.dscp = 26;
	hp.ecn = 2;
	hp.ttl = 64;
	hp.ip_df = 1;
	hp.udp_dport = ROCE_UDP_PORT;
	hp.pkey = 0xFFFF;
	hp.opcode = ROCE_TRANSPORT_RC | ROCE_OP_SEND_ONLY;
	hp.aeth_syndrome = ROCE_AETH_ACK | ROCE_AETH_CREDIT_UNLIMITED;
	return hp;
}

struct roce_cnp_params
roce_cnp_params_default(void)
{
	struct roce_cnp_params cp;

	memset(&cp, 0, sizeof(cp));
	cp.ip_version = 4;
	cp.dscp = 48;
	cp.ecn = 2;
	cp.ttl = 64;
	cp.pcp = 6;
	cp.pkey = 0xFFFF;
	return cp;
}

struct roce_cnp_params
roce_cnp_params_for(const uint8_t *frame, const struct roce_pkt *data, uint32_t sender_qpn)
{
	struct roce_cnp_params cp = roce_cnp_params_default();

	memcpy(cp.dst_mac, frame + 6, 6);
	memcpy(cp.src_mac, frame, 6);
	cp.has_vlan = data->n_vlans > 0;
	cp.vlan_id = data->vlan_id;
	cp.ip_version = data->ip_version;
	memcpy(cp.src_ip, data->dst_ip, 16);
	memcpy(cp.dst_ip, data->src_ip, 16);
	cp.pkey = data->pkey;
	cp.dest_qp = sender_qpn & ROCE_QPN_MASK;
	return cp;
}

/* Write Ethernet (+tag), IP and UDP headers for l4_len bytes of UDP payload; return the UDP end. */
static uint32_t
build_l2_l4(uint8_t *buf, const struct roce_hdr_params *hp, uint32_t l4_len)
{
	uint32_t off = 0, udp_len = ROCE_UDP_HDR_LEN + l4_len;
	uint8_t tc = (uint8_t)((hp->dscp & 0x3F) << 2 | (hp->ecn & 3));
	uint8_t *ip, *udp;

	memcpy(buf, hp->dst_mac, 6);
	memcpy(buf + 6, hp->src_mac, 6);
	off = 12;
	if (hp->has_vlan) {
		roce_put_be16(buf + off, ROCE_ETHERTYPE_VLAN);
		roce_put_be16(buf + off + 2, (uint16_t)((hp->pcp & 7) << 13 | (hp->vlan_id & 0x0FFF)));
		off += 4;
	}
	roce_put_be16(buf + off, hp->ip_version == 6 ? ROCE_ETHERTYPE_IPV6 : ROCE_ETHERTYPE_IPV4);
	off += 2;
	ip = buf + off;
	if (hp->ip_version == 6) {
		roce_put_be32(ip, 6u << 28 | (uint32_t)tc << 20 | (hp->flow_label & 0xFFFFF));
		roce_put_be16(ip + 4, (uint16_t)udp_len);
		ip[6] = ROCE_IPPROTO_UDP;
		ip[7] = hp->ttl;
		memcpy(ip + 8, hp->src_ip, 16);
		memcpy(ip + 24, hp->dst_ip, 16);
		off += ROCE_IPV6_HDR_LEN;
	} else {
		ip[0] = 0x45;
		ip[1] = tc;
		roce_put_be16(ip + 2, (uint16_t)(ROCE_IPV4_HDR_LEN + udp_len));
		roce_put_be16(ip + 4, hp->ip_id);
		roce_put_be16(ip + 6, hp->ip_df ? ROCE_IPV4_DF : 0);
		ip[8] = hp->ttl;
		ip[9] = ROCE_IPPROTO_UDP;
		memcpy(ip + 12, hp->src_ip, 4);
		memcpy(ip + 16, hp->dst_ip, 4);
		roce_put_be16(ip + 10, roce_ipv4_cksum(ip, ROCE_IPV4_HDR_LEN));
		off += ROCE_IPV4_HDR_LEN;
	}
	udp = buf + off;
	roce_put_be16(udp, hp->udp_sport);
	roce_put_be16(udp + 2, hp->udp_dport);
	roce_put_be16(udp + 4, (uint16_t)udp_len);
	roce_put_be16(udp + 6, 0);	/* RoCE NICs send no UDP checksum */
	return off + udp_len;
}

/* Write the extension headers of ext at e, in wire order. */
static void
build_ext(uint8_t *e, uint16_t ext, const struct roce_hdr_params *hp)
{
	if (ext & ROCE_EXT_RDETH) {
		roce_put_be32(e, hp->rdeth_eecnxt & 0xFFFFFF);
		e += ROCE_RDETH_LEN;
	}
	if (ext & ROCE_EXT_DETH) {
		roce_put_be32(e, hp->deth_qkey);
		roce_put_be32(e + 4, hp->deth_src_qp & ROCE_QPN_MASK);
		e += ROCE_DETH_LEN;
	}
	if (ext & ROCE_EXT_RETH) {
		roce_put_be64(e, hp->reth_va);
		roce_put_be32(e + 8, hp->reth_rkey);
		roce_put_be32(e + 12, hp->reth_len);
		e += ROCE_RETH_LEN;
	}
	if (ext & ROCE_EXT_ATOMICETH) {
		roce_put_be64(e, hp->atomic_va);
		roce_put_be32(e + 8, hp->atomic_rkey);
		roce_put_be64(e + 12, hp->atomic_swap_add);
		roce_put_be64(e + 20, hp->atomic_compare);
		e += ROCE_ATOMICETH_LEN;
	}
	if (ext & ROCE_EXT_AETH) {
		e[0] = hp->aeth_syndrome;
		roce_put_be24(e + 1, hp->msn);
		e += ROCE_AETH_LEN;
	}
	if (ext & ROCE_EXT_ATOMICACKETH) {
		roce_put_be64(e, hp->atomic_ack_orig);
		e += ROCE_ATOMICACKETH_LEN;
	}
	if (ext & ROCE_EXT_IMMDT) {
		roce_put_be32(e, hp->imm);
		e += ROCE_IMMDT_LEN;
	}
	if (ext & ROCE_EXT_IETH) {
		roce_put_be32(e, hp->ieth_rkey);
		e += ROCE_IETH_LEN;
	}
	if (ext & ROCE_EXT_CNP)
		memset(e, 0, ROCE_CNP_RSVD_LEN);
}

int
roce_build(uint8_t *buf, size_t cap, const struct roce_hdr_params *hp, const uint8_t *payload,
	uint32_t payload_len)
{
	uint16_t ext = roce_opcode_ext[hp->opcode];
	uint32_t ext_len = roce_ext_len(ext);
	uint32_t pad = (4 - (payload_len & 3)) & 3;
	uint32_t l3_len = hp->ip_version == 6 ? ROCE_IPV6_HDR_LEN : ROCE_IPV4_HDR_LEN;
	uint32_t l2_len = ROCE_ETH_HDR_LEN + (hp->has_vlan ? ROCE_VLAN_HDR_LEN : 0);
	uint64_t l4_len, frame_len;
	uint32_t end, bth_off, len;
	struct roce_pkt p;
	uint8_t *b;

	if (hp->ip_version != 4 && hp->ip_version != 6)
		return -EINVAL;
	l4_len = (uint64_t)ROCE_BTH_LEN + ext_len + payload_len + pad + ROCE_ICRC_LEN;
	/* IP and UDP lengths are 16-bit, and so are the parser's offsets. */
	if (l4_len + ROCE_UDP_HDR_LEN + l3_len + l2_len > UINT16_MAX)
		return -EINVAL;
	frame_len = l2_len + l3_len + ROCE_UDP_HDR_LEN + l4_len;
	len = frame_len < ROCE_ETH_MIN_FRAME ? ROCE_ETH_MIN_FRAME : (uint32_t)frame_len;
	if (cap < len)
		return -ENOSPC;

	end = build_l2_l4(buf, hp, (uint32_t)l4_len);
	bth_off = end - (uint32_t)l4_len;
	b = buf + bth_off;
	b[0] = hp->opcode;
	b[1] = (uint8_t)((hp->se ? ROCE_BTH_SE : 0) | (hp->migreq ? ROCE_BTH_MIGREQ : 0) |
		pad << ROCE_BTH_PADCNT_SHIFT | (hp->tver & ROCE_BTH_TVER_MASK));
	roce_put_be16(b + 2, hp->pkey);
	b[4] = (uint8_t)((hp->fecn ? ROCE_BTH_FECN : 0) | (hp->becn ? ROCE_BTH_BECN : 0) |
		(hp->bth_rsvd & 0x3F));
	roce_put_be24(b + 5, hp->dest_qp);
	b[8] = hp->ackreq ? ROCE_BTH_ACKREQ : 0;
	roce_put_be24(b + 9, hp->psn);
	build_ext(b + ROCE_BTH_LEN, ext, hp);
	b += ROCE_BTH_LEN + ext_len;
	if (payload != NULL)
		memcpy(b, payload, payload_len);
	else
		memset(b, 0, payload_len);
	memset(b + payload_len, 0, pad);
	memset(buf + end, 0, len - end);	/* Ethernet padding */

	/* The ICRC routine needs the offsets the parser finds; parsing our own frame is cheap. */
	if (roce_parse(buf, len, hp->udp_dport, &p) != ROCE_CLASS_ROCEV2)
		return -EINVAL;
	roce_icrc_update(buf, len, &p);
	if (hp->udp_cksum)	/* last: it covers the ICRC */
		roce_put_be16(buf + p.l4_off + 6, roce_udp_cksum(buf, &p));
	return (int)len;
}

int
roce_build_data(uint8_t *buf, size_t cap, const struct roce_hdr_params *hp,
	const uint8_t *payload, uint32_t payload_len)
{
	uint8_t tr = hp->opcode & ROCE_TRANSPORT_MASK, op = hp->opcode & ROCE_OP_MASK;
	int ok;

	switch (tr) {
	case ROCE_TRANSPORT_RC:
		ok = op <= ROCE_OP_RDMA_WRITE_ONLY_WITH_IMMEDIATE ||
			op == ROCE_OP_SEND_LAST_WITH_INVALIDATE ||
			op == ROCE_OP_SEND_ONLY_WITH_INVALIDATE;
		break;
	case ROCE_TRANSPORT_UC:
	case ROCE_TRANSPORT_RD:
		ok = op <= ROCE_OP_RDMA_WRITE_ONLY_WITH_IMMEDIATE;
		break;
	case ROCE_TRANSPORT_UD:
		ok = op == ROCE_OP_SEND_ONLY || op == ROCE_OP_SEND_ONLY_WITH_IMMEDIATE;
		break;
	default:
		ok = 0;
	}
	if (!ok)
		return -EINVAL;
	return roce_build(buf, cap, hp, payload, payload_len);
}

int
roce_build_ack(uint8_t *buf, size_t cap, const struct roce_hdr_params *hp, uint8_t syndrome,
	uint32_t msn)
{
	struct roce_hdr_params ack = *hp;

	ack.opcode = ROCE_OPCODE_RC_ACK;
	ack.aeth_syndrome = syndrome;
	ack.msn = msn;
	return roce_build(buf, cap, &ack, NULL, 0);
}

int
roce_build_cnp(uint8_t *buf, size_t cap, const struct roce_cnp_params *cp)
{
	struct roce_hdr_params hp = roce_hdr_params_default();

	memcpy(hp.dst_mac, cp->dst_mac, 6);
	memcpy(hp.src_mac, cp->src_mac, 6);
	hp.has_vlan = cp->has_vlan;
	hp.pcp = cp->pcp;
	hp.vlan_id = cp->vlan_id;
	hp.ip_version = cp->ip_version;
	memcpy(hp.src_ip, cp->src_ip, 16);
	memcpy(hp.dst_ip, cp->dst_ip, 16);
	hp.dscp = cp->dscp;
	hp.ecn = cp->ecn;
	hp.ttl = cp->ttl;
	hp.ip_id = cp->ip_id;
	hp.udp_sport = cp->udp_sport;
	hp.opcode = ROCE_OPCODE_CNP;
	hp.becn = 1;
	hp.pkey = cp->pkey;
	hp.dest_qp = cp->dest_qp;
	return roce_build(buf, cap, &hp, NULL, 0);
}

static int
build_macctl(uint8_t *buf, size_t cap, const uint8_t src_mac[6], uint16_t opcode)
{
	if (cap < ROCE_ETH_MIN_FRAME)
		return -ENOSPC;
	memset(buf, 0, ROCE_ETH_MIN_FRAME);
	memcpy(buf, roce_macctl_da, 6);
	memcpy(buf + 6, src_mac, 6);
	roce_put_be16(buf + 12, ROCE_ETHERTYPE_MACCTL);
	roce_put_be16(buf + 14, opcode);
	return ROCE_ETH_MIN_FRAME;
}

int
roce_build_pfc(uint8_t *buf, size_t cap, const uint8_t src_mac[6], uint16_t enable_vector,
	const uint16_t quanta[8])
{
	int len = build_macctl(buf, cap, src_mac, ROCE_MACCTL_OP_PFC);
	unsigned int i;

	if (len < 0)
		return len;
	roce_put_be16(buf + 16, enable_vector);
	for (i = 0; i < 8; i++)
		roce_put_be16(buf + 18 + 2 * i, quanta[i]);
	return len;
}

int
roce_build_pause(uint8_t *buf, size_t cap, const uint8_t src_mac[6], uint16_t quanta)
{
	int len = build_macctl(buf, cap, src_mac, ROCE_MACCTL_OP_PAUSE);

	if (len < 0)
		return len;
	roce_put_be16(buf + 16, quanta);
	return len;
}

/*
 * Linux include/rdma/ib_verbs.h (v5.8 and later), which reads:
 *   rdma_calc_flow_label(lqpn, rqpn): fl = (u64)lqpn * rqpn; fl ^= fl >> 20; fl ^= fl >> 40;
 *                                      return fl & IB_GRH_FLOWLABEL_MASK (0xFFFFF);
 *   rdma_flow_label_to_udp_sport(fl):  lo = fl & 0x03FFF; lo ^= (fl & 0xFC000) >> 14;
 *                                      return lo | IB_ROCE_UDP_ENCAP_VALID_PORT_MIN (0xC000);
 */
uint32_t
roce_flow_label_from_qpns(uint32_t lqpn, uint32_t rqpn)
{
	uint64_t v = (uint64_t)lqpn * rqpn;

	v ^= v >> 20;
	v ^= v >> 40;
	return (uint32_t)(v & 0xFFFFF);
}

uint16_t
roce_udp_sport_from_flow_label(uint32_t flow_label)
{
	uint32_t lo = flow_label & 0x3FFF;

	lo ^= (flow_label & 0xFC000) >> 14;
	return (uint16_t)(lo | 0xC000);
}

uint16_t
roce_udp_sport_from_qpns(uint32_t lqpn, uint32_t rqpn)
{
	return roce_udp_sport_from_flow_label(roce_flow_label_from_qpns(lqpn, rqpn));
}
