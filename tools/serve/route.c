/*
 * Where a request's path leads in genie serve (docs/SERVER.md's
 * endpoints): the fixed paths, then /v1/indexes/{name}[/action], the name
 * looked up among the served indexes.
 */
#include <stdio.h>
#include <string.h>

#include "serve.h"

static serve_index *find_index(serve_server *s, const char *zName, size_t n)
{
    for (size_t i = 0; i < s->nIndex; i++)
        if (strlen(s->aIndex[i].zName) == n && memcmp(s->aIndex[i].zName, zName, n) == 0)
            return &s->aIndex[i];
    return NULL;
}

int serve_route_url(serve_server *s, const char *zUrl, serve_route *r, char *zName, size_t nName)
{
    memset(r, 0, sizeof *r);
    r->ep = SERVE_EP_OTHER;
    static const struct {
        const char *zPath;
        serve_endpoint ep;
    } aFixed[] = {{"/healthz", SERVE_EP_HEALTHZ}, {"/readyz", SERVE_EP_READYZ}, {"/metrics", SERVE_EP_METRICS},
                  {"/v1/indexes", SERVE_EP_INDEXES}, {"/v1/indexes/", SERVE_EP_INDEXES}};
    for (size_t i = 0; i < sizeof aFixed / sizeof *aFixed; i++)
        if (strcmp(zUrl, aFixed[i].zPath) == 0) {
            r->ep = aFixed[i].ep;
            r->zMethod = "GET";
            return 0;
        }
    if (strncmp(zUrl, "/v1/indexes/", 12) != 0)
        return 404;
    const char *zN = zUrl + 12, *zSlash = strchr(zN, '/');
    size_t n = zSlash ? (size_t)(zSlash - zN) : strlen(zN);
    static const struct {
        const char *zRest;
        serve_endpoint ep;
        const char *zMethod;
    } aAction[] = {{"", SERVE_EP_INDEX, "GET"},           {"/search", SERVE_EP_SEARCH, "POST"},
                   {"/reload", SERVE_EP_RELOAD, "POST"},   {"/objects", SERVE_EP_OBJECTS, "POST"},
                   {"/delete", SERVE_EP_DELETE, "POST"},   {"/compact", SERVE_EP_COMPACT, "POST"}};
    const char *zRest = zSlash ? zSlash : "";
    size_t a = 0;
    while (a < sizeof aAction / sizeof *aAction && strcmp(zRest, aAction[a].zRest) != 0)
        a++;
    if (a == sizeof aAction / sizeof *aAction)
        return 404;
    r->ep = aAction[a].ep;
    r->zMethod = aAction[a].zMethod;
    r->pIndex = find_index(s, zN, n);
    if (!r->pIndex) {
        snprintf(zName, nName, "%.*s", (int)(n < 200 ? n : 200), zN);
        r->zMissing = zName;
        return 404;
    }
    return 0;
}
