// Package scaffold writes the skeleton of a toolward suite for an MCP
// server a user maintains: a config for the server, one case skeleton
// per tool, replay cassette skeletons, the case JSON Schema and a
// pre-commit configuration. It is what `toolward init` writes; the
// command lists the tools, this package only renders files.
//
// Every case skeleton has needs, an expected call with $any for each
// required parameter, and a golden marked todo, so that validate reports
// "fill in the golden" until a person has written real arguments and an
// answer. Every cassette skeleton is marked todo too: validate reports
// it and replay refuses it, so no placeholder argument ever reaches the
// server. A tool the server does not mark read-only gets no call in its
// cassette at all (only a comment showing the call to write), so even a
// deleted todo cannot send it a placeholder.
package scaffold

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/toolward/toolward/matchers"
	"github.com/toolward/toolward/schema"
)

// Tool is one tool of the server, as listed.
type Tool struct {
	Name        string
	Description string
	InputSchema json.RawMessage
	// ReadOnly reports that the server marks the tool read-only (MCP
	// annotation readOnlyHint: true). Only a read-only tool's cassette
	// skeleton holds a placeholder call.
	ReadOnly bool
}

// Server is the server the suite's configs connect to; exactly one of
// Command and URL is set.
type Server struct {
	Command []string
	Env     map[string]string
	URL     string
	Headers map[string]string
	// Isolation is written when set: "run" for a command or env naming
	// the run's directory (schema.RunDirVar).
	Isolation string
}

// Options say what to write.
type Options struct {
	// Dir is the suite directory as the configs spell it: paths in a
	// config are relative to the directory toolward runs in.
	Dir    string
	Name   string // config name; "" derives one from Dir
	Server Server
	// ServerName and ServerVersion are what the server said about itself.
	ServerName, ServerVersion string
	Tools                     []Tool
	// Model is the Ollama model of toolward.cue.
	Model string
	// CaseSchema is the case JSON Schema (runconfig.CaseJSONSchema).
	CaseSchema []byte
	// Rev is the toolward tag for .pre-commit-config.yaml; "" writes a
	// placeholder to replace.
	Rev string
}

// TodoNote is the golden's todo note in every skeleton.
const TodoNote = "write real arguments, the answer a good reply gives and a real prompt"

// CassetteTodo is the todo note of a read-only tool's cassette skeleton;
// WriteCassetteTodo that of any other tool's, whose call is left out.
const (
	CassetteTodo      = "replace the placeholder arguments and the answer with real ones"
	WriteCassetteTodo = "the tool is not marked read-only, so its call is left out: write the call (see the comment above) and the answer"
)

var nameRE = regexp.MustCompile(`^[A-Za-z0-9_.:/-]+$`)

// Files renders the suite: file path (relative to the suite directory,
// slash-separated) -> content. Tools whose names a case cannot name are
// left out and reported in skipped.
func Files(o Options) (files map[string][]byte, skipped []string, err error) {
	if len(o.Tools) == 0 {
		return nil, nil, fmt.Errorf("the server lists no tools")
	}
	if o.Name == "" {
		o.Name = configName(o.Dir)
	}
	if o.Model == "" {
		o.Model = "qwen3:0.6b"
	}
	files = map[string][]byte{"case.schema.json": o.CaseSchema}
	ids := map[string]bool{}
	for _, t := range o.Tools {
		if !nameRE.MatchString(t.Name) {
			skipped = append(skipped, fmt.Sprintf("%s: a case cannot name this tool (tool names in cases are letters, digits and _ . : / -)", shortName(t.Name)))
			continue
		}
		id := caseID(t.Name, ids)
		c, err := caseFile(id, t)
		if err != nil {
			return nil, nil, fmt.Errorf("tool %s: %v", t.Name, err)
		}
		files["cases/"+id+".yaml"] = c
		tape, err := cassetteFile(o.Dir, id, t)
		if err != nil {
			return nil, nil, fmt.Errorf("tool %s: %v", t.Name, err)
		}
		files["cassettes/"+id+".yaml"] = tape
	}
	if len(ids) == 0 {
		return nil, skipped, fmt.Errorf("no tool has a name a case can use")
	}
	files["toolward.cue"] = []byte(configText(o, false))
	files["replay.cue"] = []byte(configText(o, true))
	files[".pre-commit-config.yaml"] = []byte(precommitText(o))
	files["README.md"] = []byte(readmeText(o, len(ids)))
	return files, skipped, nil
}

