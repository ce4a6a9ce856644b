/* SPDX-License-Identifier: BSD-3-Clause */
/* Shared by the lib/proto fuzz targets: a check that aborts (libFuzzer reports the input). */
#ifndef ROCE_FUZZ_COMMON_H
#define ROCE_FUZZ_COMMON_H

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FUZZ_CHECK(x) do { \
		if (!(x)) { \
			fprintf(stderr, "%s:%d: invariant violated: %s\n", __FILE__, __LINE__, #x); \
			abort(); \
		} \
	} while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#endif /* ROCE_FUZZ_COMMON_H */
