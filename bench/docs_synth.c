/*
 * docs_synth: a synthetic document collection with a link graph and a query
 * log for the docs index type at scale (docs/DOCS.md, docs/BENCHMARKS.md),
 * the stand-in for the web collections of Wang et al., "Efficient GPU-based
 * Query Processing with Pruned List Caching in Search Engines", section 4.1.
 *
 * Usage: docs_synth [-n DOCS] [-v WORDS] [-s ZIPF] [--min-len L] [--max-len L]
 *                   [--queries Q] [--seed S] [-j THREADS] OUTDIR
 * Writes OUTDIR/synth.txt (one document a line), synth-links.txt ("from to"
 * record numbers), synth-train.txt and synth-test.txt (Q queries each, one
 * a line).  Defaults: 10,000,000 documents, 1,048,576 words, Zipf exponent
 * 1.0, lengths 6..26 words, 10,000 queries a half, seed 1.
 *
 * The model, reproducible from the seed whatever the thread count (every
 * document draws from its own generator, seeded by the seed and its number):
 * - Words: the word of rank r (1..V) is spelled "w" + r in base 36; a
 *   document's length is uniform in [min-len, max-len] and each of its
 *   words is drawn independently with probability proportional to 1 / r^s
 *   (Zipf term frequencies; repeats give term frequencies above 1).
 * - Links: a document has no out-links with probability 0.2, else
 *   floor(u^(-1/1.5)) of them (u uniform in (0, 1]: a Pareto tail of index
 *   1.5, at most 1000); the target of each is the document of popularity
 *   rank floor(N^u') (log-uniform, so in-degrees follow a power law with
 *   exponent about 2), ranks mapped to record numbers by a fixed
 *   permutation (multiplication by a number prime to N, modulo N).
 * - Queries (as scripts/fetch-docs makes them for the real collections): a
 *   document chosen with popularity skew, the one of rank r (same
 *   permutation) with probability proportional to 1 / r^0.9; 1-4 distinct
 *   words of it (probabilities 0.30, 0.35, 0.20, 0.15), among those of rank
 *   above 32 (the stop-word analogue: never asked for), each drawn with
 *   weight 1 / sqrt(r), that is sqrt of its term frequency's expectation.
 *   Every query's AND result holds at least the document it came from, so
 *   none is dropped.  Train and test are the two halves of one sequence of
 *   independent queries (Wang et al. 4.1 split their log the same way).
 */
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define STOP_RANKS 32
#define MAX_OUT 1000

typedef struct synth {
    uint64_t nDoc, nWord, seed, mult;
    double s;
    unsigned minLen, maxLen;
    double *aCdf; /* aCdf[r-1] = P(rank <= r) */
} synth;

