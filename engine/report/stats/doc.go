// Package stats holds the estimators behind toolward's reports and diffs:
// the Wilson score interval for a pass rate, the unbiased pass@k and pass^k
// estimators over repeated trials of one case, quantiles for latencies, and
// the exact McNemar test for paired pass/fail outcomes.
//
// Every function is pure and works on counts; none holds run records.
// Combinatorial ratios are computed as products of ratios (or in log
// space), never as factorials, so large trial counts do not overflow.
package stats
