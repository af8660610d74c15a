/* mhdso.c — loads libmicrohttpd with dlopen on first use; see mhdso.h. */
#include "util/mhdso.h"
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

const struct vg_mhd *vg_mhd;
static struct vg_mhd mhd;
static pthread_once_t mhd_once = PTHREAD_ONCE_INIT;
static const char *mhd_error;

#define MHD_SYM(field, name) \
    if (!(*(void **)&mhd.field = dlsym(lib, name))) { mhd_error = "libmicrohttpd.so.12 lacks " name; return; }

static void mhd_init(void)
{
    void *lib = dlopen("libmicrohttpd.so.12", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        mhd_error = "cannot load libmicrohttpd.so.12 (Debian package libmicrohttpd12)";
        return;
    }
    MHD_SYM(start_daemon, "MHD_start_daemon")
    MHD_SYM(stop_daemon, "MHD_stop_daemon")
    MHD_SYM(quiesce_daemon, "MHD_quiesce_daemon")
    MHD_SYM(get_daemon_info, "MHD_get_daemon_info")
    MHD_SYM(get_connection_info, "MHD_get_connection_info")
    MHD_SYM(lookup_connection_value, "MHD_lookup_connection_value")
    MHD_SYM(suspend_connection, "MHD_suspend_connection")
    MHD_SYM(resume_connection, "MHD_resume_connection")
    MHD_SYM(create_response_from_buffer, "MHD_create_response_from_buffer")
    MHD_SYM(add_response_header, "MHD_add_response_header")
    MHD_SYM(queue_response, "MHD_queue_response")
    MHD_SYM(destroy_response, "MHD_destroy_response")
    MHD_SYM(is_feature_supported, "MHD_is_feature_supported")
    vg_mhd = &mhd;
}

const struct vg_mhd *vg_mhd_load(char *err, size_t errlen)
{
    pthread_once(&mhd_once, mhd_init);
    if (mhd_error) {
        snprintf(err, errlen, "%s", mhd_error);
        return NULL;
    }
    return &mhd;
}
