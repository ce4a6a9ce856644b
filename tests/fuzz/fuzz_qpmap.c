/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Fuzz the QP pairing table with a sequence of frames, each prefixed by a 2-byte length and a
 * 1-byte time step: every frame is parsed, looked up and learned in a tiny table (so that
 * eviction and ageing run constantly); the table must not grow and lookups must be stable.
 */
#include "lib/proto/roce_proto.h"
#include "fuzz_common.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct roce_qpmap *map = roce_qpmap_create(16, 1000);
	uint32_t cap, qpn, qpn2;
	uint64_t now = 0;
	size_t off = 0;

	FUZZ_CHECK(map != NULL);
	cap = roce_qpmap_capacity(map);
	while (off + 3 <= size) {
		uint32_t len = (uint32_t)(data[off] << 8 | data[off + 1]);
		struct roce_pkt p;
		int rc;

		now += data[off + 2] * 37u;
		off += 3;
		if (len > size - off)
			len = (uint32_t)(size - off);
		roce_parse(data + off, len, ROCE_UDP_PORT, &p);
		rc = roce_qpmap_lookup_sender(map, &p, now, &qpn);
		FUZZ_CHECK(rc == 0 || rc == -ENOENT);
		if (rc == 0) {
			FUZZ_CHECK(roce_qpmap_lookup_sender(map, &p, now, &qpn2) == 0);
			FUZZ_CHECK(qpn == qpn2);
		}
		roce_qpmap_learn(map, &p, now);
		off += len;
	}
	FUZZ_CHECK(roce_qpmap_capacity(map) == cap);
	roce_qpmap_free(map);
	return 0;
}
