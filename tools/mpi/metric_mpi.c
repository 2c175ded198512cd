/*
 * genie-mpi metric: the distributed List of Clusters of Gil-Costa, Marin
 * and Reyes, "Parallel query processing on distributed clustering
 * indexes" (J. Discrete Algorithms 7, 2009), section 4.
 *
 * Roles.  Rank 0 is the broker; the P processors are ranks 1..P (with
 * -np 1, rank 0 is broker and the one processor).  The broker reads the
 * queries and hands query q to processor q mod P, the query's ranker
 * (4.2: "a processor selected in a circular manner"), keeping at most
 * --active queries in flight per ranker and injecting a new one as one
 * finishes.  The ranker has every processor work on the query, merges
 * their answers by (distance, id) (k-NN: the best k) and sends the answer
 * to the broker, which prints the answers in query order exactly as
 * `genie search` prints the whole index's.
 *
 * Partitioning (4.2).  The objects are spread over the processors: object
 * o belongs to processor o mod P.
 *   LL (local index, local centers): each processor builds at start the LC
 *      of its own objects (genie_lc_build_share: centers chosen among them,
 *      the index's cluster size unless --local-cluster-size) and runs the
 *      whole sequential search on it for every query.
 *   LG (local index, global centers): the centers are those of the index
 *      file, built once over all objects.  The ranker alone compares the
 *      query with the centers (a centers walk) and sends the plan, the
 *      clusters to visit with their center distances, to every processor;
 *      each looks only at its own members of those clusters.  This is the
 *      paper's LG with one difference: its centers come from a parallel
 *      selection and each processor assigns its objects to them; here the
 *      whole LC is built by one `genie build`, and processor p holds the
 *      members o of each cluster with o mod P = p.
 * GG and GGL-T are not built (docs/SCALING.md says what was measured).
 *
 * Supersteps (4.1).  Everything moves in BSP supersteps: every rank reads
 * what arrived, gives each of its active walks one quantum of at most
 * --quantum distance computations (default: the index's cluster size K,
 * the paper's atom), in round-robin order, and ends the superstep with
 * one exchange (metric_msg.c).  A walk that has not finished keeps its
 * state for the next superstep.  One thread per rank: the paper's
 * processors are the ranks.
 *
 * Exactness.  Each processor's part is exact for the objects it covers
 * (genie/metric.h, "distributed search"), the parts cover every object
 * once, so the merge is the whole index's answer, ties by smaller id.
 */
#include <getopt.h>
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../cli.h"
#include "../itype.h"
#include "../json_out.h"
#include "genie/metric.h"
#include "genie_mpi.h"
#include "lines_out.h"
#include "metric_mpi.h"

static const char zHelp[] =
    "Usage: mpirun -np N genie-mpi metric [options] INDEX [QUERIES]\n"
    "\n"
    "A distributed exact search of a metric index (genie build -t metric):\n"
    "the List of Clusters over P processors (ranks 1..N-1; with -np 1 rank 0\n"
    "alone), after Gil-Costa, Marin and Reyes, section 4.  Rank 0, the\n"
    "broker, reads QUERIES (a vector file for vector metrics; one string or\n"
    "set per line for edit and jaccard, default standard input) and prints\n"
    "what `genie search` prints for INDEX, byte for byte (the JSON\n"
    "'distances' field counts the distances of all processors).  Object o\n"
    "belongs to processor o mod P.  Every rank reads INDEX.\n"
    "\n"
    "      --radius R          range search radius, or the k-NN limit (-r,\n"
    "                          deprecated: -r is a vectors search's radius)\n"
    "  -k, --k K               the K nearest neighbours\n"
    "  -p, --partition NAME    lg (default): the index's centers; the query's\n"
    "                          ranker compares the centers and sends the plan,\n"
    "                          every processor scans its own members;\n"
    "                          ll: every processor builds an LC of its own\n"
    "                          objects at start and searches it whole\n"
    "      --local-cluster-size K  ll: cluster size of the local indexes\n"
    "                          (default: the index's)\n"
    "      --quantum N         distances per query per superstep (default: the\n"
    "                          index's cluster size)\n"
    "      --active N          queries in flight per ranker (default 64)\n"
    "  -j, --threads N         ll: threads building each local index\n"
    "  -o, --output FILE       write the answers to FILE instead of standard\n"
    "                          output; FILE is replaced only when the run\n"
    "                          succeeds\n"
    "      --json              one JSON object per query instead of TSV\n"
    "      --show              print each answer's stored string or set\n"
    "      --stats             per processor: distances computed, queries\n"
    "                          ranked; supersteps and times (standard error)\n"
    "  -q, --quiet             no summary on standard error\n"
    "  -h, --help              show this help\n"
    "\n"
    "Exit status: 0 answered, 1 failed (the failing rank prints why), 2 usage.\n";

