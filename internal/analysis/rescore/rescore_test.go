package rescore

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/toolward/toolward/matchers/score"
	"github.com/toolward/toolward/schema"
	"github.com/toolward/toolward/schema/cell"
	"github.com/toolward/toolward/schema/plan"
	"github.com/toolward/toolward/schema/record"
	"github.com/toolward/toolward/schema/results"
)

const dirCases = `id: a
prompt: What is 2 + 3?
needs: [add]
expect:
  answer: {$contains: "5"}
---
id: b
prompt: What is 4 + 4?
needs: [add]
expect:
  answer: {$contains: "8"}
---
id: gone
prompt: Hello?
needs: [add]
expect:
  no_calls: true
`

func dirConfig() *schema.Config {
	return &schema.Config{Name: "t", Cases: []string{"cases/*.yaml"}, Matrix: schema.Matrix{}.
		With(cell.Model, "m").With(cell.Seed, "1", "2").With(cell.Temperature, "0").
		With(cell.Tools, "needed").With(cell.Confirm, "auto").With(cell.Descriptions, "default")}
}

// writeDir runs nothing: it writes a result directory whose records are
// what the engine would have written for dirCases (seed 2 of case a
// errored), judged by the rules of then.
func writeDir(t *testing.T) string {
	t.Helper()
	t.Chdir(t.TempDir())
	os.MkdirAll("cases", 0o755)
	os.WriteFile("cases/s.yaml", []byte(dirCases), 0o644)
	cfg := dirConfig()
	cases, err := schema.LoadCases(cfg.Cases)
	if err != nil {
		t.Fatal(err)
	}
	p, err := plan.New(cfg, cases)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join("results", "t", "20261201T090000Z")
	if err := results.CreateAt(dir); err != nil {
		t.Fatal(err)
	}
	answers := map[string]string{"a": "It is 5.", "b": "It is 8.", "gone": "Hi."}
	var buf bytes.Buffer
	w := record.NewWriter(&buf)
	meta := &results.Meta{Version: results.MetaVersion, Config: cfg, Planned: p.Len(), Total: p.Len(), Cases: map[string]string{}, Rules: map[string]string{}}
	for i := range p.Len() {
		r := p.Run(i)
		rec := &record.Record{ID: r.ID, Case: r.Case.ID, Cell: r.Cell, Attempts: 1,
			Trace: record.Trace{Offered: []string{"add"}, Turns: []record.Turn{{Content: answers[r.Case.ID]}}, Answer: answers[r.Case.ID]}}
		rules, err := score.CaseRules(r.Case)
		if err != nil {
			t.Fatal(err)
		}
		meta.Cases[r.Case.ID], meta.Rules[r.Case.ID] = r.Case.RunDigest, rules.Digest
		if r.Case.ID == "a" && r.Cell.Seed == 2 {
			rec.Outcome, rec.Error = record.Error, &record.InfraError{Kind: "backend", Message: "down"}
		} else {
			rules.Score(rec)
		}
		if err := w.Write(rec); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(filepath.Join(dir, results.RunsFile), buf.Bytes(), 0o644)
	if err := results.WriteMeta(dir, meta); err != nil {
		t.Fatal(err)
	}
	return dir
}

func readAll(t *testing.T, dir string) map[string]record.Record {
	t.Helper()
	out := map[string]record.Record{}
	err := eachLine(dir, func(rec *record.Record, err error) error {
		if err != nil {
			t.Fatal(err)
		}
		out[rec.Case+"/"+string(rune('0'+rec.Cell.Seed))] = *rec
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func snapshot(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	for _, f := range []string{results.ConfigFile, results.RunsFile} {
		s, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		b.Write(s)
	}
	return b.String()
}

// TestDir: re-scoring after an answer matcher edit flips exactly that
// case's verdicts; a case whose prompt changed is kept out, a removed
// case dropped, an error record copied as it was; the source directory is
// left as it was, the new one is a stamped sibling.
func TestDir(t *testing.T) {
	dir := writeDir(t)
	before := snapshot(t, dir)
	edited := strings.Replace(dirCases, `answer: {$contains: "5"}`, `answer: {$contains: "6"}`, 1)
	edited = strings.Replace(edited, "What is 4 + 4?", "What is 4 plus 4?", 1)
	edited = edited[:strings.Index(edited, "---\nid: gone")]
	os.WriteFile("cases/s.yaml", []byte(edited), 0o644)

	now := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	res, err := Dir(dir, DirOptions{Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join("results", "t", "20261201T100000Z"); res.Out != want {
		t.Errorf("out = %s, want %s", res.Out, want)
	}
	if snapshot(t, dir) != before {
		t.Error("the re-scored directory was modified")
	}
	want := &DirResult{Out: res.Out, Rescored: 1, Errors: 1,
		Cases:   []CaseResult{{Case: "a", Runs: 1, PassToFail: 1}},
		Changed: map[string]int{"b": 2}, Partial: map[string]int{}, Reprobe: map[string]int{}, Gone: map[string]int{"gone": 2}}
	if !reflect.DeepEqual(res, want) {
		t.Errorf("result\n%+v\nwant\n%+v", res, want)
	}
	got := readAll(t, res.Out)
	if len(got) != 2 || got["a/1"].Outcome != record.Fail || got["a/1"].Reasons[0].Code != "answer_mismatch" || got["a/2"].Outcome != record.Error {
		t.Errorf("new records %+v", got)
	}
	meta, err := results.ReadMeta(res.Out)
	if err != nil {
		t.Fatal(err)
	}
	if meta.ScoredFrom != dir || meta.Rules["a"] != got["a/1"].Rules || meta.Cases["gone"] != "" || meta.Planned != 4 {
		t.Errorf("meta: scored_from %q rules %v cases %v planned %d", meta.ScoredFrom, meta.Rules, meta.Cases, meta.Planned)
	}

	// DIR given as "." gets its sibling too, never a directory inside it.
	pattern, _ := filepath.Abs("cases/*.yaml")
	t.Chdir(dir)
	res3, err := Dir(".", DirOptions{Cases: []string{pattern}, Now: func() time.Time { return now.Add(time.Minute) }})
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join("..", "20261201T100100Z"); res3.Out != want {
		t.Errorf(`Dir("."): out = %s, want %s`, res3.Out, want)
	}
	t.Chdir(filepath.Join("..", "..", ".."))

	// Re-scoring the result again with the same cases changes nothing.
	res2, err := Dir(res.Out, DirOptions{Out: "again"})
	if err != nil {
		t.Fatal(err)
	}
	if len(res2.Cases) != 1 || res2.Cases[0].Changed() != 0 || res2.KeptOut() != 0 {
		t.Errorf("second re-score: %+v", res2)
	}
}

// TestDirPartialRecords: a record stored in part (a value scoring reads
// was clipped) cannot be judged by new rules: it is kept out and counted;
// under the rules that judged it, it is copied as it was.
func TestDirPartialRecords(t *testing.T) {
	dir := writeDir(t)
	var lines []string
	err := eachLine(dir, func(rec *record.Record, _ error) error {
		rec.Truncated = []record.Truncation{{Path: "trace.answer", Bytes: 2 << 20}}
		b, err := record.Marshal(rec)
		lines = append(lines, string(b))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, results.RunsFile), []byte(strings.Join(lines, "\n")+"\n"), 0o644)
	res, err := Dir(dir, DirOptions{Out: "same"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Rescored != 0 || res.KeptOut() != 0 || len(readAll(t, "same")) != 6 {
		t.Errorf("unchanged rules: %+v", res)
	}
	os.WriteFile("cases/s.yaml", []byte(strings.Replace(dirCases, `answer: {$contains: "8"}`, `answer: {$contains: "eight"}`, 1)), 0o644)
	res, err = Dir(dir, DirOptions{Out: "new"})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(res.Partial, map[string]int{"b": 2}) || res.KeptOut() != 2 {
		t.Errorf("new rules: %+v", res)
	}
}

// TestDirRefuses: score never writes into the directory it reads, and a
// format 1 directory cannot be matched to the cases.
func TestDirRefuses(t *testing.T) {
	dir := writeDir(t)
	for _, out := range []string{dir, dir + "/", filepath.Join(dir, "sub")} {
		if _, err := Dir(dir, DirOptions{Out: out}); err == nil || !strings.Contains(err.Error(), "never modifies it") {
			t.Errorf("--out %s: %v", out, err)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "sub")); err == nil {
		t.Error("--out inside DIR created a directory there")
	}
	meta, _ := results.ReadMeta(dir)
	meta.Version = 0
	results.WriteMeta(dir, meta)
	if _, err := Dir(dir, DirOptions{Out: "x"}); err == nil || !strings.Contains(err.Error(), "config.json format 1") {
		t.Errorf("legacy: %v", err)
	}
	if _, err := os.Stat("x"); err == nil {
		t.Error("a refused re-score left a directory")
	}
}

// eachLine calls fn for every line of dir's runs.jsonl, with no de-duplication.
func eachLine(dir string, fn func(*record.Record, error) error) error {
	f, err := os.Open(filepath.Join(dir, results.RunsFile))
	if err != nil {
		return err
	}
	defer f.Close()
	r := record.NewReader(f, f.Name())
	for r.Scan() {
		if err := fn(r.Record()); err != nil {
			return err
		}
	}
	return r.Err()
}
