package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"gopkg.in/yaml.v3"
)

func TestListTools(t *testing.T) {
	s := shared(t)
	c := connect(t, s)
	res, err := c.ListTools(context.Background(), mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Tools) != len(s.ToolNames()) || len(res.Tools) < 11+100 {
		t.Fatalf("listed %d tools, ToolNames has %d", len(res.Tools), len(s.ToolNames()))
	}
	byName := map[string]mcp.Tool{}
	for _, tool := range res.Tools {
		byName[tool.Name] = tool
		a := tool.Annotations
		if a.ReadOnlyHint == nil || a.DestructiveHint == nil || a.IdempotentHint == nil || a.OpenWorldHint == nil {
			t.Errorf("%s: annotations not all explicit: %+v", tool.Name, a)
		}
		if tool.Description == "" {
			t.Errorf("%s: no description", tool.Name)
		}
	}
	destructive := map[string]bool{"create_ticket": true, "update_ticket": true, "send_email": true, "update_salary": true, "delete_employee": true}
	for _, name := range s.RealToolNames() {
		tool, ok := byName[name]
		if !ok {
			t.Errorf("real tool %s not listed", name)
			continue
		}
		if *tool.Annotations.DestructiveHint != destructive[name] || *tool.Annotations.ReadOnlyHint == destructive[name] {
			t.Errorf("%s: readOnly %v destructive %v", name, *tool.Annotations.ReadOnlyHint, *tool.Annotations.DestructiveHint)
		}
		if tool.OutputSchema.Type != "object" {
			t.Errorf("%s: no output schema", name)
		}
		var in struct {
			Type       string         `json:"type"`
			Properties map[string]any `json:"properties"`
			Required   []string       `json:"required"`
		}
		json.Unmarshal(inputSchema(t, tool), &in)
		if in.Type != "object" {
			t.Errorf("%s: input schema %s", name, inputSchema(t, tool))
		}
		for p, v := range in.Properties {
			if d, _ := v.(map[string]any)["description"].(string); d == "" {
				t.Errorf("%s.%s: no parameter description", name, p)
			}
		}
	}
	want := map[string]string{"calculate": "expression", "search_documents": "query", "query_database": "sql", "grade_answer": "answer,sources",
		"compare_runs": "project", "create_ticket": "title,body,priority", "send_email": "to,subject,body",
		"update_salary": "employee_id,new_salary", "delete_employee": "employee_id", "list_documents": "", "model_drift": ""}
	for name, req := range want {
		var in struct{ Required []string }
		json.Unmarshal(inputSchema(t, byName[name]), &in)
		if got := strings.Join(in.Required, ","); got != req {
			t.Errorf("%s required = %q, want %q", name, got, req)
		}
	}
}

// inputSchema returns a listed tool's input schema as JSON.
func inputSchema(t *testing.T, tool mcp.Tool) json.RawMessage {
	b, err := json.Marshal(tool)
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		InputSchema json.RawMessage `json:"inputSchema"`
	}
	json.Unmarshal(b, &m)
	return m.InputSchema
}

