// lwcbench on-board benchmark for ESP32 / ESP8266 (Arduino IDE or PlatformIO; docs/board.md).
// Runs the C++ DRACO (cpp/draco; draco.cpp/draco.h here are byte-identical copies, checked by
// firmware/tests/test_arduino.py), an own C++ Trivium and, built with PlatformIO, the C AEADs of
// the emulated ESP8266 images (mcu/lx106: ChaCha20-Poly1305, AES-128-CCM, AES-128-GCM), and
// prints the line format of docs/board.md at 115200 baud. Send any byte (lwcbench collect --port
// does) to start a run.
#include <Arduino.h>

#include "bench.h"
#include "draco.h"
#include "trivium.h"

#ifndef LWCB_REPS
#define LWCB_REPS 30
#endif
#ifndef LWCB_WARMUP
#define LWCB_WARMUP 3
#endif
#ifndef LWCB_MIN_TICKS
#define LWCB_MIN_TICKS 2000 // µs: micros() resolution is 1 µs, so ≥ 0.05 % per sample
#endif

// The power logger's trigger (docs/power.md): high while a measured batch runs; -1 = none.
#ifndef LWCB_TRIGGER_PIN
#define LWCB_TRIGGER_PIN 4
#endif
#ifndef LWCB_IDLE_TICKS
#define LWCB_IDLE_TICKS 2000 // µs low before each batch: the logger's idle baseline
#endif
#define LWCB_STR2(x) #x
#define LWCB_STR(x) LWCB_STR2(x)

#if defined(ARDUINO_ARCH_ESP8266)
#define LWCB_BOARD "esp8266"
#define LWCB_MCU "ESP8266 Xtensa LX106"
#elif defined(CONFIG_IDF_TARGET_ESP32C3)
#define LWCB_BOARD "esp32-c3"
#define LWCB_MCU "ESP32-C3 RISC-V RV32IMC"
#elif defined(CONFIG_IDF_TARGET_ESP32S3)
#define LWCB_BOARD "esp32-s3"
#define LWCB_MCU "ESP32-S3 Xtensa LX7"
#elif defined(ARDUINO_ARCH_ESP32)
#define LWCB_BOARD "esp32"
#define LWCB_MCU "ESP32 Xtensa LX6"
#else
#define LWCB_BOARD "arduino-standin"
#define LWCB_MCU "unknown"
#endif

static draco_ref_state dref;
static draco_fast_state dfast;
static trivium_state triv;

static int dr_init(void *s, const uint8_t *k, const uint8_t *iv) { return draco_ref_init((draco_ref_state *)s, k, iv); }
static int dr_ks(void *s, uint8_t *o, size_t n) { return draco_ref_keystream_bits((draco_ref_state *)s, o, n); }
static int dr_ap(void *s, uint8_t *d, size_t n) { return draco_ref_apply_bits((draco_ref_state *)s, d, n); }
static int df_init(void *s, const uint8_t *k, const uint8_t *iv) { return draco_fast_init((draco_fast_state *)s, k, iv); }
static int df_ks(void *s, uint8_t *o, size_t n) { return draco_fast_keystream_bits((draco_fast_state *)s, o, n); }
static int df_ap(void *s, uint8_t *d, size_t n) { return draco_fast_apply_bits((draco_fast_state *)s, d, n); }
static int tr_init(void *s, const uint8_t *k, const uint8_t *iv) { return trivium_init((trivium_state *)s, k, iv); }
static int tr_ks(void *s, uint8_t *o, size_t n) { return trivium_keystream_bits((trivium_state *)s, o, n); }
static int tr_ap(void *s, uint8_t *d, size_t n) { return trivium_apply_bits((trivium_state *)s, d, n); }

