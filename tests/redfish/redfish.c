/* redfish.c — a Redfish service double for the tests (libmicrohttpd, HTTPS):
 * one BMC as DMTF DSP0266 describes it, serving the DMTF public-rackmount1
 * mockup files verbatim (tests/fixtures/redfish/): the systems collection,
 * ComputerSystem 437XR1138R2 (its PowerState follows the resets), the task
 * service and task 545.  Every request needs HTTP basic authentication
 * (401 with WWW-Authenticate otherwise).  POST to the system's
 * #ComputerSystem.Reset target with {"ResetType": one of its
 * ResetType@Redfish.AllowableValues} answers 202 Accepted, Location
 * /redfish/v1/TaskService/Tasks/545; the task monitor answers 202 with the
 * task Running until --task-ms has passed, then 200 with the task as the
 * mockup has it (Completed).  A ResetType not allowed: 400 with the error
 * response.  Modes (--mode, or POST /_test/mode with the name as the body):
 *   normal       as above
 *   refuse       the Reset POST answers 400 with the iDRAC error response sample
 *   conflict     … 409 with the same body
 *   unauthorized every request answers 401
 *   exception    the task ends in TaskState Exception (TaskStatus Critical)
 *   hang         no request is ever answered (a BMC that does not respond)
 * Usage: redfish --port-file FILE --tls-cert PEM --tls-key PEM --mockups DIR
 *                --user U --password P [--mode M] [--task-ms N] [--log FILE] */
#include <arpa/inet.h>
#include <jansson.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define SYS "/redfish/v1/Systems/437XR1138R2"
#define RESET SYS "/Actions/ComputerSystem.Reset"
#define TASK "/redfish/v1/TaskService/Tasks/545"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static char mode[32] = "normal", user[128], password[128], mockups[512];
static const char *power = "On";
static const char *power_after = "On";
static long task_ms = 500;
static long long task_end_ms;      /* 0: no task yet */
static int task_exception;
static FILE *logf;
static volatile sig_atomic_t stop;

static long long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static json_t *mockup(const char *name)
{
    char path[700];
    snprintf(path, sizeof path, "%s/%s", mockups, name);
    json_t *j = json_load_file(path, 0, NULL);
    if (!j) fprintf(stderr, "redfish: %s: cannot read\n", path);
    return j;
}

static enum MHD_Result reply(struct MHD_Connection *c, const char *method, const char *url, int code, json_t *body,
                            const char *location)
{
    char *text = body ? json_dumps(body, JSON_INDENT(4)) : strdup("");
    json_decref(body);
    struct MHD_Response *r = MHD_create_response_from_buffer(strlen(text), text, MHD_RESPMEM_MUST_FREE);
    if (*text) MHD_add_response_header(r, "Content-Type", "application/json;charset=utf-8");
    MHD_add_response_header(r, "OData-Version", "4.0");
    if (location) MHD_add_response_header(r, "Location", location);
    enum MHD_Result rc = MHD_queue_response(c, (unsigned)code, r);
    MHD_destroy_response(r);
    if (logf) fprintf(logf, "%s %s %d\n", method, url, code), fflush(logf);
    return rc;
}

/* The task as the monitor shows it now: 202 Running, then the mockup's task
 * (Completed; or Exception in that mode). */
static enum MHD_Result task(struct MHD_Connection *c, const char *method, const char *url)
{
    json_t *t = mockup("redfish-mockup-task-545.json");
    if (!t) return reply(c, method, url, 500, NULL, NULL);
    if (!task_end_ms) return reply(c, method, url, 200, t, NULL);
    if (now_ms() < task_end_ms) {
        json_object_set_new(t, "TaskState", json_string("Running"));
        json_object_del(t, "EndTime");
        return reply(c, method, url, 202, t, TASK);
    }
    power = power_after;
    if (task_exception) {
        json_object_set_new(t, "TaskState", json_string("Exception"));
        json_object_set_new(t, "TaskStatus", json_string("Critical"));
    }
    return reply(c, method, url, 200, t, NULL);
}

