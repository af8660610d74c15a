/* test_security.c — `vigil audit --security` checks on the fixture roots of a
 * well-configured and a badly configured cluster (tests/fixtures/security/:
 * each check's verdict on both), an empty root (every check "could not
 * check", none crashes or passes silently), the network check against a
 * listener on 127.0.0.1 only, the config parser, and the Slurm config parsers
 * on real `scontrol show config` output. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include "security/security.h"
#include "util/rootfs.h"
#include "util/spawn.h"

#define FIX "tests/fixtures/security"

static int setup(void **state)
{
    (void)state;
    return system("sh " FIX "/setup.sh") == 0 ? 0 : -1;
}

static struct vg_sec_config load_conf(const char *path)
{
    char *text, err[256];
    struct vg_sec_config c;
    assert_int_equal(vg_read_file(NULL, path, 1 << 20, &text, NULL), 0);
    assert_int_equal(vg_sec_config_parse(text, path, &c, err, sizeof err), 0);
    free(text);
    return c;
}

static void run_root(struct vg_sec_ctx *c, const char *root, const struct vg_sec_config *conf)
{
    vg_sec_init(c, root, conf);
    assert_false(c->live_slurm);   /* a fixture root never asks a live cluster */
    vg_sec_run(c, NULL);
}

static const struct {
    const char *id;
    enum vg_sec_status good, bad;
} expect[] = {
    { "slurm.private-data", VG_SEC_PASS, VG_SEC_FAIL },
    { "slurm.conf-perms", VG_SEC_PASS, VG_SEC_FAIL },
    { "slurm.dbd-perms", VG_SEC_PASS, VG_SEC_FAIL },
    { "slurm.munge-key", VG_SEC_PASS, VG_SEC_FAIL },
    { "slurm.jwt-key", VG_SEC_PASS, VG_SEC_FAIL },
    { "slurm.health-check", VG_SEC_PASS, VG_SEC_FAIL },
    { "slurm.job-requeue", VG_SEC_PASS, VG_SEC_FAIL },
    { "slurm.return-to-service", VG_SEC_PASS, VG_SEC_WARN },
    { "slurm.prolog-epilog", VG_SEC_PASS, VG_SEC_WARN },
    { "slurm.task-cgroup", VG_SEC_PASS, VG_SEC_FAIL },
    { "slurm.constrain-devices", VG_SEC_PASS, VG_SEC_FAIL },
    { "slurm.cred-expire", VG_SEC_PASS, VG_SEC_WARN },
    { "slurm.sched-interval", VG_SEC_PASS, VG_SEC_WARN },
    { "slurm.node-timeouts", VG_SEC_PASS, VG_SEC_WARN },
    { "ib.pkeys", VG_SEC_PASS, VG_SEC_FAIL },
    { "ib.mkey", VG_SEC_PASS, VG_SEC_FAIL },
    { "ib.link-layer", VG_SEC_PASS, VG_SEC_WARN },
    { "node.dmesg-restrict", VG_SEC_PASS, VG_SEC_FAIL },
    { "node.kptr-restrict", VG_SEC_PASS, VG_SEC_FAIL },
    { "node.dev-nvidia", VG_SEC_PASS, VG_SEC_WARN },
    { "node.shared-dirs", VG_SEC_PASS, VG_SEC_FAIL },
    { "node.docker-sock", VG_SEC_PASS, VG_SEC_FAIL },
    { "node.container-toolkit", VG_SEC_PASS, VG_SEC_FAIL },
    { "node.ssh-root-login", VG_SEC_PASS, VG_SEC_FAIL },
    { "node.ssh-password-auth", VG_SEC_PASS, VG_SEC_FAIL },
    { "storage.nfs-exports", VG_SEC_PASS, VG_SEC_FAIL },
    { "storage.mount-options", VG_SEC_PASS, VG_SEC_WARN },
    { "storage.tenant-separation", VG_SEC_PASS, VG_SEC_FAIL },
    { "device.iommu", VG_SEC_PASS, VG_SEC_WARN },
    { "device.rshim", VG_SEC_PASS, VG_SEC_FAIL },
    { "nvlink.imex", VG_SEC_PASS, VG_SEC_FAIL },
};

