/* resafe.c — the regular-expression guard; see resafe.h. */
#include "util/resafe.h"
#include <string.h>

static bool is_rep(char c) { return c == '*' || c == '+' || c == '?' || c == '{'; }

bool vg_regex_safe(const char *re)
{
    if (strlen(re) > VG_RE_MAX) return false;
    bool after_rep = false;   /* the last item was a repetition operator */
    for (const char *p = re; *p; p++) {
        if (*p == '\\' && p[1]) {
            p++, after_rep = false;
            continue;
        }
        if (*p == '[') {   /* a bracket expression: ']' first is a member, as are [:class:] names */
            const char *q = p + 1;
            if (*q == '^') q++;
            if (*q == ']') q++;
            while (*q && *q != ']') q += q[0] == '[' && (q[1] == ':' || q[1] == '.' || q[1] == '=') && strchr(q + 2, ']')
                                          ? (size_t)(strchr(q + 2, ']') - q) + 1
                                          : 1;
            if (!*q) return true;   /* unterminated: regcomp refuses it */
            p = q, after_rep = false;
            continue;
        }
        if (is_rep(*p)) {
            if (after_rep) return false;
            if (*p == '{') {
                const char *close = strchr(p, '}');
                if (!close) return true;   /* regcomp decides */
                p = close;
            }
            after_rep = true;
            continue;
        }
        after_rep = false;
    }
    return true;
}
