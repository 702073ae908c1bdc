/* Host implementation of the stand-in (tests only): stdin/stdout as the serial line, the
 * monotonic clock as micros(), nanoseconds as "cycles" of a 1000 MHz core. main() runs one
 * setup() and loop(), i.e. one benchmark run when a byte is waiting on stdin. */
#include <stdio.h>
#include <time.h>

#include "Arduino.h"

static uint64_t ns() {
    timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}
unsigned long micros(void) { return (unsigned long)(ns() / 1000); }
unsigned long millis(void) { return (unsigned long)(ns() / 1000000); }
void yield(void) {}
// The trigger pin: its changes are counted and reported on stderr at exit, for the test.
static unsigned long trigger_rises, trigger_falls;
static int trigger_level;
void pinMode(uint8_t, uint8_t) {}
void digitalWrite(uint8_t, uint8_t level) {
    if (level && !trigger_level) trigger_rises++;
    if (!level && trigger_level) trigger_falls++;
    trigger_level = level;
}

static int pending = -2;
void HardwareSerial::begin(unsigned long) {}
int HardwareSerial::available() {
    if (pending == -2) pending = getchar();
    return pending >= 0;
}
int HardwareSerial::read() {
    available();
    int c = pending;
    pending = -1; // one byte is enough to start a run
    return c;
}
size_t HardwareSerial::write(const uint8_t *b, size_t n) { return fwrite(b, 1, n, stdout); }
HardwareSerial Serial;

uint32_t EspClass::getCycleCount() { return (uint32_t)ns(); }
uint32_t EspClass::getCpuFreqMHz() { return 1000; }
EspClass ESP;

void setup();
void loop();
int main() {
    setup();
    loop();
    fprintf(stderr, "trigger: %lu rises, %lu falls\n", trigger_rises, trigger_falls);
    return 0;
}
