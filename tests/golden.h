/*
 * Golden CLI tests: plain files under tests/golden/, jq-style.  A file
 * holds cases; each case is
 *
 *   ### name
 *   $ shell command line ($GENIE is the genie binary, $TMP a scratch
 *     folder shared by the cases of one file, $DATA tests/golden/data)
 *   < a line of standard input             (any number)
 *   > a line of expected standard output   (any number; all must match)
 *   ! text that standard error must contain (any number)
 *   exit N                                  (expected exit status, default 0)
 *
 * Cases of one file run in order in one scratch folder, so a later case
 * may use an index an earlier one built; a case re-runs the earlier
 * cases' commands of its file first (silently) to stay independent.
 */
#ifndef GENIE_TESTS_GOLDEN_H
#define GENIE_TESTS_GOLDEN_H

/** Load every *.test file of @p dir. @return number of cases, -1 on error. */
int golden_load(const char *dir);
const char *golden_name(int i);
/** Run case @p i in the current test's scratch folder; fails the test on mismatch. */
void golden_run(int i);

#endif
