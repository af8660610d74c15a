/* test_checkconf.c — `vigil check`'s config grammar (lines, quoting,
 * comments, errors naming file:line), host masks, validation against the
 * check table, and whole runs on the fixture trees with the fake NVML
 * library: healthy, degraded, a hung NVML call within the deadline,
 * --init's expectations passing on the node they were written from, and the
 * built-in checks of a node with no config (driver and NVML on one version,
 * the /etc/fstab entries mounted); the fabric check (Fabric Manager and
 * IMEX answering on their ports) and the GPUs' fabric registration. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include "signal/checkconf.h"
#include "signal/checkrun.h"
#include "signal/checks.h"
#include "util/timeutil.h"

#define H100 "tests/fixtures/sysfs/h100"
#define DEGRADED "tests/fixtures/sysfs/degraded"

static char state_path[64];

static int parse(const char *text, struct vg_checkconf *c, char *err)
{
    int rc = vg_checkconf_parse(text, strlen(text), "vigil.conf", c, err, 256);
    if (rc == 0) rc = vg_check_validate(c, err, 256);
    return rc;
}

static void test_parse_lines(void **st)
{
    (void)st;
    struct vg_checkconf c;
    char err[256] = "";
    const char *text = "# expectations\n\n"
                       "* || gpu count=8 model=\"NVIDIA H100 80GB HBM3\"   # trailing comment\n"
                       "gpu[01-16] || ib port=mlx5_0:1 state=ACTIVE rate=400\n"
                       "  *  ||  mount \"/lustre/my data\" fstype=lustre\n"
                       "n1,n2 || service munged slurmd\n"
                       "* || driver version=\"535.183.01\"";
    assert_int_equal(parse(text, &c, err), 0);
    assert_int_equal(c.n, 5);
    assert_int_equal(c.lines[0].lineno, 3);
    assert_string_equal(c.lines[0].hostmask, "*");
    assert_string_equal(c.lines[0].check, "gpu");
    assert_string_equal(vg_check_get(&c.lines[0], "model"), "NVIDIA H100 80GB HBM3");
    assert_string_equal(vg_check_get(&c.lines[0], "count"), "8");
    assert_null(vg_check_get(&c.lines[0], "ecc_dbe"));
    assert_string_equal(c.lines[1].hostmask, "gpu[01-16]");
    assert_string_equal(vg_check_get(&c.lines[1], "port"), "mlx5_0:1");
    assert_int_equal(c.lines[2].nwords, 1);
    assert_string_equal(c.lines[2].words[0], "/lustre/my data");
    assert_int_equal(c.lines[3].nwords, 2);
    assert_string_equal(c.lines[3].words[1], "slurmd");
    assert_string_equal(vg_check_get(&c.lines[4], "version"), "535.183.01");
    vg_checkconf_free(&c);
}

/* Each malformed config names the file and the line at fault. */
static void test_parse_errors(void **st)
{
    (void)st;
    static const struct { const char *text, *want; } bad[] = {
        { "* || gpu count=8\n* gpu count=8\n", "vigil.conf:2: expected 'HOSTMASK || CHECK" },
        { "\n\n || gpu count=8\n", "vigil.conf:3: empty host mask" },
        { "* ||\n", "vigil.conf:1: missing check name" },
        { "* || gpu model=\"unterminated\n", "vigil.conf:1: unterminated quoted value" },
        { "n[3-1] || gpu count=1\n", "vigil.conf:1: malformed host mask" },
        { "/[/ || gpu count=1\n", "vigil.conf:1: malformed host mask" },
        { "* || fan speed=3\n", "vigil.conf:1: unknown check 'fan'" },
        { "* || gpu colour=red\n", "vigil.conf:1: unknown key 'colour' for check 'gpu'" },
        { "* || gpu count=eight\n", "vigil.conf:1: bad value for 'count' (expected a number)" },
        { "* || gpu pcie=half\n", "vigil.conf:1: bad value for 'pcie' (expected full|any)" },
        { "* || gpu count=-1\n", "vigil.conf:1: bad value for 'count'" },
        { "* || ib state=ACTIVE\n", "vigil.conf:1: check 'ib' needs port=" },
        { "* || mount\n", "vigil.conf:1: check 'mount' needs an argument" },
        { "* || mount /a /b\n", "vigil.conf:1: unexpected word '/b'" },
        { "* || gpu ecc_dbe\n", "vigil.conf:1: unexpected word 'ecc_dbe'" },
        { "* || g$u count=1\n", "vigil.conf:1: malformed check name" },
        { "* || gpu co-unt=1\n", "vigil.conf:1: malformed key" },
        { "* || driver nvml=yes\n", "vigil.conf:1: bad value for 'nvml' (expected match)" },
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        struct vg_checkconf c;
        char err[256] = "";
        assert_int_equal(parse(bad[i].text, &c, err), -1);
        if (strncmp(err, bad[i].want, strlen(bad[i].want)) != 0) fail_msg("'%s': got '%s'", bad[i].text, err);
        vg_checkconf_free(&c);
    }
    struct vg_checkconf c;
    char err[256];
    const char nul[] = "* || gpu count=1\n*\0 || x\n";
    assert_int_equal(vg_checkconf_parse(nul, sizeof nul - 1, "f", &c, err, sizeof err), -1);
    assert_string_equal(err, "f:2: NUL byte in line");
    vg_checkconf_free(&c);
}

