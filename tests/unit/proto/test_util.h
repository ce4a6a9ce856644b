/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Test glue for tests/unit/proto: cmocka when it is installed, otherwise a minimal stand-in
 * with the same names that aborts (non-zero exit) on the first failed assertion.
 * Also a tiny pcap reader/writer so that the tests need nothing but this file.
 */
#ifndef ROCE_TEST_UTIL_H
#define ROCE_TEST_UTIL_H

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pcap/pcap.h>

#ifdef ROCE_TEST_CMOCKA
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#else
struct CMUnitTest {
	const char *name;
	void (*fn)(void **state);
};
#define cmocka_unit_test(f) { #f, f }
#define ROCE_TFAIL(...) do { \
		fprintf(stderr, "%s:%d: FAILED: ", __FILE__, __LINE__); \
		fprintf(stderr, __VA_ARGS__); \
		fputc('\n', stderr); \
		abort(); \
	} while (0)
#define assert_true(x) do { if (!(x)) ROCE_TFAIL("%s", #x); } while (0)
#define assert_false(x) do { if (x) ROCE_TFAIL("!(%s)", #x); } while (0)
#define assert_int_equal(a, b) do { \
		uintmax_t a_ = (uintmax_t)(a), b_ = (uintmax_t)(b); \
		if (a_ != b_) \
			ROCE_TFAIL("%s == %s: 0x%jx != 0x%jx", #a, #b, a_, b_); \
	} while (0)
#define assert_int_not_equal(a, b) do { \
		if ((uintmax_t)(a) == (uintmax_t)(b)) \
			ROCE_TFAIL("%s != %s", #a, #b); \
	} while (0)
#define assert_string_equal(a, b) do { \
		if (strcmp((a), (b)) != 0) \
			ROCE_TFAIL("\"%s\" != \"%s\"", (a), (b)); \
	} while (0)
#define assert_memory_equal(a, b, n) do { \
		if (memcmp((a), (b), (n)) != 0) \
			ROCE_TFAIL("memory %s != %s (%zu bytes)", #a, #b, (size_t)(n)); \
	} while (0)
#define assert_non_null(x) assert_true((x) != NULL)
static inline int
roce_run_tests(const struct CMUnitTest *t, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		printf("[ RUN      ] %s\n", t[i].name);
		t[i].fn(NULL);
		printf("[       OK ] %s\n", t[i].name);
	}
	printf("[  PASSED  ] %zu test(s).\n", n);
	return 0;
}
#define cmocka_run_group_tests(t, setup, teardown) \
	roce_run_tests((t), sizeof(t) / sizeof((t)[0]))
#endif

/* A pcap file read whole into memory (with libpcap). */
struct test_pcap_frame {
	uint32_t len;
	uint8_t *data;
};

struct test_pcap {
	uint32_t n;
	struct test_pcap_frame *frames;
};

/* Load a pcap file; aborts with a message on any error (tests must fail loudly). */
static inline void
test_pcap_load(const char *path, struct test_pcap *pc)
{
	char err[PCAP_ERRBUF_SIZE];
	struct pcap_pkthdr *h;
	const u_char *data;
	pcap_t *p = pcap_open_offline(path, err);
	int rc;

	if (p == NULL) {
		fprintf(stderr, "cannot open %s: %s\n", path, err);
		abort();
	}
	pc->n = 0;
	pc->frames = NULL;
	while ((rc = pcap_next_ex(p, &h, &data)) == 1) {
		struct test_pcap_frame *fr;

		pc->frames = realloc(pc->frames, (pc->n + 1) * sizeof(*pc->frames));
		if (pc->frames == NULL)
			abort();
		fr = &pc->frames[pc->n++];
		fr->len = h->caplen;
		fr->data = malloc(h->caplen ? h->caplen : 1);
		if (fr->data == NULL)
			abort();
		memcpy(fr->data, data, h->caplen);
	}
	if (rc != PCAP_ERROR_BREAK) {
		fprintf(stderr, "%s: %s\n", path, pcap_geterr(p));
		abort();
	}
	pcap_close(p);
}

static inline void
test_pcap_free(struct test_pcap *pc)
{
	uint32_t i;

	for (i = 0; i < pc->n; i++)
		free(pc->frames[i].data);
	free(pc->frames);
	pc->frames = NULL;
	pc->n = 0;
}

/* Open a pcap for writing (microsecond, Ethernet). */
static inline FILE *
test_pcap_create(const char *path)
{
	static const uint32_t gh[6] = { 0xa1b2c3d4u, 0x00040002u, 0, 0, 65535, 1 };
	FILE *f = fopen(path, "wb");

	if (f == NULL || fwrite(gh, 4, 6, f) != 6) {
		fprintf(stderr, "cannot write %s\n", path);
		abort();
	}
	return f;
}

static inline void
test_pcap_write(FILE *f, uint32_t ts_us, const uint8_t *frame, uint32_t len)
{
	uint32_t rh[4] = { ts_us / 1000000, ts_us % 1000000, len, len };

	if (fwrite(rh, 4, 4, f) != 4 || fwrite(frame, 1, len, f) != len)
		abort();
}

/* xorshift64*: deterministic test randomness. */
static inline uint64_t
test_rand(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545F4914F6CDD1DULL;
}

#endif /* ROCE_TEST_UTIL_H */
