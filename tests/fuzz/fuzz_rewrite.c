/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Fuzz the in-place rewriters on any frame the parser accepts: ECN/DSCP/TTL/FECN/BECN keep the
 * ICRC as it was (valid or not) and keep a correct IPv4 checksum correct; sport and address
 * rewrites leave a valid ICRC; corruption leaves an invalid one; the frame reparses the same.
 * The last 8 input bytes choose the new values.
 */
#include "lib/proto/roce_proto.h"
#include "fuzz_common.h"

static int
ipv4_cksum_ok(const uint8_t *f, const struct roce_pkt *p)
{
	const uint8_t *ip = f + p->l3_off;

	return roce_get_be16(ip + 10) == roce_ipv4_cksum(ip, (uint32_t)(ip[0] & 0x0F) * 4);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t v[8] = { 0 }, *f;
	struct roce_pkt p, q;
	uint32_t len;
	int roce, icrc_ok, ck_ok = 0;

	if (size < 8 || size > 65535 + 8)
		return 0;
	memcpy(v, data + size - 8, 8);
	len = (uint32_t)(size - 8);
	f = malloc(len ? len : 1);
	FUZZ_CHECK(f != NULL);
	memcpy(f, data, len);
	roce_parse(f, len, ROCE_UDP_PORT, &p);
	roce = (p.cls == ROCE_CLASS_ROCEV2 || p.cls == ROCE_CLASS_ROCEV1) &&
		p.reason == ROCE_REASON_OK;
	icrc_ok = roce_icrc_verify(f, len, &p);
	if (p.ip_version == 4)
		ck_ok = ipv4_cksum_ok(f, &p);

	if (p.ip_version != 0) {
		FUZZ_CHECK(roce_set_ecn(f, &p, v[0] & 3) == 0);
		FUZZ_CHECK(roce_set_dscp(f, &p, v[1] & 63) == 0);
		FUZZ_CHECK(roce_set_ttl(f, &p, v[2]) == 0);
		FUZZ_CHECK(roce_set_fecn_becn(f, &p, v[3] & 1, v[3] & 2) == (roce ? 0 : -EINVAL));
		FUZZ_CHECK(roce_icrc_verify(f, len, &p) == icrc_ok);
		if (p.ip_version == 4 && ck_ok)
			FUZZ_CHECK(ipv4_cksum_ok(f, &p));
		roce_parse(f, len, ROCE_UDP_PORT, &q);
		FUZZ_CHECK(memcmp(&p, &q, sizeof(p)) == 0);
	} else {
		FUZZ_CHECK(roce_set_ecn(f, &p, 1) == -EINVAL);
		FUZZ_CHECK(roce_set_ttl(f, &p, 1) == -EINVAL);
	}
	if (p.cls == ROCE_CLASS_ROCEV2 && p.reason == ROCE_REASON_OK) {
		uint8_t addr[16];

		memcpy(addr, v, 8);
		memcpy(addr + 8, v, 8);
		FUZZ_CHECK(roce_set_udp_sport(f, len, &p, (uint16_t)(v[4] << 8 | v[5])) == 0);
		FUZZ_CHECK(roce_icrc_verify(f, len, &p));
		FUZZ_CHECK(roce_set_ip_addrs(f, len, &p, (v[6] & 1) ? addr : NULL,
			(v[6] & 2) ? addr : NULL) == 0);
		FUZZ_CHECK(roce_icrc_verify(f, len, &p));
		if (p.ip_version == 4)
			FUZZ_CHECK(ipv4_cksum_ok(f, &p));
		roce_parse(f, len, ROCE_UDP_PORT, &q);
		FUZZ_CHECK(q.cls == ROCE_CLASS_ROCEV2 && q.reason == ROCE_REASON_OK);
		FUZZ_CHECK(q.udp_sport == (uint16_t)(v[4] << 8 | v[5]));
		FUZZ_CHECK(roce_corrupt_icrc(f, len, &p) == 0);
		FUZZ_CHECK(!roce_icrc_verify(f, len, &p));
	} else {
		FUZZ_CHECK(roce_set_udp_sport(f, len, &p, 1) == -EINVAL);
		FUZZ_CHECK(roce_set_ip_addrs(f, len, &p, v, v) == -EINVAL);
	}
	free(f);
	return 0;
}
