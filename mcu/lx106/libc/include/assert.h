/* An assertion that fails ends the run with abort(): a failed row, not a silent one. */
#ifndef LX106_ASSERT_H
#define LX106_ASSERT_H
#ifdef __cplusplus
extern "C"
#endif
void abort(void) __attribute__((noreturn));
#ifdef NDEBUG
#define assert(x) ((void)0)
#else
#define assert(x) ((x) ? (void)0 : abort())
#endif
#endif
