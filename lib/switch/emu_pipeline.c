/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <libgen.h>
#include <stdlib.h>
#include <string.h>

#include <rte_mbuf.h>

#include "lib/base/emu_json.h"
#include "lib/base/emu_keys.h"
#include "lib/switch/emu_schema.h"
#include "lib/tm/emu_tm_keys.h"
#include "lib/switch/emu_switch.h"

#define EMU_MTU_MIN 68
#define EMU_MTU_MAX 9216
#define EMU_MTU_DEFAULT 9216

#define EMU_GUARD_MAX_DESC 65535

static const struct emu_key emu_pipeline_guard_entries[] = {
	EMU_K_INT_DYN("xoff", 1, EMU_GUARD_MAX_DESC,
		      "send XOFF when an RX queue of the port holds this many frames; default: "
		      "half its ring"),
	EMU_K_INT_DYN("xon", 0, EMU_GUARD_MAX_DESC - 1,
		      "send XON when every RX queue of the port holds at most this many; < xoff; "
		      "default: an eighth of the ring"),
};
static const struct emu_key_rule emu_pipeline_guard_rules[] = {
	{ "xoff", NULL, EMU_KEY_LIST("xon"), NULL },
	{ "xon", NULL, EMU_KEY_LIST("xoff"), NULL },
};
static const struct emu_key_table emu_pipeline_guard_table = {
	.title = "ports[].rx_guard",
	.desc = "live mode: pause the port's peer (PFC on its lossless priorities) while rocemu "
		"falls behind on the port's RX ring; off when absent",
	.keys = emu_pipeline_guard_entries, .n_keys = RTE_DIM(emu_pipeline_guard_entries),
	.rules = emu_pipeline_guard_rules, .n_rules = RTE_DIM(emu_pipeline_guard_rules),
};

static const struct emu_key emu_pipeline_port_entries[] = {
	{ .name = "name", .type = EMU_KEY_STR, .required = true,
	  .schema = "{\"pattern\": \"^[A-Za-z0-9_-]{1,31}$\"}",
	  .desc = "the port's name (unique): 1-31 characters of [A-Za-z0-9_-]" },
	EMU_K_STR("dev", NULL, "the DPDK device (an EAL --vdev or PCI address) in live mode"),
	EMU_K_INT("mtu", EMU_MTU_DEFAULT, EMU_MTU_MIN, EMU_MTU_MAX, "L3 MTU (bytes)"),
	EMU_K_OBJ("rx_guard", &emu_pipeline_guard_table,
		  "live mode: PFC out of the port while its RX ring fills; off when absent"),
};
const struct emu_key_table emu_pipeline_port_table =
	EMU_KEY_TABLE("ports[]", "a switch port", emu_pipeline_port_entries);

/* ingress and egress: arrays of stage objects, one schema per stage type (emu_schema.c) */
static const struct emu_key emu_pipeline_entries[] = {
	EMU_K_SCHEMA_URI,
	{ .name = "description", .type = EMU_KEY_STR, .schema = "{\"minLength\": 0}",
	  .desc = "free text" },
	EMU_K_ARR_REQ("ports", EMU_KEY_OBJ, &emu_pipeline_port_table,
		  "{\"minItems\": 1, \"maxItems\": " EMU_KEYS_STR(EMU_MAX_PORTS) "}",
		  "the switch's ports, 1-16"),
	EMU_K_ANY("ingress", "{\"type\": \"array\"}", "stages run on the way in, in order"),
	EMU_K_ANY("egress", "{\"type\": \"array\"}", "stages run on the way out, in order"),
	EMU_K_OBJ("tm", &emu_tm_table, "the traffic manager"),
	{ .name = "mbufs", .type = EMU_KEY_INT, .has_def = true, .imin = 0, .imax = 1 << 26,
	  .schema = "{\"not\": {\"exclusiveMinimum\": 0, \"exclusiveMaximum\": 1024}}",
	  .desc = "packet buffers; 0: derived from the TM, else at least 1024" },
	EMU_K_ARR("incast", EMU_KEY_OBJ, &emu_incast_table,
		  "{\"maxItems\": " EMU_KEYS_STR(EMU_MAX_INCAST) "}",
		  "synthetic incast sources, up to 8"),
	EMU_K_OBJ("fabric", &fab_table, "an emulated fabric between the ports: switches and links"),
};
const struct emu_key_table emu_pipeline_table =
	EMU_KEY_TABLE("rocemu pipeline", "a switch: ports, stages, TM, incast sources",
		      emu_pipeline_entries);