static void check_all(bool good)
{
    const char *root = good ? FIX "/good" : FIX "/bad";
    char cpath[256];
    snprintf(cpath, sizeof cpath, "%s/etc/vigil/security.conf", root);
    struct vg_sec_config conf = load_conf(cpath);
    struct vg_sec_ctx c;
    run_root(&c, root, &conf);
    for (size_t i = 0; i < sizeof expect / sizeof expect[0]; i++) {
        const struct vg_sec_result *r = vg_sec_find(&c, expect[i].id);
        assert_non_null(r);
        enum vg_sec_status want = good ? expect[i].good : expect[i].bad;
        if (r->status != want)
            fail_msg("%s on %s: got %s (%s), expected %s", expect[i].id, root, vg_sec_status_name(r->status), r->finding,
                     vg_sec_status_name(want));
        assert_true(*r->finding && *r->evidence);
        assert_true(want == VG_SEC_PASS ? *r->fix == 0 : *r->fix != 0);
    }
    /* one result per check (no target configured: the network check is
     * unknown; no live slurmctld under --root: the RPC-loop check too) */
    assert_int_equal(c.nresults, sizeof expect / sizeof expect[0] + 2);
    assert_int_equal(vg_sec_find(&c, "net.mgmt-reachable")->status, VG_SEC_UNKNOWN);
    assert_int_equal(vg_sec_find(&c, "slurm.rpc-loops")->status, VG_SEC_UNKNOWN);
    assert_int_equal(vg_sec_failures(&c, VG_SEV_LOW) == 0, good);
    vg_sec_free(&c);
    vg_sec_config_free(&conf);
}

static void test_good_root(void **state) { (void)state; check_all(true); }
static void test_bad_root(void **state) { (void)state; check_all(false); }

static void test_evidence(void **state)
{
    (void)state;
    struct vg_sec_ctx c;
    run_root(&c, FIX "/bad", NULL);
    assert_string_equal(vg_sec_find(&c, "slurm.munge-key")->evidence, "/etc/munge/munge.key: 0644 munge:munge");
    assert_string_equal(vg_sec_find(&c, "slurm.private-data")->evidence, "/etc/slurm/slurm.conf: PrivateData=(unset)");
    assert_non_null(strstr(vg_sec_find(&c, "slurm.cred-expire")->finding, "held 121 s"));
    assert_non_null(strstr(vg_sec_find(&c, "slurm.sched-interval")->finding, "up to 151 s"));
    assert_non_null(strstr(vg_sec_find(&c, "slurm.node-timeouts")->finding, "310 s"));
    assert_non_null(strstr(vg_sec_find(&c, "ib.pkeys")->evidence, "mlx5_0/1 pkeys=0xffff"));
    const struct vg_sec_result *ex = vg_sec_find(&c, "storage.nfs-exports");
    assert_non_null(strstr(ex->finding, "/export/home to * with no_root_squash"));
    assert_non_null(strstr(ex->finding, "read-write to every host"));
    assert_non_null(strstr(vg_sec_find(&c, "storage.mount-options")->finding, "/home trusts the client's user ids (NFS sec=sys)"));
    assert_string_equal(vg_sec_find(&c, "storage.tenant-separation")->evidence,
                        "/home 0755, /home/alice 0755; /scratch 0777, /scratch/alice 0755");
    vg_sec_free(&c);
    vg_sec_init(&c, FIX "/good", NULL);
    vg_sec_run(&c, "slurm");
    assert_int_equal(c.nresults, 15);
    assert_non_null(strstr(vg_sec_find(&c, "slurm.sched-interval")->finding, "about 12 s"));
    vg_sec_free(&c);
}

