/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The switch built and torn down: its stages from the pipeline, the TM, the fabric and the
 * incast sources; the typed programs it is handed (offer, take, apply); and what it holds and
 * when it next has work (for replay's clock and the drain). The per-packet walk is in
 * emu_switch.c.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <rte_malloc.h>

#include "lib/base/emu_json.h"
#include "lib/stages/stages.h"
#include "lib/switch/emu_switch_int.h"

static int
emu_switch_add_stages(struct emu_switch *sw, const char *list_key, bool egress, uint64_t seed,
		      struct emu_err *err)
{
	const json_t *list = json_object_get(sw->pl->root, list_key);
	char path[EMU_JSON_PATH_LEN];
	const char *allowed[40];
	const char *type, *name;
	const json_t *o;
	size_t idx;
	unsigned int i, k;
	int rc;

	if (list == NULL)
		return 0;
	json_array_foreach(list, idx, o) {
		struct emu_stage_inst *st;
		struct emu_stage_env env;

		emu_json_path_idx(path, sizeof(path), list_key, idx);
		if (sw->n_stages >= EMU_MAX_STAGES)
			return emu_err_set(err, "%s: too many stages (at most %d in all)", path,
					   EMU_MAX_STAGES);
		type = json_string_value(json_object_get(o, "type"));
		st = &sw->stages[sw->n_stages];
		st->ops = emu_stage_find(type);
		st->egress = egress;
		/* the contract: release() with next_due_ns(), which the runner asks first */
		if ((st->ops->release != NULL) != (st->ops->next_due_ns != NULL))
			return emu_err_set(err, "%s: stage type \"%s\" has only one of release and "
					   "next_due_ns", path, type);
		if (st->ops->release != NULL)
			sw->any_release = true;
		if (st->ops->release != NULL && egress)
			sw->any_egress_release = true;
		if (st->ops->clock != NULL)
			sw->any_clock = true;
		k = 0;
		allowed[k++] = "type";
		allowed[k++] = "name";
		for (i = 0; st->ops->keys != NULL && st->ops->keys[i] != NULL && k < 39; i++)
			allowed[k++] = st->ops->keys[i];
		allowed[k] = NULL;
		rc = emu_json_check_keys(o, path, allowed, err);
		if (rc == 0)
			rc = emu_json_get_str(o, path, "name", false, type, &name, err);
		if (rc != 0)
			return rc;
		if (strlen(name) >= sizeof(st->name))
			return emu_err_set(err, "%s.name: longer than %zu characters", path,
					   sizeof(st->name) - 1);
		for (i = 0; i < sw->n_stages; i++)
			if (strcmp(sw->stages[i].name, name) == 0)
				return emu_err_set(err,
						   "%s.name: stage name \"%s\" is already used; give each "
						   "stage of the same type its own \"name\"",
						   path, name);
		snprintf(st->name, sizeof(st->name), "%s", name);
		st->priv = rte_zmalloc("emu_stage", st->ops->priv_size ? st->ops->priv_size : 8,
				       RTE_CACHE_LINE_SIZE);
		st->ctr = rte_zmalloc("emu_stage_ctr",
				      sizeof(uint64_t) * (st->ops->n_ctr ? st->ops->n_ctr : 1),
				      RTE_CACHE_LINE_SIZE);
		if (st->priv == NULL || st->ctr == NULL)
			return emu_err_setrc(err, -ENOMEM, "%s: out of memory", path);
		emu_rng_seed(&st->rng, seed, emu_rng_stream_of(st->name));
		st->reason_base = sw->n_reasons;
		sw->n_reasons += st->ops->n_ctr;
		sw->n_stages++;
		env.path = path;
		env.n_ports = sw->n_ports;
		env.port_names = sw->pl->port_names;
		env.stage_index = sw->n_stages - 1;
		env.egress = egress;
		env.out_port_known = egress;
		for (i = 0; i + 1 < sw->n_stages && !egress; i++)
			if (sw->stages[i].ops->sets_out_port)
				env.out_port_known = true;
		env.check_only = sw->pl->check_only;
		env.max_frame_bytes = sw->pl->max_mtu + 14 + 8;
		env.annotate = emu_switch_env_annotate;
		env.annotate_arg = sw;
		env.add_drop_hook = emu_switch_env_add_drop_hook;
		env.sw = sw;
		env.ctr = st->ctr;
		/* the same pipeline: the primary's stage of this index is this one's */
		env.primary = sw->primary != NULL && st->ops->replicable ?
			sw->primary->stages[sw->n_stages - 1].priv : NULL;
		rc = st->ops->init(st->priv, o, &env, err);
		if (rc != 0)
			return rc;
		st->initialised = true;
	}
	return 0;
}


/*
 * The parse stages fill only what the rest of the switch reads of the parse result, the
 * most any reader asks for: each stage's ops->parse_need (absent: everything; forward,
 * capture and mirror read only the class; reorder the QP fields; delay and impair the
 * datapath fields; each of the last three everything when its matches read more); a
 * fabric's routes read addresses, ports and DestQP, which roce_parse_partial_dp() fills (a
 * spray_match may read any field); an incast source any field. The TM reads the class, l3_off, IP version, DSCP and ECN, the runner the class: both
 * are in every level. MAC control frames always get the full parse.
 */
static void
emu_switch_choose_parse(struct emu_switch *sw)
{
	enum emu_parse_need need = sw->n_incast == 0 ? EMU_PARSE_CLASS : EMU_PARSE_FULL;
	unsigned int i;

	if (sw->fab != NULL && need < EMU_PARSE_DP)
		need = EMU_PARSE_DP;
	for (i = 0; sw->fab != NULL && i < sw->fab->n_switches; i++)
		if (sw->fab->sw[i].has_spray_match)
			need = EMU_PARSE_FULL;
	for (i = 0; i < sw->n_stages; i++) {
		const struct emu_stage_ops *ops = sw->stages[i].ops;
		enum emu_parse_need n;

		if (ops == &emu_stage_parse)
			continue; /* the writer */
		n = ops->parse_need != NULL ? ops->parse_need(sw->stages[i].priv) : EMU_PARSE_FULL;
		if (n > need)
			need = n;
	}
	for (i = 0; i < sw->n_stages; i++)
		if (sw->stages[i].ops == &emu_stage_parse)
			emu_stage_parse_need(sw->stages[i].priv, need);
}

/* Traces are written when a stage reads them (ops->reads_trace) or emu_switch_want_trace(). */
static void
emu_switch_choose_trace(struct emu_switch *sw)
{
	unsigned int i;

	for (i = 0; i < sw->n_stages; i++)
		if (sw->stages[i].ops->reads_trace != NULL &&
		    sw->stages[i].ops->reads_trace(sw->stages[i].priv))
			sw->trace = true;
	emu_tm_set_trace(sw->tm, sw->trace);
}

void
emu_switch_want_trace(struct emu_switch *sw)
{
	sw->trace = true;
	emu_tm_set_trace(sw->tm, true);
}

struct emu_switch *
emu_switch_create(struct emu_pipeline *pl, struct rte_mempool *pool, uint64_t seed,
		  struct emu_err *err)
{
	return emu_switch_create_replica(pl, pool, seed, NULL, err);
}

struct emu_switch *
emu_switch_create_replica(struct emu_pipeline *pl, struct rte_mempool *pool, uint64_t seed,
			  struct emu_switch *primary, struct emu_err *err)
{
	struct emu_switch *sw;

	sw = rte_zmalloc("emu_switch", sizeof(*sw), RTE_CACHE_LINE_SIZE);
	if (sw == NULL) {
		emu_err_setrc(err, -ENOMEM, "out of memory allocating the switch");
		return NULL;
	}
	sw->pl = pl;
	sw->pool = pool;
	sw->primary = primary;
	pthread_mutex_init(&sw->snap_mu, NULL);
	sw->n_ports = pl->n_ports;
	sw->emit.pkts = sw->emit_pkts;
	sw->emit.ports = sw->emit_ports;
	sw->emit.cap = EMU_EMIT_CAP;
	sw->emit.pool = pool;
	if (emu_switch_add_stages(sw, "ingress", false, seed, err) != 0)
		goto fail;
	sw->n_ingress = sw->n_stages;
	if (emu_switch_add_stages(sw, "egress", true, seed, err) != 0)
		goto fail;
	sw->tm = emu_tm_create(&pl->tm, err);
	if (sw->tm == NULL)
		goto fail;
	emu_rng_seed(&sw->tm_rng, seed, EMU_TM_RNG_STREAM);
	sw->seed = seed;
	sw->tm_reason_base = sw->n_reasons;
	sw->n_reasons += pl->tm.n_ports * EMU_TM_CTR_MAX; /* the real ports and fabric links */
	if (emu_switch_fabric_init(sw, err) != 0)
		goto fail;
	emu_tm_set_dropper(sw->tm, &sw->dropper, sw->tm_reason_base);
	sw->incast_reason_base = sw->n_reasons;
	sw->n_reasons += EMU_MAX_INCAST * EMU_INCAST_CTR_MAX;
	sw->run_reason_base = sw->n_reasons;
	sw->n_reasons += EMU_RUN_CTR_MAX;
	if (emu_switch_incast_init(sw, err) != 0)
		goto fail;
	emu_switch_choose_parse(sw);
	emu_switch_choose_trace(sw);
	sw->settings = emu_switch_settings_snapshot(sw);
	if (sw->settings == NULL) {
		emu_err_setrc(err, -ENOMEM, "out of memory reading the switch's settings");
		goto fail;
	}
	return sw;
fail:
	emu_switch_free(sw);
	return NULL;
}

void
emu_switch_free(struct emu_switch *sw)
{
	unsigned int i;

	if (sw == NULL)
		return;
	free(sw->snap);
	json_decref(sw->settings);
	emu_switch_fabric_free(sw);
	for (i = 0; i < EMU_MAX_PORTS; i++)
		rte_pktmbuf_free_bulk(sw->tx[i].pkts, sw->tx[i].n);
	emu_tm_free(sw->tm);
	emu_switch_incast_free(sw);
	for (i = 0; i < sw->n_stages; i++) {
		struct emu_stage_inst *st = &sw->stages[i];

		if (st->priv != NULL && st->ops->free != NULL)
			st->ops->free(st->priv);
		rte_free(st->priv);
		rte_free(st->ctr);
	}
	rte_free(sw);
}

void
emu_switch_offer_program(struct emu_switch *sw, struct emu_program *prog)
{
	__atomic_store_n(&sw->pending_prog, prog, __ATOMIC_RELEASE);
}

bool
emu_switch_program_taken(const struct emu_switch *sw, struct emu_program **retired)
{
	if (__atomic_load_n(&sw->pending_prog, __ATOMIC_ACQUIRE) != NULL)
		return false;
	*retired = ((struct emu_switch *)(uintptr_t)sw)->retired_prog;
	((struct emu_switch *)(uintptr_t)sw)->retired_prog = NULL;
	return true;
}

void
emu_switch_set_program(struct emu_switch *sw, struct emu_program *prog, uint64_t t0_ns)
{
	unsigned int i;

	sw->prog = prog;
	sw->prog_t0_ns = t0_ns;
	/* the pipeline's enabled sources start at time zero of the run */
	for (i = 0; i < sw->n_incast; i++)
		emu_switch_incast_start(sw, i, t0_ns);
}

/* Apply typed action @p a at @p now_ns: validated when it was compiled, it cannot fail. */
static void
emu_switch_apply(struct emu_switch *sw, const struct emu_action *a, uint64_t now_ns)
{
	struct emu_stage_inst *st;

	if (a->target == EMU_TARGET_TM) {
		emu_tm_apply(sw->tm, a->index, &a->set, now_ns, &sw->tm_rng);
		emu_switch_fabric_touch(sw, a->index);
	} else if (a->target == EMU_TARGET_STAGE) {
		st = &sw->stages[a->index];
		st->ops->apply(st->priv, &a->set);
	} else {
		emu_switch_incast_apply(sw, a->index, &a->set, now_ns);
	}
}

unsigned int
emu_switch_apply_due(struct emu_switch *sw, struct emu_program *prog, uint64_t rel_ns,
		     uint64_t now_ns)
{
	unsigned int n = 0;

	while (prog->next < prog->n && prog->actions[prog->next].at_ns <= rel_ns) {
		emu_switch_apply(sw, &prog->actions[prog->next++], now_ns);
		n++;
	}
	return n;
}

/* The switch's events outside the TM: TX staging, stages' due times, the profile, incast. */
static uint64_t
emu_switch_next_other_ns(const struct emu_switch *sw, uint64_t next)
{
	uint64_t rel;
	unsigned int i;

	for (i = 0; i < sw->n_ports; i++)
		if (sw->tx[i].n > 0)
			next = RTE_MIN(next, sw->last_now_ns);
	for (i = 0; i < sw->n_stages; i++)
		if (sw->stages[i].ops->next_due_ns != NULL)
			next = RTE_MIN(next, sw->stages[i].ops->next_due_ns(sw->stages[i].priv));
	if (sw->prog != NULL) {
		rel = emu_program_next_ns(sw->prog);
		if (rel != UINT64_MAX)
			next = RTE_MIN(next, sw->prog_t0_ns + rel);
	}
	for (i = 0; i < sw->n_incast; i++)
		if (!sw->incast[i].foreign)
			next = RTE_MIN(next, sw->incast[i].s.next_ns);
	return next;
}

uint64_t
emu_switch_next_event_ns(const struct emu_switch *sw)
{
	uint64_t next;
	unsigned int i;

	if (sw->fab == NULL || sw->fab->levels_exact) {
		next = emu_tm_next_event_ns(sw->tm); /* the ports and every link */
	} else {
		/* the links' events as the fabric keeps them (taken in time order) */
		next = UINT64_MAX;
		for (i = 0; i < sw->n_ports; i++)
			next = RTE_MIN(next, emu_tm_port_next_event_ns(sw->tm, (uint16_t)i));
		for (i = 0; i < sw->fab->n_links; i++)
			next = RTE_MIN(next, sw->fab_ev[i]);
	}
	return emu_switch_next_other_ns(sw, next);
}

uint64_t
emu_switch_next_change_ns(const struct emu_switch *sw, uint64_t *wire_ns, unsigned int *n_wire)
{
	/* A packet leaving a port's delay line goes straight to the port when nothing runs
	 * between: no egress stage, no incast source (whose frames are absorbed or answered as
	 * they leave), no fabric (a link's departure is the next hop's arrival), one worker. */
	if (sw->fab != NULL || sw->n_stages != sw->n_ingress || sw->n_incast != 0 ||
	    sw->any_egress_release || sw->n_workers > 1) {
		*wire_ns = UINT64_MAX;
		*n_wire = 0;
		return emu_switch_next_event_ns(sw);
	}
	return emu_switch_next_other_ns(sw, emu_tm_next_change_ns(sw->tm, sw->n_ports, wire_ns,
								 n_wire));
}

static uint64_t
emu_switch_stage_held(const struct emu_switch *sw)
{
	uint64_t held = 0;
	unsigned int i;

	for (i = 0; i < sw->n_stages; i++)
		if (sw->stages[i].ops->held != NULL)
			held += sw->stages[i].ops->held(sw->stages[i].priv);
	return held;
}

uint64_t
emu_switch_held(const struct emu_switch *sw)
{
	uint64_t held = emu_tm_held(sw->tm) + emu_switch_stage_held(sw);
	unsigned int i;

	if (sw->n_workers > 1)
		held += emu_switch_handoff_staged(sw);

	for (i = 0; i < sw->n_ports; i++)
		held += sw->tx[i].n;
	return held;
}

void
emu_switch_publish_clock(struct emu_switch *sw, uint64_t now_ns)
{
	unsigned int i;

	if (!sw->any_clock)
		return;
	for (i = 0; i < sw->n_stages; i++)
		if (sw->stages[i].ops->clock != NULL)
			sw->stages[i].ops->clock(sw->stages[i].priv, now_ns);
}

void
emu_switch_service(struct emu_switch *sw, bool final)
{
	unsigned int i;

	for (i = 0; i < sw->n_stages; i++)
		if (sw->stages[i].ops->service != NULL)
			sw->stages[i].ops->service(sw->stages[i].priv, final);
}

void
emu_switch_discard_held(struct emu_switch *sw)
{
	struct rte_mbuf *burst[EMU_BURST];
	struct emu_burst_ctx ctx;
	unsigned int i;
	uint16_t n;

	/* Stages that hold packets (delay lines) hand them all over as if their clock ran out;
	 * their own counters stay as they were (the scratch counters are thrown away). */
	for (i = 0; i < sw->n_stages; i++) {
		struct emu_stage_inst *st = &sw->stages[i];

		if (st->ops->release == NULL)
			continue;
		memset(&ctx, 0, sizeof(ctx));
		ctx.now_ns = UINT64_MAX;
		ctx.rng = &st->rng;
		ctx.emit = &sw->emit;
		ctx.ctr = calloc(st->ops->n_ctr ? st->ops->n_ctr : 1, sizeof(*ctx.ctr));
		ctx.drop = &sw->dropper;
		ctx.reason_base = st->reason_base;
		if (ctx.ctr == NULL)
			continue; /* still held: the conservation line says so */
		while ((n = st->ops->release(st->priv, burst, EMU_BURST, &ctx)) > 0)
			emu_switch_drop_bulk(sw, burst, n, EMU_RUN_CTR_DROP_DISCARDED_AT_EXIT);
		free(ctx.ctr);
	}

	emu_switch_fabric_discard(sw);
	for (i = 0; i < sw->n_ports; i++) {
		emu_switch_drop_bulk(sw, sw->tx[i].pkts, sw->tx[i].n,
				     EMU_RUN_CTR_DROP_DISCARDED_AT_EXIT);
		sw->tx[i].n = 0;
		/* Drain the TM as if its clock ran out. */
		while ((n = emu_tm_dequeue(sw->tm, i, UINT64_MAX / 2, burst, EMU_BURST,
					   &sw->tm_rng)) > 0)
			emu_switch_drop_bulk(sw, burst, n, EMU_RUN_CTR_DROP_DISCARDED_AT_EXIT);
	}
}
