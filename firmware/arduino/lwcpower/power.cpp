/* The power logger's sampling and framing (docs/power.md, `LWCP` format version 1). */
#include "power.h"

uint32_t lwp_crc32_update(uint32_t crc, const uint8_t *data, size_t n) {
    uint32_t c = ~crc;
    for (size_t i = 0; i < n; i++) {
        c ^= data[i];
        for (int k = 0; k < 8; k++) c = (c & 1) ? (c >> 1) ^ 0xEDB88320u : c >> 1;
    }
    return ~c;
}

namespace {

struct Line {
    char buf[160];
    size_t n;
    void str(const char *s) {
        while (*s && n < sizeof buf - 16) buf[n++] = *s++;
    }
    void u64(uint64_t v) {
        char d[20];
        int k = 0;
        do {
            d[k++] = (char)('0' + v % 10);
            v /= 10;
        } while (v);
        while (k && n < sizeof buf - 16) buf[n++] = d[--k];
    }
    void i64(int64_t v) {
        if (v < 0) {
            str("-");
            u64((uint64_t)(-(v + 1)) + 1);
        } else {
            u64((uint64_t)v);
        }
    }
    /* close with " *crc" (of the body) and CRLF, and send */
    void finish() {
        uint32_t crc = lwp_crc32_update(0, (const uint8_t *)buf, n);
        static const char H[] = "0123456789abcdef";
        buf[n++] = ' ';
        buf[n++] = '*';
        for (int s = 28; s >= 0; s -= 4) buf[n++] = H[(crc >> s) & 15];
        buf[n++] = '\r';
        buf[n++] = '\n';
        lwp_write((const uint8_t *)buf, n);
        n = 0;
    }
};

Line line;
uint64_t seq;
uint64_t next_sample;

/* Edges from the interrupt: a small ring; the counters themselves are never lost. */
const int RING = 16;
volatile uint32_t rises;
volatile bool level;
volatile uint8_t head, tail;
volatile uint32_t ring_rises[RING];
volatile bool ring_level[RING];
volatile uint32_t ring_t[RING];
volatile uint32_t overflow;

int index_of(const uint16_t *v, int n, uint16_t x) {
    for (int i = 0; i < n; i++)
        if (v[i] == x) return i;
    return -1;
}

const uint16_t INA219_CONV[] = {84, 148, 276, 532};
const uint16_t INA219_AVG[] = {1, 2, 4, 8, 16, 32, 64, 128};
const uint16_t INA226_CONV[] = {140, 204, 332, 588, 1100, 2116, 4156, 8244};
const uint16_t INA226_AVG[] = {1, 4, 16, 64, 128, 256, 512, 1024};

} // namespace

uint16_t lwp_config_reg(const LwpConfig &c) {
    if (c.sensor == LWP_INA219) {
        int conv = index_of(INA219_CONV, 4, c.conv_us), avg = index_of(INA219_AVG, 8, c.avg);
        if (conv < 0 || avg < 0 || (avg > 0 && conv != 3)) return 0; /* averaging is 12-bit only */
        /* ADC field: 0000–0011 = 9–12 bit, 1001–1111 = 12 bit averaged over 2–128 */
        uint16_t adc = avg == 0 ? (uint16_t)conv : (uint16_t)(0x8 | avg);
        /* BRNG 32 V (bit 13), PGA ÷8 ±320 mV (bits 12–11 = 11), BADC, SADC, mode 111 */
        return (uint16_t)(1u << 13 | 3u << 11 | adc << 7 | adc << 3 | 7u);
    }
    int conv = index_of(INA226_CONV, 8, c.conv_us), avg = index_of(INA226_AVG, 8, c.avg);
    if (conv < 0 || avg < 0) return 0;
    /* bit 14 reads 1; AVG bits 11–9, VBUSCT 8–6, VSHCT 5–3, mode 111 */
    return (uint16_t)(1u << 14 | (uint16_t)avg << 9 | (uint16_t)conv << 6 | (uint16_t)conv << 3 | 7u);
}

uint32_t lwp_period_us(const LwpConfig &c) { return 2u * c.conv_us * c.avg; }

bool lwp_begin(const LwpConfig &c) {
    uint16_t cfg = lwp_config_reg(c);
    seq = 0;
    rises = 0;
    head = tail = 0;
    overflow = 0;
    if (!cfg || !lwp_reg_write(c.addr, 0x00, cfg)) {
        line.str(cfg ? "LWCP I sensor%20not%20answering%20at%20its%20address" : "LWCP I invalid%20conv_us%20or%20avg");
        line.finish();
        return false;
    }
    line.str("LWCP H 1 sensor=");
    line.str(c.sensor == LWP_INA219 ? "ina219" : "ina226");
    line.str(" shunt_uohm=");
    line.u64(c.shunt_uohm);
    line.str(" shunt_tol_ppm=");
    line.u64(c.shunt_tol_ppm);
    line.str(" tick_hz=1000000 conv_us=");
    line.u64(c.conv_us);
    line.str(" avg=");
    line.u64(c.avg);
    line.str(" pin=");
    line.str(c.pin);
    line.str(" period_us=");
    line.u64(lwp_period_us(c));
    line.finish();
    next_sample = lwp_micros() + lwp_period_us(c);
    return true;
}

void lwp_edge(bool high, uint32_t t_us) {
    if (high == level) return; /* a glitch shorter than the interrupt latency */
    level = high;
    if (high) rises++;
    uint8_t next = (uint8_t)((head + 1) % RING);
    if (next == tail) {
        overflow++;
        return;
    }
    ring_rises[head] = rises;
    ring_level[head] = high;
    ring_t[head] = t_us;
    head = next;
}

void lwp_poll(const LwpConfig &c) {
    uint64_t now = lwp_micros();
    while (tail != head) {
        /* the edge happened before `now`, less than 71 minutes ago */
        uint64_t t = now - (uint32_t)((uint32_t)now - ring_t[tail]);
        line.str("LWCP T ");
        line.u64(seq++);
        line.str(" ");
        line.u64(ring_rises[tail]);
        line.str(ring_level[tail] ? " 1 " : " 0 ");
        line.u64(t);
        line.finish();
        tail = (uint8_t)((tail + 1) % RING);
    }
    if (overflow) {
        line.str("LWCP I trigger%20edges%20lost:%20ring%20full");
        line.finish();
        overflow = 0;
    }
    if (now < next_sample) return;
    next_sample += lwp_period_us(c);
    if (next_sample <= now) next_sample = now + lwp_period_us(c); /* fell behind: skip, never burst */
    /* the trigger state at the read: the sample's conversion ended just before */
    lwp_irq_off();
    uint32_t r = rises;
    bool lv = level;
    lwp_irq_on();
    uint16_t bus, shunt;
    bool ok = lwp_reg_read(c.addr, 0x02, &bus) && lwp_reg_read(c.addr, 0x01, &shunt);
    /* INA219: bus register bit 0 (OVF) = the current was out of range, the values are not */
    if (!ok || (c.sensor == LWP_INA219 && (bus & 1))) {
        seq++; /* a lost sample is a gap in seq, as a lost line */
        return;
    }
    line.str("LWCP P ");
    line.u64(seq++);
    line.str(" ");
    line.u64(now);
    line.str(" ");
    line.u64(r);
    line.str(lv ? " 1 " : " 0 ");
    line.u64(c.sensor == LWP_INA219 ? (uint16_t)(bus >> 3) : (uint16_t)(bus & 0x7FFF));
    line.str(" ");
    line.i64((int16_t)shunt);
    line.finish();
}
