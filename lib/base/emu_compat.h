/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef EMU_COMPAT_H
#define EMU_COMPAT_H

/**
 * @file
 * The one place where rocemu's code depends on which DPDK it is built against.
 *
 * Supported: the LTS releases 22.11 (Debian 12), 23.11 (Ubuntu 24.04, RHEL 9) and 24.11
 * (Debian 13), and 25.11. Tested: 22.11 natively (scripts/test.sh); 24.11 in a Debian 13 root
 * (scripts/compat.sh); 23.11 built from source in that root (ROCEMU_COMPAT_DPDK_SRC); 25.11 in
 * a Debian forky root (ROCEMU_COMPAT_SUITE=forky). Each note below names the release that
 * changed an API rocemu uses and what rocemu does about it, read from DPDK's headers per tag.
 *
 * What rocemu uses and did NOT change between 22.11 and 24.11 (checked header by header):
 * - rte_pcapng: not used; rocemu writes pcap and pcapng itself (lib/capture/emu_pcapw.c), so
 *   23.03's rte_pcapng_add_interface() and 23.11's rte_pcapng_copy() (timestamp argument gone,
 *   comment argument added) do not reach it.
 * - telemetry: rte_telemetry_register_cmd(), telemetry_cb, rte_tel_data_start_dict() and
 *   rte_tel_data_add_dict_string() are the same in all three; 24.11 adds
 *   rte_telemetry_register_cmd_arg() (a callback with a context pointer), not needed here.
 *   The integer adders were renamed in 23.03 (rte_tel_data_add_dict_u64 -> _uint, the old
 *   name deprecated): use EMU_TEL_ADD_DICT_UINT() below (the telemetry counters of
 *   app/rocemu/live.c do).
 * - ethdev flow control: struct rte_eth_fc_conf and rte_eth_dev_flow_ctrl_get/set() are
 *   identical in all three.
 * - struct rte_eth_link: 24.11 wraps the fields in a union with an atomic val64; the field
 *   names are unchanged, so zeroing it with memset and reading the fields works everywhere.
 * - mbuf dynfields: not used; the per-packet trace lives in the mbuf private area
 *   (rte_mbuf_to_priv()), which is unchanged.
 *
 * What did change:
 * - 24.11 marks the ethdev query functions __rte_warn_unused_result (rte_eth_link_get(),
 *   rte_eth_link_get_nowait(), rte_eth_dev_info_get(), rte_eth_dev_conf_get(), ...): every call
 *   must test the result (-Werror otherwise). That is right on every version, so the callers
 *   test it; nothing to switch on here.
 * - 24.11 declares rte_malloc()/rte_zmalloc() __rte_malloc __rte_dealloc_free: gcc then warns
 *   when their memory is passed to free() (-Wmismatched-dealloc); pair them with rte_free().
 * - 25.03 turns rte_net_crc_calc() into a call on a context made by rte_net_crc_set_alg():
 *   struct emu_compat_crc and emu_compat_crc32_eth() below work on either API (the unit test
 *   and the benchmark compare rocemu's CRC engine with DPDK's). The context is rte_zmalloc'd,
 *   so from 25.03 on these need EAL started (test_crc starts it; bench_proto does not yet).
 *   With that, rocemu also builds and passes on 25.11 (Debian forky, gcc 16).
 */

#include <errno.h>
#include <stddef.h>
#include <stdint.h>

#include <rte_version.h>

/** True when built against DPDK release year.month or later (e.g. 23, 11). */
#define EMU_DPDK_AT_LEAST(year, month) (RTE_VERSION >= RTE_VERSION_NUM(year, month, 0, 0))

#if !EMU_DPDK_AT_LEAST(22, 11)
#error "rocemu needs DPDK 22.11 or later"
#endif

/* Telemetry integer values: rte_tel_data_add_dict_u64() until 23.03, _uint() since. */
#if EMU_DPDK_AT_LEAST(23, 3)
#define EMU_TEL_ADD_DICT_UINT(d, name, val) rte_tel_data_add_dict_uint((d), (name), (val))
#else
#define EMU_TEL_ADD_DICT_UINT(d, name, val) rte_tel_data_add_dict_u64((d), (name), (val))
#endif

#ifdef _RTE_NET_CRC_H_
/*
 * DPDK's own Ethernet CRC-32 (rte_net_crc: init all ones, final xor), the reference rocemu's
 * CRC engine is tested and benchmarked against. Include <rte_net_crc.h> before this header to
 * get these. Until 25.03 the algorithm is process-wide (rte_net_crc_set_alg(alg)); since then
 * rte_net_crc_set_alg(alg, type) returns a context that rte_net_crc_calc() takes first.
 */

/** An rte_net_crc CRC-32 (Ethernet) context on either API. */
struct emu_compat_crc {
#if EMU_DPDK_AT_LEAST(25, 3)
	struct rte_net_crc *ctx;
#endif
	enum rte_net_crc_alg alg; /**< what was asked for; DPDK falls back to what the CPU has */
};

/**
 * Set up @p c for algorithm @p alg. Before 25.03 this sets DPDK's process-wide algorithm.
 * Returns 0, or -ENOMEM when DPDK cannot allocate the context (25.03 and later).
 */
static inline int
emu_compat_crc_init(struct emu_compat_crc *c, enum rte_net_crc_alg alg)
{
	c->alg = alg;
#if EMU_DPDK_AT_LEAST(25, 3)
	c->ctx = rte_net_crc_set_alg(alg, RTE_NET_CRC32_ETH);
	return c->ctx == NULL ? -ENOMEM : 0;
#else
	rte_net_crc_set_alg(alg);
	return 0;
#endif
}

/** The CRC-32 of @p len bytes at @p data with the context @p c set up by emu_compat_crc_init(). */
static inline uint32_t
emu_compat_crc_calc(const struct emu_compat_crc *c, const void *data, uint32_t len)
{
#if EMU_DPDK_AT_LEAST(25, 3)
	return rte_net_crc_calc(c->ctx, data, len);
#else
	(void)c;
	return rte_net_crc_calc(data, len, RTE_NET_CRC32_ETH);
#endif
}

/** Release what emu_compat_crc_init() took; accepts a context whose init failed. */
static inline void
emu_compat_crc_fini(struct emu_compat_crc *c)
{
#if EMU_DPDK_AT_LEAST(25, 3)
	rte_net_crc_free(c->ctx);
	c->ctx = NULL;
#else
	(void)c;
#endif
}

/**
 * One-shot CRC-32 of @p len bytes with DPDK's default (before 25.03) or scalar algorithm.
 * Returns 0 if the context cannot be allocated (25.03 and later).
 */
static inline uint32_t
emu_compat_crc32_eth(const void *data, uint32_t len)
{
#if EMU_DPDK_AT_LEAST(25, 3)
	struct emu_compat_crc c;
	uint32_t crc;

	if (emu_compat_crc_init(&c, RTE_NET_CRC_SCALAR) != 0)
		return 0;
	crc = emu_compat_crc_calc(&c, data, len);
	emu_compat_crc_fini(&c);
	return crc;
#else
	return rte_net_crc_calc(data, len, RTE_NET_CRC32_ETH);
#endif
}
#endif /* _RTE_NET_CRC_H_ */

#endif /* EMU_COMPAT_H */
