// Package report turns a result directory's runs.jsonl into the summary
// and reports a person or a CI system reads.
//
// Build reads a result directory; Stream takes the records of one as a
// command writes them (merge, score), so that it does not read back what
// it just wrote. Either way the report
//
//  1. reads each record (results.RunsSummary: a bad line is a warning,
//     not an abort; a run id is represented by its first pass or fail
//     record, as results.Runs decides),
//  2. aggregates counts per cell (seeds pooled), per model, per case, per
//     axis value (the axes of schema/cell's table), per tag and per tool
//     count, keeping at most one failing trace per
//     case × cell (and a bounded number overall) for the drill-down,
//  3. computes the statistics with package stats: for every pass rate
//     pooled over cases (totals, models, axis values, cells) a 95%
//     interval clustered by case, since runs of one case agree far more
//     than coin flips (Wilson only for one case's runs); paired
//     comparisons between the values of each axis on the same cases, with
//     p-values and minimum detectable differences; the tool-count curve
//     per subset over a fixed set of cases; unbiased pass@k and pass^k per
//     cell; latency quantiles (stats.Sketch, exact up to its limit, then
//     estimated in bounded memory and marked ≈),
//  4. builds the report tables once (Summary.Tables: columns and rows of
//     cells, each cell text spans with an optional rate, badge or hover
//     text), and
//  5. writes summary.json, report.md, report.html (self-contained: inline
//     SVG, no scripts, nothing fetched) and junit.xml into the directory.
//     report.md and report.html lay out the same tables (mdWriter.table, the
//     "table" template) and compute nothing themselves; junit.xml, a tree
//     of one suite per cell and one testcase per case, is built from the
//     same case × cell summaries.
//
// Statistical caveats (unequal trial counts, cells with only errors,
// skipped lines) are values in Summary.Warnings; each output decides how
// to show them. Infrastructure errors are counted apart and never enter a
// pass rate.
package report
