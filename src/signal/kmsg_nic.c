/* kmsg_nic.c — the NIC recognizer: what the network and RDMA drivers of a GPU
 * node print when their device fails, as one table of (text, kind) rows,
 * each kind a class of fault whatever the driver: a firmware command that
 * never completed (mlx5's command interface), firmware that stopped (mlx5's
 * health poller, ionic's heartbeat), a command the firmware refused (bnxt_re's
 * QPLIB queue), a transmit queue the kernel's watchdog found stuck (NETDEV
 * WATCHDOG, in both of its formats), a link that went down (mlx5, ionic, e1000e-style
 * "NIC Link is Down") and a bond that lost a member because of it, a
 * transceiver over temperature, unplugged or in error, a slot short of power.
 * The device is the PCI address in the driver's prefix ("mlx5_core
 * 0000:01:00.0 enp1s0f0np0: …"); lines that name only a network interface
 * (the watchdog's older format, bonding) have none; its newer one ("DRIVER
 * BDF IF: NETDEV WATCHDOG: CPU: N: transmit queue Q timed out T ms", seen on
 * Linux 6.8) comes through the driver's prefix.  PCIe AER on a NIC function is the AER recognizer's
 * (kmsg_aer.c), which asks vg_kmsg_nic_driver() whose function it was.
 * Verdicts are the catalog's rows of these kinds (docs/catalog.md names the
 * judgement behind each); the lines the tests use are real ones
 * (tests/fixtures/logs/NOTICE). */
#include "signal/kmsg_int.h"
#include "util/strutil.h"
#include <string.h>

/* The drivers of network and RDMA functions, as they prefix their messages. */
static const char *const nic_drivers[] = {
    "mlx5_core", "mlx4_core", "mlx4_en", "bnxt_en", "bnxt_re", "ionic", "irdma", "ice", "i40e", "ixgbe",
    "igb",       "e1000e",    "alx",     "tg3",     "qede",    "cxgb4", "efa",   "ena", "hfi1", NULL,
};

/* Where a NIC driver's prefix starts in msg ("DRIVER " or "DRIVER:" at the
 * start of the message or after a space: a line a log collector prefixed),
 * or NULL. */
static const char *driver_at(const char *msg)
{
    for (const char *const *d = nic_drivers; *d; d++) {
        size_t n = strlen(*d);
        for (const char *p = strstr(msg, *d); p; p = strstr(p + 1, *d))
            if ((p == msg || p[-1] == ' ') && (p[n] == ' ' || p[n] == ':')) return p;
    }
    return NULL;
}

bool vg_kmsg_nic_driver(const char *msg) { return driver_at(msg) != NULL; }

/* The messages, most specific first; a line is one row's at most. */
static const struct nic_msg {
    const char *text;
    const char *kind;
    bool driver_prefix;     /* only from a NIC driver's own prefix (the text is common elsewhere) */
    bool burst;             /* one fault prints several such lines at once: one event per device */
} msgs[] = {
    /* mlx5 command interface (drivers/net/ethernet/mellanox/mlx5/core/cmd.c) */
    { "Will cause a leak of a command resource", "nic-cmd-timeout", false, true },
    { "No done completion", "nic-cmd-timeout", false, true },
    /* firmware gone: mlx5 health poller (health.c), ionic heartbeat (ionic_dev.c) */
    { "health compromised", "nic-fw-fatal", false, true },
    { "FW heartbeat stalled", "nic-fw-fatal", false, true },
    /* a command the firmware refused (bnxt_re's qplib_rcfw.c) */
    { "QPLIB: cmdq", "nic-cmd-error", false, false },
    /* transceivers and slot (mlx5 events.c) */
    { "High Temperature", "nic-overtemp", false, false },
    { "Cable unplugged", "nic-module", false, false },
    { "Cable error", "nic-module", false, false },
    { "insufficient power", "nic-power-low", false, false },
    /* the transmit path: the kernel's watchdog (net/sched/sch_generic.c); the
     * driver's "TX timeout detected" that follows it is the same fault */
    { "NETDEV WATCHDOG: ", "nic-tx-timeout", false, false },
    /* links */
    { "NIC Link is Down", "nic-link-down", false, false },
    { ": Link down", "nic-link-down", true, false },
    { "link status definitely down", "bond-slave-down", false, false },
};

/* The PCI address in a NIC driver's prefix ("DRIVER 0000:01:00.0[ NETDEV]: …"), or "". */
static void prefix(const char *msg, char pci[16])
{
    const char *d = driver_at(msg), *sp = d ? strchr(d, ' ') : NULL;
    if (!sp || sp - d > 24 || !vg_kmsg_pci_at(sp + 1, pci)) pci[0] = '\0';
}

static int nic_line(struct vg_kmsg *k, const struct vg_kmsg_msg *m, void *state)
{
    (void)state;
    const struct nic_msg *row = NULL;
    for (size_t i = 0; i < sizeof msgs / sizeof msgs[0] && !row; i++)
        if (strstr(m->msg, msgs[i].text) && (!msgs[i].driver_prefix || vg_kmsg_nic_driver(m->msg))) row = &msgs[i];
    if (!row) return 0;
    char pci[16];
    prefix(m->msg, pci);
    if (row->burst && pci[0] && vg_kmsg_recent(k, row->kind, -1, pci)) return 1;   /* the same fault's next line */
    vg_kmsg_start(k, m, row->kind, -1, pci, -1);
    return 1;
}

/* Texts rare enough that an ordinary line holds none (a NIC's routine lines
 * never reach the recognizer), each starting with a rare byte pair. */
static const char *const markers[] = { "Will cause a leak", "No done completion", "'s health compromised",
                                       "FW heartbeat stalled", "QPLIB: cmdq", "Cable unplugged", "Cable error",
                                       "Detected insufficient power", "WATCHDOG: ", "NIC Link is Down",
                                       "Link down", "(slave ", NULL };
static const char *const kinds[] = { "nic-cmd-timeout", "nic-fw-fatal",   "nic-cmd-error", "nic-overtemp",
                                     "nic-module",      "nic-power-low",  "nic-tx-timeout", "nic-link-down",
                                     "bond-slave-down", NULL };

const struct vg_kmsg_recognizer vg_kmsg_nic = {
    .name = "nic",
    .markers = markers,
    .kinds = kinds,
    .line = nic_line,
};
