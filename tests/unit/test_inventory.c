/* test_inventory.c — unit tests for the inventory and each collector, on the
 * fixture roots in tests/fixtures/roots (and an rpm database built at test
 * time for rhel9-rpm). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "inventory/inventory.h"
#include "util/rootfs.h"
#include "util/spawn.h"
#include "util/strutil.h"

#define ROOTS "tests/fixtures/roots/"

static int count(struct vg_inventory *inv, const char *name)
{
    int n = 0;
    for (size_t i = 0; i < inv->n; i++) n += !strcmp(inv->items[i].name, name);
    return n;
}

/* Asserts the first component `name` has this version and source. */
static const struct vg_component *expect(struct vg_inventory *inv, const char *name, const char *version,
                                         const char *source)
{
    const struct vg_component *c = vg_inventory_find(inv, name);
    if (!c) fail_msg("component %s not found", name);
    assert_string_equal(c->version, version);
    assert_string_equal(c->source, source);
    return c;
}

static void collect(struct vg_inventory *inv, const char *root)
{
    vg_inventory_init(inv, root);
    assert_int_equal(vg_inventory_collect(inv), 0);
}

static void test_helpers(void **state)
{
    (void)state;
    char v[32];
    assert_true(vg_scan_version("NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.129.03  Thu", v, sizeof v));
    assert_string_equal(v, "535.129.03");
    assert_true(vg_scan_version("CUDA Version 11.8.89", v, sizeof v));
    assert_string_equal(v, "11.8.89");
    assert_false(vg_scan_version("x86_64 no version 42", v, sizeof v));
    assert_true(vg_scan_version("abc2.5 then 3.4", v, sizeof v)); /* "abc2.5" is a word, not a version */
    assert_string_equal(v, "3.4");
    long vals[3];
    static const char *const names[] = { "NCCL_MAJOR", "NCCL_MINOR", "NCCL_PATCH" };
    assert_int_equal(vg_header_defines(ROOTS "multi-cuda", "/usr/include/nccl.h", names, vals, 3), 3);
    assert_int_equal(vals[1], 21);
    assert_int_equal(vg_header_defines(ROOTS "multi-cuda", "/nope.h", names, vals, 3), 0);
    char path[256];
    assert_true(vg_find_lib_version(ROOTS "ubuntu2204-h100-run535", "libcuda.so.", v, sizeof v, path, sizeof path));
    assert_string_equal(v, "535.129.03");
    assert_string_equal(path, "/usr/lib/x86_64-linux-gnu/libcuda.so.535.129.03");
    assert_false(vg_find_lib_version(ROOTS "multi-cuda", "libcuda.so.", v, sizeof v, path, sizeof path));
}

