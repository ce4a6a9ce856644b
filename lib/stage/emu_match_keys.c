/* SPDX-License-Identifier: BSD-3-Clause */
/* A match object's keys: emu_match.c reads them through this table; rocemu schema writes it. */
#include <stdint.h>

#include "lib/stage/emu_match.h"

const char *const emu_match_keys[] = { "ports", "out_ports", "direction", "src_ip", "dst_ip",
				       "udp_sport", "opcode", "dest_qp", "psn", "ackreq",
				       "priority", "ecn", "iteration", "every_nth", "nth", "from_s",
				       "until_s", NULL };

#define PORTS_SCHEMA "{\"type\": \"array\", \"minItems\": 1, \"items\": {\"type\": \"string\"}}"
#define PREFIX_SCHEMA "{\"type\": \"string\"}"
static const struct emu_key emu_match_entries[] = {
	EMU_K_ANY("ports", PORTS_SCHEMA,
		  "ingress port names (the egress port's in the egress list)"),
	EMU_K_ANY("out_ports", PORTS_SCHEMA, "egress port names (after forward, or on egress)"),
	EMU_K_ANY("direction", "{\"type\": \"string\", \"pattern\": \"->\"}",
		  "\"IN->OUT\": two port names; not with ports or out_ports"),
	EMU_K_ANY("src_ip", PREFIX_SCHEMA, "source address or prefix (IPv4 or IPv6, a/len)"),
	EMU_K_ANY("dst_ip", PREFIX_SCHEMA, "destination address or prefix"),
	EMU_K_INT_DYN("udp_sport", 0, 65535, "UDP source port"),
	EMU_K_ANY("opcode", "{\"anyOf\": [{\"type\": \"integer\", \"minimum\": 0, "
		  "\"maximum\": 255}, {\"enum\": [\"data\", \"ack\", \"nak\", \"cnp\", "
		  "\"read\", \"send\", \"write\"]}]}",
		  "BTH opcode (0-255) or an opcode class name. Polymorphic (integer or string)"),
	EMU_K_INT_DYN("dest_qp", 0, ROCE_QPN_MASK, "BTH destination QP"),
	EMU_K_ANY("psn", "{\"anyOf\": [{\"type\": \"integer\", \"minimum\": 0, "
		  "\"maximum\": 16777215}, {\"type\": \"array\", \"minItems\": 2, "
		  "\"maxItems\": 2, \"items\": {\"type\": \"integer\", \"minimum\": 0, "
		  "\"maximum\": 16777215}}]}",
		  "a PSN, or [lo, hi] (inclusive). Polymorphic"),
	{ .name = "ackreq", .type = EMU_KEY_BOOL, .desc = "BTH AckReq bit" },
	EMU_K_INT_DYN("priority", 0, 7, "the packet's priority"),
	EMU_K_INT_DYN("ecn", 0, 3, "the IP ECN field"),
	EMU_K_INT_DYN("iteration", 1, 255, "collective iteration (from the iteration tracker)"),
	EMU_K_INT_DYN("every_nth", 1, INT64_MAX, "every n-th matching packet; not with nth"),
	EMU_K_INT_DYN("nth", 1, INT64_MAX, "only the n-th matching packet; not with every_nth"),
	EMU_K_NUM("from_s", 0, 0, false, 1e6, "from this time (s) of the run"),
	EMU_K_NUM("until_s", 1e6, 0, false, 1e6, "until this time (s), > from_s"),
};
const struct emu_key_table emu_match_table = {
	.title = "match", .desc = "a packet matches when it meets every key given",
	.keys = emu_match_entries,
	.n_keys = sizeof(emu_match_entries) / sizeof(emu_match_entries[0]),
	.names = emu_match_keys,
	.rules = (const struct emu_key_rule[]){
		{ "nth", NULL, NULL, EMU_KEY_LIST("every_nth") },
		{ "direction", NULL, NULL, EMU_KEY_LIST("ports", "out_ports") } },
	.n_rules = 2,
};
