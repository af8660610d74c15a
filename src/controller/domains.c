/* domains.c — the NVLink domains nodes report; see domains.h.  Names are
 * interned (each distinct one stored once, never freed while the table
 * lives), so a pointer handed out stays valid when the node reports another
 * domain later. */
#include "controller/domains.h"
#include "util/strutil.h"
#include <ctype.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

struct entry {
    char node[64];
    const char *domain;   /* interned */
};

struct vg_domains {
    pthread_mutex_t lock;
    struct entry *e;
    size_t n, cap;
    char **names;         /* the interned names */
    size_t nnames;
};

struct vg_domains *vg_domains_new(void)
{
    struct vg_domains *d = vg_xcalloc(1, sizeof *d);
    pthread_mutex_init(&d->lock, NULL);
    return d;
}

void vg_domains_free(struct vg_domains *d)
{
    if (!d) return;
    for (size_t i = 0; i < d->nnames; i++) free(d->names[i]);
    free(d->names);
    free(d->e);
    pthread_mutex_destroy(&d->lock);
    free(d);
}

bool vg_domain_name_ok(const char *s)
{
    size_t n = s ? strlen(s) : 0;
    if (n == 0 || n >= VG_DOMAIN_MAX) return false;
    for (; *s; s++)
        if (!isalnum((unsigned char)*s) && !strchr("-_.:/", *s)) return false;
    return true;
}

static const char *intern(struct vg_domains *d, const char *name)
{
    for (size_t i = 0; i < d->nnames; i++)
        if (!strcmp(d->names[i], name)) return d->names[i];
    d->names = vg_xrealloc(d->names, (d->nnames + 1) * sizeof *d->names);
    return d->names[d->nnames++] = vg_xstrdup(name);
}

static struct entry *find(struct vg_domains *d, const char *node)
{
    for (size_t i = 0; i < d->n; i++)
        if (!strcmp(d->e[i].node, node)) return &d->e[i];
    return NULL;
}

int vg_domains_learn(struct vg_domains *d, const char *node, const char *domain)
{
    pthread_mutex_lock(&d->lock);
    struct entry *e = find(d, node);
    int changed = !e || strcmp(e->domain, domain) != 0;
    if (!e) {
        if (d->n == d->cap) d->e = vg_xrealloc(d->e, (d->cap = d->cap ? 2 * d->cap : 64) * sizeof *d->e);
        e = &d->e[d->n++];
        vg_strlcpy(e->node, node, sizeof e->node);
    }
    if (changed) e->domain = intern(d, domain);
    pthread_mutex_unlock(&d->lock);
    return changed;
}

const char *vg_domains_of(struct vg_domains *d, const char *node)
{
    if (!d) return NULL;
    pthread_mutex_lock(&d->lock);
    struct entry *e = find(d, node);
    const char *dom = e ? e->domain : NULL;
    pthread_mutex_unlock(&d->lock);
    return dom;
}

json_t *vg_domains_json(struct vg_domains *d)
{
    json_t *j = json_object();
    pthread_mutex_lock(&d->lock);
    for (size_t i = 0; i < d->n; i++) json_object_set_new(j, d->e[i].node, json_string(d->e[i].domain));
    pthread_mutex_unlock(&d->lock);
    return j;
}
