/* advdb_int.h — the advisory database's layout, shared by advdb.c (storage,
 * load/save) and advmatch.c (matching) only. */
#ifndef VG_ADVDB_INT_H
#define VG_ADVDB_INT_H
#include "advisory/advisory.h"

struct vg_advdb {
    struct vg_advisory *advs;  /* sorted by (component, id) when `sorted` */
    size_t n, cap;
    bool sorted;
    struct vg_eol *eol;
    size_t neol;
    struct vg_minimum *min;
    size_t nmin;
    char date[16];             /* audit date, YYYY-MM-DD */
    char generated[40];        /* when the file was written, as loaded */
    struct vg_source *src;
    size_t nsrc;
};

void vg_advdb_sort(struct vg_advdb *db);

#endif
