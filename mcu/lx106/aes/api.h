/* AES-128-CCM and AES-128-GCM (12-byte nonce, 16-byte tag) in the NIST LWC API sizes, for
 * mcu/lx106/harness.c and kat.c. */
#define CRYPTO_KEYBYTES 16
#define CRYPTO_NSECBYTES 0
#define CRYPTO_NPUBBYTES 12
#define CRYPTO_ABYTES 16
#define CRYPTO_NOOVERLAP 1
