/* The variant's reference implementation built for the host (mcu/nistlwc.py, host_reference): the
 * ciphertext of each "AD:MSG" argument with the harness's inputs (byte i = i & 0xff in every
 * buffer), one line each: "AD MSG RC HEX". An image whose output differs from this one on the same
 * inputs fails its known-answer check. */
#include <stdio.h>
#include "api.h"
#include "crypto_aead.h"

#define MAX_LEN 2048u
static unsigned char msg[MAX_LEN], ad[MAX_LEN], key[32], nonce[32], ct[MAX_LEN + 64];

int main(int argc, char **argv) {
    for (unsigned i = 0; i < MAX_LEN; i++) msg[i] = ad[i] = (unsigned char)(i & 0xff);
    for (unsigned i = 0; i < 32; i++) key[i] = nonce[i] = (unsigned char)i;
    for (int a = 1; a < argc; a++) {
        unsigned adlen, mlen;
        if (sscanf(argv[a], "%u:%u", &adlen, &mlen) != 2 || adlen > MAX_LEN || mlen > MAX_LEN) return 2;
        unsigned long long clen = 0;
        int rc = crypto_aead_encrypt(ct, &clen, msg, mlen, ad, adlen, 0, nonce, key);
        if (clen > mlen + 64) return 3;
        printf("%u %u %d ", adlen, mlen, rc);
        for (unsigned long long i = 0; i < clen; i++) printf("%02x", ct[i]);
        printf("\n");
    }
    return 0;
}