static void test_ubuntu_run535(void **state)
{
    (void)state;
    struct vg_inventory inv;
    collect(&inv, ROOTS "ubuntu2204-h100-run535");
    assert_string_equal(inv.hostname, "gpu-h100-017");
    assert_string_equal(inv.os_id, "ubuntu");
    assert_string_equal(inv.os_pretty, "Ubuntu 22.04.3 LTS");
    expect(&inv, "os", "22.04", "/etc/os-release");
    const struct vg_component *c = expect(&inv, "linux-kernel", "5.15.0-88-generic", "/proc/sys/kernel/osrelease");
    assert_string_equal(c->upstream, "5.15.0-88");
    /* .run install: found from /proc, no package */
    c = expect(&inv, "nvidia-driver", "535.129.03", "/proc/driver/nvidia/version");
    assert_int_equal(c->eco, VG_ECO_NVIDIA);
    assert_string_equal(c->package, "");
    assert_string_equal(c->detail, "proprietary kernel module");
    c = expect(&inv, "cuda-toolkit", "12.2.2", "file:/usr/local/cuda-12.2/version.json");
    assert_string_equal(c->detail, "/usr/local/cuda-12.2");
    assert_int_equal(count(&inv, "cuda-toolkit"), 1); /* the cuda symlink is not a second toolkit */
    c = expect(&inv, "cuda-driver", "12.2", "/proc/driver/nvidia/version");
    c = expect(&inv, "nccl", "2.18.5-1+cuda12.2", "dpkg:/var/lib/dpkg/status");
    assert_string_equal(c->upstream, "2.18.5");
    assert_string_equal(c->package, "libnccl2");
    assert_int_equal(c->eco, VG_ECO_DPKG);
    c = expect(&inv, "nvidia-container-toolkit", "1.14.3-1", "dpkg:/var/lib/dpkg/status");
    assert_string_equal(c->upstream, "1.14.3");
    expect(&inv, "libnvidia-container", "1.14.3-1", "dpkg:/var/lib/dpkg/status");
    c = expect(&inv, "runc", "1.1.7-0ubuntu1~22.04.1", "dpkg:/var/lib/dpkg/status");
    assert_string_equal(c->upstream, "1.1.7");
    expect(&inv, "containerd", "1.7.2-0ubuntu1~22.04.1", "dpkg:/var/lib/dpkg/status");
    c = expect(&inv, "docker", "24.0.5-0ubuntu1~22.04.1", "dpkg:/var/lib/dpkg/status");
    assert_string_equal(c->package, "docker.io");
    c = expect(&inv, "dcgm", "1:3.2.6", "dpkg:/var/lib/dpkg/status");
    assert_string_equal(c->upstream, "3.2.6");
    c = expect(&inv, "fabricmanager", "535.129.03-1", "dpkg:/var/lib/dpkg/status");
    assert_string_equal(c->package, "nvidia-fabricmanager-535");
    c = expect(&inv, "slurm", "22.05.9-1", "dpkg:/var/lib/dpkg/status");
    assert_string_equal(c->package, "slurmd");
    c = expect(&inv, "munge", "0.5.14-6", "dpkg:/var/lib/dpkg/status");
    assert_string_equal(c->package, "munge");
    expect(&inv, "pmix", "4.1.2-2ubuntu1", "dpkg:/var/lib/dpkg/status");
    expect(&inv, "enroot", "3.4.1-1", "dpkg:/var/lib/dpkg/status");
    expect(&inv, "mlnx-ofed", "23.10-1.1.9.0", "file:/usr/bin/ofed_info");
    expect(&inv, "rdma-core", "2307mlnx47-1.2310119", "dpkg:/var/lib/dpkg/status");
    /* two ConnectX-7 ports with one firmware → one component; the BlueField-3 apart */
    assert_int_equal(count(&inv, "connectx-firmware"), 1);
    c = expect(&inv, "connectx-firmware", "28.41.1000", "/sys/class/infiniband/mlx5_0/fw_ver");
    assert_string_equal(c->package, "MT_0000000838");
    assert_string_equal(c->detail, "ConnectX-7 board MT_0000000838 (mlx5_0,mlx5_1)");
    assert_string_equal(c->model, "ConnectX-7");   /* the bulletins' per-model rows match on it */
    c = expect(&inv, "bluefield-firmware", "32.38.3056", "/sys/class/infiniband/mlx5_bond_0/fw_ver");
    assert_string_equal(c->detail, "BlueField-3 board MT_0000000884 (mlx5_bond_0)");
    assert_string_equal(c->model, "BlueField-3");
    c = expect(&inv, "openssh", "1:8.9p1-3ubuntu0.4", "dpkg:/var/lib/dpkg/status");
    assert_string_equal(c->upstream, "8.9p1");
    expect(&inv, "sudo", "1.9.9-1ubuntu2.4", "dpkg:/var/lib/dpkg/status");
    expect(&inv, "glibc", "2.35-0ubuntu3.4", "dpkg:/var/lib/dpkg/status");
    c = expect(&inv, "polkit", "0.105-33", "dpkg:/var/lib/dpkg/status");
    assert_string_equal(c->package, "policykit-1");
    /* absent things stay absent */
    assert_null(vg_inventory_find(&inv, "cudnn"));
    assert_null(vg_inventory_find(&inv, "pyxis"));
    assert_null(vg_inventory_find(&inv, "doca-ofed"));
    assert_int_equal(inv.n, 25);
    vg_inventory_free(&inv);
}

