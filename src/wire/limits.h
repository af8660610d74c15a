/* limits.h — the size limits the agent and the controller agree on: the
 * controller refuses (and names) anything above VG_WIRE_MAX_*; the agent
 * splits what it sends so one message never exceeds VG_WIRE_SEND_*, which sit
 * well below both the controller's limits and MUNGE's payload limit. */
#ifndef VG_WIRE_LIMITS_H
#define VG_WIRE_LIMITS_H

#define VG_WIRE_MAX_BODY (4u << 20)    /* controller: bytes in one POST body */
#define VG_WIRE_MAX_EVENTS 10000       /* controller: events in one message */
#define VG_WIRE_SEND_BYTES (256u << 10) /* agent: JSON bytes per message it sends */
#define VG_WIRE_SEND_EVENTS 1000       /* agent: events per message it sends */

#endif
