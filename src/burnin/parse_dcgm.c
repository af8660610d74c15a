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
 * Each test is counted once, by its results over every GPU: failed when any
 * says Fail, passed when any says Pass or Warn, else skipped (Skip, Not
 * Run); a test outside the Deployment section (software checks) is a
 * hardware test, and the hardware tests that ran are counted apart. */
#include "burnin/lines.h"
#include "burnin/parsers.h"
#include <ctype.h>
#include <jansson.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

/* ---- one test's outcome over its results -------------------------------- */

struct test_acc {
    char name[64];
    bool open, deployment;          /* a test is being read; it is a Deployment (software) check */
    bool ran, failed, skipped;      /* some result passed or warned / failed / was skipped or not run */
};

/* "Pass", "Fail - GPU: 1", "Skip - All", "Warn", "Not Run": one result. */
static void acc_status(struct test_acc *t, const char *v)
{
    if (!strncasecmp(v, "Fail", 4)) t->failed = true;
    else if (!strncasecmp(v, "Pass", 4) || !strncasecmp(v, "Warn", 4)) t->ran = true;
    else if (*v) t->skipped = true;
}

/* Adds name to a ", "-separated list, once (a second table repeats the tests). */
static void add_name(char *list, size_t n, const char *name)
{
    size_t have = strlen(list), l = strlen(name);
    for (const char *p = list; (p = strstr(p, name)); p += l)
        if ((p == list || p[-1] == ' ') && (p[l] == ',' || !p[l])) return;
    if (have + 2 + strlen(name) + 1 < n) snprintf(list + have, n - have, "%s%s", have ? ", " : "", name);
    else if (have && !strstr(list, "…") && have + 4 < n) snprintf(list + have, n - have, ", …");
}

/* The test read is complete: counted by its outcome. */
static void acc_close(struct vg_dcgm_result *r, struct test_acc *t)
{
    if (!t->open) return;
    t->open = false;
    r->tests++;
    if (t->failed) r->failed++;
    else if (t->ran) r->passed++;
    else r->skipped++;
    if (t->deployment) return;
    r->hw_tests++;
    if (t->failed || t->ran) r->hw_ran++;
    else add_name(r->skipped_names, sizeof r->skipped_names, t->name);
}

static void acc_open(struct test_acc *t, const char *name, bool deployment)
{
    *t = (struct test_acc){ .open = true, .deployment = deployment };
    snprintf(t->name, sizeof t->name, "%s", name);
}

static void first_fail(struct vg_dcgm_result *r, const char *test, const char *who, const char *why)
{
    if (r->first_fail[0]) return;
    snprintf(r->first_fail, sizeof r->first_fail, "%s: Fail%s%s%s%s", test, who[0] ? " - " : "", who,
             why && *why ? ": " : "", why ? why : "");
}

/* ---- JSON ---------------------------------------------------------------- */

static void json_test(struct vg_dcgm_result *r, const json_t *t, bool deployment)
{
    const char *name = json_string_value(json_object_get(t, "name"));
    const json_t *results = json_object_get(t, "results");
    if (!name || !json_is_array(results)) return;
    struct test_acc acc;
    acc_open(&acc, name, deployment);
    size_t i;
    const json_t *res;
    json_array_foreach(results, i, res) {
        const char *st = json_string_value(json_object_get(res, "status"));
        if (!st) continue;
        acc_status(&acc, st);
        if (strcasecmp(st, "fail")) continue;
        char who[48] = "";
        const json_t *id = json_object_get(res, "entity_id");
        if (!id) id = json_object_get(res, "gpu_ids");
        if (json_is_integer(id)) snprintf(who, sizeof who, "GPU %lld", (long long)json_integer_value(id));
        else if (json_is_string(id)) snprintf(who, sizeof who, "GPU %s", json_string_value(id));
        const json_t *w = json_array_get(json_object_get(res, "warnings"), 0);
        first_fail(r, name, who, json_string_value(json_object_get(w, "warning")));
    }
    acc_close(r, &acc);
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
    json_array_foreach(cats, i, c) {
        const char *cat = json_string_value(json_object_get(c, "category"));
        bool deployment = cat && !strcasecmp(cat, "Deployment");
        json_array_foreach(json_object_get(c, "tests"), k, t) json_test(r, t, deployment);
    }
    json_decref(doc);
    return 0;
}

/* ---- table --------------------------------------------------------------- */

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

/* "|-----  Deployment  ----+---|" / "+-----  Hardware  ---+": the section's name. */
static void section_name(const char *line, char *buf, size_t n)
{
    const char *p = line + 1;
    while (*p == '-' || *p == ' ') p++;
    size_t l = 0;
    while (p[l] && p[l] != ' ' && p[l] != '-' && p[l] != '+' && p[l] != '|') l++;
    snprintf(buf, n, "%.*s", (int)l, p);
}

static int parse_table(const char *text, size_t len, struct vg_dcgm_result *r, char *err, size_t errlen)
{
    struct vg_lines it = { text, text + len };
    char buf[512], section[32] = "", warning[240] = "";
    bool table = false, in_warning = false;
    struct test_acc t = { .open = false };
    while (vg_lines_next(&it, buf, sizeof buf)) {
        if (strstr(buf, "| Diagnostic") && strstr(buf, "| Result")) {
            acc_close(r, &t);
            table = true;
            continue;
        }
        if (!table) continue;
        if (!strncmp(buf, "|-----", 6) || !strncmp(buf, "+-----", 6)) {
            acc_close(r, &t);
            section_name(buf, section, sizeof section);
            continue;
        }
        char *name, *value;
        if (!cells(buf, &name, &value)) continue;
        if (!strcmp(section, "Metadata")) {
            if (!strcmp(name, "DCGM Version")) snprintf(r->version, sizeof r->version, "%s", rtrim(value));
            continue;
        }
        if (!strcmp(name, "Warning") || !strcmp(name, "Error") || !strcmp(name, "Info")) {
            in_warning = strcmp(name, "Info") && !warning[0] && t.failed;
            if (in_warning) snprintf(warning, sizeof warning, "%s", rtrim(value));
            continue;
        }
        if (name[0]) {
            acc_close(r, &t);
            acc_open(&t, name, !strcasecmp(section, "Deployment"));
            in_warning = false;
        } else if (in_warning && !per_gpu(value)) {   /* a wrapped warning goes on, cut at the cell width */
            size_t have = strlen(warning), v = strlen(rtrim(value));
            if (have < sizeof warning - 1 && v)
                snprintf(warning + have, sizeof warning - have, "%s", value);
            continue;
        }
        if (!t.open) continue;   /* a result row before any test's */
        char *v = rtrim(value);
        if (per_gpu(v)) v = strstr(v, ": ") + 2;
        in_warning = false;
        bool failed = t.failed;
        acc_status(&t, v);
        if (t.failed && !failed && !r->first_fail[0])
            snprintf(r->first_fail, sizeof r->first_fail, "%s: %s", t.name, rtrim(value));
    }
    acc_close(r, &t);
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
