/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Key tables of the "tm" section, the incast sources and what profiles change on them.
 * Ranges, defaults and allowed strings live here only: emu_tm_config.c, emu_tm_pfc.c,
 * emu_tm_ctl.c and emu_incast.c read every key through these entries. Defaults that depend
 * on other keys have no "default" in the schema; their description says how they follow.
 */
#include <stdint.h>

#include "lib/tm/emu_incast.h"
#include "lib/tm/emu_tm_int.h"
#include "lib/tm/emu_tm_keys.h"

#define EMU_INCAST_MAX_RATE_GBPS 1600.0
#define EMU_INCAST_MAX_US 1e9 /* 1000 s */
#define EMU_INCAST_MIN_FRAME 64

#define DIM(a) (sizeof(a) / sizeof((a)[0]))
#define PRIOS_SCHEMA "{\"uniqueItems\": true}"

static const char *const emu_tm_sched_vals[] = { "strict", "dwrr", NULL };
static const char *const emu_tm_mark_vals[] = { "dequeue", "enqueue", NULL };
static const char *const emu_tm_mode_vals[] = { "static", "dynamic", NULL };
static const char *const emu_tm_link_vals[] = { "down", "up", NULL };
static const char *const emu_incast_mode_vals[] = { "continuous", "on_off", "bursts", NULL };
static const char *const emu_incast_dcqcn_vals[] = { "off", "nvidia", "paper", NULL };

static const struct emu_key emu_tm_ecn_keys[] = {
	EMU_K_INT_REQ("kmin_kb", 0, EMU_TM_MAX_KB,
		      "RED ramp start: queue depth (KB) below which nothing is marked"),
	EMU_K_INT_REQ("kmax_kb", 0, EMU_TM_MAX_KB,
		      "RED ramp end (KB), must be > kmin_kb: at and above it every ECT packet "
		      "is marked"),
	EMU_K_NUM_REQ("pmax", 0.0, false, 1.0, "marking probability at kmax_kb"),
	EMU_K_ENUM("mark_at", "dequeue", emu_tm_mark_vals,
		   "mark when a packet leaves the queue (as switches do) or when it enters"),
};
const struct emu_key_table emu_tm_ecn_table =
	EMU_KEY_TABLE("tm.ports[].ecn", "RED/ECN marking of the port's queues", emu_tm_ecn_keys);

static const struct emu_key emu_tm_pfc_keys[] = {
	EMU_K_INT_DYN("xoff_kb", 1, EMU_TM_MAX_KB,
		      "send XOFF when a lossless queue holds this much (KB); give it with xon_kb, "
		      "or cable_m instead"),
	EMU_K_INT_DYN("xon_kb", 0, EMU_TM_MAX_KB,
		      "send XON when the queue drains below this (KB); only with xoff_kb, "
		      "< xoff_kb"),
	EMU_K_NUM_DYN("cable_m", 0.0, false, 100000.0,
		      "cable length (m): XOFF from NVIDIA's formula (301 + 2.16 cable_m) x Gb/s "
		      "+ 2.72 MTU, XON = XOFF - MTU; instead of xoff_kb/xon_kb"),
	EMU_K_INT("quanta", 0xFFFF, 1, 0xFFFF, "pause quanta (512 bit times) in the XOFF frames"),
};
static const struct emu_key_rule emu_tm_pfc_rules[] = {
	{ "xoff_kb", NULL, EMU_KEY_LIST("xon_kb"), EMU_KEY_LIST("cable_m") },
	{ "xon_kb", NULL, EMU_KEY_LIST("xoff_kb"), NULL },
};
const struct emu_key_table emu_tm_pfc_table = {
	.title = "tm.ports[].pfc",
	.desc = "PFC on the port's lossless priorities: either xoff_kb and xon_kb, or cable_m",
	.keys = emu_tm_pfc_keys, .n_keys = DIM(emu_tm_pfc_keys),
	.rules = emu_tm_pfc_rules, .n_rules = DIM(emu_tm_pfc_rules),
	.schema = "{\"oneOf\": [{\"required\": [\"xoff_kb\"]}, {\"required\": [\"cable_m\"]}]}",
};

