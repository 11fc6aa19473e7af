package record

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// slowDecode is what a line decodes to with encoding/json alone: the
// answer the fast reader must give whenever it does not give up.
func slowDecode(line []byte, summary bool) (Record, error) {
	var r Record
	if summary {
		return r, decodeSummary(line, &r)
	}
	return r, unmarshalNumbers(line, &r)
}

// checkFast decodes line both ways in both views and fails t when the
// fast reader takes a line encoding/json rejects or decodes it to
// another record. It returns whether the fast reader took the line in
// the whole and the summary view.
func checkFast(t *testing.T, line []byte) (whole, summary bool) {
	t.Helper()
	var took [2]bool
	for i, view := range []bool{false, true} {
		var got Record
		took[i] = fastDecode(line, &got, view)
		if !took[i] {
			continue
		}
		want, err := slowDecode(line, view)
		if err != nil {
			t.Fatalf("summary=%v: fast reader took a line encoding/json rejects (%v):\n%s", view, err, line)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("summary=%v: fast reader and encoding/json differ on\n%s\nfast: %#v\njson: %#v", view, line, got, want)
		}
	}
	return took[0], took[1]
}

// corpus is the lines the fast reader is held to: the stored records of
// testdata, a record with every field set, and records with the shapes a
// decoder gets wrong (escapes, invalid UTF-8, nesting, nulls, unknown
// and folded keys, keys twice).
func corpus(t *testing.T) [][]byte {
	t.Helper()
	var lines [][]byte
	for _, name := range []string{"record-v1.jsonl", "record-v2.golden"} {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range bytes.Split(b, []byte("\n")) {
			if len(bytes.TrimSpace(l)) > 0 {
				lines = append(lines, l)
			}
		}
	}
	full, err := json.Marshal(fullRecord())
	if err != nil {
		t.Fatal(err)
	}
	lines = append(lines, full)
	for _, s := range []string{
		`{"version":2,"id":"a","trace":{"turns":[{"content":"tab\there \"q\" \\ \/ \b\f\n\r \u00e9 \u20ac \ud83d\ude00 lone \ud800 x \udc00 \ud800\u0041","latency_ms":1.5e2}],"answer":"caf\u00e9"}}`,
		"{\"id\":\"a\",\"case\":\"bad \xff\xfe utf8 \xe2\x82\",\"trace\":{\"answer\":\"ok \xe2\x82\xac\"}}",
		`{"id":"a","trace":{"calls":[{"tool":"t","args":{"a":[[1,[2.50,-0,1e400]],{"b":{"c":[null,true,false,"s"]}}],"a":"last","":{}},"structured":[{"x":[]}],"latency_ms":-0.0}]}}`,
		`{"id":"a","extra":{"deep":[1,{"x":"y"}]},"cell":{"model":"m","future":1,"seed":3},"trace":{"calls":[{"tool":"t","later":"x"}],"zz":null},"tokens":{"in":1,"new":[2]}}`,
		`{"id":"a","ID":"b"}`,
		`{"id":"a","Case":"folded"}`,
		`{"id":"a","trace":{"Turns":[]}}`,
		`{"id":"a","\u0069d":"b"}`,
		`{"id":"a","case":"x","case":"y"}`,
		`{"id":"a","cell":{"seed":1,"seed":2}}`,
		`{"id":"a","tags":null,"cell":null,"trace":{"offered":null,"turns":null,"calls":[null,{"args":null,"structured":null}],"answer":null},"tokens":null,"started":null,"error":null,"state":null}`,
		`{"id":"a","trace":{"offered":[],"turns":[],"calls":[]},"tags":[null,"x"]}`,
		`{"id":"a","attempts":1.0}`,
		`{"id":"a","attempts":1e2}`,
		`{"id":"a","attempts":99999999999999999999}`,
		`{"id":"a","attempts":-9223372036854775808,"version":9223372036854775807}`,
		`{"id":"a","duration_ms":1e999}`,
		`{"id":"a","attempts":"1"}`,
		`{"id":"a","trace":{"turns":[{"content":5}]}}`,
		`{"id":"a","trace":{"calls":[{"args":[1]}]}}`,
		`{"id":"a","trace":{"calls":[{"args":"x"}]}}`,
		`{"id":"a","trace":{"out_of_turns":1}}`,
		`{"id":"a","started":"2026-01-02T03:04:05.123456789+01:00"}`,
		`{"id":"a","started":"yesterday"}`,
		`{"id":"a","outcome":"fail","reasons":[{"code":"c","detail":"d","more":1},null]}`,
		`{"id":"a","trace":{"text_calls":[{"turn":0,"family":"hermes","tool":"t","args":{"n":10.0}}],"users":[{"before":0,"content":"hi","from":"case"}]},"state":{"digest":"d","probes":[{"tool":"p","got":{"value":[1.5,{"k":2}]}}]}}`,
		` {"id":"a"} `,
		`{"id":"a"} x`,
		`{"id":"a"}{}`,
		`null`,
		`[]`,
		`{}`,
		`{"id":""}`,
		"{\"id\":\"a\",\"case\":\"ctl\x01\"}",
		`{"id":"a","case":"\x"}`,
		`{"id":"a","case":"\u12"}`,
		`{"id":"a",}`,
		`{"id":"a" "case":"b"}`,
		`{"id":"a","n":01}`,
		`{"id":"a","n":1.}`,
		`{"id":"a","n":.5}`,
		`{"id":"a","n":-}`,
		`{"id":"a","n":1e}`,
		`{"id":"a","n":tru}`,
		`{"id":"a","n":[1,]}`,
		`{"id":"a","n":{"k" 1}}`,
		`{"id":"a","n":{1:2}}`,
		"{\"id\":\"a\",\n\t\"case\" :\r \"b\" }",
		`{"id":"a","trace":{"calls":[{"args":{"k":` + strings.Repeat("[", 10001) + strings.Repeat("]", 10001) + `}}]}}`,
	} {
		lines = append(lines, []byte(s))
	}
	return lines
}

