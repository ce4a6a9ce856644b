/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Fuzz the pipeline loader: the input is a pipeline document. It is parsed as `rocemu` does
 * (jansson, JSON_REJECT_DUPLICATES), checked by emu_pipeline_from_json(), then built twice by
 * emu_switch_create(): once with check_only (what `rocemu check` does) and once for real (what
 * a run does), with EAL up (fuzz_config.h). Checks: every refusal is a negative errno with a
 * message; the real build never accepts what check refused; a build, refused or not, gives
 * back to the DPDK heap every byte it took once the switch is freed.
 */
#include "fuzz_config.h"

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fuzz_eal_init("fuzz_pipeline");
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct emu_pipeline *pl = NULL;
	struct emu_switch *sw;
	struct emu_err err;
	json_error_t jerr;
	bool checked, built;
	size_t heap0;
	json_t *root;
	int rc;

	root = json_loadb((const char *)data, size, JSON_REJECT_DUPLICATES, &jerr);
	if (root == NULL)
		return 0;
	fuzz_json_no_files(root, 0);
	memset(&err, 0, sizeof(err));
	/* a name in the shipped pipelines/ directory: relative table files resolve there */
	rc = emu_pipeline_from_json(root, ROCEMU_SOURCE_DIR "/pipelines/fuzz-input.json", &pl,
				    &err);
	json_decref(root);
	if (rc != 0) {
		FUZZ_CHECK_REFUSAL(rc, err);
		FUZZ_CHECK(pl == NULL);
		return 0;
	}
	FUZZ_CHECK(pl != NULL);
	if (emu_pipeline_mbufs_needed(pl, 1024, 1024) > FUZZ_MAX_MBUFS) {
		emu_pipeline_free(pl);
		return 0;
	}

	heap0 = fuzz_heap_used();
	pl->check_only = true;
	memset(&err, 0, sizeof(err));
	sw = emu_switch_create(pl, fuzz_pool, 1, &err);
	checked = sw != NULL;
	if (sw == NULL)
		FUZZ_CHECK(err.msg[0] != '\0');
	emu_switch_free(sw);
	FUZZ_CHECK(fuzz_heap_used() == heap0);

	pl->check_only = false;
	memset(&err, 0, sizeof(err));
	sw = emu_switch_create(pl, fuzz_pool, 1, &err);
	built = sw != NULL;
	if (sw == NULL)
		FUZZ_CHECK(err.msg[0] != '\0');
	emu_switch_free(sw);
	FUZZ_CHECK(fuzz_heap_used() == heap0);
	/* `rocemu check` must not be stricter than a run: what a run builds, check accepts */
	FUZZ_CHECK(checked || !built);
	emu_pipeline_free(pl);
	return 0;
}
