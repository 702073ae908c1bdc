/* AES-128-CCM of the emulated ESP8266 images, compiled here from its source, mcu/lx106/aes/ccm.c
 * (no copy): the include path must hold mcu/lx106 — platformio.ini adds it, the Arduino IDE
 * (which builds a copy of the sketch folder alone) does not, and the sketch then runs without
 * the C AEADs (LWCB_C_AEADS in lwcbench.ino). */
#define crypto_aead_encrypt lwc_ccm_encrypt /* one name per AEAD: each source defines the NIST API's */
#define crypto_aead_decrypt lwc_ccm_decrypt
#if defined(__has_include) && __has_include("aes/ccm.c")
#include "aes/ccm.c"
#endif
