// Package stats holds the estimators behind toolward's reports and diffs:
// the Wilson score interval for one case's runs, the case-clustered
// interval for a pass rate pooled over cases (ClusteredRate), the paired
// case-clustered difference of two pass rates with its p-value and
// minimum detectable difference (PairedDiff, MDD), a weighted sum of
// independent rates with its interval (WeightedSum), Holm's correction for
// many tests, the unbiased pass@k and pass^k estimators over repeated
// trials of one case, quantiles for latencies (Quantile, and Sketch for
// them in bounded memory), the exact McNemar test for
// paired pass/fail outcomes, and the Student t distribution they rely on.
//
// Runs of one case are not independent coin flips: seeds and temperatures
// of a case mostly pass or fail together. Every pooled estimate therefore
// treats the case as the unit of sampling (a cluster), never the run.
//
// Every function is pure and works on counts; none holds run records
// (a Sketch holds values, counted in buckets past its exact limit).
// Combinatorial ratios are computed as products of ratios (or in log
// space), never as factorials, so large trial counts do not overflow.
package stats