static bool allowed(json_t *sys, const char *v)
{
    json_t *list = json_object_get(json_object_get(json_object_get(sys, "Actions"), "#ComputerSystem.Reset"),
                                   "ResetType@Redfish.AllowableValues");
    size_t i;
    json_t *t;
    json_array_foreach(list, i, t)
        if (!strcmp(json_string_value(t), v)) return true;
    return false;
}

static enum MHD_Result reset(struct MHD_Connection *c, const char *method, const char *url, const char *body)
{
    if (!strcmp(mode, "refuse") || !strcmp(mode, "conflict"))
        return reply(c, method, url, !strcmp(mode, "refuse") ? 400 : 409,
                    mockup("redfish-error-response-idrac-documented-sample.json"), NULL);
    json_t *req = json_loads(body ? body : "", 0, NULL), *sys = mockup("redfish-mockup-computersystem-437XR1138R2.json");
    const char *rt = json_string_value(json_object_get(req, "ResetType"));
    bool ok = rt && sys && allowed(sys, rt);
    if (ok) {
        bool off = !strcmp(rt, "ForceOff") || !strcmp(rt, "GracefulShutdown");
        power_after = off ? "Off" : "On";
        if (!off && strcmp(rt, "On") && strcmp(rt, "ForceOn")) power = "Off";   /* a restart: off for a while */
        task_end_ms = now_ms() + task_ms;
        task_exception = !strcmp(mode, "exception");
        if (task_exception) power_after = power;
    }
    json_decref(req);
    json_decref(sys);
    if (!ok) return reply(c, method, url, 400, mockup("redfish-error-response-idrac-documented-sample.json"), NULL);
    json_t *t = mockup("redfish-mockup-task-545.json");
    json_object_set_new(t, "TaskState", json_string("Running"));
    json_object_del(t, "EndTime");
    return reply(c, method, url, 202, t, TASK);
}

struct upload {
    char *data;
    size_t len;
};

static enum MHD_Result handler(void *cls, struct MHD_Connection *c, const char *url, const char *method,
                               const char *version, const char *data, size_t *size, void **ctx)
{
    (void)cls, (void)version;
    struct upload *u = *ctx;
    if (!u) {
        *ctx = calloc(1, sizeof *u);
        return MHD_YES;
    }
    if (*size) {
        if (u->len + *size < (1 << 16)) {
            u->data = realloc(u->data, u->len + *size + 1);
            memcpy(u->data + u->len, data, *size);
            u->data[u->len += *size] = 0;
        }
        *size = 0;
        return MHD_YES;
    }
    if (!strcmp(url, "/_test/mode") && !strcmp(method, "POST")) {
        pthread_mutex_lock(&lock);
        snprintf(mode, sizeof mode, "%s", u->data ? u->data : "normal");
        mode[strcspn(mode, "\r\n")] = 0;
        pthread_mutex_unlock(&lock);
        return reply(c, method, url, 204, NULL, NULL);
    }
    pthread_mutex_lock(&lock);
    if (!strcmp(mode, "hang")) {
        pthread_mutex_unlock(&lock);
        if (logf) fprintf(logf, "%s %s (no answer)\n", method, url), fflush(logf);
        while (!stop) usleep(50 * 1000);
        return MHD_NO;
    }
    char *pass = NULL, *who = MHD_basic_auth_get_username_password(c, &pass);
    bool authed = who && pass && !strcmp(who, user) && !strcmp(pass, password) && strcmp(mode, "unauthorized");
    if (who) MHD_free(who);
    if (pass) MHD_free(pass);
    enum MHD_Result rc;
    if (!authed) {
        struct MHD_Response *r = MHD_create_response_from_buffer(0, "", MHD_RESPMEM_PERSISTENT);
        rc = MHD_queue_basic_auth_fail_response(c, "Redfish", r);
        MHD_destroy_response(r);
        if (logf) fprintf(logf, "%s %s 401\n", method, url), fflush(logf);
    } else if (!strcmp(method, "GET") && !strcmp(url, "/redfish/v1/Systems"))
        rc = reply(c, method, url, 200, mockup("redfish-mockup-systems-collection.json"), NULL);
    else if (!strcmp(method, "GET") && !strcmp(url, SYS)) {
        if (task_end_ms && now_ms() >= task_end_ms) power = power_after;
        json_t *s = mockup("redfish-mockup-computersystem-437XR1138R2.json");
        json_object_set_new(s, "PowerState", json_string(power));
        rc = reply(c, method, url, 200, s, NULL);
    } else if (!strcmp(method, "POST") && !strcmp(url, RESET))
        rc = reset(c, method, url, u->data);
    else if (!strcmp(method, "GET") && !strcmp(url, TASK))
        rc = task(c, method, url);
    else if (!strcmp(method, "GET") && !strcmp(url, "/redfish/v1/TaskService"))
        rc = reply(c, method, url, 200, mockup("redfish-mockup-taskservice.json"), NULL);
    else if (!strcmp(method, "GET") && !strcmp(url, "/redfish/v1/TaskService/Tasks"))
        rc = reply(c, method, url, 200, mockup("redfish-mockup-task-collection.json"), NULL);
    else
        rc = reply(c, method, url, strcmp(method, "GET") && strcmp(method, "POST") ? 405 : 404, NULL, NULL);
    pthread_mutex_unlock(&lock);
    return rc;
}

