package bfcl

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/toolward/toolward/mcpserver"
	"github.com/toolward/toolward/schema"
	"github.com/toolward/toolward/schema/runconfig"
)

// bundledNames are the bundled server's tool names, which the import
// leaves to it, as toolward import does.
func bundledNames(t *testing.T) map[string]bool {
	srv, err := mcpserver.New(mcpserver.Options{})
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, n := range srv.ToolNames() {
		names[n] = true
	}
	return names
}

// importAndValidate imports dataDir and validates the suite an imported suite as toolward validate does,
// catalogs included, and returns its layout.
func importAndValidate(t *testing.T, dataDir string) (*Suite, *Layout, string) {
	t.Helper()
	d, err := Read(dataDir, nil)
	if err != nil {
		t.Fatal(err)
	}
	s := Convert(d, bundledNames(t))
	out := t.TempDir()
	l, err := Write(s, out, out, schema.CaseJSONSchema())
	if err != nil {
		t.Fatal(err)
	}
	catalog := func(p string) error {
		src, err := schema.ReadFile(p, "catalog file", mcpserver.MaxCatalogFileSize)
		if err == nil {
			_, err = mcpserver.ParseToolDefs(src, p)
		}
		return err
	}
	sum, errs := runconfig.CheckWith([]string{filepath.Join(out, "cases"), filepath.Join(out, l.Config)}, runconfig.Options{Catalog: catalog})
	for _, e := range errs {
		t.Error(e)
	}
	if sum.Catalogs != len(l.CatalogFiles) || sum.Cases != l.Cases {
		t.Errorf("validate looked at %d catalogs and %d cases, want %d and %d", sum.Catalogs, sum.Cases, len(l.CatalogFiles), l.Cases)
	}
	return s, l, out
}

// TestQuirkySchemasServed: real BFCL entries whose schemas contradict
// themselves (testdata/quirks/README.md) import into a suite that
// validates; the bundled server offers each schema as BFCL wrote it and
// refuses no call BFCL's checker accepts: the goldens, an answer outside
// its enum ("openai"), an array for an array whose enum holds strings.
// Before unchecked_args, the server refused all four catalogs.
func TestQuirkySchemasServed(t *testing.T) {
	s, l, out := importAndValidate(t, "testdata/quirks")
	ctx, c, tools := serve(t, l, out)
	offered := map[string]string{}
	for name, tool := range tools {
		b, _ := json.Marshal(tool.InputSchema)
		offered[name] = string(b)
	}
	for tool, want := range map[string]string{
		"extract_parameters_v1":    `"enum":["favorability","admired employer",`,
		"product_search":           `"default":"any"`,
		"requests_get":             `"default":[null,null]`,
		"Events_3_BuyEventTickets": `"enum":["1","2","3","4","5","6","7","8","9"]`,
	} {
		if !strings.Contains(offered[tool], want) {
			t.Errorf("%s is offered without %s: %s", tool, want, offered[tool])
		}
	}
	call := func(tool string, args map[string]any) {
		req := mcp.CallToolRequest{}
		req.Params.Name, req.Params.Arguments = tool, args
		res, err := c.CallTool(ctx, req)
		if err != nil {
			t.Fatalf("%s(%v): %v", tool, args, err)
		}
		if res.IsError {
			t.Errorf("%s(%v) refused: %v", tool, args, res.Content)
		}
	}
	goldens := 0
	for _, cases := range s.Cases {
		for _, cs := range cases {
			if cs.Golden == nil {
				continue
			}
			for _, gc := range cs.Golden.Calls {
				goldens++
				call(gc.Tool, gc.Args)
			}
		}
	}
	if goldens != 4 { // the live_simple, live_multiple and live_relevance entries
		t.Errorf("%d golden calls, want 4", goldens)
	}
	call("list_servers", map[string]any{"type": "openai"})
	call("extract_parameters_v1", map[string]any{"demographics": []any{"millennials"}, "targets": []any{"brand:Apple"}, "metrics": []any{"view"}, "min_date": "2022-07-01"})
	call("Events_3_BuyEventTickets", map[string]any{"event_name": "Hamilton", "number_of_tickets": 2, "date": "2023-06-01", "city": "New York, NY"})
	call("product_search", map[string]any{"category": "clothing"})
}