static void test_clean_current(void **state)
{
    (void)state;
    struct vg_inventory inv;
    collect(&inv, ROOTS "clean-current");
    const struct vg_component *c = expect(&inv, "nvidia-driver", "580.159.03", "/proc/driver/nvidia/version");
    assert_string_equal(c->detail, "open kernel module");
    expect(&inv, "cuda-driver", "13.0", "/proc/driver/nvidia/version");
    expect(&inv, "cuda-toolkit", "13.1.0", "file:/usr/local/cuda-13.1/version.json");
    c = expect(&inv, "dcgm", "1:4.5.3-1", "dpkg:/var/lib/dpkg/status");
    assert_string_equal(c->package, "datacenter-gpu-manager-4-core");
    c = expect(&inv, "containerd", "2.3.4-1", "dpkg:/var/lib/dpkg/status");
    assert_string_equal(c->package, "containerd.io");
    c = expect(&inv, "docker", "5:29.9.0-1~ubuntu.24.04~noble", "dpkg:/var/lib/dpkg/status");
    assert_string_equal(c->upstream, "29.9.0");
    expect(&inv, "pyxis", "0.24.0-1", "dpkg:/var/lib/dpkg/status");
    c = expect(&inv, "polkit", "124-2ubuntu1.24.04.2", "dpkg:/var/lib/dpkg/status");
    assert_string_equal(c->package, "polkitd");
    expect(&inv, "connectx-firmware", "28.46.3008", "/sys/class/infiniband/mlx5_0/fw_ver");
    vg_inventory_free(&inv);
}

static void test_multi_cuda(void **state)
{
    (void)state;
    struct vg_inventory inv;
    collect(&inv, ROOTS "multi-cuda");
    assert_string_equal(inv.pkgdb_source, "");
    expect(&inv, "os", "9.4", "/etc/os-release");
    assert_string_equal(inv.os_id, "rocky");
    assert_null(vg_inventory_find(&inv, "linux-kernel"));
    expect(&inv, "nvidia-driver", "550.54.15", "/sys/module/nvidia/version");
    expect(&inv, "cuda-driver", "12.4", "/sys/module/nvidia/version");
    assert_int_equal(count(&inv, "cuda-toolkit"), 3);
    const char *want[][3] = {
        { "11.8.89", "11.8", "file:/usr/local/cuda-11.8/version.txt" },
        { "12.2.2", "12.2.2", "file:/usr/local/cuda-12.2/version.json" },
        { "12.4.1", "12.4.1", "file:/usr/local/cuda-12.4/version.json" },
    };
    int k = 0;
    for (size_t i = 0; i < inv.n; i++) {
        if (strcmp(inv.items[i].name, "cuda-toolkit")) continue;
        assert_string_equal(inv.items[i].version, want[k][0]);
        assert_string_equal(inv.items[i].upstream, want[k][1]);
        assert_string_equal(inv.items[i].source, want[k][2]);
        k++;
    }
    expect(&inv, "nccl", "2.21.5", "file:/usr/include/nccl.h");
    expect(&inv, "cudnn", "9.1.0", "file:/usr/include/cudnn_version.h");
    vg_inventory_free(&inv);
}

/* CUDA 13.0 and NCCL 2.28 under /usr/local/cuda-13.0 with no version.json:
 * nvcc's banner (read from bin/nvcc), the tree's nccl.h, a pip wheel's
 * METADATA; without bin/nvcc, cuda.h's CUDA_VERSION; without either (nor
 * nccl.h), the wheels the tree was installed from (its dist-info). */
