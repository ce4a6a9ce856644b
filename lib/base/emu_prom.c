/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/base/emu_out.h"
#include "lib/base/emu_prom.h"

struct prom_buf {
	char *s;
	size_t len, cap;
	bool oom;
};

static void
prom_add(struct prom_buf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (b->oom)
		return;
	for (;;) {
		va_start(ap, fmt);
		n = vsnprintf(b->s + b->len, b->cap - b->len, fmt, ap);
		va_end(ap);
		if (n >= 0 && (size_t)n < b->cap - b->len) {
			b->len += (size_t)n;
			return;
		}
		b->cap = b->cap * 2 + (n > 0 ? (size_t)n : 0) + 256;
		b->s = realloc(b->s, b->cap);
		if (b->s == NULL) {
			b->oom = true;
			return;
		}
	}
}

/* A label value as the exposition format wants it: backslash, quote and newline escaped. */
static void
prom_label(struct prom_buf *b, const char *name, const char *v, bool first)
{
	prom_add(b, "%s%s=\"", first ? "" : ",", name);
	for (; *v != '\0'; v++) {
		if (*v == '\\' || *v == '"')
			prom_add(b, "\\%c", *v);
		else if (*v == '\n')
			prom_add(b, "\\n");
		else
			prom_add(b, "%c", *v);
	}
	prom_add(b, "\"");
}

/* The metric families, each written whole (HELP, TYPE, samples) in one pass over the stats. */
struct prom_family {
	const char *name;
	const char *type;
	const char *help;
};

static const struct prom_family prom_families[] = {
	{ "rocemu_port_rx_packets_total", "counter", "Frames received on the port." },
	{ "rocemu_port_rx_bytes_total", "counter", "Bytes received on the port." },
	{ "rocemu_port_tx_packets_total", "counter", "Frames sent on the port." },
	{ "rocemu_port_tx_bytes_total", "counter", "Bytes sent on the port." },
	{ "rocemu_stage_in_packets_total", "counter", "Packets a stage processed." },
	{ "rocemu_stage_out_packets_total", "counter", "Packets a stage passed on." },
	{ "rocemu_stage_events_total", "counter", "A stage's counters, by name." },
	{ "rocemu_drops_total", "counter", "Dropped packets by reason (stage.counter, tm.port.counter, fabric.link.counter, fabric.switch.counter, incast.source.counter, runner.counter)." },
	{ "rocemu_tm_events_total", "counter", "A TM port's counters, by name (max_queue_bytes is the gauge rocemu_tm_max_queue_bytes)." },
	{ "rocemu_tm_max_queue_bytes", "gauge", "Largest queue the port had, all priorities." },
	{ "rocemu_tm_held_packets", "gauge", "Packets the port's queues and delay line hold now." },
	{ "rocemu_tm_queue_bytes", "gauge", "Bytes in a priority's queue now." },
	{ "rocemu_tm_queue_packets", "gauge", "Packets in a priority's queue now." },
	{ "rocemu_tm_queue_max_bytes", "gauge", "Largest a priority's queue was." },
	{ "rocemu_tm_ingress_bytes", "gauge", "Lossless bytes that arrived on the port and are queued somewhere (PFC accounting)." },
	{ "rocemu_tm_headroom_bytes", "gauge", "Headroom in use for the priority." },
	{ "rocemu_tm_paused", "gauge", "1 while the priority is paused by received PFC or PAUSE." },
	{ "rocemu_tm_paused_ns_total", "counter", "Time the priority was paused, ns." },
	{ "rocemu_tm_xoff", "gauge", "1 while the switch holds the sender of this priority in XOFF." },
	{ "rocemu_tm_xoff_ns_total", "counter", "Time in XOFF, ns." },
	{ "rocemu_buffer_used_bytes", "gauge", "Shared buffer in use." },
	{ "rocemu_buffer_total_bytes", "gauge", "Shared buffer size." },
	{ "rocemu_incast_events_total", "counter", "A virtual incast source's counters, by name." },
	{ "rocemu_runner_events_total", "counter", "The runner's counters, by name." },
	{ "rocemu_conservation_packets_total", "counter", "The conservation line's terms (rx, created, tx, drops, consumed)." },
	{ "rocemu_conservation_held_packets", "gauge", "Packets the switch holds now." },
	{ "rocemu_conservation_unaccounted_packets", "gauge", "rx + created - tx - drops - held - consumed: 0 when every packet is accounted for." },
	{ "rocemu_fabric_routed_packets_total", "counter", "Frames the fabric routed onto the link." },
	{ "rocemu_fabric_link_events_total", "counter", "A fabric link's other counters, by name (drops also in rocemu_drops_total)." },
	{ "rocemu_fabric_switch_events_total", "counter", "A fabric switch's counters, by name (drops also in rocemu_drops_total)." },
	{ "rocemu_worker_events_total", "counter", "A worker lcore's counters, by name (live --workers): rx/tx packets, handoffs, busy and idle cycles." },
	{ "rocemu_nic_events_total", "counter", "A port's NIC counters since the start (live): ipackets, opackets, its own losses drop_nic_* (also in rocemu_drops_total), and with ports[].rx_guard the PFC frames it sent: rx_guard_xoff_frames, rx_guard_xon_frames, rx_guard_refresh_frames." },
	{ "rocemu_mbufs_in_use", "gauge", "Packet buffers (mbufs) out of the pool now (live): flat in a steady run." },
	{ "rocemu_mbufs_total", "gauge", "Packet buffers (mbufs) in the pool (live)." },
};