static int usage(int rank, const char *fmt, const char *zArg)
{
    if (rank == 0) {
        fputs("genie-mpi: ", stderr);
        fprintf(stderr, fmt, zArg);
        fputs("\nTry 'genie-mpi metric --help'.\n", stderr);
    }
    return MPI_EXIT_USAGE;
}

static int parse(int argc, char **argv, int rank, lcm_args *a)
{
    enum { OPT_LOCAL_K = 0x300, OPT_QUANTUM, OPT_ACTIVE, OPT_JSON, OPT_SHOW, OPT_STATS, OPT_RADIUS };
    static const struct option aOpt[] = {
        {"radius", required_argument, 0, OPT_RADIUS}, {"k", required_argument, 0, 'k'},
        {"partition", required_argument, 0, 'p'}, {"local-cluster-size", required_argument, 0, OPT_LOCAL_K},
        {"quantum", required_argument, 0, OPT_QUANTUM}, {"active", required_argument, 0, OPT_ACTIVE},
        {"threads", required_argument, 0, 'j'},  {"output", required_argument, 0, 'o'},
        {"json", no_argument, 0, OPT_JSON},      {"show", no_argument, 0, OPT_SHOW},
        {"stats", no_argument, 0, OPT_STATS},    {"quiet", no_argument, 0, 'q'},
        {"help", no_argument, 0, 'h'},           {0, 0, 0, 0}};
    memset(a, 0, sizeof *a);
    a->active = 64;
    opterr = rank == 0;
    optind = 1;
    int c;
    uint64_t v;
    char zErr[128];
    while ((c = getopt_long(argc, argv, "r:k:p:j:o:qh", aOpt, NULL)) != -1) {
        switch (c) {
        case 'r': /* a deprecated letter (tools/cli.h, short options) */
            if (rank == 0)
                cli_deprecated("genie-mpi metric", c, "--radius");
            /* fall through */
        case OPT_RADIUS: {
            char *end;
            double r = strtod(optarg, &end);
            if (end == optarg || *end || !(r >= 0) || !isfinite(r))
                return usage(rank, "--radius must be a number >= 0, not '%s'", optarg);
            a->radius = r;
            a->haveRadius = 1;
            break;
        }
        case 'k':
            if (!itype_parse_k(itype_by_type(GENIE_TYPE_METRIC), optarg, &a->k, zErr, sizeof zErr))
                return usage(rank, "%s", zErr);
            break;
        case 'p':
            if (strcmp(optarg, "lg") == 0 || strcmp(optarg, "LG") == 0)
                a->partition = PART_LG;
            else if (strcmp(optarg, "ll") == 0 || strcmp(optarg, "LL") == 0)
                a->partition = PART_LL;
            else
                return usage(rank, "--partition must be ll or lg, not '%s'", optarg);
            break;
        case OPT_LOCAL_K:
            if (!cli_parse_u64(optarg, 1, 1u << 20, &v))
                return usage(rank, "--local-cluster-size must be 1..1048576, not '%s'", optarg);
            a->localK = (uint32_t)v;
            break;
        case OPT_QUANTUM:
            if (!cli_parse_u64(optarg, 1, UINT32_MAX, &v))
                return usage(rank, "--quantum must be 1..4294967295, not '%s'", optarg);
            a->quantum = v;
            break;
        case OPT_ACTIVE:
            if (!cli_parse_u64(optarg, 1, 1u << 20, &v))
                return usage(rank, "--active must be 1..1048576, not '%s'", optarg);
            a->active = (uint32_t)v;
            break;
        case 'j':
            if (!cli_parse_u64(optarg, 1, 4096, &v))
                return usage(rank, "--threads must be 1..4096, not '%s'", optarg);
            a->threads = (unsigned)v;
            break;
        case 'o': a->zOutput = optarg; break;
        case OPT_JSON: a->json = 1; break;
        case OPT_SHOW: a->show = 1; break;
        case OPT_STATS: a->stats = 1; break;
        case 'q': a->quiet = 1; break;
        case 'h':
            if (rank == 0)
                cli_help(zHelp);
            return -1;
        default: return usage(rank, "bad option%s", "");
        }
    }
    if (!a->haveRadius && a->k == 0)
        return usage(rank, "give --radius R (range search) or -k K (k nearest)%s", "");
    if (a->localK && a->partition != PART_LL)
        return usage(rank, "--local-cluster-size is for --partition ll%s", "");
    if (optind >= argc || argc - optind > 2)
        return usage(rank, "expected INDEX and at most one QUERIES file%s", "");
    a->zIndex = argv[optind];
    a->zQueries = optind + 1 < argc ? argv[optind + 1] : "-";
    return MPI_EXIT_OK;
}


