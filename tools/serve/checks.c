/*
 * The checks of a request that need no state (serve.h), kept apart from
 * libmicrohttpd so that the fuzz harness of the HTTP path can call them.
 *
 * Why each:
 *   Host      DNS rebinding: a web page's name made to resolve to 127.0.0.1
 *             lets its scripts read the server as their own origin; the
 *             Host header then still carries that name, so only names
 *             this server answers to are taken (an IP address cannot be
 *             rebound: a wildcard --listen takes any);
 *   Origin    a browser's cross-site request says where it comes from;
 *   Content-Type  a web page can POST "simple" requests (text/plain,
 *             forms) to any address without asking; application/json is
 *             not one of them, so a browser asks first (CORS), and genie
 *             serve never says yes;
 *   Bearer    RFC 9110 11.1: the scheme is case-insensitive;
 *   NUL       a \u0000 in a JSON string would cut the C string cJSON
 *             makes of it, silently.
 */
#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "serve.h"

/* Whether @p z (n bytes) is an IPv4 or IPv6 address literal. */
static int is_ip_literal(const char *z, size_t n)
{
    char zAddr[64];
    unsigned char aBuf[16];
    if (n == 0 || n >= sizeof zAddr)
        return 0;
    memcpy(zAddr, z, n);
    zAddr[n] = '\0';
    return inet_pton(AF_INET, zAddr, aBuf) == 1 || inet_pton(AF_INET6, zAddr, aBuf) == 1;
}

static int is_loopback(const char *zAddr)
{
    return strncmp(zAddr, "127.", 4) == 0 || strcmp(zAddr, "::1") == 0 || strcasecmp(zAddr, "localhost") == 0;
}

static int is_wildcard(const char *zAddr)
{
    return strcmp(zAddr, "0.0.0.0") == 0 || strcmp(zAddr, "::") == 0 || zAddr[0] == '\0';
}

/* Whether the host name @p z (n bytes, no port, no brackets) names this server. */
static int host_name_ok(const serve_config *cfg, const char *z, size_t n)
{
    for (size_t i = 0; i < cfg->nAllowHost; i++) {
        const char *zAllow = cfg->azAllowHost[i];
        if (strcmp(zAllow, "*") == 0 || (strlen(zAllow) == n && strncasecmp(zAllow, z, n) == 0))
            return 1;
    }
    const char *zListen = cfg->zListenHost ? cfg->zListenHost : "";
    if (strlen(zListen) == n && strncasecmp(zListen, z, n) == 0)
        return 1;
    if ((is_loopback(zListen) || is_wildcard(zListen)) && n == 9 && strncasecmp(z, "localhost", 9) == 0)
        return 1;
    return is_wildcard(zListen) && is_ip_literal(z, n);
}

/* The host part of "host[:port]" or "[v6]:port": *pn bytes from the return value; NULL when malformed. */
static const char *host_part(const char *z, size_t *pn)
{
    if (z[0] == '[') {
        const char *zEnd = strchr(z, ']');
        if (!zEnd || (zEnd[1] != '\0' && zEnd[1] != ':'))
            return NULL;
        *pn = (size_t)(zEnd - z - 1);
        return z + 1;
    }
    const char *zColon = strchr(z, ':');
    if (zColon && strchr(zColon + 1, ':'))
        return NULL; /* an IPv6 address needs brackets in a Host */
    *pn = zColon ? (size_t)(zColon - z) : strlen(z);
    return z;
}

int serve_host_ok(const serve_config *cfg, const char *zHost)
{
    if (!zHost)
        return 0;
    size_t n;
    const char *z = host_part(zHost, &n);
    if (!z || n == 0)
        return 0;
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)z[i] <= ' ' || z[i] == '/' || z[i] == '@')
            return 0;
    return host_name_ok(cfg, z, n);
}

int serve_origin_ok(const serve_config *cfg, const char *zOrigin)
{
    const char *zSep = strstr(zOrigin, "://");
    if (!zSep || (strncasecmp(zOrigin, "http://", 7) != 0 && strncasecmp(zOrigin, "https://", 8) != 0))
        return 0; /* "null" (a sandboxed page, a file) and other schemes */
    const char *zHost = zSep + 3;
    if (strchr(zHost, '/'))
        return 0; /* an origin has no path */
    return serve_host_ok(cfg, zHost);
}

int serve_content_type_json(const char *zType)
{
    if (!zType)
        return 0;
    while (*zType == ' ' || *zType == '\t')
        zType++;
    size_t n = strcspn(zType, "; \t");
    if (n != 16 || strncasecmp(zType, "application/json", 16) != 0)
        return 0;
    zType += n;
    while (*zType == ' ' || *zType == '\t')
        zType++;
    return *zType == '\0' || *zType == ';';
}

int serve_bearer_ok(const char *zHeader, const char *zToken)
{
    if (!zHeader || strncasecmp(zHeader, "Bearer", 6) != 0 || (zHeader[6] != ' ' && zHeader[6] != '\t'))
        return 0;
    const char *z = zHeader + 6;
    while (*z == ' ' || *z == '\t')
        z++;
    size_t n = strlen(z), nTok = strlen(zToken);
    while (n > 0 && (z[n - 1] == ' ' || z[n - 1] == '\t'))
        n--;
    unsigned char diff = n != nTok;
    for (size_t i = 0; i < nTok; i++)
        diff |= (unsigned char)(zToken[i] ^ (i < n ? z[i] : 0));
    return diff == 0;
}

int serve_json_has_nul(const char *z, size_t n, size_t *pAt)
{
    for (size_t i = 0; i < n; i++) {
        if (z[i] == '\0') {
            *pAt = i;
            return 1;
        }
        if (z[i] != '\\')
            continue;
        /* an escape: \u0000 is the NUL; any other skips its next character (\\ and \" included) */
        if (i + 5 < n && z[i + 1] == 'u' && memcmp(z + i + 2, "0000", 4) == 0) {
            *pAt = i;
            return 1;
        }
        i++;
    }
    return 0;
}