/* Writes text to root/rel (directories made), with mode. */
static void put(const char *root, const char *rel, const char *text, mode_t mode)
{
    char p[512];
    snprintf(p, sizeof p, "%s%s", root, rel);
    for (char *s = strchr(p + strlen(root) + 1, '/'); s; s = strchr(s + 1, '/')) {
        *s = 0;
        mkdir(p, 0755);
        *s = '/';
    }
    FILE *f = fopen(p, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
    assert_int_equal(chmod(p, mode), 0);
}

/* The IMEX check on roots built here: the nodes file config.cfg names, one
 * writable by others, channels open to all or not, no IMEX at all. */
static void test_imex(void **state)
{
    (void)state;
    char dir[] = "/tmp/vigil-sec-imex.XXXXXX";
    assert_non_null(mkdtemp(dir));
    struct vg_sec_ctx c;
    const struct vg_sec_result *r;
    char devdir[64];
    snprintf(devdir, sizeof devdir, "%s/dev", dir);
    assert_int_equal(mkdir(devdir, 0755), 0);
    vg_sec_init(&c, dir, NULL);
    vg_sec_run(&c, "nvlink");
    r = vg_sec_find(&c, "nvlink.imex");
    assert_int_equal(r->status, VG_SEC_PASS);   /* /dev readable, no IMEX: nothing to join */
    assert_non_null(strstr(r->finding, "no IMEX domain"));
    vg_sec_free(&c);
    put(dir, "/etc/nvidia-imex/config.cfg", "# site\nIMEX_NODE_CONFIG_FILE=/shared/imex/nodes.cfg\n", 0644);
    put(dir, "/shared/imex/nodes.cfg", "10.0.0.1\n# spare\n10.0.0.2\n10.0.0.3\n", 0664);
    put(dir, "/dev/nvidia-caps-imex-channels/channel1", "", 0660);
    vg_sec_init(&c, dir, NULL);
    vg_sec_run(&c, "nvlink");
    r = vg_sec_find(&c, "nvlink.imex");
    assert_int_equal(r->status, VG_SEC_FAIL);    /* group-writable nodes file at the configured path */
    assert_non_null(strstr(r->evidence, "/shared/imex/nodes.cfg: 3 nodes (0664"));
    assert_non_null(strstr(r->finding, "change which nodes the IMEX domain spans"));
    vg_sec_free(&c);
    put(dir, "/shared/imex/nodes.cfg", "10.0.0.1\n", 0644);
    vg_sec_init(&c, dir, NULL);
    vg_sec_run(&c, "nvlink");
    r = vg_sec_find(&c, "nvlink.imex");
    assert_int_equal(r->status, VG_SEC_PASS);    /* channel1 0660: its group decides, not everyone */
    assert_non_null(strstr(r->evidence, "channel1 0660"));
    vg_sec_free(&c);
    put(dir, "/dev/nvidia-caps-imex-channels/channel0", "", 0666);
    vg_sec_init(&c, dir, NULL);
    vg_sec_run(&c, "nvlink");
    r = vg_sec_find(&c, "nvlink.imex");
    assert_int_equal(r->status, VG_SEC_FAIL);
    assert_non_null(strstr(r->finding, "channel0 is open to every user (0666"));
    assert_null(strstr(r->finding, "channel1"));
    vg_sec_free(&c);
    const char *const rm[] = { "rm", "-rf", dir, NULL };
    struct vg_spawn_result sr;
    assert_int_equal(vg_spawn(rm, NULL, NULL, 10000, &sr), 0);
    assert_int_equal(sr.status, 0);
    vg_spawn_result_free(&sr);
}

static void test_empty_root(void **state)
{
    (void)state;
    char dir[] = "/tmp/vigil-sec-empty.XXXXXX";
    assert_non_null(mkdtemp(dir));
    struct vg_sec_ctx c;
    run_root(&c, dir, NULL);
    for (size_t i = 0; i < c.nresults; i++) {
        const struct vg_sec_result *r = &c.results[i];
        if (!strcmp(r->id, "node.docker-sock") || !strcmp(r->id, "storage.nfs-exports"))
            assert_int_equal(r->status, VG_SEC_PASS);   /* absent socket; no export table: nothing exported */
        else if (!strcmp(r->id, "device.rshim")) assert_int_equal(r->status, VG_SEC_UNKNOWN);   /* no /dev at all */
        else if (r->status != VG_SEC_UNKNOWN) fail_msg("%s: %s on an empty root", r->id, vg_sec_status_name(r->status));
        assert_true(*r->evidence);
    }
    vg_sec_free(&c);
    rmdir(dir);
}

static int listener(int *port)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    socklen_t l = sizeof a;
    assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof a), 0);
    assert_int_equal(listen(fd, 4), 0);
    assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &l), 0);
    *port = ntohs(a.sin_port);
    return fd;
}

