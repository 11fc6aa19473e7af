package bfcl

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/toolward/toolward/schema"
)

// ServerScript is bfcl_mcp.py, the MCP server over BFCL's multi-turn back
// ends that an imported multi-turn suite runs (Python, stdlib only plus
// what BFCL's classes import). Its doc string says what it serves.
//
//go:embed bfcl_mcp.py
var ServerScript []byte

// MultiTurnCategories are BFCL's multi-turn categories, imported as
// conversations by ImportMultiTurn.
var MultiTurnCategories = []string{"multi_turn_base", "multi_turn_miss_func", "multi_turn_miss_param", "multi_turn_long_context"}

// Where ImportMultiTurn writes, relative to the output directory.
const (
	MultiTurnCases     = "cases/multi_turn"
	MultiTurnCassettes = "multi_turn_cassettes"
	MultiTurnConfig    = "bfcl_multi_turn.cue"
	serverDir          = "server"
)

// The server's probe-only tools.
const (
	loadTool  = "bfcl_load"
	stateTool = "bfcl_state"
)

// Golden answers of the replayed model in a conversation.
const (
	answerTurnDone  = "Done."
	answerTurnUnmet = "I cannot do that with the functions and the information I have."
)

// MultiTurnLayout is what ImportMultiTurn wrote.
type MultiTurnLayout struct {
	Root          string         // the BFCL installation the server runs (holds bfcl_eval/)
	Cases         map[string]int // by category
	Categories    []string       // in BFCL's order
	Tools         int
	CaseFiles     []string
	CassetteFiles []string
	Skipped       []Skipped
}

// mtExport is what `bfcl_mcp.py export` prints.
type mtExport struct {
	Tools     []mtTool                      `json:"tools"`
	StepLimit int                           `json:"step_limit"`
	AddedText string                        `json:"added_text"`
	Entries   []mtEntry                     `json:"entries"`
	Skipped   []struct{ ID, Reason string } `json:"skipped"`
}

type mtTool struct {
	Name             string         `json:"name"`
	Class            string         `json:"class"`
	Description      string         `json:"description"`
	PlainDescription string         `json:"plain_description"`
	InputSchema      map[string]any `json:"inputSchema"`
}

type mtEntry struct {
	ID              string              `json:"id"`
	Category        string              `json:"category"`
	Turns           []*string           `json:"turns"` // nil: the turn that announces added functions
	InvolvedClasses []string            `json:"involved_classes"`
	InitialConfig   json.RawMessage     `json:"initial_config"`
	LongContext     bool                `json:"long_context"`
	Tools           []string            `json:"tools"`
	Added           map[string][]string `json:"added"`
	Golden          [][]struct {
		Tool string         `json:"tool"`
		Args map[string]any `json:"args"`
	} `json:"golden"`
}

// WantsMultiTurn reports whether an import of dir with only (empty: all)
// should import multi-turn categories: their question files are there.
func WantsMultiTurn(dir string, only []string) bool {
	for _, c := range MultiTurnCategories {
		if len(only) > 0 && !slices.Contains(only, c) {
			continue
		}
		if _, err := os.Stat(filepath.Join(dir, "BFCL_v4_"+c+".json")); err == nil {
			return true
		}
	}
	return false
}

// Root finds the BFCL installation whose data directory dir is: dir is
// ROOT/bfcl_eval/data, in a gorilla checkout
// (berkeley-function-call-leaderboard/) as in a `pip install bfcl-eval`
// (site-packages/), and ROOT holds the multi-turn back ends.
func Root(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	if r, err := filepath.EvalSymlinks(abs); err == nil {
		abs = r
	}
	root := filepath.Dir(filepath.Dir(abs))
	utils := filepath.Join(root, "bfcl_eval", "eval_checker", "multi_turn_eval", "multi_turn_utils.py")
	if filepath.Base(abs) != "data" || filepath.Base(filepath.Dir(abs)) != "bfcl_eval" {
		return "", fmt.Errorf("%s is not a BFCL installation's bfcl_eval/data directory, so BFCL's multi-turn back ends cannot be found from it (a gorilla checkout: berkeley-function-call-leaderboard/bfcl_eval/data; pip install bfcl-eval: site-packages/bfcl_eval/data)", dir)
	}
	if _, err := os.Stat(utils); err != nil {
		return "", fmt.Errorf("BFCL's multi-turn back ends are not beside the data: %s is missing", utils)
	}
	return root, nil
}