/* ------------------------------------------------------------ broker */

typedef struct lcm_broker {
    lcm_rank *s;
    const genie_index *idx;
    FILE *out;             /* stdout: written through lines (whole queries, -o FILE on success) */
    lines_out lines;
    genie_vectors qv;      /* vector queries */
    char **azQ;            /* or lines */
    size_t *anQ;
    uint32_t nQ, next, printed;
    uint32_t *aInFlight;   /* per ranker */
    genie_lc_hit **aaHit;  /* answers not printed yet */
    uint32_t *anHit;
    uint64_t *anDist;
    unsigned char *aHave;
    uint64_t nHitTotal, nDistTotal;
    int bad;               /* an answer record made no sense */
} lcm_broker;

/* Read every query line (the broker keeps them all: answers come back out of order). */
static int read_lines(lcm_broker *b, const char *zPath)
{
    cli_lines l;
    if (cli_lines_open(&l, zPath) != 0)
        return -1;
    size_t cap = 0;
    long n;
    int st = 0;
    while (st == 0 && (n = cli_lines_read(&l, 4096)) > 0) {
        for (long i = 0; i < n && st == 0; i++) {
            if (b->nQ == UINT32_MAX || (b->nQ == cap && (cap = cap ? 2 * cap : 1024,
                                                         !(b->azQ = realloc(b->azQ, cap * sizeof *b->azQ)) ||
                                                         !(b->anQ = realloc(b->anQ, cap * sizeof *b->anQ))))) {
                fprintf(stderr, "genie-mpi: too many queries or out of memory in %s\n", zPath);
                st = -1;
                break;
            }
            if (!(b->azQ[b->nQ] = malloc(l.anLine[i] + 1))) {
                fprintf(stderr, "genie-mpi: out of memory reading %s\n", zPath);
                st = -1;
                break;
            }
            memcpy(b->azQ[b->nQ], l.azLine[i], l.anLine[i] + 1);
            b->anQ[b->nQ++] = l.anLine[i];
        }
    }
    if (n < 0)
        st = -1;
    cli_lines_close(&l);
    return st;
}

static void on_answer(void *ctx, lcm_rd *r)
{
    lcm_broker *b = ctx;
    uint32_t q = lcm_u32(r);
    uint64_t nDist = lcm_u64(r);
    uint32_t n = lcm_u32(r);
    if (r->bad || q >= b->nQ || b->aHave[q] || n > (size_t)(r->end - r->p) / 12) {
        b->bad = 1;
        r->bad = 1;
        return;
    }
    genie_lc_hit *a = malloc((n ? n : 1) * sizeof *a);
    if (!a) {
        b->bad = 1;
        r->bad = 1;
        return;
    }
    for (uint32_t i = 0; i < n; i++) {
        a[i].object = lcm_u32(r);
        a[i].distance = lcm_f64(r);
    }
    b->aaHit[q] = a;
    b->anHit[q] = n;
    b->anDist[q] = nDist;
    b->aHave[q] = 1;
    b->aInFlight[q % (uint32_t)b->s->P]--;
}