static void test_cuda13_noversion(void **state)
{
    (void)state;
    struct vg_inventory inv;
    collect(&inv, ROOTS "cuda13-noversion");
    const struct vg_component *c = expect(&inv, "cuda-toolkit", "13.0", "file:/usr/local/cuda-13.0/bin/nvcc");
    assert_string_equal(c->upstream, "13.0");
    assert_string_equal(c->detail, "/usr/local/cuda-13.0");
    assert_non_null(strstr(c->upstream_why, "not its update"));
    assert_int_equal(count(&inv, "cuda-toolkit"), 1); /* the cuda symlink is not a second toolkit */
    assert_int_equal(count(&inv, "nccl"), 2);
    c = expect(&inv, "nccl", "2.28.9", "file:/usr/local/cuda-13.0/include/nccl.h");
    assert_string_equal(c->detail, "/usr/local/cuda-13.0");
    c = &inv.items[c - inv.items + 1];
    assert_string_equal(c->name, "nccl");
    assert_string_equal(c->version, "2.18.1");
    assert_string_equal(c->source, "file:/usr/local/lib/python3.11/dist-packages/nvidia_nccl_cu12-2.18.1.dist-info/METADATA");
    assert_string_equal(c->detail, "pip nvidia-nccl-cu12");
    vg_inventory_free(&inv);

    /* the same tree without nvcc: cuda.h decides */
    char tmp[] = "/tmp/vigil-cuda13-XXXXXX";
    assert_non_null(mkdtemp(tmp));
    char cmd[512];
    snprintf(cmd, sizeof cmd, "cp -a %scuda13-noversion/. %s/ && rm %s/usr/local/cuda-13.0/bin/nvcc", ROOTS, tmp, tmp);
    assert_int_equal(system(cmd), 0);
    collect(&inv, tmp);
    c = expect(&inv, "cuda-toolkit", "13.0", "file:/usr/local/cuda-13.0/include/cuda.h");
    assert_non_null(strstr(c->upstream_why, "CUDA_VERSION"));
    assert_int_equal(count(&inv, "nccl"), 2);   /* the tree's wheel is the tree's nccl.h: not a third */
    vg_inventory_free(&inv);
    snprintf(cmd, sizeof cmd, "rm %s/usr/local/cuda-13.0/include/cuda.h %s/usr/local/cuda-13.0/include/nccl.h", tmp, tmp);
    assert_int_equal(system(cmd), 0);
    collect(&inv, tmp);
    c = expect(&inv, "cuda-toolkit", "13.0.88",
               "file:/usr/local/cuda-13.0/dist-info/nvidia_cuda_nvcc-13.0.88.dist-info/METADATA");
    assert_string_equal(c->upstream, "13.0");
    assert_string_equal(c->detail, "/usr/local/cuda-13.0");
    c = expect(&inv, "nccl", "2.28.9", "file:/usr/local/cuda-13.0/dist-info/nvidia_nccl_cu13-2.28.9.dist-info/METADATA");
    assert_string_equal(c->detail, "/usr/local/cuda-13.0");
    vg_inventory_free(&inv);
    snprintf(cmd, sizeof cmd, "rm -rf %s", tmp);
    assert_int_equal(system(cmd), 0);
}

