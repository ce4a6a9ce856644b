/* SPDX-License-Identifier: BSD-3-Clause */
/* The impair stage's keys: read by impair.c through these entries, written by `rocemu schema`. */
#include <stdint.h>

#include "lib/stage/emu_match.h"
#include "lib/stage/emu_stage.h"
#include "lib/stages/impair_keys.h"

#define DIM(a) (sizeof(a) / sizeof((a)[0]))
#define PROB(n, d, ds) EMU_K_NUM(n, d, 0.0, false, 1.0, ds)
#define PROB_REQ(n, ds) EMU_K_NUM_REQ(n, 0.0, false, 1.0, ds)

const char *const impair_keys[] = { "events", "max_qps", "max_held_pkts", NULL };
const char *const impair_event_keys[] = { "name", "match", "action", "loss", "corrupt",
					  "rewrite", "delay_us", "enabled", NULL };

static const char *const bern_names[] = { "model", "p", NULL };
static const char *const ge_names[] = { "model", "p", "r", "1-h", "1-k", NULL };
static const char *const s4_names[] = { "model", "p13", "p31", "p32", "p23", "p14", NULL };
static const char *const bern_vals[] = { "bernoulli", NULL };
static const char *const ge_vals[] = { "gilbert", NULL };
static const char *const s4_vals[] = { "4state", NULL };

static const struct emu_key bern_entries[] = {
	EMU_K_ENUM("model", "bernoulli", bern_vals, "independent losses (the default model)"),
	PROB_REQ("p", "loss probability of each matching packet"),
};
const struct emu_key_table impair_bern_table = {
	.title = "loss: bernoulli", .keys = bern_entries, .n_keys = DIM(bern_entries),
	.names = bern_names,
};
static const struct emu_key ge_entries[] = {
	{ .name = "model", .type = EMU_KEY_STR, .required = true, .enum_vals = ge_vals,
	  .desc = "Gilbert-Elliott: a good and a bad state" },
	PROB_REQ("p", "good to bad transition probability"),
	EMU_K_NUM_DYN("r", 0.0, false, 1.0, "bad to good probability; default 1 - p"),
	PROB("1-h", 1.0, "loss probability in the bad state"),
	PROB("1-k", 0.0, "loss probability in the good state"),
};
const struct emu_key_table impair_ge_table = {
	.title = "loss: gilbert", .keys = ge_entries, .n_keys = DIM(ge_entries),
	.names = ge_names,
};
static const struct emu_key s4_entries[] = {
	{ .name = "model", .type = EMU_KEY_STR, .required = true, .enum_vals = s4_vals,
	  .desc = "4-state Markov model (netem's), p13 + p14 <= 1, p31 + p32 <= 1" },
	PROB_REQ("p13", "good reception to burst loss"),
	PROB("p31", 1.0, "burst loss to good reception"),
	PROB("p32", 0.0, "burst loss to bad reception"),
	PROB("p23", 0.0, "bad reception to burst loss"),
	PROB("p14", 0.0, "good reception to isolated loss"),
};
const struct emu_key_table impair_s4_table = {
	.title = "loss: 4state", .keys = s4_entries, .n_keys = DIM(s4_entries),
	.names = s4_names,
};
static const struct emu_key_table *const impair_loss_models[] = {
	&impair_bern_table, &impair_ge_table, &impair_s4_table, NULL
};

static const struct emu_key rewrite_entries[] = {
	EMU_K_INT_DYN("dscp", 0, 63, "set the DSCP"),
	EMU_K_INT_DYN("udp_sport", 0, 65535, "set the UDP source port (the ICRC follows)"),
};
const struct emu_key_table impair_rewrite_table = {
	.title = "rewrite", .desc = "exactly one of dscp, udp_sport",
	.keys = rewrite_entries, .n_keys = DIM(rewrite_entries),
};

