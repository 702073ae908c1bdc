/* Stand-in for the Arduino Wire (I²C master) API, only what the power logger uses. */
#ifndef LWCBENCH_WIRE_STANDIN_H
#define LWCBENCH_WIRE_STANDIN_H
#include <stddef.h>
#include <stdint.h>

class TwoWire {
  public:
    void begin();
    void setClock(uint32_t hz);
    void beginTransmission(uint8_t addr);
    size_t write(uint8_t b);
    uint8_t endTransmission();
    uint8_t requestFrom(uint8_t addr, uint8_t n);
    int read();
};
extern TwoWire Wire;

#endif
