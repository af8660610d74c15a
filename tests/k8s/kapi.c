/* kapi.c — a Kubernetes API server double for the tests (libmicrohttpd).  It
 * follows the documented REST contract for what vigil and kubectl use:
 * discovery (/version, /api, /apis, the resource lists), every resource of
 * the KINDS table kept in a store of its own (the custom resources JobSet and
 * ServiceMonitor included): create, get, list with labelSelector and
 * fieldSelector in pages (limit, continue), PATCH in its three content types
 * (and the status subresource), delete, deletecollection, each with
 * ?dryRun=All; pods/eviction as policy/v1; resourceVersion with 409
 * Conflict; the NamespaceLifecycle admission (nothing created in a namespace
 * that does not exist); Status objects for errors; server-side Tables for
 * `kubectl get`; /openapi/v2 for kubectl's validation (kapi_openapi.c).
 * The harness's scheduler and Job controller run in kapi_sim.c; the API's
 * misbehaviour (held requests, a node left out of a list, long lists) in
 * kapi_faults.c.  Test controls, outside the API's paths:
 *   POST /_test/fault  {"code":429,"method":"PATCH","path":"/api/v1/nodes/n1","count":3,
 *                       "retry_after":0,"message":"…"}  the next matching requests fail so
 *   POST /_test/deny   {"verb":"patch","resource":"nodes/status"}  (DELETE: allow all)
 *   POST /_test/token  {"token":"…"}   the bearer token now required
 *   /_test/hang, /_test/omit, /_test/fatten: kapi_faults.c
 * Authentication as the API server's: a bearer token (--token; its user is
 * vigil's service account) or, with --client-ca, a client certificate that
 * verifies against that CA (its user is the subject's CN, kapi_tls.c); 401
 * when neither does.  The log names each request's user.  Events (core/v1)
 * are kept: create (validated as the API server does for the legacy Event),
 * list with fieldSelector involvedObject.*, a server-side Table for
 * `kubectl get events`.
 * Usage: kapi --port-file FILE [--port N] [--state FILE.json] [--token T] [--log FILE] [--tick MS]
 *             [--tls-cert PEM --tls-key PEM]   (HTTPS; bearer tokens over it)
 *             [--client-ca PEM]   (with --tls-*: client certificates signed by this CA authenticate)
 *             [--exec DIR]   the kubelet runs containers' commands as local processes (kapi_exec.c);
 *                            pods/NAME/log serves their output
 *             [--openapi FILE.gz]   the OpenAPI v2 document (JSON, gzip) /openapi/v2 serves */
#include "kapi.h"
#include <arpa/inet.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

struct kapi K = { .lock = PTHREAD_MUTEX_INITIALIZER };

static json_t *faults, *denied;
static char token[256];
static char *client_ca;
static FILE *logf;
static const char *USER = "system:serviceaccount:vigil:vigil-controller";

void kapi_bump(json_t *obj)
{
    char rv[32];
    snprintf(rv, sizeof rv, "%lu", ++K.rv);
    json_t *md = json_object_get(obj, "metadata");
    if (!md) json_object_set_new(obj, "metadata", md = json_object());
    json_object_set_new(md, "resourceVersion", json_string(rv));
}

const char *kapi_now(void)
{
    static __thread char buf[32];
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return buf;
}

/* ---- one request -------------------------------------------------------------- */

struct req {
    struct MHD_Connection *c;
    const char *method, *url;
    char *body;
    size_t len;
    char *seg[12];
    size_t nseg;
    char path[1024];
    char user[256];   /* who authenticated; "system:anonymous" when no authentication is asked for */
};

static const char *arg(struct req *r, const char *k)
{
    return MHD_lookup_connection_value(r->c, MHD_GET_ARGUMENT_KIND, k);
}
static const char *hdr(struct req *r, const char *k) { return MHD_lookup_connection_value(r->c, MHD_HEADER_KIND, k); }

/* ?dryRun=All: everything but the write (kubectl apply --dry-run=server). */
static bool dry_run(struct req *r)
{
    const char *d = arg(r, "dryRun");
    return d && !strcmp(d, "All");
}

static enum MHD_Result send_json(struct req *r, int code, json_t *body, const char *ctype, int retry_after)
{
    char *text = json_dumps(body, JSON_COMPACT);
    json_decref(body);
    struct MHD_Response *resp = MHD_create_response_from_buffer(strlen(text), text, MHD_RESPMEM_MUST_FREE);
    MHD_add_response_header(resp, "Content-Type", ctype ? ctype : "application/json");
    if (retry_after >= 0) {
        char ra[16];
        snprintf(ra, sizeof ra, "%d", retry_after);
        MHD_add_response_header(resp, "Retry-After", ra);
    }
    enum MHD_Result rc = MHD_queue_response(r->c, (unsigned)code, resp);
    MHD_destroy_response(resp);
    if (logf && strncmp(r->url, "/_test", 6)) {
        const char *ct = hdr(r, "Content-Type");
        const char *ua = hdr(r, "User-Agent");
        fprintf(logf, "%s %s%s%s%s%s %d%s%s user=%s ua=%.20s\n", r->method, r->url,
                arg(r, "fieldSelector") ? " fieldSelector=" : "", arg(r, "fieldSelector") ? arg(r, "fieldSelector") : "",
                arg(r, "labelSelector") ? " labelSelector=" : "", arg(r, "labelSelector") ? arg(r, "labelSelector") : "",
                code, ct && !strcmp(r->method, "PATCH") ? " " : "", ct && !strcmp(r->method, "PATCH") ? ct : "",
                r->user[0] ? r->user : "-", ua ? ua : "-");
        fflush(logf);
    }
    return rc;
}

static const char *reason_of(int code)
{
    switch (code) {
    case 400: return "BadRequest";
    case 401: return "Unauthorized";
    case 403: return "Forbidden";
    case 404: return "NotFound";
    case 405: return "MethodNotAllowed";
    case 409: return "Conflict";
    case 415: return "UnsupportedMediaType";
    case 422: return "Invalid";
    case 429: return "TooManyRequests";
    case 500: return "InternalError";
    case 503: return "ServiceUnavailable";
    default: return "";
    }
}