static void test_version_text(void **state)
{
    (void)state;
    char rel[32], build[32], name[64], ver[32];
    static const char banner[] = "nvcc: NVIDIA (R) Cuda compiler driver\nCopyright (c) 2005-2025 NVIDIA Corporation\n"
                                 "Built on Wed_Aug_20_01:58:59_PM_PDT_2025\nCuda compilation tools, release 13.0, V13.0.88\n"
                                 "Build cuda_13.0.r13.0/compiler.36424714_0\n";
    assert_true(vg_nvcc_banner(banner, strlen(banner), rel, sizeof rel, build, sizeof build));
    assert_string_equal(rel, "13.0");
    assert_string_equal(build, "13.0.88");
    assert_false(vg_nvcc_banner("Cuda compilation tools, release , V", 35, rel, sizeof rel, build, sizeof build));
    assert_false(vg_nvcc_banner("Cuda compilation tools, release 13", 34, rel, sizeof rel, build, sizeof build));
    static const char md[] = "Name: nvidia-nccl-cu12\r\nVersion: 2.18.1\r\n\r\nVersion: 9.9\n";
    assert_true(vg_wheel_metadata(md, strlen(md), name, sizeof name, ver, sizeof ver));
    assert_string_equal(name, "nvidia-nccl-cu12");
    assert_string_equal(ver, "2.18.1");
    assert_false(vg_wheel_metadata("Name: x\n\nVersion: 1.0\n", 20, name, sizeof name, ver, sizeof ver)); /* body */
    assert_false(vg_wheel_metadata("Name: x\nVersion: abc\n", 21, name, sizeof name, ver, sizeof ver));
    assert_true(vg_cuda_version_code(13000, ver, sizeof ver));
    assert_string_equal(ver, "13.0");
    assert_true(vg_cuda_version_code(12040, ver, sizeof ver));
    assert_string_equal(ver, "12.4");
    assert_false(vg_cuda_version_code(-5, ver, sizeof ver));

    /* a banner straddling vg_scan_file's 1 MiB pieces is still found */
    char path[] = "/tmp/vigil-nvcc-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    FILE *f = fdopen(fd, "w");
    for (long i = 0; i < (1L << 20) - 20; i++) fputc(i % 7 ? 0 : 'C', f);
    fputs(banner, f);
    fclose(f);
    char got[160];
    assert_int_equal(vg_scan_file(NULL, path, "Cuda compilation tools, release ", 64u << 20, got, sizeof got), 1);
    assert_true(vg_nvcc_banner(got, strlen(got), rel, sizeof rel, build, sizeof build));
    assert_string_equal(build, "13.0.88");
    assert_int_equal(vg_scan_file(NULL, path, "Cuda compilation tools, release ", 1 << 19, got, sizeof got), 0); /* past max */
    assert_int_equal(vg_scan_file(NULL, path, "no such text", 64u << 20, got, sizeof got), 0);
    unlink(path);
    assert_int_equal(vg_scan_file(NULL, path, "x", 100, got, sizeof got), -1);
}

/* Copies the rhel9-rpm fixture to a temporary root and builds its rpm
 * database with the real rpm tools. */
static void test_rhel9_rpm(void **state)
{
    (void)state;
    char tmpl[] = "/tmp/vg-rpm-XXXXXX";
    assert_non_null(mkdtemp(tmpl));
    const char *const cp[] = { "cp", "-r", ROOTS "rhel9-rpm/.", tmpl, NULL };
    struct vg_spawn_result r;
    assert_int_equal(vg_spawn(cp, NULL, NULL, 10000, &r), 0);
    assert_int_equal(r.status, 0);
    vg_spawn_result_free(&r);
    const char *const mk[] = { "sh", "tests/fixtures/make-rpmdb.sh", tmpl, "tests/fixtures/rhel9-rpm.packages", NULL };
    assert_int_equal(vg_spawn(mk, NULL, NULL, 120000, &r), 0);
    int st = r.status;
    vg_spawn_result_free(&r);
    if (st == 77) {
        const char *const rm[] = { "rm", "-rf", tmpl, NULL };
        vg_spawn(rm, NULL, NULL, 10000, &r);
        vg_spawn_result_free(&r);
        skip();
    }
    assert_int_equal(st, 0);
    struct vg_inventory inv;
    collect(&inv, tmpl);
    assert_string_equal(inv.pkgdb_source, "rpm:/var/lib/rpm");
    assert_int_equal(inv.npkgs, 16);
    const struct vg_component *c = expect(&inv, "runc", "4:1.1.12-4.el9", "rpm:/var/lib/rpm");
    assert_int_equal(c->eco, VG_ECO_RPM);
    assert_string_equal(c->upstream, "1.1.12");
    /* the driver comes from /proc; the package is noted */
    c = expect(&inv, "nvidia-driver", "550.90.07", "/proc/driver/nvidia/version");
    assert_string_equal(c->package, "kmod-nvidia-open-dkms");
    c = expect(&inv, "glibc", "2.34-100.el9_4.2", "rpm:/var/lib/rpm");
    assert_string_equal(c->upstream, "2.34");
    c = expect(&inv, "openssh", "8.7p1-43.el9", "rpm:/var/lib/rpm");
    assert_string_equal(c->package, "openssh-server");
    assert_string_equal(c->srcpkg, "openssh");   /* from its SOURCERPM */
    assert_string_equal(c->distro, "Red Hat:9");
    expect(&inv, "nccl", "2.21.5-1+cuda12.4", "rpm:/var/lib/rpm");
    expect(&inv, "fabricmanager", "550.90.07-1", "rpm:/var/lib/rpm");
    expect(&inv, "slurm", "23.11.7-1.el9", "rpm:/var/lib/rpm");
    expect(&inv, "pmix", "3.2.3-5.el9", "rpm:/var/lib/rpm");
    expect(&inv, "apptainer", "1.3.1-1.el9", "rpm:/var/lib/rpm");
    expect(&inv, "containerd", "1.6.28-3.1.el9", "rpm:/var/lib/rpm");
    /* the running kernel's package is not in this fixture: compared upstream, and why */
    c = expect(&inv, "linux-kernel", "5.14.0-427.13.1.el9_4.x86_64", "/proc/sys/kernel/osrelease");
    assert_non_null(strstr(c->upstream_why, "no installed kernel-core or kernel package"));
    vg_inventory_free(&inv);
    const char *const rm[] = { "rm", "-rf", tmpl, NULL };
    vg_spawn(rm, NULL, NULL, 10000, &r);
    vg_spawn_result_free(&r);
}

