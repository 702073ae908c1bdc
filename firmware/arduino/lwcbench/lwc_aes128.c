/* The AES-128 of CCM and GCM in the emulated ESP8266 images, compiled here from its source,
 * mcu/lx106/aes/aes128.c (no copy): the include path must hold mcu/lx106 — platformio.ini adds it, the Arduino IDE
 * (which builds a copy of the sketch folder alone) does not, and the sketch then runs without
 * the C AEADs (LWCB_C_AEADS in lwcbench.ino). */
#if defined(__has_include) && __has_include("aes/aes128.c")
#include "aes/aes128.c"
#endif
