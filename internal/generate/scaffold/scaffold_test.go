package scaffold

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

func tools() []Tool {
	return []Tool{
		{Name: "get_weather", Description: "Weather\nfor a city.", InputSchema: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"},"days":{"type":"integer"},"units":{"type":"string","enum":["metric","imperial"]}},"required":["city","days","units","city"]}`)},
		{Name: "Get-Weather", InputSchema: json.RawMessage(`{"type":"object"}`)},
		{Name: "get weather", InputSchema: json.RawMessage(`{}`)},
		{Name: "ping", InputSchema: json.RawMessage(`not json`)},
	}
}

func TestFiles(t *testing.T) {
	files, skipped, err := Files(Options{
		Dir: "evals/my suite", Server: Server{URL: "http://127.0.0.1:8765/mcp", Headers: map[string]string{"Authorization": `Bearer "x"`}},
		ServerName: "weather", ServerVersion: "1.2", Tools: tools(), CaseSchema: []byte("{}"),
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(skipped) != 1 || !strings.HasPrefix(skipped[0], "get weather: ") {
		t.Errorf("skipped = %q", skipped)
	}
	// Ids are unique ignoring case, so case-insensitive file systems keep every file.
	for _, f := range []string{"cases/get_weather.yaml", "cases/Get-Weather.yaml", "cases/ping.yaml", "cassettes/get_weather.yaml", "toolward.cue", "replay.cue", ".pre-commit-config.yaml", "case.schema.json", "README.md"} {
		if files[f] == nil {
			t.Errorf("no %s", f)
		}
	}
	var c map[string]any
	if err := yaml.Unmarshal(files["cases/get_weather.yaml"], &c); err != nil {
		t.Fatal(err)
	}
	args := c["expect"].(map[string]any)["calls"].([]any)[0].(map[string]any)["args"].(map[string]any)
	if len(args) != 3 || args["days"].(map[string]any)["$any"] != true {
		t.Errorf("expect args = %v", args)
	}
	g := c["golden"].(map[string]any)
	if g["todo"] != TodoNote {
		t.Errorf("golden = %v", g)
	}
	gargs := g["calls"].([]any)[0].(map[string]any)["args"].(map[string]any)
	if gargs["city"] != "TODO" || gargs["days"] != 1 || gargs["units"] != "metric" {
		t.Errorf("placeholders = %v", gargs)
	}
	if !strings.Contains(c["prompt"].(string), "(Weather for a city.)") {
		t.Errorf("prompt = %q", c["prompt"])
	}
	cue := string(files["toolward.cue"])
	for _, want := range []string{`name:  "my-suite"`, `cases: ["evals/my suite/cases/**/*.yaml"]`, `url: "http://127.0.0.1:8765/mcp"`, `"Authorization": "Bearer \"x\""`} {
		if !strings.Contains(cue, want) {
			t.Errorf("toolward.cue lacks %s:\n%s", want, cue)
		}
	}
	pc := string(files[".pre-commit-config.yaml"])
	if !strings.Contains(pc, `files: ^evals/my suite/.*\.(ya?ml|cue)$`) || !strings.Contains(pc, "repo: local") ||
		!strings.Contains(pc, "entry: toolward validate") || strings.Contains(pc, "\n    rev:") {
		t.Errorf("pre-commit without a release tag:\n%s", pc)
	}
	if !strings.Contains(cue, "concurrency: 2") {
		t.Errorf("a URL server gets two workers:\n%s", cue)
	}
	if tape := string(files["cassettes/get_weather.yaml"]); !strings.Contains(tape, "`toolward run evals/my suite/toolward.cue --record DIR`") {
		t.Errorf("cassette comment:\n%s", tape)
	}
}

// TestFilesRelease: a release build pins its tag in the pre-commit
// config; a command server gets one worker (each starts its own process).
func TestFilesRelease(t *testing.T) {
	files, _, err := Files(Options{Dir: "s", Server: Server{Command: []string{"npx", "-y", "srv"}}, Tools: tools()[:1], Rev: "v1.2.3"})
	if err != nil {
		t.Fatal(err)
	}
	pc := string(files[".pre-commit-config.yaml"])
	if !strings.Contains(pc, "repo: https://github.com/toolward/toolward\n    rev: v1.2.3\n") || strings.Contains(pc, "TODO") {
		t.Errorf("pre-commit:\n%s", pc)
	}
	for _, f := range []string{"toolward.cue", "replay.cue"} {
		if !strings.Contains(string(files[f]), "concurrency: 1") {
			t.Errorf("%s for a command server:\n%s", f, files[f])
		}
	}
}

// TestCassetteSkeletons: every cassette skeleton is todo; only a tool
// marked read-only gets a placeholder call, the others none.
func TestCassetteSkeletons(t *testing.T) {
	ts := []Tool{
		{Name: "read", InputSchema: json.RawMessage(`{"type":"object","properties":{"k":{"type":"string"}},"required":["k"]}`), ReadOnly: true},
		{Name: "write", InputSchema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`)},
	}
	files, _, err := Files(Options{Dir: "s", Server: Server{URL: "http://127.0.0.1:1/mcp"}, Tools: ts})
	if err != nil {
		t.Fatal(err)
	}
	type doc struct {
		Todo string
		Runs []struct {
			Turns []struct {
				ToolCalls []map[string]any `yaml:"tool_calls"`
			}
		}
	}
	calls := func(f string) (string, int) {
		var d doc
		if err := yaml.Unmarshal(files[f], &d); err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, r := range d.Runs {
			for _, tu := range r.Turns {
				n += len(tu.ToolCalls)
			}
		}
		return d.Todo, n
	}
	if todo, n := calls("cassettes/read.yaml"); todo != CassetteTodo || n != 1 {
		t.Errorf("read-only tool: todo %q, %d calls", todo, n)
	}
	if todo, n := calls("cassettes/write.yaml"); todo != WriteCassetteTodo || n != 0 {
		t.Errorf("write tool: todo %q, %d calls", todo, n)
	}
	if !strings.Contains(string(files["cassettes/write.yaml"]), "\n#      - tool_calls:\n#          - {name: write, arguments: {path: TODO}}\n") {
		t.Errorf("the write tool's cassette does not show the call to write:\n%s", files["cassettes/write.yaml"])
	}
}

func TestFilesNeedTools(t *testing.T) {
	if _, _, err := Files(Options{Dir: "d"}); err == nil {
		t.Error("no tools accepted")
	}
	if _, _, err := Files(Options{Dir: "d", Tools: []Tool{{Name: "a b"}}}); err == nil || !strings.Contains(err.Error(), "no tool has a name") {
		t.Errorf("unusable names: %v", err)
	}
}

func TestWriteRefusesNonEmpty(t *testing.T) {
	dir := t.TempDir()
	if err := Write(filepath.Join(dir, "new"), map[string][]byte{"a/b.txt": []byte("x")}); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "new", "a", "b.txt")); string(b) != "x" {
		t.Errorf("wrote %q", b)
	}
	if err := Write(filepath.Join(dir, "new"), map[string][]byte{"c": nil}); err == nil || !strings.Contains(err.Error(), "is not empty") {
		t.Errorf("overwrote: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "new", "c")); err == nil {
		t.Error("wrote into a non-empty directory")
	}
}
