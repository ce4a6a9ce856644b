/* SPDX-License-Identifier: BSD-3-Clause */
#include "roce_proto.h"
#include "roce_internal.h"
#include "roce_parse_fast.h"

#define E_RD	ROCE_EXT_RDETH
#define E_DE	ROCE_EXT_DETH
#define E_RE	ROCE_EXT_RETH
#define E_AT	ROCE_EXT_ATOMICETH
#define E_AE	ROCE_EXT_AETH
#define E_AA	ROCE_EXT_ATOMICACKETH
#define E_IM	ROCE_EXT_IMMDT
#define E_IE	ROCE_EXT_IETH
#define V	ROCE_EXT_VALID

/* Extension headers per opcode: IBA vol. 1 release 1.4, table 41 (and annex A17 for the CNP),
 * one list for both tables below. */
#define OPCODE_EXTS(X) \
	/* RC */ \
	X(0x00, V) X(0x01, V) X(0x02, V) X(0x03, V | E_IM) X(0x04, V) X(0x05, V | E_IM) \
	X(0x06, V | E_RE) X(0x07, V) X(0x08, V) X(0x09, V | E_IM) X(0x0A, V | E_RE) \
	X(0x0B, V | E_RE | E_IM) X(0x0C, V | E_RE) X(0x0D, V | E_AE) X(0x0E, V) \
	X(0x0F, V | E_AE) X(0x10, V | E_AE) X(0x11, V | E_AE) X(0x12, V | E_AE | E_AA) \
	X(0x13, V | E_AT) X(0x14, V | E_AT) X(0x16, V | E_IE) X(0x17, V | E_IE) \
	/* UC */ \
	X(0x20, V) X(0x21, V) X(0x22, V) X(0x23, V | E_IM) X(0x24, V) X(0x25, V | E_IM) \
	X(0x26, V | E_RE) X(0x27, V) X(0x28, V) X(0x29, V | E_IM) X(0x2A, V | E_RE) \
	X(0x2B, V | E_RE | E_IM) \
	/* RD: RDETH on every packet, DETH on requests */ \
	X(0x40, V | E_RD | E_DE) X(0x41, V | E_RD | E_DE) X(0x42, V | E_RD | E_DE) \
	X(0x43, V | E_RD | E_DE | E_IM) X(0x44, V | E_RD | E_DE) \
	X(0x45, V | E_RD | E_DE | E_IM) X(0x46, V | E_RD | E_DE | E_RE) \
	X(0x47, V | E_RD | E_DE) X(0x48, V | E_RD | E_DE) X(0x49, V | E_RD | E_DE | E_IM) \
	X(0x4A, V | E_RD | E_DE | E_RE) X(0x4B, V | E_RD | E_DE | E_RE | E_IM) \
	X(0x4C, V | E_RD | E_DE | E_RE) X(0x4D, V | E_RD | E_AE) X(0x4E, V | E_RD) \
	X(0x4F, V | E_RD | E_AE) X(0x50, V | E_RD | E_AE) X(0x51, V | E_RD | E_AE) \
	X(0x52, V | E_RD | E_AE | E_AA) X(0x53, V | E_RD | E_DE | E_AT) \
	X(0x54, V | E_RD | E_DE | E_AT) X(0x55, V | E_RD | E_DE) \
	/* UD */ \
	X(0x64, V | E_DE) X(0x65, V | E_DE | E_IM) \
	/* CNP */ \
	X(0x81, V | ROCE_EXT_CNP)

#define EXT_ENTRY(op, e) [op] = (e),
const uint16_t roce_opcode_ext[256] = { OPCODE_EXTS(EXT_ENTRY) };

/* The bytes of extension headers per opcode, for the fast path's single load
 * (roce_parse_fast.h; 0 for an undefined opcode, as roce_ext_len() of its empty set). */
#define EXT_LEN_ENTRY(op, e) [op] = ROCE_EXT_LEN_OF(e),
const uint8_t roce_opcode_ext_len_tab[256] = { OPCODE_EXTS(EXT_LEN_ENTRY) };

int
roce_opcode_is_valid(uint8_t opcode)
{
	return (roce_opcode_ext[opcode] & ROCE_EXT_VALID) != 0;
}

