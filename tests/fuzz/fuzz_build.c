/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Fuzz the builders: the input fills a struct roce_hdr_params (and a payload length); whatever
 * roce_build() accepts must parse back with a valid ICRC and the same header fields, and
 * nothing may be written past cap.
 */
#include "lib/proto/roce_proto.h"
#include "fuzz_common.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct roce_hdr_params hp;
	struct roce_pkt p;
	uint32_t plen, cap;
	uint8_t *buf;
	int len;

	if (size < sizeof(hp) + 4)
		return 0;
	memcpy(&hp, data, sizeof(hp));
	plen = (uint32_t)(data[sizeof(hp)] << 8 | data[sizeof(hp) + 1]) % 9300;
	cap = (uint32_t)(data[sizeof(hp) + 2] << 8 | data[sizeof(hp) + 3]) % 9500;
	hp.udp_dport = ROCE_UDP_PORT;
	buf = malloc(cap ? cap : 1);	/* exact size: ASan sees any overrun */
	FUZZ_CHECK(buf != NULL);
	len = roce_build(buf, cap, &hp, data + sizeof(hp) + 4 < data + size ?
		data + sizeof(hp) + 4 : NULL, plen <= size - sizeof(hp) - 4 ? plen : 0);
	if (len >= 0) {
		FUZZ_CHECK((uint32_t)len <= cap && len >= ROCE_ETH_MIN_FRAME);
		FUZZ_CHECK(roce_parse(buf, (uint32_t)len, ROCE_UDP_PORT, &p) == ROCE_CLASS_ROCEV2);
		FUZZ_CHECK(p.reason == ROCE_REASON_OK);
		FUZZ_CHECK(roce_icrc_verify(buf, (uint32_t)len, &p));
		FUZZ_CHECK(p.opcode == hp.opcode);
		FUZZ_CHECK(p.dest_qp == (hp.dest_qp & 0xFFFFFF));
		FUZZ_CHECK(p.psn == (hp.psn & 0xFFFFFF));
		FUZZ_CHECK(p.pkey == hp.pkey);
		FUZZ_CHECK(p.udp_sport == hp.udp_sport);
		FUZZ_CHECK(p.ip_version == hp.ip_version);
		FUZZ_CHECK(p.dscp == (hp.dscp & 63) && p.ecn == (hp.ecn & 3));
		if (hp.udp_cksum)
			FUZZ_CHECK(roce_get_be16(buf + p.l4_off + 6) == roce_udp_cksum(buf, &p));
	} else {
		FUZZ_CHECK(len == -ENOSPC || len == -EINVAL);
	}
	free(buf);
	return 0;
}
