/*
 * Adding up search statistics (engine.h): the rounds of a front-end's
 * search, the lanes and GPUs of one search.
 */
#include "engine/engine.h"

void engine_stats_add(genie_search_stats *sum, const genie_search_stats *one)
{
    sum->backend = one->backend;
    sum->n_parts = one->n_parts;
    sum->streamed |= one->streamed;
    sum->overlapped |= one->overlapped;
    sum->part_seconds += one->part_seconds;
    sum->merge_seconds += one->merge_seconds;
    sum->release_seconds += one->release_seconds;
    sum->upload_seconds += one->upload_seconds;
    sum->wait_seconds += one->wait_seconds;
    sum->match_seconds += one->total_seconds;
    sum->rounds++;
    engine_phases_add(&sum->phases, &one->phases);
}

void engine_phases_add(genie_gpu_phases *sum, const genie_gpu_phases *one)
{
    sum->plan_ms += one->plan_ms;
    sum->stage_ms += one->stage_ms;
    sum->upload_ms += one->upload_ms;
    sum->count_ms += one->count_ms;
    sum->select_ms += one->select_ms;
    sum->download_ms += one->download_ms;
    sum->collect_ms += one->collect_ms;
    sum->total_ms += one->total_ms;
    sum->calls += one->calls;
    sum->batches += one->batches;
}
