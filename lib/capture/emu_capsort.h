/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef EMU_CAPSORT_H
#define EMU_CAPSORT_H

/**
 * @file
 * The capture writer's reorder window (main lcore, no EAL): records come out of the capture
 * ring in the order the worker pushed them, which is not their time order. Within a pass the
 * worker copies the frames dropped at arrival (stamped with the pass's time) before the frames
 * the TM releases (stamped with their departure, earlier in the pass), and one port's burst
 * before the next port's: the demo's live capture went back in time 20606 times. Records are
 * held here, sorted by time (stable: equal times keep their order), until a record @p window_ns
 * later has been seen and every producer's clock has passed it by @p window_ns too
 * (emu_capsort_bound()), or the window is full; then they go to the file in order. Nearly sorted
 * input costs one comparison a record (insertion from the newest end).
 */

#include <stddef.h>
#include <stdint.h>

struct emu_capsort;

/** Called with each record leaving the window, in time order. */
typedef void (*emu_capsort_emit_fn)(void *arg, uint64_t ts_ns, const uint8_t *entry);

/**
 * A window of @p n_entries entries of @p entry_bytes each, held until a record @p window_ns
 * newer arrives. Returns NULL when out of memory.
 */
struct emu_capsort *emu_capsort_create(uint32_t n_entries, uint32_t entry_bytes,
				       uint64_t window_ns);

/**
 * Add a record of time @p ts_ns: @p a_len bytes of @p a at the start of its entry and, when
 * @p b is not NULL, @p b_len bytes of @p b at @p b_off. Records now due (or the oldest, when
 * the window is full) go to @p emit first.
 */
void emu_capsort_add(struct emu_capsort *s, uint64_t ts_ns, const void *a, size_t a_len,
		     const void *b, size_t b_off, size_t b_len, emu_capsort_emit_fn emit,
		     void *arg);

/**
 * The producers' clock (live --workers: the earliest of what each worker published after its
 * last pass, UINT64_MAX while none did): records are also held while they are not a window
 * older than it, so that a worker behind the others (descheduled) finds its records' place
 * still open. Records now due go to @p emit.
 */
void emu_capsort_bound(struct emu_capsort *s, uint64_t bound_ns, emu_capsort_emit_fn emit,
		       void *arg);

/** Emit every record held, in time order (the end of a capture). */
void emu_capsort_drain(struct emu_capsort *s, emu_capsort_emit_fn emit, void *arg);

/** Records held now. */
uint32_t emu_capsort_held(const struct emu_capsort *s);

/** Free; accepts NULL. */
void emu_capsort_free(struct emu_capsort *s);

#endif
