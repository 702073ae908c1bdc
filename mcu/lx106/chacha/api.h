/* ChaCha20-Poly1305 (RFC 8439) in the NIST LWC API sizes, for mcu/lx106/harness.c. */
#define CRYPTO_KEYBYTES 32
#define CRYPTO_NSECBYTES 0
#define CRYPTO_NPUBBYTES 12
#define CRYPTO_ABYTES 16
#define CRYPTO_NOOVERLAP 1