static void test_network(void **state)
{
    (void)state;
    int port, fd = listener(&port);
    char text[256], err[256];
    snprintf(text, sizeof text, "target bmc-n1 127.0.0.1 %d\ntimeout-ms 300\n", port);
    struct vg_sec_config conf;
    assert_int_equal(vg_sec_config_parse(text, "t.conf", &conf, err, sizeof err), 0);
    struct vg_sec_ctx c;
    vg_sec_init(&c, FIX "/good", &conf);
    vg_sec_run(&c, "network");
    assert_int_equal(c.nresults, 1);
    assert_int_equal(c.results[0].status, VG_SEC_FAIL);
    assert_non_null(strstr(c.results[0].evidence, "connected"));
    vg_sec_free(&c);
    close(fd);   /* now refused */
    vg_sec_init(&c, FIX "/good", &conf);
    vg_sec_run(&c, "network");
    assert_int_equal(c.results[0].status, VG_SEC_PASS);
    assert_non_null(strstr(c.results[0].evidence, "refused"));
    vg_sec_free(&c);
    vg_sec_config_free(&conf);
}

static void test_config_errors(void **state)
{
    (void)state;
    static const struct {
        const char *text, *err;
    } bad[] = {
        { "target bmc 127.0.0.1\n", "x.conf:1: target: expected" },
        { "# c\ntarget bmc 127.0.0.1 99999\n", "x.conf:2: target bmc: port '99999'" },
        { "shared relative\n", "x.conf:1: shared" },
        { "\n\nfrobnicate 1\n", "x.conf:3: unknown directive 'frobnicate'" },
        { "timeout-ms 5000\n", "x.conf:1: timeout-ms" },
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        struct vg_sec_config c;
        char err[256];
        assert_int_equal(vg_sec_config_parse(bad[i].text, "x.conf", &c, err, sizeof err), -1);
        if (strncmp(err, bad[i].err, strlen(bad[i].err))) fail_msg("got '%s', expected '%s…'", err, bad[i].err);
    }
    struct vg_sec_config c;
    char err[256];
    assert_int_equal(vg_sec_config_parse("shared /home # comment\nslurm-conf /x/slurm.conf\n", "x", &c, err, sizeof err), 0);
    assert_int_equal(c.nshared, 1);
    assert_string_equal(c.slurm_conf, "/x/slurm.conf");
    vg_sec_config_free(&c);
}

