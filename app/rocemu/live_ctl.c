/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Live mode's control: profile reloads (SIGHUP, telemetry) offered to every worker's replica
 * of the switch, and the telemetry endpoints, which read a merged snapshot of the workers'
 * counters taken between their bursts (never the running switch).
 */
#include <ctype.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rte_telemetry.h>

#include "lib/base/emu_compat.h"
#include "live.h"


/*
 * Profile switches asked over DPDK telemetry ("/rocemu/profile,FILE" on the process's telemetry
 * socket, a unix socket in the EAL runtime directory, which only root can reach): the telemetry
 * thread hands the path to the main loop, which loads and offers it exactly as for SIGHUP, and
 * waits for the verdict. current is the file SIGHUP reloads.
 */
static struct {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	bool pending;		/* a request waits for the main loop */
	bool done;		/* ... and its verdict is in result */
	bool loaded;
	unsigned int seq;	/* requests served, so a waiter knows its own verdict */
	char path[PATH_MAX];
	char result[512];
	char current[PATH_MAX];
} live_ctl = { .mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER };


/*
 * SIGHUP or a telemetry request: load a profile file and hand it to the switch without stopping
 * it. Returns 0 when the switch took it; msg gets the line printed.
 */
int
live_reload_profile(struct live_state *st, const char *file, char *msg, size_t len)
{
	struct emu_profile *np = NULL;
	struct emu_program *old = NULL;
	struct emu_err err;
	uint64_t deadline;

	if (file == NULL || file[0] == '\0') {
		snprintf(msg, len, "rocemu: SIGHUP: no --profile to reload");
		fprintf(live_out, "%s\n", msg);
		return -1;
	}
	if (emu_profile_load(file, st->ctx.sw, &np, &err) != 0) {
		/* a syntax error names the file itself */
		const char *in = err.names_file ? "" : " (in ", *end = err.names_file ? "" : ")";
		const char *name = err.names_file ? "" : file;

		fprintf(live_out, "rocemu: profile reload refused, the running profile stays: %s%s%s%s\n",
			err.msg, in, name, end);
		if (snprintf(msg, len, "rocemu: profile reload refused, the running profile stays: "
			     "%s%s%s%s", err.msg, in, name, end) >= (int)len)
			msg[len - 2] = '.';	/* cut: the whole line is on stdout */
		return -1;
	}
	live_offer_program(st, np);
	deadline = live_now_ns(st) + 2000000000ULL;
	while (!live_program_taken(st, &old)) {
		if (st->inline_main)
			live_poll(&st->w[0], true);
		else
			usleep(100);
		if (live_now_ns(st) > deadline) {
			/* The worker is wedged: keep the offer, it will be taken later; the
			 * new profile is then owned by the switch until exit. */
			snprintf(msg, len, "rocemu: profile reload from %s pending (a worker is busy)",
				 file);
			fprintf(live_out, "%s\n", msg);
			return -1;
		}
	}
	/* the program the switch gave back is the running profile's (or none) */
	emu_profile_free(old != NULL ? old->owner : NULL);
	st->ctx.prof = np;
	snprintf(msg, len, "rocemu: profile reloaded from %s (%u changes, time zero now)", file,
		 np->n_actions);
	fprintf(live_out, "%s\n", msg);
	emu_profile_path_warnings(np, st->ctx.sw, live_out);
	return 0;
}

/* Copy at most n - 1 bytes of src and a NUL (telemetry strings hold 127 characters). */
static void
live_strcpy(char *dst, size_t n, const char *src)
{
	size_t l = strnlen(src, n - 1);

	memcpy(dst, src, l);
	dst[l] = '\0';
}

