/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Fuzz roce_parse() and the ICRC routines: the input is one frame. Checks that nothing is read
 * outside the input (ASan), that a well-formed RoCE parse has consistent offsets, that the
 * partial and multi-segment mbuf parsers agree with the flat one, and that an ICRC written by
 * roce_icrc_update() verifies.
 */
#include "lib/proto/roce_mbuf.h"
#include "fuzz_common.h"

static void
check_pkt(const struct roce_pkt *p, size_t size)
{
	FUZZ_CHECK(p->cls < ROCE_CLASS_MAX);
	FUZZ_CHECK(p->reason < ROCE_REASON_MAX);
	FUZZ_CHECK(p->n_vlans <= ROCE_MAX_VLANS);
	FUZZ_CHECK(roce_class_name(p->cls) != NULL && roce_reason_name(p->reason) != NULL);
	if (p->cls == ROCE_CLASS_INVALID)
		FUZZ_CHECK(p->reason != ROCE_REASON_OK);
	if ((p->cls == ROCE_CLASS_ROCEV2 || p->cls == ROCE_CLASS_ROCEV1) &&
			p->reason == ROCE_REASON_OK) {
		FUZZ_CHECK(p->l3_off < p->l4_off && p->l4_off <= p->bth_off);
		FUZZ_CHECK((uint32_t)p->bth_off + ROCE_BTH_LEN + p->ext_len == p->payload_off);
		FUZZ_CHECK((uint32_t)p->payload_off + p->payload_len + p->padcnt == p->icrc_off);
		FUZZ_CHECK((size_t)p->icrc_off + ROCE_ICRC_LEN <= size);
		FUZZ_CHECK(p->ext_len == roce_opcode_ext_len(p->opcode));
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct roce_pkt p, q;
	uint32_t len = size > 65535 ? 65535 : (uint32_t)size;
	uint8_t *copy;

	roce_parse(data, len, ROCE_UDP_PORT, &p);
	check_pkt(&p, len);
	/* any port may be the RoCE port */
	if (len >= 2)
		roce_parse(data, len, (uint16_t)(data[0] << 8 | data[len - 1]), &q);
	/* only part of the frame at hand: never more found than in the whole */
	roce_parse_partial(data, len / 2, len, ROCE_UDP_PORT, &q);
	check_pkt(&q, len);

	if ((p.cls == ROCE_CLASS_ROCEV2 || p.cls == ROCE_CLASS_ROCEV1) &&
			p.reason == ROCE_REASON_OK) {
		uint32_t icrc = roce_icrc_compute(data, len, &p);
		int ok = roce_icrc_verify(data, len, &p);

		FUZZ_CHECK(ok == (icrc == roce_get_le32(data + p.icrc_off)));
		copy = malloc(len);
		FUZZ_CHECK(copy != NULL);
		memcpy(copy, data, len);
		roce_icrc_update(copy, len, &p);
		FUZZ_CHECK(roce_icrc_verify(copy, len, &p));
		free(copy);
	}

	/* the same frame as a chain of three mbufs */
	if (len > 0) {
		static struct rte_mbuf m[3];
		uint32_t a = data[0] % (len + 1), b;
		uint8_t *seg[3];
		unsigned int i;

		b = a + (len > a ? data[len - 1] % (len - a + 1) : 0);
		memset(m, 0, sizeof(m));
		seg[0] = malloc(a + 1);
		seg[1] = malloc(b - a + 1);
		seg[2] = malloc(len - b + 1);
		FUZZ_CHECK(seg[0] != NULL && seg[1] != NULL && seg[2] != NULL);
		memcpy(seg[0], data, a);
		memcpy(seg[1], data + a, b - a);
		memcpy(seg[2], data + b, len - b);
		for (i = 0; i < 3; i++) {
			m[i].buf_addr = seg[i];
			m[i].next = i < 2 ? &m[i + 1] : NULL;
		}
		m[0].data_len = (uint16_t)a;
		m[1].data_len = (uint16_t)(b - a);
		m[2].data_len = (uint16_t)(len - b);
		m[0].pkt_len = len;
		m[0].nb_segs = 3;
		roce_parse_mbuf(&m[0], ROCE_UDP_PORT, &q);
		FUZZ_CHECK(memcmp(&p, &q, sizeof(p)) == 0);
		FUZZ_CHECK(roce_icrc_verify_mbuf(&m[0], &q) == roce_icrc_verify(data, len, &p));
		roce_icrc_update_mbuf(&m[0], &q);
		if ((p.cls == ROCE_CLASS_ROCEV2 || p.cls == ROCE_CLASS_ROCEV1) &&
				p.reason == ROCE_REASON_OK)
			FUZZ_CHECK(roce_icrc_verify_mbuf(&m[0], &q));
		for (i = 0; i < 3; i++)
			free(seg[i]);
	}
	return 0;
}