static const struct emu_key emu_tm_port_keys[] = {
	EMU_K_STR_REQ("port", "name of a port of ports[]"),
	/* the same bounds as a profile's rate_gbps (emu_tm_set_keys): one message for both */
	EMU_K_NUM("rate_gbps", 100.0, 1e-6, false, EMU_TM_MAX_RATE_GBPS,
		  "egress line rate (Gb/s, at least 1e-6)"),
	EMU_K_INT("buffer_kb", 4096, 1, EMU_TM_MAX_KB, "the port's buffer limit (KB)"),
	EMU_K_INT_DYN("queue_kb", 1, EMU_TM_MAX_KB,
		      "limit of each priority queue (KB); default: buffer_kb"),
	EMU_K_INT("queue_pkts", 4096, 16, 1 << 24, "slots of each priority queue (packets)"),
	EMU_K_NUM("delay_us", 0.0, 0.0, false, EMU_TM_MAX_DELAY_US,
		  "propagation delay after serialisation (us)"),
	EMU_K_INT_DYN("headroom_kb", 0, EMU_TM_MAX_KB,
		      "PFC headroom per lossless priority (KB); default: the XOFF threshold with "
		      "pfc, else 0"),
	EMU_K_ENUM("scheduler", "strict", emu_tm_sched_vals,
		   "strict priority, or deficit weighted round robin (with weights)"),
	EMU_K_ARR_INT("weights", 1, 1000, "{\"minItems\": 8, \"maxItems\": 8}",
		  "DWRR weights, 8 integers 1-1000 (one per priority); only with scheduler dwrr"),
	EMU_K_ARR_INT("lossless", 0, 7, PRIOS_SCHEMA,
		  "priorities 0-7 that are lossless (PFC, headroom); default [3]"),
	EMU_K_OBJ("ecn", &emu_tm_ecn_table, "RED/ECN marking; none when absent"),
	EMU_K_OBJ("pfc", &emu_tm_pfc_table, "PFC; none when absent"),
	EMU_K_NUM("pfc_watchdog_ms", 0.0, 0.0, false, 100000.0,
		  "PFC watchdog: a priority paused this long (ms) ignores pause frames; 0: off"),
};
/* weights and lossless items: their ranges are read by the loaders from these entries */
static const struct emu_key_rule emu_tm_port_rules[] = {
	{ "scheduler", EMU_KEY_LIST("strict"), NULL, EMU_KEY_LIST("weights") },
};
const struct emu_key_table emu_tm_port_table = {
	.title = "tm.ports[]", .desc = "one switch port's egress: rate, delay, queues, ECN, PFC",
	.keys = emu_tm_port_keys, .n_keys = DIM(emu_tm_port_keys),
	.rules = emu_tm_port_rules, .n_rules = DIM(emu_tm_port_rules),
};

static const struct emu_key emu_tm_buffer_keys[] = {
	EMU_K_INT_DYN("total_kb", 1, EMU_TM_MAX_KB * 16LL,
		      "shared buffer (KB); default: the sum of the ports' buffer_kb"),
	EMU_K_ENUM("mode", "static", emu_tm_mode_vals,
		   "static per-port limits, or dynamic thresholds (alpha x free buffer)"),
	EMU_K_NUM("alpha", 1.0, 0.0, true, 64.0,
		  "dynamic threshold factor; only with mode dynamic"),
	EMU_K_INT("cell_bytes", 1, 1, 4096, "buffer accounting cell (bytes)"),
};
static const struct emu_key_rule emu_tm_buffer_rules[] = {
	{ "mode", EMU_KEY_LIST("static"), NULL, EMU_KEY_LIST("alpha") },
};
const struct emu_key_table emu_tm_buffer_table = {
	.title = "tm.buffer", .desc = "the shared buffer",
	.keys = emu_tm_buffer_keys, .n_keys = DIM(emu_tm_buffer_keys),
	.rules = emu_tm_buffer_rules, .n_rules = DIM(emu_tm_buffer_rules),
};

static const struct emu_key emu_tm_keys[] = {
	EMU_K_ARR("ports", EMU_KEY_OBJ, &emu_tm_port_table, NULL,
		  "per-port TM settings; ports not listed get the defaults"),
	EMU_K_OBJ("buffer", &emu_tm_buffer_table, "the shared buffer"),
};
const struct emu_key_table emu_tm_table =
	EMU_KEY_TABLE("tm", "traffic manager: queues, buffer, scheduler, shaper, ECN, PFC",
		      emu_tm_keys);

static const struct emu_key emu_tm_storm_keys[] = {
	EMU_K_ARR_INT("priorities", 0, 7, "{\"uniqueItems\": true, \"minItems\": 1}",
		  "priorities 0-7 to pause; required unless pause is true"),
	EMU_K_INT("quanta", 0xFFFF, 0, 0xFFFF, "pause quanta in each frame"),
	EMU_K_INT_REQ("rate_pps", 1, 10000000, "frames per second sent"),
	EMU_K_BOOL("pause", false, "802.3x PAUSE (all priorities) instead of PFC"),
};
const struct emu_key_table emu_tm_storm_table = {
	.title = "pfc_storm", .desc = "a PFC (or PAUSE) storm sent out of the port",
	.keys = emu_tm_storm_keys, .n_keys = DIM(emu_tm_storm_keys),
	/* priorities: required for PFC, refused with "pause": true */
	.schema = "{\"if\": {\"properties\": {\"pause\": {\"const\": true}}, \"required\": "
		  "[\"pause\"]}, \"then\": {\"properties\": {\"priorities\": false}}, "
		  "\"else\": {\"required\": [\"priorities\"]}}",
};

