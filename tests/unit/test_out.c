/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lib/base/emu_out: blocks reserved ahead of the writes (fallocate) never show in the file:
 * its size is what was written, the reserved blocks past it are given back at commit and
 * after a failed write; and when the filesystem refuses to reserve (a full 256 KB tmpfs,
 * when this runs as root) the output goes on with plain writes up to the real ENOSPC, the
 * existing file left as it was.
 */
#include <dirent.h>
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "lib/base/emu_out.h"

#define CHUNK (256u << 10)

static char dir[64];
static uint8_t buf[CHUNK];

static void
fill(uint64_t off)
{
	uint32_t i;

	for (i = 0; i < CHUNK; i++)
		buf[i] = (uint8_t)((off + i) * 2654435761u >> 24);
}

/* The first @p len bytes of @p path hold what fill() wrote. */
static void
check_content(const char *path, uint64_t len)
{
	static uint8_t got[CHUNK];
	FILE *f = fopen(path, "rb");
	uint64_t off;

	assert_non_null(f);
	for (off = 0; off < len; off += CHUNK) {
		size_t n = len - off < CHUNK ? (size_t)(len - off) : CHUNK;

		fill(off);
		assert_int_equal(fread(got, 1, n, f), n);
		assert_memory_equal(got, buf, n);
	}
	fclose(f);
}

static void
write_old(const char *path)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs("old\n", f);
	fclose(f);
}

static void
check_old(const char *path)
{
	char got[16] = "";
	FILE *f = fopen(path, "r");

	assert_non_null(f);
	assert_non_null(fgets(got, sizeof(got), f));
	fclose(f);
	assert_string_equal(got, "old\n");
}

/* The one temporary file emu_out left in @p d, or "" when none. */
static void
find_tmp(const char *d, char *path, size_t len)
{
	DIR *dd = opendir(d);
	struct dirent *e;

	path[0] = '\0';
	assert_non_null(dd);
	while ((e = readdir(dd)) != NULL)
		if (strstr(e->d_name, ".rocemu-") != NULL)
			snprintf(path, len, "%s/%s", d, e->d_name);
	closedir(dd);
}

/* 5 MB and an odd tail: reserved ahead, the committed file exactly what was written. */
static void
test_reserve_commit(void **state)
{
	char path[128];
	struct emu_out o;
	struct emu_err err;
	struct stat st;
	uint64_t off, total = 5 * (1u << 20) + 1234;

	(void)state;
	snprintf(path, sizeof(path), "%s/out.bin", dir);
	assert_int_equal(emu_out_open(&o, path, &err), 0);
	for (off = 0; off < total; off += CHUNK) {
		fill(off);
		assert_int_equal(emu_out_write(&o, buf, total - off < CHUNK ? total - off : CHUNK),
				 0);
		if (!o.no_reserve)
			assert_true(o.reserved >= o.bytes); /* ahead of the writes */
	}
	assert_int_equal(emu_out_commit(&o, &err), 0);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_size, total);
	/* the blocks reserved past the end were given back */
	assert_true((uint64_t)st.st_blocks * 512 < total + (64u << 10));
	check_content(path, total);
	unlink(path);
}

/*
 * A write fails with reservation on (the file size limit: EFBIG): the data up to the limit
 * is in the temporary file, the reserved blocks past it given back, the old file kept.
 */
static void
test_reserve_write_fails(void **state)
{
	struct rlimit old_lim, lim = { .rlim_cur = 3u << 20, .rlim_max = RLIM_INFINITY };
	char path[128], tmp[512];
	struct emu_out o;
	struct emu_err err;
	struct stat st;
	uint64_t off;
	int rc = 0;

	(void)state;
	snprintf(path, sizeof(path), "%s/limited.bin", dir);
	write_old(path);
	assert_int_equal(emu_out_open(&o, path, &err), 0);
	signal(SIGXFSZ, SIG_IGN);
	assert_int_equal(getrlimit(RLIMIT_FSIZE, &old_lim), 0);
	lim.rlim_max = old_lim.rlim_max;
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &lim), 0);
	for (off = 0; rc == 0 && off < (8u << 20); off += CHUNK) {
		fill(off);
		rc = emu_out_write(&o, buf, CHUNK);
	}
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &old_lim), 0);
	assert_int_equal(rc, -EFBIG);
	assert_int_equal(o.bytes, 3u << 20);
	assert_int_not_equal(emu_out_commit(&o, &err), 0);
	assert_non_null(strstr(err.msg, "File too large"));
	check_old(path);
	find_tmp(dir, tmp, sizeof(tmp));
	assert_true(tmp[0] != '\0');
	assert_int_equal(stat(tmp, &st), 0);
	assert_int_equal(st.st_size, 3u << 20);
	assert_true((uint64_t)st.st_blocks * 512 < (3u << 20) + (64u << 10));
	check_content(tmp, 3u << 20);
	unlink(tmp);
	unlink(path);
}

/*
 * A 256 KB tmpfs: the first reservation (1 MB) is refused, the writes go on without it up
 * to the real ENOSPC, and every byte before it is in the temporary file.
 */
static void
test_reserve_refused(void **state)
{
	char mnt[128], path[160], tmp[512];
	struct emu_out o;
	struct emu_err err;
	struct stat st;
	uint64_t off;
	int rc = 0;

	(void)state;
	snprintf(mnt, sizeof(mnt), "%s/small", dir);
	assert_int_equal(mkdir(mnt, 0700), 0);
	if (mount("tmpfs", mnt, "tmpfs", 0, "size=256k") != 0) {
		rmdir(mnt);
		/* not root: tests/robust's full disk needs root too */
		printf("SKIP (part): cannot mount a 256 KB tmpfs (needs root): the refused "
		       "reservation is not tested\n");
		skip();
	}
	snprintf(path, sizeof(path), "%s/out.bin", mnt);
	write_old(path);
	assert_int_equal(emu_out_open(&o, path, &err), 0);
	for (off = 0; rc == 0 && off < (1u << 20); off += 4096) {
		fill(off);
		rc = emu_out_write(&o, buf, 4096);
	}
	assert_true(o.no_reserve);
	assert_int_equal(rc, -ENOSPC);
	assert_true(o.bytes > (128u << 10));
	assert_int_not_equal(emu_out_commit(&o, &err), 0);
	assert_non_null(strstr(err.msg, "No space left on device"));
	check_old(path);
	find_tmp(mnt, tmp, sizeof(tmp));
	assert_true(tmp[0] != '\0');
	assert_int_equal(stat(tmp, &st), 0);
	assert_int_equal((uint64_t)st.st_size, o.bytes);
	check_content(tmp, o.bytes);
	assert_int_equal(umount(mnt), 0);
	rmdir(mnt);
}

/* A failed assertion must not leave the tmpfs mounted. */
static int
teardown(void **state)
{
	char mnt[128];

	(void)state;
	snprintf(mnt, sizeof(mnt), "%s/small", dir);
	umount2(mnt, MNT_DETACH);
	rmdir(mnt);
	return 0;
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_reserve_commit),
		cmocka_unit_test(test_reserve_write_fails),
		cmocka_unit_test_teardown(test_reserve_refused, teardown),
	};
	int rc;

	snprintf(dir, sizeof(dir), "/tmp/test_out_XXXXXX");
	if (mkdtemp(dir) == NULL)
		return 1;
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	rmdir(dir);
	return rc;
}