// fullRecord has every field of Record and of the types inside it set
// (by reflection, so a field added later is set too).
func fullRecord() *Record {
	r := &Record{}
	fill(reflect.ValueOf(r).Elem(), 0)
	r.Outcome = Fail
	r.Version = Version
	return r
}

func fill(v reflect.Value, depth int) {
	switch v.Kind() {
	case reflect.String:
		v.SetString("s \"" + v.Type().Name() + "\" é")
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int64:
		v.SetInt(int64(7 + depth))
	case reflect.Float64:
		v.SetFloat(2.5)
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		fill(v.Elem(), depth+1)
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 2, 2))
		for i := range 2 {
			fill(v.Index(i), depth+1)
		}
	case reflect.Map:
		v.Set(reflect.ValueOf(map[string]any{"n": json.Number("10.0"), "l": []any{"x", json.Number("1")}, "o": map[string]any{}}))
	case reflect.Interface:
		v.Set(reflect.ValueOf(map[string]any{"deep": []any{json.Number("-0"), nil, true}}))
	case reflect.Struct:
		if v.Type() == reflect.TypeFor[time.Time]() {
			v.Set(reflect.ValueOf(time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)))
			return
		}
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				fill(v.Field(i), depth+1)
			}
		}
	}
}

// The fast reader reads a record with every field set without giving
// up, in both views: a field added to Record, Trace, Turn, Call, Cell,
// Tokens or Reason and not to the fast reader makes it give up (its key
// folds to a known one), and this test fail.
func TestFastTakesEveryField(t *testing.T) {
	t.Parallel()
	line, err := json.Marshal(fullRecord())
	if err != nil {
		t.Fatal(err)
	}
	whole, summary := checkFast(t, line)
	if !whole || !summary {
		t.Fatalf("fast reader gave up (whole %v, summary %v) on a record with every field set:\n%s", !whole, !summary, line)
	}
	var got Record
	fastDecode(line, &got, false)
	if want := fullRecord(); !reflect.DeepEqual(&got, want) {
		t.Fatalf("round trip differs:\ngot  %#v\nwant %#v", got, *want)
	}
}