static uint64_t splitmix(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* Uniform in (0, 1]. */
static double unit(uint64_t *x)
{
    return ((double)(splitmix(x) >> 11) + 1.0) * (1.0 / 9007199254740992.0);
}

static uint64_t doc_state(const synth *g, uint64_t doc, uint64_t stream)
{
    uint64_t x = g->seed * 0x100000001b3ULL + doc * 4 + stream;
    return splitmix(&x);
}

static uint64_t word_rank(const synth *g, uint64_t *x)
{
    double u = unit(x) * g->aCdf[g->nWord - 1];
    uint64_t lo = 0, hi = g->nWord - 1;
    while (lo < hi) {
        uint64_t mid = (lo + hi) / 2;
        if (g->aCdf[mid] < u)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo + 1;
}

/* The ranks of document @p doc's words, in order; returns the count. */
static unsigned doc_words(const synth *g, uint64_t doc, uint64_t *aRank)
{
    uint64_t x = doc_state(g, doc, 0);
    unsigned len = g->minLen + (unsigned)(splitmix(&x) % (g->maxLen - g->minLen + 1));
    for (unsigned i = 0; i < len; i++)
        aRank[i] = word_rank(g, &x);
    return len;
}

static uint64_t rank_doc(const synth *g, uint64_t rank)
{
    return (uint64_t)(((unsigned __int128)rank * g->mult) % g->nDoc);
}

typedef struct buf {
    char *a;
    size_t n, cap;
} buf;

static void put(buf *b, const char *z, size_t n)
{
    if (b->n + n > b->cap) {
        size_t cap = b->cap ? b->cap * 2 : 1 << 16;
        while (cap < b->n + n)
            cap *= 2;
        b->a = realloc(b->a, cap);
        if (!b->a) {
            fprintf(stderr, "docs_synth: out of memory\n");
            exit(1);
        }
        b->cap = cap;
    }
    memcpy(b->a + b->n, z, n);
    b->n += n;
}

static void put_word(buf *b, uint64_t rank)
{
    char z[16];
    int n = 15;
    z[n] = 0;
    do {
        z[--n] = "0123456789abcdefghijklmnopqrstuvwxyz"[rank % 36];
        rank /= 36;
    } while (rank);
    z[--n] = 'w';
    put(b, z + n, (size_t)(15 - n));
}

static void put_uint(buf *b, uint64_t v, char end)
{
    char z[24];
    int n = 23;
    z[n] = end;
    do {
        z[--n] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    put(b, z + n, (size_t)(24 - n));
}

typedef struct chunk {
    const synth *g;
    uint64_t lo, hi;
    buf text, links;
} chunk;

static void *gen_chunk(void *arg)
{
    chunk *c = arg;
    const synth *g = c->g;
    uint64_t *aRank = malloc(g->maxLen * sizeof *aRank);
    for (uint64_t d = c->lo; d < c->hi; d++) {
        unsigned n = doc_words(g, d, aRank);
        for (unsigned i = 0; i < n; i++) {
            if (i)
                put(&c->text, " ", 1);
            put_word(&c->text, aRank[i]);
        }
        put(&c->text, "\n", 1);
        uint64_t x = doc_state(g, d, 1);
        if (unit(&x) <= 0.2)
            continue;
        double out = floor(pow(unit(&x), -1.0 / 1.5));
        unsigned nOut = out > MAX_OUT ? MAX_OUT : (unsigned)out;
        for (unsigned i = 0; i < nOut; i++) {
            uint64_t r = (uint64_t)floor(pow((double)g->nDoc, unit(&x)));
            uint64_t to = rank_doc(g, r >= g->nDoc ? g->nDoc - 1 : r);
            put_uint(&c->links, d, ' ');
            put_uint(&c->links, to, '\n');
        }
    }
    free(aRank);
    return NULL;
}

/* One query from the query generator state *x. */
static void gen_query(const synth *g, uint64_t *x, uint64_t *aRank, buf *b)
{
    double top = pow((double)g->nDoc, 0.1);
    for (;;) {
        uint64_t r = (uint64_t)floor(pow(1.0 + unit(x) * (top - 1.0), 10.0)) - 1;
        uint64_t doc = rank_doc(g, r >= g->nDoc ? g->nDoc - 1 : r);
        unsigned n = doc_words(g, doc, aRank), m = 0;
        /* distinct usable ranks */
        for (unsigned i = 0; i < n; i++) {
            int seen = aRank[i] <= STOP_RANKS;
            for (unsigned j = 0; j < m && !seen; j++)
                seen = aRank[j] == aRank[i];
            if (!seen)
                aRank[m++] = aRank[i];
        }
        if (m == 0)
            continue;
        double u = unit(x);
        unsigned want = u <= 0.30 ? 1 : u <= 0.65 ? 2 : u <= 0.85 ? 3 : 4;
        for (unsigned q = 0; q < want && m > 0; q++) {
            double total = 0;
            for (unsigned j = 0; j < m; j++)
                total += 1.0 / sqrt((double)aRank[j]);
            double v = unit(x) * total;
            unsigned j = 0;
            for (; j + 1 < m; j++) {
                v -= 1.0 / sqrt((double)aRank[j]);
                if (v <= 0)
                    break;
            }
            if (q)
                put(b, " ", 1);
            put_word(b, aRank[j]);
            aRank[j] = aRank[--m];
        }
        put(b, "\n", 1);
        return;
    }
}

static void write_file(const char *dir, const char *name, chunk *aChunk, unsigned n, int links, const buf *one)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    int ok = f != NULL;
    for (unsigned i = 0; ok && i < n; i++) {
        const buf *b = links ? &aChunk[i].links : &aChunk[i].text;
        ok = fwrite(b->a, 1, b->n, f) == b->n;
    }
    if (ok && one)
        ok = fwrite(one->a, 1, one->n, f) == one->n;
    if (f && fclose(f) != 0)
        ok = 0;
    if (!ok) {
        fprintf(stderr, "docs_synth: cannot write %s\n", path);
        exit(1);
    }
}

static uint64_t gcd(uint64_t a, uint64_t b)
{
    while (b) {
        uint64_t t = a % b;
        a = b;
        b = t;
    }
    return a;
}

static int usage(void)
{
    fprintf(stderr, "usage: docs_synth [-n DOCS] [-v WORDS] [-s ZIPF] [--min-len L] [--max-len L] "
                    "[--queries Q] [--seed S] [-j THREADS] OUTDIR\n");
    return 2;
}

int main(int argc, char **argv)
{
    synth g = {.nDoc = 10000000, .nWord = 1 << 20, .seed = 1, .s = 1.0, .minLen = 6, .maxLen = 26};
    uint64_t nQuery = 10000;
    unsigned nThread = 0;
    const char *zDir = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        int more = i + 1 < argc;
        if (strcmp(a, "-n") == 0 && more)
            g.nDoc = strtoull(argv[++i], NULL, 10);
        else if (strcmp(a, "-v") == 0 && more)
            g.nWord = strtoull(argv[++i], NULL, 10);
        else if (strcmp(a, "-s") == 0 && more)
            g.s = atof(argv[++i]);
        else if (strcmp(a, "--min-len") == 0 && more)
            g.minLen = (unsigned)atoi(argv[++i]);
        else if (strcmp(a, "--max-len") == 0 && more)
            g.maxLen = (unsigned)atoi(argv[++i]);
        else if (strcmp(a, "--queries") == 0 && more)
            nQuery = strtoull(argv[++i], NULL, 10);
        else if (strcmp(a, "--seed") == 0 && more)
            g.seed = strtoull(argv[++i], NULL, 10);
        else if (strcmp(a, "-j") == 0 && more)
            nThread = (unsigned)atoi(argv[++i]);
        else if (a[0] != '-' && !zDir)
            zDir = a;
        else
            return usage();
    }
    if (!zDir || g.nDoc < 2 || g.nDoc > 0xffffffffULL || g.nWord <= STOP_RANKS || g.nWord > 1ULL << 32 ||
        !(g.s > 0) || g.minLen < 1 || g.maxLen < g.minLen || g.maxLen > 100000 || nQuery == 0)
        return usage();
    if (nThread == 0) {
        long n = sysconf(_SC_NPROCESSORS_ONLN);
        nThread = n > 0 ? (unsigned)n : 1;
    }
    g.aCdf = malloc(g.nWord * sizeof *g.aCdf);
    if (!g.aCdf)
        return usage();
    double total = 0;
    for (uint64_t r = 1; r <= g.nWord; r++)
        g.aCdf[r - 1] = total += pow((double)r, -g.s);
    for (g.mult = 2654435761ULL % g.nDoc; g.mult < 2 || gcd(g.mult, g.nDoc) != 1; g.mult++)
        ;

    unsigned nChunk = nThread * 8;
    chunk *aChunk = calloc(nChunk, sizeof *aChunk);
    pthread_t *aTid = malloc(nThread * sizeof *aTid);
    for (unsigned i = 0; i < nChunk; i++)
        aChunk[i] = (chunk){.g = &g, .lo = g.nDoc * i / nChunk, .hi = g.nDoc * (i + 1) / nChunk};
    /* Every chunk stays in memory (the text is about 100 bytes a document) until written in order. */
    for (unsigned w = 0; w < nChunk; w += nThread) {
        for (unsigned t = 0; t < nThread; t++)
            pthread_create(&aTid[t], NULL, gen_chunk, &aChunk[w + t]);
        for (unsigned t = 0; t < nThread; t++)
            pthread_join(aTid[t], NULL);
    }
    write_file(zDir, "synth.txt", aChunk, nChunk, 0, NULL);
    write_file(zDir, "synth-links.txt", aChunk, nChunk, 1, NULL);
    uint64_t nLinkBytes = 0, nTextBytes = 0;
    for (unsigned i = 0; i < nChunk; i++) {
        nTextBytes += aChunk[i].text.n;
        nLinkBytes += aChunk[i].links.n;
        free(aChunk[i].text.a);
        free(aChunk[i].links.a);
    }

    uint64_t x = doc_state(&g, g.nDoc, 2);
    uint64_t *aRank = malloc(g.maxLen * sizeof *aRank);
    buf train = {0}, test = {0};
    for (uint64_t q = 0; q < nQuery; q++)
        gen_query(&g, &x, aRank, &train);
    for (uint64_t q = 0; q < nQuery; q++)
        gen_query(&g, &x, aRank, &test);
    write_file(zDir, "synth-train.txt", NULL, 0, 0, &train);
    write_file(zDir, "synth-test.txt", NULL, 0, 0, &test);
    printf("docs_synth: %llu documents (%.0f MB of text, %.0f MB of links), %llu words, Zipf %.2f, "
           "%llu + %llu queries, seed %llu, in %s\n",
           (unsigned long long)g.nDoc, (double)nTextBytes / 1e6, (double)nLinkBytes / 1e6,
           (unsigned long long)g.nWord, g.s, (unsigned long long)nQuery, (unsigned long long)nQuery,
           (unsigned long long)g.seed, zDir);
    free(aRank);
    free(train.a);
    free(test.a);
    free(aChunk);
    free(aTid);
    free(g.aCdf);
    return 0;
}