// ImportMultiTurn imports BFCL's multi-turn categories found in dataDir
// (only, when not empty, limits them) into out, which the single-turn
// Write has made: each entry a conversation against BFCL's own classes,
// run by ServerScript. configDir is out as the config spells it.
// python is the interpreter to run the export with and to name in the
// config ("python3"). An error says what is missing (python, mpmath, the
// back ends) and writes nothing.
func ImportMultiTurn(dataDir, out, configDir, python string, only []string) (*MultiTurnLayout, error) {
	root, err := Root(dataDir)
	if err != nil {
		return nil, err
	}
	ex, err := export(python, root, dataDir, only)
	if err != nil {
		return nil, err
	}
	l := &MultiTurnLayout{Root: root, Cases: map[string]int{}, Tools: len(ex.Tools)}
	for _, s := range ex.Skipped {
		l.Skipped = append(l.Skipped, Skipped{What: s.ID, Reason: s.Reason})
	}
	tools := map[string]*mtTool{}
	for i := range ex.Tools {
		tools[ex.Tools[i].Name] = &ex.Tools[i]
	}
	files := map[string][]byte{}
	header := "# yaml-language-server: $schema=../../case.schema.json\n# Imported by `toolward import bfcl`; regenerate rather than edit.\n"
	byCat := map[string][]*mtEntry{}
	for i := range ex.Entries {
		e := &ex.Entries[i]
		if len(byCat[e.Category]) == 0 {
			l.Categories = append(l.Categories, e.Category)
		}
		byCat[e.Category] = append(byCat[e.Category], e)
	}
	for _, cat := range l.Categories {
		var caseDocs, tapeDocs [][]byte
		for _, e := range byCat[cat] {
			c, tape, err := conversation(e, ex, tools)
			if err != nil {
				l.Skipped = append(l.Skipped, Skipped{What: e.ID, Reason: err.Error()})
				continue
			}
			b, err := marshal(c)
			if err != nil {
				return nil, fmt.Errorf("case %s: %v", e.ID, err)
			}
			caseDocs = append(caseDocs, b)
			if b, err = marshal(tape); err != nil {
				return nil, fmt.Errorf("cassette %s: %v", e.ID, err)
			}
			tapeDocs = append(tapeDocs, b)
		}
		l.Cases[cat] = len(caseDocs)
		l.CaseFiles = append(l.CaseFiles, addParts(files, MultiTurnCases, cat, header, caseDocs, caseFileBudget)...)
		l.CassetteFiles = append(l.CassetteFiles, addParts(files, MultiTurnCassettes, cat, "", tapeDocs, cassetteFileBudget)...)
	}
	var served []map[string]any
	for _, t := range ex.Tools {
		served = append(served, map[string]any{"name": t.Name, "class": t.Class, "description": t.Description, "inputSchema": t.InputSchema})
	}
	b, err := json.MarshalIndent(served, "", " ")
	if err != nil {
		return nil, err
	}
	files[serverDir+"/tools.json"] = append(b, '\n')
	files[serverDir+"/bfcl_mcp.py"] = ServerScript
	files[MultiTurnConfig] = []byte(multiTurnConfig(configDir, root, python, ex.StepLimit))
	return l, writeFiles(out, files)
}