#define T (&emu_pipeline_port_table)

static int
emu_pipeline_port_name_ok(const char *s)
{
	size_t i;

	if (strlen(s) > 31)
		return 0;
	for (i = 0; s[i] != '\0'; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') ||
		      (s[i] >= '0' && s[i] <= '9') || s[i] == '_' || s[i] == '-'))
			return 0;
	return 1;
}

/* ports[i].rx_guard: {} or {xoff, xon} in frames held by one RX queue */
static int
emu_pipeline_guard(const json_t *o, const char *path, struct emu_pipeline_port *p,
		   struct emu_err *err)
{
	const struct emu_key_table *g = &emu_pipeline_guard_table;
	int64_t xoff = 0, xon = 0;
	int rc;

	rc = emu_json_expect_object(o, path, err);
	if (rc == 0)
		rc = emu_keys_check(o, path, g, err);
	if (rc == 0 && json_object_get(o, "xoff") != NULL)
		rc = emu_key_int_req(o, path, g, "xoff", &xoff, err);
	if (rc == 0 && json_object_get(o, "xon") != NULL)
		rc = emu_key_int_req(o, path, g, "xon", &xon, err);
	if (rc != 0)
		return rc;
	if ((json_object_get(o, "xoff") == NULL) != (json_object_get(o, "xon") == NULL))
		return emu_err_set(err, "%s: give both \"xoff\" and \"xon\", or neither (the "
				   "defaults: half and an eighth of the RX ring)", path);
	if (xoff != 0 && xon >= xoff)
		return emu_err_set(err, "%s.xon: must be < xoff (%lld), got %lld", path,
				   (long long)xoff, (long long)xon);
	p->rx_guard = true;
	p->guard_xoff = (uint32_t)xoff;
	p->guard_xon = (uint32_t)xon;
	return 0;
}

/* A guard pauses the port's lossless priorities: it needs some. */
static int
emu_pipeline_guard_check(const struct emu_pipeline *pl, struct emu_err *err)
{
	unsigned int i;

	for (i = 0; i < pl->n_ports; i++)
		if (pl->ports[i].rx_guard && pl->tm.ports[i].lossless_mask == 0)
			return emu_err_set(err, "ports[%u].rx_guard: port %s has no lossless "
					   "priority for its PFC frames to pause (tm.ports[].lossless "
					   "is [])", i, pl->ports[i].name);
	return 0;
}

static int
emu_pipeline_ports(struct emu_pipeline *pl, struct emu_err *err)
{
	const json_t *ports = json_object_get(pl->root, "ports");
	char path[EMU_JSON_PATH_LEN];
	const json_t *o;
	size_t idx;
	unsigned int j;
	int64_t mtu;
	int rc;

	if (ports == NULL)
		return emu_err_set(err, "ports: required key is missing");
	rc = emu_json_expect_array(ports, "ports", err);
	if (rc != 0)
		return rc;
	if (json_array_size(ports) < 1 || json_array_size(ports) > EMU_MAX_PORTS)
		return emu_err_set(err, "ports: must list 1 to %d ports, got %zu", EMU_MAX_PORTS,
				   json_array_size(ports));
	pl->max_mtu = 0;
	json_array_foreach(ports, idx, o) {
		struct emu_pipeline_port *p = &pl->ports[idx];

		emu_json_path_idx(path, sizeof(path), "ports", idx);
		rc = emu_json_expect_object(o, path, err);
		if (rc == 0)
			rc = emu_keys_check(o, path, T, err);
		if (rc == 0)
			rc = emu_key_str(o, path, T, "name", &p->name, err);
		if (rc == 0)
			rc = emu_key_str(o, path, T, "dev", &p->dev, err);
		if (rc == 0)
			rc = emu_key_int(o, path, T, "mtu", &mtu, err);
		if (rc == 0 && json_object_get(o, "rx_guard") != NULL) {
			char gpath[EMU_JSON_PATH_LEN];

			emu_json_path(gpath, sizeof(gpath), path, "rx_guard");
			rc = emu_pipeline_guard(json_object_get(o, "rx_guard"), gpath, p, err);
		}
		if (rc != 0)
			return rc;
		if (!emu_pipeline_port_name_ok(p->name))
			return emu_err_set(err,
					   "%s.name: must be 1-31 characters of [A-Za-z0-9_-], got \"%s\"",
					   path, p->name);
		for (j = 0; j < idx; j++)
			if (strcmp(pl->ports[j].name, p->name) == 0)
				return emu_err_set(err, "%s.name: \"%s\" is already ports[%u]",
						   path, p->name, j);
		p->mtu = (uint32_t)mtu;
		if (p->mtu > pl->max_mtu)
			pl->max_mtu = p->mtu;
		pl->port_names[idx] = p->name;
	}
	pl->n_ports = json_array_size(ports);
	pl->port_names[pl->n_ports] = NULL;
	return 0;
}