/* A metav1.Status failure. */
static enum MHD_Result fail(struct req *r, int code, const char *kind, const char *name, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
static enum MHD_Result fail(struct req *r, int code, const char *kind, const char *name, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    json_t *st = json_pack("{s:s,s:s,s:{},s:s,s:s,s:s,s:i}", "kind", "Status", "apiVersion", "v1", "metadata",
                           "status", "Failure", "message", msg, "reason", reason_of(code), "code", code);
    if (kind || name) json_object_set_new(st, "details", json_pack("{s:s,s:s}", "name", name ? name : "", "kind", kind ? kind : ""));
    return send_json(r, code, st, NULL, code == 429 ? 1 : -1);
}

static enum MHD_Result not_found(struct req *r, const char *res, const char *name)
{
    return fail(r, 404, res, name, "%s \"%s\" not found", res, name);
}

/* ---- discovery -------------------------------------------------------------- */

static json_t *res(const char *name, const char *kind, bool namespaced, const char *verbs, const char *shortname)
{
    json_t *v = json_array();
    char buf[128];
    snprintf(buf, sizeof buf, "%s", verbs);
    for (char *save, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) json_array_append_new(v, json_string(t));
    const char *slash = strchr(name, '/');
    char singular[64] = "";
    if (!slash) {
        snprintf(singular, sizeof singular, "%s", kind);
        for (char *p = singular; *p; p++) *p = (char)(*p >= 'A' && *p <= 'Z' ? *p + 32 : *p);
    }
    json_t *r = json_pack("{s:s,s:s,s:b,s:s,s:o}", "name", name, "singularName", singular, "namespaced", namespaced,
                          "kind", kind, "verbs", v);
    if (shortname) json_object_set_new(r, "shortNames", json_pack("[s]", shortname));
    return r;
}

static const char *const CRUD = "create,delete,deletecollection,get,list,patch,update,watch";

/* What the double serves: every resource kubectl and vigil use, each kept in
 * a store of its own (the custom resources JobSet and ServiceMonitor too, as
 * a real API server keeps them once their CRD is installed). */
static const struct kind {
    const char *group, *version, *resource, *kind;
    bool namespaced;
    const char *verbs, *shortname;
} KINDS[] = {
    { "", "v1", "nodes", "Node", false, NULL, "no" },
    { "", "v1", "nodes/status", "Node", false, "get,patch,update", NULL },
    { "", "v1", "pods", "Pod", true, NULL, "po" },
    { "", "v1", "pods/status", "Pod", true, "get,patch,update", NULL },
    { "", "v1", "pods/log", "Pod", true, "get", NULL },
    { "", "v1", "pods/eviction", "Eviction", true, "create", NULL },
    { "", "v1", "namespaces", "Namespace", false, NULL, "ns" },
    { "", "v1", "events", "Event", true, NULL, "ev" },
    { "", "v1", "serviceaccounts", "ServiceAccount", true, NULL, "sa" },
    { "", "v1", "secrets", "Secret", true, NULL, NULL },
    { "", "v1", "services", "Service", true, NULL, "svc" },
    { "", "v1", "configmaps", "ConfigMap", true, NULL, "cm" },
    { "", "v1", "persistentvolumeclaims", "PersistentVolumeClaim", true, NULL, "pvc" },
    { "apps", "v1", "daemonsets", "DaemonSet", true, NULL, "ds" },
    { "apps", "v1", "deployments", "Deployment", true, NULL, "deploy" },
    { "batch", "v1", "jobs", "Job", true, NULL, NULL },
    { "policy", "v1", "poddisruptionbudgets", "PodDisruptionBudget", true, NULL, "pdb" },
    { "rbac.authorization.k8s.io", "v1", "clusterroles", "ClusterRole", false, NULL, NULL },
    { "rbac.authorization.k8s.io", "v1", "clusterrolebindings", "ClusterRoleBinding", false, NULL, NULL },
    { "rbac.authorization.k8s.io", "v1", "roles", "Role", true, NULL, NULL },
    { "rbac.authorization.k8s.io", "v1", "rolebindings", "RoleBinding", true, NULL, NULL },
    { "scheduling.k8s.io", "v1", "priorityclasses", "PriorityClass", false, NULL, "pc" },
    { "coordination.k8s.io", "v1", "leases", "Lease", true, NULL, NULL },
    { "node.k8s.io", "v1", "runtimeclasses", "RuntimeClass", false, NULL, NULL },
    { "apiextensions.k8s.io", "v1", "customresourcedefinitions", "CustomResourceDefinition", false, NULL, "crd" },
    { "monitoring.coreos.com", "v1", "servicemonitors", "ServiceMonitor", true, NULL, "smon" },
    { "jobset.x-k8s.io", "v1alpha2", "jobsets", "JobSet", true, NULL, NULL },
};
#define NKINDS (sizeof KINDS / sizeof KINDS[0])

static const struct kind *kind_of(const char *group, const char *resource)
{
    for (size_t i = 0; i < NKINDS; i++)
        if (!strcmp(KINDS[i].group, group) && !strcmp(KINDS[i].resource, resource)) return &KINDS[i];
    return NULL;
}

json_t *kapi_store(const char *group, const char *resource)
{
    char key[160];
    snprintf(key, sizeof key, "%s/%s", group, resource);
    json_t *st = json_object_get(K.stores, key);
    if (!st) json_object_set_new(K.stores, key, st = json_object());
    return st;
}

static json_t *resource_list(const char *gv)
{
    json_t *l = json_array();
    for (size_t i = 0; i < NKINDS; i++) {
        const struct kind *k = &KINDS[i];
        char kgv[128];
        snprintf(kgv, sizeof kgv, "%s%s%s", k->group, *k->group ? "/" : "", k->version);
        if (strcmp(kgv, gv)) continue;
        json_t *r = res(k->resource, k->kind, k->namespaced, k->verbs ? k->verbs : CRUD, k->shortname);
        if (!strcmp(k->resource, "pods/eviction")) {
            json_object_set_new(r, "group", json_string("policy"));
            json_object_set_new(r, "version", json_string("v1"));
        }
        json_array_append_new(l, r);
    }
    if (!json_array_size(l)) {
        json_decref(l);
        return NULL;
    }
    return json_pack("{s:s,s:s,s:s,s:o}", "kind", "APIResourceList", "apiVersion", "v1", "groupVersion", gv,
                     "resources", l);
}

static enum MHD_Result discovery(struct req *r)
{
    if (!strcmp(r->path, "/version"))
        return send_json(r, 200,
                         json_pack("{s:s,s:s,s:s,s:s,s:s,s:s,s:s,s:s,s:s}", "major", "1", "minor", "32", "gitVersion",
                                   "v1.32.0-vigil-test-double", "gitCommit", "0", "gitTreeState", "clean", "buildDate",
                                   "2026-01-01T00:00:00Z", "goVersion", "go1.23", "compiler", "gc", "platform",
                                   "linux/amd64"),
                         NULL, -1);
    if (!strcmp(r->path, "/api"))
        return send_json(r, 200,
                         json_pack("{s:s,s:[s],s:[{s:s,s:s}]}", "kind", "APIVersions", "versions", "v1",
                                   "serverAddressByClientCIDRs", "clientCIDR", "0.0.0.0/0", "serverAddress",
                                   "127.0.0.1"),
                         NULL, -1);
    if (!strcmp(r->path, "/apis")) {
        json_t *g = json_array();
        for (size_t i = 0; i < NKINDS; i++) {
            if (!*KINDS[i].group || (i && !strcmp(KINDS[i - 1].group, KINDS[i].group))) continue;
            char gv[128];
            snprintf(gv, sizeof gv, "%s/%s", KINDS[i].group, KINDS[i].version);
            json_array_append_new(g, json_pack("{s:s,s:[{s:s,s:s}],s:{s:s,s:s}}", "name", KINDS[i].group, "versions",
                                               "groupVersion", gv, "version", KINDS[i].version, "preferredVersion",
                                               "groupVersion", gv, "version", KINDS[i].version));
        }
        return send_json(r, 200, json_pack("{s:s,s:s,s:o}", "kind", "APIGroupList", "apiVersion", "v1", "groups", g),
                         NULL, -1);
    }
    char gv[256];
    if (!strcmp(r->path, "/api/v1")) snprintf(gv, sizeof gv, "v1");
    else if (r->nseg == 3 && !strcmp(r->seg[0], "apis")) snprintf(gv, sizeof gv, "%s/%s", r->seg[1], r->seg[2]);
    else return fail(r, 404, NULL, NULL, "the server could not find the requested resource");
    json_t *l = resource_list(gv);
    return l ? send_json(r, 200, l, NULL, -1) : fail(r, 404, NULL, NULL, "the server could not find the requested resource");
}

/* ---- objects ---------------------------------------------------------------- */

static json_t *list_of(const char *kind, const char *apiv)
{
    char rv[32];
    snprintf(rv, sizeof rv, "%lu", K.rv);
    return json_pack("{s:s,s:s,s:{s:s},s:[]}", "kind", kind, "apiVersion", apiv, "metadata", "resourceVersion", rv,
                     "items");
}

static bool wants_table(struct req *r)
{
    const char *a = hdr(r, "Accept");
    return a && strstr(a, "as=Table");
}

static const char *age(const json_t *o)
{
    (void)o;
    return "1m";
}

/* The server-side printing answer (meta.k8s.io/v1 Table) kubectl asks for:
 * the column definitions (priority 1: shown by -o wide) and the rows. */
struct column { const char *name, *format, *description; int priority; };

static json_t *table(const struct column *cols, size_t ncols, json_t *rows)
{
    json_t *cd = json_array();
    for (size_t k = 0; k < ncols; k++)
        json_array_append_new(cd, json_pack("{s:s,s:s,s:s,s:s,s:i}", "name", cols[k].name, "type", "string", "format",
                                            cols[k].format, "description",
                                            cols[k].description ? cols[k].description : cols[k].name, "priority",
                                            cols[k].priority));
    char rv[32];
    snprintf(rv, sizeof rv, "%lu", K.rv);
    return json_pack("{s:s,s:s,s:{s:s},s:o,s:o}", "kind", "Table", "apiVersion", "meta.k8s.io/v1", "metadata",
                     "resourceVersion", rv, "columnDefinitions", cd, "rows", rows);
}

/* One row: its cells and the object's metadata. */
static json_t *table_row(json_t *cells, json_t *md)
{
    return json_pack("{s:o,s:{s:s,s:s,s:O}}", "cells", cells, "object", "kind", "PartialObjectMetadata", "apiVersion",
                     "meta.k8s.io/v1", "metadata", md);
}

/* Node columns as `kubectl get nodes` prints them (server-side printing). */
static json_t *node_table(json_t *items)
{
    json_t *rows = json_array();
    size_t i;
    json_t *n;
    json_array_foreach(items, i, n) {
        const char *ready = "Unknown";
        size_t j;
        json_t *c;
        json_array_foreach(json_object_get(json_object_get(n, "status"), "conditions"), j, c)
            if (!strcmp(json_string_value(json_object_get(c, "type")) ?: "", "Ready"))
                ready = !strcmp(json_string_value(json_object_get(c, "status")) ?: "", "True") ? "Ready" : "NotReady";
        char status[64];
        snprintf(status, sizeof status, "%s%s", ready,
                 json_is_true(json_object_get(json_object_get(n, "spec"), "unschedulable")) ? ",SchedulingDisabled" : "");
        json_t *md = json_object_get(n, "metadata");
        json_array_append_new(rows, table_row(json_pack("[s,s,s,s,s]", json_string_value(json_object_get(md, "name")),
                                                        status, "<none>", age(n), "v1.32.0"), md));
    }
    static const struct column cols[] = { { "Name", "name", NULL, 0 }, { "Status", "", "Node status", 0 },
                                          { "Roles", "", NULL, 0 }, { "Age", "", NULL, 0 },
                                          { "Version", "", "Kubelet version", 0 } };
    return table(cols, sizeof cols / sizeof *cols, rows);
}

/* Any other kind as the API server prints what it has no printer for (a
 * custom resource without additionalPrinterColumns): Name, Age. */
static json_t *name_table(json_t *items)
{
    json_t *rows = json_array();
    size_t i;
    json_t *o;
    json_array_foreach(items, i, o) {
        json_t *md = json_object_get(o, "metadata");
        json_array_append_new(rows, table_row(json_pack("[s,s]", json_string_value(json_object_get(md, "name")) ?: "",
                                                        age(o)), md));
    }
    static const struct column cols[] = { { "Name", "name", NULL, 0 }, { "Age", "date", NULL, 0 } };
    return table(cols, sizeof cols / sizeof *cols, rows);
}

/* Pod columns as `kubectl get pods [-o wide]` prints them (the API server's
 * pod printer: Name, Ready, Status, Restarts, Age; IP, Node, Nominated Node,
 * Readiness Gates at priority 1, shown by -o wide). */
static json_t *pod_table(json_t *items)
{
    json_t *rows = json_array();
    size_t i;
    json_t *p;
    json_array_foreach(items, i, p) {
        json_t *st = json_object_get(p, "status"), *md = json_object_get(p, "metadata");
        size_t nc = json_array_size(json_object_get(json_object_get(p, "spec"), "containers")), ready = 0, j;
        json_t *cs;
        json_array_foreach(json_object_get(st, "containerStatuses"), j, cs) if (json_is_true(json_object_get(cs, "ready"))) ready++;
        char rd[32];
        snprintf(rd, sizeof rd, "%zu/%zu", ready, nc);
        const char *phase = json_string_value(json_object_get(st, "reason")) ?: json_string_value(json_object_get(st, "phase")) ?: "Pending";
        const char *node = json_string_value(json_object_get(json_object_get(p, "spec"), "nodeName")) ?: "<none>";
        json_array_append_new(rows, table_row(json_pack("[s,s,s,s,s,s,s,s,s]", json_string_value(json_object_get(md, "name")),
                                                        rd, phase, "0", age(p), "<none>", node, "<none>", "<none>"),
                                              md));
    }
    static const struct column cols[] = { { "Name", "name", NULL, 0 }, { "Ready", "", NULL, 0 },
                                          { "Status", "", NULL, 0 }, { "Restarts", "", NULL, 0 },
                                          { "Age", "", NULL, 0 }, { "IP", "", NULL, 1 },
                                          { "Node", "", NULL, 1 }, { "Nominated Node", "", NULL, 1 },
                                          { "Readiness Gates", "", NULL, 1 } };
    return table(cols, sizeof cols / sizeof *cols, rows);
}

/* Event columns as `kubectl get events` prints them (the API server's event
 * printer, pkg/printers/internalversion: Last Seen, Type, Reason, Object,
 * Message; Subobject, Source, First Seen, Count, Name at priority 1). */
static json_t *event_table(json_t *items)
{
    json_t *rows = json_array();
    size_t i;
    json_t *e;
    json_array_foreach(items, i, e) {
        json_t *io = json_object_get(e, "involvedObject"), *md = json_object_get(e, "metadata");
        char obj[320], kind[64], count[16];
        snprintf(kind, sizeof kind, "%s", json_string_value(json_object_get(io, "kind")) ?: "");
        for (char *p = kind; *p; p++) *p = (char)(*p >= 'A' && *p <= 'Z' ? *p + 32 : *p);
        snprintf(obj, sizeof obj, "%s/%s", kind, json_string_value(json_object_get(io, "name")) ?: "");
        snprintf(count, sizeof count, "%lld", (long long)json_integer_value(json_object_get(e, "count")));
        json_array_append_new(rows, table_row(json_pack("[s,s,s,s,s,s,s,s,s,s]", age(e),
                                                        json_string_value(json_object_get(e, "type")) ?: "",
                                                        json_string_value(json_object_get(e, "reason")) ?: "", obj,
                                                        json_string_value(json_object_get(io, "fieldPath")) ?: "",
                                                        json_string_value(json_object_get(json_object_get(e, "source"), "component")) ?: "",
                                                        json_string_value(json_object_get(e, "message")) ?: "", age(e),
                                                        count, json_string_value(json_object_get(md, "name")) ?: ""),
                                              md));
    }
    static const struct column cols[] = { { "Last Seen", "", NULL, 0 }, { "Type", "", NULL, 0 },
                                          { "Reason", "", NULL, 0 },    { "Object", "", NULL, 0 },
                                          { "Subobject", "", NULL, 1 }, { "Source", "", NULL, 1 },
                                          { "Message", "", NULL, 0 },   { "First Seen", "", NULL, 1 },
                                          { "Count", "", NULL, 1 },     { "Name", "name", NULL, 1 } };
    return table(cols, sizeof cols / sizeof *cols, rows);
}

/* The List (kind, apiv) of the objects in ns (all when NULL) that the
 * request's selectors pick, and their keys into keys (when not NULL); NULL
 * with msg on a selector the API server refuses. */
static json_t *pick(struct req *r, json_t *store, const char *kind, const char *apiv, const char *ns, json_t *keys,
                    char *msg, size_t n)
{
    json_t *l = list_of(kind, apiv), *items = json_object_get(l, "items");
    const char *key;
    json_t *o;
    json_object_foreach(store, key, o) {
        const char *ons = json_string_value(json_object_get(json_object_get(o, "metadata"), "namespace"));
        if (ns && (!ons || strcmp(ns, ons))) continue;
        bool lm, fm;
        if (kapi_labels_match(arg(r, "labelSelector"), o, &lm, msg, n) ||
            kapi_fields_match(arg(r, "fieldSelector"), o, &fm, msg, n)) {
            json_decref(l);
            return NULL;
        }
        if (!lm || !fm) continue;
        json_array_append(items, o);
        if (keys) json_array_append_new(keys, json_string(key));
    }
    return l;
}

/* A page of the list as the API server pages it (limit, continue: here the
 * offset of the next item; metadata.continue and remainingItemCount). */
static int page(struct req *r, json_t *l, char *msg, size_t n)
{
    const char *lim = arg(r, "limit"), *cont = arg(r, "continue");
    json_t *items = json_object_get(l, "items");
    char *end;
    long from = cont && *cont ? strtol(cont, &end, 10) : 0;
    if (cont && *cont && (*end || from < 0 || (size_t)from > json_array_size(items))) {
        snprintf(msg, n, "continue key is not valid: %s", cont);
        return -1;
    }
    long limit = lim && *lim ? strtol(lim, NULL, 10) : 0;
    json_t *slice = json_array();
    size_t total = json_array_size(items);
    size_t stop = limit > 0 && (size_t)(from + limit) < total ? (size_t)(from + limit) : total;
    for (size_t i = (size_t)from; i < stop; i++) json_array_append(slice, json_array_get(items, i));
    json_object_set_new(l, "items", slice);
    if (stop < total) {
        char next[32];
        snprintf(next, sizeof next, "%zu", stop);
        json_object_set_new(json_object_get(l, "metadata"), "continue", json_string(next));
        json_object_set_new(json_object_get(l, "metadata"), "remainingItemCount", json_integer((json_int_t)(total - stop)));
    }
    return 0;
}

/* GET of a collection, filtered by the selectors (and namespace), in pages when asked. */
static enum MHD_Result list(struct req *r, json_t *store, const char *kind, const char *apiv, const char *ns)
{
    char msg[512];
    json_t *l = pick(r, store, kind, apiv, ns, NULL, msg, sizeof msg);
    if (!l) return fail(r, 400, NULL, NULL, "%s", msg);
    if (store == K.nodes) {   /* a node the test leaves out of this list */
        json_t *all = json_object_get(l, "items");
        for (size_t i = 0; i < json_array_size(all);) {
            const char *nm = json_string_value(json_object_get(json_object_get(json_array_get(all, i), "metadata"), "name"));
            if (nm && kapi_omit_take(nm)) json_array_remove(all, i);
            else i++;
        }
    }
    if (page(r, l, msg, sizeof msg)) {
        json_decref(l);
        return fail(r, 400, NULL, NULL, "%s", msg);
    }
    json_t *items = json_object_get(l, "items");
    if (wants_table(r)) {
        json_t *t = !strcmp(kind, "NodeList") ? node_table(items) : !strcmp(kind, "PodList") ? pod_table(items)
                  : !strcmp(kind, "EventList") ? event_table(items) : name_table(items);
        json_decref(l);
        return send_json(r, 200, t, "application/json;as=Table;v=v1;g=meta.k8s.io", -1);
    }
    return send_json(r, 200, l, NULL, -1);
}

static json_t *body_json(struct req *r)
{
    return r->body ? json_loadb(r->body, r->len, 0, NULL) : NULL;
}

/* PATCH (whole object or its status), with resourceVersion preconditions. */
static enum MHD_Result patch(struct req *r, json_t *store, const char *key, const char *res, const char *name,
                             bool status)
{
    json_t *cur = json_object_get(store, key);
    if (!cur) return not_found(r, res, name);
    int code = 0;
    char msg[512];
    json_t *nw = kapi_patch(cur, hdr(r, "Content-Type"), r->body, &code, msg, sizeof msg);
    if (!nw) return fail(r, code, res, name, "%s", msg);
    json_t *cmd = json_object_get(cur, "metadata"), *nmd = json_object_get(nw, "metadata");
    const char *crv = json_string_value(json_object_get(cmd, "resourceVersion"));
    const char *nrv = json_string_value(json_object_get(nmd, "resourceVersion"));
    if (nrv && crv && strcmp(nrv, crv)) {
        json_decref(nw);
        return fail(r, 409, res, name,
                    "Operation cannot be fulfilled on %s \"%s\": the object has been modified; please apply your "
                    "changes to the latest version and try again", res, name);
    }
    if (!json_equal(json_object_get(nmd, "name"), json_object_get(cmd, "name"))) {
        json_decref(nw);
        return fail(r, 422, res, name, "%s \"%s\" is invalid: metadata.name: Invalid value: field is immutable", res, name);
    }
    json_t *out;
    if (status) {   /* the status subresource changes status only */
        out = json_deep_copy(cur);
        json_object_set(out, "status", json_object_get(nw, "status") ?: json_object());
    } else {
        out = json_deep_copy(nw);
        json_object_set(out, "status", json_object_get(cur, "status") ?: json_object());
        json_object_set(json_object_get(out, "metadata"), "uid", json_object_get(cmd, "uid"));
        json_object_set(json_object_get(out, "metadata"), "creationTimestamp", json_object_get(cmd, "creationTimestamp"));
    }
    json_decref(nw);
    if (!dry_run(r)) {
        kapi_bump(out);
        json_object_set(store, key, out);
    }
    return send_json(r, 200, out, NULL, -1);
}

static enum MHD_Result create(struct req *r, json_t *store, const char *ns, const char *kind, const char *res)
{
    json_t *o = body_json(r);
    const char *name = json_string_value(json_object_get(json_object_get(o, "metadata"), "name"));
    if (!json_is_object(o) || !name || !*name) {
        json_decref(o);
        return fail(r, 400, res, NULL, "%s: metadata.name is required", kind);
    }
    /* the NamespaceLifecycle admission: nothing is created in a namespace that does not exist */
    if (ns && !json_object_get(kapi_store("", "namespaces"), ns)) {
        json_decref(o);
        return fail(r, 404, "namespaces", ns, "namespaces \"%s\" not found", ns);
    }
    /* the API server's validation of a core/v1 Event without eventTime (legacyValidateEvent,
     * pkg/apis/core/validation/events.go): a cluster-scoped object's events live in "" or "default" */
    const char *ions = json_string_value(json_object_get(json_object_get(o, "involvedObject"), "namespace")) ?: "";
    if (store == K.events && !json_object_get(o, "eventTime") &&
        (*ions ? strcmp(ns ? ns : "", ions) : ns && *ns && strcmp(ns, "default"))) {
        json_decref(o);
        return fail(r, 422, res, name, "Event \"%s\" is invalid: involvedObject.namespace: Invalid value: \"%s\": "
                                       "does not match event.namespace", name, ions);
    }
    char key[400];
    snprintf(key, sizeof key, "%s%s%s", ns ? ns : "", ns ? "/" : "", name);
    if (json_object_get(store, key)) {
        json_decref(o);
        return fail(r, 409, res, name, "%s \"%s\" already exists", res, name);
    }
    json_t *md = json_object_get(o, "metadata");
    if (ns) json_object_set_new(md, "namespace", json_string(ns));
    char uid[64];
    snprintf(uid, sizeof uid, "%s-%lu", res, ++K.seq);
    json_object_set_new(md, "uid", json_string(uid));
    json_object_set_new(md, "creationTimestamp", json_string(kapi_now()));
    if (store != K.events && !json_object_get(o, "status")) json_object_set_new(o, "status", json_object());
    char why[512];
    if ((store == K.pods && kapi_admit_pod(o, why, sizeof why)) ||
        (store == K.priorityclasses && kapi_pc_validate(o, why, sizeof why))) {
        json_decref(o);
        return fail(r, store == K.pods ? 403 : 422, res, name, "%s", why);
    }
    if (store == K.pods)   /* the API server's default for a new pod; the kubelet takes it from there */
        json_object_set_new(o, "status", json_pack("{s:s,s:s}", "phase", "Pending", "qosClass", "BestEffort"));
    kapi_bump(o);
    if (!dry_run(r)) json_object_set(store, key, o);
    return send_json(r, 201, o, NULL, -1);
}

static enum MHD_Result eviction(struct req *r, const char *key, const char *ns, const char *name)
{
    json_t *pod = json_object_get(K.pods, key);
    if (!pod) return not_found(r, "pods", name);
    json_t *ev = body_json(r);
    const char *apiv = json_string_value(json_object_get(ev, "apiVersion"));
    const char *kind = json_string_value(json_object_get(ev, "kind"));
    const char *ename = json_string_value(json_object_get(json_object_get(ev, "metadata"), "name"));
    enum MHD_Result rc;
    if (!apiv || !kind || strcmp(kind, "Eviction"))
        rc = fail(r, 400, "pods", name, "the body must be an Eviction");
    else if (strcmp(apiv, "policy/v1"))
        rc = fail(r, 400, "pods", name, "no kind \"Eviction\" is registered for version \"%s\"", apiv);
    else if (!ename || strcmp(ename, name))
        rc = fail(r, 400, "pods", name, "name in URL does not match name in Eviction object");
    else {
        (void)ns;
        kapi_pod_lost(pod);
        json_object_del(K.pods, key);
        K.rv++;
        rc = send_json(r, 201,
                       json_pack("{s:s,s:s,s:{},s:s,s:i}", "kind", "Status", "apiVersion", "v1", "metadata", "status",
                                 "Success", "code", 201),
                       NULL, -1);
    }
    json_decref(ev);
    return rc;
}

static enum MHD_Result del(struct req *r, json_t *store, const char *key, const char *res, const char *name)
{
    json_t *o = json_object_get(store, key);
    if (!o) return not_found(r, res, name);
    json_incref(o);
    if (!dry_run(r)) {
        if (store == K.pods) kapi_pod_lost(o);
        json_object_del(store, key);
        K.rv++;
    }
    return send_json(r, 200, o, NULL, -1);
}

/* DELETE of a collection (deletecollection): every object the selectors
 * pick in the namespace is deleted, as one by one; the answer is the list of
 * what was deleted.  As the API server, not at the all-namespaces scope of a
 * namespaced resource (the route never gets here then). */
static enum MHD_Result delete_collection(struct req *r, json_t *store, const char *kind, const char *apiv, const char *ns)
{
    char msg[512];
    json_t *keys = json_array(), *l = pick(r, store, kind, apiv, ns, keys, msg, sizeof msg);
    if (!l) {
        json_decref(keys);
        return fail(r, 400, NULL, NULL, "%s", msg);
    }
    size_t i;
    json_t *k;
    json_array_foreach(keys, i, k) {
        if (dry_run(r)) break;
        json_t *o = json_object_get(store, json_string_value(k));
        if (store == K.pods) kapi_pod_lost(o);
        json_object_del(store, json_string_value(k));
        K.rv++;
    }
    json_decref(keys);
    return send_json(r, 200, l, NULL, -1);
}

/* GET pods/NAME/log: the container's output, text/plain (empty unless --exec ran it). */
static enum MHD_Result pod_log(struct req *r, const char *key, const char *name)
{
    json_t *pod = json_object_get(K.pods, key);
    if (!pod) return not_found(r, "pods", name);
    char path[1200];
    char *text = NULL;
    size_t len = 0;
    if (kapi_exec_on()) {
        kapi_exec_log(pod, path, sizeof path);
        FILE *f = fopen(path, "re");
        if (f) {
            text = malloc(1 << 20);
            len = fread(text, 1, (1 << 20) - 1, f);
            fclose(f);
        }
    }
    struct MHD_Response *resp = text ? MHD_create_response_from_buffer(len, text, MHD_RESPMEM_MUST_FREE)
                                     : MHD_create_response_from_buffer(0, (void *)"", MHD_RESPMEM_PERSISTENT);
    MHD_add_response_header(resp, "Content-Type", "text/plain");
    enum MHD_Result rc = MHD_queue_response(r->c, 200, resp);
    MHD_destroy_response(resp);
    if (logf) {
        fprintf(logf, "%s %s 200 ua=%.20s\n", r->method, r->url, hdr(r, "User-Agent") ?: "-");
        fflush(logf);
    }
    return rc;
}

/* ---- authentication, authorization, injected faults ----------------------- */

static const char *verb_of(struct req *r, bool item)
{
    if (!strcmp(r->method, "GET")) return item ? "get" : "list";
    if (!strcmp(r->method, "POST")) return "create";
    if (!strcmp(r->method, "PATCH")) return "patch";
    if (!strcmp(r->method, "PUT")) return "update";
    if (!strcmp(r->method, "DELETE")) return item ? "delete" : "deletecollection";
    return "?";
}

static bool is_denied(const char *verb, const char *resource)
{
    size_t i;
    json_t *d;
    json_array_foreach(denied, i, d)
        if (!strcmp(json_string_value(json_object_get(d, "verb")) ?: "", verb) &&
            !strcmp(json_string_value(json_object_get(d, "resource")) ?: "", resource))
            return true;
    return false;
}

static enum MHD_Result forbid(struct req *r, const char *verb, const char *res, const char *group, const char *name,
                              const char *ns)
{
    char scope[128];
    if (ns) snprintf(scope, sizeof scope, "in the namespace \"%s\"", ns);
    else snprintf(scope, sizeof scope, "at the cluster scope");
    char base[128];
    snprintf(base, sizeof base, "%s", res);
    char *slash = strchr(base, '/');
    if (slash) *slash = 0;
    if (name)
        return fail(r, 403, base, name, "%s \"%s\" is forbidden: User \"%s\" cannot %s resource \"%s\" in API group \"%s\" %s",
                    base, name, USER, verb, res, group, scope);
    return fail(r, 403, base, NULL, "%s is forbidden: User \"%s\" cannot %s resource \"%s\" in API group \"%s\" %s", base,
                USER, verb, res, group, scope);
}

/* An injected fault matching this request, consumed; 0 when none. */
static int injected(struct req *r, int *retry_after, char *message, size_t n)
{
    size_t i;
    json_t *f;
    json_array_foreach(faults, i, f) {
        const char *m = json_string_value(json_object_get(f, "method"));
        const char *p = json_string_value(json_object_get(f, "path"));
        if (m && strcmp(m, r->method)) continue;
        if (p && strncmp(r->path, p, strlen(p))) continue;
        int code = (int)json_integer_value(json_object_get(f, "code"));
        json_int_t left = json_integer_value(json_object_get(f, "count"));
        snprintf(message, n, "%s", json_string_value(json_object_get(f, "message")) ?: "");
        *retry_after = json_is_integer(json_object_get(f, "retry_after")) ? (int)json_integer_value(json_object_get(f, "retry_after")) : 0;
        if (left <= 1) json_array_remove(faults, i);
        else json_object_set_new(f, "count", json_integer(left - 1));
        return code;
    }
    return 0;
}

static enum MHD_Result test_control(struct req *r)
{
    json_t *b = body_json(r);
    enum MHD_Result rc;
    if (!strcmp(r->path, "/_test/fault") && !strcmp(r->method, "POST") && json_is_object(b)) {
        json_array_append(faults, b);
        rc = send_json(r, 200, json_pack("{s:i}", "faults", (int)json_array_size(faults)), NULL, -1);
    } else if (!strcmp(r->path, "/_test/deny") && !strcmp(r->method, "POST") && json_is_object(b)) {
        json_array_append(denied, b);
        rc = send_json(r, 200, json_pack("{s:i}", "denied", (int)json_array_size(denied)), NULL, -1);
    } else if (!strcmp(r->path, "/_test/deny") && !strcmp(r->method, "DELETE")) {
        json_array_clear(denied);
        json_array_clear(faults);
        rc = send_json(r, 200, json_object(), NULL, -1);
    } else if (!strcmp(r->path, "/_test/hang") && !strcmp(r->method, "POST") && json_is_object(b)) {
        kapi_hang_add(b);
        rc = send_json(r, 200, json_object(), NULL, -1);
    } else if (!strcmp(r->path, "/_test/hang") && !strcmp(r->method, "GET")) {
        rc = send_json(r, 200, json_pack("{s:i}", "held", kapi_hang_held()), NULL, -1);
    } else if (!strcmp(r->path, "/_test/hang") && !strcmp(r->method, "DELETE")) {
        kapi_hang_release();
        rc = send_json(r, 200, json_object(), NULL, -1);
    } else if (!strcmp(r->path, "/_test/omit") && json_is_string(json_object_get(b, "node"))) {
        kapi_omit_add(json_string_value(json_object_get(b, "node")), (long)json_integer_value(json_object_get(b, "count")));
        rc = send_json(r, 200, json_object(), NULL, -1);
    } else if (!strcmp(r->path, "/_test/fatten") && json_is_integer(json_object_get(b, "count"))) {
        kapi_fatten(json_string_value(json_object_get(b, "prefix")) ?: "fat", (long)json_integer_value(json_object_get(b, "count")),
                    (long)json_integer_value(json_object_get(b, "bytes")));
        rc = send_json(r, 200, json_pack("{s:i}", "nodes", (int)json_object_size(K.nodes)), NULL, -1);
    } else if (!strcmp(r->path, "/_test/token") && json_is_string(json_object_get(b, "token"))) {
        snprintf(token, sizeof token, "%s", json_string_value(json_object_get(b, "token")));
        rc = send_json(r, 200, json_object(), NULL, -1);
    } else rc = fail(r, 404, NULL, NULL, "no such test control");
    json_decref(b);
    return rc;
}

/* Who the caller is, into r->user: a client certificate that verifies
 * (--client-ca), else the bearer token; -1 (401) when authentication is
 * asked for and neither holds.  As the API server's union of
 * authenticators, a certificate that does not verify is no identity, and a
 * valid token still is. */
static int authenticate(struct req *r)
{
    if (client_ca && kapi_tls_user(r->c, r->user, sizeof r->user) == KAPI_CERT_OK) return 0;
    const char *a = hdr(r, "Authorization");
    if (token[0] && a && !strncmp(a, "Bearer ", 7) && !strcmp(a + 7, token)) {
        snprintf(r->user, sizeof r->user, "%s", USER);
        return 0;
    }
    if (token[0] || client_ca) return -1;
    snprintf(r->user, sizeof r->user, "system:anonymous");
    return 0;
}

/* ---- routing ---------------------------------------------------------------- */

static enum MHD_Result resource(struct req *r)
{
    /* /api/v1/… or /apis/GROUP/v1/… ; then namespaces/NS/…, RES, NAME, SUB */
    size_t i = 0;
    const char *group = "";
    if (!strcmp(r->seg[0], "api")) i = 2;
    else group = r->seg[1], i = 3;
    const char *ns = NULL;
    if (i + 1 < r->nseg && !strcmp(r->seg[i], "namespaces") && i + 2 < r->nseg) ns = r->seg[i + 1], i += 2;
    if (i >= r->nseg) return fail(r, 404, NULL, NULL, "the server could not find the requested resource");
    const char *rname = r->seg[i], *name = i + 1 < r->nseg ? r->seg[i + 1] : NULL,
               *sub = i + 2 < r->nseg ? r->seg[i + 2] : NULL;
    char full[128];
    snprintf(full, sizeof full, "%s%s%s", rname, sub ? "/" : "", sub ? sub : "");
    const char *verb = verb_of(r, name != NULL);
    if (is_denied(verb, full)) return forbid(r, verb, full, group, name, ns);
    if (arg(r, "watch") && !strcmp(arg(r, "watch"), "true"))
        return fail(r, 405, rname, NULL, "watch is not served by this test double");

    const struct kind *kd = kind_of(group, rname);
    const char *version = !strcmp(r->seg[0], "api") ? r->seg[1] : r->seg[2];
    if (!kd || strcmp(kd->version, version)) return fail(r, 404, NULL, NULL, "the server could not find the requested resource");
    json_t *store = kapi_store(group, rname);
    char listkind[96], apiv[128];
    snprintf(listkind, sizeof listkind, "%sList", kd->kind);
    snprintf(apiv, sizeof apiv, "%s%s%s", group, *group ? "/" : "", kd->version);
    bool namespaced = kd->namespaced;
    char key[400];
    if (name) snprintf(key, sizeof key, "%s%s%s", namespaced ? (ns ? ns : "default") : "", namespaced ? "/" : "", name);
    if (!name) {
        if (!strcmp(r->method, "GET")) return list(r, store, listkind, apiv, ns);
        if (!strcmp(r->method, "POST") && (ns || !namespaced)) return create(r, store, ns, listkind, rname);
        if (!strcmp(r->method, "DELETE") && (ns || !namespaced)) return delete_collection(r, store, listkind, apiv, ns);
        return fail(r, 405, rname, NULL, "method %s is not allowed on %s", r->method, rname);
    }
    if (sub && !strcmp(rname, "pods") && !strcmp(sub, "eviction") && !strcmp(r->method, "POST"))
        return eviction(r, key, ns, name);
    if (sub && !strcmp(rname, "pods") && !strcmp(sub, "log") && !strcmp(r->method, "GET")) return pod_log(r, key, name);
    bool status = sub && !strcmp(sub, "status");
    if (sub && !status) return fail(r, 404, rname, name, "the server could not find the requested resource");
    if (!strcmp(r->method, "GET")) {
        json_t *o = json_object_get(store, key);
        if (o && !status && wants_table(r)) {
            json_t *one = json_pack("[O]", o);
            json_t *t = store == K.nodes ? node_table(one) : store == K.pods ? pod_table(one) : name_table(one);
            json_decref(one);
            return send_json(r, 200, t, "application/json;as=Table;v=v1;g=meta.k8s.io", -1);
        }
        return o ? send_json(r, 200, json_incref(o), NULL, -1) : not_found(r, rname, name);
    }
    if (!strcmp(r->method, "PATCH")) return patch(r, store, key, rname, name, status);
    if (!strcmp(r->method, "DELETE") && !status) return del(r, store, key, rname, name);
    return fail(r, 405, rname, name, "method %s is not allowed on %s", r->method, full);
}

static enum MHD_Result route(struct req *r)
{
    snprintf(r->path, sizeof r->path, "%s", r->url);
    char segs[1024];
    snprintf(segs, sizeof segs, "%s", r->url);
    r->nseg = 0;
    for (char *save, *t = strtok_r(segs, "/", &save); t && r->nseg < 12; t = strtok_r(NULL, "/", &save))
        r->seg[r->nseg++] = strdup(t);
    if (!strncmp(r->path, "/_test/", 7)) return test_control(r);
    if (authenticate(r)) return fail(r, 401, NULL, NULL, "Unauthorized");
    int retry_after = 0;
    char message[512] = "";
    int code = injected(r, &retry_after, message, sizeof message);
    if (code == 409) return fail(r, 409, NULL, NULL, "Operation cannot be fulfilled: the object has been modified; "
                                                     "please apply your changes to the latest version and try again");
    if (code) {
        json_t *st = json_pack("{s:s,s:s,s:{},s:s,s:s,s:s,s:i}", "kind", "Status", "apiVersion", "v1", "metadata",
                               "status", "Failure", "message", message[0] ? message : "injected by the test",
                               "reason", reason_of(code), "code", code);
        return send_json(r, code, st, NULL, code == 429 ? retry_after : -1);
    }
    if (r->nseg == 0) return fail(r, 404, NULL, NULL, "the server could not find the requested resource");
    const unsigned char *oa;
    size_t oalen;
    if (!strcmp(r->path, "/openapi/v2") && kapi_openapi(&oa, &oalen)) {
        struct MHD_Response *resp = MHD_create_response_from_buffer(oalen, (void *)oa, MHD_RESPMEM_PERSISTENT);
        /* the type the API server answers with (kube-openapi): the dotted form, which Go's mime parser takes */
        MHD_add_response_header(resp, "Content-Type", "application/com.github.proto-openapi.spec.v2.v1.0+protobuf");
        enum MHD_Result rc = MHD_queue_response(r->c, 200, resp);
        MHD_destroy_response(resp);
        if (logf) fprintf(logf, "GET /openapi/v2 200 user=%s ua=%.20s\n", r->user, hdr(r, "User-Agent") ?: "-"), fflush(logf);
        return rc;
    }
    if (!strcmp(r->path, "/version") || !strcmp(r->path, "/api") || !strcmp(r->path, "/apis") ||
        !strcmp(r->path, "/api/v1") || (r->nseg == 3 && !strcmp(r->seg[0], "apis")))
        return discovery(r);
    if ((!strcmp(r->seg[0], "api") && r->nseg >= 3 && !strcmp(r->seg[1], "v1")) ||
        (!strcmp(r->seg[0], "apis") && r->nseg >= 4))
        return resource(r);
    return fail(r, 404, NULL, NULL, "the server could not find the requested resource");
}

static enum MHD_Result handler(void *cls, struct MHD_Connection *c, const char *url, const char *method,
                               const char *version, const char *data, size_t *size, void **ctx)
{
    (void)cls, (void)version;
    struct req *r = *ctx;
    if (!r) {
        r = calloc(1, sizeof *r);
        *ctx = r;
        return MHD_YES;
    }
    if (*size) {
        r->body = realloc(r->body, r->len + *size + 1);
        memcpy(r->body + r->len, data, *size);
        r->len += *size;
        r->body[r->len] = 0;
        *size = 0;
        return MHD_YES;
    }
    r->c = c, r->method = method, r->url = url;
    if (strncmp(url, "/_test/", 7)) kapi_hang_wait(method, url);   /* a webhook that does not answer */
    pthread_mutex_lock(&K.lock);
    enum MHD_Result rc = route(r);
    pthread_mutex_unlock(&K.lock);
    return rc;
}

static void done(void *cls, struct MHD_Connection *c, void **ctx, enum MHD_RequestTerminationCode t)
{
    (void)cls, (void)c, (void)t;
    struct req *r = *ctx;
    if (!r) return;
    for (size_t i = 0; i < r->nseg; i++) free(r->seg[i]);
    free(r->body);
    free(r);
}

/* ---- start-up ------------------------------------------------------------------ */

static int load_state(const char *path)
{
    json_error_t e;
    json_t *s = json_load_file(path, 0, &e);
    if (!s) {
        fprintf(stderr, "kapi: %s:%d: %s\n", path, e.line, e.text);
        return -1;
    }
    struct { const char *k; json_t *store; bool ns; const char *kind, *apiv; } kinds[] = {
        { "nodes", K.nodes, false, "Node", "v1" },   { "pods", K.pods, true, "Pod", "v1" },
        { "jobs", K.jobs, true, "Job", "batch/v1" }, { "daemonsets", K.daemonsets, true, "DaemonSet", "apps/v1" },
    };
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
        size_t i;
        json_t *o;
        json_array_foreach(json_object_get(s, kinds[k].k), i, o) {
            json_t *md = json_object_get(o, "metadata");
            const char *name = json_string_value(json_object_get(md, "name"));
            if (!name) continue;
            json_t *c = json_deep_copy(o);
            md = json_object_get(c, "metadata");
            if (kinds[k].ns && !json_object_get(md, "namespace")) json_object_set_new(md, "namespace", json_string("default"));
            if (!json_object_get(md, "uid")) {
                char uid[64];
                snprintf(uid, sizeof uid, "%s-%lu", kinds[k].k, ++K.seq);
                json_object_set_new(md, "uid", json_string(uid));
            }
            if (!json_object_get(md, "creationTimestamp")) json_object_set_new(md, "creationTimestamp", json_string(kapi_now()));
            json_object_set_new(c, "kind", json_string(kinds[k].kind));
            json_object_set_new(c, "apiVersion", json_string(kinds[k].apiv));
            if (!json_object_get(c, "status")) json_object_set_new(c, "status", json_object());
            kapi_bump(c);
            char key[400];
            snprintf(key, sizeof key, "%s%s%s", kinds[k].ns ? json_string_value(json_object_get(md, "namespace")) : "",
                     kinds[k].ns ? "/" : "", name);
            json_object_set_new(kinds[k].store, key, c);
        }
    }
    json_decref(s);
    return 0;
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "re");
    if (!f) return NULL;
    char *buf = calloc(1, 1 << 16);
    size_t n = fread(buf, 1, (1 << 16) - 1, f);
    fclose(f);
    buf[n] = 0;
    return buf;
}

