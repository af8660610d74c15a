/* parse_dcgm.c — `dcgmi diag` output, both forms:
 *   JSON (-j): DCGM 4.x {"DCGM Diagnostic": {"test_categories": [{"tests":
 *     [{"name", "results": [{"entity_id", "status": "Pass|Fail|Skip|Warn",
 *     "warnings": [{"warning"}]}]}]}]}, "metadata": {"version"}} and 3.x
 *     {"DCGM GPU Diagnostic": {… "results": [{"gpu_ids", "status": "PASS",
 *     "warnings"?}], …, "version"}} (null entries between tests, text before
 *     the document);
 *   the table: "| Test name | Pass - All |" rows by section, continuation
 *     rows ("|  | Fail - GPU: 1 |", "|  | GPU0: Fail |") and "Warning"/"Error" rows
 *     whose text dcgmi wraps at the cell width mid-word.
 * A test fails when any of its results says Fail. */
#include "burnin/lines.h"
#include "burnin/parsers.h"
#include <ctype.h>
#include <jansson.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

static void note_fail(struct vg_dcgm_result *r, const char *test, const char *who, const char *why)
{
    r->failed++;
    if (r->first_fail[0]) return;
    snprintf(r->first_fail, sizeof r->first_fail, "%s: Fail%s%s%s%s", test, who[0] ? " - " : "", who,
             why && *why ? ": " : "", why ? why : "");
}

/* ---- JSON ---------------------------------------------------------------- */

static void json_test(struct vg_dcgm_result *r, const json_t *t)
{
    const char *name = json_string_value(json_object_get(t, "name"));
    const json_t *results = json_object_get(t, "results");
    if (!name || !json_is_array(results)) return;
    r->tests++;
    size_t i;
    const json_t *res;
    json_array_foreach(results, i, res) {
        const char *st = json_string_value(json_object_get(res, "status"));
        if (!st) continue;
        if (!strcasecmp(st, "skip")) r->skipped++;
        if (strcasecmp(st, "fail")) continue;
        char who[48] = "";
        const json_t *id = json_object_get(res, "entity_id");
        if (!id) id = json_object_get(res, "gpu_ids");
        if (json_is_integer(id)) snprintf(who, sizeof who, "GPU %lld", (long long)json_integer_value(id));
        else if (json_is_string(id)) snprintf(who, sizeof who, "GPU %s", json_string_value(id));
        const json_t *w = json_array_get(json_object_get(res, "warnings"), 0);
        note_fail(r, name, who, json_string_value(json_object_get(w, "warning")));
    }
}

static int parse_json(const char *text, size_t len, struct vg_dcgm_result *r, char *err, size_t errlen)
{
    json_error_t je;
    json_t *doc = json_loadb(text, len, 0, &je);
    if (!doc) {
        snprintf(err, errlen, "dcgmi JSON: line %d: %s", je.line, je.text);
        return -1;
    }
    const json_t *d = json_object_get(doc, "DCGM Diagnostic");
    if (!d) d = json_object_get(doc, "DCGM GPU Diagnostic");
    const json_t *cats = json_object_get(d, "test_categories");
    if (!json_is_array(cats)) {
        snprintf(err, errlen, "dcgmi JSON: no 'DCGM Diagnostic'.test_categories");
        json_decref(doc);
        return -1;
    }
    r->json = true;
    const char *v = json_string_value(json_object_get(json_object_get(doc, "metadata"), "version"));
    if (!v) v = json_string_value(json_object_get(d, "version"));
    snprintf(r->version, sizeof r->version, "%s", v ? v : "");
    size_t i, k;
    const json_t *c, *t;
    json_array_foreach(cats, i, c) json_array_foreach(json_object_get(c, "tests"), k, t) json_test(r, t);
    json_decref(doc);
    return 0;
}

/* ---- table --------------------------------------------------------------- */

#define WRAP 46   /* dcgmi's result cell holds 46 characters of text */