/* The answers of query q, as `genie search` prints a metric index's. */
static void print_answer(lcm_broker *b, uint32_t q)
{
    const lcm_args *a = b->s->a;
    const genie_lc_hit *aHit = b->aaHit[q];
    uint32_t n = b->anHit[q];
    FILE *f = b->out;
    if (a->json)
        fprintf(f, "{\"query\":%llu,\"distances\":%llu,\"hits\":[", (unsigned long long)q + 1,
                (unsigned long long)b->anDist[q]);
    for (uint32_t i = 0; i < n; i++) {
        const char *z;
        size_t len;
        int has = a->show && genie_index_record(b->idx, aHit[i].object, &z, &len) == GENIE_OK;
        if (a->json) {
            fprintf(f, "%s{\"rank\":%u,\"object\":%u,\"distance\":%.6g", i ? "," : "", i + 1, aHit[i].object,
                    aHit[i].distance);
            if (has) {
                json_buf jb;
                json_buf_init(&jb);
                json_buf_puts(&jb, ",\"text\":");
                json_buf_string(&jb, z, len);
                fwrite(jb.z, 1, jb.n, f);
                json_buf_free(&jb);
            }
            fputc('}', f);
        } else {
            fprintf(f, "%llu\t%u\t%u\t%.6g", (unsigned long long)q + 1, i + 1, aHit[i].object, aHit[i].distance);
            if (has) {
                fputc('\t', f);
                cli_put_escaped(z, len);
            }
            fputc('\n', f);
        }
    }
    if (a->json)
        fputs("]}\n", f);
    lines_out_query_end(&b->lines); /* a failed write fails the run at the end (lines_out_close) */
    b->nHitTotal += n;
    b->nDistTotal += b->anDist[q];
    free(b->aaHit[q]);
    b->aaHit[q] = NULL;
}

/* Inject queries while their rankers have room; print what is complete. */
static void broker_turn(lcm_broker *b)
{
    lcm_rank *s = b->s;
    while (b->next < b->nQ) {
        uint32_t p = b->next % (uint32_t)s->P;
        if (b->aInFlight[p] >= s->a->active)
            break;
        lcm_buf *o = &s->net.aOut[lcm_proc_rank(s, (int)p)];
        uint32_t len = s->dim ? s->dim * (uint32_t)sizeof(float) : (uint32_t)b->anQ[b->next];
        lcm_put_u32(o, LCM_QUERY);
        lcm_put_u32(o, b->next);
        lcm_put_u32(o, len);
        if (s->dim)
            lcm_put(o, b->qv.data + (size_t)b->next * s->dim, len);
        else
            lcm_put(o, b->azQ[b->next], len);
        b->aInFlight[p]++;
        b->next++;
    }
    while (b->printed < b->nQ && b->aHave[b->printed])
        print_answer(b, b->printed++);
}

static void broker_free(lcm_broker *b)
{
    lines_out_close(&b->lines, 0); /* still open: the run failed, -o FILE stays as it was */
    genie_vectors_free(&b->qv);
    for (uint32_t i = 0; b->azQ && i < b->nQ; i++)
        free(b->azQ[i]);
    for (uint32_t i = 0; b->aaHit && i < b->nQ; i++)
        free(b->aaHit[i]);
    free(b->azQ);
    free(b->anQ);
    free(b->aInFlight);
    free(b->aaHit);
    free(b->anHit);
    free(b->anDist);
    free(b->aHave);
}

/* The broker's set-up: queries read and checked, answer slots, the output. */
static int broker_open(lcm_broker *b, lcm_rank *s, const genie_index *idx)
{
    const lcm_args *a = s->a;
    b->s = s;
    b->idx = idx;
    if (s->dim) {
        if (strcmp(a->zQueries, "-") == 0) {
            fprintf(stderr, "genie-mpi: a vector metric index needs a QUERIES file\n");
            return -1;
        }
        genie_status rc = genie_vectors_read(a->zQueries, &b->qv);
        if (rc != GENIE_OK) {
            fprintf(stderr, "genie-mpi: %s\n", genie_last_error());
            return -1;
        }
        if (b->qv.n && b->qv.dim != s->dim) {
            fprintf(stderr, "genie-mpi: %s: queries have %u dimensions, the index %u\n", a->zQueries, b->qv.dim,
                    s->dim);
            return -1;
        }
        if (b->qv.n > UINT32_MAX) {
            fprintf(stderr, "genie-mpi: %s: too many queries\n", a->zQueries);
            return -1;
        }
        b->nQ = (uint32_t)b->qv.n;
    } else if (read_lines(b, a->zQueries) != 0) {
        return -1;
    }
    size_t n = b->nQ ? b->nQ : 1;
    b->aInFlight = calloc((size_t)s->P, sizeof *b->aInFlight);
    b->aaHit = calloc(n, sizeof *b->aaHit);
    b->anHit = calloc(n, sizeof *b->anHit);
    b->anDist = calloc(n, sizeof *b->anDist);
    b->aHave = calloc(n, 1);
    if (!b->aInFlight || !b->aaHit || !b->anHit || !b->anDist || !b->aHave) {
        fprintf(stderr, "genie-mpi: out of memory for %u queries\n", b->nQ);
        return -1;
    }
    if (lines_out_open(&b->lines, a->zOutput) != 0)
        return -1;
    b->out = stdout; /* now the whole-query stream (cli_put_escaped writes to stdout) */
    return 0;
}