static int
emu_pipeline_stage_list(struct emu_pipeline *pl, const char *key, struct emu_err *err)
{
	const json_t *list = json_object_get(pl->root, key);
	char path[EMU_JSON_PATH_LEN];
	const char *type;
	const json_t *o;
	size_t idx;
	int rc;

	if (list == NULL)
		return 0;
	rc = emu_json_expect_array(list, key, err);
	if (rc != 0)
		return rc;
	json_array_foreach(list, idx, o) {
		emu_json_path_idx(path, sizeof(path), key, idx);
		rc = emu_json_expect_object(o, path, err);
		if (rc == 0)
			rc = emu_json_get_str(o, path, "type", true, NULL, &type, err);
		if (rc != 0)
			return rc;
		if (emu_stage_find(type) == NULL) {
			char known[256];
			size_t used = 0;
			unsigned int i;

			known[0] = '\0';
			for (i = 0; emu_stage_registry[i] != NULL && used < sizeof(known); i++)
				used += snprintf(known + used, sizeof(known) - used, "%s%s",
						 i ? ", " : "", emu_stage_registry[i]->type);
			return emu_err_set(err, "%s.type: unknown stage type \"%s\" (known: %s)",
					   path, type, known);
		}
	}
	return 0;
}

/* The fabric's links become TM ports after the real ones; every TM port gets its name. */
static int
emu_pipeline_fabric(struct emu_pipeline *pl, const uint32_t *mtus, struct emu_err *err)
{
	unsigned int i;
	int rc;

	for (i = 0; i < pl->n_ports; i++)
		pl->tm_port_names[i] = pl->port_names[i];
	pl->tm_port_names[pl->n_ports] = NULL;
	rc = fab_cfg_parse(json_object_get(pl->root, "fabric"), pl->n_ports, pl->port_names,
			   mtus, &pl->fabric, err);
	if (rc != 0 || pl->fabric == NULL)
		return rc;
	for (i = 0; i < pl->fabric->n_links; i++) {
		pl->tm.ports[pl->n_ports + i] = pl->fabric->links[i].tm;
		pl->tm_port_names[pl->n_ports + i] = pl->fabric->links[i].name;
	}
	pl->tm.n_ports = pl->n_ports + pl->fabric->n_links;
	pl->tm_port_names[pl->tm.n_ports] = NULL;
	return 0;
}

/* Whether ingress has a parse stage (the stage list was checked: every entry has a type). */
static bool
emu_pipeline_has_parse(const struct emu_pipeline *pl)
{
	const json_t *o;
	size_t idx;

	json_array_foreach(json_object_get(pl->root, "ingress"), idx, o)
		if (strcmp(json_string_value(json_object_get(o, "type")), "parse") == 0)
			return true;
	return false;
}

