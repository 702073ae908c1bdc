/* The power logger (docs/power.md): samples an INA219 or INA226 over I²C, timestamps each
 * sample with its own clock, counts the board's trigger edges and prints the `LWCP` lines
 * (format version 1: sequence number, CRC-32). Freestanding C++ (no heap, no libc), shared by
 * the UNO sketch and the host test build. */
#ifndef LWCPOWER_POWER_H
#define LWCPOWER_POWER_H
#include <stddef.h>
#include <stdint.h>

/* Supplied by the glue (lwcpower.ino or the host stand-in). */
uint64_t lwp_micros(void);                                 /* monotonic µs, 64 bits */
bool lwp_reg_write(uint8_t addr, uint8_t reg, uint16_t v); /* I²C register write; false = no ACK */
bool lwp_reg_read(uint8_t addr, uint8_t reg, uint16_t *v); /* I²C register read */
void lwp_write(const uint8_t *b, size_t n);                /* to the host */
void lwp_irq_off(void);                                    /* around reads of the edge counters */
void lwp_irq_on(void);

enum LwpSensor { LWP_INA219 = 0, LWP_INA226 = 1 };

struct LwpConfig {
    LwpSensor sensor;
    uint8_t addr;          /* I²C address (0x40 on the usual breakouts) */
    uint32_t shunt_uohm;   /* shunt resistance, µΩ */
    uint32_t shunt_tol_ppm;
    uint16_t conv_us;      /* per channel: INA219 84/148/276/532, INA226 140…8244 */
    uint16_t avg;          /* INA219 1…128, INA226 1…1024 */
    const char *pin;       /* trigger input, for the header */
};

/* Configuration register value for these settings, or 0 when the sensor has no such
 * conversion time or averaging (datasheets SBOS448 / SBOS547, configuration register). */
uint16_t lwp_config_reg(const LwpConfig &c);
/* µs between two samples: shunt and bus are converted in turn, each averaged. */
uint32_t lwp_period_us(const LwpConfig &c);
uint32_t lwp_crc32_update(uint32_t crc, const uint8_t *data, size_t n);

/* Configure the sensor and print the header; false (and an `LWCP I` line) if it does not answer. */
bool lwp_begin(const LwpConfig &c);
/* From the trigger's pin-change interrupt: the pin's new level and the low 32 bits of the µs
 * clock (lwp_micros is not called from the interrupt: its 64-bit extension is not reentrant). */
void lwp_edge(bool high, uint32_t t_us);
/* From the main loop: print pending edges, and a sample when one is due. */
void lwp_poll(const LwpConfig &c);

#endif