// CheckFree reports an error unless dir does not exist or is empty.
func CheckFree(dir string) error {
	ents, err := os.ReadDir(dir)
	if err != nil && !os.IsNotExist(err) {
		return err
	}
	if len(ents) > 0 {
		return fmt.Errorf("%s is not empty: init writes a new suite and never overwrites one", dir)
	}
	return nil
}

// Write writes files under dir, which must not exist or be empty.
func Write(dir string, files map[string][]byte) error {
	if err := CheckFree(dir); err != nil {
		return err
	}
	for _, name := range slices.Sorted(maps.Keys(files)) {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, files[name], 0o644); err != nil {
			return err
		}
	}
	return nil
}

var badIDChar = regexp.MustCompile(`[^A-Za-z0-9_.-]`)

// maxIDLen bounds a case id made from a tool name, which is also a file
// name (cases/<id>.yaml): far below any file system's name limit.
const maxIDLen = 64

// shortName cuts a tool name for a message.
func shortName(name string) string {
	if len(name) <= 200 {
		return name
	}
	return strings.ToValidUTF8(name[:200], "") + fmt.Sprintf("… (%d bytes)", len(name))
}

// caseID is a case id and file name for a tool: its name made safe,
// shortened to maxIDLen (a cut name ends in a hash of the whole name),
// and unique.
func caseID(tool string, taken map[string]bool) string {
	base := strings.TrimLeft(badIDChar.ReplaceAllString(tool, "_"), "_.-")
	if base == "" {
		base = "tool"
	}
	if len(base) > maxIDLen {
		sum := sha256.Sum256([]byte(tool))
		base = base[:maxIDLen-9] + "-" + hex.EncodeToString(sum[:4])
	}
	id := base
	for n := 2; taken[strings.ToLower(id)]; n++ {
		id = fmt.Sprintf("%s-%d", base, n)
	}
	taken[strings.ToLower(id)] = true
	return id
}

func configName(dir string) string {
	n := badIDChar.ReplaceAllString(path.Base(filepath.ToSlash(filepath.Clean(dir))), "-")
	n = strings.TrimLeft(n, "_.-")
	if n == "" {
		return "suite"
	}
	return n
}

// inputSchema is the part of a tool's JSON Schema a skeleton uses.
type inputSchema struct {
	Properties map[string]map[string]any `json:"properties"`
	Required   []string                  `json:"required"`
}

func parseSchema(raw json.RawMessage) inputSchema {
	var s inputSchema
	_ = json.Unmarshal(raw, &s) // a schema toolward cannot read yields no parameters
	return s
}

// required returns the tool's required parameters, in the schema's
// order, without repeats.
func (s inputSchema) required() []string {
	var out []string
	for _, r := range s.Required {
		if !slices.Contains(out, r) {
			out = append(out, r)
		}
	}
	return out
}

// placeholder is a value of the parameter's type for a skeleton: the
// first enum value, or a type's simplest value; strings say TODO.
func placeholder(p map[string]any) any {
	if e, ok := p["enum"].([]any); ok && len(e) > 0 {
		return e[0]
	}
	t := p["type"]
	if l, ok := t.([]any); ok && len(l) > 0 {
		t = l[0]
	}
	switch t {
	case "integer", "number":
		return 1
	case "boolean":
		return true
	case "array":
		return []any{}
	case "object":
		return map[string]any{}
	case "null":
		return nil
	}
	return "TODO"
}

func placeholders(s inputSchema) map[string]any {
	args := map[string]any{}
	for _, r := range s.required() {
		args[r] = placeholder(s.Properties[r])
	}
	return args
}

func caseFile(id string, t Tool) ([]byte, error) {
	s := parseSchema(t.InputSchema)
	args := map[string]any{}
	for _, r := range s.required() {
		args[r] = map[string]any{"$any": true}
	}
	desc := oneLine(t.Description)
	c := &schema.Case{
		ID:          id,
		Description: "TODO: what this case checks about " + t.Name + ".",
		Tags:        []string{"init"},
		Prompt:      "TODO: a request a user would make that needs " + t.Name + " (" + desc + ")",
		Needs:       []string{t.Name},
		Expect:      map[string]any{"calls": []matchers.ExpectedCall{{Tool: t.Name, Args: args}}, "max_calls": 4},
		Golden: &schema.Golden{
			Todo:   TodoNote,
			Calls:  []schema.GoldenCall{{Tool: t.Name, Args: placeholders(s)}},
			Answer: "TODO: the answer a good reply gives",
		},
	}
	b, err := marshal(c)
	if err != nil {
		return nil, err
	}
	head := "# yaml-language-server: $schema=../case.schema.json\n" +
		"# A skeleton from `toolward init`: write the prompt and the golden, then\n" +
		"# tighten expect (e.g. args matchers, answer: {$contains: …}).\n"
	return append([]byte(head), b...), nil
}