/*
 * A reorder or cnp stage acts on RoCE fields only a parse stage in ingress fills: without one
 * it would pass every frame through untouched (reorder: no QP, no PSN; cnp: no CE-marked
 * data). Refused, naming the stage.
 */
static int
emu_pipeline_stages_parsed(const struct emu_pipeline *pl, struct emu_err *err)
{
	static const char *const lists[] = { "ingress", "egress" };
	const json_t *o;
	unsigned int l;
	size_t idx;

	if (emu_pipeline_has_parse(pl))
		return 0;
	for (l = 0; l < RTE_DIM(lists); l++)
		json_array_foreach(json_object_get(pl->root, lists[l]), idx, o) {
			const char *type = json_string_value(json_object_get(o, "type"));

			if (strcmp(type, "reorder") == 0 || strcmp(type, "cnp") == 0)
				return emu_err_set(err, "%s[%zu]: a %s stage needs a \"parse\" stage in "
						   "ingress (unparsed, it would pass every frame "
						   "through untouched)", lists[l], idx, type);
		}
	return 0;
}

/*
 * A fabric switch that hashes flows (ecmp), tells them apart (flowlet) or matches them
 * (spray_match) reads fields only a parse stage in ingress fills: without one every flow looks
 * alike and takes one path. Refused where such a switch has a choice of next hops to a leaf.
 */
static int
emu_pipeline_fabric_parsed(const struct emu_pipeline *pl, struct emu_err *err)
{
	const struct fab_cfg *fc = pl->fabric;
	unsigned int s, k;

	if (fc == NULL || emu_pipeline_has_parse(pl))
		return 0;
	for (s = 0; s < fc->n_switches; s++) {
		const struct fab_switch_cfg *sc = &fc->sw[s];
		const json_t *o = json_array_get(json_object_get(json_object_get(pl->root,
							"fabric"), "switches"), s);

		if (sc->mode != FAB_ROUTE_ECMP && sc->mode != FAB_ROUTE_FLOWLET &&
		    !sc->has_spray_match)
			continue;
		for (k = 0; k < pl->n_ports; k++) {
			if (fc->port_leaf[k] == FAB_NONE || fc->n_next[s][fc->port_leaf[k]] <= 1)
				continue;
			if (sc->has_spray_match)
				return emu_err_set(err, "fabric.switches[%u].spray_match: needs a "
						   "\"parse\" stage in ingress (unparsed, it would read "
						   "fields no stage filled)", s);
			return emu_err_set(err, "fabric.switches[%u]%s: route \"%s\"%s needs a "
					   "\"parse\" stage in ingress (unparsed, every flow looks "
					   "alike and takes one path)", s,
					   json_object_get(o, "route") != NULL ? ".route" : "",
					   sc->mode == FAB_ROUTE_ECMP ? "ecmp" : "flowlet",
					   json_object_get(o, "route") != NULL ? "" : " (the default)");
		}
	}
	return 0;
}

/* Incast sources "attach"ed to a fabric leaf: the leaf's index, which must hold real ports. */
static int
emu_pipeline_incast_attach(struct emu_pipeline *pl, struct emu_err *err)
{
	const struct fab_cfg *fc = pl->fabric;
	unsigned int i, s, p;

	for (i = 0; i < pl->n_incast; i++) {
		struct emu_incast_cfg *c = &pl->incast[i];

		if (c->attach == NULL)
			continue;
		if (fc == NULL)
			return emu_err_set(err, "incast[%u].attach: only with a \"fabric\" section",
					   i);
		for (s = 0; s < fc->n_switches && strcmp(fc->sw[s].name, c->attach) != 0; s++)
			;
		if (s == fc->n_switches)
			return emu_err_set(err, "incast[%u].attach: no fabric switch named \"%s\"",
					   i, c->attach);
		for (p = 0; p < pl->n_ports && fc->port_leaf[p] != s; p++)
			;
		if (p == pl->n_ports)
			return emu_err_set(err,
					   "incast[%u].attach: \"%s\" is not a leaf (no port of "
					   "ports[] attaches to it)",
					   i, c->attach);
		if (fc->port_leaf[c->port] == FAB_NONE)
			return emu_err_set(err,
					   "incast[%u].port: \"%s\" is not on a fabric leaf: an "
					   "attached source's frames cross the fabric to it",
					   i, pl->port_names[c->port]);
		c->attach_leaf = (uint16_t)s;
	}
	return 0;
}