static void test_rpm_parse(void **state)
{
    (void)state;
    struct vg_inventory inv;
    vg_inventory_init(&inv, "/");
    char *out = vg_xstrdup("sudo\t0:1.9.5p2-10.el9_3\tx86_64\tsudo-1.9.5p2-10.el9_3.src.rpm\n"
                           "gpg-pubkey\t0:fd431d51-4ae0493b\t(none)\t(none)\n"
                           "garbage line\nrunc\t4:1.1.12-4.el9\tx86_64\n"
                           "openssh-server\t0:8.7p1-38.el9\tx86_64\topenssh-8.7p1-38.el9.src.rpm\n"
                           "odd\t0:1-1\tnoarch\tnodash.src.rpm\n");
    inv.bufs = vg_xmalloc(sizeof *inv.bufs);
    inv.bufs[inv.nbufs++] = out;
    assert_int_equal(vg_rpm_parse(&inv, out), 0);
    assert_int_equal(inv.npkgs, 4);
    assert_string_equal(vg_inventory_pkg(&inv, "sudo")->version, "1.9.5p2-10.el9_3");
    assert_string_equal(vg_inventory_pkg(&inv, "sudo")->src, "");   /* its own source */
    assert_string_equal(vg_inventory_pkg(&inv, "runc")->version, "4:1.1.12-4.el9");
    assert_string_equal(vg_inventory_pkg(&inv, "runc")->src, "");   /* no SOURCERPM column */
    assert_string_equal(vg_inventory_pkg(&inv, "openssh-server")->src, "openssh");
    assert_string_equal(vg_inventory_pkg(&inv, "odd")->src, "");    /* no version-release in the name */
    assert_null(vg_inventory_pkg(&inv, "gpg-pubkey"));
    vg_inventory_free(&inv);
}

extern const struct vg_collector vg_col_os, vg_col_kernel;

/* An inventory of root whose rpm database holds the `rpm -qa` lines qa
 * (the loader's format), with only the os and kernel collectors run. */
static void rpm_kernel_inv(struct vg_inventory *inv, const char *root, const char *qa)
{
    vg_inventory_init(inv, root);
    char *out = vg_xstrdup(qa);
    inv->bufs = vg_xmalloc(sizeof *inv->bufs);
    inv->bufs[inv->nbufs++] = out;
    assert_int_equal(vg_rpm_parse(inv, out), 0);
    vg_strlcpy(inv->pkgdb_source, "rpm:/var/lib/rpm", sizeof inv->pkgdb_source);
    vg_strlcpy(inv->rpm_db, "/var/lib/rpm", sizeof inv->rpm_db);
    assert_int_equal(vg_col_os.collect(inv), 0);
    assert_int_equal(vg_col_kernel.collect(inv), 0);
}