// The fast reader takes the lines a writer writes and the ordinary
// oddities (unknown keys, nulls, escapes), and gives up on what it must
// leave to encoding/json.
func TestFastTakesOrGivesUp(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		line string
		take bool
	}{
		{`{"version":2,"id":"a","trace":{"turns":[{"content":"x\n\u00e9","latency_ms":1.5}]}}`, true},
		{`{"id":"a","extra":{"deep":[1,{"x":"y"}]},"cell":{"future":1}}`, true},
		{`{"id":"a","tags":null,"trace":{"calls":[null]}}`, true},
		{`{"id":"a","ID":"b"}`, false},
		{`{"id":"a","\u0069d":"b"}`, false},
		{`{"id":"a","case":"x","case":"y"}`, false},
		{`{"id":"a","attempts":1.0}`, false},
		{`{"id":"a","duration_ms":1e999}`, false},
		{`{"id":"a"`, false},
		{`null`, false},
	} {
		whole, summary := checkFast(t, []byte(tc.line))
		if whole != tc.take || summary != tc.take {
			t.Errorf("%s: took whole %v, summary %v; want %v", tc.line, whole, summary, tc.take)
		}
	}
	for _, line := range corpus(t)[:4] { // the stored and the full records
		if whole, summary := checkFast(t, line); !whole || !summary {
			t.Errorf("fast reader gave up on a written record:\n%s", line)
		}
	}
}

// Every prefix of every corpus line (a record cut short by a crash) and
// every single-byte mutation of the stored ones decode as encoding/json
// decodes them.
func TestFastMatchesJSON(t *testing.T) {
	t.Parallel()
	lines := corpus(t)
	for _, line := range lines {
		checkFast(t, line)
		if len(line) > 4096 { // the nesting one: its prefixes are all alike
			continue
		}
		for n := range len(line) {
			checkFast(t, line[:n])
		}
	}
	subst := []byte("\"\\{}[],:0-.en\x01\xff")
	for _, line := range [][]byte{lines[0], lines[3]} { // a version 1 record and the golden one
		for i := range line {
			m := bytes.Clone(line)
			for _, c := range subst {
				m[i] = c
				checkFast(t, m)
			}
			checkFast(t, append(bytes.Clone(line[:i]), line[i+1:]...))
			checkFast(t, append(bytes.Clone(line[:i+1]), line[i:]...))
		}
	}
}

func FuzzFastDecode(f *testing.F) {
	for _, l := range corpus(&testing.T{}) {
		f.Add(l)
	}
	f.Fuzz(func(t *testing.T, line []byte) { checkFast(t, line) })
}

// unquote resolves strings as encoding/json does.
func TestUnquote(t *testing.T) {
	t.Parallel()
	for _, s := range []string{
		`plain`, `a\"b\\c\/d\be\ff\ng\rh\ti`, `\u0000\u001f\u00e9\u20ac\uFFFD\uffff`,
		`\ud83d\ude00`, `\ud83d`, `\ud83dx`, `\ude00\ud83d`, `\ud83d\u0041`, `\ud83d\ud83d\ude00`,
		"\xff", "\xe2\x82", "\xe2\x82\xac", "\xed\xa0\x80", "é\\n\xc3",
	} {
		var want string
		if err := json.Unmarshal([]byte(`"`+s+`"`), &want); err != nil {
			t.Fatalf("%q: %v", s, err)
		}
		if got := unquote([]byte(s)); got != want {
			t.Errorf("unquote(%q) = %q, want %q", s, got, want)
		}
	}
}
