// lwcbench power logger for an Arduino UNO + INA219 (or INA226) (docs/power.md): samples the
// board's supply current and voltage, counts the board's trigger edges on D2 and prints
// `LWCP` lines at 1,000,000 baud for `lwcbench collect --power-port` (a sample line every
// 1.064 ms is ≈ 42 kB/s: more than 115200 baud carries).
#include <Arduino.h>
#include <Wire.h>

#include "power.h"

#ifndef LWP_SENSOR
#define LWP_SENSOR LWP_INA219 // or LWP_INA226
#endif
#ifndef LWP_ADDR
#define LWP_ADDR 0x40
#endif
#ifndef LWP_SHUNT_UOHM
#define LWP_SHUNT_UOHM 100000 // the usual breakout's R100: 0.1 Ω
#endif
#ifndef LWP_SHUNT_TOL_PPM
#define LWP_SHUNT_TOL_PPM 10000 // ±1 %
#endif
#ifndef LWP_CONV_US
#define LWP_CONV_US 532 // INA219 12 bit: a (V, I) pair every 1.064 ms
#endif
#ifndef LWP_AVG
#define LWP_AVG 1
#endif
#ifndef LWP_BAUD
#define LWP_BAUD 1000000 // exact on a 16 MHz UNO (U2X), carried by its USB bridge
#endif
#ifndef LWP_TRIGGER_PIN
#define LWP_TRIGGER_PIN 2 // UNO: D2 = INT0
#endif

static const LwpConfig CFG = {LWP_SENSOR, LWP_ADDR, LWP_SHUNT_UOHM, LWP_SHUNT_TOL_PPM, LWP_CONV_US, LWP_AVG, "D2"};

// micros() wraps after 71 minutes; extend it to 64 bits.
uint64_t lwp_micros(void) {
    static uint32_t last;
    static uint64_t high;
    uint32_t now = micros();
    if (now < last) high += 1ull << 32;
    last = now;
    return high | now;
}

bool lwp_reg_write(uint8_t addr, uint8_t reg, uint16_t v) {
    Wire.beginTransmission(addr);
    Wire.write(reg);
    Wire.write((uint8_t)(v >> 8));
    Wire.write((uint8_t)v);
    return Wire.endTransmission() == 0;
}

bool lwp_reg_read(uint8_t addr, uint8_t reg, uint16_t *v) {
    Wire.beginTransmission(addr);
    Wire.write(reg);
    if (Wire.endTransmission() != 0 || Wire.requestFrom(addr, (uint8_t)2) != 2) return false;
    uint16_t hi = (uint16_t)Wire.read();
    *v = (uint16_t)(hi << 8 | (uint16_t)Wire.read());
    return true;
}

void lwp_write(const uint8_t *b, size_t n) { Serial.write(b, n); }

void lwp_irq_off(void) { noInterrupts(); }
void lwp_irq_on(void) { interrupts(); }

static void on_trigger() { lwp_edge(digitalRead(LWP_TRIGGER_PIN) == HIGH, micros()); }

void setup() {
    Serial.begin(LWP_BAUD);
    Wire.begin();
    Wire.setClock(400000); // 400 kHz: two register reads take ≈ 0.2 ms of the 1.064 ms period
    pinMode(LWP_TRIGGER_PIN, INPUT);
    while (!lwp_begin(CFG)) delay(1000);
    attachInterrupt(digitalPinToInterrupt(LWP_TRIGGER_PIN), on_trigger, CHANGE);
}

void loop() { lwp_poll(CFG); }
