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
// discordant pairs. Runs that errored on either side are not scored and
// are counted apart.
package diff
