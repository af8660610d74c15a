/* kapi_exec.c — the double's kubelet, when started with --exec DIR: it runs
 * a pod's container as a kubelet would, as far as one machine allows — the
 * first container's `command` + `args` as a local process (no shell), with
 * the container's `env` added to the environment (a value, or the downward
 * API's fieldRef on metadata.name, metadata.namespace or one of the pod's
 * annotations: metadata.annotations['KEY']), after the lines of
 * DIR/node-env/NODE when the pod's node has that file (each node's own
 * machine: `NAME=value` sets, a bare `NAME` unsets), its working
 * directory DIR/NS_NAME (the container's own filesystem), stdout and stderr
 * into DIR/NS_NAME.log (served as pods/NAME/log).  hostPath volumes are the
 * host's files: only a mountPath equal to the hostPath's path can be given
 * (it is not remapped); anything else fails the pod with a message saying
 * so.  A persistentVolumeClaim volume is the directory DIR/pvc/NS_CLAIM,
 * shared by every pod that mounts the claim (ReadWriteMany), bind-mounted
 * at its mountPath in a mount namespace of the container's own (as root; a
 * mountPath that does not exist here gets a tmpfs over its parent first, in
 * that namespace only: nothing of this machine is written).  A container without a command runs nothing (the
 * image's entrypoint is not known here) and simply counts as running.  When
 * the process exits the pod ends as the v1 Pod contract says: phase
 * Succeeded (exit 0) or Failed, the container `terminated` with exitCode,
 * reason Completed / Error, startedAt and finishedAt, Ready and
 * ContainersReady False with reason PodCompleted / PodFailed.  A pod
 * deleted or evicted has its process group killed at once (no grace
 * period here).  Not supported: $(VAR) expansion, init containers, more
 * than one container's process, restartPolicy other than Never. */
#include "kapi.h"
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static const char *dir;     /* NULL: containers run nothing */
static json_t *procs;       /* "ns/name" → {"pid":…, "uid":…} */

void kapi_exec_init(const char *d)
{
    dir = d;
    procs = json_object();
    mkdir(d, 0755);
}

bool kapi_exec_on(void) { return dir != NULL; }

static const char *meta(const json_t *o, const char *k)
{
    return json_string_value(json_object_get(json_object_get(o, "metadata"), k));
}

static void file_of(const json_t *pod, const char *suffix, char *buf, size_t n)
{
    snprintf(buf, n, "%s/%s_%s%s", dir, meta(pod, "namespace") ?: "default", meta(pod, "name") ?: "", suffix);
}

void kapi_exec_log(const json_t *pod, char *path, size_t n) { file_of(pod, ".log", path, n); }

/* In the child: the environment of the pod's node, from DIR/node-env/NODE. */
static void node_env(const json_t *pod)
{
    const char *node = json_string_value(json_object_get(json_object_get(pod, "spec"), "nodeName"));
    char path[1200], line[1200];
    if (!node || strchr(node, '/')) return;
    snprintf(path, sizeof path, "%s/node-env/%s", dir, node);
    FILE *f = fopen(path, "re");
    if (!f) return;
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = 0;
        char *eq = strchr(line, '=');
        if (eq) *eq = 0, setenv(line, eq + 1, 1);
        else if (*line) unsetenv(line);
    }
    fclose(f);
}

/* The reason a container cannot run here, or NULL. */
static const char *unsupported(const json_t *pod, const json_t *c)
{
    json_t *vols = json_object_get(json_object_get(pod, "spec"), "volumes");
    size_t i, k;
    json_t *m, *v;
    json_array_foreach(json_object_get(c, "volumeMounts"), i, m) {
        const char *name = json_string_value(json_object_get(m, "name"));
        const char *at = json_string_value(json_object_get(m, "mountPath"));
        json_array_foreach(vols, k, v) {
            if (!name || strcmp(name, json_string_value(json_object_get(v, "name")) ?: "")) continue;
            const char *hp = json_string_value(json_object_get(json_object_get(v, "hostPath"), "path"));
            if (hp && (!at || strcmp(hp, at)))
                return "this test double mounts a hostPath volume only at its own path (no mount namespace)";
        }
    }
    return NULL;
}

/* Starts the pod's first container; false when it cannot (why in *msg). */
/* An env entry's value: `value`, or the pod field its valueFrom.fieldRef names; "" otherwise. */
static const char *env_value(const json_t *pod, const json_t *v)
{
    const char *val = json_string_value(json_object_get(v, "value"));
    if (val) return val;
    const char *f = json_string_value(json_object_get(json_object_get(json_object_get(v, "valueFrom"), "fieldRef"), "fieldPath"));
    if (!f) return "";
    if (!strcmp(f, "metadata.name")) return meta(pod, "name") ?: "";
    if (!strcmp(f, "metadata.namespace")) return meta(pod, "namespace") ?: "";
    static const char pre[] = "metadata.annotations['";
    size_t fl = strlen(f);
    if (strncmp(f, pre, sizeof pre - 1) || fl < sizeof pre + 1 || strcmp(f + fl - 2, "']")) return "";
    char k[256];
    snprintf(k, sizeof k, "%.*s", (int)(fl - (sizeof pre - 1) - 2), f + sizeof pre - 1);
    json_t *a = json_object_get(json_object_get(json_object_get(pod, "metadata"), "annotations"), k);
    return json_string_value(a) ?: "";
}

