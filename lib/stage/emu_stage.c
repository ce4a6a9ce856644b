/* SPDX-License-Identifier: BSD-3-Clause */
/* Helpers for stage init() functions. */
#include <errno.h>

#include "lib/base/emu_json.h"
#include "lib/stage/emu_stage.h"

const char *const emu_stage_extra_names[] = { "type", "name", NULL };

int
emu_stage_port_mask(const json_t *cfg, const struct emu_stage_env *env, const char *key,
		    uint32_t *mask, struct emu_err *err)
{
	char path[EMU_JSON_PATH_LEN], p2[EMU_JSON_PATH_LEN];
	const json_t *ports = json_object_get(cfg, key), *v;
	size_t i;
	int port;

	*mask = UINT32_MAX;
	if (ports == NULL)
		return 0;
	emu_json_path(path, sizeof(path), env->path, key);
	if (emu_json_expect_array(ports, path, err) != 0)
		return -EINVAL;
	if (json_array_size(ports) == 0) /* a stage for no port: a mistake */
		return emu_err_set(err, "%s: must name at least one port; omit it for all ports",
				   path);
	*mask = 0;
	json_array_foreach(ports, i, v) {
		emu_json_path_idx(p2, sizeof(p2), path, i);
		if (!json_is_string(v))
			return emu_err_set(err, "%s: must be a port name, got %s", p2,
					   emu_json_type_name(v));
		port = emu_stage_env_port(env, json_string_value(v));
		if (port < 0)
			return emu_err_set(err, "%s: no port named \"%s\"", p2, json_string_value(v));
		*mask |= 1u << port;
	}
	return 0;
}

int
emu_stage_env_port(const struct emu_stage_env *env, const char *name)
{
	unsigned int i;

	for (i = 0; i < env->n_ports; i++)
		if (strcmp(env->port_names[i], name) == 0)
			return (int)i;
	return -1;
}
