/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef EMU_COMPAT_H
#define EMU_COMPAT_H

/**
 * @file
 * The one place where rocemu's code depends on which DPDK it is built against.
 *
 * Supported: the LTS releases 22.11 (Debian 12), 23.11 (Ubuntu 24.04, RHEL 9) and 24.11
 * (Debian 13); scripts/compat.sh builds and tests 24.11 (and 25.11 with
 * ROCEMU_COMPAT_SUITE=forky), the host build 22.11. Each check below names the release that
 * changed the API and what rocemu does about it, from DPDK's own headers of each tag.
 *
 * What rocemu uses and did NOT change between 22.11 and 24.11 (checked header by header):
 * - rte_pcapng: not used; rocemu writes pcap and pcapng itself (lib/capture/emu_pcapw.c), so
 *   23.03's rte_pcapng_add_interface() and 23.11's rte_pcapng_copy() (timestamp argument gone,
 *   comment argument added) do not reach it.
 * - telemetry: rte_telemetry_register_cmd(), telemetry_cb, rte_tel_data_start_dict() and
 *   rte_tel_data_add_dict_string() are the same in all three; 24.11 adds
 *   rte_telemetry_register_cmd_arg() (a callback with a context pointer), not needed here.
 *   The integer adders were renamed in 23.03 (rte_tel_data_add_dict_u64 -> _uint, the old
 *   name deprecated): use EMU_TEL_ADD_DICT_UINT() below if a counter is ever added.
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
 *   emu_compat_crc32_eth() below computes the Ethernet CRC-32 on either API.
 */

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
/**
 * Ethernet CRC-32 (init all ones, final xor) of @p len bytes with DPDK's own rte_net_crc, the
 * reference rocemu's CRC engine is tested against. Include <rte_net_crc.h> before this header
 * to get it. Returns 0 if DPDK cannot make a context (25.03 and later: out of memory).
 */
static inline uint32_t
emu_compat_crc32_eth(const void *data, uint32_t len)
{
#if EMU_DPDK_AT_LEAST(25, 3)
	struct rte_net_crc *ctx = rte_net_crc_set_alg(RTE_NET_CRC_SCALAR, RTE_NET_CRC32_ETH);
	uint32_t crc;

	if (ctx == NULL)
		return 0;
	crc = rte_net_crc_calc(ctx, data, len);
	rte_net_crc_free(ctx);
	return crc;
#else
	return rte_net_crc_calc(data, len, RTE_NET_CRC32_ETH);
#endif
}
#endif /* _RTE_NET_CRC_H_ */

#endif /* EMU_COMPAT_H */
