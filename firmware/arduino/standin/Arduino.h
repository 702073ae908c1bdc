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

#define LOW 0
#define HIGH 1
#define OUTPUT 1
void pinMode(uint8_t pin, uint8_t mode);
void digitalWrite(uint8_t pin, uint8_t level);
#define INPUT 0
#define CHANGE 1
int digitalRead(uint8_t pin);
void delay(unsigned long ms);
void attachInterrupt(uint8_t irq, void (*isr)(void), int mode);
#define digitalPinToInterrupt(p) (p)
void noInterrupts(void);
void interrupts(void);

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
