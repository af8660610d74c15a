/* slurm_config.c — Slurm configuration as key/value pairs, from the text of
 * `scontrol show config` or of a slurm.conf / cgroup.conf file (the parsers
 * behind vg_slurm_show_config; used by the security checks). */
#include "orch/slurm.h"
#include "util/strutil.h"
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static void kv_put(struct vg_slurm_kv **kv, size_t *n, size_t *cap, const char *k, size_t klen, const char *v,
                   bool replace)
{
    for (size_t i = 0; i < *n; i++)
        if (strlen((*kv)[i].key) == klen && !strncasecmp((*kv)[i].key, k, klen)) {
            if (!replace) return;
            free((*kv)[i].value);
            (*kv)[i].value = vg_xstrdup(v);
            return;
        }
    if (*n == *cap) {
        *cap = *cap ? *cap * 2 : 64;
        *kv = vg_xrealloc(*kv, *cap * sizeof **kv);
    }
    (*kv)[*n].key = vg_xstrndup(k, klen);
    (*kv)[*n].value = vg_xstrdup(v);
    (*n)++;
}

static bool key_char(char c)
{
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '(' ||
           c == ')';
}

/* Splits each line at its first separator '=' into a trimmed key (only key
 * characters) and value; calls back for lines that qualify. */
static int parse_lines(const char *text, struct vg_slurm_kv **kv, size_t *n, bool file)
{
    *kv = NULL, *n = 0;
    size_t cap = 0;
    if (!text) return -1;
    char *copy = vg_xstrdup(text), *save = NULL;
    for (char *line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        if (file) {
            char *hash = strchr(line, '#');
            if (hash) *hash = 0;
        }
        char *eq = strchr(line, '=');
        if (!eq) continue;
        *eq = 0;
        char *k = vg_trim(line), *v = vg_trim(eq + 1);
        size_t klen = strlen(k);
        if (!klen) continue;
        bool ok = true;
        for (size_t i = 0; i < klen && ok; i++) ok = key_char(k[i]);
        if (!ok) continue;
        if (file && (!strcasecmp(k, "NodeName") || !strcasecmp(k, "PartitionName") || !strcasecmp(k, "NodeSet") ||
                     !strcasecmp(k, "DownNodes") || !strcasecmp(k, "FrontendName")))
            continue;
        if (!file && !strcmp(v, "(null)")) v = "";
        kv_put(kv, n, &cap, k, klen, v, file);
    }
    free(copy);
    return 0;
}

int vg_slurm_parse_config(const char *text, struct vg_slurm_kv **kv, size_t *n)
{
    if (parse_lines(text, kv, n, false)) return -1;
    if (*n == 0) return -1;   /* not show config output */
    return 0;
}

int vg_slurm_parse_conf_file(const char *text, struct vg_slurm_kv **kv, size_t *n)
{
    return parse_lines(text, kv, n, true);
}

const char *vg_slurm_kv_get(const struct vg_slurm_kv *kv, size_t n, const char *key)
{
    for (size_t i = 0; i < n; i++)
        if (!strcasecmp(kv[i].key, key)) return kv[i].value;
    return NULL;
}

void vg_slurm_kv_free(struct vg_slurm_kv *kv, size_t n)
{
    for (size_t i = 0; i < n; i++) free(kv[i].key), free(kv[i].value);
    free(kv);
}

bool vg_slurm_param(const char *list, const char *opt, char *buf, size_t n)
{
    if (!list) return false;
    size_t ol = strlen(opt);
    for (const char *p = list; *p;) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        if (len >= ol && !strncasecmp(p, opt, ol) && (len == ol || p[ol] == '=')) {
            size_t vl = len > ol ? len - ol - 1 : 0;
            if (n) {
                if (vl >= n) vl = n - 1;
                memcpy(buf, p + ol + (len > ol), vl);
                buf[vl] = 0;
            }
            return true;
        }
        p += len + (end != NULL);
    }
    return false;
}