/* Splits "| name | value |" into its two cells (in place); false for other lines. */
static bool cells(char *line, char **name, char **value)
{
    if (line[0] != '|' || line[1] == '-' || line[1] == '=') return false;
    char *bar = strchr(line + 1, '|');
    if (!bar) return false;
    *bar = 0;
    *name = line + 1;
    *value = bar + 1;
    char *end = strrchr(*value, '|');
    if (end) *end = 0;
    if (**value == ' ') ++*value;
    for (char *e = *name + strlen(*name); e > *name && e[-1] == ' ';) *--e = 0;
    while (**name == ' ') ++*name;
    return true;
}

static char *rtrim(char *s)
{
    for (char *e = s + strlen(s); e > s && isspace((unsigned char)e[-1]);) *--e = 0;
    return s;
}

/* "GPU3: Pass": a DCGM 4.x per-GPU result row. */
static bool per_gpu(const char *v)
{
    return !strncmp(v, "GPU", 3) && isdigit((unsigned char)v[3]) && strstr(v, ": ") != NULL;
}

static int parse_table(const char *text, size_t len, struct vg_dcgm_result *r, char *err, size_t errlen)
{
    struct vg_lines it = { text, text + len };
    char buf[512], test[64] = "", warning[240] = "";
    bool table = false, metadata = false, in_warning = false, test_failed = false;
    while (vg_lines_next(&it, buf, sizeof buf)) {
        if (strstr(buf, "| Diagnostic") && strstr(buf, "| Result")) {
            table = true;
            continue;
        }
        if (!table) continue;
        if (!strncmp(buf, "|-----", 6) || !strncmp(buf, "+-----", 6)) {
            metadata = strstr(buf, "Metadata") != NULL;
            continue;
        }
        char *name, *value;
        if (!cells(buf, &name, &value)) continue;
        if (metadata) {
            if (!strcmp(name, "DCGM Version")) snprintf(r->version, sizeof r->version, "%s", rtrim(value));
            continue;
        }
        if (!strcmp(name, "Warning") || !strcmp(name, "Error") || !strcmp(name, "Info")) {
            in_warning = strcmp(name, "Info") && !warning[0] && test_failed;
            if (in_warning) snprintf(warning, sizeof warning, "%s", rtrim(value));
            continue;
        }
        if (name[0]) {
            in_warning = false;
            snprintf(test, sizeof test, "%s", name);
            r->tests++;
            test_failed = false;
        } else if (in_warning && !per_gpu(value)) {   /* a wrapped warning goes on, cut at the cell width */
            size_t have = strlen(warning), v = strlen(rtrim(value));
            if (have < sizeof warning - 1 && v)
                snprintf(warning + have, sizeof warning - have, "%s", value);
            continue;
        }
        char *v = rtrim(value);
        if (per_gpu(v)) v = strstr(v, ": ") + 2;
        in_warning = false;
        if (!strncasecmp(v, "Skip", 4)) r->skipped++;
        if (!strncasecmp(v, "Fail", 4)) {
            if (!test_failed) r->failed++;
            test_failed = true;
            if (!r->first_fail[0])
                snprintf(r->first_fail, sizeof r->first_fail, "%s: %s", test, rtrim(value));
        }
    }
    if (!table) {
        snprintf(err, errlen, "not dcgmi diag output (no JSON document and no '| Diagnostic | Result |' table)");
        return -1;
    }
    if (warning[0]) {
        size_t have = strlen(r->first_fail);
        snprintf(r->first_fail + have, sizeof r->first_fail - have, ": %s", warning);
    }
    return 0;
}

int vg_parse_dcgm(const char *text, size_t len, struct vg_dcgm_result *r, char *err, size_t errlen)
{
    memset(r, 0, sizeof *r);
    /* JSON: the document starts at the first line that opens with '{'
     * (dcgmi may print a banner before it). */
    struct vg_lines it = { text, text + len };
    char buf[64];
    const char *at = text;
    while (it.p < it.end) {
        at = it.p;
        vg_lines_next(&it, buf, sizeof buf);
        const char *s = buf;
        while (*s == ' ' || *s == '\t') s++;
        if (*s == '{') return parse_json(at, (size_t)(text + len - at), r, err, errlen);
        if (*s == '|' || *s == '+') break;
    }
    return parse_table(text, len, r, err, errlen);
}
