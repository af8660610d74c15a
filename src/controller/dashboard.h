/* dashboard.h — the live dashboard `vigil serve` answers at `/`: one
 * self-contained page (HTML, CSS and JavaScript inline, no external asset)
 * that polls GET /v1/summary every 2 s with the read-token cookie and draws
 * the fleet by rack/domain, the open incidents with their step timelines, the
 * spare pool, the breaker, MTTR and availability.  Every string from the
 * controller is put in the page as text (textContent), never as markup. */
#ifndef VG_DASHBOARD_H
#define VG_DASHBOARD_H

/* The page with its script and style carrying the nonce (malloc'd). */
char *vg_dashboard_page(const char *nonce);
/* The Content-Security-Policy for that page (malloc'd): only its own nonce'd
 * script and style, fetches to the controller itself, nothing else. */
char *vg_dashboard_csp(const char *nonce);

#endif