// The C AEADs: lwc_*.c compile mcu/lx106's sources when the include path holds mcu/lx106
// (platformio.ini adds it; the Arduino IDE builds a copy of this folder alone, without them).
#ifndef LWCB_C_AEADS
#if __has_include("aes/ccm.c") && __has_include("aes/gcm.c") && __has_include("chacha/chacha20poly1305.c")
#define LWCB_C_AEADS 1
#else
#define LWCB_C_AEADS 0
#endif
#endif
#if LWCB_C_AEADS
extern "C" {
#define LWCB_AEAD(f)                                                                                                    \
    int f(unsigned char *c, unsigned long long *clen, const unsigned char *m, unsigned long long mlen,               \
          const unsigned char *ad, unsigned long long adlen, const unsigned char *nsec, const unsigned char *npub, \
          const unsigned char *k)
LWCB_AEAD(lwc_chachapoly_encrypt);
LWCB_AEAD(lwc_ccm_encrypt);
LWCB_AEAD(lwc_gcm_encrypt);
}
// names and lengths as data/emulated-cycles.csv's esp8266 rows and mcu/lx106/*/api.h
static const LwcAead AEADS[] = {
    {"ChaCha20-Poly1305", "c", "C", 32, 12, 16, lwc_chachapoly_encrypt},
    {"AES-128-CCM", "c", "C", 16, 12, 16, lwc_ccm_encrypt},
    {"AES-128-GCM", "c", "C", 16, 12, 16, lwc_gcm_encrypt},
};
#define LWCB_AEADS AEADS, sizeof AEADS / sizeof AEADS[0]
#else
#define LWCB_AEADS nullptr, 0
#endif

static const LwcCipher CIPHERS[] = {
    {"DRACO", "cpp-ref", "C++", DRACO_KEY_BYTES, DRACO_IV_BYTES, dr_init, dr_ks, dr_ap, &dref},
    {"DRACO", "cpp-fast", "C++", DRACO_KEY_BYTES, DRACO_IV_BYTES, df_init, df_ks, df_ap, &dfast},
    {"Trivium", "cpp", "C++", TRIVIUM_KEY_BYTES, TRIVIUM_IV_BYTES, tr_init, tr_ks, tr_ap, &triv},
};

// micros() wraps after 71 minutes; extend it to 64 bits.
uint64_t lwc_ticks(void) {
    static uint32_t last;
    static uint64_t high;
    uint32_t now = micros();
    if (now < last) high += 1ull << 32;
    last = now;
    return high | now;
}

bool lwc_cycles(uint32_t *c) {
    *c = ESP.getCycleCount(); // CCOUNT (Xtensa) / the cycle CSR (ESP32-C3)
    return true;
}

void lwc_write(const uint8_t *b, size_t n) {
    Serial.write(b, n);
    yield(); // between samples only: feeds the ESP8266 software watchdog
}

void lwc_trigger(bool high) {
#if LWCB_TRIGGER_PIN >= 0
    digitalWrite(LWCB_TRIGGER_PIN, high ? HIGH : LOW);
#else
    (void)high;
#endif
}

void setup() {
    Serial.begin(115200);
#if LWCB_TRIGGER_PIN >= 0
    pinMode(LWCB_TRIGGER_PIN, OUTPUT);
    digitalWrite(LWCB_TRIGGER_PIN, LOW);
#endif
}

void loop() {
    lwc_info_line("ready: send any byte to start");
    unsigned long t = millis();
    while (!Serial.available() && millis() - t < 2000) yield();
    if (!Serial.available()) return;
    while (Serial.available()) Serial.read();
    LwcBoardInfo info = {LWCB_BOARD, LWCB_MCU, ESP.getCpuFreqMHz() * 1000000u, 1000000u, "micros()",
                         "ESP.getCycleCount() 32-bit", "0.1.0", "g++ " __VERSION__, "arduino", "core default",
                         LWCB_BOARD, "unknown"};
#if LWCB_TRIGGER_PIN >= 0
    LwcConfig cfg = {LWCB_REPS, LWCB_WARMUP, LWCB_MIN_TICKS, 1, "GPIO" LWCB_STR(LWCB_TRIGGER_PIN), LWCB_IDLE_TICKS};
#else
    LwcConfig cfg = {LWCB_REPS, LWCB_WARMUP, LWCB_MIN_TICKS, 1, nullptr, 0};
#endif
    lwc_run(info, cfg, CIPHERS, sizeof CIPHERS / sizeof CIPHERS[0], LWCB_AEADS);
}
