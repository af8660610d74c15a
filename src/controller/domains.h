/* domains.h — the NVLink domains the nodes report: each agent sends the
 * domain its GPUs registered in (their fabric info: "CLUSTER-UUID/CLIQUE",
 * the same on every tray of a GB200/GB300 NVL72 rack) with its heartbeats,
 * and the controller keeps the last one per node.  It is the domain source
 * of last resort: the policy's `domain` lines, then the orchestrator's
 * domain of a node (a Kubernetes label), then this (policy.c's domain_of),
 * so the rack rule and the spare domains need no hand configuration on a
 * rack whose fabric says what it is.  Thread-safe; a domain's name, once
 * returned, stays valid for the life of the table. */
#ifndef VG_DOMAINS_H
#define VG_DOMAINS_H
#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#define VG_DOMAIN_MAX 64   /* bytes of a domain's name, with its NUL */

struct vg_domains;

struct vg_domains *vg_domains_new(void);
void vg_domains_free(struct vg_domains *d);
/* Whether s may name a domain: 1..63 bytes of letters, digits and "-_.:/". */
bool vg_domain_name_ok(const char *s);
/* node reports domain (checked with vg_domain_name_ok by the caller): 1
 * when that changed what the table held, 0 when not. */
int vg_domains_learn(struct vg_domains *d, const char *node, const char *domain);
/* The domain node reported last, or NULL. */
const char *vg_domains_of(struct vg_domains *d, const char *node);
/* Every node with its domain, {node: domain}. */
json_t *vg_domains_json(struct vg_domains *d);

#endif
