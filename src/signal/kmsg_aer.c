/* kmsg_aer.c — the PCIe AER recognizer: one event per AER message, of kind
 * aer-fatal, aer-nonfatal or aer-corrected (the catalog's rows), tied to a
 * PCI address.  The kernel prints a message as a header from the port that
 * received it ("AER: Multiple Uncorrected (Fatal) error received: 0000:00:03.0",
 * "AER: Correctable error message received from 0000:00:00.0", before 4.19
 * "AER: Corrected error received: id=00e5" — a requester ID, bus<<8|devfn)
 * and then, for each device whose AER registers hold the error, a detail
 * line "PCIe Bus Error: severity=…" and its register dump.  The header
 * starts the event; its first detail line names the device the error was
 * found in, which the event then carries (the header's source can be a
 * bridge, or 0000:00:00.0 for a link error); the rest of the message is
 * folded into it.  A detail line with no header (firmware-first reporting)
 * is an event of its own.  An error found in a network or RDMA function (its
 * detail line is a NIC driver's: "alx 0000:07:00.0: AER: PCIe Bus Error: …")
 * is of kind nic-aer-fatal, nic-aer-nonfatal or nic-aer-corrected: the NIC
 * rows of the catalog judge it.  Formats: Documentation/PCI/pcieaer-howto.rst
 * and drivers/pci/pcie/aer.c. */
#include "signal/kmsg_int.h"
#include "util/strutil.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The message being read. */
struct aer_state {
    uint64_t header_line;   /* k->lines of its header, 0: none */
    int64_t header_ms;      /* the header's time (-1: none), to tell a later message apart */
    char kind[16];
    bool detail_seen;       /* its first detail line was seen */
};
_Static_assert(sizeof(struct aer_state) <= VG_KMSG_STATE_MAX, "AER recognizer state");

#define SAME_MESSAGE_MS 1000   /* a message's lines are printed within microseconds of each other */

/* The kind a severity text names ("Uncorrected (Fatal)", "Multiple Corrected",
 * "Uncorrectable (Non-Fatal)", "Correctable"), or NULL. */
static const char *kind_of(const char *s, size_t n)
{
    char b[96];
    snprintf(b, sizeof b, "%.*s", (int)(n < sizeof b ? n : sizeof b - 1), s);
    if (strstr(b, "Non-Fatal") || strstr(b, "NonFatal") || strstr(b, "Nonfatal")) return "aer-nonfatal";
    if (strstr(b, "Fatal")) return "aer-fatal";
    if (strstr(b, "Correct")) return "aer-corrected";
    return NULL;
}

/* The device a line is about: the message's "<driver> 0000:00:03.1: " prefix
 * (or a bare "0000:00:03.1: "). */
static bool line_device(const char *msg, char out[16])
{
    if (vg_kmsg_pci_at(msg, out)) return true;
    const char *sp = strchr(msg, ' ');
    return sp && sp - msg < 40 && vg_kmsg_pci_at(sp + 1, out);
}

/* "id=00e5": a requester ID (bus << 8 | device << 3 | function) in the domain
 * of the line's own device. */
static bool requester_id(const char *p, const char *msg, char out[16])
{
    char *end;
    unsigned long id = strtoul(p, &end, 16);
    if (end == p || end - p > 4) return false;
    char dev[16];
    unsigned dom = 0;
    if (line_device(msg, dev)) dom = (unsigned)strtoul(dev, NULL, 16);
    snprintf(out, 16, "%04x:%02lx:%02lx.%lx", dom & 0xffff, (id >> 8) & 0xff, (id >> 3) & 0x1f, id & 7);
    return true;
}

/* The line's time in ms (absolute, else since boot), -1 when it has none. */
static int64_t line_ms(const struct vg_kmsg_msg *m)
{
    return m->abs_ms > 0 ? m->abs_ms : m->rel_us >= 0 ? m->rel_us / 1000 : -1;
}

static bool same_time(const struct aer_state *s, const struct vg_kmsg_msg *m)
{
    int64_t t = line_ms(m);
    return s->header_ms < 0 || t < 0 || llabs(t - s->header_ms) <= SAME_MESSAGE_MS;
}

