/* advstatus.c — how current the advisory database is, per source: how many
 * records each source gave, the newest one's publication date and its age
 * on the audit date (for a source whose records carry no dates, the Go
 * database's files, the age of the copy: the manifest's snapshot date), and
 * whether the data is older than a limit: the copy's age when the manifest
 * dates it, else the newest record's.  `vigil advisories status` prints it. */
#include "advisory/advdb_int.h"
#include "util/strutil.h"
#include "util/timeutil.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

long vg_days_between(const char *from, const char *to)
{
    char a[32], b[32];
    int64_t ma, mb;
    if (!from || !to || strlen(from) != 10 || strlen(to) != 10) return -1;
    snprintf(a, sizeof a, "%sT00:00:00Z", from);
    snprintf(b, sizeof b, "%sT00:00:00Z", to);
    if (!vg_parse_time(a, &ma) || !vg_parse_time(b, &mb)) return -1;
    return mb > ma ? (long)((mb - ma) / 86400000) : 0;   /* a date after the audit date is today's */
}

static struct vg_source_status *row_for(struct vg_source_status **rows, size_t *n, const char *name)
{
    for (size_t i = 0; i < *n; i++)
        if (!strcmp((*rows)[i].name, name)) return &(*rows)[i];
    *rows = vg_xrealloc(*rows, (*n + 1) * sizeof **rows);
    struct vg_source_status *r = &(*rows)[(*n)++];
    memset(r, 0, sizeof *r);
    vg_strlcpy(r->name, name, sizeof r->name);
    r->age_days = r->snapshot_age_days = -1;
    return r;
}

size_t vg_advdb_status(const struct vg_advdb *db, long max_age, struct vg_source_status **out)
{
    struct vg_source_status *rows = NULL;
    size_t n = 0;
    for (size_t i = 0; i < db->nsrc; i++) row_for(&rows, &n, db->src[i].name)->src = &db->src[i];
    for (size_t i = 0; i < db->n; i++) {
        const struct vg_advisory *a = &db->advs[i];
        struct vg_source_status *r = row_for(&rows, &n, a->source[0] ? a->source : "(untagged)");
        r->records++;
        r->undated += !a->published[0];
        if (a->published[0] && strcmp(a->published, r->newest) > 0) {
            vg_strlcpy(r->newest, a->published, sizeof r->newest);
            vg_strlcpy(r->newest_id, a->id, sizeof r->newest_id);
        }
    }
    for (size_t i = 0; i < n; i++) {
        struct vg_source_status *r = &rows[i];
        const char *snap = r->src ? r->src->snapshot : "";
        if (snap[0]) r->snapshot_age_days = vg_days_between(snap, db->date);
        /* a source with undated records (the Go database's files) has no known
         * newest record: its copy's date stands for it */
        if (r->newest[0] && !r->undated) r->age_days = vg_days_between(r->newest, db->date);
        else if (snap[0]) r->age_days = r->snapshot_age_days, r->age_from_snapshot = true;
        else if (r->newest[0]) r->age_days = vg_days_between(r->newest, db->date);
        /* the copy's age decides when it is known (an old newest record from a
         * fresh copy only means the source published nothing since); else the
         * newest record's; a source with records but no date at all is stale */
        long age = r->snapshot_age_days >= 0 ? r->snapshot_age_days : r->age_days;
        r->stale = age < 0 ? r->records > 0 : age > max_age;
    }
    *out = rows;
    return n;
}
