/* questionnaire.c — the questionnaire `vigil score --questionnaire FILE`
 * reads for what software cannot measure (support response, SLA, pricing
 * terms, partnerships, availability): `key = value` lines into a JSON object. */
#include "score/score.h"
#include "util/strutil.h"
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static json_t *value_of(char *v)
{
    size_t n = strlen(v);
    if (n >= 2 && v[0] == '"' && v[n - 1] == '"') return json_stringn(v + 1, n - 2);
    if (!strcasecmp(v, "yes") || !strcasecmp(v, "true")) return json_true();
    if (!strcasecmp(v, "no") || !strcasecmp(v, "false")) return json_false();
    char *end;
    double d = strtod(v, &end);
    if (*v && !*end && !isspace((unsigned char)*v)) {
        long l;
        return vg_parse_long(v, &l) ? json_integer(l) : json_real(d);
    }
    return json_string(v);
}

json_t *vg_questionnaire_parse(const char *text, size_t len, const char *name, char *err, size_t errlen)
{
    json_t *q = json_object();
    char *copy = vg_xstrndup(text ? text : "", text ? len : 0), *p = copy;
    int line = 0;
    if (strlen(copy) != (text ? len : 0)) {
        snprintf(err, errlen, "%s: contains a NUL byte", name);
        goto bad;
    }
    while (p) {
        char *nl = strchr(p, '\n');
        if (nl) *nl = 0;
        line++;
        char *s = vg_trim(p);
        p = nl ? nl + 1 : NULL;
        if (!*s || *s == '#') continue;
        char *eq = strchr(s, '=');
        if (!eq) {
            snprintf(err, errlen, "%s:%d: expected `key = value`", name, line);
            goto bad;
        }
        *eq = 0;
        char *k = vg_trim(s), *v = vg_trim(eq + 1);
        bool ok = *k != 0;
        for (char *c = k; *c && ok; c++) ok = islower((unsigned char)*c) || isdigit((unsigned char)*c) || *c == '_';
        if (!ok) {
            snprintf(err, errlen, "%s:%d: key '%.40s': use lowercase letters, digits and _", name, line, k);
            goto bad;
        }
        if (!*v) {
            snprintf(err, errlen, "%s:%d: %s: empty value", name, line, k);
            goto bad;
        }
        if (json_object_get(q, k)) {
            snprintf(err, errlen, "%s:%d: %s given twice", name, line, k);
            goto bad;
        }
        json_t *val = value_of(v);
        if (!val) {
            snprintf(err, errlen, "%s:%d: %s: not valid UTF-8", name, line, k);
            goto bad;
        }
        json_object_set_new(q, k, val);
    }
    free(copy);
    return q;
bad:
    free(copy);
    json_decref(q);
    return NULL;
}
