/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef EMU_TSAN_H
#define EMU_TSAN_H

/**
 * @file
 * ThreadSanitizer annotations for the DPDK primitives rocemu hands data through between lcores
 * whose synchronisation TSan cannot see: rte_ring on x86 orders its head and tail with compiler
 * barriers and plain loads of volatile fields (rte_ring_generic_pvt.h in DPDK 22.11), and a
 * mempool hands a freed mbuf to the lcore that allocates it next inside librte_mempool, which
 * is not instrumented. Each side says what the primitive guarantees: a release after it gave
 * something away, an acquire after it took something. Nothing in a normal build.
 */
#if defined(__SANITIZE_THREAD__)
void __tsan_acquire(void *addr);
void __tsan_release(void *addr);
#define EMU_TSAN_ACQUIRE(addr) __tsan_acquire((void *)(uintptr_t)(addr))
#define EMU_TSAN_RELEASE(addr) __tsan_release((void *)(uintptr_t)(addr))
#else
#define EMU_TSAN_ACQUIRE(addr) do { } while (0)
#define EMU_TSAN_RELEASE(addr) do { } while (0)
#endif

#endif
