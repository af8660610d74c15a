/* catalog.h — the fault catalog: a signal (kind + code) → vigil's action, with
 * NVIDIA's resolution bucket, the name, the earlier signals it is a
 * documented consequence of (caused_by) and its category.  Loaded from data/fault-catalog.tsv;
 * a site policy file (`xid 63 action=ignore`, `kind ib-down action=reboot`)
 * overrides any entry.  See docs/catalog.md. */
#ifndef VG_CATALOG_H
#define VG_CATALOG_H
#include "core/event.h"
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define VG_CODE_ANY (-1)
#define VG_CATALOG_AFTER_MAX 64   /* the largest count of a repeat rule */

struct vg_catalog_entry {
    char kind[24];
    int lo, hi;               /* code range; VG_CODE_ANY for "*" */
    enum vg_action action;
    char bucket[32];          /* NVIDIA's immediate resolution bucket, or "(none)" */
    char caused_by[256];      /* "xid:48,aer-fatal,*" — see vg_catalog_is_cause() */
    char name[128];
    char category[16];        /* what kind of fault (vg_catalog_categories), "" when the row has none */
    bool overridden;          /* action set by a policy file */
    /* A repeat rule ("3/3h"): this kind is not read from a source but made
     * by the repeat stage (repeat.h) when `after_n` events of the kinds in
     * caused_by happen on one device within `after_ms`; 0: none. */
    int after_n;
    int64_t after_ms;
    char after[24];           /* as written, for messages */
};

/* The categories a catalog row may have and a site policy may map to an
 * action ("category memory-ue action=drain-rma"), NULL-terminated. */
extern const char *const vg_catalog_categories[];

struct vg_catalog;

/* Loads path (NULL: vg_data_path("fault-catalog.tsv")).  On error returns
 * NULL and writes "file:line: what" into err. */
struct vg_catalog *vg_catalog_load(const char *path, char *err, size_t errlen);
/* Parses catalog text (the fuzz target and tests use it); name is for errors. */
struct vg_catalog *vg_catalog_parse(const char *text, size_t len, const char *name, char *err,
                                    size_t errlen);
/* Applies a site policy file: lines `xid CODE action=A`, `sxid CODE action=A`,
 * `kind NAME [CODE] action=A`, `category NAME action=A` (every row of that
 * category, NVIDIA's and AMD's alike), and `kind NAME after=N/WINDOW` for a
 * repeat rule's count and window; '#' comments.  Lines apply in order, each
 * over the rows it names.  Returns 0, or -1 with
 * "file:line: what" in err (the catalog is then partly updated; callers exit 2). */
int vg_catalog_apply_policy(struct vg_catalog *c, const char *path, char *err, size_t errlen);
int vg_catalog_apply_policy_text(struct vg_catalog *c, const char *text, size_t len,
                                 const char *name, char *err, size_t errlen);
void vg_catalog_free(struct vg_catalog *c);

/* The one source of verdicts, used the same way by scan, check and the
 * agent: the catalog (path, or the bundled one when NULL) with the site
 * policy applied — policy when given, else ROOT/etc/vigil/policy.tsv when it
 * exists (root NULL: /).  NULL with "file:line: what" in err when either
 * cannot be read or parsed: there is no fallback to the readers' own ideas. */
#define VG_SITE_POLICY "/etc/vigil/policy.tsv"
struct vg_catalog *vg_catalog_open(const char *root, const char *path, const char *policy, char *err,
                                   size_t errlen);

/* The narrowest entry for kind+code (code VG_CODE_ANY matches "*" rows only),
 * falling back to "kind *"; NULL when the kind is unknown. */
const struct vg_catalog_entry *vg_catalog_lookup(const struct vg_catalog *c, const char *kind,
                                                 int code);
/* The action for kind+code: the entry's, or restart-app for an unknown kind. */
enum vg_action vg_catalog_action(const struct vg_catalog *c, const char *kind, int code);
/* The verdict: sets e->action from the catalog, reading the message where
 * the catalog says the message decides (Xid 154's recovery action, an SXid's
 * Fatal/Non-fatal); a kind the catalog does not know gets restart-app.
 * Signal readers report facts only: this is the one place an event gets its
 * action.  Returns the entry used (NULL when none). */
const struct vg_catalog_entry *vg_catalog_classify(const struct vg_catalog *c, struct vg_event *e);
/* True when `earlier` is listed in entry's caused_by ("*" = any event). */
bool vg_catalog_is_cause(const struct vg_catalog_entry *entry, const struct vg_event *earlier);
/* Number of entries, and the i-th (for listings and tests). */
size_t vg_catalog_count(const struct vg_catalog *c);
const struct vg_catalog_entry *vg_catalog_at(const struct vg_catalog *c, size_t i);

#endif