/* The families written after the conservation ones (prom_family's last branches). */
enum {
	PROM_F_HELD = 25,
	PROM_F_UNACCOUNTED = 26,
	PROM_F_ROUTED = 27,
	PROM_F_LINK = 28,
	PROM_F_SWITCH = 29,
	PROM_F_WORKER = 30,
	PROM_F_NIC = 31,
	PROM_F_MBUFS_IN_USE = 32,
	PROM_F_MBUFS_TOTAL = 33,
};

/* A port's group of NIC-side counters (live's rx_guard): its counts of frames, as
 * counter="GROUP_NAME"; its thresholds, maxima and times are in --stats only. */
static void
prom_nic_sub(struct prom_buf *b, const char *name, const char *port, const char *group,
	     const json_t *sub)
{
	char label[96];
	const char *c;
	json_t *v;

	json_object_foreach((json_t *)(uintptr_t)sub, c, v) {
		size_t n = strlen(c);

		if (!json_is_integer(v) || n < 7 || strcmp(c + n - 7, "_frames") != 0)
			continue;
		snprintf(label, sizeof(label), "%s_%s", group, c);
		prom_add(b, "%s{", name);
		prom_label(b, "port", port, true);
		prom_label(b, "counter", label, false);
		prom_add(b, "} %lld\n", (long long)json_integer_value(v));
	}
}

static long long
prom_int(const json_t *o, const char *key)
{
	return (long long)json_integer_value(json_object_get(o, key));
}

static bool
prom_is_drop(const char *name)
{
	return strncmp(name, "drop_", 5) == 0;
}

/* The samples of family @p f. */
/* rocemu_drops_total rows of an array of objects: the drop counters of each, by reason
 * PREFIX + the object's @p key + "." + the counter (the names of the summary's drops). */
static void
prom_drops(struct prom_buf *b, const char *name, const json_t *arr, const char *key,
	   const char *prefix)
{
	const json_t *o, *v;
	const char *k;
	char reason[256];
	size_t i;

	json_array_foreach(arr, i, o)
		json_object_foreach(json_object_get(o, "counters"), k, v) if (prom_is_drop(k)) {
			snprintf(reason, sizeof(reason), "%s%s.%s", prefix,
				 json_string_value(json_object_get(o, key)), k);
			prom_add(b, "%s{", name);
			prom_label(b, "reason", reason, true);
			prom_add(b, "} %lld\n", (long long)json_integer_value(v));
		}
}

