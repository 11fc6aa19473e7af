// Package progress reports a job's progress on a writer (stderr): done of
// total, pass rate so far, errors, rate and ETA.
//
// On a terminal it redraws one line in place (carriage return); otherwise
// it prints a plain line every Interval (default 5 s) or every 10% of the
// runs, whichever comes first, so CI logs stay short.
package progress
