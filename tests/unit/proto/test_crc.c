/* SPDX-License-Identifier: BSD-3-Clause */
/* CRC-32 engine: tables, the three code paths, seeding, and agreement with rte_net_crc. */
#include <unistd.h>

#include <rte_eal.h>
#include <rte_net_crc.h>

#include "lib/base/emu_compat.h"
#include "lib/proto/roce_crc.h"
#include "test_util.h"

static uint32_t
crc_bitwise(uint32_t state, const uint8_t *p, size_t len)
{
	size_t i;
	int k;

	for (i = 0; i < len; i++) {
		state ^= p[i];
		for (k = 0; k < 8; k++)
			state = (state >> 1) ^ (0xEDB88320u & (0u - (state & 1)));
	}
	return state;
}

static void
test_tables(void **state)
{
	unsigned int k, b;

	(void)state;
	for (k = 0; k < 8; k++) {
		for (b = 0; b < 256; b++) {
			uint8_t in[8] = { 0 };

			in[0] = (uint8_t)b;
			/* entry = CRC register after byte b and k zero bytes, from state 0 */
			assert_int_equal(roce_crc32_table_entry(k, b), crc_bitwise(0, in, k + 1));
		}
	}
}

static void
test_check_value(void **state)
{
	(void)state;
	assert_int_equal(roce_crc32("123456789", 9), 0xCBF43926u);
	assert_int_equal(~roce_crc32_update_table(ROCE_CRC32_INIT, "123456789", 9), 0xCBF43926u);
	assert_int_equal(~roce_crc32_update_bytewise(ROCE_CRC32_INIT, "123456789", 9),
		0xCBF43926u);
	assert_int_equal(emu_compat_crc32_eth("123456789", 9), 0xCBF43926u);
}

/* All paths agree with the bitwise definition at every length, alignment and seed. */
static void
test_paths_agree(void **state)
{
	static uint8_t buf[5000 + 16];
	uint64_t s = 12345;
	size_t len, i;

	(void)state;
	for (i = 0; i < sizeof(buf); i++)
		buf[i] = (uint8_t)test_rand(&s);
	for (len = 0; len <= 5000; len += (len < 300 ? 1 : 37)) {
		size_t align = len % 16;
		uint32_t seed = (uint32_t)test_rand(&s);
		uint32_t ref = crc_bitwise(seed, buf + align, len);

		assert_int_equal(roce_crc32_update_bytewise(seed, buf + align, len), ref);
		assert_int_equal(roce_crc32_update_table(seed, buf + align, len), ref);
		assert_int_equal(roce_crc32_update(seed, buf + align, len), ref);
		if (roce_crc32_has_clmul())
			assert_int_equal(roce_crc32_update_clmul(seed, buf + align, len), ref);
		if (roce_crc32_has_vpclmul())
			assert_int_equal(roce_crc32_update_vpclmul(seed, buf + align, len), ref);
		/* split anywhere: the running state carries over */
		if (len > 0) {
			size_t cut = (size_t)(test_rand(&s) % len);
			uint32_t st = roce_crc32_update(seed, buf + align, cut);

			assert_int_equal(roce_crc32_update(st, buf + align + cut, len - cut), ref);
		}
		/* DPDK's one-shot CRC is the same function (init all ones, final inversion) */
		assert_int_equal(emu_compat_crc32_eth(buf + align, (uint32_t)len),
			~crc_bitwise(ROCE_CRC32_INIT, buf + align, len));
	}
	printf("PCLMULQDQ path %s\n", roce_crc32_has_clmul() ? "tested" : "not available");
}

/*
 * The fast paths against the bitwise definition over random lengths 0..9000 (jumbo frames),
 * random misalignments 0..63 and random seeds, every length class of the folding loops
 * (256-byte blocks, 64-byte blocks, 16-byte blocks, the table tail) in many combinations.
 */
static void
test_fast_random(void **state)
{
	static uint8_t buf[9000 + 64];
	uint64_t s = 0x5eed1cc;
	unsigned int i, n_fast = 0;

	(void)state;
	for (i = 0; i < sizeof(buf); i++)
		buf[i] = (uint8_t)test_rand(&s);
	for (i = 0; i < 3000; i++) {
		size_t len = i < 16 ? i * 600 : (size_t)(test_rand(&s) % 9001);
		size_t align = (size_t)(test_rand(&s) % 64);
		uint32_t seed = i % 3 == 0 ? ROCE_CRC32_INIT : (uint32_t)test_rand(&s);
		uint32_t ref = crc_bitwise(seed, buf + align, len);

		assert_int_equal(roce_crc32_update(seed, buf + align, len), ref);
		assert_int_equal(roce_crc32_update_table(seed, buf + align, len), ref);
		if (roce_crc32_has_clmul()) {
			assert_int_equal(roce_crc32_update_clmul(seed, buf + align, len), ref);
			n_fast++;
		}
		if (roce_crc32_has_vpclmul())
			assert_int_equal(roce_crc32_update_vpclmul(seed, buf + align, len), ref);
	}
	printf("random lengths: %u inputs, PCLMULQDQ %s, VPCLMULQDQ %s\n", i,
		n_fast > 0 ? "tested" : "not available",
		roce_crc32_has_vpclmul() ? "tested" : "not available");
}

#if EMU_DPDK_AT_LEAST(25, 3)
/* Since 25.03 rte_net_crc's context comes from rte_zmalloc(), which needs EAL (emu_compat.h). */
static char crc_runtime_dir[256];

static void
crc_eal_cleanup(void)
{
	rte_eal_cleanup();
	if (crc_runtime_dir[0] != '\0')
		rmdir(crc_runtime_dir);
}

static void
crc_eal_init(void)
{
	char prefix[64];
	char *argv[] = { "test_proto_crc", "--no-huge", "--no-pci", "--no-shconf", prefix,
			 "--no-telemetry", "-l", "0", "--log-level=lib.eal:error", "-m", "64", NULL };

	snprintf(prefix, sizeof(prefix), "--file-prefix=test_proto_crc_%d", (int)getpid());
	if (rte_eal_init(11, argv) < 0) {
		fprintf(stderr, "test_proto_crc: EAL init failed\n");
		exit(1);
	}
	snprintf(crc_runtime_dir, sizeof(crc_runtime_dir), "%s", rte_eal_get_runtime_dir());
	atexit(crc_eal_cleanup);
}
#endif

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tables),
		cmocka_unit_test(test_check_value),
		cmocka_unit_test(test_paths_agree),
		cmocka_unit_test(test_fast_random),
	};

#if EMU_DPDK_AT_LEAST(25, 3)
	crc_eal_init();
#endif
	return cmocka_run_group_tests(tests, NULL, NULL);
}
