/* Harness for the C++ DRACO (cpp/draco) in an MCU image: the same two entry points as the
 * Rust images (mcu/images/src/lib.rs). -DLWC_REF or -DLWC_FAST selects the variant; neither
 * gives the baseline (same harness, stub bodies). State is a static in .bss. */
#include <stddef.h>
#include <stdint.h>

#if defined(LWC_REF) || defined(LWC_FAST)
#include "draco.h"
#endif

#if defined(LWC_REF)
static draco_ref_state lwc_state;
#define LWC_INIT draco_ref_init
#define LWC_KS draco_ref_keystream_bits
#elif defined(LWC_FAST)
static draco_fast_state lwc_state;
#define LWC_INIT draco_fast_init
#define LWC_KS draco_fast_keystream_bits
#endif

#if defined(LWC_INIT)
const uint32_t LWC_KEY_BYTES = DRACO_KEY_BYTES;
const uint32_t LWC_IV_BYTES = DRACO_IV_BYTES;
int lwc_init(const uint8_t *key, const uint8_t *iv) { return LWC_INIT(&lwc_state, key, iv); }
int lwc_keystream(uint8_t *out, uint32_t nbits) { return LWC_KS(&lwc_state, out, nbits); }
#else
const uint32_t LWC_KEY_BYTES = 0;
const uint32_t LWC_IV_BYTES = 0;
int lwc_init(const uint8_t *key, const uint8_t *iv) {
    __asm__ volatile("" : : "r"(key), "r"(iv) : "memory");
    return 0;
}
int lwc_keystream(uint8_t *out, uint32_t nbits) {
    __asm__ volatile("" : : "r"(out), "r"(nbits) : "memory");
    return 0;
}
#endif

void lwc_reset(void) {
    for (;;) {
    }
}

#if defined(__arm__)
extern uint8_t __stack_top;
__attribute__((section(".vector_table"), used)) const void *const LWC_VECTORS[2] = {&__stack_top, (const void *)lwc_reset};
#endif