static void test_show_config(void **state)
{
    (void)state;
    char *text;
    assert_int_equal(vg_read_file(NULL, FIX "/show-config.txt", 1 << 20, &text, NULL), 0);
    struct vg_slurm_kv *kv;
    size_t n;
    assert_int_equal(vg_slurm_parse_config(text, &kv, &n), 0);
    assert_string_equal(vg_slurm_kv_get(kv, n, "PrivateData"), "jobs,usage");
    assert_string_equal(vg_slurm_kv_get(kv, n, "prolog"), "");            /* (null) */
    assert_string_equal(vg_slurm_kv_get(kv, n, "SlurmdTimeout"), "10 sec");
    assert_string_equal(vg_slurm_kv_get(kv, n, "SLURM_CONF"), "/tmp/vigil-lab/etc/slurm.conf");
    char buf[32];
    assert_true(vg_slurm_param(vg_slurm_kv_get(kv, n, "AuthInfo"), "cred_expire", buf, sizeof buf));
    assert_string_equal(buf, "5");
    assert_false(vg_slurm_param("bf_interval=1", "sched_interval", buf, sizeof buf));
    /* the checks on show-config output: PrivateData without users fails, timings pass */
    struct vg_sec_ctx c;
    vg_sec_init(&c, FIX "/good", NULL);
    c.slurm_loaded = true, c.slurm = kv, c.nslurm = n;
    snprintf(c.slurm_source, sizeof c.slurm_source, "scontrol show config");
    vg_sec_run(&c, "slurm");
    assert_int_equal(vg_sec_find(&c, "slurm.private-data")->status, VG_SEC_FAIL);
    assert_non_null(strstr(vg_sec_find(&c, "slurm.private-data")->finding, "lacks users"));
    assert_int_equal(vg_sec_find(&c, "slurm.cred-expire")->status, VG_SEC_PASS);
    assert_int_equal(vg_sec_find(&c, "slurm.health-check")->status, VG_SEC_FAIL);
    assert_int_equal(vg_sec_find(&c, "slurm.task-cgroup")->status, VG_SEC_FAIL);
    vg_sec_free(&c);
    free(text);
    assert_int_equal(vg_slurm_parse_config("no separators here\n", &kv, &n), -1);
    /* slurm.conf: comments stripped, NodeName lines skipped, the last value wins */
    assert_int_equal(vg_slurm_parse_conf_file("A=1 # x\nNodeName=n1 CPUs=2\na=2\n#B=3\n", &kv, &n), 0);
    assert_int_equal(n, 1);
    assert_string_equal(vg_slurm_kv_get(kv, n, "A"), "2");
    vg_slurm_kv_free(kv, n);
}

/* sdiag as Slurm 22.05 printed it on the lab: root only, and a user calling
 * squeue and sbatch in a loop (tests/fixtures/slurm/sdiag-22.05-lab-*.txt). */
static void test_rpc_loops(void **state)
{
    (void)state;
    static const struct vg_sec_check k = { "slurm.rpc-loops", "loops", VG_SEV_MEDIUM, "arrays", NULL };
    const char *files[] = { "tests/fixtures/slurm/sdiag-22.05-lab-root.txt", "tests/fixtures/slurm/sdiag-22.05-lab-loop.txt" };
    enum vg_sec_status want[] = { VG_SEC_PASS, VG_SEC_WARN };
    for (int i = 0; i < 2; i++) {
        char *text;
        assert_int_equal(vg_read_file(NULL, files[i], 1 << 20, &text, NULL), 0);
        struct vg_sdiag d;
        assert_int_equal(vg_slurm_parse_sdiag(text, &d), 0);
        free(text);
        struct vg_sec_ctx c;
        vg_sec_init(&c, FIX "/good", NULL);
        vg_sec_rpc_loops(&c, &k, &d, "slurm");
        assert_int_equal(c.nresults, 1);
        assert_int_equal(c.results[0].status, want[i]);
        if (i == 1) assert_non_null(strstr(c.results[0].finding, "nobody (252/min)"));
        vg_sec_free(&c);
    }
    struct vg_sdiag d;
    assert_int_equal(vg_slurm_parse_sdiag("not sdiag\n", &d), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_good_root),   cmocka_unit_test(test_bad_root),      cmocka_unit_test(test_evidence),
        cmocka_unit_test(test_empty_root),  cmocka_unit_test(test_imex),  cmocka_unit_test(test_network),       cmocka_unit_test(test_config_errors),
        cmocka_unit_test(test_show_config), cmocka_unit_test(test_rpc_loops),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
