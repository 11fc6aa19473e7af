package results

import (
	"slices"

	"github.com/toolward/toolward/schema/record"
)

// idSet is a collection of run ids, compact for the ids toolward writes
// (16 hex digits, held as a uint64) and exact for any other (held as a
// string): a list to add to, and the set repeated returns (sorted,
// without repeats) to look up.
type idSet struct {
	hex []uint64
	str []string
}

func (s *idSet) add(id string) {
	if h, ok := hexID(id); ok {
		s.hex = append(s.hex, h)
	} else {
		s.str = append(s.str, id)
	}
}

// repeated returns the ids added more than once, as a set.
func (s *idSet) repeated() idSet {
	slices.Sort(s.hex)
	slices.Sort(s.str)
	return idSet{hex: dups(s.hex), str: dups(s.str)}
}

func (s idSet) len() int { return len(s.hex) + len(s.str) }

// index returns the position of id in the set s (hex ids first, then
// the others), and whether s holds it.
func (s idSet) index(id string) (int, bool) {
	if h, ok := hexID(id); ok {
		return slices.BinarySearch(s.hex, h)
	}
	i, found := slices.BinarySearch(s.str, id)
	return len(s.hex) + i, found
}

// dups returns the values of sorted xs that occur more than once, once
// each.
func dups[T comparable](xs []T) []T {
	var out []T
	for i := 1; i < len(xs); i++ {
		if xs[i] == xs[i-1] && (len(out) == 0 || out[len(out)-1] != xs[i]) {
			out = append(out, xs[i])
		}
	}
	return out
}

// hexID parses an id of exactly 16 lower-case hex digits, the form run
// ids take (plan.Run.ID).
func hexID(id string) (uint64, bool) {
	if len(id) != 16 {
		return 0, false
	}
	var h uint64
	for i := 0; i < 16; i++ {
		c := id[i]
		switch {
		case '0' <= c && c <= '9':
			h = h<<4 | uint64(c-'0')
		case 'a' <= c && c <= 'f':
			h = h<<4 | uint64(c-'a'+10)
		default:
			return 0, false
		}
	}
	return h, true
}

// eachLine calls fn with the reader on each line of dir/runs.jsonl, a
// missing file having none.
func eachLine(dir string, fn func(*record.Reader) error) error {
	return withReader(dir, func(r *record.Reader) error {
		for r.Scan() {
			if err := fn(r); err != nil {
				return err
			}
		}
		return r.Err()
	})
}
