/* SPDX-License-Identifier: BSD-3-Clause */
#include <string.h>

#include "lib/stages/stages.h"

const struct emu_stage_ops *const emu_stage_registry[] = {
	&emu_stage_parse,
	&emu_stage_forward,
	&emu_stage_capture,
	&emu_stage_mirror,
	&emu_stage_cnp,
	&emu_stage_impair,
	&emu_stage_delay,
	&emu_stage_reorder,
	NULL,
};

const struct emu_stage_ops *
emu_stage_find(const char *type)
{
	unsigned int i;

	if (type == NULL)
		return NULL;
	for (i = 0; emu_stage_registry[i] != NULL; i++)
		if (strcmp(emu_stage_registry[i]->type, type) == 0)
			return emu_stage_registry[i];
	return NULL;
}