/* The claim a mount's volume names, or NULL. */
static const char *claim_of(const json_t *pod, const json_t *mnt)
{
    const char *name = json_string_value(json_object_get(mnt, "name"));
    size_t k;
    json_t *v;
    json_array_foreach(json_object_get(json_object_get(pod, "spec"), "volumes"), k, v)
        if (name && !strcmp(name, json_string_value(json_object_get(v, "name")) ?: ""))
            return json_string_value(json_object_get(json_object_get(v, "persistentVolumeClaim"), "claimName"));
    return NULL;
}

/* In the child, before exec: the claims mounted where the container asks,
 * in a mount namespace of its own.  -1 (errno) when that cannot be done. */
static int mount_claims(const json_t *pod, const json_t *c)
{
    bool any = false;
    size_t i;
    json_t *m;
    json_array_foreach(json_object_get(c, "volumeMounts"), i, m) {
        const char *claim = claim_of(pod, m), *at = json_string_value(json_object_get(m, "mountPath"));
        if (!claim || !at || at[0] != '/') continue;
        if (!any && (unshare(CLONE_NEWNS) || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL))) return -1;
        any = true;
        char src[1200], parent[1024];
        snprintf(src, sizeof src, "%s/pvc", dir);
        mkdir(src, 0755);
        snprintf(src, sizeof src, "%s/pvc/%s_%s", dir, meta(pod, "namespace") ?: "default", claim);
        mkdir(src, 0755);
        struct stat st;
        if (stat(at, &st)) {   /* no such directory here: a tmpfs over its parent, then it */
            snprintf(parent, sizeof parent, "%s", at);
            char *slash = strrchr(parent, '/');
            if (slash == parent) return errno = EINVAL, -1;
            *slash = 0;
            if (mount("tmpfs", parent, "tmpfs", 0, "mode=0755") || mkdir(at, 0755)) return -1;
        }
        if (mount(src, at, NULL, MS_BIND, NULL)) return -1;
    }
    return 0;
}

