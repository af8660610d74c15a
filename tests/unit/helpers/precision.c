/* precision.c — finds numbers printed with too many decimals in rendered
 * output; see precision.h. */
#include "precision.h"
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>

const char *long_decimal(const char *text, char *out, size_t n)
{
    regex_t re;
    regmatch_t m;
    if (regcomp(&re, "[0-9]\\.[0-9]{4,}", REG_EXTENDED)) abort();
    int hit = regexec(&re, text, 1, &m, 0) == 0;
    regfree(&re);
    if (!hit) return NULL;
    regoff_t from = m.rm_so > 30 ? m.rm_so - 30 : 0;
    snprintf(out, n, "'%.*s' in …%.*s…", (int)(m.rm_eo - m.rm_so), text + m.rm_so, (int)(m.rm_eo + 10 - from),
             text + from);
    return out;
}