/* Telemetry thread: "/rocemu/profile,FILE" switches to FILE; without FILE, the running one. */
static int
live_tel_profile(const char *cmd, const char *params, struct rte_tel_data *d)
{
	struct timespec until;
	unsigned int seq;
	char text[RTE_TEL_MAX_STRING_LEN];
	int rc = 0;

	(void)cmd;
	rte_tel_data_start_dict(d);
	pthread_mutex_lock(&live_ctl.mu);
	if (params == NULL || params[0] == '\0') {
		live_strcpy(text, sizeof(text), live_ctl.current);
		rte_tel_data_add_dict_string(d, "profile", text);
		pthread_mutex_unlock(&live_ctl.mu);
		return 0;
	}
	if (live_ctl.pending || strlen(params) >= sizeof(live_ctl.path)) {
		pthread_mutex_unlock(&live_ctl.mu);
		rte_tel_data_add_dict_string(d, "result", "refused");
		rte_tel_data_add_dict_string(d, "message", live_ctl.pending ?
					     "another profile switch is in progress" :
					     "path too long");
		return 0;
	}
	snprintf(live_ctl.path, sizeof(live_ctl.path), "%s", params);
	live_ctl.pending = true;
	live_ctl.done = false;
	seq = live_ctl.seq;
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += 5;
	while (!(live_ctl.done && live_ctl.seq != seq) && rc == 0)
		rc = pthread_cond_timedwait(&live_ctl.cv, &live_ctl.mu, &until);
	if (live_ctl.done && live_ctl.seq != seq) {
		rte_tel_data_add_dict_string(d, "result", live_ctl.loaded ? "loaded" : "refused");
		/* telemetry strings are short: the whole line is on rocemu's standard output */
		live_strcpy(text, sizeof(text), live_ctl.result);
		rte_tel_data_add_dict_string(d, "message", text);
	} else {
		rte_tel_data_add_dict_string(d, "result", "pending");
		rte_tel_data_add_dict_string(d, "message", "no answer from the main loop in 5 s");
	}
	pthread_mutex_unlock(&live_ctl.mu);
	return 0;
}


static struct live_state *live_tel_state;

/*
 * A telemetry dictionary key: DPDK takes only [A-Za-z0-9_/] (others are replaced by '_') and
 * at most RTE_TEL_MAX_STRING_LEN - 1 characters (longer names are cut, not refused).
 */
static void
live_tel_key(char *buf, size_t len, const char *k)
{
	size_t i;

	if (buf != k)
		snprintf(buf, len < RTE_TEL_MAX_STRING_LEN ? len : RTE_TEL_MAX_STRING_LEN, "%s", k);
	for (i = 0; buf[i] != '\0'; i++)
		if (!isalnum((unsigned char)buf[i]) && buf[i] != '_' && buf[i] != '/')
			buf[i] = '_';
}

/* Integer and boolean members of @p o into @p d. */
static void
live_tel_flat(struct rte_tel_data *d, const json_t *o, const char *prefix)
{
	char key[RTE_TEL_MAX_STRING_LEN];
	const char *k;
	json_t *v;

	json_object_foreach((json_t *)(uintptr_t)o, k, v) {
		if (!json_is_integer(v) && !json_is_boolean(v))
			continue;
		snprintf(key, sizeof(key), "%s%s", prefix, k);
		live_tel_key(key, sizeof(key), key);
		EMU_TEL_ADD_DICT_UINT(d, key, json_is_boolean(v) ? json_is_true(v) :
					   (uint64_t)json_integer_value(v));
	}
}

/* One container per element of @p arr, named by its member @p name_key. */
static void
live_tel_per(struct rte_tel_data *d, const json_t *arr, const char *name_key, const char *sub)
{
	const json_t *o;
	size_t i;

	json_array_foreach(arr, i, o) {
		struct rte_tel_data *c = rte_tel_data_alloc();
		char key[RTE_TEL_MAX_STRING_LEN];

		if (c == NULL)
			return;
		rte_tel_data_start_dict(c);
		live_tel_flat(c, o, "");
		if (sub != NULL)
			live_tel_flat(c, json_object_get(o, sub), "");
		live_tel_key(key, sizeof(key), json_string_value(json_object_get(o, name_key)));
		if (rte_tel_data_add_dict_container(d, key, c, 0) != 0)
			rte_tel_data_free(c);
	}
}

/* One container per member of object @p obj, named by its key. */
static void
live_tel_per_obj(struct rte_tel_data *d, const json_t *obj)
{
	const char *name;
	json_t *o;

	json_object_foreach((json_t *)(uintptr_t)obj, name, o) {
		struct rte_tel_data *c = rte_tel_data_alloc();
		char key[RTE_TEL_MAX_STRING_LEN];

		if (c == NULL)
			return;
		rte_tel_data_start_dict(c);
		live_tel_flat(c, o, "");
		live_tel_key(key, sizeof(key), name);
		if (rte_tel_data_add_dict_container(d, key, c, 0) != 0)
			rte_tel_data_free(c);
	}
}