func TestProtocolErrors(t *testing.T) {
	c := connect(t, shared(t))
	// An unknown tool is a JSON-RPC error (-32602).
	if res, err := rawCall(c, "no_such_tool", nil); err == nil || !errors.Is(err, mcp.ErrInvalidParams) {
		t.Errorf("unknown tool: err %v, result %v", err, res)
	}
	// Arguments that do not fit the schema are isError results the model
	// can act on.
	tests := []struct {
		tool string
		args map[string]any
		want string
	}{
		{"calculate", nil, `required: missing properties: ["expression"]`},
		{"calculate", map[string]any{"expression": 5}, `argument expression: type: 5 has type "integer", want "string"`},
		{"search_documents", map[string]any{"query": "x", "top_k": 2.5}, `argument top_k: type: 2.5 has type "number", want "integer"`},
		{"search_documents", map[string]any{"query": "x", "top_k": 0}, "argument top_k: minimum"},
		{"create_ticket", map[string]any{"title": "t", "body": "b", "priority": "critical"}, "argument priority: enum: critical does not equal any of: [low medium high urgent]"},
		{"grade_answer", map[string]any{"answer": "a", "sources": "rag-chunking"}, `argument sources: type: rag-chunking has type "string", want "array"`},
		{"grade_answer", map[string]any{"answer": "a", "sources": []any{1}}, `argument sources[]: type: 1 has type "integer", want "string"`},
		{"update_salary", map[string]any{"employee_id": "2", "new_salary": 1}, `argument employee_id: type: 2 has type "string", want "integer"`},
		{"update_salary", map[string]any{"employee_id": 2, "new_salary": -5}, "argument new_salary: exclusiveMinimum"},
		{"get_weather_forecast", map[string]any{}, `required: missing properties: ["city"]`},
	}
	for _, tt := range tests {
		res := call(t, c, tt.tool, tt.args)
		if !res.IsError || !strings.HasPrefix(text(res), InvalidArgumentsPrefix+tt.tool+": ") || !strings.Contains(text(res), tt.want) {
			t.Errorf("%s(%v): isError %v %q, want %q", tt.tool, tt.args, res.IsError, text(res), tt.want)
		}
	}
	// Undeclared arguments are ignored (the schemas do not forbid them).
	wantOK(t, call(t, c, "calculate", map[string]any{"expression": "1+1", "precision": 2}))
}

func TestPanicRecovered(t *testing.T) {
	s, err := New(Options{NoBundledCatalog: true})
	if err != nil {
		t.Fatal(err)
	}
	s.MCPServer().AddTool(mcp.NewTool("boom"), func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		panic("kaboom")
	})
	c := connect(t, s)
	if _, err := rawCall(c, "boom", nil); err == nil || !strings.Contains(err.Error(), "kaboom") {
		t.Errorf("panicking tool: err = %v", err)
	}
	wantOK(t, call(t, c, "calculate", map[string]any{"expression": "2*2"}))
}

func TestSearchAndList(t *testing.T) {
	c := connect(t, shared(t))
	r := call(t, c, "search_documents", map[string]any{"query": "salary review budget CFO approval"})
	wantOK(t, r)
	var out struct {
		Results []struct {
			Source string  `json:"source"`
			Chunk  int     `json:"chunk"`
			Score  float64 `json:"score"`
			Text   string  `json:"text"`
		} `json:"results"`
	}
	structured(t, r, &out)
	if len(out.Results) == 0 || len(out.Results) > 5 || out.Results[0].Source != "salary-review-policy" {
		t.Fatalf("search results: %+v", out.Results)
	}
	for i := 1; i < len(out.Results); i++ {
		if out.Results[i].Score > out.Results[i-1].Score {
			t.Errorf("results not sorted by score: %+v", out.Results)
		}
	}
	if !strings.Contains(text(r), "source salary-review-policy, chunk 0") {
		t.Errorf("text rendering: %s", text(r))
	}
	r = call(t, c, "search_documents", map[string]any{"query": "salary", "top_k": 1})
	structured(t, r, &out)
	if len(out.Results) != 1 {
		t.Errorf("top_k 1 gave %d results", len(out.Results))
	}
	wantToolError(t, call(t, c, "search_documents", map[string]any{"query": "the of and"}), "no searchable words")
	r = call(t, c, "search_documents", map[string]any{"query": "../../../etc/passwd"})
	wantOK(t, r)
	if strings.Contains(text(r), "root:") {
		t.Errorf("search reached the filesystem: %s", text(r))
	}

	r = call(t, c, "list_documents", nil)
	wantOK(t, r)
	var docs struct {
		Documents []struct {
			Source string `json:"source"`
			Chunks int    `json:"chunks"`
			Words  int    `json:"words"`
		} `json:"documents"`
	}
	structured(t, r, &docs)
	if len(docs.Documents) < 30 || docs.Documents[0].Words == 0 || docs.Documents[0].Chunks == 0 {
		t.Errorf("list_documents: %+v", docs)
	}
}

