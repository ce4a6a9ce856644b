/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef EMU_SET_H
#define EMU_SET_H

#include <stdint.h>

/**
 * A typed profile change, compiled on the control path from the profile's JSON by the owner
 * of the key (a stage's compile op, the TM, an incast source) and applied by the worker.
 * What the members mean is the owner's: a key id, which members are given, the values.
 */
struct emu_set {
	uint16_t key;  /**< the owner's key id */
	uint16_t has;  /**< the owner's bits: which members are given */
	uint32_t u32;
	uint64_t u64;
	double d;
};

#endif