/* A header: its kind and the source it names; NULL when the line is not one. */
static const char *header(const char *msg, char pci[16])
{
    const char *at, *src;
    if ((at = strstr(msg, " error received: "))) src = at + 17;
    else if ((at = strstr(msg, " error message received from "))) src = at + 29;
    else return NULL;
    const char *aer = strstr(msg, "AER:");
    const char *from = aer && aer < at ? aer + 4 : msg;
    const char *kind = kind_of(from, (size_t)(at - from));
    pci[0] = '\0';
    if (kind && !(vg_startswith(src, "id=") ? requester_id(src + 3, msg, pci) : vg_kmsg_pci_at(src, pci)))
        pci[0] = '\0';
    return kind;
}

/* A detail line's kind and device; NULL when the line is not one. */
static const char *detail(const char *msg, char pci[16])
{
    const char *sev = strstr(msg, "severity=");
    if (!sev) return NULL;
    const char *end = strchr(sev, ',');
    const char *kind = kind_of(sev + 9, end ? (size_t)(end - sev - 9) : strlen(sev + 9));
    const char *id;
    if (!line_device(msg, pci) && !((id = strstr(sev, "id=")) && requester_id(id + 3, msg, pci))) pci[0] = '\0';
    return kind;
}

/* The kind of an error the line's device holds: a NIC function's own kind
 * ("nic-aer-fatal") when a NIC driver printed the line. */
static const char *device_kind(const char *kind, const char *msg)
{
    if (!vg_kmsg_nic_driver(msg)) return kind;
    return !strcmp(kind, "aer-fatal") ? "nic-aer-fatal" : !strcmp(kind, "aer-nonfatal") ? "nic-aer-nonfatal"
                                                                                         : "nic-aer-corrected";
}

/* Starts the event of a message at line m. */
static void begin(struct vg_kmsg *k, const struct vg_kmsg_msg *m, struct aer_state *s, const char *kind,
                  const char *pci, bool detail_seen)
{
    vg_kmsg_start(k, m, detail_seen ? device_kind(kind, m->msg) : kind, -1, pci, -1);
    s->header_line = k->lines;
    s->header_ms = line_ms(m);
    vg_strlcpy(s->kind, kind, sizeof s->kind);
    s->detail_seen = detail_seen;
}

static int aer_line(struct vg_kmsg *k, const struct vg_kmsg_msg *m, void *state)
{
    struct aer_state *s = state;
    char pci[16];
    const char *kind = header(m->msg, pci);
    if (kind) {
        begin(k, m, s, kind, pci, false);
        return 1;
    }
    if (!(kind = detail(m->msg, pci))) return 0;
    /* the detail of a message whose event has gone out already (it was cut
     * from its header by a read): nothing to add */
    if (s->header_line && k->lines - s->header_line <= 8 && !s->detail_seen && !strcmp(s->kind, kind) &&
        same_time(s, m)) {
        s->detail_seen = true;
        return 1;
    }
    if (vg_kmsg_recent(k, kind, -1, pci) || vg_kmsg_recent(k, device_kind(kind, m->msg), -1, pci))
        return 1;   /* another device's detail of the message just seen */
    begin(k, m, s, kind, pci, true);
    return 1;
}

/* The rest of the message the held event started: its first detail line
 * names the device; the other details and the register dump are folded. */
static bool aer_continues(struct vg_kmsg *k, const struct vg_kmsg_msg *m, struct vg_event *pend, void *state)
{
    (void)k;
    struct aer_state *s = state;
    char pci[16];
    if (header(m->msg, pci) || !same_time(s, m)) return false;
    const char *kind = detail(m->msg, pci);
    if (!kind) return true;
    if (strcmp(kind, s->kind) != 0) return false;
    if (!s->detail_seen && pci[0]) {   /* the device that holds the error */
        vg_strlcpy(pend->pci, pci, sizeof pend->pci);
        vg_strlcpy(pend->kind, device_kind(kind, m->msg), sizeof pend->kind);
    }
    s->detail_seen = true;
    return true;
}

static const char *const markers[] = { "AER", "Bus Error", NULL };
static const char *const kinds[] = { "aer-fatal",     "aer-nonfatal",     "aer-corrected",
                                     "nic-aer-fatal", "nic-aer-nonfatal", "nic-aer-corrected", NULL };

const struct vg_kmsg_recognizer vg_kmsg_aer = {
    .name = "aer",
    .markers = markers,
    .kinds = kinds,
    .state_size = sizeof(struct aer_state),
    .line = aer_line,
    .continues = aer_continues,
};
