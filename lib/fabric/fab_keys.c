/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The key tables of the pipeline's "fabric" section (lib/base/emu_keys.h): fab_cfg.c reads
 * every key through them and `rocemu schema` writes them out. A link takes its own keys and
 * every key of a tm.ports[] entry but "port": its table is put together once, at start.
 */
#include <string.h>

#include <rte_common.h>

#include "lib/fabric/fab.h"
#include "lib/tm/emu_tm_keys.h"

static const char *const fab_route_vals[] = { "ecmp", "round_robin", "random", "adaptive",
					      "flowlet", "static", NULL };

static const struct emu_key fab_switch_entries[] = {
	{ .name = "name", .type = EMU_KEY_STR, .required = true,
	  .schema = "{\"maxLength\": 39}",
	  .desc = "the switch's name, unique among ports, switches and links" },
	EMU_K_ARR("ports", EMU_KEY_STR, NULL, "{\"minItems\": 1, \"uniqueItems\": true}",
		  "real ports attached to this switch (a leaf); none for a spine"),
	EMU_K_ENUM("route", "ecmp", fab_route_vals,
		   "how the switch picks among equal-cost next hops: ecmp (hash), round_robin, "
		   "random, adaptive (least queued), flowlet, static (the first)"),
	/* bit_offset below the function's width (fab_hash_width()): 32 bits for toeplitz and
	 * murmur3, 16 for the others and the default, crc16_ccitt */
	EMU_K_ANY("hash", "{\"type\": \"object\", \"properties\": {\"function\": {\"enum\": "
		  "[\"crc16_ccitt\", \"crc32_lo\", \"crc32_hi\", \"xor\", \"toeplitz\", "
		  "\"murmur3\"]}, \"fields\": {\"type\": \"array\", \"items\": {\"enum\": "
		  "[\"src_ip\", \"dst_ip\", \"src_port\", \"dst_port\", \"dest_qp\", "
		  "\"protocol\"]}}, \"seed\": {\"type\": \"integer\", \"minimum\": 0, "
		  "\"maximum\": 4294967295}, \"bit_offset\": {\"type\": \"integer\", "
		  "\"minimum\": 0, \"maximum\": 31}, \"resilient_buckets\": {\"type\": "
		  "\"integer\", \"minimum\": 1, \"maximum\": 4096}}, "
		  "\"additionalProperties\": false, "
		  "\"if\": {\"required\": [\"function\"], \"properties\": {\"function\": "
		  "{\"enum\": [\"toeplitz\", \"murmur3\"]}}}, \"else\": {\"properties\": "
		  "{\"bit_offset\": {\"maximum\": 15}}}}",
		  "ECMP hash (only with route ecmp): function, fields, seed, bit_offset, "
		  "resilient_buckets (docs/ecmp-hash.md); default CRC16-CCITT of the 5-tuple, "
		  "seed 0, hash mod the next hops up"),
	EMU_K_NUM("flowlet_us", 10.0, 0.0, true, 1e6, "flowlet gap (us), route flowlet"),
	{ .name = "spray_match", .type = EMU_KEY_OBJ, .sub = &emu_match_table,
	  .schema = "{\"not\": {\"required\": [\"iteration\"]}}",
	  .desc = "spray only the packets this match selects (the stages' match keys, no "
		  "iteration); the rest are ECMP-hashed (CRC16-CCITT of the 5-tuple, seed 0); "
		  "with a spraying route only" },
};
static const struct emu_key_rule fab_switch_rules[] = {
	{ "route", EMU_KEY_LIST("round_robin", "random", "adaptive", "flowlet", "static"), NULL,
	  EMU_KEY_LIST("hash") },
	{ "route", EMU_KEY_LIST("ecmp", "static"), NULL, EMU_KEY_LIST("spray_match") },
	{ "route", EMU_KEY_LIST("ecmp", "round_robin", "random", "adaptive", "static"), NULL,
	  EMU_KEY_LIST("flowlet_us") },
};
const struct emu_key_table fab_switch_table = {
	.title = "fabric.switches[]", .desc = "a switch of the fabric",
	.keys = fab_switch_entries, .n_keys = RTE_DIM(fab_switch_entries),
	.rules = fab_switch_rules, .n_rules = RTE_DIM(fab_switch_rules),
};

static const struct emu_key fab_link_own[] = {
	EMU_K_STR_REQ("from", "the switch the link leaves"),
	EMU_K_STR_REQ("to", "the switch it reaches"),
	{ .name = "name", .type = EMU_KEY_STR, .schema = "{\"maxLength\": 39}",
	  .desc = "its name (one one-way link only); default FROM-TO[.K]" },
	EMU_K_BOOL("both_ways", 1, "also the link back, with the same settings"),
	EMU_K_INT("count", 1, 1, FAB_MAX_NEXT, "parallel links"),
	EMU_K_NUM("loss", 0.0, 0.0, false, 1.0, "probability a packet is lost on the link"),
};

#define FAB_LINK_MAX_KEYS 32
static struct emu_key fab_link_entries[FAB_LINK_MAX_KEYS];
struct emu_key_table fab_link_table = {
	.title = "fabric.links[]",
	.desc = "links between switches, each a TM port: its own keys and those of tm.ports[]",
	.keys = fab_link_entries,
};

__attribute__((constructor)) static void
fab_link_table_init(void)
{
	unsigned int n = 0, i;

	for (i = 0; i < RTE_DIM(fab_link_own); i++)
		fab_link_entries[n++] = fab_link_own[i];
	for (i = 0; i < emu_tm_port_table.n_keys && n < FAB_LINK_MAX_KEYS; i++)
		if (strcmp(emu_tm_port_table.keys[i].name, "port") != 0)
			fab_link_entries[n++] = emu_tm_port_table.keys[i];
	fab_link_table.n_keys = n;
}

static const struct emu_key fab_entries[] = {
	EMU_K_ARR_REQ("switches", EMU_KEY_OBJ, &fab_switch_table,
		      "{\"minItems\": 2, \"maxItems\": " EMU_KEYS_STR(FAB_MAX_SWITCHES) "}",
		      "the fabric's switches, 2-32"),
	EMU_K_ARR_REQ("links", EMU_KEY_OBJ, &fab_link_table, "{\"minItems\": 1}",
		      "the links between them (at most 48 in all)"),
};
const struct emu_key_table fab_table =
	EMU_KEY_TABLE("fabric", "an emulated fabric between the ports", fab_entries);
