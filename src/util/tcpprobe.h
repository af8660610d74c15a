/* tcpprobe.h — is a daemon behind a TCP port alive?  Connects, sends a few
 * bytes no protocol accepts, and waits for the daemon to read them and close
 * the connection (or answer).  A crashed daemon refuses the connection; a
 * frozen one (SIGSTOP, a hung kernel, a wedged NIC) lets the kernel accept it
 * but never reads: the probe times out. */
#ifndef VG_TCPPROBE_H
#define VG_TCPPROBE_H

enum vg_tcp_alive { VG_TCP_ALIVE = 1, VG_TCP_DEAD = 0, VG_TCP_UNKNOWN = -1 };

/* addr: an IPv4/IPv6 literal or a host name.  DEAD: refused, unreachable or
 * no answer within timeout_ms; UNKNOWN: the address did not resolve. */
enum vg_tcp_alive vg_tcp_probe(const char *addr, int port, int timeout_ms);

#endif
