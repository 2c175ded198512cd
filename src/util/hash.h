/*
 * Hashing and two small open-addressing hash maps used while building:
 *   util_u32map: 32-bit key -> 64-bit value (keyword -> count / cursor);
 *   util_strmap: byte string -> 32-bit id (word -> keyword), owning copies
 *                of its keys in one arena, ids given in insertion order.
 * Linear probing, power-of-two capacity, grown at 50% load.  Not
 * thread-safe.
 */
#ifndef GENIE_UTIL_HASH_H
#define GENIE_UTIL_HASH_H

#include <stddef.h>
#include <stdint.h>

#include "genie/genie.h"

/** MurmurHash3's 32-bit finaliser: a bijective mix of one word. */
static inline uint32_t util_fmix32(uint32_t h)
{
    h ^= h >> 16;
    h *= 0x85ebca6bu;
    h ^= h >> 13;
    h *= 0xc2b2ae35u;
    h ^= h >> 16;
    return h;
}

/** The next of the splitmix64 sequence whose state is *@p s (Steele, Lea, Flood, "Fast splittable
 *  pseudorandom number generators"): a seeded stream of well-mixed 64-bit values. */
static inline uint64_t util_splitmix64(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/** MurmurHash3 x86_32 of @p n bytes with @p seed. */
uint32_t util_murmur3_32(const void *data, size_t n, uint32_t seed);

typedef struct util_u32map {
    uint32_t *aKey;
    uint64_t *aVal;
    uint8_t *aUsed;
    size_t nCap; /* power of two */
    size_t nUsed;
} util_u32map;

genie_status util_u32map_init(util_u32map *m, size_t nExpect);
void util_u32map_free(util_u32map *m);
/** @return pointer to the value of @p key, inserting 0 if absent; NULL on OOM. */
uint64_t *util_u32map_upsert(util_u32map *m, uint32_t key);
/** @return pointer to the value of @p key, or NULL if absent. */
uint64_t *util_u32map_find(const util_u32map *m, uint32_t key);

typedef struct util_strmap {
    uint32_t *aSlot;     /* id + 1, 0 = empty */
    size_t nCap;
    uint32_t nIds;
    uint64_t *aOffset;   /* key i is aArena[aOffset[i] .. aOffset[i+1]) */
    size_t nOffsetCap;
    char *aArena;
    size_t nArena, nArenaCap;
} util_strmap;

genie_status util_strmap_init(util_strmap *m);
void util_strmap_free(util_strmap *m);
/**
 * Find @p key or insert it with the next id.
 * @param[out] id  its id; @param[out] isNew  non-zero when just inserted.
 */
genie_status util_strmap_intern(util_strmap *m, const char *key, size_t n, uint32_t *id, int *isNew);
/** @return non-zero and sets @p id when @p key is present. */
int util_strmap_find(const util_strmap *m, const char *key, size_t n, uint32_t *id);
static inline const char *util_strmap_key(const util_strmap *m, uint32_t id, size_t *n)
{
    *n = (size_t)(m->aOffset[id + 1] - m->aOffset[id]);
    /* Only empty keys leave the arena unallocated (NULL + 0 is undefined). */
    return *n ? m->aArena + m->aOffset[id] : "";
}

#endif
