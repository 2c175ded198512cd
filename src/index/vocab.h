/*
 * The vocabulary's hash table: word -> keyword id for text indexes.
 *
 * The file stores the vocabulary sorted (aWordOrder), which a binary search
 * can use, but a search touches about log2(n_words) words scattered over
 * the word bytes: on a 50,000-word vocabulary, 16 cache misses per query
 * word, 7-15 us for a 40-word query (measured on the fortunes), which is
 * more than the GPU spends answering it.  The table is built from the
 * stored words on the first lookup of an open index, kept in its derived
 * state until genie_index_close, and read without a lock afterwards.
 */
#ifndef GENIE_INDEX_VOCAB_H
#define GENIE_INDEX_VOCAB_H

#include <stddef.h>
#include <stdint.h>

#include "index/index.h"

/**
 * Look @p word (@p len bytes, already lower-cased) up in @p idx's
 * vocabulary.  Thread-safe.  Sets no error message: a miss is an ordinary
 * outcome for a query word.
 * @return 1 and *pKeyword when found, 0 when the word is not in the
 *         vocabulary or the index has none, -1 when out of memory building
 *         the table (the caller falls back to the sorted order).
 */
int index_vocab_find(const genie_index *idx, const char *word, size_t len, uint32_t *pKeyword);

/** Free a table built by index_vocab_find (genie_index_close); NULL is a no-op. */
void index_vocab_free(void *pVocab);

#endif
