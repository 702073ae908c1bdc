/* See bench.h. Mirrors firmware/bench/src/lib.rs: per group a batch is calibrated to last at
 * least min_sample_ticks, then warm-up + measured samples, each after an untimed preparation
 * (fresh random key/IV for the r variants, init, payload restored). AEADs: encrypt of 16 and 128
 * bytes through the NIST LWC API (the key set up in every call, as the emulated ESP8266 images
 * time it), no associated data, the nonce's last 8 bytes a run-wide counter (no key/nonce pair
 * repeats within a run). */
#include "bench.h"

static const size_t SIZES[] = {1, 8, 128, 1024};
static const size_t NSIZES = 4;
static const size_t AEAD_SIZES[] = {128, 1024}; /* the emulated tables' 16 and 128 bytes */
static const size_t NAEAD_SIZES = 2;
static const unsigned char NO_AD[1] = {0};      /* ad_bytes=0: a valid pointer, length 0 */
static const size_t MAX_BYTES = 128;
static const uint64_t MAX_BATCH = 1u << 20;
static const char *const KIV[4] = {"s,s", "s,r", "r,s", "r,r"};

uint32_t lwc_crc32_update(uint32_t crc, const uint8_t *d, size_t n) {
    uint32_t c = ~crc;
    for (size_t i = 0; i < n; i++) {
        c ^= d[i];
        for (int k = 0; k < 8; k++) c = (c & 1) ? (c >> 1) ^ 0xEDB88320u : c >> 1;
    }
    return ~c;
}

/* One output line. */
struct Line {
    char b[768]; /* the header with long build strings and the trigger keys */
    size_t n;
    void str(const char *s) {
        while (*s && n < sizeof b - 16) b[n++] = *s++;
    }
    void pct(const char *s) { /* percent-encode as docs/board.md */
        static const char H[] = "0123456789ABCDEF";
        for (; *s && n < sizeof b - 20; s++) {
            uint8_t c = (uint8_t)*s;
            if (c == '%' || c == '+' || c <= ' ' || c >= 0x7f) {
                b[n++] = '%';
                b[n++] = H[c >> 4];
                b[n++] = H[c & 15];
            } else {
                b[n++] = (char)c;
            }
        }
    }
    void u64(uint64_t v) {
        char d[20];
        int k = 0;
        do {
            d[k++] = (char)('0' + v % 10);
            v /= 10;
        } while (v);
        while (k && n < sizeof b - 16) b[n++] = d[--k];
    }
    void hex32(uint32_t v) {
        static const char H[] = "0123456789abcdef";
        for (int s = 28; s >= 0; s -= 4) b[n++] = H[(v >> s) & 15];
    }
};

static Line line;
static uint32_t run_crc;

/* Close the line with ` *crc` and CRLF and send it. */
static void finish(bool in_run) {
    uint32_t c = lwc_crc32_update(0, (const uint8_t *)line.b, line.n);
    if (in_run) {
        run_crc = lwc_crc32_update(run_crc, (const uint8_t *)line.b, line.n);
        run_crc = lwc_crc32_update(run_crc, (const uint8_t *)"\n", 1);
    }
    line.b[line.n++] = ' ';
    line.b[line.n++] = '*';
    line.hex32(c);
    line.b[line.n++] = '\r';
    line.b[line.n++] = '\n';
    lwc_write((const uint8_t *)line.b, line.n);
}

void lwc_info_line(const char *msg) {
    line.n = 0;
    line.str("LWCB I ");
    line.str(msg);
    finish(false);
}

/* xorshift64*, as the Rust bench: only makes random variants differ between samples. */
static uint64_t rng;
static uint64_t next64() {
    rng ^= rng >> 12;
    rng ^= rng << 25;
    rng ^= rng >> 27;
    return rng * 0x2545F4914F6CDD1DULL;
}
static void fill(uint8_t *b, size_t n) {
    for (size_t i = 0; i < n; i += 8) {
        uint64_t v = next64();
        for (size_t k = 0; k < 8 && i + k < n; k++) b[i + k] = (uint8_t)(v >> (8 * k));
    }
}

enum Scn { INIT, KEYSTREAM, FULL, ENCRYPT };
static const char *const SCN[4] = {"init", "keystream", "full", "encrypt"};