/* The drop_* counters of each element of @p arr as PREFIX/NAME/COUNTER. */
static void
live_tel_drops(struct rte_tel_data *d, const json_t *arr, const char *prefix)
{
	char key[RTE_TEL_MAX_STRING_LEN];
	const json_t *o;
	const char *k;
	json_t *v;
	size_t i;

	json_array_foreach(arr, i, o)
		json_object_foreach(json_object_get(o, "counters"), k, v)
			if (strncmp(k, "drop_", 5) == 0) {
				snprintf(key, sizeof(key), "%s/%s/%s", prefix,
					 json_string_value(json_object_get(o, "name")), k);
				live_tel_key(key, sizeof(key), key);
				EMU_TEL_ADD_DICT_UINT(d, key, (uint64_t)json_integer_value(v));
			}
}

/* How long a telemetry request waits for the worker's snapshot. The worker answers between
 * two bursts, within microseconds when it runs; on a loaded 2-vCPU box it was seen descheduled
 * for more than 200 ms (robust-behaviour, once). */
#define LIVE_SNAP_WAIT_US 1000000

/*
 * /rocemu/ports, /rocemu/stages, /rocemu/tm[,PORT], /rocemu/drops, /rocemu/fabric,
 * /rocemu/capture, /rocemu/conservation: a snapshot the worker takes between bursts (it is
 * not stopped).
 */
static int
live_tel_stats(const char *cmd, const char *params, struct rte_tel_data *d)
{
	struct live_state *st = __atomic_load_n(&live_tel_state, __ATOMIC_ACQUIRE);
	json_t *root, *arr, *o;
	size_t i;

	rte_tel_data_start_dict(d);
	if (st == NULL)
		return -1;
	root = live_stats_json(st, false, LIVE_SNAP_WAIT_US);
	if (root == NULL) {
		rte_tel_data_add_dict_string(d, "error", "a worker did not answer in 1 s");
		return 0;
	}
	if (strcmp(cmd, "/rocemu/ports") == 0) {
		live_tel_per(d, json_object_get(root, "ports"), "name", NULL);
	} else if (strcmp(cmd, "/rocemu/stages") == 0) {
		live_tel_per(d, json_object_get(root, "stages"), "name", "counters");
	} else if (strcmp(cmd, "/rocemu/tm") == 0) {
		arr = json_object_get(root, "tm");
		if (params == NULL || params[0] == '\0') {
			live_tel_per(d, arr, "port", "counters");
		} else {
			bool found = false;

			json_array_foreach(arr, i, o) {
				const json_t *pr;
				size_t k;

				if (strcmp(json_string_value(json_object_get(o, "port")), params) != 0)
					continue;
				found = true;
				live_tel_flat(d, o, "");
				live_tel_flat(d, json_object_get(o, "counters"), "");
				json_array_foreach(json_object_get(o, "priorities"), k, pr) {
					char pre[32];

					snprintf(pre, sizeof(pre), "prio%zu_", k);
					live_tel_flat(d, pr, pre);
				}
			}
			if (!found)
				rte_tel_data_add_dict_string(d, "error", "no such port");
		}
	} else if (strcmp(cmd, "/rocemu/drops") == 0) {
		char key[RTE_TEL_MAX_STRING_LEN];
		const char *k;
		json_t *v;

		json_array_foreach(json_object_get(root, "stages"), i, o)
			json_object_foreach(json_object_get(o, "counters"), k, v)
				if (strncmp(k, "drop_", 5) == 0) {
					snprintf(key, sizeof(key), "%s/%s",
						 json_string_value(json_object_get(o, "name")), k);
					live_tel_key(key, sizeof(key), key);
					EMU_TEL_ADD_DICT_UINT(d, key, (uint64_t)json_integer_value(v));
				}
		json_array_foreach(json_object_get(root, "tm"), i, o)
			json_object_foreach(json_object_get(o, "counters"), k, v)
				if (strncmp(k, "drop_", 5) == 0) {
					snprintf(key, sizeof(key), "tm/%s/%s",
						 json_string_value(json_object_get(o, "port")), k);
					live_tel_key(key, sizeof(key), key);
					EMU_TEL_ADD_DICT_UINT(d, key, (uint64_t)json_integer_value(v));
				}
		live_tel_drops(d, json_object_get(json_object_get(root, "fabric"), "links"),
			       "fabric");
		live_tel_drops(d, json_object_get(json_object_get(root, "fabric"), "switches"),
			       "fabric");
		live_tel_drops(d, json_object_get(root, "incast"), "incast");
		json_object_foreach(json_object_get(root, "runner"), k, v)
			if (strncmp(k, "drop_", 5) == 0) {
				snprintf(key, sizeof(key), "runner/%s", k);
				EMU_TEL_ADD_DICT_UINT(d, key, (uint64_t)json_integer_value(v));
			}
	} else if (strcmp(cmd, "/rocemu/fabric") == 0) {
		const json_t *fab = json_object_get(root, "fabric");

		/* links and switches share one namespace in a pipeline file: one dict */
		live_tel_per(d, json_object_get(fab, "links"), "name", "counters");
		live_tel_per(d, json_object_get(fab, "switches"), "name", "counters");
	} else if (strcmp(cmd, "/rocemu/capture") == 0) {
		json_t *caps = json_array();

		json_array_foreach(json_object_get(root, "stages"), i, o)
			if (strcmp(json_string_value(json_object_get(o, "type")), "capture") == 0)
				json_array_append(caps, o);
		live_tel_per(d, caps, "name", "counters");
		json_decref(caps);
	} else if (strcmp(cmd, "/rocemu/workers") == 0) {
		json_t *ws = json_object_get(root, "workers");

		json_array_foreach(ws, i, o) {
			struct rte_tel_data *c = rte_tel_data_alloc();
			char key[RTE_TEL_MAX_STRING_LEN];

			if (c == NULL)
				break;
			rte_tel_data_start_dict(c);
			live_tel_flat(c, o, "");
			snprintf(key, sizeof(key), "worker%zu", i);
			if (rte_tel_data_add_dict_container(d, key, c, 0) != 0)
				rte_tel_data_free(c);
		}
	} else if (strcmp(cmd, "/rocemu/nic") == 0) {
		live_tel_per_obj(d, json_object_get(root, "nic"));
	} else {
		live_tel_flat(d, json_object_get(root, "conservation"), "");
	}
	json_decref(root);
	return 0;
}

