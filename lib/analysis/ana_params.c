/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rocestat's --dcqcn files: DCQCN parameters in NVIDIA's names (as the files of
 * /sys/class/net/IF/ecn/roce_rp and roce_np, debugfs cc_params, or a JSON object), into
 * lib/dcqcn's struct dcqcn_params (ana_dcqcn_load(), ana.h).
 */
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "ana_internal.h"

/* ---- parameter files in NVIDIA's names ---- */

struct ana_pname {
	const char *name;
	int kind; /* 0 us->ns, 1 bytes, 2 count, 3 Mb/s, 4 percent, 5 /1024 g, 6 /1024 alpha,
		   * 7 bool, 8 accepted and not modelled, 9 must be 0 */
	size_t off;
};

/* Upper bounds of times (1000 s) and byte counters (1 TB): far beyond any NIC's setting */
#define ANA_PARAM_MAX_US 1e9
#define ANA_PARAM_MAX_BYTES 1e12

#define OFF(f) offsetof(struct dcqcn_params, f)
static const struct ana_pname ana_pnames[] = {
	{ "rpg_time_reset", 0, OFF(rpg_time_reset_ns) },
	{ "rpg_byte_reset", 1, OFF(rpg_byte_reset) },
	{ "rpg_threshold", 2, OFF(rpg_threshold) },
	{ "rpg_ai_rate", 3, OFF(rpg_ai_rate_mbps) },
	{ "rpg_hai_rate", 3, OFF(rpg_hai_rate_mbps) },
	{ "rpg_min_dec_fac", 4, OFF(rpg_min_dec_fac_pct) },
	{ "rpg_min_rate", 3, OFF(rpg_min_rate_mbps) },
	{ "rpg_gd", 8, 0 },
	{ "rpg_max_rate", 8, 0 },
	{ "rate_to_set_on_first_cnp", 9, 0 },
	{ "dce_tcp_g", 5, OFF(g) },
	{ "dce_tcp_rtt", 0, OFF(alpha_period_ns) },
	{ "rate_reduce_monitor_period", 0, OFF(rate_reduce_monitor_period_ns) },
	{ "initial_alpha_value", 6, OFF(initial_alpha) },
	{ "clamp_tgt_rate", 7, OFF(clamp_tgt_rate) },
	{ "clamp_tgt_rate_after_time_inc", 7, OFF(clamp_tgt_rate_after_time_inc) },
	{ "min_time_between_cnps", 0, OFF(min_time_between_cnps_ns) },
	{ "cnp_dscp", 8, 0 },
	{ "cnp_802p_prio", 8, 0 },
	{ "cnp_prio", 8, 0 },
	{ "enable", 8, 0 },
	{ "line_rate_mbps", 3, OFF(line_rate_mbps) },
};
#undef OFF

static const struct ana_pname *
ana_pname_find(const char *raw)
{
	char buf[96];
	const char *n = raw, *slash = strrchr(raw, '/');
	unsigned int i, pass;

	if (slash != NULL)
		n = slash + 1;
	for (pass = 0; pass < 3; pass++) {
		if (pass == 0)
			snprintf(buf, sizeof(buf), "%s", n);
		else if (pass == 1 && strncmp(n, "rp_", 3) == 0)
			snprintf(buf, sizeof(buf), "rpg_%s", n + 3);
		else if (pass == 2 && (strncmp(n, "rp_", 3) == 0 || strncmp(n, "np_", 3) == 0))
			snprintf(buf, sizeof(buf), "%s", n + 3);
		else
			continue;
		for (i = 0; i < sizeof(ana_pnames) / sizeof(ana_pnames[0]); i++)
			if (strcmp(ana_pnames[i].name, buf) == 0)
				return &ana_pnames[i];
	}
	return NULL;
}