func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > 160 {
		s = string(r[:160]) + "…"
	}
	if s == "" {
		return "no description"
	}
	return s
}

func cassetteFile(dir, id string, t Tool) ([]byte, error) {
	doc := &schema.Cassette{Case: id}
	args, err := json.Marshal(placeholders(parseSchema(t.InputSchema)))
	if err != nil {
		return nil, err
	}
	placeholderCall := schema.CassetteCall{Name: t.Name, Arguments: args}
	answer := schema.CassetteTurn{Content: "TODO: the answer a good reply gives"}
	head := "# A scripted model for replay.cue (see `go doc github.com/toolward/toolward/engine/backend/replay`).\n" +
		"# Record real ones with `toolward run " + path.Join(filepath.ToSlash(dir), "toolward.cue") + " --record DIR`\n" +
		"# (from the directory you ran init in). Until todo is deleted, validate\n" +
		"# reports this cassette and replay refuses it.\n"
	if t.ReadOnly {
		doc.Todo = CassetteTodo
		doc.Runs = []schema.CassetteRun{{Turns: []schema.CassetteTurn{{ToolCalls: []schema.CassetteCall{placeholderCall}}, answer}}}
		head += "# Turn 0 calls the tool (read-only, says the server), turn 1 answers.\n"
	} else {
		// The call would change the server's world: it is shown, not
		// scripted, so that nothing sends it until a person writes it.
		doc.Todo = WriteCassetteTodo
		doc.Runs = []schema.CassetteRun{{Turns: []schema.CassetteTurn{answer}}}
		shown, err := marshal([]schema.CassetteTurn{{ToolCalls: []schema.CassetteCall{placeholderCall}}})
		if err != nil {
			return nil, err
		}
		head += "# " + t.Name + " is not marked read-only: a replayed call really runs on the server.\n" +
			"# Write its call as turn 0 with real arguments: move these lines above\n" +
			"# the answer's and delete their # (they are indented for that place):\n"
		for _, l := range strings.Split(strings.TrimRight(string(shown), "\n"), "\n") {
			head += "#      " + l + "\n"
		}
	}
	b, err := marshal(doc)
	if err != nil {
		return nil, err
	}
	return append([]byte(head), b...), nil
}

func marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return b.Bytes(), enc.Close()
}

func q(s string) string { return strconv.Quote(s) }

func join(dir, p string) string { return q(path.Join(filepath.ToSlash(dir), p)) }

// serverCUE renders the server field.
func serverCUE(s Server) string {
	var b strings.Builder
	if s.URL != "" {
		fmt.Fprintf(&b, "server: {\n\turl: %s\n", q(s.URL))
		writeMap(&b, "headers", s.Headers)
		b.WriteString("}\n")
		return b.String()
	}
	parts := make([]string, len(s.Command))
	for i, a := range s.Command {
		parts[i] = q(a)
	}
	fmt.Fprintf(&b, "server: {\n\tcommand: [%s]\n", strings.Join(parts, ", "))
	writeMap(&b, "env", s.Env)
	if s.Isolation != "" {
		fmt.Fprintf(&b, "\t// A fresh process per run, in a fresh directory ({run_dir}).\n\tisolation: %s\n", q(s.Isolation))
	}
	b.WriteString("}\n")
	return b.String()
}