/* ------------------------------------------------------------ set-up */

/* Agree whether set-up worked; the first failing rank's message is printed by it. */
static int agree(int failed)
{
    int any;
    MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    return any;
}

/*
 * A processor's index: LG the index itself; LL the LC of its share, built
 * into a temporary file (unlinked once open).  With one processor and the
 * index's cluster size the share is the index.
 */
static int open_processor(lcm_rank *s, genie_index *idx, const genie_lc_info *info, genie_index **pLocal)
{
    const lcm_args *a = s->a;
    *pLocal = NULL;
    uint32_t K = a->localK ? a->localK : info->cluster_size;
    genie_status rc;
    if (a->partition == PART_LL && (s->P > 1 || K != info->cluster_size)) {
        const char *zDir = getenv("TMPDIR");
        char zPath[4096];
        snprintf(zPath, sizeof zPath, "%s/genie-mpi-ll-%ld-%d.genie", zDir && *zDir ? zDir : "/tmp", (long)getpid(),
                 s->p);
        genie_lc_params prm = {info->metric, K, info->centers, 0, info->seed, info->separator, a->threads};
        rc = genie_lc_build_share(idx, (uint32_t)s->P, (uint32_t)s->p, &prm, NULL, zPath);
        if (rc == GENIE_OK)
            rc = genie_index_open(zPath, pLocal);
        unlink(zPath);
        if (rc != GENIE_OK)
            return lcm_fail(s, "building the local index", rc);
        idx = *pLocal;
    }
    rc = genie_lc_walker_new(idx, &s->walker);
    return rc == GENIE_OK ? 0 : lcm_fail(s, "opening the index", rc);
}

/* Per processor: distances computed and queries ranked (--stats). */
static void print_stats(const lcm_rank *s, double tSetup, double tSearch, uint32_t nQ)
{
    uint64_t mine[3] = {s->nDist, s->nRanked, s->nPlanned};
    uint64_t *aAll = s->rank == 0 ? calloc(3 * (size_t)s->size, sizeof *aAll) : NULL;
    uint64_t dummy[3];
    MPI_Gather(mine, 3, MPI_UINT64_T, aAll ? aAll : dummy, 3, MPI_UINT64_T, 0, MPI_COMM_WORLD);
    if (s->rank != 0 || !aAll)
        return;
    uint64_t sum = 0, max = 0, planned = 0;
    for (int p = 0; p < s->P; p++) {
        const uint64_t *x = aAll + 3 * lcm_proc_rank(s, p);
        planned += x[2];
        fprintf(stderr, "genie-mpi: processor %d (rank %d): %llu distances, %llu queries ranked\n", p,
                lcm_proc_rank(s, p), (unsigned long long)x[0], (unsigned long long)x[1]);
        sum += x[0];
        if (x[0] > max)
            max = x[0];
    }
    if (s->a->partition == PART_LG)
        fprintf(stderr, "genie-mpi: LG plans: %.1f clusters with members to visit per query\n",
                nQ ? (double)planned / nQ : 0.0);
    fprintf(stderr,
            "genie-mpi: %s over %d processors: %.1f distances per query, busiest processor %.3f of the mean; "
            "%llu supersteps (quantum %llu); set-up %.3f s, search %.3f s\n",
            s->a->partition == PART_LL ? "LL" : "LG", s->P, nQ ? (double)sum / nQ : 0.0,
            sum ? (double)max * s->P / (double)sum : 0.0, (unsigned long long)s->net.nStep,
            (unsigned long long)s->quantum, tSetup, tSearch);
    free(aAll);
}

