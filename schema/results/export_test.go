package results

import "github.com/toolward/toolward/schema/record"

// Merge joins the result directories dirs, shards of one job, into out,
// which must not exist or be empty. It refuses shards that ran different
// configs, case files, scoring rules, filters or tool lists (Meta.Server,
// kept in out when every shard recorded it). Tests use it; the product
// uses MergeEach.
func Merge(out string, dirs []string) (*MergeResult, error) { return MergeEach(out, dirs, nil) }

// eachRecord calls fn for every line of dir/runs.jsonl, in order, with no
// de-duplication.
func eachRecord(dir string, fn func(*record.Record, error) error) error {
	return eachLine(dir, func(r *record.Reader) error { return fn(r.Record()) })
}
