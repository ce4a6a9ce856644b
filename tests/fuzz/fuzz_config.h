/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Shared by the configuration fuzz targets (fuzz_pipeline, fuzz_profile): the loaders build
 * real switches, whose stages take memory from DPDK (rte_zmalloc, rings, capture pools), so
 * EAL is started once, in LLVMFuzzerInitialize(), with --no-huge --no-pci --no-shconf, a
 * 512 MB heap and a --file-prefix unique to the process; its runtime directory is emptied and
 * removed right after start (no secondary process ever attaches), so a crash, an abort or
 * libFuzzer's fork mode leaves nothing in /var/run/dpdk. Nothing else is shared between inputs except the packet pool and, for fuzz_profile,
 * the switches built once from the shipped pipelines.
 */
#ifndef ROCEMU_FUZZ_CONFIG_H
#define ROCEMU_FUZZ_CONFIG_H

#include <dirent.h>
#include <limits.h>
#include <stdbool.h>
#include <unistd.h>

#include <jansson.h>
#include <rte_eal.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>

#include "lib/base/emu_err.h"
#include "lib/stage/emu_stage.h"
#include "lib/switch/emu_switch.h"
#include "fuzz_common.h"
#include "lib/base/emu_rundir.h"

#ifndef ROCEMU_SOURCE_DIR
#define ROCEMU_SOURCE_DIR "."
#endif

int LLVMFuzzerInitialize(int *argc, char ***argv);

/*
 * Pipelines whose TM needs more mbufs than this are refused by the target before any stage is
 * built. They are valid documents today (issue 11, item 3: a delay line of 10 s at 100 Gb/s
 * asks for gigabytes), and the memory ceiling that must refuse them before allocating belongs
 * to the loader itself; until it exists the fuzzer would spend its time in calloc() and stop
 * on libFuzzer's malloc limit instead of finding anything else.
 */
#define FUZZ_MAX_MBUFS (1u << 20)

static struct rte_mempool *fuzz_pool;

static void
fuzz_eal_cleanup(void)
{
	rte_eal_cleanup();
}


static void
fuzz_eal_init(const char *prog)
{
	char prefix[64];
	char *argv[] = { (char *)(uintptr_t)prog, "--no-huge", "--no-pci", "--no-shconf", prefix,
			 "--no-telemetry", "-l", "0", "--log-level=*:crit", "-m", "512", NULL };
	struct emu_err err;

	snprintf(prefix, sizeof(prefix), "--file-prefix=%s_%d", prog, (int)getpid());
	if (rte_eal_init((int)RTE_DIM(argv) - 1, argv) < 0) {
		fprintf(stderr, "%s: EAL initialisation failed\n", prog);
		exit(1);
	}
	emu_runtime_dir_remove(rte_eal_get_runtime_dir());
	atexit(fuzz_eal_cleanup);
	fuzz_pool = emu_pool_create("fuzz_pool", 4096, 2048 + RTE_PKTMBUF_HEADROOM, 0, &err);
	if (fuzz_pool == NULL) {
		fprintf(stderr, "%s: %s\n", prog, err.msg);
		exit(1);
	}
}

/*
 * Every member named "file" that holds a string is pointed at /dev/null: a capture stage
 * opens its file when the switch is built, and a mutated path must not make the fuzzer
 * (often run as root) write anywhere. What is fuzzed is everything else; the file path
 * itself is an output path checked by the app.
 */
static void
fuzz_json_no_files(json_t *j, unsigned int depth)
{
	const char *key;
	json_t *v;
	size_t i;

	if (depth > 64)
		return;
	if (json_is_array(j)) {
		json_array_foreach(j, i, v)
			fuzz_json_no_files(v, depth + 1);
		return;
	}
	if (!json_is_object(j))
		return;
	json_object_foreach(j, key, v) {
		if (strcmp(key, "file") == 0 && json_is_string(v))
			json_string_set(v, "/dev/null");
		else
			fuzz_json_no_files(v, depth + 1);
	}
}

/* DPDK heap bytes in use on socket 0: a refused or freed switch must give back all it took. */
static size_t
fuzz_heap_used(void)
{
	struct rte_malloc_socket_stats s;

	FUZZ_CHECK(rte_malloc_get_socket_stats(0, &s) == 0);
	return s.heap_allocsz_bytes;
}

/* A refusal is a negative errno with a message, never a silent failure. */
#define FUZZ_CHECK_REFUSAL(rc, err) do { \
		FUZZ_CHECK((rc) < 0); \
		FUZZ_CHECK((err).msg[0] != '\0'); \
		FUZZ_CHECK(memchr((err).msg, '\0', sizeof((err).msg)) != NULL); \
	} while (0)

#endif /* ROCEMU_FUZZ_CONFIG_H */
