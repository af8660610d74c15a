/* joblog.c — follows the drill job's own log (the trainer's progress lines,
 * or a user job's with --step-pattern/--resume-pattern): the last step before
 * the fault, the step it resumed from, and the first step after that; and
 * what each line is (vg_joblog_parse, which the goodput reader uses too).
 * See drill.h. */
#include "drill/drill.h"
#include "util/resafe.h"
#include "util/strutil.h"
#include "util/timeutil.h"
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int vg_joblog_init(struct vg_joblog *l, const char *path, const char *step_re, const char *resume_re,
                   char *err, size_t errlen)
{
    memset(l, 0, sizeof *l);
    vg_strlcpy(l->path, path ? path : "", sizeof l->path);
    l->last_step = l->step_before = l->resumed_from = l->resume_step = l->max_step = -1;
    const char *res[2] = { step_re, resume_re };
    regex_t *re[2] = { &l->step_re, &l->resume_re };
    for (int i = 0; i < 2; i++) {
        if (!vg_regex_safe(res[i])) {
            snprintf(err, errlen, "%s: '%.200s': a repetition of a repetition, or longer than %d bytes, is refused",
                     i ? "--resume-pattern" : "--step-pattern", res[i], VG_RE_MAX);
            if (i) regfree(re[0]);
            return -1;
        }
        int rc = regcomp(re[i], res[i], REG_EXTENDED);
        if (!rc && re[i]->re_nsub < 1) {
            regfree(re[i]);
            rc = -1;
        }
        if (rc) {
            snprintf(err, errlen, "%s: '%s' is not an extended regular expression with a (step) group",
                     i ? "--resume-pattern" : "--step-pattern", res[i]);
            if (i) regfree(re[0]);
            return -1;
        }
    }
    return 0;
}

void vg_joblog_free(struct vg_joblog *l)
{
    regfree(&l->step_re);
    regfree(&l->resume_re);
}

static bool match_step(const regex_t *re, const char *line, long *step)
{
    regmatch_t m[2];
    if (regexec(re, line, 2, m, 0) || m[1].rm_so < 0) return false;
    char num[24];
    size_t len = (size_t)(m[1].rm_eo - m[1].rm_so);
    if (len == 0 || len >= sizeof num) return false;
    memcpy(num, line + m[1].rm_so, len);
    num[len] = 0;
    return vg_parse_long(num, step) && *step >= 0;
}

/* The trainer's own words (the whole text after the stamp). */
static bool trainer_words(const char *text, struct vg_jobline *j)
{
    int end = -1;
    if (sscanf(text, "start rank %ld/%ld restart %ld%n", &j->rank, &j->ntasks, &j->step, &end) == 3 && !text[end] &&
        j->rank >= 0 && j->ntasks > j->rank && j->step >= 0)
        return j->kind = VG_JL_START, true;
    end = -1;
    if (sscanf(text, "checkpoint %ld%n", &j->step, &end) == 1 && !text[end] && j->step >= 0)
        return j->kind = VG_JL_CHECKPOINT, true;
    end = -1;
    if (sscanf(text, "done %ld steps%n", &j->step, &end) == 1 && !text[end] && j->step >= 0)
        return j->kind = VG_JL_DONE, true;
    return false;
}

void vg_joblog_parse(const struct vg_joblog *l, const char *line, int64_t now, struct vg_jobline *j)
{
    memset(j, 0, sizeof *j);
    j->at = now;
    j->step = j->rank = j->ntasks = -1;
    const char *text = line;
    char stamp[40];
    size_t sl = strcspn(line, " \t");
    if (sl > 0 && sl < sizeof stamp) {
        memcpy(stamp, line, sl);
        stamp[sl] = 0;
        int64_t ms;
        if (vg_parse_time(stamp, &ms)) j->at = ms, j->stamped = true, text = line + sl + (line[sl] ? 1 : 0);
    }
    if ((j->launch = strstr(line, " launch: "))) {   /* vigil launch's own lines: never a training step */
        j->kind = VG_JL_LAUNCH;
        return;
    }
    if (match_step(&l->resume_re, line, &j->step)) j->kind = VG_JL_RESUME;
    else if (match_step(&l->step_re, line, &j->step)) j->kind = VG_JL_STEP;
    else if (!trainer_words(text, j)) j->step = j->rank = j->ntasks = -1;   /* sscanf may have filled some */
}

void vg_joblog_line(struct vg_joblog *l, const char *line, int64_t now)
{
    struct vg_jobline j;
    vg_joblog_parse(l, line, now, &j);
    int64_t t = j.at;
    if (j.kind == VG_JL_LAUNCH) {
        long r;
        char nodes[256];
        if (!l->mark || t < l->mark) return;
        /* the launcher learned of the fault: told, or its step failed first (the DOWN
         * ends the step's tasks on the node, often before the tell arrives) */
        bool failed = vg_startswith(j.launch, " launch: step ") && strstr(j.launch, " failed (");
        if ((vg_startswith(j.launch, " launch: told") || failed) && !l->told_at) l->told_at = t;
        else if (!l->relaunched_at && sscanf(j.launch, " launch: step %ld on %255s", &r, nodes) == 2 && r > 0) {
            l->relaunched_at = t;
            vg_strlcpy(l->relaunch_nodes, nodes, sizeof l->relaunch_nodes);
        }
        return;
    }
    if (j.kind == VG_JL_RESUME) {
        if (l->mark && t >= l->mark && l->resumed_from < 0) {
            l->resumed_from = j.step;
            l->resumed_at = t;
        }
        return;
    }
    if (j.kind != VG_JL_STEP) return;
    long step = j.step;
    l->last_step = step;
    l->last_step_at = t;
    if (step > l->max_step) l->max_step = step;
    if (!l->mark || t <= l->mark) l->step_before = step;
    else if (l->resumed_from >= 0 && l->resume_step < 0) {
        l->resume_step = step;
        l->resume_step_at = t;
    }
}

void vg_joblog_poll(struct vg_joblog *l)
{
    int fd = open(l->path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return;
    char buf[16384];
    ssize_t r;
    while ((r = pread(fd, buf, sizeof buf, l->off)) > 0) {
        l->off += r;
        int64_t now = vg_now_ms();
        for (ssize_t i = 0; i < r; i++) {
            if (buf[i] != '\n') {
                if (l->carry_len < sizeof l->carry - 1) l->carry[l->carry_len++] = buf[i];
                continue;
            }
            l->carry[l->carry_len] = 0;
            vg_joblog_line(l, l->carry, now);
            l->carry_len = 0;
        }
    }
    close(fd);
}
