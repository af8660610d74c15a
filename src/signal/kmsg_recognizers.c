/* kmsg_recognizers.c — the kernel-log recognizers, in the order a line is
 * offered to them (the first that takes it ends the search).  A new source
 * (a driver, a kernel subsystem) is one file defining a struct
 * vg_kmsg_recognizer (kmsg_int.h), one line here, its catalog rows in
 * data/fault-catalog.tsv and its test (docs/gpu.md). */
#include "signal/kmsg_int.h"

const struct vg_kmsg_recognizer *const vg_kmsg_recognizers[] = {
    &vg_kmsg_nvidia,
    &vg_kmsg_aer,
    &vg_kmsg_amdgpu,
    &vg_kmsg_nic,   /* after AER: a NIC function's AER lines are AER's */
    NULL,
};
