/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * For targets whose code under test reads a file by path (rocestat's reader and parsers): the
 * input in an anonymous memory file, named /proc/self/fd/N. Nothing touches the disk.
 */
#ifndef ROCEMU_FUZZ_FILE_H
#define ROCEMU_FUZZ_FILE_H

#include <sys/mman.h>
#include <unistd.h>

#include "fuzz_common.h"

/* Returns the descriptor (close it after use) and the path in @p path, or -1. */
static inline int
fuzz_file(const uint8_t *data, size_t size, char *path, size_t path_len)
{
	int fd = memfd_create("fuzz", MFD_CLOEXEC);
	size_t off = 0;

	if (fd < 0)
		return -1;
	while (off < size) {
		ssize_t n = write(fd, data + off, size - off);

		if (n <= 0) {
			close(fd);
			return -1;
		}
		off += (size_t)n;
	}
	snprintf(path, path_len, "/proc/self/fd/%d", fd);
	return fd;
}

#endif /* ROCEMU_FUZZ_FILE_H */
