/* Output is discarded: the implementations print only debug state. */
#ifndef LX106_STDIO_H
#define LX106_STDIO_H
#include <stddef.h>
#include <stdarg.h>
#ifdef __cplusplus
extern "C" {
#endif
typedef struct lx106_file FILE;
#define stdout ((FILE *)0)
#define stderr ((FILE *)0)
int printf(const char *fmt, ...);
int fprintf(FILE *f, const char *fmt, ...);
int sprintf(char *s, const char *fmt, ...);
int puts(const char *s);
int putchar(int c);
#ifdef __cplusplus
}
#endif
#endif
