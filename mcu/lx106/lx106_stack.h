/* Stack depth by painting, for the LX106 images (mcu/lx106/*harness.c): the free RAM between
 * the end of .bss and the caller's frame is filled with a pattern before the calls, and the
 * lowest word no longer holding it afterwards is the deepest the calls reached. The images
 * subtract their baseline's figure (same harness, no cipher), as the ARM route does. */
#ifndef LX106_STACK_H
#define LX106_STACK_H
#include <stdint.h>

#define LX106_PAINT 0xA5C3A5C3u
#define LX106_PAINT_MAX 0x10000u /* bytes painted at most: deeper stacks read as this */

extern char end[]; /* lx106.ld: the end of .bss */

/* Paints below this function's own frame; returns the address the depths count from. */
static __attribute__((noinline)) uintptr_t lx106_stack_paint(void) {
    uintptr_t top = ((uintptr_t)__builtin_frame_address(0) - 64u) & ~(uintptr_t)3u;
    uintptr_t lo = ((uintptr_t)end + 3u) & ~(uintptr_t)3u;
    if (top - lo > LX106_PAINT_MAX) lo = top - LX106_PAINT_MAX;
    for (volatile uint32_t *p = (volatile uint32_t *)lo; (uintptr_t)p < top; p++) *p = LX106_PAINT;
    return top;
}

/* Bytes below `top` the calls since lx106_stack_paint wrote. */
static __attribute__((noinline)) uint32_t lx106_stack_used(uintptr_t top) {
    uintptr_t lo = ((uintptr_t)end + 3u) & ~(uintptr_t)3u;
    if (top - lo > LX106_PAINT_MAX) lo = top - LX106_PAINT_MAX;
    const volatile uint32_t *p = (const volatile uint32_t *)lo;
    while ((uintptr_t)p < top && *p == LX106_PAINT) p++;
    return (uint32_t)(top - (uintptr_t)p);
}
#endif
