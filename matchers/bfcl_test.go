package matchers

import (
	"encoding/json"
	"reflect"
	"testing"
)

func TestFromBFCL(t *testing.T) {
	tests := []struct {
		name     string
		possible string // BFCL possible answer for one function, as JSON
		want     string // translated args, as JSON
		accept   []string
		reject   []string
	}{
		{
			name:     "required and optional",
			possible: `{"city": ["San Francisco, CA", "SF"], "unit": ["fahrenheit", ""]}`,
			want:     `{"city": {"$one_of": ["San Francisco, CA", "SF"]}, "unit": {"$absent_or": {"$one_of": ["fahrenheit", ""]}}}`,
			accept:   []string{`{"city": "SF"}`, `{"city": "SF", "unit": "fahrenheit"}`},
			reject:   []string{`{"city": "LA"}`, `{"city": "SF", "unit": "celsius"}`, `{"city": "SF", "extra": 1}`, `{"unit": "fahrenheit"}`},
		},
		{
			name:     "single value and numbers",
			possible: `{"base": [10], "height": [5.0], "unit": [""]}`,
			want:     `{"base": 10, "height": 5.0, "unit": {"$absent_or": ""}}`,
			accept:   []string{`{"base": 10.0, "height": 5}`, `{"base": 10, "height": 5, "unit": ""}`},
			reject:   []string{`{"base": "10", "height": 5}`, `{"base": 10, "height": 5, "unit": "cm"}`},
		},
		{
			name:     "lists and nested answers",
			possible: `{"numbers": [[1, 2, 3], [3, 2, 1]], "options": [{"mode": ["fast", ""], "level": [1, 2]}]}`,
			want:     `{"numbers": {"$one_of": [[1, 2, 3], [3, 2, 1]]}, "options": {"mode": {"$absent_or": {"$one_of": ["fast", ""]}}, "level": {"$one_of": [1, 2]}}}`,
			accept:   []string{`{"numbers": [3, 2, 1], "options": {"level": 2}}`, `{"numbers": [1, 2, 3], "options": {"level": 1, "mode": "fast"}}`},
			reject:   []string{`{"numbers": [1, 3, 2], "options": {"level": 1}}`, `{"numbers": [1, 2, 3], "options": {"level": 1, "extra": true}}`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var possible map[string][]any
			if err := json.Unmarshal([]byte(tt.possible), &possible); err != nil {
				t.Fatal(err)
			}
			got := FromBFCL(possible)
			var want map[string]any
			if err := json.Unmarshal([]byte(tt.want), &want); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				gb, _ := json.Marshal(got)
				t.Fatalf("got  %s\nwant %s", gb, tt.want)
			}
			e, err := CompileExpect(FromBFCLCall("f", possible))
			if err != nil {
				t.Fatal(err)
			}
			for _, a := range tt.accept {
				tr := Trace{Calls: []Call{call("f", a)}}
				if v := e.Score(tr, Cell{}); !v.Pass {
					t.Errorf("rejected %s: %v", a, v.Reasons)
				}
			}
			for _, a := range tt.reject {
				tr := Trace{Calls: []Call{call("f", a)}}
				if v := e.Score(tr, Cell{}); v.Pass {
					t.Errorf("accepted %s", a)
				}
			}
		})
	}
}

func TestFromBFCLGroundTruth(t *testing.T) {
	// The shape of a BFCL parallel-category answer line's ground_truth.
	const gt = `[
	  {"spotify.play": {"artist": ["Taylor Swift"], "duration": [20, ""]}},
	  {"spotify.play": {"artist": ["Maroon 5"], "duration": [15]}}
	]`
	var calls []map[string]map[string][]any
	if err := json.Unmarshal([]byte(gt), &calls); err != nil {
		t.Fatal(err)
	}
	e, err := CompileExpect(FromBFCLGroundTruth(calls))
	if err != nil {
		t.Fatal(err)
	}
	ok := Trace{Calls: []Call{
		call("spotify.play", `{"artist": "Maroon 5", "duration": 15}`),
		call("spotify.play", `{"artist": "Taylor Swift"}`),
	}}
	if v := e.Score(ok, Cell{}); !v.Pass {
		t.Errorf("rejected: %v", v.Reasons)
	}
	bad := Trace{Calls: []Call{
		call("spotify.play", `{"artist": "Maroon 5", "duration": 15}`),
		call("spotify.play", `{"artist": "Taylor Swift", "duration": 20, "shuffle": true}`),
	}}
	v := e.Score(bad, Cell{})
	if v.Pass || codes(v) != "wrong_args" {
		t.Fatalf("got %+v", v)
	}
	if want := `calls[1].args.shuffle: unexpected argument (strict_args), got true (expect.calls[0], closest of 2 spotify.play calls)`; v.Reasons[0].Detail != want {
		t.Errorf("detail %q", v.Reasons[0].Detail)
	}
}