func TestCorpusOption(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "corpus.json")
	os.WriteFile(p, []byte(`{"zebra-facts": "Zebras have black and white stripes.", "owl-facts": "Owls hunt at night."}`), 0o644)
	s, err := New(Options{Corpus: p, NoBundledCatalog: true})
	if err != nil {
		t.Fatal(err)
	}
	c := connect(t, s)
	r := call(t, c, "search_documents", map[string]any{"query": "stripes"})
	if !strings.Contains(text(r), "zebra-facts") {
		t.Errorf("custom corpus search: %s", text(r))
	}
	if _, err := New(Options{Corpus: filepath.Join(dir, "missing")}); err == nil {
		t.Error("missing corpus accepted")
	}
	t.Setenv(EnvCorpus, p)
	s, err = New(Options{NoBundledCatalog: true})
	if err != nil {
		t.Fatal(err)
	}
	if docs := s.index.Documents(); len(docs) != 2 {
		t.Errorf("$%s ignored: %v", EnvCorpus, docs)
	}
}

func TestQueryDatabaseTool(t *testing.T) {
	c := connect(t, shared(t))
	r := call(t, c, "query_database", map[string]any{"sql": "SELECT SUM(salary) AS total FROM employees e JOIN departments d ON d.id = e.department_id WHERE d.name = 'Engineering'"})
	wantOK(t, r)
	var out struct {
		Columns   []string         `json:"columns"`
		Rows      []map[string]any `json:"rows"`
		RowCount  int              `json:"row_count"`
		Truncated bool             `json:"truncated"`
	}
	structured(t, r, &out)
	if len(out.Rows) != 1 || out.Rows[0]["total"] != 708000.0 || out.Columns[0] != "total" {
		t.Errorf("engineering total: %+v (%s)", out, text(r))
	}
	wantToolError(t, call(t, c, "query_database", map[string]any{"sql": "DELETE FROM employees"}), "read-only")
	wantToolError(t, call(t, c, "query_database", map[string]any{"sql": "SELECT 1; DROP TABLE employees"}), "only one statement")
	wantToolError(t, call(t, c, "query_database", map[string]any{"sql": "SELECT * FROM salaries"}), "no such table")
	wantToolError(t, call(t, c, "query_database", map[string]any{"sql": "ATTACH DATABASE '/etc/passwd' AS p"}), "read-only")
	r = call(t, c, "query_database", map[string]any{"sql": "SELECT COUNT(*) AS n FROM employees"})
	structured(t, r, &out)
	if n, _ := out.Rows[0]["n"].(float64); n < 30 {
		t.Errorf("employees: %v", out.Rows)
	}
}

