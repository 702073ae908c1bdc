#ifndef LX106_INTTYPES_H
#define LX106_INTTYPES_H
#include <stdint.h>
#define PRIx8 "x"
#define PRIx16 "x"
#define PRIx32 "lx"
#define PRIx64 "llx"
#define PRIu32 "lu"
#define PRIu64 "llu"
#define PRId32 "ld"
#endif
