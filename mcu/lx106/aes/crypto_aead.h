/* The NIST LWC AEAD entry points: encrypt as mcu/lx106/harness.c calls it (-DLWC_DIRECT), and
 * decrypt for kat.c's known-answer and forgery checks. */
#ifndef LX106_CRYPTO_AEAD_H
#define LX106_CRYPTO_AEAD_H
int crypto_aead_encrypt(unsigned char *c, unsigned long long *clen, const unsigned char *m,
                        unsigned long long mlen, const unsigned char *ad, unsigned long long adlen,
                        const unsigned char *nsec, const unsigned char *npub, const unsigned char *k);
int crypto_aead_decrypt(unsigned char *m, unsigned long long *mlen, unsigned char *nsec,
                        const unsigned char *c, unsigned long long clen, const unsigned char *ad,
                        unsigned long long adlen, const unsigned char *npub, const unsigned char *k);
#endif
