/* AES-128-CCM and AES-128-GCM (12-byte nonce, 16-byte tag) in the NIST LWC API sizes, for
 * mcu/lx106/harness.c and kat.c. With -DLWC_CCM_STAR_MIC=M (4, 8 or 16), ccm.c is CCM* as
 * IEEE 802.15.4 uses it: a 13-byte nonce and an M-byte MIC. */
#define CRYPTO_KEYBYTES 16
#define CRYPTO_NSECBYTES 0
#ifdef LWC_CCM_STAR_MIC
#define CRYPTO_NPUBBYTES 13
#define CRYPTO_ABYTES LWC_CCM_STAR_MIC
#else
#define CRYPTO_NPUBBYTES 12
#define CRYPTO_ABYTES 16
#endif
#define CRYPTO_NOOVERLAP 1
