package session

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/toolward/toolward/schema/record"
)

// clipAll runs msg through a clipper of limit in pieces of size step.
func clipAll(msg string, limit, step int) string {
	c := newClipper(limit)
	var out []byte
	for i := 0; i < len(msg); i += step {
		out = c.add(out, []byte(msg[i:min(i+step, len(msg))]))
	}
	return string(out)
}

// TestClipper: a string longer than the limit keeps its first bytes, cut
// on a character and outside an escape, and ends with its length and a
// digest of what was cut, within the limit; a string of the limit passes
// whole, as does everything outside strings; JSON stays JSON, a string
// with a raw control character before the cut stays whole (for the
// check to refuse; what is cut is not read), and the pieces the bytes
// come in change nothing.
func TestClipper(t *testing.T) {
	const limit = 120 // a clipped string keeps at most 20 bytes
	x := func(n int) string { return strings.Repeat("x", n) }
	y := strings.Repeat("y", 200)
	for _, tc := range []struct {
		msg, want string // want: the value of "s", or its beginning up to the marker
	}{
		{`{"s":"short","b":[1,2,"x"]}`, "short"},
		{`{"s":"` + x(limit) + `"}`, x(limit)},
		{`{"s":"` + x(limit+1) + `"}`, x(20) + "…[truncated by toolward: 121 bytes in all; sha256 of the rest "},
		{`{"s":"` + x(18) + `\u00e9` + y + `"}`, x(18) + "…"}, // an escape is not cut
		{`{"s":"` + x(19) + `ééé` + y + `"}`, x(19) + "…"},    // nor a character
		{`{"s":"` + x(19) + `\\` + y + `"}`, x(19) + "…"},     // nor a backslash pair
		{"{\"s\":\"" + x(5) + "\x01" + y + "\"}", ""},         // not JSON: kept for the check to refuse
	} {
		var outs []string
		for _, step := range []int{1, 3, 7, len(tc.msg)} {
			outs = append(outs, clipAll(tc.msg, limit, step))
		}
		for _, o := range outs[1:] {
			if o != outs[0] {
				t.Fatalf("%.40s: the pieces change the output:\n%s\n%s", tc.msg, outs[0], o)
			}
		}
		got := outs[0]
		if json.Valid([]byte(tc.msg)) != json.Valid([]byte(got)) {
			t.Errorf("%.40s: clipped to %s, JSON: %v", tc.msg, got, json.Valid([]byte(got)))
		}
		if tc.want == "" {
			continue
		}
		var v struct{ S string }
		if err := json.Unmarshal([]byte(got), &v); err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(v.S, tc.want) || len(v.S) > limit || !utf8.ValidString(v.S) || strings.Contains(v.S, "…") != strings.Contains(tc.want, "…") {
			t.Errorf("%.40s: got %q (%d bytes), want it to begin %q, within %d bytes", tc.msg, v.S, len(v.S), tc.want, limit)
		}
	}
	a := clipAll(`"`+y+`b"`, limit, 5)
	b := clipAll(`"`+y+`c"`, limit, 5)
	if a == b || len(a) != len(b) {
		t.Fatalf("two strings that differ past the cut clip to %s and %s", a, b)
	}
}

// TestHugeAnswersClipped: a server answering each call, tool call and
// state probe alike, with a 15 MiB text (hostilemcp mode huge: a stdio
// line, a JSON body, an event) is held as its first bytes and a marker,
// within MaxString, as the model gets it and the record keeps it (no
// truncation of its own); before, the text was held
// whole, several times over while it was decoded (1273 MiB peak RSS for
// bench/hugeresult.sh's 8 runs of 5 such answers at -j 8). A message
// still longer than Limits.Held once clipped fails the call.
func TestHugeAnswersClipped(t *testing.T) {
	t.Parallel()
	servers := hostileServers(t, "huge")
	servers["sse"] = hostileServers(t, "hugesse")["http"]
	for kind, srv := range servers {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			ctx := safety(t)
			_, sess := openSession(t, ctx, Options{Server: srv})
			res, err := sess.Call(ctx, "echo", nil, 50*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			pr, err := sess.Probe(ctx, "echo", nil, 50*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			const tail = "…[truncated by toolward: 15728640 bytes in all; sha256 of the rest "
			for _, got := range []string{res.Text, ProbeValue(pr).(string)} {
				i := strings.Index(got, tail)
				if i != MaxString-markerRoom || len(got) > record.MaxFieldBytes || strings.Trim(got[:i], "a") != "" {
					t.Fatalf("held %d bytes, marker at %d: %.80q…%q", len(got), i, got, got[max(len(got)-100, 0):])
				}
			}
			if res.Text != ProbeValue(pr) {
				t.Fatal("the same answer clipped twice differs")
			}
		})
	}
	t.Run("held", func(t *testing.T) {
		t.Parallel()
		ctx := safety(t)
		_, sess := openSession(t, ctx, Options{Server: servers["stdio"], Limits: Limits{String: 4 << 10, Held: 2 << 10}})
		_, err := sess.Call(ctx, "echo", nil, 50*time.Second)
		var le *LimitError
		if !errors.As(err, &le) || le.Name != "session.MaxHeld" {
			t.Fatalf("err = %v, want the held-message limit", err)
		}
	})
}

// TestProbesBounded: what one session's probes get is bounded in all
// (Limits.ProbeBytes), since a case may have any number of probes and a
// run holds each result until it is judged; the model's calls do not
// count. Before, each of a case's probes was held: bench/hugeresult.sh
// -p 40 (40 probes of 15 MiB per run, each clipped to 1 MiB; 8 runs at
// -j 8) peaked at 415 MiB, 213 MiB with the bound.
func TestProbesBounded(t *testing.T) {
	t.Parallel()
	ctx := safety(t)
	_, sess := openSession(t, ctx, Options{Server: selfCommand(t, "hostile:huge"), Limits: Limits{ProbeBytes: 2<<20 + 1<<19}})
	if _, err := sess.Call(ctx, "echo", nil, 50*time.Second); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		_, err := sess.Probe(ctx, "echo", nil, 50*time.Second)
		var se *Error
		switch {
		case i < 2 && err != nil:
			t.Fatalf("probe %d: %v", i, err)
		case i == 2 && (!errors.As(err, &se) || se.Retryable || !strings.Contains(err.Error(), "over toolward's limit of 2560 KiB for one run (session.MaxProbeBytes")):
			t.Fatalf("probe %d: err = %v, want the probes' limit", i, err)
		}
	}
}