static void test_hostmask(void **st)
{
    (void)st;
    assert_int_equal(vg_hostmask_match("*", "gpu07"), 1);
    assert_int_equal(vg_hostmask_match("gpu*", "gpu07"), 1);
    assert_int_equal(vg_hostmask_match("cpu*", "gpu07"), 0);
    assert_int_equal(vg_hostmask_match("gpu[01-16]", "gpu07"), 1);
    assert_int_equal(vg_hostmask_match("gpu[01-16]", "gpu7"), 0);    /* padded range, padded names */
    assert_int_equal(vg_hostmask_match("gpu[01-16]", "gpu17"), 0);
    assert_int_equal(vg_hostmask_match("n[1-3,7]", "n7"), 1);
    assert_int_equal(vg_hostmask_match("n[1-3,7]", "n5"), 0);
    assert_int_equal(vg_hostmask_match("n[1-3]-ib", "n2-ib"), 1);
    assert_int_equal(vg_hostmask_match("n[1-3]-ib", "n2"), 0);
    assert_int_equal(vg_hostmask_match("n[12]", "n1"), 1);           /* a glob class */
    assert_int_equal(vg_hostmask_match("n1,n3", "n3"), 1);
    assert_int_equal(vg_hostmask_match("n[1-4],!n3", "n3"), 0);
    assert_int_equal(vg_hostmask_match("n[1-4],!n3", "n2"), 1);
    assert_int_equal(vg_hostmask_match("!n3", "n2"), 1);
    assert_int_equal(vg_hostmask_match("/^gpu-[a-c][0-9]+$/", "gpu-b12"), 1);
    assert_int_equal(vg_hostmask_match("/^gpu-[a-c][0-9]+$/", "gpu-d12"), 0);
    assert_int_equal(vg_hostmask_match("/a,b/", "xa,by"), 1);        /* commas inside a regex */
    assert_int_equal(vg_hostmask_match("n[3-1]", "n2"), -1);
    assert_int_equal(vg_hostmask_match("n[1-3", "n2"), -1);
    assert_int_equal(vg_hostmask_match("n1,,n2", "n2"), -1);
}