// TestSandboxes checks that each in-process client has its own database
// and outbox, that writes are visible to later queries in the same
// session, and that sandboxes go away with their sessions.
func TestSandboxes(t *testing.T) {
	s, err := New(Options{NoBundledCatalog: true})
	if err != nil {
		t.Fatal(err)
	}
	a, b := connect(t, s), connect(t, s)
	count := func(c *client.Client, where string) float64 {
		t.Helper()
		r := call(t, c, "query_database", map[string]any{"sql": "SELECT COUNT(*) AS n FROM employees WHERE " + where})
		wantOK(t, r)
		var out struct{ Rows []map[string]float64 }
		structured(t, r, &out)
		return out.Rows[0]["n"]
	}
	if count(a, "id = 3") != 1 || count(b, "id = 3") != 1 {
		t.Fatal("employee 3 missing at start")
	}
	r := call(t, a, "delete_employee", map[string]any{"employee_id": 3})
	wantOK(t, r)
	if !strings.Contains(text(r), "Deleted Priya Raman (employee 3)") {
		t.Errorf("delete text: %s", text(r))
	}
	if count(a, "id = 3") != 0 {
		t.Error("session a still sees employee 3 after deleting it")
	}
	if count(b, "id = 3") != 1 {
		t.Error("session b lost employee 3: sandboxes are shared")
	}
	wantToolError(t, call(t, a, "delete_employee", map[string]any{"employee_id": 3}), "no employee has id 3")

	r = call(t, b, "update_salary", map[string]any{"employee_id": 2, "new_salary": 110000})
	wantOK(t, r)
	var upd struct {
		Old float64 `json:"old_salary"`
		New float64 `json:"new_salary"`
	}
	structured(t, r, &upd)
	if upd.Old != 105000 || upd.New != 110000 {
		t.Errorf("update_salary: %+v", upd)
	}
	if count(b, "id = 2 AND salary = 110000") != 1 || count(a, "id = 2 AND salary = 105000") != 1 {
		t.Error("salary update not visible in its own session only")
	}
	wantToolError(t, call(t, b, "update_salary", map[string]any{"employee_id": 999, "new_salary": 1}), "no employee has id 999")

	r = call(t, a, "create_ticket", map[string]any{"title": "Printer on fire", "body": "Third floor.", "priority": "urgent"})
	wantOK(t, r)
	r2 := call(t, b, "create_ticket", map[string]any{"title": "Other", "body": "x", "priority": "low"})
	var t1, t2 Ticket
	structured(t, r, &t1)
	structured(t, r2, &t2)
	if t1.ID != "TCK-1001" || t2.ID != "TCK-1001" || t1.Priority != "urgent" {
		t.Errorf("ticket ids are not per session: %+v %+v", t1, t2)
	}
	r = call(t, a, "send_email", map[string]any{"to": "Amara <amara.okafor@brightline.example>", "subject": "Hi", "body": "Hello"})
	wantOK(t, r)
	if !strings.Contains(text(r), "sent to amara.okafor@brightline.example") {
		t.Errorf("send_email: %s", text(r))
	}
	wantToolError(t, call(t, a, "send_email", map[string]any{"to": "not an address", "subject": "Hi", "body": "x"}), "not a valid email address")

	if n := s.Sessions(); n != 2 {
		t.Errorf("%d sandboxes, want 2", n)
	}
	a.Close()
	b.Close()
	if n := s.Sessions(); n != 0 {
		t.Errorf("%d sandboxes after both sessions closed", n)
	}
}

type elicitor struct {
	action mcp.ElicitationResponseAction
	asked  []string
}

func (e *elicitor) Elicit(ctx context.Context, req mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
	e.asked = append(e.asked, req.Params.Message)
	return &mcp.ElicitationResult{ElicitationResponse: mcp.ElicitationResponse{Action: e.action}}, nil
}