// export runs `bfcl_mcp.py export` with python (the script on its
// standard input) and decodes what it prints, numbers as written.
func export(python, root, dataDir string, only []string) (*mtExport, error) {
	exe, err := exec.LookPath(python)
	if err != nil {
		return nil, fmt.Errorf("%s not found on PATH: BFCL's multi-turn back ends are Python (install python3 and python3-mpmath, e.g. apt install python3 python3-mpmath)", python)
	}
	var cats []string
	for _, c := range only {
		if slices.Contains(MultiTurnCategories, c) {
			cats = append(cats, c)
		}
	}
	cmd := exec.Command(exe, "-", "export", "--bfcl-root", root, "--data", dataDir, "--categories", strings.Join(cats, ","))
	cmd.Stdin = bytes.NewReader(ServerScript)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(stderr.String())
		if lines := strings.Split(msg, "\n"); len(lines) > 10 {
			msg = strings.Join(lines[len(lines)-10:], "\n")
		}
		var ee *exec.ExitError
		if errors.As(err, &ee) && ee.ExitCode() == 3 {
			return nil, fmt.Errorf("%s cannot run BFCL's back ends: %s", python, strings.TrimPrefix(msg, "bfcl_mcp.py: "))
		}
		return nil, fmt.Errorf("%s bfcl_mcp.py export: %v: %s", python, err, msg)
	}
	var ex mtExport
	dec := json.NewDecoder(&stdout)
	dec.UseNumber()
	if err := dec.Decode(&ex); err != nil {
		return nil, fmt.Errorf("reading what bfcl_mcp.py export printed: %v", err)
	}
	return &ex, nil
}

// conversation makes the case and the golden cassette of one entry.
func conversation(e *mtEntry, ex *mtExport, tools map[string]*mtTool) (*Case, *schema.Cassette, error) {
	if !schema.ValidCaseID(e.ID) {
		return nil, nil, fmt.Errorf("its id is not a case id")
	}
	if len(e.Turns) == 0 || e.Turns[0] == nil {
		return nil, nil, fmt.Errorf("no opening user message")
	}
	// The scenario goes to bfcl_load as JSON text: BFCL reads it in key
	// order (the file system's root is the first key of "root", listings
	// follow the entries' order), which a YAML or Go map would sort.
	var initial bytes.Buffer
	if err := json.Compact(&initial, e.InitialConfig); err != nil {
		return nil, nil, fmt.Errorf("initial_config: %v", err)
	}
	c := &Case{
		ID:               e.ID,
		Description:      fmt.Sprintf("BFCL %s: %d user turns against %s.", e.Category, len(e.Turns), strings.Join(e.InvolvedClasses, ", ")),
		Tags:             []string{"bfcl", e.Category, string(Python)},
		Prompt:           *e.Turns[0],
		Needs:            e.Tools,
		User:             &schema.User{},
		ExecuteUnoffered: true,
		Setup: []schema.GoldenCall{{Tool: loadTool, Args: map[string]any{
			"initial_config": initial.String(), "involved_classes": e.InvolvedClasses, "long_context": e.LongContext}}},
		Golden: &schema.Golden{},
	}
	if len(e.Turns) == 1 {
		c.User = nil // BFCL's entries have several turns; one is a single request
	}
	for i, t := range e.Turns[1:] {
		text := ex.AddedText
		if t != nil {
			text = *t
		}
		c.User.Replies = append(c.User.Replies, text)
		if names := e.Added[strconv.Itoa(i+1)]; len(names) > 0 {
			at := schema.AddTools{Turn: i + 1, Tools: names, Descriptions: map[string]string{}}
			for _, n := range names {
				t := tools[n]
				if t == nil {
					return nil, nil, fmt.Errorf("added function %s is no tool", n)
				}
				at.Descriptions[n] = t.PlainDescription // BFCL adds them without its Python note
			}
			c.User.AddTools = append(c.User.AddTools, at)
		}
	}
	if len(e.Golden) != len(e.Turns) {
		return nil, nil, fmt.Errorf("%d ground-truth turns for %d user turns", len(e.Golden), len(e.Turns))
	}
	var turns []any
	tape := &schema.Cassette{Case: e.ID, Runs: []schema.CassetteRun{{}}}
	run := &tape.Runs[0]
	for _, g := range e.Golden {
		gt := schema.GoldenTurn{Answer: answerTurnUnmet}
		rules := map[string]any{}
		if len(g) > 0 {
			gt.Answer = answerTurnDone
			// BFCL's checker at a turn with ground truth: a call made, the
			// state equal to the ground truth's, its results among the
			// model's so far.
			rules = map[string]any{
				"min_calls":               1,
				"state":                   []any{map[string]any{"tool": stateTool, "equals": "golden"}},
				"contains_golden_results": true,
			}
			step := schema.CassetteTurn{}
			for _, call := range g {
				args := json.RawMessage("{}")
				if len(call.Args) > 0 {
					var err error
					if args, err = json.Marshal(call.Args); err != nil {
						return nil, nil, err
					}
				}
				step.ToolCalls = append(step.ToolCalls, schema.CassetteCall{Name: call.Tool, Arguments: args})
				gt.Calls = append(gt.Calls, schema.GoldenCall{Tool: call.Tool, Args: yamlNumbers(call.Args).(map[string]any)})
			}
			run.Turns = append(run.Turns, step)
		}
		run.Turns = append(run.Turns, schema.CassetteTurn{Content: gt.Answer})
		c.Golden.Turns = append(c.Golden.Turns, gt)
		turns = append(turns, rules)
	}
	c.Expect = map[string]any{"turns": turns}
	if c.User == nil { // one turn: its rules and golden are the run's
		c.Expect = turns[0].(map[string]any)
		c.Golden = &schema.Golden{Calls: c.Golden.Turns[0].Calls, Answer: c.Golden.Turns[0].Answer}
	}
	return c, tape, nil
}