/* Main loop: serve a telemetry profile switch if one waits. */
void
live_ctl_serve(struct live_state *st)
{
	char path[PATH_MAX], msg[512];
	int rc;

	pthread_mutex_lock(&live_ctl.mu);
	if (!live_ctl.pending) {
		pthread_mutex_unlock(&live_ctl.mu);
		return;
	}
	snprintf(path, sizeof(path), "%s", live_ctl.path);
	pthread_mutex_unlock(&live_ctl.mu);
	rc = live_reload_profile(st, path, msg, sizeof(msg));
	pthread_mutex_lock(&live_ctl.mu);
	if (rc == 0)
		snprintf(live_ctl.current, sizeof(live_ctl.current), "%s", path);
	/* strip the "rocemu: " prefix: the reply says who it is from */
	snprintf(live_ctl.result, sizeof(live_ctl.result), "%s",
		 strncmp(msg, "rocemu: ", 8) == 0 ? msg + 8 : msg);
	live_ctl.loaded = rc == 0;
	live_ctl.pending = false;
	live_ctl.done = true;
	live_ctl.seq++;
	pthread_cond_broadcast(&live_ctl.cv);
	pthread_mutex_unlock(&live_ctl.mu);
}

/* The telemetry commands (DPDK's telemetry thread calls them), and SIGHUP's file. */
void
live_ctl_register(struct live_state *st, const char *profile)
{
	static const char *const cmds[][2] = {
		{ "/rocemu/ports", "Per port: rx/tx packets and bytes" },
		{ "/rocemu/stages", "Per stage: packets in and out, every counter" },
		{ "/rocemu/tm", "Per TM port: counters; /rocemu/tm,PORT: one port with its "
				"queues per priority" },
		{ "/rocemu/drops", "Drops by reason" },
		{ "/rocemu/fabric", "Per fabric link and switch: routed, drop_link_loss, "
				    "drop_no_path, buckets_moved" },
		{ "/rocemu/capture", "Capture stages: captured, not captured, filtered" },
		{ "/rocemu/conservation", "rx + created = tx + drops + held + consumed" },
		{ "/rocemu/workers", "Per worker lcore: rx/tx packets, handoffs, busy and idle "
				     "cycles, ring high-water marks" },
		{ "/rocemu/nic", "Per port: the NIC's own counters since the start (imissed, "
				 "rx_nombuf, ierrors, oerrors)" },
	};
	unsigned int i;

	pthread_mutex_lock(&live_ctl.mu);
	snprintf(live_ctl.current, sizeof(live_ctl.current), "%s", profile ? profile : "");
	pthread_mutex_unlock(&live_ctl.mu);
	__atomic_store_n(&live_tel_state, st, __ATOMIC_RELEASE); /* set up: the telemetry thread may read it */
	for (i = 0; i < RTE_DIM(cmds); i++)
		if (rte_telemetry_register_cmd(cmds[i][0], live_tel_stats, cmds[i][1]) != 0)
			fprintf(live_out, "rocemu: telemetry command %s not registered\n", cmds[i][0]);
	if (rte_telemetry_register_cmd("/rocemu/profile", live_tel_profile,
				       "Switch to a profile file, validated first: "
				       "/rocemu/profile,FILE. Without FILE: the running one") != 0)
		fprintf(live_out, "rocemu: telemetry command /rocemu/profile not registered: switch "
		       "profiles with SIGHUP\n");
}

