package bfcl

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/toolward/toolward/schema"
)

// sharedBFCL returns ../shared/bfcl-v4 (BFCL's data and back ends), found
// above the working directory (a checkout or a worktree of one), or skips.
func sharedBFCL(t *testing.T) string {
	t.Helper()
	dir, _ := filepath.Abs(".")
	for {
		p := filepath.Join(dir, "shared", "bfcl-v4")
		if _, err := os.Stat(filepath.Join(p, "bfcl_eval", "eval_checker", "multi_turn_eval", "multi_turn_utils.py")); err == nil {
			return p
		}
		up := filepath.Dir(dir)
		if up == dir {
			t.Skip("no shared/bfcl-v4 above the working directory (BFCL's back ends)")
		}
		dir = up
	}
}

// needPython skips without a python3 that imports mpmath (BFCL's MathAPI
// needs it).
func needPython(t *testing.T) {
	t.Helper()
	if err := exec.Command("python3", "-c", "import mpmath").Run(); err != nil {
		t.Skipf("python3 with mpmath is needed: %v", err)
	}
}

// layout lays testdata/multiturn out as ROOT/bfcl_eval/data, with links to
// the shared BFCL code and function documents, and returns the data
// directory.
func layout(t *testing.T, shared string) string {
	t.Helper()
	root := t.TempDir()
	data := filepath.Join(root, "bfcl_eval", "data")
	must(t, os.MkdirAll(filepath.Join(data, "possible_answer"), 0o755))
	for _, sub := range []string{"eval_checker", "constants", "__init__.py"} {
		must(t, os.Symlink(filepath.Join(shared, "bfcl_eval", sub), filepath.Join(root, "bfcl_eval", sub)))
	}
	must(t, os.Symlink(filepath.Join(shared, "bfcl_eval", "data", "multi_turn_func_doc"), filepath.Join(data, "multi_turn_func_doc")))
	for _, f := range []string{"", "possible_answer/"} {
		for _, c := range MultiTurnCategories {
			name := f + "BFCL_v4_" + c + ".json"
			b, err := os.ReadFile(filepath.Join("testdata", "multiturn", name))
			must(t, err)
			must(t, os.WriteFile(filepath.Join(data, name), b, 0o644))
		}
	}
	return data
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func TestRootOfData(t *testing.T) {
	root := t.TempDir()
	data := filepath.Join(root, "bfcl_eval", "data")
	must(t, os.MkdirAll(data, 0o755))
	if _, err := Root(data); err == nil || !strings.Contains(err.Error(), "multi_turn_utils.py is missing") {
		t.Fatalf("no back ends: %v", err)
	}
	mte := filepath.Join(root, "bfcl_eval", "eval_checker", "multi_turn_eval")
	must(t, os.MkdirAll(mte, 0o755))
	must(t, os.WriteFile(filepath.Join(mte, "multi_turn_utils.py"), nil, 0o644))
	got, err := Root(data + "/")
	if want, _ := filepath.EvalSymlinks(root); err != nil || got != want {
		t.Fatalf("Root = %q, %v; want %q", got, err, want)
	}
	if _, err := Root(root); err == nil || !strings.Contains(err.Error(), "not a BFCL installation's bfcl_eval/data") {
		t.Fatalf("not a data dir: %v", err)
	}
	// Without the interpreter the import says what to install.
	_, err = ImportMultiTurn(data, t.TempDir(), "out", "no-such-python-for-toolward", nil)
	if err == nil || !strings.Contains(err.Error(), "no-such-python-for-toolward not found on PATH") || !strings.Contains(err.Error(), "python3-mpmath") {
		t.Fatalf("no python: %v", err)
	}
}

// TestImportMultiTurn imports five real entries (testdata/multiturn) with
// the real export and checks what BFCL's inference loop and checker make
// of them is in the cases.
func TestImportMultiTurn(t *testing.T) {
	shared := sharedBFCL(t)
	needPython(t)
	out := t.TempDir()
	l, err := ImportMultiTurn(layout(t, shared), out, "out", "python3", nil)
	if err != nil {
		t.Fatal(err)
	}
	if l.Tools != 128 || len(l.Skipped) > 0 || !slices.Equal(l.Categories, MultiTurnCategories) {
		t.Fatalf("layout %+v", l)
	}
	cases, err := schema.LoadCases([]string{filepath.Join(out, MultiTurnCases, "*.yaml")})
	if err != nil {
		t.Fatal(err)
	}
	byID := map[string]*schema.Case{}
	for _, c := range cases {
		byID[c.ID] = c
	}
	if len(byID) != 6 {
		t.Fatalf("%d cases", len(byID))
	}
	var tools []mtTool
	b, err := os.ReadFile(filepath.Join(out, "server", "tools.json"))
	must(t, err)
	must(t, json.Unmarshal(b, &tools))
	desc := map[string]string{}
	for _, tl := range tools {
		desc[tl.Name] = tl.Description
	}
	if !strings.HasSuffix(desc["cd"], "Note that the provided function is in Python 3 syntax.") || len(desc) != 128 {
		t.Errorf("tools.json: %d tools, cd: %q", len(desc), desc["cd"])
	}

	mf := byID["multi_turn_miss_func_0"]
	if slices.Contains(mf.Needs, "sort") || !slices.Contains(mf.Needs, "cd") || !mf.ExecuteUnoffered {
		t.Errorf("miss_func needs %v", mf.Needs)
	}
	add := mf.User.AddTools
	if len(add) != 1 || add[0].Turn != 3 || !slices.Equal(add[0].Tools, []string{"sort"}) ||
		strings.Contains(add[0].Descriptions["sort"], "Python 3") || !strings.HasPrefix(add[0].Descriptions["sort"], "This tool belongs to the Gorilla file system") {
		t.Errorf("miss_func add_tools %+v", add)
	}
	if mf.User.Replies[2] != "I have updated some more functions you can choose from. What about now?" {
		t.Errorf("the held-out turn's message: %q", mf.User.Replies[2])
	}
	turns := mf.Expect["turns"].([]any)
	if len(turns) != 5 || len(turns[2].(map[string]any)) != 0 || turns[3].(map[string]any)["contains_golden_results"] != true {
		t.Errorf("miss_func expect.turns %v", turns)
	}

	base := byID["multi_turn_base_0"]
	if g := base.Golden.Turns[2].Calls; len(g) != 1 || g[0].Tool != "sort" || g[0].Args["file_name"] != "final_report.pdf" {
		t.Errorf("positional ground truth sort('final_report.pdf'): %+v", g)
	}
	if s := base.Setup; len(s) != 1 || s[0].Tool != "bfcl_load" || s[0].Args["long_context"] != false {
		t.Errorf("setup %+v", s)
	}

	// Numbers keep their spelling: BFCL's results tell 3287.0 from 3287.
	lc := byID["multi_turn_long_context_32"]
	if v := lc.Golden.Turns[1].Calls[0].Args["value"]; v != json.Number("3287.0") {
		t.Errorf("logarithm value = %#v, want 3287.0", v)
	}
	if lc.Setup[0].Args["long_context"] != true {
		t.Errorf("long_context setup %+v", lc.Setup[0].Args)
	}
	one := byID["multi_turn_base_50"]
	if one.User != nil || len(one.Golden.Calls) != 2 || fmt.Sprint(one.Expect["min_calls"]) != "1" {
		t.Errorf("one-turn entry: user %+v golden %+v expect %v", one.User, one.Golden, one.Expect)
	}
	if cfg, _ := one.Setup[0].Args["initial_config"].(string); !strings.Contains(cfg, `"fuelLevel":10.5`) {
		t.Errorf("initial_config = %#v, want JSON text with fuelLevel 10.5", one.Setup[0].Args["initial_config"])
	}
	// The scenario keeps BFCL's key order: multi_turn_base_5's root is
	// "data", the first key, before "archive".
	if cfg, _ := byID["multi_turn_base_5"].Setup[0].Args["initial_config"].(string); !strings.Contains(cfg, `"root":{"data":`) {
		t.Errorf("multi_turn_base_5 initial_config = %.200s…, want the root's keys in BFCL's order", cfg)
	}
	mp := byID["multi_turn_miss_param_105"]
	if len(mp.Golden.Turns[1].Calls) != 0 || len(mp.Expect["turns"].([]any)[1].(map[string]any)) != 0 {
		t.Errorf("miss_param's empty turn: %+v", mp.Golden.Turns[1])
	}
}

// mcpClient speaks JSON-RPC lines to a server process.
type mcpClient struct {
	t   *testing.T
	in  io.Writer
	out *bufio.Scanner
	id  int
}

func (c *mcpClient) call(method string, params any) map[string]any {
	c.t.Helper()
	c.id++
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": c.id, "method": method, "params": params})
	if _, err := c.in.Write(append(b, '\n')); err != nil {
		c.t.Fatal(err)
	}
	if !c.out.Scan() {
		c.t.Fatalf("%s: no reply: %v", method, c.out.Err())
	}
	var reply map[string]any
	d := json.NewDecoder(strings.NewReader(c.out.Text()))
	d.UseNumber()
	must(c.t, d.Decode(&reply))
	if reply["error"] != nil {
		c.t.Fatalf("%s: %v", method, reply["error"])
	}
	return reply["result"].(map[string]any)
}

// text calls a tool and returns its text and whether it is an error.
func (c *mcpClient) text(tool string, args any) (string, bool) {
	c.t.Helper()
	r := c.call("tools/call", map[string]any{"name": tool, "arguments": args})
	return r["content"].([]any)[0].(map[string]any)["text"].(string), r["isError"] == true
}

func startServer(t *testing.T, script, shared, tools string) *mcpClient {
	t.Helper()
	cmd := exec.Command("python3", script, "--bfcl-root", shared, "--tools", tools)
	in, err := cmd.StdinPipe()
	must(t, err)
	outp, err := cmd.StdoutPipe()
	must(t, err)
	cmd.Stderr = os.Stderr
	must(t, cmd.Start())
	t.Cleanup(func() { in.Close(); cmd.Wait() })
	c := &mcpClient{t: t, in: in, out: bufio.NewScanner(outp)}
	c.out.Buffer(nil, 64<<20)
	if v := c.call("initialize", map[string]any{"protocolVersion": "2025-06-18"})["protocolVersion"]; v != "2025-06-18" {
		t.Fatalf("protocol %v", v)
	}
	return c
}

// TestServer runs the real server (python3, BFCL's classes from
// ../shared) and checks its results are what BFCL's own execution of the
// ground-truth strings gives, and its states compare as BFCL compares.
func TestServer(t *testing.T) {
	shared := sharedBFCL(t)
	needPython(t)
	out := t.TempDir()
	data := layout(t, shared)
	if _, err := ImportMultiTurn(data, out, "out", "python3", []string{"multi_turn_base"}); err != nil {
		t.Fatal(err)
	}
	script, tools := filepath.Join(out, "server", "bfcl_mcp.py"), filepath.Join(out, "server", "tools.json")

	// BFCL's execution of multi_turn_base_0's ground truth, turn by turn.
	ref := exec.Command("python3", "-c", `
import sys, json
sys.path.insert(0, sys.argv[1])
from bfcl_eval.eval_checker.multi_turn_eval.multi_turn_utils import execute_multi_turn_func_call
e = json.loads(open(sys.argv[2]).readline())
gt = json.loads(open(sys.argv[3]).readline())["ground_truth"]
print(json.dumps([execute_multi_turn_func_call(t, e["initial_config"], e["involved_classes"], "ref", e["id"])[0] for t in gt]))
`, shared, filepath.Join(data, "BFCL_v4_multi_turn_base.json"), filepath.Join(data, "possible_answer", "BFCL_v4_multi_turn_base.json"))
	b, err := ref.Output()
	must(t, err)
	var want [][]string
	must(t, json.Unmarshal(b, &want))

	cases, err := schema.LoadCases([]string{filepath.Join(out, MultiTurnCases, "multi_turn_base.yaml")})
	must(t, err)
	golden := cases[0].Golden.Turns
	// The world is loaded as a run loads it: with the case's setup call.
	load := cases[0].Setup[0].Args

	c := startServer(t, script, shared, tools)
	listed := c.call("tools/list", map[string]any{})["tools"].([]any)
	probes := 0
	for _, tl := range listed {
		if m, _ := tl.(map[string]any)["_meta"].(map[string]any); m["toolward/probe_only"] == true {
			probes++
		}
	}
	if len(listed) != 130 || probes != 2 {
		t.Fatalf("%d tools listed, %d probe-only", len(listed), probes)
	}
	if txt, isErr := c.text("cd", map[string]any{"folder": "x"}); !isErr || !strings.Contains(txt, "bfcl_load first") {
		t.Errorf("a call before bfcl_load: %q", txt)
	}
	if txt, isErr := c.text("bfcl_load", load); isErr {
		t.Fatal(txt)
	}
	other := startServer(t, script, shared, tools)
	other.text("bfcl_load", load)
	for i, turn := range golden {
		for j, call := range turn.Calls {
			if got, _ := c.text(call.Tool, call.Args); got != want[i][j] {
				t.Errorf("turn %d call %d %s: got %q, BFCL gives %q", i, j, call.Tool, got, want[i][j])
			}
			other.text(call.Tool, call.Args)
		}
	}
	s1, _ := c.text("bfcl_state", map[string]any{})
	s2, _ := other.text("bfcl_state", map[string]any{})
	if s1 != s2 || !strings.Contains(s1, `"#Directory"`) {
		t.Errorf("two worlds after the same calls differ:\n%s\n%s", s1, s2)
	}
	other.text("mkdir", map[string]any{"dir_name": "extra"})
	if s3, _ := other.text("bfcl_state", map[string]any{}); s3 == s1 {
		t.Error("a new directory left the state unchanged")
	}
	// multi_turn_base_5's root is "data", the first of its two keys, as
	// BFCL loads it (a scenario whose keys were sorted starts in "archive").
	for _, k := range cases[1:] {
		if k.ID == "multi_turn_base_5" {
			c.text("bfcl_load", k.Setup[0].Args)
			if got, _ := c.text("pwd", map[string]any{}); got != `{"current_working_directory": "/data"}` {
				t.Errorf("multi_turn_base_5 starts in %s, BFCL in /data", got)
			}
			c.text("bfcl_load", load)
		}
	}
	// A function of a class not involved is BFCL's NameError; a hostile
	// argument name is not evaluated.
	if got, _ := c.text("get_stock_info", map[string]any{"symbol": "X"}); got != "Error during execution: name 'get_stock_info' is not defined" {
		t.Errorf("not involved: %q", got)
	}
	if got, _ := c.text("ls", map[string]any{"a=__import__('os').getpid(),b": 1}); !strings.Contains(got, "refuses to evaluate") {
		t.Errorf("hostile name: %q", got)
	}
	if got, _ := c.text("ls", map[string]any{"not an identifier": 1}); !strings.HasPrefix(got, "Error during execution: invalid syntax") {
		t.Errorf("syntax error: %q", got)
	}
}

func readFile(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	must(t, err)
	return string(b)
}