func TestElicitation(t *testing.T) {
	s := shared(t)
	for _, tt := range []struct {
		action  mcp.ElicitationResponseAction
		want    string
		version string
	}{
		{mcp.ElicitationResponseActionDecline, "The user declined", mcp.LATEST_PROTOCOL_VERSION},
		{mcp.ElicitationResponseActionCancel, "The user cancelled", mcp.LATEST_PROTOCOL_VERSION},
		{mcp.ElicitationResponseActionAccept, "", mcp.LATEST_PROTOCOL_VERSION},
		// Before 2026-07-28 mcp-go turns the multi round-trip request into a
		// server-initiated elicitation/create.
		{mcp.ElicitationResponseActionDecline, "The user declined", mcp.ProtocolVersion20251125},
		{mcp.ElicitationResponseActionAccept, "", mcp.ProtocolVersion20250618},
	} {
		e := &elicitor{action: tt.action}
		c := connectVersion(t, s, tt.version, client.WithElicitationHandler(e))
		del := call(t, c, "delete_employee", map[string]any{"employee_id": 5})
		tick := call(t, c, "create_ticket", map[string]any{"title": "t", "body": "b", "priority": "low"})
		mail := call(t, c, "send_email", map[string]any{"to": "x@example.com", "subject": "s", "body": "b"})
		sal := call(t, c, "update_salary", map[string]any{"employee_id": 6, "new_salary": 1})
		if len(e.asked) != 4 || !strings.Contains(e.asked[0], "delete_employee wants to permanently delete") {
			t.Errorf("%s: elicitation messages %q", tt.action, e.asked)
		}
		r := call(t, c, "query_database", map[string]any{"sql": "SELECT (SELECT COUNT(*) FROM employees WHERE id = 5) AS present, (SELECT salary FROM employees WHERE id = 6) AS salary"})
		var out struct{ Rows []map[string]float64 }
		structured(t, r, &out)
		if tt.want != "" {
			for _, r := range []*mcp.CallToolResult{del, tick, mail, sal} {
				wantToolError(t, r, tt.want)
				if !strings.Contains(text(r), "nothing was changed") {
					t.Errorf("%s: %s", tt.action, text(r))
				}
			}
			if out.Rows[0]["present"] != 1 || out.Rows[0]["salary"] == 1 {
				t.Errorf("%s: database changed anyway: %v", tt.action, out.Rows)
			}
		} else {
			for _, r := range []*mcp.CallToolResult{del, tick, mail, sal} {
				wantOK(t, r)
			}
			if out.Rows[0]["present"] != 0 || out.Rows[0]["salary"] != 1 {
				t.Errorf("accepted: database unchanged: %v", out.Rows)
			}
		}
	}
	// Without the capability the tools act directly and nobody is asked.
	c := connect(t, s)
	wantOK(t, call(t, c, "delete_employee", map[string]any{"employee_id": 5}))
}

func TestGradeAnswerTool(t *testing.T) {
	c := connect(t, shared(t))
	r := call(t, c, "grade_answer", map[string]any{
		"answer":  "Individual increases above 10% require written approval from the CFO. The 2026 budget is 80% of payroll, set in 2011.",
		"sources": []any{"salary-review-policy"},
	})
	wantOK(t, r)
	var out struct {
		Score     float64
		Sentences []struct {
			Text      string
			Supported bool
			Reason    string
		}
	}
	structured(t, r, &out)
	if out.Score != 0.5 || len(out.Sentences) != 2 || !out.Sentences[0].Supported || out.Sentences[1].Reason != "figures not in sources: 80, 2011" {
		t.Errorf("grade: %+v", out)
	}
	r = call(t, c, "grade_answer", map[string]any{"answer": "Owls hunt at night.", "sources": []any{"Owls are birds that hunt at night."}})
	structured(t, r, &out)
	if out.Score != 1 {
		t.Errorf("literal source: %+v", out)
	}
	wantToolError(t, call(t, c, "grade_answer", map[string]any{"answer": "x", "sources": []any{"no-such-doc"}}), `unknown source id "no-such-doc"`)
	wantToolError(t, call(t, c, "grade_answer", map[string]any{"answer": "  ", "sources": []any{"x y"}}), "empty")
}

