/*
 * The vocabulary's hash table (vocab.h): open addressing with linear
 * probing over 2^b slots, b the smallest with 2^b >= 2 n_words (load at
 * most one half, about 1.5 probes per lookup).  A slot holds the word's id
 * plus one (0: empty); the word itself is compared in the index's word
 * bytes.  The hash is MurmurHash3 of the word's bytes.
 */
#include "index/vocab.h"

#include <stdlib.h>
#include <string.h>

#include "util/hash.h"

typedef struct vocab {
    uint64_t mask; /* slots - 1 */
    uint32_t *aSlot;
} vocab;

static uint64_t vocab_hash(const char *z, size_t n)
{
    return util_murmur3_32(z, n, 0);
}

static int word_equal(const genie_index *idx, uint32_t id, const char *word, size_t len)
{
    uint64_t a = idx->aWordOffset[id], n = idx->aWordOffset[id + 1] - a;
    return n == len && memcmp(idx->aWordBytes + a, word, len) == 0;
}

static vocab *vocab_build(const genie_index *idx)
{
    /* The word sections were checked against the file at open, so the
     * table (at most 16 bytes a word) is bounded by what the file holds. */
    uint64_t nWord = idx->info.n_words, nSlot = 16;
    if (nWord >= UINT32_MAX)
        return NULL; /* slot ids are 32-bit: the sorted order serves */
    while (nSlot < 2 * nWord)
        nSlot *= 2;
    vocab *v = malloc(sizeof *v);
    uint32_t *aSlot = calloc(nSlot, sizeof *aSlot);
    if (!v || !aSlot) {
        free(v);
        free(aSlot);
        return NULL;
    }
    v->mask = nSlot - 1;
    v->aSlot = aSlot;
    for (uint64_t id = 0; id < nWord; id++) {
        uint64_t a = idx->aWordOffset[id];
        uint64_t s = vocab_hash(idx->aWordBytes + a, idx->aWordOffset[id + 1] - a) & v->mask;
        while (aSlot[s])
            s = (s + 1) & v->mask;
        aSlot[s] = (uint32_t)id + 1;
    }
    return v;
}

/* The index's table, built on first use (NULL: out of memory, or a view without derived state). */
static const vocab *vocab_get(const genie_index *idx)
{
    index_derived *d = idx->pDerived;
    if (!d)
        return NULL;
    vocab *v = __atomic_load_n((vocab **)&d->pVocab, __ATOMIC_ACQUIRE);
    if (v)
        return v;
    pthread_mutex_lock(&d->lock);
    v = (vocab *)d->pVocab;
    if (!v && (v = vocab_build(idx)) != NULL)
        __atomic_store_n((vocab **)&d->pVocab, v, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&d->lock);
    return v;
}

int index_vocab_find(const genie_index *idx, const char *word, size_t len, uint32_t *pKeyword)
{
    if (!idx->aWordOrder)
        return 0;
    const vocab *v = vocab_get(idx);
    if (!v)
        return -1;
    for (uint64_t s = vocab_hash(word, len) & v->mask; v->aSlot[s]; s = (s + 1) & v->mask) {
        uint32_t id = v->aSlot[s] - 1;
        if (word_equal(idx, id, word, len)) {
            *pKeyword = id;
            return 1;
        }
    }
    return 0;
}

void index_vocab_free(void *pVocab)
{
    vocab *v = pVocab;
    if (!v)
        return;
    free(v->aSlot);
    free(v);
}
