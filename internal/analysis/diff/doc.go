// Package diff compares two result directories run by run.
//
// Compare reads both runs.jsonl files as streams and pairs runs by
// (case id, cell including the seed), ignoring the number of tools
// offered, which follows from the tool subset. Pairing by case id rather
// than run id means a case whose content changed (its run ids differ)
// still pairs; such cases are listed in Result.Changed so a reader knows
// the comparison crossed an edit.
//
// From the pairs it derives regressions (pass → fail), fixes (fail →
// pass), new and dropped cases, and per model an exact McNemar test on the
// discordant pairs beside the same difference of pass rates clustered by
// case (its 95% interval, p-value and minimum detectable difference; run
// pairs of one case are not independent, so McNemar alone overstates the
// evidence). Each (case, model) gets its own exact McNemar test, and the
// per-case regression flags are Holm-corrected for the number of cases
// tested, so many cases do not raise a false alarm in most comparisons.
// Runs that errored on either side are not scored and are counted apart.
package diff
