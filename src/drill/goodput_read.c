/* goodput_read.c — which job logs a path names (a log, a directory of them,
 * a drill report's runs) and reading each through goodput.c; see goodput.h. */
#include "drill/goodput.h"
#include "util/jsonutil.h"
#include "util/rootfs.h"
#include "util/sbuf.h"
#include "util/strutil.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define MAX_DEPTH 8

static json_t *read_log(const char *path, char *err, size_t errlen)
{
    FILE *f = fopen(path, "re");
    if (!f) return snprintf(err, errlen, "%s: %s", path, strerror(errno)), NULL;
    struct vg_goodput *g = vg_goodput_new(path);
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    int rc = 0;
    long ln = 0;
    while (!rc && (n = getline(&line, &cap, f)) >= 0) {
        ln++;
        if (n && line[n - 1] == '\n') line[--n] = 0;
        if (strlen(line) != (size_t)n) rc = -1, snprintf(err, errlen, "%s:%ld: a NUL byte: not a text log", path, ln);
        else rc = vg_goodput_line(g, line, err, errlen);
    }
    if (!rc && ferror(f)) rc = -1, snprintf(err, errlen, "%s: %s", path, strerror(errno));
    free(line);
    fclose(f);
    json_t *j = rc ? NULL : vg_goodput_finish(g, err, errlen);
    vg_goodput_free(g);
    return j;
}

static bool is_dir(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* Every *.log file below dir, in name order. */
static int walk(json_t *jobs, const char *dir, int depth, size_t *found, char *err, size_t errlen)
{
    char **names;
    int n = vg_list_dir(NULL, dir, &names);
    if (n < 0) return snprintf(err, errlen, "%s: %s", dir, strerror(errno)), -1;
    int rc = 0;
    for (int i = 0; i < n && !rc; i++) {
        struct sbuf p = SBUF_INIT;
        sbuf_printf(&p, "%s/%s", dir, names[i]);
        if (is_dir(p.s)) {
            if (depth < MAX_DEPTH) rc = walk(jobs, p.s, depth + 1, found, err, errlen);
        } else if (vg_endswith(names[i], ".log")) {
            json_t *j = read_log(p.s, err, errlen);
            if (j) json_array_append_new(jobs, j), ++*found;
            else rc = -1;
        }
        sbuf_free(&p);
    }
    vg_free_list(names, n);
    return rc;
}

/* A drill report: the log of each of its runs, with the run and the drill named. */
static int drill_report(json_t *jobs, const char *path, char *err, size_t errlen)
{
    json_error_t e;
    json_t *rep = json_load_file(path, 0, &e);
    if (!rep) return snprintf(err, errlen, "%s:%d: %s", path, e.line, e.text), -1;
    int rc = 0;
    const json_t *runs = json_object_get(rep, "runs");
    if (!json_is_array(runs) || !json_is_string(json_object_get(rep, "fault")))
        rc = -1, snprintf(err, errlen, "%s: field 'runs'/'fault': not a vigil drill report", path);
    else if (strcmp(vg_json_str(rep, "job", ""), "vigil trainer"))
        rc = -1, snprintf(err, errlen, "%s: field 'job': '%s' is not vigil trainer: its log has no trainer lines", path,
                          vg_json_str(rep, "job", "?"));
    size_t i;
    json_t *run;
    json_array_foreach(runs, i, run) {
        if (rc) break;
        const char *log = vg_json_str(run, "log", NULL);
        if (!log) {
            rc = -1, snprintf(err, errlen, "%s: run %zu: field 'log' missing", path, i + 1);
            break;
        }
        json_t *j = read_log(log, err, errlen);
        if (!j) {
            rc = -1;
            break;
        }
        json_object_set_new(j, "drill", json_string(path));
        json_object_set_new(j, "run", json_integer(vg_json_int(run, "run", (json_int_t)i + 1)));
        if (json_is_null(json_object_get(j, "ckpt_every")) && json_is_integer(json_object_get(rep, "ckpt_every")))
            json_object_set(j, "ckpt_every", json_object_get(rep, "ckpt_every"));
        json_array_append_new(jobs, j);
    }
    json_decref(rep);
    return rc;
}

int vg_goodput_add(json_t *jobs, const char *path, char *err, size_t errlen)
{
    if (is_dir(path)) {
        size_t found = 0;
        if (walk(jobs, path, 0, &found, err, errlen)) return -1;
        return found ? 0 : (snprintf(err, errlen, "%s: no *.log file in it", path), -1);
    }
    if (vg_endswith(path, ".json")) return drill_report(jobs, path, err, errlen);
    json_t *j = read_log(path, err, errlen);
    if (!j) return -1;
    json_array_append_new(jobs, j);
    return 0;
}