uint32_t
roce_opcode_ext_len(uint8_t opcode)
{
	return roce_ext_len(roce_opcode_ext[opcode]);
}

#define ROCE_FOREACH_OP(_) \
	_(0x00, "SEND_FIRST") _(0x01, "SEND_MIDDLE") _(0x02, "SEND_LAST") \
	_(0x03, "SEND_LAST_WITH_IMMEDIATE") _(0x04, "SEND_ONLY") \
	_(0x05, "SEND_ONLY_WITH_IMMEDIATE") _(0x06, "RDMA_WRITE_FIRST") \
	_(0x07, "RDMA_WRITE_MIDDLE") _(0x08, "RDMA_WRITE_LAST") \
	_(0x09, "RDMA_WRITE_LAST_WITH_IMMEDIATE") _(0x0A, "RDMA_WRITE_ONLY") \
	_(0x0B, "RDMA_WRITE_ONLY_WITH_IMMEDIATE") _(0x0C, "RDMA_READ_REQUEST") \
	_(0x0D, "RDMA_READ_RESPONSE_FIRST") _(0x0E, "RDMA_READ_RESPONSE_MIDDLE") \
	_(0x0F, "RDMA_READ_RESPONSE_LAST") _(0x10, "RDMA_READ_RESPONSE_ONLY") \
	_(0x11, "ACKNOWLEDGE") _(0x12, "ATOMIC_ACKNOWLEDGE") _(0x13, "COMPARE_SWAP") \
	_(0x14, "FETCH_ADD") _(0x15, "RESYNC") _(0x16, "SEND_LAST_WITH_INVALIDATE") \
	_(0x17, "SEND_ONLY_WITH_INVALIDATE")

#define ROCE_NAME_RC(op, s) [ROCE_TRANSPORT_RC | (op)] = "RC_" s,
#define ROCE_NAME_UC(op, s) [ROCE_TRANSPORT_UC | (op)] = "UC_" s,
#define ROCE_NAME_RD(op, s) [ROCE_TRANSPORT_RD | (op)] = "RD_" s,
#define ROCE_NAME_UD(op, s) [ROCE_TRANSPORT_UD | (op)] = "UD_" s,

/* Every transport x operation; undefined combinations are filtered by roce_opcode_is_valid(). */
static const char *const roce_opcode_names[256] = {
	ROCE_FOREACH_OP(ROCE_NAME_RC)
	ROCE_FOREACH_OP(ROCE_NAME_UC)
	ROCE_FOREACH_OP(ROCE_NAME_RD)
	ROCE_FOREACH_OP(ROCE_NAME_UD)
	[ROCE_OPCODE_CNP] = "CNP",
};

const char *
roce_opcode_name(uint8_t opcode)
{
	if (!roce_opcode_is_valid(opcode) || roce_opcode_names[opcode] == NULL)
		return "UNKNOWN";
	return roce_opcode_names[opcode];
}

#define ROCE_REASON_NAME_(n, s) [ROCE_REASON_##n] = s,
static const char *const roce_reason_names[ROCE_REASON_MAX] = {
	ROCE_FOREACH_REASON(ROCE_REASON_NAME_)
};

const char *
roce_reason_name(enum roce_reason r)
{
	if ((unsigned int)r >= ROCE_REASON_MAX)
		return "unknown";
	return roce_reason_names[r];
}

static const char *const roce_class_names[ROCE_CLASS_MAX] = {
	[ROCE_CLASS_ROCEV2] = "rocev2",
	[ROCE_CLASS_ROCEV1] = "rocev1",
	[ROCE_CLASS_ARP] = "arp",
	[ROCE_CLASS_IPV4_OTHER] = "ipv4_other",
	[ROCE_CLASS_IPV6_ND] = "ipv6_nd",
	[ROCE_CLASS_IPV6_OTHER] = "ipv6_other",
	[ROCE_CLASS_LLDP] = "lldp",
	[ROCE_CLASS_MAC_CONTROL] = "mac_control",
	[ROCE_CLASS_OTHER] = "other",
	[ROCE_CLASS_INVALID] = "invalid",
};

const char *
roce_class_name(enum roce_class c)
{
	if ((unsigned int)c >= ROCE_CLASS_MAX)
		return "unknown";
	return roce_class_names[c];
}
