package plan

import (
	"fmt"
	"math/bits"
	"strconv"
	"strings"
)

// Shard names the i'th of n equal, contiguous slices of a plan, 0 <= i < n.
// The zero value (Count 0) means the whole plan.
//
// Slices are contiguous rather than strided so that a shard keeps the
// plan's grouping by model: each worker machine loads as few models as it
// can.
type Shard struct {
	Index, Count int
}

// ParseShard parses "i/n" with 0 <= i < n, e.g. "0/4" … "3/4" (the
// numbering of a Kubernetes Indexed Job's JOB_COMPLETION_INDEX).
func ParseShard(s string) (Shard, error) {
	a, b, ok := strings.Cut(s, "/")
	i, err1 := strconv.Atoi(a)
	n, err2 := strconv.Atoi(b)
	if !ok || err1 != nil || err2 != nil || n < 1 || i < 0 || i >= n {
		return Shard{}, fmt.Errorf("shard %q: want i/n with 0 <= i < n, e.g. 0/4", s)
	}
	return Shard{Index: i, Count: n}, nil
}

func (s Shard) String() string {
	if s.Count == 0 {
		return ""
	}
	return strconv.Itoa(s.Index) + "/" + strconv.Itoa(s.Count)
}

// Shard returns the plan restricted to shard s of its unsharded runs. The
// shards 0/n … n-1/n partition the plan exactly; Run.Index and ids are
// those of the unsharded plan.
func (p *Plan) Shard(s Shard) *Plan {
	q := *p
	if s.Count <= 0 {
		q.start, q.end = 0, p.total
		return &q
	}
	q.start = mulDiv(p.total, int64(s.Index), int64(s.Count))
	q.end = mulDiv(p.total, int64(s.Index+1), int64(s.Count))
	return &q
}

// mulDiv returns a*b/c without overflow for a, b, c >= 0, b <= c.
func mulDiv(a, b, c int64) int64 {
	hi, lo := bits.Mul64(uint64(a), uint64(b))
	q, _ := bits.Div64(hi, lo, uint64(c))
	return int64(q)
}