// yamlNumbers returns v with every json.Number as a YAML number node
// spelled as written, so 10.0 stays a float (BFCL's result strings tell
// 10 from 10.0) where yaml.v3 would write a float64 10.0 as 10.
func yamlNumbers(v any) any {
	switch x := v.(type) {
	case json.Number:
		tag := "!!int"
		if strings.ContainsAny(string(x), ".eE") {
			tag = "!!float"
		}
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: tag, Value: string(x)}
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[k] = yamlNumbers(e)
		}
		return m
	case []any:
		l := make([]any, len(x))
		for i, e := range x {
			l[i] = yamlNumbers(e)
		}
		return l
	}
	return v
}

// multiTurnConfig is bfcl_multi_turn.cue.
func multiTurnConfig(dir, root, python string, stepLimit int) string {
	j := func(p string) string { return strconv.Quote(filepath.ToSlash(filepath.Join(dir, p))) }
	return fmt.Sprintf(`// BFCL's multi-turn categories imported by `+"`toolward import bfcl`"+`: each
// entry is a conversation against BFCL's own back-end classes, which
// server/bfcl_mcp.py (%[1]s with mpmath) runs from the BFCL installation
// at %[2]s. As written it replays each case's golden (BFCL's ground truth)
// from cassettes, offline; for a real model replace the backend, e.g.
// backend: ollama: {num_ctx: 16384} and models: ["qwen3:0.6b"]
// (docs/bfcl.md). Paths are relative to the directory toolward runs in.
name:  "bfcl-multi-turn"
cases: [%[3]s]
server: {
	command: [%[4]s, %[5]s, "--bfcl-root", %[6]s, "--tools", %[7]s]
	// A fresh process, so a fresh world, per run and per golden replay;
	// the warm pool starts them ahead of the runs (two per run in flight).
	isolation: "run"
	warm:      4
}
backend: replay: %[8]s
matrix: {
	models: ["bfcl-golden"]
	// BFCL offers the involved classes' functions, in its order.
	tools: [{name: "needed", order: "given"}]
}
// BFCL ends a turn after %[9]d tool-calling steps (MAXIMUM_STEP_LIMIT).
limits: {max_iterations: %[10]d, run_timeout: "10m", concurrency: 2, retries: 1}
`, python, root, j(MultiTurnCases+"/*.yaml"), strconv.Quote(python), j(serverDir+"/bfcl_mcp.py"), strconv.Quote(root),
		j(serverDir+"/tools.json"), j(MultiTurnCassettes), stepLimit, stepLimit+1)
}
