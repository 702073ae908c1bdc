/* Allocation and version for the wolfSSL adapter (crates/catalog/src/aes/wolf.rs).
 * The size of wolfSSL's `Aes` struct depends on the library's build options, which only
 * the installed <wolfssl/options.h> knows, so allocation happens here in C; every other
 * call goes from Rust straight to the documented wc_* API. */
#include <wolfssl/options.h>
#include <wolfssl/wolfcrypt/settings.h>
#include <wolfssl/wolfcrypt/aes.h>
#include <wolfssl/version.h>
#include <stdlib.h>
#include <string.h>

const char *lwc_wolf_version(void) { return LIBWOLFSSL_VERSION_STRING; }

Aes *lwc_wolf_aes_new(void) {
    Aes *a = (Aes *)calloc(1, sizeof(Aes));
    if (a != NULL && wc_AesInit(a, NULL, INVALID_DEVID) != 0) {
        free(a);
        return NULL;
    }
    return a;
}

void lwc_wolf_aes_free(Aes *a) {
    if (a == NULL) return;
    wc_AesFree(a);
    explicit_bzero(a, sizeof(Aes)); /* round keys */
    free(a);
}
