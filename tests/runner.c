/*
 * The test runner: one list of tests, each run in its own process with its
 * own timeout; golden CLI cases (the .test files in tests/golden)
 * join the list at start.  Prints one line per test and, last,
 * "N passed, N failed"; exits non-zero when any failed.
 *
 * Usage: genie_tests [SUBSTRING]   run the tests whose name contains it
 */
#include <dirent.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "golden.h"
#include "test.h"
#include "util/clock.h"

char g_zTestDir[1024];

#define TESTS(X)                                  \
    X(model_weights, 10)                          \
    X(model_overlapping_ranges, 10)               \
    X(model_duplicate_keywords, 10)               \
    X(model_ties_smaller_id_first, 10)            \
    X(model_k_larger_than_matches, 10)            \
    X(model_empty_query_and_no_match, 10)         \
    X(model_min_count, 10)                        \
    X(model_bad_items_rejected, 10)               \
    X(model_k_zero_and_huge, 10)                  \
    X(model_count_overflow_rejected, 60)          \
    X(model_backends_agree_on_empty_index, 10)    \
    X(model_options_sizes, 10)                    \
    X(backend_table_test_entry, 60)               \
    X(backend_names_and_errors, 30)               \
    X(backend_several_devices, 60)                \
    X(backend_registry_capabilities, 30)          \
    X(backend_registry_reads_an_older_version, 30) \
    X(backend_registry_reads_by_version, 30)      \
    X(backend_cpu_never_maps_cuda, 30)            \
    X(backend_blas_opened_on_first_exact_search, 30) \
    X(install_exports_only_genie_symbols, 30)     \
    X(type_table_has_a_complete_entry_per_type, 10) \
    X(type_table_k_limits, 10)                    \
    X(install_release_has_no_test_hooks, 30)      \
    X(install_struct_layouts_complete, 10)        \
    X(cli_options_match_help_and_letters, 10)     \
    X(cli_help_texts_follow_the_letters, 60)      \
    X(cli_short_letters_registry, 10)             \
    X(install_pkg_config_program, 120)            \
    X(oracle_random_small, 240)                   \
    X(oracle_random_skewed, 480)                  \
    X(oracle_threads_deterministic, 120)          \
    X(cpu_blocks_skewed_against_brute_force, 240) \
    X(cpu_blocks_ties_and_large_k, 240)           \
    X(crc32c_paths_agree, 60)                     \
    X(postings_check_blocked_and_by_lists, 120)   \
    X(tile_lists_cover_every_posting, 120)        \
    X(tile_lists_local_ids_threads, 60)           \
    X(format_round_trip, 30)                      \
    X(format_frontend_parameters, 30)             \
    X(format_labels_and_records, 30)              \
    X(format_sublists, 30)                        \
    X(format_overwrite_is_atomic, 30)             \
    X(corrupt_truncate_every_offset, 240)         \
    X(corrupt_flip_every_byte, 240)               \
    X(corrupt_foreign_and_empty_files, 30)        \
    X(text_tokenizer, 10)                         \
    X(text_index_and_queries, 30)                 \
    X(text_stop_words, 30)                        \
    X(text_vocabulary_lookup, 30)                 \
    X(vectors_read_formats, 10)               \
    X(vectors_read_malformed, 10)             \
    X(vectors_exact_oracle, 120)              \
    X(vectors_exact_bad_arguments, 10)        \
    X(knn_graph_random_against_brute_force, 60) \
    X(knn_graph_real_fashion_mnist, 60)       \
    X(knn_graph_blocks_and_largest_k, 120)    \
    X(knn_graph_bad_input, 30)                \
    X(knn_graph_ivf_equals_per_object_searches, 120) \
    X(knn_graph_ivf_short_rows_and_blocks, 120) \
    X(knn_graph_ivf_bad_arguments, 30)        \
    X(exact_bound_operand_rounding, 30)       \
    X(exact_bound_candidates_are_the_direct_answer, 240) \
    X(exact_cpu_search_is_the_direct_answer, 240) \
    X(exact_precision_names_and_refusals, 30) \
    X(vectors_lsh_l2, 60)                     \
    X(vectors_lsh_l1, 60)                     \
    X(vectors_lsh_cosine, 60)                 \
    X(vectors_lsh_bad_arguments, 30)          \
    X(vectors_lsh_hash_count, 30)             \
    X(ivf_flat_equals_oracle, 240)            \
    X(ivf_flat_all_lists_equal_exact_search, 120) \
    X(ivf_pq_equals_oracle, 240)              \
    X(ivf_build_deterministic_and_versioned, 60) \
    X(ivf_bad_arguments, 60)                  \
    X(ivf_parts_hold_their_lists, 120)        \
    X(ivf_recall_targets_met, 300)            \
    X(ivf_batches_equal_cpu_and_brute_force, 120) \
    X(ivf_batches_wide_unaligned_rows, 60) \
    X(kmeans_sample_and_fixed_point, 60)      \
    X(kmeans_precision_tf32, 60)              \
    X(io_records_and_parsing, 30)                 \
    X(parts_random_identical, 120)                \
    X(parts_random_skewed_identical, 120)         \
    X(parts_tie_run_across_boundaries, 30)        \
    X(parts_layout_and_options, 30)               \
    X(parts_text_identical, 60)                   \
    X(parts_corrupt_truncate_and_flip, 120)       \
    X(parts_threads_and_stats, 60)                \
    X(parts_build_gpu_memory_split, 60)           \
    X(parts_build_sets_identical, 60)             \
    X(parts_build_sequences_identical, 60)        \
    X(parts_build_table_identical, 60)            \
    X(parts_build_vectors_identical, 60)          \
    X(parts_stream_identical, 120)                \
    X(parts_stream_budget_too_small, 30)          \
    X(metric_l2_equals_brute_force, 400)          \
    X(metric_l1_equals_brute_force, 400)          \
    X(metric_cosine_equals_brute_force, 400)      \
    X(metric_edit_equals_brute_force, 400)        \
    X(metric_jaccard_equals_brute_force, 400)     \
    X(metric_batched_equals_brute_force, 400)     \
    X(metric_walks_and_shares_equal_brute_force, 300) \
    X(metric_corrupt_and_forged_rejected, 60)     \
    X(seq_edit_distance_random, 30) \
    X(seq_ordered_ngrams, 10) \
    X(seq_certified_equals_brute_force, 400) \
    X(seq_certify_rounds_raise_k, 30) \
    X(seq_edge_cases_and_bad_input, 30)                  \
    X(seq_certify_equals_brute_force, 120) \
    X(seq_certify_batched_edit_backend, 120) \
    X(seq_certify_only_keeps_the_cheap_mode, 60) \
    X(metric_edit_batched_edit_backend, 60) \
    X(seq_certify_parts_range, 60) \
    X(sets_parse_rules, 10) \
    X(sets_exact_and_minhash_against_oracle, 60) \
    X(sets_bad_input, 10)\
    X(sets_exact_random_against_oracle, 120) \
    X(sets_exact_fortunes_against_oracle, 120) \
    X(sets_exact_ties_by_smaller_id, 30) \
    X(sets_exact_through_a_backend_capability, 60) \
    X(sets_exact_sliced_batch_through_a_backend, 60) \
    X(sets_exact_big_queries_beside_the_backend, 60) \
    X(sets_exact_empty_query_first, 30) \
    X(sets_exact_parts_merge_to_the_whole, 120) \
    X(sets_exact_choice_and_plan, 60) \
    X(sets_exact_version1_and_bad_options, 30) \
    X(sim_cpu_and_block_against_brute_force, 120) \
    X(sim_block_long_lists, 120) \
    X(sim_plan_elements_orders_and_drops_repeats, 10) \
    X(recall_sets_meets_target, 240) \
    X(recall_sequences_meets_target, 240) \
    X(recall_vectors_meets_target, 240) \
    X(recall_vectors_build_target, 60) \
    X(recall_bad_targets, 60) \
    X(recall_side_file_rejects_corruption, 120) \
    X(recall_side_file_edit_levels, 60) \
    X(recall_build_fails_when_its_side_file_cannot_be_written, 60) \
    X(csv_quoting, 10)                            \
    X(csv_malformed, 10)                          \
    X(csv_numbers, 10)                            \
    X(arff_parse, 10)                             \
    X(arff_malformed, 10)                         \
    X(csv_arff_fuzz, 60) \
    X(table_query_rules, 30)                      \
    X(table_bad_input, 30)                        \
    X(table_arff_mixed_columns, 30)               \
    X(table_sqlite_oracle, 120) \
    X(table_params_truncate_and_flip, 60)        \
    X(layout_include_graph, 30)                  \
    X(layout_comment_refs, 30)                    \
    X(format_index_file_type, 30) \
    X(format_keyword_range_dense_and_sparse, 30) \
    X(malicious_fields_every_type, 600) \
    X(malicious_sets_element_lists, 30) \
    X(hardening_vectors_width_zero, 30) \
    X(hardening_vectors_huge_parameters, 30) \
    X(hardening_fvecs_gz_zeros, 60) \
    X(hardening_query_without_items, 30) \
    X(hardening_table_empty_row_and_strings, 30) \
    X(hardening_vectors_extreme_values, 30) \
    X(hardening_cli_truncated_index, 60) \
    X(hardening_stale_temporary_files, 30) \
    X(hardening_outputs_never_destroyed, 30) \
    X(search_postings_estimate_counts_every_item, 30)      \
    X(search_cancel_flag_stops_every_backend, 60)          \
    X(search_cancel_from_another_thread_stops_a_long_search, 120) \
    X(search_index_copy_ignores_the_file, 60)              \
    X(serve_answers_equal_cli_json, 60)                     \
    X(serve_metric_answers_equal_cli_json, 60)              \
    X(serve_ivf_answers_equal_cli_json, 60)                 \
    X(serve_recall_requests_run_alone, 60)                  \
    X(serve_endpoints_and_auth, 30)                         \
    X(serve_bad_command_lines, 30)                          \
    X(serve_64_concurrent_clients_get_their_own_answers, 60) \
    X(serve_64_concurrent_clients_get_their_own_answers_pool, 60) \
    X(serve_overload_gives_503_and_the_rest_is_answered, 60) \
    X(serve_overload_gives_503_and_the_rest_is_answered_pool, 60) \
    X(serve_timeouts_give_504, 30)                          \
    X(serve_timeouts_give_504_pool, 30)                     \
    X(serve_malformed_bodies_get_4xx, 60)                   \
    X(serve_limits_413_400_504, 30)                         \
    X(serve_reload_under_load, 60)                          \
    X(serve_reload_under_load_pool, 60)                     \
    X(serve_sigterm_drains_requests_in_flight, 30)          \
    X(serve_sigterm_drains_requests_in_flight_pool, 30)     \
    X(serve_slow_clients_are_cut_off, 60)                   \
    X(serve_slow_clients_are_cut_off_pool, 60)              \
    X(serve_connection_caps_answer_503_or_close, 60)        \
    X(serve_connection_caps_answer_503_or_close_pool, 60)   \
    X(serve_costly_requests_refused_and_timeouts_cancel, 90) \
    X(serve_costly_requests_refused_and_timeouts_cancel_pool, 90) \
    X(serve_sigterm_cancels_and_a_second_signal_exits, 90)  \
    X(serve_sigterm_cancels_and_a_second_signal_exits_pool, 90) \
    X(serve_drain_answers_close_their_connections, 60)      \
    X(serve_request_memory_is_bounded, 90)                  \
    X(serve_out_of_memory_is_503, 60)                       \
    X(serve_big_bodies_are_parsed_off_the_http_threads, 90) \
    X(serve_index_files_changed_under_the_server, 60)       \
    X(serve_reloads_take_turns_and_count, 60)               \
    X(serve_http_hygiene, 60)                               \
    X(serve_fuzz_findings, 30)                              \
    X(arrays_builder_add_many_same_index, 30)     \
    X(arrays_queries_and_results_copy, 30)        \
    X(arrays_bad_input_named, 10)                 \
    X(python_suite, 900) \
    X(search_parts_ranges_match_naive, 60)        \
    X(search_parts_disjoint_ranges_merge_to_whole, 30) \
    X(search_parts_errors_and_queries_get, 30)   \
    X(mpi_keywords_equal_one_process, 180)        \
    X(mpi_text_equal_one_process, 180)            \
    X(mpi_shard_map_unequal_and_empty, 180)       \
    X(mpi_ranker_errors_fail_the_run, 180)        \
    X(mpi_late_ranker_timeout_and_partial, 180)   \
    X(mpi_dead_rank_ends_the_job, 120) \
    X(mpi_killed_ranker_leaves_no_partial_answer_file, 180) \
    X(mpi_lines_out_writes_whole_queries, 30) \
    X(mpi_vectors_equal_one_process, 180) \
    X(mpi_vectors_lsh_union_of_shard_candidates, 120) \
    X(mpi_ivf_equal_one_process, 120) \
    X(mpi_sequences_equal_one_process, 180) \
    X(mpi_sets_exact_equal_one_process, 180) \
    X(mpi_gpus_and_type_options, 120) \
    X(search_parts_vectors_exact_brute_force, 60) \
    X(mpi_serve_answers_equal_genie_serve, 240) \
    X(metric_mpi_l2_equals_one_process, 420)      \
    X(metric_mpi_edit_equals_one_process, 420)    \
    X(metric_mpi_cosine_equals_one_process, 420)  \
    X(metric_mpi_errors, 120)                     \
    X(docs_hand_computed_bm25, 10) \
    X(docs_pagerank_hand_computed, 10) \
    X(docs_random_against_slow_path, 120) \
    X(docs_early_termination_equals_exhaustive, 240) \
    X(docs_all_ties_and_single_terms, 30) \
    X(docs_bad_input, 30) \
    X(docs_corrupt_sections_rejected, 60) \
    X(docs_cache_modes_equal_exhaustive, 240) \
    X(docs_gpu_host_side_equals_exhaustive, 120) \
    X(docs_cache_plan_files_rejected, 30) \
    X(filter_keywords_equal_index_of_allowed, 120) \
    X(filter_keywords_blocks_and_tiles, 60) \
    X(filter_labels_and_bitmap_calls, 30) \
    X(filter_text_equal_index_of_allowed, 60) \
    X(filter_table_equal_filtered_full_ranking, 60) \
    X(filter_docs_equal_filtered_full_ranking, 60) \
    X(filter_sets_equal_index_of_allowed, 60) \
    X(filter_sequences_equal_index_of_allowed, 60) \
    X(filter_vectors_equal_index_of_allowed, 60) \
    X(filter_exact_vectors_every_metric, 120) \
    X(filter_metric_equal_index_of_allowed, 60) \
    X(filter_ivf_scans_equal_filtered_candidates, 120) \
    X(live_keywords_equal_rebuilt_index, 120) \
    X(live_search_passes_report_and_fail_on_the_caller, 30) \
    X(live_text_sets_sequences_table_equal_rebuilt_index, 120) \
    X(live_sets_exact_filtered_equal_rebuilt_index, 120) \
    X(live_ivf_equals_compacted_index, 120) \
    X(live_vectors_equal_rebuilt_index, 120) \
    X(live_metric_vectors_equal_rebuilt_index, 120) \
    X(live_kill_writer_keeps_acknowledged_writes, 240) \
    X(live_torn_last_record_dropped, 60) \
    X(live_damaged_log_named_error, 120) \
    X(live_kill_during_compaction_old_or_new, 60) \
    X(live_full_disk_refuses_the_write, 60) \
    X(live_writer_threads_add_at_once, 60) \
    X(live_reader_process_sees_acknowledged_writes, 60) \
    X(live_second_writer_process_refused, 60) \
    X(live_refresh_snapshot_shares_the_file, 60) \
    X(live_refresh_words_without_objects, 30) \
    /* ~100 CLI searches: on cuda each makes a CUDA context (21 s alone on an H200, past 120 s beside 7 runners) */ \
    X(serve_live_writes_equal_cli, 360) \
    X(serve_live_concurrent_writes_and_searches, 120) \
    X(serve_live_lock_and_refusals, 60)