static const struct emu_key emu_tm_set_keys[] = {
	EMU_K_NUM_DYN("rate_gbps", 1e-6, false, EMU_TM_MAX_RATE_GBPS, "egress line rate (Gb/s)"),
	EMU_K_NUM_DYN("delay_us", 0.0, false, EMU_TM_MAX_DELAY_US,
		      "propagation delay (us), within what the pipeline sized the delay line for"),
	EMU_K_INT_DYN("buffer_kb", 1, 16 * 1024 * 1024, "the port's buffer limit (KB)"),
	EMU_K_ENUM("link", NULL, emu_tm_link_vals, "link state: down drops what is queued"),
	EMU_K_ANY_OR("pfc_storm", "{\"const\": false}", &emu_tm_storm_table,
		     "false (stop), or a storm object: polymorphic (false or an object)"),
};
const struct emu_key_table emu_tm_set_table =
	EMU_KEY_TABLE("tm port change", "keys a phase may change on a TM port", emu_tm_set_keys);

static const struct emu_key emu_incast_keys[] = {
	EMU_K_STR_REQ("name", "the source's name (unique), as profiles name it"),
	EMU_K_STR_REQ("port", "the port whose egress the senders' frames enter (a ports[] name)"),
	EMU_K_INT("priority", 3, 0, 7, "priority of the frames"),
	EMU_K_INT("senders", 1, 1, EMU_INCAST_MAX_SENDERS, "number of senders"),
	EMU_K_NUM_REQ("rate_gbps", 0.0, true, EMU_INCAST_MAX_RATE_GBPS, 
		      "rate of each sender (Gb/s)"),
	EMU_K_INT("frame_bytes", 4154, EMU_INCAST_MIN_FRAME, 9216 + 14,
		  "frame size (bytes), at most the ports' MTU + 14"),
	EMU_K_ENUM("mode", "continuous", emu_incast_mode_vals,
		   "continuous, on_off (on_us, off_us) or bursts (message_kb, period_us)"),
	EMU_K_NUM_DYN("on_us", 0.0, true, EMU_INCAST_MAX_US,
		      "length of each on period (us); required with mode on_off"),
	EMU_K_NUM_DYN("off_us", 0.0, false, EMU_INCAST_MAX_US,
		      "length of each off period (us); required with mode on_off"),
	EMU_K_INT_DYN("message_kb", 1, 1024 * 1024,
		      "message per sender per period (KB); required with mode bursts"),
	EMU_K_NUM_DYN("period_us", 0.0, true, EMU_INCAST_MAX_US,
		      "burst period (us); required with mode bursts"),
	EMU_K_BOOL("enabled", true, "whether the source sends from the start"),
	EMU_K_STR("sink_port", NULL, "a ports[] name the frames are sent out of instead of port"),
	EMU_K_BOOL("honour_pfc", false,
		   "closed loop: each sender stops while more than the port's PFC xoff bytes of "
		   "its frames are in the switch and resumes below xon (the priority must be "
		   "lossless with PFC on), instead of being dropped; mode continuous, at most 64 "
		   "senders"),
	EMU_K_ENUM("dcqcn", "off", emu_incast_dcqcn_vals,
		   "closed loop: each sender runs DCQCN (lib/dcqcn, NVIDIA's or the paper's "
		   "parameters, rate_gbps its line rate) on the CNPs its CE-marked frames would "
		   "bring back; mode continuous, at most 64 senders"),
	EMU_K_STR("attach", NULL,
		  "emulated fabric: the leaf (a fabric.switches[] name with real ports) the "
		  "senders sit on; their frames are routed from it to port through the fabric"),
	EMU_K_NUM("cnp_delay_us", 4.0, 0.0, false, 1000.0,
		  "dcqcn: time from a CE-marked frame leaving the switch to its CNP reaching the "
		  "sender (us)"),
};
static const struct emu_key_rule emu_incast_rules[] = {
	{ "mode", EMU_KEY_LIST("on_off"), EMU_KEY_LIST("on_us", "off_us"), NULL },
	{ "mode", EMU_KEY_LIST("continuous", "bursts"), NULL, EMU_KEY_LIST("on_us", "off_us") },
	{ "mode", EMU_KEY_LIST("bursts"), EMU_KEY_LIST("message_kb", "period_us"), NULL },
	{ "mode", EMU_KEY_LIST("continuous", "on_off"), NULL,
	  EMU_KEY_LIST("message_kb", "period_us") },
	{ "mode", EMU_KEY_LIST("on_off", "bursts"), NULL,
	  EMU_KEY_LIST("honour_pfc", "dcqcn", "cnp_delay_us") },
};
const struct emu_key_table emu_incast_table = {
	.title = "incast[]", .desc = "a synthetic incast source inside the switch",
	.keys = emu_incast_keys, .n_keys = DIM(emu_incast_keys),
	.rules = emu_incast_rules, .n_rules = DIM(emu_incast_rules),
};

static const struct emu_key emu_incast_set_keys[] = {
	EMU_K_BOOL("enabled", true, "start or stop the source"),
	EMU_K_INT_DYN("senders", 1, EMU_INCAST_MAX_SENDERS, "number of senders"),
	EMU_K_NUM_DYN("rate_gbps", 0.0, true, EMU_INCAST_MAX_RATE_GBPS, "rate of each sender"),
};
const struct emu_key_table emu_incast_set_table =
	EMU_KEY_TABLE("incast change", "keys a phase may change on an incast source",
		      emu_incast_set_keys);