static void write_state(const char *text)
{
    FILE *f = fopen(state_path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static int setup(void **st)
{
    (void)st;
    const char *lib = getenv("FAKE_NVML");
    setenv("VIGIL_NVML_LIB", lib && *lib ? lib : "build/tests/libnvidia-ml.so.1", 1);
    snprintf(state_path, sizeof state_path, "/tmp/vigil-checkconf-%d.state", (int)getpid());
    setenv("FAKE_NVML_STATE", state_path, 1);
    return 0;
}

static int teardown(void **st)
{
    (void)st;
    unlink(state_path);
    return 0;
}

static const char *const full_conf =
    "* || gpu count=8 model=\"NVIDIA H100 80GB HBM3\"\n"
    "* || gpu ecc_dbe=0 remap_failure=no remap_pending=no pcie=full nvlink=all-up thermal=ok\n"
    "n[1-4] || ib port=mlx5_0:1 state=ACTIVE rate=400\n"
    "* || ib port=mlx5_1 state=ACTIVE phys_state=LinkUp link_layer=InfiniBand\n"
    "n9 || ib port=mlx5_9 state=ACTIVE\n"
    "* || driver version=535.183.01\n"
    "* || mount /scratch fstype=nfs4 mode=rw\n"
    "* || mount \"/lustre/my data\" mode=ro\n"
    "* || service munged slurmd nvidia-fabricmanager\n"
    "* || pcie gpu=full aer_fatal=0 aer_nonfatal=0\n";

static const struct vg_check_result *find(const struct vg_check_results *rs, const char *name)
{
    for (size_t i = 0; i < rs->n; i++)
        if (strcmp(rs->r[i].name, name) == 0) return &rs->r[i];
    return NULL;
}

static int run(const char *conf_text, const char *root, int deadline_ms, struct vg_check_results *rs)
{
    struct vg_checkconf c;
    char err[256] = "";
    assert_int_equal(parse(conf_text, &c, err), 0);
    struct vg_check_opts o = { .root = root, .node = "n2", .deadline_mono_ms = vg_mono_ms() + deadline_ms };
    memset(rs, 0, sizeof *rs);
    int applied = vg_check_run(&c, &o, rs);
    vg_checkconf_free(&c);
    return applied;
}

static void test_run_healthy(void **st)
{
    (void)st;
    write_state("gpus=8\n");
    struct vg_check_results rs;
    assert_int_equal(run(full_conf, H100, 20000, &rs), 9);   /* the n9 line does not apply */
    for (size_t i = 0; i < rs.n; i++)
        if (!rs.r[i].ok) fail_msg("%s failed: %s", rs.r[i].name, rs.r[i].detail);
    assert_non_null(find(&rs, "gpu responsive"));
    assert_non_null(find(&rs, "service nvidia-fabricmanager"));   /* comm keeps 15 characters */
    assert_non_null(find(&rs, "mount /lustre/my data"));
    assert_null(find(&rs, "ib mlx5_9 state"));
    assert_int_equal(rs.n, 23);
    vg_check_results_free(&rs);
}

static void test_run_degraded(void **st)
{
    (void)st;
    write_state("gpus=8\ngpu2.ecc_dbe_volatile=1\ngpu4.remap_failure=1\ngpu6.lost=1\ngpu5.nvlink_down=2\n");
    struct vg_check_results rs;
    run(full_conf, DEGRADED, 20000, &rs);
    static const char *const failing[] = {
        "gpu responsive", "gpu ecc_dbe", "gpu remap_failure", "gpu nvlink", "ib mlx5_0:1 rate", "ib mlx5_1 state",
        "ib mlx5_1 phys_state", "driver version", "mount /scratch", "mount /lustre/my data", "service munged",
        "service slurmd", "pcie gpu width", "pcie aer_fatal", "pcie aer_nonfatal",
    };
    for (size_t i = 0; i < sizeof failing / sizeof failing[0]; i++) {
        const struct vg_check_result *r = find(&rs, failing[i]);
        if (!r) fail_msg("no result '%s'", failing[i]);
        if (r->ok) fail_msg("'%s' passed: %s", failing[i], r->detail);
    }
    assert_true(find(&rs, "gpu count")->ok);
    assert_true(find(&rs, "gpu pcie")->ok);
    assert_true(find(&rs, "service nvidia-fabricmanager")->ok);
    assert_true(find(&rs, "ib mlx5_1 link_layer")->ok);
    const struct vg_check_result *r = find(&rs, "gpu responsive");
    assert_non_null(strstr(r->detail, "GPU 6 is lost"));
    assert_int_equal(r->nev, 1);
    assert_string_equal(r->ev[0].kind, "gpu-lost");
    r = find(&rs, "gpu ecc_dbe");
    assert_non_null(strstr(r->detail, "GPU 2 (0000:3a:00.0)"));
    assert_int_equal(r->nev, 1);
    assert_string_equal(r->ev[0].kind, "ecc-dbe");
    assert_int_equal(r->ev[0].gpu, 2);
    r = find(&rs, "ib mlx5_1 state");
    assert_int_equal(r->nev, 1);
    assert_string_equal(r->ev[0].kind, "ib-down");
    assert_string_equal(find(&rs, "ib mlx5_0:1 rate")->ev[0].kind, "ib-degraded");
    assert_string_equal(find(&rs, "pcie gpu width")->ev[0].kind, "pcie-degraded");
    assert_non_null(strstr(find(&rs, "driver version")->detail, "535.161.08"));   /* from /proc */
    r = find(&rs, "service munged");   /* no signal behind it: a "check" event */
    assert_int_equal(r->nev, 1);
    assert_string_equal(r->ev[0].source, "check");
    assert_string_equal(r->ev[0].kind, "check-failed");
    assert_non_null(strstr(r->ev[0].raw, "service munged: no process"));
    vg_check_results_free(&rs);
}

static void test_run_nvml_hangs(void **st)
{
    (void)st;
    write_state("gpus=8\ngpu3.hang=nvmlDeviceGetRemappedRows\n");
    struct vg_check_results rs;
    int64_t t0 = vg_mono_ms();
    run(full_conf, H100, 1500, &rs);
    int64_t took = vg_mono_ms() - t0;
    assert_true(took < 3000);
    const struct vg_check_result *r = find(&rs, "gpu responsive");
    assert_false(r->ok);
    assert_non_null(strstr(r->detail, "GPU 3 unresponsive"));
    assert_string_equal(r->ev[0].kind, "probe-hung");
    /* The sysfs checks still answered. */
    assert_true(find(&rs, "ib mlx5_1 state")->ok);
    assert_true(find(&rs, "service munged")->ok);
    vg_check_results_free(&rs);
    /* NVML missing altogether: reported, not a crash. */
    setenv("VIGIL_NVML_LIB", "/nonexistent/libnvidia-ml.so.1", 1);
    run("* || gpu count=8\n", H100, 5000, &rs);
    assert_false(find(&rs, "gpu responsive")->ok);
    assert_non_null(strstr(find(&rs, "gpu responsive")->detail, "cannot load"));
    assert_false(find(&rs, "gpu count")->ok);
    vg_check_results_free(&rs);
    setup(NULL);
}

/* A daemon on 127.0.0.1, any port (its port in *port): a child that accepts
 * each connection and closes it, as a live daemon refusing junk does.  Its pid. */
static pid_t daemon_on(int *port)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof a), 0);
    assert_int_equal(listen(fd, 4), 0);
    socklen_t len = sizeof a;
    assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &len), 0);
    *port = ntohs(a.sin_port);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0)
        for (;;) {
            int c = accept(fd, NULL, NULL);
            if (c >= 0) close(c);
        }
    close(fd);
    return pid;
}

