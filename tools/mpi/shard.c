/* Shards of genie-mpi: the parts of one file or a shard map (see shard.h). */
#include "shard.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../cli.h"

void shard_map_free(shard_map *m)
{
    for (size_t i = 0; i < m->n; i++)
        free(m->a[i].zPath);
    free(m->a);
    m->a = NULL;
    m->n = 0;
}

/* One line "rank path first_object" into @p e; 0, or -1 with the message. */
static int parse_line(const shard_map *m, char *zLine, uint64_t lineNo, int nRanker, shard_entry *e, char *zErr,
                      size_t nErr)
{
    char *zRank = strtok(zLine, " \t\r\n"), *zPath = strtok(NULL, " \t\r\n"), *zFirst = strtok(NULL, " \t\r\n");
    uint64_t rank, first;
    if (!zRank || !zPath || !zFirst || strtok(NULL, " \t\r\n")) {
        snprintf(zErr, nErr, "%s:%llu: expected 'rank path first_object'", m->zFile, (unsigned long long)lineNo);
        return -1;
    }
    if (!cli_parse_u64(zRank, 1, (uint64_t)nRanker, &rank)) {
        snprintf(zErr, nErr, "%s:%llu: rank '%s' is not a ranker of this job (1..%d)", m->zFile,
                 (unsigned long long)lineNo, zRank, nRanker);
        return -1;
    }
    if (!cli_parse_u64(zFirst, 0, UINT32_MAX, &first)) {
        snprintf(zErr, nErr, "%s:%llu: first_object '%s' is not an object id 0..4294967295", m->zFile,
                 (unsigned long long)lineNo, zFirst);
        return -1;
    }
    e->rank = (int)rank;
    e->firstObject = first;
    e->lineNo = lineNo;
    e->zPath = strdup(zPath);
    if (!e->zPath) {
        snprintf(zErr, nErr, "out of memory reading %s", m->zFile);
        return -1;
    }
    return 0;
}

int shard_map_read(const char *zFile, int nRanker, shard_map *m, char *zErr, size_t nErr)
{
    memset(m, 0, sizeof *m);
    m->zFile = zFile;
    FILE *f = fopen(zFile, "r");
    if (!f) {
        snprintf(zErr, nErr, "cannot open the shard map %s: %s", zFile, strerror(errno));
        return -1;
    }
    m->a = calloc((size_t)nRanker, sizeof *m->a);
    char zLine[4096];
    uint64_t lineNo = 0;
    int rc = m->a ? 0 : -1;
    if (rc)
        snprintf(zErr, nErr, "out of memory reading %s", zFile);
    while (rc == 0 && fgets(zLine, sizeof zLine, f)) {
        lineNo++;
        size_t len = strlen(zLine);
        if (len == sizeof zLine - 1 && zLine[len - 1] != '\n') {
            snprintf(zErr, nErr, "%s:%llu: line longer than %zu bytes", zFile, (unsigned long long)lineNo,
                     sizeof zLine - 2);
            rc = -1;
            break;
        }
        size_t lead = strspn(zLine, " \t\r\n");
        if (zLine[lead] == 0 || zLine[lead] == '#')
            continue;
        shard_entry e;
        rc = parse_line(m, zLine, lineNo, nRanker, &e, zErr, nErr);
        if (rc == 0 && shard_map_find(m, e.rank)) {
            snprintf(zErr, nErr, "%s:%llu: rank %d already has a shard (line %llu)", zFile,
                     (unsigned long long)lineNo, e.rank, (unsigned long long)shard_map_find(m, e.rank)->lineNo);
            free(e.zPath);
            rc = -1;
        }
        if (rc == 0)
            m->a[m->n++] = e;
    }
    if (rc == 0 && ferror(f)) {
        snprintf(zErr, nErr, "cannot read the shard map %s: %s", zFile, strerror(errno));
        rc = -1;
    }
    fclose(f);
    for (int r = 1; rc == 0 && r <= nRanker; r++)
        if (!shard_map_find(m, r)) {
            snprintf(zErr, nErr, "%s: no shard for rank %d (every rank 1..%d needs one line)", zFile, r, nRanker);
            rc = -1;
        }
    if (rc)
        shard_map_free(m);
    return rc;
}

const shard_entry *shard_map_find(const shard_map *m, int rank)
{
    for (size_t i = 0; i < m->n; i++)
        if (m->a[i].rank == rank)
            return &m->a[i];
    return NULL;
}