#define DECLARE(name, secs) void test_##name(void);
TESTS(DECLARE)

typedef struct test_entry {
    const char *zName;
    void (*fn)(void);
    unsigned timeout;
    int golden; /* index into the golden cases, or -1 */
} test_entry;

#define ENTRY(name, secs) {#name, test_##name, secs, -1},
static const test_entry aBuiltin[] = {TESTS(ENTRY)};

static int g_goldenIndex;
static void run_golden_case(void)
{
    golden_run(g_goldenIndex);
}

static void remove_tree(const char *path)
{
    DIR *d = opendir(path);
    if (d) {
        struct dirent *e;
        while ((e = readdir(d)) != NULL) {
            if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
                continue;
            char z[2048];
            snprintf(z, sizeof z, "%s/%s", path, e->d_name);
            struct stat st;
            if (lstat(z, &st) == 0 && S_ISDIR(st.st_mode))
                remove_tree(z);
            else
                unlink(z);
        }
        closedir(d);
    }
    rmdir(path);
}

/* Run one test in a child; returns 1 when it passed. */
static int run_one(const test_entry *t)
{
    const char *zTmp = getenv("TMPDIR");
    snprintf(g_zTestDir, sizeof g_zTestDir, "%s/genie-test-XXXXXX", zTmp && *zTmp ? zTmp : "/tmp");
    if (!mkdtemp(g_zTestDir)) {
        perror("mkdtemp");
        return 0;
    }
    fflush(stdout);
    fflush(stderr);
    double t0 = util_now();
    pid_t pid = fork();
    if (pid == 0) {
        alarm(t->timeout);
        t->fn();
        fflush(stdout);
        _exit(0);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    remove_tree(g_zTestDir);
    double secs = util_now() - t0;
    int ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
    if (ok)
        printf("ok    %-45s %6.2f s\n", t->zName, secs);
    else if (WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM)
        printf("FAIL  %-45s timed out after %u s\n", t->zName, t->timeout);
    else if (WIFSIGNALED(status))
        printf("FAIL  %-45s killed by signal %d\n", t->zName, WTERMSIG(status));
    else
        printf("FAIL  %s\n", t->zName);
    return ok;
}

int main(int argc, char **argv)
{
    const char *zFilter = argc > 1 ? argv[1] : NULL;
    /* GENIE_TEST_SHARD=I/N: the tests whose place in the list is I modulo N
     * alone, so that N runners share a machine's cores (scripts/gpu-final). */
    unsigned iShard = 0, nShard = 1;
    const char *zShard = getenv("GENIE_TEST_SHARD");
    if (zShard && (sscanf(zShard, "%u/%u", &iShard, &nShard) != 2 || nShard == 0 || iShard >= nShard)) {
        fprintf(stderr, "GENIE_TEST_SHARD must be I/N with 0 <= I < N, not '%s'\n", zShard);
        return 2;
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
    int nGolden = golden_load(GENIE_TEST_SOURCE_DIR "/golden");
    if (nGolden < 0)
        return 2;
    size_t nBuiltin = sizeof aBuiltin / sizeof *aBuiltin;
    int nPass = 0, nFail = 0;
    for (size_t i = 0; i < nBuiltin + (size_t)nGolden; i++) {
        test_entry t;
        if (i < nBuiltin) {
            t = aBuiltin[i];
        } else {
            g_goldenIndex = (int)(i - nBuiltin);
            t = (test_entry){golden_name(g_goldenIndex), run_golden_case, 60, g_goldenIndex};
        }
        if ((zFilter && !strstr(t.zName, zFilter)) || i % nShard != iShard)
            continue;
        if (run_one(&t))
            nPass++;
        else
            nFail++;
    }
    printf("%d passed, %d failed\n", nPass, nFail);
    return nFail ? 1 : 0;
}