struct Work {
    const LwcCipher *c; /* the stream cipher, or NULL for the AEAD a */
    const LwcAead *a;
    const char *name, *impl, *lang;
    size_t klen, ivlen;
    Scn sc;
    size_t nbits;
    uint64_t nonce_ctr; /* never restarts within a run */
    uint8_t key[32], iv[32], payload[MAX_BYTES], buf[MAX_BYTES], ct[MAX_BYTES + 16];
    void prepare() {
        for (size_t i = 0; i < MAX_BYTES; i++) buf[i] = payload[i];
        if (c) c->init(c->state, key, iv);
    }
    void __attribute__((noinline)) run(uint64_t batch) {
        for (uint64_t i = 0; i < batch; i++) {
            switch (sc) {
            case INIT: c->init(c->state, key, iv); break;
            case KEYSTREAM: c->keystream(c->state, buf, nbits); break;
            case FULL: c->apply(c->state, buf, nbits); break;
            case ENCRYPT: {
                for (int k = 0; k < 8; k++) iv[ivlen - 1 - k] = (uint8_t)(nonce_ctr >> (8 * k));
                nonce_ctr++;
                unsigned long long clen;
                a->encrypt(ct, &clen, buf, nbits / 8, NO_AD, 0, 0, iv, key);
                __asm__ volatile("" : : "r"(ct) : "memory");
                break;
            }
            }
            __asm__ volatile("" : : "r"(buf) : "memory"); /* keep the results */
        }
    }
};

static Work w;
static uint64_t seq, n_samples, n_warm, n_batch;

static void group(const LwcBoardInfo &info, const LwcConfig &cfg, int kiv) {
    uint64_t batch = 1;
    for (;;) {
        w.prepare();
        uint64_t t0 = lwc_ticks();
        w.run(batch);
        uint64_t t = lwc_ticks() - t0;
        if (t >= cfg.min_sample_ticks || batch >= MAX_BATCH) {
            if (t == 0) t = 1;
            batch = (cfg.min_sample_ticks * batch + t - 1) / t;
            if (batch < 1) batch = 1;
            if (batch > MAX_BATCH) batch = MAX_BATCH;
            break;
        }
        batch *= 2;
    }
    /* An interrupt during calibration inflates t and shrinks the batch: confirm it. */
    for (int k = 0; k < 20 && batch < MAX_BATCH; k++) {
        w.prepare();
        uint64_t t0 = lwc_ticks();
        w.run(batch);
        if (lwc_ticks() - t0 >= cfg.min_sample_ticks / 2) break;
        batch *= 2;
    }
    bool rk = kiv >= 2, riv = kiv & 1;
    for (uint32_t i = 0; i < cfg.warmup + cfg.reps; i++) {
        if (rk) fill(w.key, w.klen);
        if (riv) fill(w.iv, w.ivlen);
        w.prepare();
        if (cfg.trigger_pin) {
            uint64_t idle = lwc_ticks();
            while (lwc_ticks() - idle < cfg.idle_ticks) {
            }
            lwc_trigger(true);
        }
        uint32_t c0 = 0, c1 = 0;
        bool hc = lwc_cycles(&c0);
        uint64_t t0 = lwc_ticks();
        w.run(batch);
        uint64_t t = lwc_ticks() - t0;
        hc = lwc_cycles(&c1) && hc;
        if (cfg.trigger_pin) {
            lwc_trigger(false);
            /* outside seq and the end line's crc (docs/power.md) */
            line.n = 0;
            line.str("LWCB M ");
            line.u64(n_batch++);
            line.str(" ");
            line.u64(seq);
            line.str(" ");
            line.u64(batch);
            line.str(" ");
            line.u64(t0);
            line.str(" ");
            line.u64(t0 + t);
            finish(false);
        }
        /* a 32-bit counter wraps: trust it only well inside one period, judged by the ticks */
        uint64_t expect = info.tick_hz ? t * (uint64_t)(info.cpu_hz / info.tick_hz) : 0;
        bool warm = i < cfg.warmup;
        line.n = 0;
        line.str(warm ? "LWCB W " : "LWCB S ");
        line.u64(seq);
        line.str(" ");
        line.pct(w.name);
        line.str(" ");
        line.pct(w.impl);
        line.str(" ");
        line.pct(w.lang);
        line.str(w.a ? " aead " : " stream ");
        line.str(SCN[w.sc]);
        line.str(" ");
        line.str(KIV[kiv]);
        line.str(" ");
        line.u64(w.sc == INIT ? 0 : w.nbits);
        line.str(" random ");
        line.u64(warm ? i : i - cfg.warmup);
        line.str(" ");
        line.u64(batch);
        line.str(" ");
        line.u64(t);
        line.str(" ");
        if (hc && expect < 0xC0000000ull) line.u64((uint32_t)(c1 - c0));
        else line.str("-");
        finish(true);
        seq++;
        if (warm) n_warm++;
        else n_samples++;
    }
}

