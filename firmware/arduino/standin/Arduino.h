/* A minimal stand-in for the Arduino API, only what lwcbench.ino uses, so CI can compile the
 * sketch's code with the ESP8266/ESP32-class cross compilers (and run it on the host with
 * standin/host.cpp) without an Arduino core. Not an emulation of any board. */
#ifndef LWCBENCH_ARDUINO_STANDIN_H
#define LWCBENCH_ARDUINO_STANDIN_H
#include <stddef.h>
#include <stdint.h>

unsigned long micros(void);
unsigned long millis(void);
void yield(void);

class HardwareSerial {
  public:
    void begin(unsigned long baud);
    int available();
    int read();
    size_t write(const uint8_t *b, size_t n);
};
extern HardwareSerial Serial;

class EspClass {
  public:
    uint32_t getCycleCount();
    uint32_t getCpuFreqMHz();
};
extern EspClass ESP;

#endif