/* The running release of an rpm node (alma9-rpm: 5.14.0-427.13.1.el9_4.x86_64)
 * mapped to the installed kernel-core that carries it, among several kernels
 * and the kernel meta package; kernel when there is no kernel-core; none
 * installed: the release stays, compared upstream, and the component says why. */
static void test_rpm_kernel(void **state)
{
    (void)state;
    static const char el93[] = "kernel-core\t0:5.14.0-362.8.1.el9_3\tx86_64\tkernel-5.14.0-362.8.1.el9_3.src.rpm\n";
    static const char el94[] = "kernel-core\t0:5.14.0-427.13.1.el9_4\tx86_64\tkernel-5.14.0-427.13.1.el9_4.src.rpm\n"
                               "kernel\t0:5.14.0-427.13.1.el9_4\tx86_64\tkernel-5.14.0-427.13.1.el9_4.src.rpm\n";
    char qa[512];
    snprintf(qa, sizeof qa, "%s%s", el94, el93);
    struct vg_inventory inv;
    rpm_kernel_inv(&inv, ROOTS "alma9-rpm", qa);
    const struct vg_component *c = expect(&inv, "linux-kernel", "5.14.0-427.13.1.el9_4", "rpm:/var/lib/rpm");
    assert_string_equal(c->package, "kernel-core");
    assert_string_equal(c->srcpkg, "kernel");
    assert_string_equal(c->upstream, "5.14.0");
    assert_int_equal(c->eco, VG_ECO_RPM);
    assert_string_equal(c->detail, "running 5.14.0-427.13.1.el9_4.x86_64");
    assert_string_equal(c->upstream_why, "");
    assert_string_equal(inv.kernel, "5.14.0-427.13.1.el9_4.x86_64");
    vg_inventory_free(&inv);

    /* no kernel-core (RHEL 7 style): the kernel package itself */
    rpm_kernel_inv(&inv, ROOTS "alma9-rpm",
                   "kernel\t0:5.14.0-427.13.1.el9_4\tx86_64\tkernel-5.14.0-427.13.1.el9_4.src.rpm\n");
    c = expect(&inv, "linux-kernel", "5.14.0-427.13.1.el9_4", "rpm:/var/lib/rpm");
    assert_string_equal(c->package, "kernel");
    assert_string_equal(c->srcpkg, "kernel");
    vg_inventory_free(&inv);

    /* the running kernel's package removed (only 9.3's left), or another arch: upstream, with the reason */
    const char *const gone[] = { el93, "kernel-core\t0:5.14.0-427.13.1.el9_4\taarch64\tkernel-5.14.0-427.13.1.el9_4.src.rpm\n" };
    for (int i = 0; i < 2; i++) {
        rpm_kernel_inv(&inv, ROOTS "alma9-rpm", gone[i]);
        c = expect(&inv, "linux-kernel", "5.14.0-427.13.1.el9_4.x86_64", "/proc/sys/kernel/osrelease");
        assert_string_equal(c->package, "");
        assert_int_equal(c->eco, VG_ECO_GENERIC);
        assert_string_equal(c->upstream_why,
                            "no installed kernel-core or kernel package carries the running 5.14.0-427.13.1.el9_4.x86_64");
        assert_string_equal(c->detail, "its kernel-core package is not installed: compared upstream");
        vg_inventory_free(&inv);
    }

    /* no rpm database read: nothing to map, nothing to explain */
    vg_inventory_init(&inv, ROOTS "alma9-rpm");
    assert_int_equal(vg_col_os.collect(&inv), 0);
    assert_int_equal(vg_col_kernel.collect(&inv), 0);
    c = expect(&inv, "linux-kernel", "5.14.0-427.13.1.el9_4.x86_64", "/proc/sys/kernel/osrelease");
    assert_string_equal(c->upstream_why, "");
    vg_inventory_free(&inv);
}

