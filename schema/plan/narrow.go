package plan

import (
	"fmt"
	"strings"

	"github.com/toolward/toolward/schema"
)

// Build returns the plan a job runs: cfg over cases, narrowed by the
// config's own filter, then by filters (command-line "key=glob" entries;
// each set narrows the other, while repeated keys within a set OR), then
// cut to shard ("i/n", or "" for the whole plan). The Shard is returned
// parsed.
func Build(cfg *schema.Config, cases []*schema.Case, filters []string, shard string) (*Plan, Shard, error) {
	p, err := New(cfg, cases)
	if err != nil {
		return nil, Shard{}, err
	}
	for _, set := range []struct {
		what    string
		filters []string
	}{{strings.TrimPrefix(cfg.File+": filter", ": "), cfg.Filter}, {"--filter", filters}} {
		var fs []Filter
		for _, s := range set.filters {
			f, err := ParseFilter(s)
			if err != nil {
				return nil, Shard{}, fmt.Errorf("%s: %w", set.what, err)
			}
			fs = append(fs, f)
		}
		if len(fs) > 0 {
			if p, err = p.Filter(fs); err != nil {
				return nil, Shard{}, fmt.Errorf("%s: %w", set.what, err)
			}
		}
	}
	var sh Shard
	if shard != "" {
		if sh, err = ParseShard(shard); err != nil {
			return nil, Shard{}, err
		}
		p = p.Shard(sh)
	}
	return p, sh, nil
}