func writeMap(b *strings.Builder, field string, m map[string]string) {
	if len(m) == 0 {
		return
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	fmt.Fprintf(b, "\t%s: {\n", field)
	for _, k := range keys {
		fmt.Fprintf(b, "\t\t%s: %s\n", q(k), q(m[k]))
	}
	b.WriteString("\t}\n")
}

func configText(o Options, replay bool) string {
	var b strings.Builder
	who := o.ServerName
	if o.ServerVersion != "" {
		who += " " + o.ServerVersion
	}
	if replay {
		fmt.Fprintf(&b, "// The suite for %s, offline: the model's replies come from\n// cassettes/ (scripted by hand or recorded with --record), the tool\n// results from the real server.\n//\n//\ttoolward run %s\n", who, path.Join(filepath.ToSlash(o.Dir), "replay.cue"))
		fmt.Fprintf(&b, "name:  %s\n", q(o.Name+"-replay"))
	} else {
		fmt.Fprintf(&b, "// The suite for %s on a local model through Ollama.\n// Paths are relative to the directory toolward runs in.\n//\n//\ttoolward validate %s %s\n//\ttoolward run %s\n", who,
			path.Join(filepath.ToSlash(o.Dir), "cases"), path.Join(filepath.ToSlash(o.Dir), "toolward.cue"), path.Join(filepath.ToSlash(o.Dir), "toolward.cue"))
		fmt.Fprintf(&b, "name:  %s\n", q(o.Name))
	}
	fmt.Fprintf(&b, "cases: [%s]\n", join(o.Dir, "cases/**/*.yaml"))
	b.WriteString(serverCUE(o.Server))
	if replay {
		fmt.Fprintf(&b, "backend: replay: %s\n", join(o.Dir, "cassettes"))
		b.WriteString("matrix: models: [\"scripted\"] // a label: the replies come from the cassettes\n")
	} else {
		b.WriteString("backend: ollama: {host: \"http://127.0.0.1:11434\", num_ctx: 4096}\n")
		fmt.Fprintf(&b, "matrix: {\n\tmodels: [%s]\n\tseeds: [1, 2, 3]\n\ttools: [{name: \"needed\"}, {name: \"all\"}]\n}\n", q(o.Model))
	}
	if len(o.Server.Command) > 0 {
		// Each worker starts its own server process: one worker waits
		// for one start-up (an npx server can take seconds).
		b.WriteString("// One worker: each worker starts its own server process. Raise concurrency\n// once the server starts fast.\n")
		b.WriteString("limits: {max_iterations: 8, run_timeout: \"120s\", concurrency: 1, retries: 1}\n")
	} else {
		b.WriteString("limits: {max_iterations: 8, run_timeout: \"120s\", concurrency: 2, retries: 1}\n")
	}
	return b.String()
}

func precommitText(o Options) string {
	dir := filepath.ToSlash(filepath.Clean(o.Dir))
	files := regexp.QuoteMeta(dir)
	args := fmt.Sprintf("[%s, %s, %s]", path.Join(dir, "cases"), path.Join(dir, "toolward.cue"), path.Join(dir, "replay.cue"))
	head := `# pre-commit (https://pre-commit.com): validate this suite on every commit
# that touches it. Merge this into the .pre-commit-config.yaml at the root
# of your repository (paths are relative to where pre-commit runs).
`
	if o.Rev != "" {
		return head + fmt.Sprintf(`repos:
  - repo: https://github.com/toolward/toolward
    rev: %s
    hooks:
      - id: toolward-validate
        files: ^%s/.*\.(ya?ml|cue)$
        args: %s
`, o.Rev, files, args)
	}
	// A development build has no release tag to pin, and pre-commit
	// needs one to fetch a repository: run the toolward on PATH instead.
	return head + fmt.Sprintf(`# This toolward is not a tagged release, so there is no rev to pin: the hook
# runs the toolward on your PATH (go install ./cmd/toolward from a clone).
# With a release, use instead:
#   - repo: https://github.com/toolward/toolward
#     rev: <the release tag>
#     hooks: [{id: toolward-validate, files: ..., args: ...}]
repos:
  - repo: local
    hooks:
      - id: toolward-validate
        name: toolward validate
        entry: toolward validate
        language: system
        pass_filenames: false
        require_serial: true
        files: ^%s/.*\.(ya?ml|cue)$
        args: %s
`, files, args)
}

func readmeText(o Options, n int) string {
	dir := filepath.ToSlash(filepath.Clean(o.Dir))
	return fmt.Sprintf(`# toolward suite for %s

Written by `+"`toolward init`"+`: %d case skeletons, one per tool.

1. In each `+"`cases/*.yaml`"+`, write a real prompt, tighten `+"`expect`"+`, and fill in
   the golden: real arguments and the answer a good reply gives; then
   delete its `+"`todo`"+` line. Until then validate says "fill in the golden".
2. `+"`toolward validate %s/cases %s/toolward.cue %s/replay.cue`"+`
3. `+"`toolward run %s/replay.cue`"+` (offline, scripted model in cassettes/), or
   `+"`toolward run %s/toolward.cue`"+` against Ollama.

`+"`case.schema.json`"+` gives editors completion (the first line of each case).
`, o.ServerName, n, dir, dir, dir, dir, dir)
}