void lwc_run(const LwcBoardInfo &info, const LwcConfig &cfg, const LwcCipher *ciphers, size_t n,
             const LwcAead *aeads, size_t na) {
    seq = n_samples = n_warm = n_batch = 0;
    run_crc = 0;
    rng = cfg.seed ^ 0x9E3779B97F4A7C15ULL;
    uint64_t ovh[31];
    for (int i = 0; i < 31; i++) {
        uint64_t t0 = lwc_ticks();
        ovh[i] = lwc_ticks() - t0;
    }
    for (int i = 1; i < 31; i++) /* insertion sort for the median */
        for (int k = i; k > 0 && ovh[k - 1] > ovh[k]; k--) {
            uint64_t x = ovh[k];
            ovh[k] = ovh[k - 1];
            ovh[k - 1] = x;
        }
    line.n = 0;
    line.str("LWCB H 2 board=");
    line.pct(info.board);
    line.str(" mcu=");
    line.pct(info.mcu);
    line.str(" cpu_hz=");
    line.u64(info.cpu_hz);
    line.str(" tick_hz=");
    line.u64(info.tick_hz);
    line.str(" timer=");
    line.pct(info.timer);
    line.str(" cycles=");
    line.pct(info.cycles);
    line.str(" overhead_ticks=");
    line.u64(ovh[15]);
    line.str(" reps=");
    line.u64(cfg.reps);
    line.str(" warmup=");
    line.u64(cfg.warmup);
    line.str(" groups=");
    line.u64(n * 4 * (1 + 2 * NSIZES) + na * 4 * NAEAD_SIZES);
    line.str(" min_sample_ticks=");
    line.u64(cfg.min_sample_ticks);
    line.str(" seed=");
    line.u64(cfg.seed);
    line.str(" ad_bytes=0 ciphers=");
    for (size_t i = 0; i < n + na; i++) {
        if (i) line.str(",");
        line.pct(i < n ? ciphers[i].name : aeads[i - n].name);
        line.str("/");
        line.pct(i < n ? ciphers[i].impl : aeads[i - n].impl);
        line.str("/");
        line.pct(i < n ? ciphers[i].lang : aeads[i - n].lang);
    }
    const char *k[6] = {" firmware=", " compiler=", " profile=", " opt=", " target=", " commit="};
    const char *v[6] = {info.firmware, info.compiler, info.profile, info.opt, info.target, info.commit};
    for (int i = 0; i < 6; i++) {
        line.str(k[i]);
        line.pct(v[i]);
    }
    if (cfg.trigger_pin) {
        line.str(" trigger=");
        line.pct(cfg.trigger_pin);
        line.str(" idle_ticks=");
        line.u64(cfg.idle_ticks);
    }
    finish(false);
    w.nonce_ctr = 0;
    for (size_t ci = 0; ci < n; ci++) {
        w.c = &ciphers[ci];
        w.a = nullptr;
        w.name = w.c->name, w.impl = w.c->impl, w.lang = w.c->lang;
        w.klen = w.c->key_bytes, w.ivlen = w.c->iv_bytes;
        for (int s = 0; s < 1 + 2 * (int)NSIZES; s++) {
            w.sc = s == 0 ? INIT : (s % 2 ? KEYSTREAM : FULL);
            w.nbits = s == 0 ? 0 : SIZES[(s - 1) / 2];
            for (int kiv = 0; kiv < 4; kiv++) {
                for (int i = 0; i < 32; i++) w.key[i] = w.iv[i] = (uint8_t)i;
                fill(w.payload, MAX_BYTES);
                group(info, cfg, kiv);
            }
        }
    }
    for (size_t ai = 0; ai < na; ai++) {
        w.c = nullptr;
        w.a = &aeads[ai];
        w.name = w.a->name, w.impl = w.a->impl, w.lang = w.a->lang;
        w.klen = w.a->key_bytes, w.ivlen = w.a->nonce_bytes;
        w.sc = ENCRYPT;
        for (size_t s = 0; s < NAEAD_SIZES; s++) {
            w.nbits = AEAD_SIZES[s];
            for (int kiv = 0; kiv < 4; kiv++) {
                for (int i = 0; i < 32; i++) w.key[i] = w.iv[i] = (uint8_t)i;
                fill(w.payload, MAX_BYTES);
                group(info, cfg, kiv);
            }
        }
    }
    line.n = 0;
    line.str("LWCB E samples=");
    line.u64(n_samples);
    line.str(" warmup=");
    line.u64(n_warm);
    line.str(" crc=");
    line.hex32(run_crc);
    finish(false);
}