/* The CMAX components a node root shows: the NVIDIA HPC SDK by release
 * directory (the 2024 bundle directory is no release), QEMU from the package
 * database with its source package, ROCm per /opt/rocm-X (the /opt/rocm link
 * not counted twice; an install without .info/version is "unknown") with the
 * node's Instinct part read from its PCI device ids, AMD's DKMS driver and
 * the GPUs' VBIOS (tests/fixtures/roots/cmax-node.SOURCES). */
static void test_cmax_node(void **state)
{
    (void)state;
    struct vg_inventory inv;
    collect(&inv, ROOTS "cmax-node");
    assert_int_equal(count(&inv, "nvhpc"), 1);
    const struct vg_component *c = expect(&inv, "nvhpc", "24.5", "dir:/opt/nvidia/hpc_sdk/Linux_x86_64/24.5");
    assert_non_null(strstr(c->detail, "release window unknown"));
    c = expect(&inv, "qemu", "1:8.2.2+ds-0ubuntu1", "dpkg:/var/lib/dpkg/status");
    assert_string_equal(c->package, "qemu-system-x86");
    assert_string_equal(c->srcpkg, "qemu");
    assert_string_equal(c->upstream, "8.2.2+ds");   /* the repack suffix stays (vg_version_upstream) */
    assert_string_equal(c->distro, "Ubuntu:24.04");
    assert_int_equal(count(&inv, "rocm"), 2);
    int seen = 0;
    for (size_t i = 0; i < inv.n; i++) {
        const struct vg_component *r = &inv.items[i];
        if (strcmp(r->name, "rocm")) continue;
        if (!strcmp(r->version, "6.1.2")) {
            assert_string_equal(r->source, "file:/opt/rocm-6.1.2/.info/version");
            assert_non_null(strstr(r->detail, "(6.1.2-119); 2 AMD Instinct MI300X"));
            assert_string_equal(r->model, "MI300X");
            seen |= 1;
        } else {
            assert_string_equal(r->version, "unknown");
            assert_non_null(strstr(r->detail, "/opt/rocm-5.7.1: .info/version unreadable"));
            assert_string_equal(r->model, "MI300X");
            seen |= 2;
        }
    }
    assert_int_equal(seen, 3);
    c = expect(&inv, "amdgpu-driver", "6.12.12", "file:/sys/module/amdgpu/version");
    assert_string_equal(c->detail, "AMD's DKMS module loaded");
    assert_int_equal(count(&inv, "amd-vbios"), 1);   /* one VBIOS on both GPUs: one component */
    c = expect(&inv, "amd-vbios", "113-M3000100-102", "file:/sys/bus/pci/devices/0000:0c:00.0/vbios_version");
    assert_string_equal(c->model, "MI300X");
    assert_string_equal(c->detail, "2 of 2 AMD Instinct GPUs (first 0000:0c:00.0)");
    vg_inventory_free(&inv);
    /* a root without them lists none */
    collect(&inv, ROOTS "clean-current");
    assert_int_equal(count(&inv, "nvhpc") + count(&inv, "qemu") + count(&inv, "rocm") + count(&inv, "amdgpu-driver") +
                         count(&inv, "amd-vbios"),
                     0);
    vg_inventory_free(&inv);
}

static void test_bad_root(void **state)
{
    (void)state;
    struct vg_inventory inv;
    vg_inventory_init(&inv, "/nonexistent/root");
    assert_int_equal(vg_inventory_collect(&inv), -1);
    vg_inventory_free(&inv);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_helpers),     cmocka_unit_test(test_ubuntu_run535), cmocka_unit_test(test_clean_current),
        cmocka_unit_test(test_multi_cuda), cmocka_unit_test(test_cuda13_noversion), cmocka_unit_test(test_version_text),  cmocka_unit_test(test_rhel9_rpm),     cmocka_unit_test(test_rpm_parse), cmocka_unit_test(test_rpm_kernel),
        cmocka_unit_test(test_cmax_node),
        cmocka_unit_test(test_bad_root),
    };
    return cmocka_run_group_tests_name("inventory", tests, NULL, NULL);
}
