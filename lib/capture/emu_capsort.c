/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The capture writer's reorder window (emu_capsort.h): a pool of fixed-size entries, and a
 * circular array of (time, entry) kept sorted by insertion from its newest end.
 */
#include <stdlib.h>
#include <string.h>

#include "lib/capture/emu_capsort.h"

struct emu_capsort_ref {
	uint64_t ts_ns;
	uint32_t entry;
};

struct emu_capsort {
	uint32_t n;              /* entries */
	uint32_t entry_bytes;
	uint64_t window_ns;
	uint64_t newest_ns;      /* the latest time seen */
	uint64_t bound_ns;       /* the producers' clock (emu_capsort_bound()) */
	struct emu_capsort_ref *order; /* circular, sorted: first at head */
	uint32_t head, held;
	uint32_t *free_list;     /* entries not held */
	uint32_t n_free;
	uint8_t *pool;
};

struct emu_capsort *
emu_capsort_create(uint32_t n_entries, uint32_t entry_bytes, uint64_t window_ns)
{
	struct emu_capsort *s = calloc(1, sizeof(*s));
	uint32_t i;

	if (s == NULL || n_entries == 0)
		goto fail;
	s->n = n_entries;
	s->entry_bytes = entry_bytes;
	s->window_ns = window_ns;
	s->bound_ns = UINT64_MAX;
	s->order = calloc(n_entries, sizeof(*s->order));
	s->free_list = calloc(n_entries, sizeof(*s->free_list));
	s->pool = malloc((size_t)n_entries * entry_bytes);
	if (s->order == NULL || s->free_list == NULL || s->pool == NULL)
		goto fail;
	for (i = 0; i < n_entries; i++)
		s->free_list[i] = n_entries - 1 - i;
	s->n_free = n_entries;
	return s;
fail:
	emu_capsort_free(s);
	return NULL;
}

/* The first (oldest) record out. */
static void
emu_capsort_pop(struct emu_capsort *s, emu_capsort_emit_fn emit, void *arg)
{
	struct emu_capsort_ref r = s->order[s->head];

	s->head = s->head + 1 == s->n ? 0 : s->head + 1;
	s->held--;
	emit(arg, r.ts_ns, s->pool + (size_t)r.entry * s->entry_bytes);
	s->free_list[s->n_free++] = r.entry;
}

/* Emit what is a window older than both the newest record and the producers' clock. */
static void
emu_capsort_due(struct emu_capsort *s, emu_capsort_emit_fn emit, void *arg)
{
	uint64_t upto = s->newest_ns < s->bound_ns ? s->newest_ns : s->bound_ns;

	while (s->held > 0 && s->order[s->head].ts_ns + s->window_ns <= upto)
		emu_capsort_pop(s, emit, arg);
}

void
emu_capsort_add(struct emu_capsort *s, uint64_t ts_ns, const void *a, size_t a_len,
		const void *b, size_t b_off, size_t b_len, emu_capsort_emit_fn emit, void *arg)
{
	uint32_t e, pos, at, prev;
	uint8_t *p;

	if (s->held == s->n)
		emu_capsort_pop(s, emit, arg); /* full: the oldest goes, whatever the window */
	e = s->free_list[--s->n_free];
	p = s->pool + (size_t)e * s->entry_bytes;
	memcpy(p, a, a_len);
	if (b != NULL)
		memcpy(p + b_off, b, b_len);
	/* insert after every record of the same or an earlier time */
	for (pos = s->held; pos > 0; pos--) {
		prev = s->head + pos - 1;
		prev -= prev >= s->n ? s->n : 0;
		if (s->order[prev].ts_ns <= ts_ns)
			break;
		at = prev + 1 == s->n ? 0 : prev + 1;
		s->order[at] = s->order[prev];
	}
	at = s->head + pos;
	at -= at >= s->n ? s->n : 0;
	s->order[at] = (struct emu_capsort_ref){ ts_ns, e };
	s->held++;
	if (ts_ns > s->newest_ns)
		s->newest_ns = ts_ns;
	emu_capsort_due(s, emit, arg);
}

void
emu_capsort_bound(struct emu_capsort *s, uint64_t bound_ns, emu_capsort_emit_fn emit, void *arg)
{
	s->bound_ns = bound_ns;
	emu_capsort_due(s, emit, arg);
}

void
emu_capsort_drain(struct emu_capsort *s, emu_capsort_emit_fn emit, void *arg)
{
	while (s->held > 0)
		emu_capsort_pop(s, emit, arg);
}

uint32_t
emu_capsort_held(const struct emu_capsort *s)
{
	return s->held;
}

void
emu_capsort_free(struct emu_capsort *s)
{
	if (s == NULL)
		return;
	free(s->order);
	free(s->free_list);
	free(s->pool);
	free(s);
}
