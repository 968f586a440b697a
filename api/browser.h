/* What a web page could make a browser send (docs/api.md, "Threat model").
 * A page on another site may POST to cod-server without asking first, as
 * long as its body is form data or text/plain, and a name of the page's
 * that it points at this machine afterwards (DNS rebinding) makes the
 * browser treat cod-server as the page's own site, answers included. So,
 * token or none:
 *   - Host must name this server: an IP address (a rebound name cannot be
 *     one), localhost, or a name given with --allowed-hosts; else 421;
 *   - an Origin, when the browser sends one, must be the server's own (the
 *     scheme aside: a TLS proxy in front serves the same site); else 403;
 *   - a POST's body must be application/json, which no page can send to
 *     another site unasked; else 415. */
#ifndef COD_BROWSER_H
#define COD_BROWSER_H

#include "api/http.h"

/* 1 with the refusal queued into *ret, or 0 when r may go on. Called with
 * the headers in, before the body is read. */
int browser_refused(struct req *r, enum MHD_Result *ret);

#endif