/* fabric: Fabric Manager's port answers or refuses (fabric-manager-down), the
 * IMEX service's port taken from its config's SERVER_PORT (imex-down when
 * nothing answers); gpu fabric=ok fails on a GPU whose registration failed
 * (fabric-degraded) or has not finished; with no config, a node whose GPUs
 * register with a fabric gets `fabric imex=yes`. */
static void test_fabric(void **st)
{
    (void)st;
    write_state("gpus=4\ngpu*.fabric=completed\ngpu*.fabric_clique=1\n");
    int fm, imex;
    pid_t d1 = daemon_on(&fm), d2 = daemon_on(&imex);
    char root[] = "/tmp/vigil-fabric-XXXXXX", path[128], conf[256];
    assert_non_null(mkdtemp(root));
    snprintf(path, sizeof path, "%s/etc", root);
    mkdir(path, 0755);
    snprintf(path, sizeof path, "%s/etc/nvidia-imex", root);
    mkdir(path, 0755);
    snprintf(path, sizeof path, "%s/etc/nvidia-imex/config.cfg", root);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fprintf(f, "# IMEX\nIMEX_CMD_PORT=50005\nSERVER_PORT=%d\n", imex);
    fclose(f);
    snprintf(conf, sizeof conf, "* || fabric manager=%d imex=yes\n* || gpu fabric=ok\n", fm);
    struct vg_check_results rs;
    run(conf, root, 20000, &rs);
    for (size_t i = 0; i < rs.n; i++)
        if (!rs.r[i].ok) fail_msg("%s failed: %s", rs.r[i].name, rs.r[i].detail);
    assert_non_null(find(&rs, "fabric manager"));
    char want[96];
    snprintf(want, sizeof want, "the IMEX service answers on 127.0.0.1:%d", imex);
    assert_string_equal(find(&rs, "fabric imex")->detail, want);
    assert_true(find(&rs, "gpu fabric")->ok);
    vg_check_results_free(&rs);
    /* both daemons gone, GPU 1's registration failed, GPU 2's still running */
    kill(d1, SIGKILL);
    kill(d2, SIGKILL);
    waitpid(d1, NULL, 0);
    waitpid(d2, NULL, 0);
    write_state("gpus=4\ngpu*.fabric=completed\ngpu*.fabric_clique=1\ngpu1.fabric_status=999\n"
                "gpu2.fabric=in_progress\n");
    run(conf, root, 20000, &rs);
    const struct vg_check_result *r = find(&rs, "fabric manager");
    assert_false(r->ok);
    assert_int_equal(r->nev, 1);
    assert_string_equal(r->ev[0].kind, "fabric-manager-down");
    r = find(&rs, "fabric imex");
    assert_false(r->ok);
    assert_string_equal(r->ev[0].kind, "imex-down");
    r = find(&rs, "gpu fabric");
    assert_false(r->ok);
    assert_int_equal(r->nev, 2);
    assert_string_equal(r->ev[0].kind, "fabric-degraded");
    assert_int_equal(r->ev[0].gpu, 1);
    assert_string_equal(r->ev[1].kind, "fabric-pending");
    vg_check_results_free(&rs);
    /* no config: GPUs in a fabric get the IMEX check */
    struct sbuf text = SBUF_INIT;
    struct vg_check_opts o = { .root = root, .node = "n2", .deadline_mono_ms = vg_mono_ms() + 20000 };
    vg_check_default_text(&o, &text);
    assert_non_null(strstr(text.s, "* || fabric imex=yes\n"));
    sbuf_free(&text);
    unlink(path);
    snprintf(path, sizeof path, "%s/etc/nvidia-imex", root);
    rmdir(path);
    snprintf(path, sizeof path, "%s/etc", root);
    rmdir(path);
    rmdir(root);
}

