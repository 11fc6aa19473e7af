package toolset

import (
	"cmp"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/toolward/toolward/schema"
)

// Tool is one tool as the server lists it.
type Tool struct {
	Name        string
	Description string
	// InputSchema is the tool's JSON Schema for its arguments.
	InputSchema json.RawMessage
	// Gated reports whether confirm modes approve and deny gate the tool:
	// its annotations do not say it is read-only or non-destructive.
	Gated bool
}

// MissingError reports tools a run needs that the server does not have.
type MissingError struct {
	Case    string
	Subset  string
	Missing []string
}

func (e *MissingError) Error() string {
	return fmt.Sprintf("case %s (tools %s) needs %s, which the server does not offer", e.Case, e.Subset, quoteList(e.Missing))
}

func quoteList(s []string) string {
	q := make([]string, len(s))
	for i, v := range s {
		q[i] = fmt.Sprintf("%q", v)
	}
	return strings.Join(q, ", ")
}

// Select returns the tools a run of case caseID offers under subset s,
// drawn from all (the server's listing, in its order): its needs always,
// and under count and all subsets other tools too, except those the case
// avoids. The result is a new slice; the Tool values are copies.
func Select(all []Tool, caseID string, needs, avoid []string, s schema.ToolSubset) ([]Tool, error) {
	byName := make(map[string]int, len(all))
	for i, t := range all {
		byName[t.Name] = i
	}
	var missing []string
	chosen := make([]int, 0, len(needs))
	in := make(map[int]bool, len(needs))
	add := func(name string) {
		i, ok := byName[name]
		if !ok {
			if !slices.Contains(missing, name) {
				missing = append(missing, name)
			}
			return
		}
		if !in[i] {
			in[i] = true
			chosen = append(chosen, i)
		}
	}
	for _, n := range needs {
		add(n)
	}
	// Avoided tools are never drawn; marking them as taken keeps them out.
	taken := maps.Clone(in)
	for _, n := range avoid {
		if i, ok := byName[n]; ok {
			taken[i] = true
		}
	}
	switch {
	case s.Count > 0:
		rest := distractors(all, caseID, taken)
		for _, i := range rest {
			if len(chosen) >= s.Count {
				break
			}
			in[i] = true
			chosen = append(chosen, i)
		}
	case len(s.Include) > 0:
		for _, n := range s.Include {
			add(n)
		}
	case s.Name == "all":
		for i := range all {
			if !taken[i] {
				in[i] = true
				chosen = append(chosen, i)
			}
		}
	case s.Name == "needed":
	default:
		return nil, fmt.Errorf("tool subset %q: want count, include, or the name needed or all", s.Name)
	}
	if len(missing) > 0 {
		return nil, &MissingError{Case: caseID, Subset: s.Name, Missing: missing}
	}
	if s.Order != "given" {
		r := rand.New(rand.NewPCG(seed(caseID, s.Name)))
		r.Shuffle(len(chosen), func(i, j int) { chosen[i], chosen[j] = chosen[j], chosen[i] })
	}
	out := make([]Tool, len(chosen))
	for k, i := range chosen {
		out[k] = all[i]
	}
	return out, nil
}

// distractors returns the indexes of all's tools not in exclude, ranked by
// a hash of (case id, tool name): the deterministic draw order.
func distractors(all []Tool, caseID string, exclude map[int]bool) []int {
	type ranked struct {
		i    int
		rank uint64
	}
	rs := make([]ranked, 0, len(all))
	for i, t := range all {
		if exclude[i] {
			continue
		}
		h := sha256.Sum256([]byte("distractor\x00" + caseID + "\x00" + t.Name))
		rs = append(rs, ranked{i, binary.BigEndian.Uint64(h[:8])})
	}
	slices.SortFunc(rs, func(a, b ranked) int {
		if c := cmp.Compare(a.rank, b.rank); c != 0 {
			return c
		}
		return cmp.Compare(all[a.i].Name, all[b.i].Name)
	})
	out := make([]int, len(rs))
	for k, r := range rs {
		out[k] = r.i
	}
	return out
}

func seed(caseID, subset string) (uint64, uint64) {
	h := sha256.Sum256([]byte("order\x00" + caseID + "\x00" + subset))
	return binary.BigEndian.Uint64(h[:8]), binary.BigEndian.Uint64(h[8:16])
}

// Descriptions is a named set of description overrides: tool name to the
// description the model reads instead of the server's.
type Descriptions map[string]string

// LoadDescriptions reads a YAML map of tool name to description.
func LoadDescriptions(path string) (Descriptions, error) {
	b, err := schema.ReadFile(path, "description set", schema.MaxDescriptionFileSize)
	if err != nil {
		return nil, fmt.Errorf("description set: %w", err)
	}
	var d Descriptions
	if err := yaml.Unmarshal(b, &d); err != nil {
		return nil, fmt.Errorf("description set %s: want a map of tool name to description: %w", path, err)
	}
	for k, v := range d {
		if strings.TrimSpace(v) == "" {
			return nil, fmt.Errorf("description set %s: tool %q has an empty description", path, k)
		}
	}
	return d, nil
}

// Apply returns tools with descriptions replaced by those in d (tools d
// does not name keep theirs). tools is not modified.
func (d Descriptions) Apply(tools []Tool) []Tool {
	if len(d) == 0 {
		return tools
	}
	out := slices.Clone(tools)
	for i := range out {
		if v, ok := d[out[i].Name]; ok {
			out[i].Description = v
		}
	}
	return out
}
