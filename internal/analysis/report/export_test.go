package report

import "github.com/toolward/toolward/schema/record"

// add folds one whole record in. rec is not retained, except for the
// trace of an example, which the reader allocates afresh for every
// record.
func (a *aggregator) add(rec *record.Record) { a.addSummary(rec, nil) }