static void test_init_round_trip(void **st)
{
    (void)st;
    write_state("gpus=8\n");
    struct sbuf text = SBUF_INIT;
    /* the scheduler's daemons come from the orchestrator (cmd/check.c passes them) */
    static const char *const daemons[] = { "munged", "slurmd", NULL };
    struct vg_check_opts o = { .root = H100, .node = "n2", .deadline_mono_ms = vg_mono_ms() + 20000,
                               .daemons = daemons };
    vg_check_init_text(&o, &text);
    assert_non_null(strstr(text.s, "* || gpu count=8 model=\"NVIDIA H100 80GB HBM3\"\n"));
    assert_non_null(strstr(text.s, "* || ib port=mlx5_0:1 state=ACTIVE rate=400\n"));
    assert_non_null(strstr(text.s, "* || ib port=mlx5_bond_0:1 state=ACTIVE rate=200\n"));
    assert_non_null(strstr(text.s, "* || driver version=535.183.01\n"));
    assert_non_null(strstr(text.s, "* || mount /scratch fstype=nfs4\n"));
    assert_non_null(strstr(text.s, "* || service munged slurmd nvidia-fabricmanager\n"));
    assert_non_null(strstr(text.s, "nvlink=all-up"));
    struct vg_check_results rs;
    assert_true(run(text.s, H100, 20000, &rs) >= 7);
    for (size_t i = 0; i < rs.n; i++)
        if (!rs.r[i].ok) fail_msg("%s failed: %s", rs.r[i].name, rs.r[i].detail);
    vg_check_results_free(&rs);
    /* The same expectations fail on the degraded node. */
    write_state("gpus=7\n");
    run(text.s, DEGRADED, 20000, &rs);
    assert_false(find(&rs, "gpu count")->ok);
    assert_string_equal(find(&rs, "gpu count")->ev[0].kind, "gpu-count-mismatch");
    assert_false(find(&rs, "ib mlx5_1:1 state")->ok);
    vg_check_results_free(&rs);
    sbuf_free(&text);
}

