/* Plain loops calling OpenSSL EVP, libgcrypt and wolfCrypt directly, for scripts/host-parity.sh.
 * Each loop repeats exactly the call sequence the lwcbench adapter makes per AEAD `encrypt`
 * (crates/catalog/src/aes/{ossl,gcrypt,wolf}.rs), in place, empty AD, 16-byte tag, and times
 * it the way lwcbench's runner does (docs/measurement.md): a batch of back-to-back operations
 * lasting >= MIN_US per sample, CLOCK_MONOTONIC, ns per operation. Random key/IV variants
 * (kiv rr) draw a new key and nonce before every sample, outside the timed region, and re-key
 * the same context as an application would.
 *
 * usage: plain LIB CIPHER BYTES KIV SAMPLES MIN_US
 *   LIB    openssl | gcrypt | wolfssl
 *   CIPHER chacha20-poly1305 (openssl) | aes-128-gcm (all three)
 *   KIV    ss | rr
 * prints one line per sample: ns per operation
 *
 * With PARITY_COUNT=N in the environment it times nothing: 4 untimed operations, then N with
 * callgrind collection on (run under `valgrind --tool=callgrind --collect-atstart=no`), as
 * `lwcbench run --counter instructions` counts (16 operations after 4 untimed). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <gcrypt.h>
#include <openssl/evp.h>
#include <wolfssl/options.h>
#include <wolfssl/wolfcrypt/settings.h>
#include <wolfssl/wolfcrypt/aes.h>
#include <valgrind/callgrind.h>

static void die(const char *what) {
    fprintf(stderr, "error: %s\n", what);
    exit(2);
}

static uint64_t rng_state = 0x9e3779b97f4a7c15u;
static void fill(uint8_t *p, size_t n) { /* splitmix64: the loop needs varied bytes, not secrecy */
    for (size_t i = 0; i < n; i++) {
        uint64_t z = (rng_state += 0x9e3779b97f4a7c15u);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
        p[i] = (uint8_t)(z ^ (z >> 31));
    }
}

static double now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

struct loop {
    int lib; /* 0 openssl, 1 gcrypt, 2 wolfssl */
    EVP_CIPHER_CTX *ctx;
    gcry_cipher_hd_t hd;
    Aes *aes;
    size_t keylen;
    uint8_t key[32], iv[12], tag[16];
    uint8_t *buf;
    size_t n;
};

static void set_key(struct loop *l) {
    switch (l->lib) {
    case 0:
        if (EVP_EncryptInit_ex(l->ctx, NULL, NULL, l->key, NULL) != 1) die("EVP key");
        break;
    case 1:
        if (gcry_cipher_setkey(l->hd, l->key, l->keylen)) die("gcry_cipher_setkey");
        break;
    default:
        if (wc_AesGcmSetKey(l->aes, l->key, (word32)l->keylen)) die("wc_AesGcmSetKey");
    }
}

/* One operation: the adapter's encrypt(nonce, empty AD, buf) + tag. */
static inline int op(struct loop *l) {
    int outl = 0, fin = 0;
    switch (l->lib) {
    case 0:
        if (EVP_EncryptInit_ex(l->ctx, NULL, NULL, NULL, l->iv) != 1) return 1;
        if (EVP_EncryptUpdate(l->ctx, l->buf, &outl, l->buf, (int)l->n) != 1) return 1;
        if (EVP_EncryptFinal_ex(l->ctx, l->buf + outl, &fin) != 1) return 1;
        return EVP_CIPHER_CTX_ctrl(l->ctx, EVP_CTRL_AEAD_GET_TAG, 16, l->tag) != 1;
    case 1:
        if (gcry_cipher_reset(l->hd)) return 1;
        if (gcry_cipher_setiv(l->hd, l->iv, 12)) return 1;
        if (gcry_cipher_encrypt(l->hd, l->buf, l->n, NULL, 0)) return 1;
        return gcry_cipher_gettag(l->hd, l->tag, 16) != 0;
    default:
        return wc_AesGcmEncrypt(l->aes, l->buf, l->buf, (word32)l->n, l->iv, 12, l->tag, 16, NULL, 0) != 0;
    }
}

static double batch_ns(struct loop *l, uint64_t batch) {
    double t0 = now_ns();
    for (uint64_t i = 0; i < batch; i++)
        if (op(l)) die("operation failed");
    return now_ns() - t0;
}

