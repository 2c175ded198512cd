/*
 * genie: short documents (the text front-end).
 * The core API is genie/genie.h, which this header includes.
 */
#ifndef GENIE_TEXT_H
#define GENIE_TEXT_H

#include "genie/genie.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct genie_text_builder genie_text_builder;

/**
 * A text front-end (Zhou et al. (GENIE) V-B): documents are lower-cased and split
 * into words (maximal runs of ASCII letters and digits and of bytes >= 0x80,
 * so UTF-8 letters stay inside words); each distinct word becomes one
 * keyword through a vocabulary stored in the index.
 * @param[in] stop_words  words never indexed (NULL or n_stop = 0: none);
 *                        matched after lower-casing.
 * @param[in] store_records  non-zero: keep each document's text in the index.
 */
GENIE_API genie_status genie_text_builder_new(genie_text_builder **out, const genie_build_options *opt,
                                    const char *const *stop_words, size_t n_stop,
                                    int store_records);
/** Add one document; it gets the next object id. */
GENIE_API genie_status genie_text_builder_add(genie_text_builder *tb, const char *text, size_t len);
/** Write the index (see genie_builder_write()). */
GENIE_API genie_status genie_text_builder_write(genie_text_builder *tb, const char *path);
GENIE_API uint64_t genie_text_builder_count(const genie_text_builder *tb);
GENIE_API void genie_text_builder_free(genie_text_builder *tb);


/**
 * Attach a vocabulary: word i stands for keyword i.  Makes a text index.
 * The words are copied.  Words must be distinct and non-empty.
 */
GENIE_API genie_status genie_builder_set_vocabulary(genie_builder *b, const char *const *words,
                                          const size_t *lengths, size_t n_words);

/**
 * Append one query made from a text document through @p idx's vocabulary:
 * one item of weight 1 per distinct known word.  Unknown words are skipped.
 */
GENIE_API genie_status genie_queries_add_text(genie_queries *q, const genie_index *idx, const char *text,
                                    size_t len, uint32_t min_count);

/**
 * Look a word up in a text index's vocabulary (the word must already be
 * lower-cased).  @param[out] keyword  its keyword id.
 * @return GENIE_OK, or GENIE_EINVAL when the word is unknown or the index has
 *         no vocabulary.
 */
GENIE_API genie_status genie_index_word(const genie_index *idx, const char *word, size_t len,
                              uint32_t *keyword);

#ifdef __cplusplus
}
#endif

#endif /* GENIE_TEXT_H */