static bool start(const json_t *pod, const json_t *c, const char *key, const char **msg)
{
    if ((*msg = unsupported(pod, c))) return false;
    json_t *cmd = json_object_get(c, "command"), *args = json_object_get(c, "args");
    size_t n = json_array_size(cmd) + json_array_size(args), a = 0;
    char **argv = calloc(n + 1, sizeof *argv);
    size_t i;
    json_t *v;
    json_array_foreach(cmd, i, v) argv[a++] = (char *)json_string_value(v);
    json_array_foreach(args, i, v) argv[a++] = (char *)json_string_value(v);
    char wd[1200], log[1200];
    file_of(pod, "", wd, sizeof wd);
    file_of(pod, ".log", log, sizeof log);
    mkdir(wd, 0755);
    pid_t pid = fork();
    if (pid == 0) {
        setpgid(0, 0);
        int fd = open(log, O_WRONLY | O_CREAT | O_APPEND, 0644);
        int null = open("/dev/null", O_RDONLY);
        if (fd < 0 || null < 0 || chdir(wd)) _exit(127);
        dup2(null, 0), dup2(fd, 1), dup2(fd, 2);
        if (mount_claims(pod, c)) {
            fprintf(stderr, "mounting a persistentVolumeClaim: %s (the double's kubelet needs root for it)\n",
                    strerror(errno));
            _exit(127);
        }
        node_env(pod);
        json_array_foreach(json_object_get(c, "env"), i, v) {
            const char *name = json_string_value(json_object_get(v, "name"));
            if (name) setenv(name, env_value(pod, v), 1);
        }
        execvp(argv[0], argv);
        fprintf(stderr, "exec %s: %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    free(argv);
    if (pid < 0) {
        *msg = "fork failed";
        return false;
    }
    json_object_set_new(procs, key, json_pack("{s:I,s:s}", "pid", (json_int_t)pid, "uid", meta(pod, "uid") ?: ""));
    return true;
}

static json_t *cstatus(const json_t *c, json_t *state, bool ready, const char *uid)
{
    char cid[128];
    snprintf(cid, sizeof cid, "containerd://%s-%s", uid ? uid : "", json_string_value(json_object_get(c, "name")) ?: "");
    return json_pack("{s:s,s:o,s:{},s:b,s:i,s:s,s:s,s:s,s:b}", "name", json_string_value(json_object_get(c, "name")) ?: "",
                     "state", state, "lastState", "ready", ready, "restartCount", 0, "image",
                     json_string_value(json_object_get(c, "image")) ?: "", "imageID", "", "containerID", cid, "started",
                     ready);
}

/* The five conditions of a pod whose containers started (ready) or ended. */
static json_t *conditions(const char *scheduled, const char *now, bool ready, const char *why)
{
    json_t *l = json_array();
    json_array_append_new(l, json_pack("{s:s,s:s,s:s}", "type", "PodReadyToStartContainers", "status",
                                       ready ? "True" : "False", "lastTransitionTime", now));
    json_array_append_new(l, json_pack("{s:s,s:s,s:s}", "type", "Initialized", "status", "True",
                                       "lastTransitionTime", scheduled));
    const char *types[] = { "Ready", "ContainersReady" };
    for (int k = 0; k < 2; k++) {
        json_t *c = json_pack("{s:s,s:s,s:s}", "type", types[k], "status", ready ? "True" : "False",
                              "lastTransitionTime", now);
        if (why) json_object_set_new(c, "reason", json_string(why));
        json_array_append_new(l, c);
    }
    json_array_append_new(l, json_pack("{s:s,s:s,s:s}", "type", "PodScheduled", "status", "True",
                                       "lastTransitionTime", scheduled));
    return l;
}

static const char *scheduled_at(const json_t *pod)
{
    size_t i;
    json_t *c;
    json_array_foreach(json_object_get(json_object_get(pod, "status"), "conditions"), i, c)
        if (!strcmp(json_string_value(json_object_get(c, "type")) ?: "", "PodScheduled"))
            return json_string_value(json_object_get(c, "lastTransitionTime")) ?: kapi_now();
    return kapi_now();
}

void kapi_exec_run(json_t *pod, const char *key)
{
    json_t *st = json_object_get(pod, "status");
    json_t *c = json_array_get(json_object_get(json_object_get(pod, "spec"), "containers"), 0);
    const char *now = kapi_now(), *msg = NULL, *uid = meta(pod, "uid");
    char sched[32];
    snprintf(sched, sizeof sched, "%s", scheduled_at(pod));
    bool has_cmd = json_array_size(json_object_get(c, "command")) > 0;
    if (has_cmd && !start(pod, c, key, &msg)) {
        json_object_set_new(st, "phase", json_string("Failed"));
        json_object_set_new(st, "reason", json_string("ContainerCannotRun"));
        json_object_set_new(st, "message", json_string(msg));
        json_object_set_new(st, "conditions", conditions(sched, now, false, "PodFailed"));
        json_object_set_new(st, "containerStatuses",
                            json_pack("[o]", cstatus(c, json_pack("{s:{s:i,s:s,s:s,s:s,s:s}}", "terminated", "exitCode", 128,
                                                                  "reason", "ContainerCannotRun", "message", msg,
                                                                  "startedAt", now, "finishedAt", now),
                                                     false, uid)));
        kapi_bump(pod);
        return;
    }
    json_object_set_new(st, "phase", json_string("Running"));
    json_object_set_new(st, "startTime", json_string(now));
    json_object_set_new(st, "conditions", conditions(sched, now, true, NULL));
    if (c)
        json_object_set_new(st, "containerStatuses",
                            json_pack("[o]", cstatus(c, json_pack("{s:{s:s}}", "running", "startedAt", now), true, uid)));
    kapi_bump(pod);
}

/* Ends the pods whose process exited; kills the processes of pods that are gone. */
void kapi_exec_reap(void)
{
    if (!dir) return;
    const char *key;
    json_t *p;
    void *tmp;
    json_object_foreach_safe(procs, tmp, key, p) {
        pid_t pid = (pid_t)json_integer_value(json_object_get(p, "pid"));
        json_t *pod = json_object_get(K.pods, key);
        bool same = pod && !strcmp(meta(pod, "uid") ?: "", json_string_value(json_object_get(p, "uid")) ?: "");
        if (!same) kill(-pid, SIGKILL);   /* deleted or evicted: no grace period here */
        int ws;
        pid_t r = waitpid(pid, &ws, same ? WNOHANG : 0);
        if (r == 0) continue;
        json_object_del(procs, key);
        if (!same || r < 0) continue;
        int code = WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + WTERMSIG(ws);
        json_t *st = json_object_get(pod, "status");
        json_t *c = json_array_get(json_object_get(json_object_get(pod, "spec"), "containers"), 0);
        const char *started = json_string_value(json_object_get(st, "startTime")) ?: kapi_now();
        char sched[32];
        snprintf(sched, sizeof sched, "%s", scheduled_at(pod));
        json_object_set_new(st, "phase", json_string(code ? "Failed" : "Succeeded"));
        json_object_set_new(st, "conditions", conditions(sched, kapi_now(), false, code ? "PodFailed" : "PodCompleted"));
        json_object_set_new(st, "containerStatuses",
                            json_pack("[o]", cstatus(c, json_pack("{s:{s:i,s:s,s:s,s:s}}", "terminated", "exitCode", code,
                                                                  "reason", code ? "Error" : "Completed", "startedAt",
                                                                  started, "finishedAt", kapi_now()),
                                                     false, meta(pod, "uid"))));
        kapi_bump(pod);
        if (code) kapi_pod_lost(pod);
    }
}

void kapi_exec_stop(void)
{
    if (!dir) return;
    const char *key;
    json_t *p;
    json_object_foreach(procs, key, p) {
        pid_t pid = (pid_t)json_integer_value(json_object_get(p, "pid"));
        kill(-pid, SIGKILL);
        waitpid(pid, NULL, 0);
    }
}
