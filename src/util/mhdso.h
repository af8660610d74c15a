/* mhdso.h — libmicrohttpd, loaded with dlopen when an HTTP server starts:
 * only `vigil serve` runs one, and every other command (an audit timed
 * against dpkg-query, an agent, a check under a Prolog's deadline) starts
 * without mapping and relocating libmicrohttpd's TLS stack (GnuTLS, nettle,
 * GMP, p11-kit: most of vigil's start-up time). */
#ifndef VG_MHDSO_H
#define VG_MHDSO_H
#include <microhttpd.h>
#include <stddef.h>

struct vg_mhd {
    __typeof__(MHD_start_daemon) *start_daemon;
    __typeof__(MHD_stop_daemon) *stop_daemon;
    __typeof__(MHD_quiesce_daemon) *quiesce_daemon;
    __typeof__(MHD_get_daemon_info) *get_daemon_info;
    __typeof__(MHD_get_connection_info) *get_connection_info;
    __typeof__(MHD_lookup_connection_value) *lookup_connection_value;
    __typeof__(MHD_suspend_connection) *suspend_connection;
    __typeof__(MHD_resume_connection) *resume_connection;
    __typeof__(MHD_create_response_from_buffer) *create_response_from_buffer;
    __typeof__(MHD_add_response_header) *add_response_header;
    __typeof__(MHD_queue_response) *queue_response;
    __typeof__(MHD_destroy_response) *destroy_response;
    __typeof__(MHD_is_feature_supported) *is_feature_supported;
};

/* The functions, loaded once (thread-safe); NULL with err set when
 * libmicrohttpd.so.12 cannot be loaded.  After a successful call, vg_mhd
 * points at them. */
const struct vg_mhd *vg_mhd_load(char *err, size_t errlen);
extern const struct vg_mhd *vg_mhd;

#endif
