/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Without libFuzzer: run a fuzz target over every file of its corpus directories (the
 * regression suite of the corpus), so that gcc builds test what clang builds fuzz.
 * Usage: fuzz_<target> DIR|FILE...
 */
#include <dirent.h>
#include <sys/stat.h>

#include "fuzz_common.h"

/* Targets that need set-up (EAL) define it, as libFuzzer lets them. */
int LLVMFuzzerInitialize(int *argc, char ***argv) __attribute__((weak));

static int
run_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf;
	long n;

	if (f == NULL || fseek(f, 0, SEEK_END) != 0 || (n = ftell(f)) < 0 ||
			fseek(f, 0, SEEK_SET) != 0) {
		fprintf(stderr, "cannot read %s\n", path);
		return -1;
	}
	buf = malloc((size_t)n + 1);
	if (buf == NULL || fread(buf, 1, (size_t)n, f) != (size_t)n) {
		fprintf(stderr, "cannot read %s\n", path);
		return -1;
	}
	fclose(f);
	/* an exact-size copy so that ASan sees reads past the input */
	{
		uint8_t *exact = malloc((size_t)n ? (size_t)n : 1);

		if (exact == NULL)
			return -1;
		memcpy(exact, buf, (size_t)n);
		LLVMFuzzerTestOneInput(exact, (size_t)n);
		free(exact);
	}
	free(buf);
	return 0;
}

int
main(int argc, char **argv)
{
	int i, n = 0;

	if (LLVMFuzzerInitialize != NULL)
		LLVMFuzzerInitialize(&argc, &argv);
	for (i = 1; i < argc; i++) {
		struct stat st;
		DIR *d;
		struct dirent *e;

		if (stat(argv[i], &st) != 0) {
			fprintf(stderr, "%s: no such file or directory\n", argv[i]);
			return 1;
		}
		if (!S_ISDIR(st.st_mode)) {
			if (run_file(argv[i]) != 0)
				return 1;
			n++;
			continue;
		}
		d = opendir(argv[i]);
		if (d == NULL)
			return 1;
		while ((e = readdir(d)) != NULL) {
			char path[4096];

			if (e->d_name[0] == '.')
				continue;
			snprintf(path, sizeof(path), "%s/%s", argv[i], e->d_name);
			if (run_file(path) != 0) {
				closedir(d);
				return 1;
			}
			n++;
		}
		closedir(d);
	}
	printf("%d inputs replayed\n", n);
	/* an empty corpus would make this test pass without testing anything */
	return n > 0 ? 0 : 1;
}