// serve starts the bundled server on an imported suite's catalogs and
// returns a client and the tools it lists, by name.
func serve(t *testing.T, l *Layout, out string) (context.Context, *client.Client, map[string]mcp.Tool) {
	t.Helper()
	var cats []string
	for _, f := range l.CatalogFiles {
		cats = append(cats, filepath.Join(out, f))
	}
	srv, err := mcpserver.New(mcpserver.Options{Catalogs: cats})
	if err != nil {
		t.Fatal(err)
	}
	c, err := client.NewInProcessClient(srv.MCPServer())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	ctx := context.Background()
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	if _, err := c.Initialize(ctx, init); err != nil {
		t.Fatal(err)
	}
	list, err := c.ListTools(ctx, mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	tools := map[string]mcp.Tool{}
	for _, tool := range list.Tools {
		tools[tool.Name] = tool
	}
	return ctx, c, tools
}

// TestOfferedSchemaIsBFCLs: for real entries (testdata/offered/README.md)
// with a null default, a "True" and a "False" default and optional keys,
// the server lists each tool as BFCL sends it to an OpenAI-style
// function-calling model: the JSON below is written by hand from BFCL's
// convert_to_tool and _cast_to_openai_type (bfcl_eval/model_handler/utils.py)
// for ModelStyle.OPENAI_COMPLETIONS, the function's "parameters" and
// description (with the note _get_language_specific_hint adds,
// bfcl_eval/utils.py). The import used to drop the null default and the
// optional keys, and offer false for "False".
func TestOfferedSchemaIsBFCLs(t *testing.T) {
	_, l, out := importAndValidate(t, "testdata/offered")
	_, _, tools := serve(t, l, out)
	const py = " Note that the provided function is in Python 3 syntax."
	for name, want := range map[string]struct{ description, parameters string }{
		"database_create_backup": {"This function creates a backup of the database before modification" + py,
			`{"type": "object", "properties": {"db_name": {"type": "string", "description": "The name of the database to create a backup of."}, "backup_location": {"type": "string", "description": "The file path where the backup should be stored."}, "timestamp": {"type": "boolean", "description": "Option to append a timestamp to the backup file name.", "default": "False"}}, "required": ["db_name", "backup_location"]}`},
		"video_games_store_currency": {"Fetches the currency used in a specific region in a gaming platform store." + py,
			`{"type": "object", "properties": {"platform": {"type": "string", "description": "The gaming platform e.g. PlayStation, Xbox, Nintendo Switch"}, "region": {"type": "string", "description": "The region e.g. United States, United Kingdom, Japan", "default": "True"}}, "required": ["platform"]}`},
		"video_games_on_sale": {"Checks if a particular game is currently on sale in a specific gaming platform store and in a specific region." + py,
			`{"type": "object", "properties": {"game_title": {"type": "string", "description": "The title of the video game"}, "platform": {"type": "string", "description": "The gaming platform e.g. PlayStation, Xbox, Nintendo Switch"}, "region": {"type": "string", "description": "The region e.g. United States, United Kingdom, Japan. Default United States", "optional": "True"}}, "required": ["game_title", "platform"]}`},
		"math_sqrt": {"Calculates the square root of a number." + py,
			`{"type": "object", "properties": {"num": {"type": "number", "description": "The number. This is a float type value.", "format": "float"}, "accuracy": {"type": "integer", "description": "The number of decimal places in the result. Default to 0", "optional": true}}, "required": ["num"]}`},
		"respond": {"Generates a response message based on the provided input." + py,
			`{"type": "object", "properties": {"message": {"type": "string", "description": "The message to be included in the response."}, "location": {"type": "string", "description": "The geographical location for which the response is tailored, in the format of 'City, State', such as 'Berkeley, CA' or 'New York, NY'.", "default": null}}, "required": ["message"]}`},
	} {
		tool, ok := tools[name]
		if !ok {
			t.Errorf("%s is not listed", name)
			continue
		}
		if tool.Description != want.description {
			t.Errorf("%s: description %q, want %q", name, tool.Description, want.description)
		}
		got, _ := json.Marshal(tool.InputSchema)
		if len(tool.RawInputSchema) > 0 {
			got = tool.RawInputSchema
		}
		if !jsonEqual(t, got, []byte(want.parameters)) {
			t.Errorf("%s is offered as %s\nBFCL sends %s", name, got, want.parameters)
		}
	}
}

// fullData returns BFCL's full data directory, bfcl_eval/data of
// ../shared/bfcl-v4 beside the repository (or /work/shared/bfcl-v4), and
// skips the test when neither is there.
func fullData(t *testing.T) string {
	for _, root := range []string{"../../../../shared/bfcl-v4", "/work/shared/bfcl-v4"} {
		p := filepath.Join(root, "bfcl_eval", "data")
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	t.Skip("no ../shared/bfcl-v4 beside the repository: the full BFCL data is not here")
	return ""
}

// TestFullDataImports: every single-turn entry of the real BFCL data
// imports (none skipped), and the bundled server loads all its catalogs
// (issue 25: it refused dozens of tools). The cases are validated by
// scripts/bfcl_ci.sh (toolward validate), which replays them too: under
// -race that would add minutes to the package's tests.
func TestFullDataImports(t *testing.T) {
	dir := fullData(t)
	d, err := Read(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	entries := map[string]int{}
	for _, c := range d.Categories {
		entries[c.Name] = len(c.Entries)
	}
	s := Convert(d, bundledNames(t))
	for _, name := range SupportedCategories {
		if entries[name] == 0 || len(s.Cases[name]) != entries[name] {
			t.Errorf("%s: %d of %d entries imported", name, len(s.Cases[name]), entries[name])
		}
	}
	out := t.TempDir()
	l, err := Write(s, out, out, schema.CaseJSONSchema())
	if err != nil {
		t.Fatal(err)
	}
	var cats []string
	for _, f := range l.CatalogFiles {
		cats = append(cats, filepath.Join(out, f))
	}
	if _, err := mcpserver.New(mcpserver.Options{Catalogs: cats}); err != nil {
		t.Fatal(err)
	}
}