/* SIGHUP: reload the file the last telemetry switch (or --profile) named. */
void
live_ctl_sighup(struct live_state *st)
{
	char msg[512], path[PATH_MAX];

	pthread_mutex_lock(&live_ctl.mu);
	snprintf(path, sizeof(path), "%s", live_ctl.current);
	pthread_mutex_unlock(&live_ctl.mu);
	live_reload_profile(st, path, msg, sizeof(msg));
	fflush(live_out);
}

/*
 * A profile for every replica: worker 0 runs the profile's own program, every other worker a
 * copy of it with its own cursor (the actions are shared, read-only). The old ones come back
 * when every worker took the new one, between two of its bursts.
 */
struct live_prog {
	struct emu_program *offered[LIVE_MAX_WORKERS];
	struct emu_program *retired[LIVE_MAX_WORKERS];
	bool taken[LIVE_MAX_WORKERS];
};
static struct live_prog live_prog;

static struct emu_program *
live_prog_copy(struct emu_program *p)
{
	struct emu_program *c;

	if (p == NULL)
		return NULL;
	c = malloc(sizeof(*c));
	if (c != NULL) {
		*c = *p;
		c->next = 0;
	}
	return c;
}

void
live_set_program(struct live_state *st, struct emu_profile *prof)
{
	unsigned int w;

	for (w = 0; w < st->n_workers; w++) {
		struct emu_program *p = emu_profile_prog(prof);

		if (w > 0)
			p = live_prog_copy(p);
		emu_switch_set_program(st->w[w].sw, p, st->wall0_ns);
		live_prog.offered[w] = p;
	}
}

void
live_offer_program(struct live_state *st, struct emu_profile *np)
{
	struct emu_program *p[LIVE_MAX_WORKERS];
	unsigned int w;

	/* every copy made before the original is offered: worker 0 advances its cursor */
	for (w = 0; w < st->n_workers; w++)
		p[w] = w == 0 ? emu_profile_prog(np) :
				live_prog_copy(emu_profile_prog(np)); /* failed: no profile there */
	for (w = 0; w < st->n_workers; w++) {
		live_prog.taken[w] = false;
		live_prog.retired[w] = NULL;
		emu_switch_offer_program(st->w[w].sw, p[w]);
	}
}

bool
live_program_taken(struct live_state *st, struct emu_program **old)
{
	unsigned int w;

	for (w = 0; w < st->n_workers; w++)
		if (!live_prog.taken[w] &&
		    emu_switch_program_taken(st->w[w].sw, &live_prog.retired[w]))
			live_prog.taken[w] = true;
	for (w = 0; w < st->n_workers; w++)
		if (!live_prog.taken[w])
			return false;
	/* every worker runs the new one: the copies of the old are no one's */
	for (w = 1; w < st->n_workers; w++)
		free(live_prog.retired[w]);
	*old = live_prog.retired[0];
	return true;
}

void
live_programs_free(struct live_state *st)
{
	unsigned int w;

	/* worker 0's is its profile's; the copies are ours (the switches are stopped) */
	for (w = 1; w < st->n_workers; w++)
		free(emu_switch_program(st->w[w].sw));
}
