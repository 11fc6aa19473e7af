package results

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/toolward/toolward/schema"
	"github.com/toolward/toolward/schema/cell"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden")

// TestMetaGolden pins the config.json format: a Meta as WriteMeta writes
// it. A diff here is a format change: bump MetaVersion, keep reading the
// old version, and regenerate with -update.
func TestMetaGolden(t *testing.T) {
	cfg := &schema.Config{
		Name: "demo", Cases: []string{"cases/**/*.yaml"},
		Server:  schema.Server{Builtin: &schema.Builtin{}},
		Backend: schema.Backend{Replay: "fixtures/cassettes/demo"},
		Matrix: schema.Matrix{Tools: []schema.ToolSubset{{Name: "needed"}, {Name: "n8", Count: 8}}}.
			With(cell.Model, "scripted-demo").With(cell.Seed, "1", "2").With(cell.Temperature, "0", "0.7").
			With(cell.Confirm, "approve", "deny").With(cell.Descriptions, "default"),
		Limits: schema.Limits{MaxIterations: 8, RunTimeout: schema.Duration{Duration: 30 * time.Second}, CallTimeout: schema.Duration{Duration: 30 * time.Second}, Concurrency: 2, Retries: 1},
		Output: "results",
	}
	m := &Meta{
		Version: MetaVersion, Toolward: "v0.9.0", ConfigFile: "configs/demo.cue", ConfigDigest: "c0ffee", Config: cfg,
		Filters: []string{"seed=1"}, Planned: 16, Total: 32,
		Backend:    &BackendInfo{Server: "replay fixtures/cassettes/demo", Digests: map[string]string{"scripted-demo": "d1"}},
		Cases:      map[string]string{"calc": "aa", "irr": "bb"},
		Rules:      map[string]string{"calc": "cc", "irr": "dd"},
		Created:    time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC),
		ScoredFrom: "results/demo/20261201T080000Z",
	}
	dir := t.TempDir()
	if err := WriteMeta(dir, m); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(dir, ConfigFile))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join("testdata", "config-v2.golden")
	if *update {
		os.WriteFile(path, got, 0o644)
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("config.json changed (format version %d):\n%s\nwant:\n%s", MetaVersion, got, want)
	}
	back, err := ReadMeta(dir)
	if err != nil || back.Legacy() || back.Rules["calc"] != "cc" || back.ScoredFrom != m.ScoredFrom {
		t.Errorf("read back: %+v, %v", back, err)
	}
}

// TestMetaVersion1: a config.json of format 1 (no version field) still
// reads, as Legacy; one newer than this toolward is an error.
func TestMetaVersion1(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, ConfigFile), []byte(`{"toolward":"v0.8.0","config_file":"c.cue","config_digest":"x","config":{"name":"c"},"planned":1,"total":1,"cases":{"a":"whole-content-digest"},"created":"2026-11-30T08:00:00Z"}`), 0o644)
	m, err := ReadMeta(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !m.Legacy() || m.Cases["a"] != "whole-content-digest" {
		t.Errorf("version 1: legacy %v, cases %v", m.Legacy(), m.Cases)
	}
	os.WriteFile(filepath.Join(dir, ConfigFile), []byte(`{"version":99,"config":{"name":"c"}}`), 0o644)
	if _, err := ReadMeta(dir); err == nil {
		t.Error("a newer format read without error")
	}
}
