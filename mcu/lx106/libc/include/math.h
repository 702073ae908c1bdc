/* Some implementations include math.h without calling into it (photon-beetle). */
#ifndef LX106_MATH_H
#define LX106_MATH_H
#endif
