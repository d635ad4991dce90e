/*===- format_macros.h - <inttypes.h>, with the 64-bit macros ensured -----===*
 *
 * Debian's newlib 3.3 for arm-none-eabi defines PRIu64 and its kin only when
 * its own <stdint.h> declared the 64-bit types, which GCC's <stdint.h> does
 * first; they are then missing. uint64_t is unsigned long where long has 64
 * bits and unsigned long long elsewhere.
 *===----------------------------------------------------------------------===*/

#ifndef DLC_FORMAT_MACROS_H
#define DLC_FORMAT_MACROS_H

#include <inttypes.h>
#include <limits.h>

#ifndef PRIu64
#if ULONG_MAX > 0xffffffffu
#define DLC_PRI64_LENGTH "l"
#else
#define DLC_PRI64_LENGTH "ll"
#endif
#define PRId64 DLC_PRI64_LENGTH "d"
#define PRIu64 DLC_PRI64_LENGTH "u"
#define PRIx64 DLC_PRI64_LENGTH "x"
#endif

#endif /* DLC_FORMAT_MACROS_H */
