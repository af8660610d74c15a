/* kapi_faults.c — the API misbehaving the way a real cluster's API can,
 * for the tests (the controls in kapi.c route here):
 *   POST /_test/hang   {"method":"PATCH","path":"/api/v1/nodes/n1"}  matching requests are held,
 *                      unanswered, as an admission webhook that does not answer holds them, until
 *   GET /_test/hang    {"held":N}: how many requests are held now
 *   DELETE /_test/hang  lets every held request through (each is then served as usual); a held
 *                      request goes on by itself after 120 s
 *   POST /_test/omit   {"node":"n2","count":1}  the next `count` node lists leave that node out
 *                      (a node re-registering, a lagging cache); GET of the node still finds it
 *   POST /_test/fatten {"count":2000,"bytes":40000,"prefix":"fat"}  adds nodes fat-0001… whose status lists
 *                      images until each is about `bytes` long (real nodes list up to 50 images;
 *                      many nodes make a node list of hundreds of MB)
 * The hang is waited for outside the cluster's lock: the rest of the API goes on meanwhile. */
#include "kapi.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define HANG_MAX_S 120

static pthread_mutex_t hang_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t hang_cond = PTHREAD_COND_INITIALIZER;
static json_t *hangs;          /* [{method, path}] */
static unsigned long released; /* bumped by each DELETE /_test/hang */
static int nheld;              /* requests held now */
static json_t *omits;          /* node name → lists left to leave it out of */

void kapi_faults_init(void)
{
    hangs = json_array();
    omits = json_object();
}

static bool matches(const json_t *rule, const char *method, const char *path)
{
    const char *m = json_string_value(json_object_get(rule, "method"));
    const char *p = json_string_value(json_object_get(rule, "path"));
    return (!m || !strcmp(m, method)) && (!p || !strcmp(p, path));
}

bool kapi_hang_wait(const char *method, const char *path)
{
    pthread_mutex_lock(&hang_lock);
    bool held = false;
    size_t i;
    json_t *h;
    json_array_foreach(hangs, i, h) held = held || matches(h, method, path);
    if (held) {
        unsigned long gen = released;
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_sec += HANG_MAX_S;
        nheld++;
        while (gen == released && pthread_cond_timedwait(&hang_cond, &hang_lock, &until) != ETIMEDOUT) {}
        nheld--;
    }
    pthread_mutex_unlock(&hang_lock);
    return held;
}

void kapi_hang_add(const json_t *rule)
{
    pthread_mutex_lock(&hang_lock);
    json_array_append_new(hangs, json_deep_copy(rule));
    pthread_mutex_unlock(&hang_lock);
}

int kapi_hang_held(void)
{
    pthread_mutex_lock(&hang_lock);
    int n = nheld;
    pthread_mutex_unlock(&hang_lock);
    return n;
}

void kapi_hang_release(void)
{
    pthread_mutex_lock(&hang_lock);
    json_array_clear(hangs);
    released++;
    pthread_cond_broadcast(&hang_cond);
    pthread_mutex_unlock(&hang_lock);
}

/* The caller holds K.lock (omits is the cluster's). */
void kapi_omit_add(const char *node, long count)
{
    json_object_set_new(omits, node, json_integer(count > 0 ? count : 1));
}

bool kapi_omit_take(const char *node)
{
    json_int_t left = json_integer_value(json_object_get(omits, node));
    if (left <= 0) return false;
    if (left == 1) json_object_del(omits, node);
    else json_object_set_new(omits, node, json_integer(left - 1));
    return true;
}

void kapi_fatten(const char *prefix, long count, long bytes)
{
    for (long i = 1; i <= count; i++) {
        char name[96];
        snprintf(name, sizeof name, "%.60s-%04ld", prefix, i);
        json_t *images = json_array();
        long size = 600;
        for (long k = 0; size < bytes; k++) {
            char a[200], b[200];
            snprintf(a, sizeof a, "registry.example.com/training/image-%04ld@sha256:%064ld", k, i * 100000 + k);
            snprintf(b, sizeof b, "registry.example.com/training/image-%04ld:v%ld.%ld", k, i, k);
            json_array_append_new(images, json_pack("{s:[s,s],s:I}", "names", a, b, "sizeBytes", (json_int_t)(1 << 30)));
            size += (long)(strlen(a) + strlen(b)) + 40;
        }
        json_t *node = json_pack("{s:s,s:s,s:{s:s,s:{s:s}},s:{},s:{s:{s:s,s:s},s:[{s:s,s:s}],s:o}}", "apiVersion",
                                 "v1", "kind", "Node", "metadata", "name", name, "labels", "kubernetes.io/hostname",
                                 name, "spec", "status", "allocatable", "cpu", "64", "pods", "110", "conditions",
                                 "type", "Ready", "status", "True", "images", images);
        char uid[48];
        snprintf(uid, sizeof uid, "nodes-%.20s-%ld", prefix, i);
        json_object_set_new(json_object_get(node, "metadata"), "uid", json_string(uid));
        json_object_set_new(json_object_get(node, "metadata"), "creationTimestamp", json_string(kapi_now()));
        kapi_bump(node);
        json_object_set_new(K.nodes, name, node);
    }
}