static volatile sig_atomic_t stop;
static void on_signal(int s) { (void)s; stop = 1; }

int main(int argc, char **argv)
{
    const char *port_file = NULL, *state = NULL, *openapi = NULL;
    int tick_ms = 10, port = 0;
    char *cert = NULL, *key = NULL;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--port-file")) port_file = argv[i + 1];
        else if (!strcmp(argv[i], "--state")) state = argv[i + 1];
        else if (!strcmp(argv[i], "--token")) snprintf(token, sizeof token, "%s", argv[i + 1]);
        else if (!strcmp(argv[i], "--log")) logf = fopen(argv[i + 1], "ae");
        else if (!strcmp(argv[i], "--tick")) tick_ms = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--port")) port = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--exec")) kapi_exec_init(argv[i + 1]);
        else if (!strcmp(argv[i], "--openapi")) openapi = argv[i + 1];
        else if (!strcmp(argv[i], "--tls-cert")) cert = slurp(argv[i + 1]);
        else if (!strcmp(argv[i], "--tls-key")) key = slurp(argv[i + 1]);
        else if (!strcmp(argv[i], "--client-ca")) {
            if (!(client_ca = slurp(argv[i + 1]))) {
                fprintf(stderr, "kapi: --client-ca %s: cannot read it\n", argv[i + 1]);
                return 2;
            }
        }
        else {
            fprintf(stderr, "usage: kapi --port-file FILE [--port N] [--state FILE] [--token T] [--log FILE] [--tick MS]\n"
                            "            [--tls-cert PEM --tls-key PEM [--client-ca PEM]] [--exec DIR] [--openapi FILE.gz]\n");
            return 2;
        }
    }
    K.stores = json_object();
    K.nodes = kapi_store("", "nodes"), K.pods = kapi_store("", "pods"), K.jobs = kapi_store("batch", "jobs");
    K.daemonsets = kapi_store("apps", "daemonsets"), K.events = kapi_store("", "events");
    K.priorityclasses = kapi_store("scheduling.k8s.io", "priorityclasses");
    K.jobsets = kapi_store("jobset.x-k8s.io", "jobsets");
    static const char *const builtin_ns[] = { "default", "kube-system", "kube-public", "kube-node-lease" };
    for (size_t i = 0; i < sizeof builtin_ns / sizeof *builtin_ns; i++) {
        json_t *n = json_pack("{s:s,s:s,s:{s:s,s:s},s:{s:s}}", "apiVersion", "v1", "kind", "Namespace", "metadata",
                              "name", builtin_ns[i], "uid", builtin_ns[i], "status", "phase", "Active");
        kapi_bump(n);
        json_object_set_new(kapi_store("", "namespaces"), builtin_ns[i], n);
    }
    if (openapi && kapi_openapi_load(openapi)) return 2;
    faults = json_array(), denied = json_array();
    kapi_faults_init();
    if (state && load_state(state)) return 2;
    struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port),
                              .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    if (!cert != !key || (client_ca && !cert)) {
        fprintf(stderr, "kapi: --tls-cert and --tls-key go together (and must be readable); --client-ca needs them\n");
        return 2;
    }
    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION;
    struct MHD_Daemon *d =
        cert ? MHD_start_daemon(flags | MHD_USE_TLS, 0, NULL, NULL, handler, NULL, MHD_OPTION_NOTIFY_COMPLETED, done,
                                NULL, MHD_OPTION_SOCK_ADDR, &sa, MHD_OPTION_HTTPS_MEM_CERT, cert,
                                MHD_OPTION_HTTPS_MEM_KEY, key, client_ca ? MHD_OPTION_HTTPS_MEM_TRUST : MHD_OPTION_END,
                                client_ca, MHD_OPTION_END)
             : MHD_start_daemon(flags, 0, NULL, NULL, handler, NULL, MHD_OPTION_NOTIFY_COMPLETED, done, NULL,
                                MHD_OPTION_SOCK_ADDR, &sa, MHD_OPTION_END);
    if (!d) {
        fprintf(stderr, "kapi: cannot listen\n");
        return 1;
    }
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
    if (port_file) {
        char tmp[1024];
        snprintf(tmp, sizeof tmp, "%s.tmp", port_file);
        FILE *f = fopen(tmp, "we");
        if (!f) return 1;
        fprintf(f, "%u\n", (unsigned)info->port);
        fclose(f);
        rename(tmp, port_file);
    }
    signal(SIGTERM, on_signal);
    signal(SIGINT, on_signal);
    while (!stop) {
        pthread_mutex_lock(&K.lock);
        kapi_sim_step();
        pthread_mutex_unlock(&K.lock);
        usleep((useconds_t)tick_ms * 1000);
    }
    MHD_stop_daemon(d);
    kapi_exec_stop();
    return 0;
}
