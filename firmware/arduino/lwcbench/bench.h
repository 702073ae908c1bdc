/* The benchmark runner of the Arduino sketch: the same suites and the same line format
 * (docs/board.md, version 2) as the Rust firmware/bench crate. Freestanding C++ (no libc, no
 * heap, no exceptions), so the ESP8266 toolchain compiles it without a C library. */
#ifndef LWCBENCH_BENCH_H
#define LWCBENCH_BENCH_H
#include <stddef.h>
#include <stdint.h>

/* Supplied by the board glue (lwcbench.ino). */
uint64_t lwc_ticks(void);                    /* monotonic, at BoardInfo.tick_hz */
bool lwc_cycles(uint32_t *c);                /* free-running 32-bit core-cycle counter */
void lwc_write(const uint8_t *b, size_t n);  /* to the host */
void lwc_trigger(bool high);                 /* the power logger's trigger pin (docs/power.md) */

struct LwcBoardInfo {
    const char *board, *mcu;
    uint32_t cpu_hz, tick_hz;
    const char *timer, *cycles; /* cycles: "none" without a counter */
    const char *firmware, *compiler, *profile, *opt, *target, *commit;
};

/* A stream cipher under test: metadata and three calls (0 = success). */
struct LwcCipher {
    const char *name, *impl, *lang;
    uint16_t key_bytes, iv_bytes;
    int (*init)(void *st, const uint8_t *key, const uint8_t *iv);
    int (*keystream)(void *st, uint8_t *out, size_t nbits);
    int (*apply)(void *st, uint8_t *data, size_t nbits);
    void *state;
};

/* An AEAD under test through the NIST LWC API (crypto_aead_encrypt: key set up in every call,
 * ciphertext + tag out of place), as the emulated ESP8266 images call it. */
struct LwcAead {
    const char *name, *impl, *lang;
    uint16_t key_bytes, nonce_bytes, tag_bytes; /* nonce at least 8 bytes, tag at most 16 */
    int (*encrypt)(unsigned char *c, unsigned long long *clen, const unsigned char *m, unsigned long long mlen,
                   const unsigned char *ad, unsigned long long adlen, const unsigned char *nsec,
                   const unsigned char *npub, const unsigned char *k);
};

struct LwcConfig {
    uint32_t reps, warmup;
    uint64_t min_sample_ticks, seed;
    /* The power trigger: the pin's name for the header, or NULL for none (no marker lines);
     * ticks to wait with the pin low before each batch (the logger's idle baseline). */
    const char *trigger_pin;
    uint64_t idle_ticks;
};

uint32_t lwc_crc32_update(uint32_t crc, const uint8_t *data, size_t n);
void lwc_info_line(const char *msg);
/* Runs every group of every stream cipher, then of every AEAD, and prints the whole run, header
 * to end line. */
void lwc_run(const LwcBoardInfo &info, const LwcConfig &cfg, const LwcCipher *ciphers, size_t n,
             const LwcAead *aeads, size_t na);

#endif