static void
prom_family(struct prom_buf *b, const json_t *st, unsigned int f)
{
	const char *name = prom_families[f].name;
	const json_t *ports = json_object_get(st, "ports"), *stages = json_object_get(st, "stages");
	const json_t *tm = json_object_get(st, "tm"), *o, *v, *pr;
	const char *k;
	size_t i, j;

	if (f < 4) {
		static const char *const keys[] = { "rx_pkts", "rx_bytes", "tx_pkts", "tx_bytes" };

		json_array_foreach(ports, i, o) {
			prom_add(b, "%s{", name);
			prom_label(b, "port", json_string_value(json_object_get(o, "name")), true);
			prom_add(b, "} %lld\n", prom_int(o, keys[f]));
		}
	} else if (f == 4 || f == 5) {
		json_array_foreach(stages, i, o) {
			prom_add(b, "%s{", name);
			prom_label(b, "stage", json_string_value(json_object_get(o, "name")), true);
			prom_label(b, "type", json_string_value(json_object_get(o, "type")), false);
			prom_add(b, "} %lld\n", prom_int(o, f == 4 ? "in_pkts" : "out_pkts"));
		}
	} else if (f == 6) {
		json_array_foreach(stages, i, o) {
			json_object_foreach(json_object_get(o, "counters"), k, v) {
				prom_add(b, "%s{", name);
				prom_label(b, "stage", json_string_value(json_object_get(o, "name")),
					   true);
				prom_label(b, "counter", k, false);
				prom_add(b, "} %lld\n", (long long)json_integer_value(v));
			}
		}
	} else if (f == 7) {
		const json_t *fab = json_object_get(st, "fabric");

		prom_drops(b, name, stages, "name", "");
		prom_drops(b, name, tm, "port", "tm.");
		prom_drops(b, name, json_object_get(fab, "links"), "name", "fabric.");
		prom_drops(b, name, json_object_get(fab, "switches"), "name", "fabric.");
		prom_drops(b, name, json_object_get(st, "incast"), "name", "incast.");
		json_object_foreach(json_object_get(st, "runner"), k, v) if (prom_is_drop(k)) {
			char reason[256];

			snprintf(reason, sizeof(reason), "runner.%s", k);
			prom_add(b, "%s{", name);
			prom_label(b, "reason", reason, true);
			prom_add(b, "} %lld\n", (long long)json_integer_value(v));
		}
		json_object_foreach(json_object_get(st, "nic"), k, o) {
			const char *c;

			json_object_foreach((json_t *)(uintptr_t)o, c, v) if (prom_is_drop(c)) {
				char reason[256];

				snprintf(reason, sizeof(reason), "nic.%s.%s", k, c);
				prom_add(b, "%s{", name);
				prom_label(b, "reason", reason, true);
				prom_add(b, "} %lld\n", (long long)json_integer_value(v));
			}
		}
	} else if (f == 8 || f == 9 || f == 10) {
		json_array_foreach(tm, i, o) {
			const char *port = json_string_value(json_object_get(o, "port"));

			if (f == 10) {
				prom_add(b, "%s{", name);
				prom_label(b, "port", port, true);
				prom_add(b, "} %lld\n", prom_int(o, "held"));
				continue;
			}
			json_object_foreach(json_object_get(o, "counters"), k, v) {
				if ((strcmp(k, "max_queue_bytes") == 0) != (f == 9))
					continue;
				prom_add(b, "%s{", name);
				prom_label(b, "port", port, true);
				if (f == 8)
					prom_label(b, "counter", k, false);
				prom_add(b, "} %lld\n", (long long)json_integer_value(v));
			}
		}
	} else if (f >= 11 && f <= 19) {
		static const char *const keys[] = { "queue_bytes", "queue_pkts", "max_queue_bytes",
						    "ingress_bytes", "headroom_bytes", "paused",
						    "paused_ns", "xoff", "xoff_ns" };

		json_array_foreach(tm, i, o) {
			json_array_foreach(json_object_get(o, "priorities"), j, pr) {
				char prio[8];
				const json_t *x = json_object_get(pr, keys[f - 11]);

				snprintf(prio, sizeof(prio), "%lld", prom_int(pr, "prio"));
				prom_add(b, "%s{", name);
				prom_label(b, "port", json_string_value(json_object_get(o, "port")),
					   true);
				prom_label(b, "prio", prio, false);
				prom_add(b, "} %lld\n", json_is_boolean(x) ? (long long)json_is_true(x) :
							 (long long)json_integer_value(x));
			}
		}
	} else if (f == 20 || f == 21) {
		prom_add(b, "%s %lld\n", name, prom_int(json_object_get(st, "buffer"),
							f == 20 ? "used_bytes" : "total_bytes"));
	} else if (f == 22) {
		json_array_foreach(json_object_get(st, "incast"), i, o)
			json_object_foreach(json_object_get(o, "counters"), k, v) {
				prom_add(b, "%s{", name);
				prom_label(b, "source", json_string_value(json_object_get(o, "name")),
					   true);
				prom_label(b, "counter", k, false);
				prom_add(b, "} %lld\n", (long long)json_integer_value(v));
			}
	} else if (f == 23) {
		json_object_foreach(json_object_get(st, "runner"), k, v) {
			prom_add(b, "%s{", name);
			prom_label(b, "counter", k, true);
			prom_add(b, "} %lld\n", (long long)json_integer_value(v));
		}
	} else if (f == 24) {
		static const char *const terms[] = { "rx", "created", "tx", "drops", "consumed" };

		for (i = 0; i < 5; i++) {
			prom_add(b, "%s{", name);
			prom_label(b, "term", terms[i], true);
			prom_add(b, "} %lld\n", prom_int(json_object_get(st, "conservation"),
							 terms[i]));
		}
	} else if (f == PROM_F_HELD || f == PROM_F_UNACCOUNTED) {
		prom_add(b, "%s %lld\n", name, prom_int(json_object_get(st, "conservation"),
							f == PROM_F_HELD ? "held" : "unaccounted"));
	} else if (f == PROM_F_ROUTED || f == PROM_F_LINK) {
		json_array_foreach(json_object_get(json_object_get(st, "fabric"), "links"), i, o) {
			const char *link = json_string_value(json_object_get(o, "name"));
			json_t *c = json_object_get(o, "counters");

			if (f == PROM_F_ROUTED) {
				prom_add(b, "%s{", name);
				prom_label(b, "link", link, true);
				prom_label(b, "from", json_string_value(json_object_get(o, "from")),
					   false);
				prom_label(b, "to", json_string_value(json_object_get(o, "to")), false);
				prom_add(b, "} %lld\n", prom_int(c, "routed"));
				continue;
			}
			json_object_foreach(c, k, v) {
				if (strcmp(k, "routed") == 0)
					continue;
				prom_add(b, "%s{", name);
				prom_label(b, "link", link, true);
				prom_label(b, "counter", k, false);
				prom_add(b, "} %lld\n", (long long)json_integer_value(v));
			}
		}
	} else if (f == PROM_F_WORKER) {
		json_array_foreach(json_object_get(st, "workers"), i, o) {
			char w[16];

			snprintf(w, sizeof(w), "%lld", prom_int(o, "worker"));
			json_object_foreach((json_t *)(uintptr_t)o, k, v) {
				if (!json_is_integer(v) || strcmp(k, "worker") == 0 ||
				    strcmp(k, "lcore") == 0)
					continue;
				prom_add(b, "%s{", name);
				prom_label(b, "worker", w, true);
				prom_label(b, "counter", k, false);
				prom_add(b, "} %lld\n", (long long)json_integer_value(v));
			}
		}
	} else if (f == PROM_F_NIC) {
		json_object_foreach(json_object_get(st, "nic"), k, o) {
			const char *c;

			json_object_foreach((json_t *)(uintptr_t)o, c, v) {
				if (json_is_object(v)) {
					prom_nic_sub(b, name, k, c, v);
					continue;
				}
				prom_add(b, "%s{", name);
				prom_label(b, "port", k, true);
				prom_label(b, "counter", c, false);
				prom_add(b, "} %lld\n", (long long)json_integer_value(v));
			}
		}
	} else if (f == PROM_F_MBUFS_IN_USE || f == PROM_F_MBUFS_TOTAL) {
		const json_t *m = json_object_get(st, "mbufs");

		if (m != NULL)
			prom_add(b, "%s %lld\n", name,
				 prom_int(m, f == PROM_F_MBUFS_IN_USE ? "in_use" : "total"));
	} else if (f == PROM_F_SWITCH) {
		json_array_foreach(json_object_get(json_object_get(st, "fabric"), "switches"), i, o)
			json_object_foreach(json_object_get(o, "counters"), k, v) {
				prom_add(b, "%s{", name);
				prom_label(b, "switch", json_string_value(json_object_get(o, "name")),
					   true);
				prom_label(b, "counter", k, false);
				prom_add(b, "} %lld\n", (long long)json_integer_value(v));
			}
	}
}

char *
emu_prom_text(const json_t *stats)
{
	struct prom_buf b = { 0 };
	unsigned int f;

	for (f = 0; f < sizeof(prom_families) / sizeof(prom_families[0]); f++) {
		prom_add(&b, "# HELP %s %s\n# TYPE %s %s\n", prom_families[f].name,
			 prom_families[f].help, prom_families[f].name, prom_families[f].type);
		prom_family(&b, stats, f);
	}
	if (b.oom) {
		free(b.s);
		return NULL;
	}
	return b.s;
}

int
emu_prom_write(const json_t *stats, const char *file, struct emu_err *err)
{
	char *text = emu_prom_text(stats);
	struct emu_out out;
	int rc;

	if (text == NULL)
		return emu_err_setrc(err, -ENOMEM, "%s: out of memory", file);
	rc = emu_out_open(&out, file, err);
	if (rc == 0) {
		emu_out_write(&out, text, strlen(text));
		rc = emu_out_commit(&out, err);
	}
	free(text);
	return rc;
}
