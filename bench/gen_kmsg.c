/* gen_kmsg.c — writes a synthetic kernel log of SIZE megabytes to stdout for
 * bench/scan.sh: ordinary kernel noise in dmesg raw format with, every 997th
 * line, an NVRM Xid line in one of several driver generations' formats. */
#include <stdio.h>
#include <stdlib.h>

static const char *const noise[] = {
    "IPv6: ADDRCONF(NETDEV_CHANGE): eth0: link becomes ready",
    "perf: interrupt took too long (2509 > 2500), lowering kernel.perf_event_max_sample_rate to 79500",
    "nvidia-nvswitch2: open (major=510)",
    "EXT4-fs (nvme0n1p2): mounted filesystem with ordered data mode. Opts: (null)",
    "audit: type=1400 audit(1700000000.123:42): apparmor=\"STATUS\" operation=\"profile_load\" name=\"snap\"",
    "pt_main_thread[2536443]: segfault at 7f797fe00000 ip 00007f7c7ac69996 sp 00007f7c12fd7c30 error 4 in libnccl.so.2",
    "mlx5_core 0000:0c:00.0: mlx5_cmd_out_err:803: QUERY_VPORT_STATE(0x750) op_mod(0x1) failed, status bad parameter(0x3)",
    "systemd[1]: Started Session 1234 of User slurm.",
    "nvidia-peermem nv_get_p2p_free_callback:127 ERROR detected invalid context, skipping further processing",
    "cgroup: fork rejected by pids controller in /system.slice/slurmstepd.scope",
    "clocksource: Long readout interval, skipping watchdog check: cs_nsec: 1584036171 wd_nsec: 1584036160",
    "TCP: request_sock_TCP: Possible SYN flooding on port 8080. Sending cookies.",
};
static const char *const xid[] = {
    "NVRM: Xid (PCI:0000:%02x:00): 13, Graphics SM Warp Exception on (GPC 0, TPC 1): Out Of Range Address",
    "NVRM: Xid (PCI:0000:%02x:00): 31, pid=13705, name=python, channel 0x0000000c, intr 00000000. MMU Fault: ENGINE GRAPHICS GPC2 GPCCLIENT_PROP_0 faulted @ 0x0_00000000. Fault is of type FAULT_PDE ACCESS_TYPE_VIRT_READ",
    "NVRM: Xid (PCI:0000:%02x:00): 43, pid=1045242, name=pt_main_thread, Ch 00000008",
    "NVRM: Xid (PCI:0000:%02x:00): 119, pid=2024380, name=nvidia-smi, Timeout after 6s of waiting for RPC response from GPU4 GSP! Expected function 76 (GSP_RM_CONTROL) (0x20801813 0x4c).",
    "NVRM: Xid (PCI:0000:%02x:00): 79, GPU has fallen off the bus.",
};

int main(int argc, char **argv)
{
    long long want = (argc > 1 ? atoll(argv[1]) : 1024) * 1024LL * 1024LL, done = 0;
    static char buf[1 << 20];
    setvbuf(stdout, buf, _IOFBF, sizeof buf);
    unsigned long long n = 0;
    static const int bus[] = { 0x18, 0x2a, 0x3a, 0x5d, 0x9a, 0xab, 0xba, 0xdb };
    while (done < want) {
        double t = 1000.0 + (double)n * 0.0137;
        int w;
        if (n % 997 == 996) {
            char msg[512];
            snprintf(msg, sizeof msg, xid[(n / 997) % 5], bus[(n / 997 / 5) % 8]);
            w = printf("[%12.6f] %s\n", t, msg);
        } else {
            w = printf("[%12.6f] %s\n", t, noise[n % (sizeof noise / sizeof noise[0])]);
        }
        done += w;
        n++;
    }
    return 0;
}