void shard_parts(uint32_t nPart, int r, int R, uint32_t *pFirst, uint32_t *pN)
{
    uint32_t a = (uint32_t)((uint64_t)nPart * (uint64_t)(r - 1) / (uint64_t)R);
    uint32_t b = (uint32_t)((uint64_t)nPart * (uint64_t)r / (uint64_t)R);
    *pFirst = a;
    *pN = b - a;
}

/* "keywords, text, sequences and vectors": the types whose entries search parts. */
static void parts_types(char *z, size_t n)
{
    size_t nPart = 0, iPart = 0, at = 0;
    for (size_t i = 0; i < itype_nAll; i++)
        nPart += itype_aAll[i]->xSearchParts != NULL;
    z[0] = 0;
    for (size_t i = 0; i < itype_nAll && at < n; i++)
        if (itype_aAll[i]->xSearchParts) {
            const char *zSep = iPart == 0 ? "" : iPart + 1 == nPart ? " and " : ", ";
            at += (size_t)snprintf(z + at, n - at, "%s%s", zSep, itype_aAll[i]->zName);
            iPart++;
        }
}

int shard_check_type(const char *zPath, const genie_index *idx, int partsOfOne, char *zErr, size_t nErr)
{
    genie_index_info info;
    genie_index_get_info(idx, &info);
    const itype *t = itype_by_type(info.type);
    if (t && t->xSearchParts && (partsOfOne || !t->zNoShardMap))
        return 0;
    if (t && t->xSearchParts) {
        snprintf(zErr, nErr, "%s: %s", zPath, t->zNoShardMap);
        return -1;
    }
    char zTypes[160];
    parts_types(zTypes, sizeof zTypes);
    snprintf(zErr, nErr, "%s: a %s index; genie-mpi searches %s indexes (docs/SCALING.md)", zPath,
             genie_index_type_name(info.type), zTypes);
    return -1;
}

static int fail_lib(char *zErr, size_t nErr, genie_status rc)
{
    const char *z = genie_last_error();
    snprintf(zErr, nErr, "%s", z[0] ? z : genie_strerror(rc));
    return -1;
}

int shard_open(const char *zIndex, const shard_map *m, int r, int R, shard *s, char *zErr, size_t nErr)
{
    memset(s, 0, sizeof *s);
    const shard_entry *e = m ? shard_map_find(m, r) : NULL;
    const char *zPath = e ? e->zPath : zIndex;
    genie_status rc = genie_index_open(zPath, &s->idx);
    if (rc != GENIE_OK)
        return fail_lib(zErr, nErr, rc);
    if (shard_check_type(zPath, s->idx, e == NULL, zErr, nErr) != 0)
        goto fail;
    if ((rc = itype_attach(&s->ix, s->idx)) != GENIE_OK) {
        fail_lib(zErr, nErr, rc);
        goto fail;
    }
    const genie_index_info info = s->ix.info;
    if (e) {
        s->firstPart = 0;
        s->nParts = genie_index_parts(s->idx);
        s->base = e->firstObject;
        s->firstObject = e->firstObject;
        s->nObjects = info.n_objects;
        return 0;
    }
    uint32_t nPart = genie_index_parts(s->idx);
    if (nPart < (uint32_t)R) {
        snprintf(zErr, nErr,
                 "%s has %u part%s, fewer than the %d rankers: rebuild it with genie build --part-objects %llu "
                 "(or fewer), or give each ranker a file of its own (--shard-map)",
                 zPath, nPart, nPart == 1 ? "" : "s", R,
                 (unsigned long long)(info.n_objects / (uint64_t)R ? info.n_objects / (uint64_t)R : 1));
        goto fail;
    }
    shard_parts(nPart, r, R, &s->firstPart, &s->nParts);
    genie_part_info first, last;
    if ((rc = genie_index_part_info(s->idx, s->firstPart, &first)) != GENIE_OK ||
        (rc = genie_index_part_info(s->idx, s->firstPart + s->nParts - 1, &last)) != GENIE_OK) {
        fail_lib(zErr, nErr, rc);
        goto fail;
    }
    s->firstObject = first.first_object;
    s->nObjects = last.first_object + last.n_objects - first.first_object;
    return 0;
fail:
    itype_detach(&s->ix);
    genie_index_close(s->idx);
    s->idx = NULL;
    return -1;
}

void shard_close(shard *s)
{
    itype_detach(&s->ix);
    genie_index_close(s->idx);
    s->idx = NULL;
}