int
emu_pipeline_from_json(json_t *root, const char *file, struct emu_pipeline **out,
		       struct emu_err *err)
{
	uint32_t mtus[EMU_MAX_PORTS];
	struct emu_pipeline *pl;
	const char *schema;
	unsigned int i;
	char *tmp;
	int64_t mbufs;
	int rc;

	pl = calloc(1, sizeof(*pl));
	if (pl == NULL)
		return emu_err_setrc(err, -ENOMEM, "out of memory");
	pl->root = json_incref(root);
	pl->file = strdup(file != NULL ? file : "(pipeline)");
	tmp = strdup(pl->file);
	pl->dir = tmp != NULL ? strdup(dirname(tmp)) : NULL;
	free(tmp);
	if (pl->file == NULL || pl->dir == NULL) {
		rc = emu_err_setrc(err, -ENOMEM, "out of memory");
		goto fail;
	}
	rc = emu_json_expect_object(root, "", err);
	if (rc == 0)
		rc = emu_keys_check(root, "", &emu_pipeline_table, err);
	if (rc == 0)
		rc = emu_key_str(root, "", &emu_pipeline_table, "$schema", &schema, err);
	if (rc == 0 && json_object_get(root, "description") != NULL &&
	    !json_is_string(json_object_get(root, "description")))
		rc = emu_err_set(err, "description: must be a string, got %s",
				 emu_json_type_name(json_object_get(root, "description")));
	if (rc == 0)
		rc = emu_pipeline_ports(pl, err);
	if (rc == 0)
		rc = emu_pipeline_stage_list(pl, "ingress", err);
	if (rc == 0)
		rc = emu_pipeline_stage_list(pl, "egress", err);
	if (rc == 0) {
		for (i = 0; i < pl->n_ports; i++)
			mtus[i] = pl->ports[i].mtu;
		rc = emu_tm_cfg_parse(json_object_get(root, "tm"), pl->n_ports, pl->port_names,
				      mtus, &pl->tm, err);
	}
	if (rc == 0)
		rc = emu_pipeline_guard_check(pl, err);
	if (rc == 0)
		rc = emu_pipeline_fabric(pl, mtus, err);
	if (rc == 0)
		rc = emu_pipeline_fabric_parsed(pl, err);
	if (rc == 0)
		rc = emu_pipeline_stages_parsed(pl, err);
	if (rc == 0)
		rc = emu_incast_parse(json_object_get(root, "incast"), pl->n_ports, pl->port_names,
				      mtus, pl->incast, &pl->n_incast, err);
	if (rc == 0)
		rc = emu_incast_check_tm(pl->incast, pl->n_incast, &pl->tm, err);
	if (rc == 0)
		rc = emu_pipeline_incast_attach(pl, err);
	if (rc == 0)
		rc = emu_key_int(root, "", &emu_pipeline_table, "mbufs", &mbufs, err);
	if (rc != 0)
		goto fail;
	if (mbufs != 0 && mbufs < 1024) {
		rc = emu_err_set(err, "mbufs: must be 0 (derive from the TM) or >= 1024, got %lld",
				 (long long)mbufs);
		goto fail;
	}
	pl->mbufs = (uint32_t)mbufs;
	*out = pl;
	return 0;
fail:
	emu_pipeline_free(pl);
	return rc;
}

int
emu_pipeline_load(const char *file, struct emu_pipeline **out, struct emu_err *err)
{
	json_t *root;
	int rc;

	rc = emu_json_load_file(file, &root, err);
	if (rc != 0)
		return rc;
	rc = emu_pipeline_from_json(root, file, out, err);
	json_decref(root);
	return rc;
}

void
emu_pipeline_free(struct emu_pipeline *pl)
{
	if (pl == NULL)
		return;
	fab_cfg_free(pl->fabric);
	json_decref(pl->root);
	free(pl->file);
	free(pl->dir);
	free(pl);
}