static void done(void *cls, struct MHD_Connection *c, void **ctx, enum MHD_RequestTerminationCode toe)
{
    (void)cls, (void)c, (void)toe;
    struct upload *u = *ctx;
    if (u) free(u->data);
    free(u);
    *ctx = NULL;
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

static void on_signal(int s) { (void)s; stop = 1; }

int main(int argc, char **argv)
{
    const char *port_file = NULL;
    char *cert = NULL, *key = NULL;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--port-file")) port_file = argv[i + 1];
        else if (!strcmp(argv[i], "--tls-cert")) cert = slurp(argv[i + 1]);
        else if (!strcmp(argv[i], "--tls-key")) key = slurp(argv[i + 1]);
        else if (!strcmp(argv[i], "--mockups")) snprintf(mockups, sizeof mockups, "%s", argv[i + 1]);
        else if (!strcmp(argv[i], "--user")) snprintf(user, sizeof user, "%s", argv[i + 1]);
        else if (!strcmp(argv[i], "--password")) snprintf(password, sizeof password, "%s", argv[i + 1]);
        else if (!strcmp(argv[i], "--mode")) snprintf(mode, sizeof mode, "%s", argv[i + 1]);
        else if (!strcmp(argv[i], "--task-ms")) task_ms = atol(argv[i + 1]);
        else if (!strcmp(argv[i], "--log")) logf = fopen(argv[i + 1], "ae");
        else break;
    }
    if (!port_file || !cert || !key || !*mockups || !*user || !*password) {
        fprintf(stderr, "usage: redfish --port-file FILE --tls-cert PEM --tls-key PEM --mockups DIR --user U "
                        "--password P [--mode M] [--task-ms N] [--log FILE]\n");
        return 2;
    }
    struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    struct MHD_Daemon *d = MHD_start_daemon(
        MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION | MHD_USE_TLS, 0, NULL, NULL, handler, NULL,
        MHD_OPTION_NOTIFY_COMPLETED, done, NULL, MHD_OPTION_SOCK_ADDR, &sa, MHD_OPTION_HTTPS_MEM_CERT, cert,
        MHD_OPTION_HTTPS_MEM_KEY, key, MHD_OPTION_END);
    if (!d) {
        fprintf(stderr, "redfish: cannot listen\n");
        return 1;
    }
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
    char tmp[1024];
    snprintf(tmp, sizeof tmp, "%s.tmp", port_file);
    FILE *f = fopen(tmp, "we");
    if (!f) return 1;
    fprintf(f, "%u\n", (unsigned)info->port);
    fclose(f);
    rename(tmp, port_file);
    signal(SIGTERM, on_signal);
    signal(SIGINT, on_signal);
    while (!stop) usleep(20 * 1000);
    MHD_stop_daemon(d);
    free(cert);
    free(key);
    return 0;
}
