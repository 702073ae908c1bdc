/* AES-128 (FIPS 197), encryption only (CCM and GCM use the forward cipher alone), for the
 * ESP8266 images. No table is indexed by a secret: SubBytes computes the inverse in GF(2^8)
 * on four bytes of a 32-bit word at once, so time does not depend on key or data. */
#ifndef LX106_AES128_H
#define LX106_AES128_H
#include <stdint.h>

/** The expanded key: 11 round keys of four little-endian column words. */
typedef struct {
    uint32_t rk[44];
} aes128_key;

void aes128_expand(aes128_key *k, const uint8_t key[16]);
void aes128_encrypt(const aes128_key *k, uint8_t out[16], const uint8_t in[16]);
/* Constant-time tag comparison: 0 when equal. */
int aes_ct_diff(const uint8_t *a, const uint8_t *b, unsigned n);
#endif