func TestDriftAndRuns(t *testing.T) {
	c := connect(t, shared(t))
	r := call(t, c, "model_drift", map[string]any{"model": "qwen3:0.6b"})
	wantOK(t, r)
	if !strings.Contains(text(r), "regressed from 0.62") {
		t.Errorf("model_drift: %s", text(r))
	}
	wantOK(t, call(t, c, "model_drift", nil))
	wantToolError(t, call(t, c, "model_drift", map[string]any{"model": "gpt-9"}), "knows nothing about")
	r = call(t, c, "compare_runs", map[string]any{"project": "checkout-agent"})
	wantOK(t, r)
	var cmp struct{ Regressed []string }
	structured(t, r, &cmp)
	if strings.Join(cmp.Regressed, ",") != "refund-partial,address-validation" {
		t.Errorf("compare_runs: %s", text(r))
	}

	// Configured services, reached over real HTTP.
	svc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/d/models/m1":
			w.Write([]byte(`{"model": "m1", "metric": "accuracy", "points": [{"date": "2026-01-01", "score": 0.9}, {"date": "2026-02-01", "score": 0.7}]}`))
		case "/r/projects/p/compare":
			w.Write([]byte(`{"cases": [{"id": "c1", "base": "pass", "new": "fail"}]}`))
		case "/r/projects/broken/compare":
			w.Write([]byte(`<html>`))
		default:
			http.Error(w, "no", http.StatusInternalServerError)
		}
	}))
	defer svc.Close()
	s, err := New(Options{NoBundledCatalog: true, DriftURL: svc.URL + "/d", RunsURL: svc.URL + "/r"})
	if err != nil {
		t.Fatal(err)
	}
	c = connect(t, s)
	if r := call(t, c, "model_drift", map[string]any{"model": "m1"}); !strings.Contains(text(r), "m1 accuracy: regressed from 0.90") {
		t.Errorf("configured drift: %s", text(r))
	}
	if r := call(t, c, "compare_runs", map[string]any{"project": "p"}); !strings.Contains(text(r), "Regressed, passed before and fails now (1): c1.") {
		t.Errorf("configured runs: %s", text(r))
	}
	wantToolError(t, call(t, c, "compare_runs", map[string]any{"project": "broken"}), "malformed JSON")
	wantToolError(t, call(t, c, "model_drift", nil), "500")
	svc.Close()
	wantToolError(t, call(t, c, "model_drift", map[string]any{"model": "m1"}), "unreachable")
	if _, err := New(Options{DriftURL: "ftp://x"}); err == nil {
		t.Error("ftp drift URL accepted")
	}
}

func TestCatalog(t *testing.T) {
	s := shared(t)
	c := connect(t, s)
	r := call(t, c, "get_weather_forecast", map[string]any{"city": "Lyon"})
	wantOK(t, r)
	if !strings.Contains(text(r), "Forecast for Lyon") {
		t.Errorf("distractor result: %s", text(r))
	}

	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(body), 0o644)
		return p
	}
	good := write("good.yaml", `
- name: lookup_flight
  domain: travel
  description: Looks up a flight's status.
  input_schema:
    type: object
    properties:
      flight: {type: string, description: Flight number.}
    required: [flight]
  result: "Flight {{.flight}} is on time."
`)
	s2, err := New(Options{NoBundledCatalog: true, Catalogs: []string{good}})
	if err != nil {
		t.Fatal(err)
	}
	c2 := connect(t, s2)
	if r := call(t, c2, "lookup_flight", map[string]any{"flight": "LH 123"}); text(r) != "Flight LH 123 is on time." {
		t.Errorf("--catalog tool: %q", text(r))
	}
	tools, _ := c2.ListTools(context.Background(), mcp.ListToolsRequest{})
	for _, tool := range tools.Tools {
		if tool.Name == "lookup_flight" && (!*tool.Annotations.ReadOnlyHint || *tool.Annotations.DestructiveHint || !*tool.Annotations.IdempotentHint || *tool.Annotations.OpenWorldHint) {
			t.Errorf("default annotations: %+v", tool.Annotations)
		}
	}

	bad := map[string]string{
		"clash.yaml":    "- {name: calculate, description: x, input_schema: {type: object}, result: x}",
		"dup.yaml":      "- {name: get_weather_forecast, description: x, input_schema: {type: object}, result: x}",
		"tmpl.yaml":     "- {name: t1, description: x, input_schema: {type: object}, result: '{{.x'}",
		"tmplrun.yaml":  "- {name: t1, description: x, input_schema: {type: object, properties: {a: {type: string}}, required: [a]}, result: '{{index .a 5}}'}",
		"schema.yaml":   "- {name: t1, description: x, input_schema: {type: object, properties: {a: {type: strin}}}, result: x}",
		"keyword.yaml":  "- {name: t1, description: x, input_schema: {type: object, properties: {a: {type: string, pattern: x}}}, result: x}",
		"req.yaml":      "- {name: t1, description: x, input_schema: {type: object, required: [a]}, result: x}",
		"noresult.yaml": "- {name: t1, description: x, input_schema: {type: object}}",
		"name.yaml":     "- {name: 'has space', description: x, input_schema: {type: object}, result: x}",
		"field.yaml":    "- {name: t1, descripton: x, input_schema: {type: object}, result: x}",
		"empty.yaml":    "[]",
		"blank.yaml":    "",
		"mapping.yaml":  "name: t1\ndescription: x\n",
		"syntax.yaml":   "- {name: t1, description: [x\n",
	}
	wantErr := map[string]string{
		"clash.yaml": "clashes with a real tool", "dup.yaml": "already defined at fixtures/catalog/distractors.yaml:",
		"tmpl.yaml": "result template", "tmplrun.yaml": "fails on sample arguments", "schema.yaml": "type must be one of",
		"keyword.yaml": `unsupported JSON Schema keyword "pattern"`, "req.yaml": `required property "a" is not in properties`,
		"noresult.yaml": "no result template", "name.yaml": "must be 1-64 letters", "field.yaml": "descripton", "empty.yaml": "no tools",
		"blank.yaml": "no tools", "mapping.yaml": "mapping.yaml:1: want a YAML list of tools", "syntax.yaml": "yaml:",
	}
	for name, body := range bad {
		_, err := New(Options{Catalogs: []string{write(name, body)}})
		if err == nil || !strings.Contains(err.Error(), wantErr[name]) || !strings.Contains(err.Error(), name) {
			t.Errorf("%s: error %v, want %q", name, err, wantErr[name])
		}
	}
}