/* Whether text has this whole line. */
static bool has_line(const char *text, const char *line)
{
    size_t n = strlen(line);
    for (const char *p = text; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
        if (strncmp(p, line, n) == 0 && (p[n] == '\n' || !p[n])) return true;
    return false;
}

static void defaults(const char *root, struct sbuf *text)
{
    struct vg_check_opts o = { .root = root, .node = "n2", .deadline_mono_ms = vg_mono_ms() + 20000 };
    *text = (struct sbuf)SBUF_INIT;
    vg_check_default_text(&o, text);
}

/* No config: driver and NVML on one version, the fstab entries mounted. */
static void test_defaults(void **st)
{
    (void)st;
    write_state("gpus=8\n");
    struct sbuf text;
    defaults(H100, &text);
    assert_true(has_line(text.s, "* || driver nvml=match"));
    assert_true(has_line(text.s, "* || mount /"));
    assert_true(has_line(text.s, "* || mount /scratch"));
    assert_true(has_line(text.s, "* || mount \"/lustre/my data\""));   /* fstab's \040 */
    assert_null(strstr(text.s, "/mnt/usb"));   /* noauto */
    assert_null(strstr(text.s, "mount none"));  /* swap */
    struct vg_check_results rs;
    run(text.s, H100, 20000, &rs);
    for (size_t i = 0; i < rs.n; i++)
        if (!rs.r[i].ok) fail_msg("%s failed: %s", rs.r[i].name, rs.r[i].detail);
    assert_string_equal(find(&rs, "driver nvml")->detail, "nvml reports 535.183.01, the kernel module is 535.183.01");
    assert_true(find(&rs, "mount /lustre/my data")->ok);
    vg_check_results_free(&rs);
    sbuf_free(&text);

    /* the same fstab on a node where the shared file systems are not mounted,
     * and a kernel module of another version than the library */
    defaults(DEGRADED, &text);
    run(text.s, DEGRADED, 20000, &rs);
    const struct vg_check_result *r = find(&rs, "mount /scratch");
    assert_false(r->ok);
    assert_string_equal(r->detail, "/scratch is not mounted");
    assert_string_equal(r->ev[0].kind, "check-failed");
    assert_false(find(&rs, "mount /lustre/my data")->ok);
    assert_true(find(&rs, "mount /")->ok);
    r = find(&rs, "driver nvml");
    assert_false(r->ok);
    assert_string_equal(r->detail, "nvml reports 535.183.01, the kernel module is 535.161.08");
    vg_check_results_free(&rs);
    sbuf_free(&text);

    /* the library updated without a reboot; NVML that cannot start */
    write_state("driver=550.54.15\n");
    run("* || driver nvml=match\n", H100, 20000, &rs);
    assert_false(find(&rs, "driver nvml")->ok);
    assert_non_null(strstr(find(&rs, "driver nvml")->detail, "550.54.15, the kernel module is 535.183.01"));
    vg_check_results_free(&rs);
    write_state("init=fail\n");
    defaults(H100, &text);
    assert_true(has_line(text.s, "* || driver nvml=match"));   /* the module is loaded: checked */
    run(text.s, H100, 20000, &rs);
    assert_false(find(&rs, "driver nvml")->ok);
    assert_non_null(strstr(find(&rs, "driver nvml")->detail, "nvmlInit: Driver Not Loaded; kernel module 535.183.01"));
    vg_check_results_free(&rs);
    sbuf_free(&text);

    /* neither NVML nor a kernel module (nor an fstab): nothing of them to check */
    setenv("VIGIL_NVML_LIB", "/nonexistent/libnvidia-ml.so.1", 1);
    defaults("tests/fixtures/roots/debian12-kernel", &text);
    assert_null(text.s ? strstr(text.s, "driver") : NULL);
    assert_null(text.s ? strstr(text.s, "mount") : NULL);
    sbuf_free(&text);
    setup(NULL);
    /* a bare `driver`: a driver is loaded */
    write_state("gpus=8\n");
    run("* || driver\n", H100, 20000, &rs);
    assert_true(find(&rs, "driver version")->ok);
    vg_check_results_free(&rs);
    run("* || driver\n", "tests/fixtures/roots/debian12-kernel", 20000, &rs);
    assert_string_equal(find(&rs, "driver")->detail, "no NVIDIA driver loaded (/sys/module/nvidia/version)");
    vg_check_results_free(&rs);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_lines),   cmocka_unit_test(test_parse_errors),
        cmocka_unit_test(test_hostmask),      cmocka_unit_test(test_run_healthy),
        cmocka_unit_test(test_run_degraded),  cmocka_unit_test(test_run_nvml_hangs),
        cmocka_unit_test(test_init_round_trip), cmocka_unit_test(test_defaults),
        cmocka_unit_test(test_fabric),
    };
    return cmocka_run_group_tests_name("checkconf", tests, setup, teardown);
}