static int
ana_pset(struct dcqcn_params *p, const char *where, const char *name, double v, char *err,
	 size_t err_len)
{
	const struct ana_pname *d = ana_pname_find(name);
	char *b = (char *)p;

	if (d == NULL) {
		snprintf(err, err_len, "%s: unknown DCQCN parameter '%s' (NVIDIA names: rpg_ai_rate, "
			 "rp_time_reset, dce_tcp_g, ...)", where, name);
		return -EINVAL;
	}
	if (!isfinite(v) || v < 0) {
		snprintf(err, err_len, "%s: %s: must be a number >= 0", where, name);
		return -EINVAL;
	}
	switch (d->kind) {
	case 0:
		if (v == 0 && strcmp(d->name, "min_time_between_cnps") != 0) {
			snprintf(err, err_len, "%s: %s: must be > 0 us", where, name);
			return -EINVAL;
		}
		/* converting a double beyond 2^64 to an integer is undefined (fuzz_dcqcn) */
		if (v > ANA_PARAM_MAX_US) {
			snprintf(err, err_len, "%s: %s: must be at most %.0f us, got %g", where,
				 name, ANA_PARAM_MAX_US, v);
			return -EINVAL;
		}
		/* a positive time under half a nanosecond would round to 0 (fuzz_dcqcn) */
		if ((uint64_t)(v * 1000 + 0.5) == 0 && strcmp(d->name, "min_time_between_cnps") != 0) {
			snprintf(err, err_len, "%s: %s: must be at least 0.001 us, got %g", where,
				 name, v);
			return -EINVAL;
		}
		*(uint64_t *)(b + d->off) = (uint64_t)(v * 1000 + 0.5);
		break;
	case 1:
		if (v > ANA_PARAM_MAX_BYTES) {
			snprintf(err, err_len, "%s: %s: must be at most %.0f bytes, got %g", where,
				 name, ANA_PARAM_MAX_BYTES, v);
			return -EINVAL;
		}
		*(uint64_t *)(b + d->off) = (uint64_t)v;
		break;
	case 2:
		if (v < 1 || v > 1000) {
			snprintf(err, err_len, "%s: %s: must be 1..1000, got %g", where, name, v);
			return -EINVAL;
		}
		*(uint32_t *)(b + d->off) = (uint32_t)v;
		break;
	case 3:
		*(double *)(b + d->off) = v;
		break;
	case 4:
		if (v > 100) {
			snprintf(err, err_len, "%s: %s: must be 0..100 (%%), got %g", where, name, v);
			return -EINVAL;
		}
		*(uint32_t *)(b + d->off) = (uint32_t)v;
		break;
	case 5:
		if (v > 1024) {
			snprintf(err, err_len, "%s: %s: must be 0..1024, got %g", where, name, v);
			return -EINVAL;
		}
		*(double *)(b + d->off) = (1024.0 - v) / 1024.0;
		break;
	case 6:
		if (v > 1024) {
			snprintf(err, err_len, "%s: %s: must be 0..1024, got %g", where, name, v);
			return -EINVAL;
		}
		*(double *)(b + d->off) = v / 1024.0;
		break;
	case 7:
		if (v != 0 && v != 1) {
			snprintf(err, err_len, "%s: %s: must be 0 or 1, got %g", where, name, v);
			return -EINVAL;
		}
		*(bool *)(b + d->off) = v != 0;
		break;
	case 9:
		if (v != 0) {
			snprintf(err, err_len, "%s: %s: only 0 is modelled, got %g", where, name, v);
			return -EINVAL;
		}
		break;
	default:
		break;
	}
	return 0;
}

int
ana_dcqcn_load(struct dcqcn_params *p, const char *path, char *err, size_t err_len)
{
	FILE *f = fopen(path, "r");
	char line[512];
	int c, rc = 0;
	unsigned int lineno = 0;

	if (f == NULL) {
		snprintf(err, err_len, "--dcqcn %s: %s", path, strerror(errno));
		return -errno;
	}
	do
		c = fgetc(f);
	while (c == ' ' || c == '\n' || c == '\t' || c == '\r');
	if (c == '{') {
		json_error_t je;
		json_t *root, *v;
		const char *k;

		rewind(f);
		root = json_loadf(f, JSON_REJECT_DUPLICATES, &je);
		fclose(f);
		if (root == NULL || !json_is_object(root)) {
			snprintf(err, err_len, "--dcqcn %s: line %d: %s", path, je.line,
				 root ? "not an object" : je.text);
			json_decref(root);
			return -EINVAL;
		}
		json_object_foreach(root, k, v) {
			char where[600];

			snprintf(where, sizeof(where), "--dcqcn %s: .%s", path, k);
			if (!json_is_number(v)) {
				snprintf(err, err_len, "%s: must be a number", where);
				rc = -EINVAL;
				break;
			}
			rc = ana_pset(p, where, k, json_number_value(v), err, err_len);
			if (rc != 0)
				break;
		}
		json_decref(root);
		return rc;
	}
	rewind(f);
	while (fgets(line, sizeof(line), f) != NULL) {
		char *s = line, *name, *val, *end, *save = NULL, where[600];
		double v;

		lineno++;
		if (strchr(line, '\n') == NULL && !feof(f)) {
			snprintf(err, err_len, "--dcqcn %s: line %u: too long", path, lineno);
			rc = -EINVAL;
			break;
		}
		while (*s == ' ' || *s == '\t')
			s++;
		if (*s == '#' || *s == '\n' || *s == '\r' || *s == '\0')
			continue;
		/* `name value`, `name=value` or grep's `path/name:value` */
		name = strtok_r(s, " \t:=\r\n", &save);
		val = strtok_r(NULL, " \t:=\r\n", &save);
		snprintf(where, sizeof(where), "--dcqcn %s: line %u", path, lineno);
		if (name == NULL || val == NULL) {
			snprintf(err, err_len, "%s: expected `name value`", where);
			rc = -EINVAL;
			break;
		}
		v = strtod(val, &end);
		if (*end != '\0') {
			snprintf(err, err_len, "%s: %s: '%s' is not a number", where, name, val);
			rc = -EINVAL;
			break;
		}
		rc = ana_pset(p, where, name, v, err, err_len);
		if (rc != 0)
			break;
	}
	if (rc == 0 && ferror(f)) {
		snprintf(err, err_len, "--dcqcn %s: read error", path);
		rc = -EIO;
	}
	fclose(f);
	return rc;
}
