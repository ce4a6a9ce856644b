/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The parser's internals shared by roce_parse.c (the general parser and its fast path) and
 * roce_parse_dp.c (the datapath's partial parses). Internal to lib/proto.
 */
#ifndef ROCE_PARSE_PRIV_H
#define ROCE_PARSE_PRIV_H

#include <stdint.h>

#include "roce_proto.h"

/* roce_parse.c: every frame the fast paths do not take (not inlined). */
enum roce_class parse_general(const uint8_t *hdr, uint32_t avail, uint32_t frame_len,
			      uint16_t roce_port, struct roce_pkt *out);

#endif
