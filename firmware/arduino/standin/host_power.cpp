/* Host implementation of the stand-in for the power logger sketch (tests only): a simulated
 * INA219 at 0x40 on the I²C stand-in and a board whose trigger pin follows a fixed schedule,
 * on a simulated µs clock. Bus 5.00 V (register 1250 << 3); shunt 4.00 mV idle (400 counts of
 * 10 µV: 40 mA over 0.1 Ω) and 9.00 mV while the trigger is high (90 mA). Prints the logger's
 * lines on stdout until 150 ms of simulated time. */
#include <stdio.h>

#include "Arduino.h"
#include "Wire.h"

static uint64_t sim_us;
static int pin;
static void (*isr)(void);
/* Trigger windows, µs: lengths 20, 25, 30 ms, gaps 15 and 22 ms. */
static const uint64_t WINDOWS[][2] = {{10000, 30000}, {45000, 70000}, {92000, 122000}};

unsigned long micros(void) { return (unsigned long)sim_us; }
unsigned long millis(void) { return (unsigned long)(sim_us / 1000); }
void delay(unsigned long ms) { sim_us += ms * 1000; }
void yield(void) {}
void pinMode(uint8_t, uint8_t) {}
void digitalWrite(uint8_t, uint8_t) {}
int digitalRead(uint8_t) { return pin; }
void attachInterrupt(uint8_t, void (*f)(void), int) { isr = f; }
void noInterrupts(void) {}
void interrupts(void) {}

void HardwareSerial::begin(unsigned long) {}
int HardwareSerial::available() { return 0; }
int HardwareSerial::read() { return -1; }
size_t HardwareSerial::write(const uint8_t *b, size_t n) { return fwrite(b, 1, n, stdout); }
HardwareSerial Serial;

static uint8_t addr, reg, nwritten;
static uint16_t config, next_read;
void TwoWire::begin() {}
void TwoWire::setClock(uint32_t) {}
void TwoWire::beginTransmission(uint8_t a) {
    addr = a;
    nwritten = 0;
}
size_t TwoWire::write(uint8_t b) {
    if (nwritten == 0) reg = b;
    else if (reg == 0 && nwritten == 1) config = (uint16_t)(b << 8);
    else if (reg == 0 && nwritten == 2) config |= b;
    nwritten++;
    return 1;
}
uint8_t TwoWire::endTransmission() {
    sim_us += 25; /* address + register + data bytes at 400 kHz */
    return addr == 0x40 ? 0 : 2;
}
uint8_t TwoWire::requestFrom(uint8_t a, uint8_t n) {
    sim_us += 50;
    if (a != 0x40 || n != 2) return 0;
    next_read = reg == 2 ? (uint16_t)(1250 << 3 | 2) : reg == 1 ? (uint16_t)(pin ? 900 : 400) : config;
    nwritten = 0;
    return 2;
}
int TwoWire::read() { return nwritten++ == 0 ? next_read >> 8 : next_read & 0xFF; }
TwoWire Wire;

void setup();
void loop();
int main() {
    setup();
    size_t next = 0;
    int edge = 0; /* 0: next is a rise, 1: a fall */
    while (sim_us < 150000) {
        uint64_t at = next < 3 ? WINDOWS[next][edge] : UINT64_MAX;
        if (sim_us >= at) {
            sim_us = at; /* the interrupt fires at the edge */
            pin = !edge;
            if (isr) isr();
            if (edge) next++;
            edge = !edge;
        }
        loop();
        sim_us += 10;
    }
    fprintf(stderr, "config register %04x\n", config);
    return 0;
}