static const char *const corrupt_vals[] = { "icrc", "payload", NULL };
static const struct emu_key event_entries[] = {
	{ .name = "name", .type = EMU_KEY_STR, .required = true,
	  .schema = "{\"pattern\": \"^[A-Za-z0-9_-]{1,31}$\"}",
	  .desc = "the event's name (unique): its counters and profiles use it" },
	EMU_K_OBJ("match", &emu_match_table, "which packets; default: every packet"),
	{ .name = "action", .type = EMU_KEY_STR, .required = true,
	  .schema = "{\"enum\": [\"drop\", \"ecn_mark\", \"corrupt\", \"duplicate\", \"rewrite\", "
		    "\"delay\"]}",
	  .desc = "what happens to a packet the event picks" },
	{ .name = "loss", .type = EMU_KEY_ANY, .one_of = impair_loss_models,
	  .desc = "which matching packets the action applies to (a loss model; default: all). "
		  "Polymorphic: one of three models, told apart by \"model\"" },
	EMU_K_ENUM("corrupt", "icrc", corrupt_vals,
		   "action corrupt: break the ICRC, or flip payload bits (ICRC recomputed)"),
	{ .name = "rewrite", .type = EMU_KEY_OBJ, .sub = &impair_rewrite_table,
	  .schema = "{\"minProperties\": 1, \"maxProperties\": 1}",
	  .desc = "action rewrite (required with it): {\"dscp\": N} or {\"udp_sport\": N}" },
	EMU_K_NUM_DYN("delay_us", 0, true, 10e6, "action delay (required with it): by this (us)"),
	EMU_K_BOOL("enabled", true, "active from the start (a profile can change it)"),
};
static const struct emu_key_rule event_rules[] = {
	{ "action", EMU_KEY_LIST("drop", "ecn_mark", "duplicate", "rewrite", "delay"), NULL,
	  EMU_KEY_LIST("corrupt") },
	{ "action", EMU_KEY_LIST("rewrite"), EMU_KEY_LIST("rewrite"), NULL },
	{ "action", EMU_KEY_LIST("drop", "ecn_mark", "duplicate", "corrupt", "delay"), NULL,
	  EMU_KEY_LIST("rewrite") },
	{ "action", EMU_KEY_LIST("delay"), EMU_KEY_LIST("delay_us"), NULL },
	{ "action", EMU_KEY_LIST("drop", "ecn_mark", "duplicate", "corrupt", "rewrite"), NULL,
	  EMU_KEY_LIST("delay_us") },
};
const struct emu_key_table impair_event_table = {
	.title = "impair event", .desc = "an impairment applied to matching packets",
	.keys = event_entries, .n_keys = DIM(event_entries), .names = impair_event_keys,
	.rules = event_rules, .n_rules = DIM(event_rules),
};

static const struct emu_key impair_entries[] = {
	EMU_K_ARR_REQ("events", EMU_KEY_OBJ, &impair_event_table,
		      "{\"maxItems\": " EMU_KEYS_STR(IMPAIR_MAX_EVENTS) "}",
		  "up to 16 events, applied in order"),
	EMU_K_INT("max_qps", 1024, 1, 1048576, "QPs tracked for match.iteration"),
	EMU_K_INT("max_held_pkts", 65536, 64, 4194304, "packets held at once by delay actions"),
};
const struct emu_key_table impair_key_table = {
	.title = "impair", .desc = "loss, corruption, duplication, rewrites, delays by event",
	.keys = impair_entries, .n_keys = DIM(impair_entries), .names = impair_keys,
	.extra_names = emu_stage_extra_names,
};

static const char *const set_event_names[] = { "enabled", "p", NULL };
static const struct emu_key set_event_entries[] = {
	{ .name = "enabled", .type = EMU_KEY_BOOL, .desc = "start or stop the event" },
	EMU_K_NUM_DYN("p", 0.0, false, 1.0, "the loss p (bernoulli or gilbert models only)"),
};
const struct emu_key_table impair_set_event_table = {
	.title = "impair event change", .keys = set_event_entries,
	.n_keys = DIM(set_event_entries), .names = set_event_names,
};
const struct emu_key_table impair_set_table = {
	.title = "impair change", .desc = "EVENT: {\"enabled\": bool, \"p\": number}",
	.any_key = &impair_set_event_table,
};