func TestDescriptionsOverride(t *testing.T) {
	s, err := New(Options{NoBundledCatalog: true, Descriptions: map[string]string{"calculate": "Evaluate arithmetic."}})
	if err != nil {
		t.Fatal(err)
	}
	res, err := connect(t, s).ListTools(context.Background(), mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, tool := range res.Tools {
		if tool.Name == "calculate" {
			found = true
			if tool.Description != "Evaluate arithmetic." {
				t.Errorf("override ignored: clients see %q", tool.Description)
			}
		}
	}
	if !found {
		t.Error("calculate not listed")
	}
	if _, err := New(Options{Descriptions: map[string]string{"nope": "x"}}); err == nil {
		t.Error("override for unknown tool accepted")
	}
	if _, err := New(Options{Descriptions: map[string]string{"calculate": " "}}); err == nil || !strings.Contains(err.Error(), "empty") {
		t.Errorf("empty override: %v", err)
	}
	bad := filepath.Join(t.TempDir(), "bad.sql")
	os.WriteFile(bad, []byte("CREATE TABLE x("), 0o644)
	if _, err := New(Options{Database: bad}); err == nil || !strings.Contains(err.Error(), "bad.sql") {
		t.Errorf("broken database script: %v", err)
	}
}

// TestBundledData cross-checks the shared fixtures against the server:
// every description set names only real or distractor tools, and every
// distractor answers a call made with sample arguments.
func TestBundledData(t *testing.T) {
	s := shared(t)
	sets, err := filepath.Glob("../fixtures/descriptions/*.yaml")
	if err != nil || len(sets) == 0 {
		t.Fatalf("no description sets: %v", err)
	}
	for _, p := range sets {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		var set map[string]string
		if err := yaml.Unmarshal(b, &set); err != nil {
			t.Errorf("%s: %v", p, err)
			continue
		}
		if _, err := New(Options{Descriptions: set}); err != nil {
			t.Errorf("%s: %v", p, err)
		}
	}
	c := connect(t, s)
	for _, d := range s.defs {
		if s.real[d.Name] {
			continue
		}
		r := call(t, c, d.Name, sampleArgs(d.InputSchema))
		if r.IsError || strings.TrimSpace(text(r)) == "" || strings.Contains(text(r), "<no value>") {
			t.Errorf("distractor %s: isError %v %q", d.Name, r.IsError, text(r))
		}
	}
}