int lcm_main(int argc, char **argv, int rank, int size)
{
    lcm_args a;
    int st = parse(argc, argv, rank, &a);
    if (st != MPI_EXIT_OK)
        return st < 0 ? MPI_EXIT_OK : st;
    double t0 = util_now();
    lcm_rank s;
    memset(&s, 0, sizeof s);
    s.a = &a;
    s.rank = rank;
    s.size = size;
    s.P = size > 1 ? size - 1 : 1;
    s.p = size > 1 ? rank - 1 : 0;
    lcm_broker b;
    memset(&b, 0, sizeof b);
    genie_index *idx = NULL, *local = NULL;
    genie_lc_info info;
    int failed = 0;
    genie_status rc = genie_index_open(a.zIndex, &idx);
    if (rc == GENIE_OK)
        rc = genie_lc_index_info(idx, &info);
    if (rc != GENIE_OK)
        failed = lcm_fail(&s, a.zIndex, rc);
    if (!failed && lcm_net_init(&s.net, rank, size) != 0)
        failed = lcm_fail(&s, "out of memory", GENIE_OK);
    if (!failed) {
        s.dim = info.dim;
        s.quantum = a.quantum ? a.quantum : a.localK ? a.localK : info.cluster_size;
        if (s.p >= 0)
            failed = open_processor(&s, idx, &info, &local);
    }
    /* Errors every rank finds alike (no index, not a metric index) are printed by rank 0 alone. */
    int rank0Failed = failed;
    MPI_Bcast(&rank0Failed, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (failed && (rank == 0 || !rank0Failed))
        fprintf(stderr, "genie-mpi: rank %d: %s\n", rank, s.zErr);
    if (!failed && rank == 0 && broker_open(&b, &s, idx) != 0)
        failed = -1;
    if (agree(failed != 0)) {
        st = MPI_EXIT_FAIL;
        goto done;
    }
    double t1 = util_now();
    int flag = LCM_GO;
    for (;;) {
        int bad = lcm_on_records(&s, rank == 0 ? on_answer : NULL, &b) != 0;
        if (rank == 0 && !bad) {
            if (b.bad)
                bad = lcm_fail(&s, "a malformed answer arrived", GENIE_OK) != 0;
            broker_turn(&b);
            if (b.printed == b.nQ && flag == LCM_GO)
                flag = LCM_DONE;
        }
        if (!bad && s.p >= 0)
            bad = lcm_run_quanta(&s) != 0;
        if (bad) {
            fprintf(stderr, "genie-mpi: rank %d: %s\n", rank, s.zErr);
            flag = LCM_FAILED;
        }
        lcm_exchange(&s.net, &flag);
        if (flag != LCM_GO)
            break;
    }
    double t2 = util_now();
    st = flag == LCM_DONE ? MPI_EXIT_OK : MPI_EXIT_FAIL;
    if (rank == 0 && lines_out_close(&b.lines, st == MPI_EXIT_OK) != 0 && st == MPI_EXIT_OK) {
        fprintf(stderr, "genie-mpi: cannot write the answers\n");
        st = MPI_EXIT_FAIL;
    }
    if (a.stats && flag == LCM_DONE)
        print_stats(&s, t1 - t0, t2 - t1, b.nQ);
    if (rank == 0 && st == MPI_EXIT_OK && !a.quiet)
        fprintf(stderr,
                "genie-mpi: %u queries, %llu answers; %.1f distances per query (%s over %d processors, of %llu "
                "objects), %.3f s\n",
                b.nQ, (unsigned long long)b.nHitTotal, b.nQ ? (double)b.nDistTotal / b.nQ : 0.0,
                a.partition == PART_LL ? "LL" : "LG", s.P, (unsigned long long)info.n_objects, t2 - t1);
done:
    if (rank == 0)
        broker_free(&b);
    lcm_rank_free(&s);
    genie_lc_walker_free(s.walker);
    lcm_net_free(&s.net);
    genie_index_close(local);
    genie_index_close(idx);
    return st;
}