int main(int argc, char **argv) {
    if (argc != 7) die("usage: plain LIB CIPHER BYTES KIV SAMPLES MIN_US");
    struct loop l;
    memset(&l, 0, sizeof l);
    const char *lib = argv[1], *cipher = argv[2], *kiv = argv[4];
    char *end;
    l.n = strtoul(argv[3], &end, 10);
    if (*end || l.n == 0 || l.n > (1u << 30)) die("BYTES must be 1..2^30");
    long samples = strtol(argv[5], &end, 10);
    if (*end || samples < 1 || samples > 1000000) die("SAMPLES must be 1..1000000");
    double min_ns = strtod(argv[6], &end) * 1000.0;
    if (*end || !(min_ns > 0)) die("MIN_US must be > 0");
    int random = strcmp(kiv, "rr") == 0;
    if (!random && strcmp(kiv, "ss") != 0) die("KIV must be ss or rr");
    int chacha = strcmp(cipher, "chacha20-poly1305") == 0;
    if (!chacha && strcmp(cipher, "aes-128-gcm") != 0) die("CIPHER must be chacha20-poly1305 or aes-128-gcm");
    l.keylen = chacha ? 32 : 16;
    for (size_t i = 0; i < sizeof l.key; i++) l.key[i] = (uint8_t)i; /* lwcbench's static pattern */
    for (size_t i = 0; i < sizeof l.iv; i++) l.iv[i] = (uint8_t)i;
    l.buf = malloc(l.n + 32);
    if (!l.buf) die("out of memory");
    fill(l.buf, l.n);
    if (strcmp(lib, "openssl") == 0) {
        l.lib = 0;
        l.ctx = EVP_CIPHER_CTX_new();
        if (!l.ctx || EVP_EncryptInit_ex(l.ctx, chacha ? EVP_chacha20_poly1305() : EVP_aes_128_gcm(), NULL, NULL, NULL) != 1)
            die("EVP init");
    } else if (strcmp(lib, "gcrypt") == 0 && !chacha) {
        l.lib = 1;
        if (!gcry_check_version(NULL)) die("gcry_check_version");
        gcry_control(GCRYCTL_DISABLE_SECMEM, 0);
        gcry_control(GCRYCTL_INITIALIZATION_FINISHED, 0);
        if (gcry_cipher_open(&l.hd, GCRY_CIPHER_AES128, GCRY_CIPHER_MODE_GCM, 0)) die("gcry_cipher_open");
    } else if (strcmp(lib, "wolfssl") == 0 && !chacha) {
        l.lib = 2;
        l.aes = calloc(1, sizeof(Aes));
        if (!l.aes || wc_AesInit(l.aes, NULL, INVALID_DEVID)) die("wc_AesInit");
    } else {
        die("LIB/CIPHER: openssl chacha20-poly1305|aes-128-gcm, gcrypt aes-128-gcm, wolfssl aes-128-gcm");
    }
    set_key(&l);
    const char *count = getenv("PARITY_COUNT");
    if (count) {
        long n = strtol(count, &end, 10);
        if (*end || n < 1) die("PARITY_COUNT must be a positive integer");
        for (int i = 0; i < 4; i++) op(&l);
        CALLGRIND_TOGGLE_COLLECT;
        for (long i = 0; i < n; i++) op(&l);
        CALLGRIND_TOGGLE_COLLECT;
        return 0;
    }
    /* warm-up (>= 8 ops and >= 2 sample times), then batch = ceil(min / median-free estimate) */
    double t0 = now_ns();
    uint64_t warm = 0;
    while (warm < 8 || now_ns() - t0 < 2 * min_ns) { op(&l); warm++; }
    uint64_t batch = 1;
    while (batch_ns(&l, batch) < min_ns / 4 && batch < (1u << 26)) batch *= 2;
    double best = 1e300;
    for (int i = 0; i < 5; i++) { double t = batch_ns(&l, batch) / batch; if (t < best) best = t; }
    batch = (uint64_t)(min_ns / best) + 1;
    for (long s = 0; s < samples; s++) {
        if (random) {
            fill(l.key, l.keylen);
            fill(l.iv, sizeof l.iv);
            set_key(&l);
        }
        uint64_t ops = batch;
        double t = batch_ns(&l, batch);
        while (t < min_ns) { t += batch_ns(&l, batch); ops += batch; } /* floor, as the runner */
        printf("%.3f\n", t / (double)ops);
    }
    return 0;
}
