/*
 * The host side of the CUDA tile layout (src/engine/tile_lists.c): what the
 * counting kernel reads instead of the 32-bit List Array must give back
 * every posting.  For every list and tile, the segment is found as the
 * kernel finds it (the list's row, or a binary search over the short
 * lists' 32-bit ids), and tile * TILE_OBJECTS + the tile-local id of each
 * of its postings must be the stored id, in order, the segments covering
 * the list exactly.  Runs without a GPU.
 */
#include "test.h"
#include "engine/tile_lists.h"
#include "index/index.h"

/* First index of post[0..n) whose id is >= key (tile.cu's lower_bound_id). */
static uint64_t tiles_lower_bound(const uint32_t *post, uint64_t n, uint64_t key)
{
    uint64_t lo = 0, hi = n;
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (post[mid] < key)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Every posting of @p idx back from the tile arrays, as the counting kernel sees them. */
static void tiles_check_index(const genie_index *idx)
{
    uint64_t nList = idx->info.n_keywords, nPost = idx->info.n_postings;
    uint32_t nTile = tile_count(idx);
    CHECK_EQ(nTile, idx->info.n_objects ? (idx->info.n_objects + TILE_OBJECTS - 1) / TILE_OBJECTS : 1);
    uint32_t *aRowOf = malloc((nList + 1) * sizeof *aRowOf);
    uint64_t *aShortOff = malloc((nList + 1) * sizeof *aShortOff);
    uint16_t *aLocal = malloc((nPost + 1) * sizeof *aLocal);
    CHECK(aRowOf && aShortOff && aLocal);
    uint64_t nRow = tile_row_of(idx, nTile, aRowOf);
    CHECK_EQ(tile_row_of(idx, nTile, NULL), nRow);
    uint32_t *aOff = malloc((nRow * (nTile + 1) + 1) * sizeof *aOff);
    uint64_t nShort = tile_short_postings(idx, nTile, aRowOf, NULL, NULL);
    uint32_t *aShort = malloc((nShort + 1) * sizeof *aShort);
    CHECK(aOff && aShort);
    tile_rows_fill(idx, nTile, aRowOf, aOff);
    CHECK_EQ(tile_short_postings(idx, nTile, aRowOf, aShort, aShortOff), nShort);
    tile_local_ids(idx->aPosting, nPost, 0, aLocal);

    uint64_t nShortSeen = 0, nRowSeen = 0;
    for (uint64_t l = 0; l < nList; l++) {
        uint64_t off = idx->aListOffset[l], len = idx->aListOffset[l + 1] - off, next = 0;
        const uint32_t *post = idx->aPosting + off;
        if (nTile == 1)
            CHECK_EQ(aRowOf[l], TILE_NO_ROW);
        if (aRowOf[l] != TILE_NO_ROW) {
            CHECK_EQ(aRowOf[l], nRowSeen);
            CHECK(len > (uint64_t)TILE_ROW_MIN_PER_TILE * nTile);
            nRowSeen++;
        } else if (nTile > 1) {
            CHECK_EQ(aShortOff[l], nShortSeen);
            CHECK(memcmp(aShort + aShortOff[l], post, len * sizeof *post) == 0);
            nShortSeen += len;
        }
        for (uint32_t t = 0; t < nTile; t++) {
            uint64_t b = 0, e = len;
            if (nTile > 1 && aRowOf[l] != TILE_NO_ROW) {
                const uint32_t *row = aOff + (uint64_t)aRowOf[l] * (nTile + 1);
                b = row[t];
                e = row[t + 1];
            } else if (nTile > 1) {
                const uint32_t *s = aShort + aShortOff[l];
                b = tiles_lower_bound(s, len, (uint64_t)t * TILE_OBJECTS);
                e = b + tiles_lower_bound(s + b, len - b, (uint64_t)(t + 1) * TILE_OBJECTS);
            }
            CHECK_EQ(b, next); /* the segments cover the list in order */
            for (uint64_t i = b; i < e; i++)
                CHECK_EQ((uint64_t)t * TILE_OBJECTS + aLocal[off + i], post[i]);
            next = e;
        }
        CHECK_EQ(next, len);
    }
    CHECK_EQ(nShortSeen, nShort);
    CHECK_EQ(nRowSeen, nRow);
    free(aRowOf);
    free(aShortOff);
    free(aLocal);
    free(aOff);
    free(aShort);
}

/* Objects 0..n-1: keyword 0 in most (a long list), a few Zipf-ish others, some in one object each. */
static genie_index *tiles_index(uint64_t seed, size_t n, const char *zName)
{
    uint64_t s = seed;
    test_objects objs;
    objs.n = n;
    objs.aKw = malloc(n * sizeof *objs.aKw);
    objs.aN = malloc(n * sizeof *objs.aN);
    CHECK(objs.aKw && objs.aN);
    for (size_t o = 0; o < n; o++) {
        objs.aKw[o] = malloc(6 * sizeof(uint32_t));
        CHECK(objs.aKw[o] != NULL);
        size_t m = 0;
        if (test_rand(&s) % 8)
            objs.aKw[o][m++] = 0;
        for (uint32_t j = (uint32_t)(test_rand(&s) % 4); j > 0; j--) {
            double u = (double)(test_rand(&s) >> 11) / 9007199254740992.0;
            objs.aKw[o][m++] = 1 + (uint32_t)(u * u * u * 3000);
        }
        if (test_rand(&s) % 50 == 0)
            objs.aKw[o][m++] = 10000 + (uint32_t)o; /* a list of one posting */
        objs.aN[o] = m;
    }
    genie_index *idx = test_build(&objs, 4096, test_path(zName));
    test_objects_free(&objs);
    return idx;
}

TEST(tile_lists_cover_every_posting)
{
    /* One tile (nothing searched), a tile and a bit, several tiles. */
    static const size_t aN[] = {1, 1000, 32768, 32769, 140000};
    for (size_t i = 0; i < sizeof aN / sizeof *aN; i++) {
        genie_index *idx = tiles_index(i + 1, aN[i], "tiles.genie");
        CHECK_EQ(idx->nPart, 1);
        tiles_check_index(idx);
        genie_index_close(idx);
    }
}

TEST(tile_lists_local_ids_threads)
{
    /* More than one grab per thread, a last grab cut short; one thread and many agree. */
    uint64_t n = (3u << 20) + 12345, s = 7;
    uint32_t *a = malloc(n * sizeof *a);
    uint16_t *b1 = malloc(n * sizeof *b1), *b4 = malloc(n * sizeof *b4);
    CHECK(a && b1 && b4);
    for (uint64_t i = 0; i < n; i++)
        a[i] = (uint32_t)test_rand(&s);
    a[0] = 0xffffffffu;
    a[1] = TILE_OBJECTS;
    tile_local_ids(a, n, 1, b1);
    tile_local_ids(a, n, 4, b4);
    for (uint64_t i = 0; i < n; i++) {
        CHECK_EQ(b1[i], a[i] % TILE_OBJECTS);
        CHECK_EQ(b4[i], b1[i]);
    }
    CHECK_EQ(b1[0], TILE_OBJECTS - 1);
    CHECK_EQ(b1[1], 0);
    tile_local_ids(a, 0, 0, b1); /* nothing to do */
    free(a);
    free(b1);
    free(b4);
}
