/*
 * Word splitting for the short-document front-end (Zhou et al. (GENIE) V-B).
 *
 * A word is a maximal run of ASCII letters, ASCII digits and bytes >= 0x80
 * (so the letters of UTF-8 text stay inside words); ASCII letters are
 * lower-cased.  Everything else separates words.
 */
#ifndef GENIE_TRANSFORM_TEXT_H
#define GENIE_TRANSFORM_TEXT_H

#include <stddef.h>

#include "util/hash.h"

typedef struct text_cursor {
    const char *p, *pEnd;
    char *aWord;  /* the current word, lower-cased; owned by the cursor */
    size_t nWord, nCap;
} text_cursor;

void text_cursor_init(text_cursor *c, const char *text, size_t len);
/** Advance to the next word. @return 1 with c->aWord/nWord set, 0 at the end, -1 out of memory. */
int text_next_word(text_cursor *c);
void text_cursor_free(text_cursor *c);

/**
 * Add the words of @p n stop-word texts (split as documents are) to @p stop.
 * @return GENIE_OK, GENIE_ENOMEM.
 */
genie_status text_stop_words_add(util_strmap *stop, const char *const *words, size_t n);

#endif
