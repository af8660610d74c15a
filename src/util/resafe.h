/* resafe.h — refuses regular expressions that glibc's regcomp() compiles
 * into a blow-up: a repetition operator applied straight to another
 * (`a++`, `x*{3}`, `(b?)*+`), which POSIX leaves undefined and glibc expands
 * state by state (a pattern of 100 `+` took more than a gigabyte), and
 * patterns longer than VG_RE_MAX bytes.  Call before regcomp on any pattern
 * that comes from a file or the command line. */
#ifndef VG_RESAFE_H
#define VG_RESAFE_H
#include <stdbool.h>

#define VG_RE_MAX 512

bool vg_regex_safe(const char *re);

#endif
