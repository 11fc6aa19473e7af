package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/toolward/toolward/engine"
	"github.com/toolward/toolward/engine/backend"
	"github.com/toolward/toolward/engine/backend/anthropic"
	"github.com/toolward/toolward/engine/backend/ollama"
	"github.com/toolward/toolward/engine/backend/openai"
	"github.com/toolward/toolward/engine/session"
	"github.com/toolward/toolward/engine/toolset"
	"github.com/toolward/toolward/internal/analysis/report"
	"github.com/toolward/toolward/schema"
	"github.com/toolward/toolward/schema/cell"
	"github.com/toolward/toolward/schema/runconfig"
)

func init() {
	register(&command{name: "tools", summary: "list a server's tools as the model receives them", run: runTools})
}

const toolsUsage = `usage: toolward tools [flags] CONFIG
       toolward tools [flags] -- COMMAND [ARG...]
       toolward tools [flags] --url URL [--header K=V]...
       toolward tools [flags] SERVER --call NAME [--args JSON] [--confirm MODE]

Connects to an MCP server (CONFIG's server, a stdio COMMAND, or a
streamable HTTP URL) and prints its name and version, then every tool in
listing order as the model receives it: the name, the description (after
the description set --descriptions), the parameter schema exactly as the
backend sends it, the MCP annotations, and whether confirm modes approve
and deny gate the tool (under approve a gated call is made and recorded
approved; under deny it is not made and the model is told the user
declined). A run offers a subset of these tools in a shuffled order.

--backend picks the conversion: ollama (what Ollama's /api/chat gets; the
default without a config, and for an ollama config), openai (the function
tools of /chat/completions; the default for an openai config), anthropic
(the Messages API's {name, description, input_schema}; the default for an
anthropic config) or mcp (the JSON Schema as the server lists it; the
default for a replay config, which sends tools to no model).

--call makes one call of tool NAME with the arguments --args (a JSON
object, default {}) after the listing, as a run makes it: under
--confirm (auto, approve or deny; default approve) a gated tool is
approved or declined, and the server's elicitation requests are answered
the same way. The result is printed after the tools; a failed call (the
server broke, did not answer within --timeout) exits 1.

A COMMAND server gets the same environment as under "toolward run":
PATH, HOME and a few more of toolward's variables, plus --env; with
--inherit-env, all of them. Its stderr is discarded unless it fails to
start, when the error quotes its first lines.

Flags:
`

// toolsTimeout bounds connecting and listing, as for run (npx -y may
// first download the server).
const toolsTimeout = 2 * time.Minute

// toolsFlags are the parsed arguments of toolward tools.
type toolsFlags struct {
	config       string
	command      []string
	url          string
	headers      multiFlag
	env          multiFlag
	inheritEnv   bool
	descriptions string
	backend      string
	format       string
	timeout      time.Duration
	call         string
	args         string
	confirm      string

	oauthID, oauthSecretEnv, oauthScope string
}

func runTools(args []string, stdout, stderr io.Writer) int {
	tf, code := parseToolsFlags(args, stderr)
	if code >= 0 {
		return code
	}
	out, err := listTools(tf)
	if err != nil {
		fmt.Fprintln(stderr, "toolward tools:", err)
		return 1
	}
	for _, w := range out.warnings {
		fmt.Fprintln(stderr, "toolward tools: warning:", w)
	}
	if tf.format == "json" {
		err = writeToolsJSON(stdout, out)
	} else {
		err = writeToolsText(stdout, out)
	}
	if err != nil {
		fmt.Fprintln(stderr, "toolward tools:", err)
		return 1
	}
	return 0
}

// parseToolsFlags returns the flags, or an exit code >= 0 when the
// command must stop (help, usage error).
func parseToolsFlags(args []string, stderr io.Writer) (*toolsFlags, int) {
	tf := &toolsFlags{}
	fs := newFlags("tools", toolsUsage, true, stderr)
	fs.StringVar(&tf.url, "url", "", "connect to the streamable HTTP server at `URL`")
	fs.Var(&tf.headers, "header", "send HTTP header `K=V` with --url (repeatable)")
	fs.StringVar(&tf.oauthID, "oauth-client-id", "", "with --url: get a token by OAuth client credentials as client `ID` (server.oauth)")
	fs.StringVar(&tf.oauthSecretEnv, "oauth-secret-env", "", "with --oauth-client-id: the environment variable `NAME` holding the client secret")
	fs.StringVar(&tf.oauthScope, "oauth-scope", "", "with --oauth-client-id: the `SCOPE` to ask for (default: what the server asks for)")
	fs.Var(&tf.env, "env", "set `K=V` in a COMMAND server's environment (repeatable)")
	fs.BoolVar(&tf.inheritEnv, "inherit-env", false, "pass toolward's whole environment to a COMMAND server")
	fs.StringVar(&tf.descriptions, "descriptions", "default", "description set `NAME` (the config's description_sets, fixtures/descriptions/NAME.yaml, or a .yaml file)")
	fs.StringVar(&tf.backend, "backend", "", "show tools as backend `NAME` sends them: "+strings.Join(slices.Sorted(maps.Keys(converters)), ", "))
	fs.StringVar(&tf.format, "format", "text", "output `format`: text or json")
	fs.DurationVar(&tf.timeout, "timeout", toolsTimeout, "give up connecting and listing (and the --call) after `D`")
	fs.StringVar(&tf.call, "call", "", "after listing, call tool `NAME` once")
	fs.StringVar(&tf.args, "args", "{}", "the --call's arguments, a JSON `object`")
	fs.StringVar(&tf.confirm, "confirm", string(session.ConfirmApprove), "the --call's confirm `mode`: auto, approve or deny")
	var cmd []string
	if i := slices.Index(args, "--"); i >= 0 {
		args, cmd = args[:i], args[i+1:]
		if len(cmd) == 0 {
			fmt.Fprintln(stderr, "toolward tools: want a COMMAND after --")
			return nil, 2
		}
	}
	pos, code, ok := parseArgs(fs, args)
	if !ok {
		return nil, code
	}
	tf.command = cmd
	if len(pos) > 1 {
		fmt.Fprintf(stderr, "toolward tools: unexpected argument %q\n", pos[1])
		return nil, 2
	}
	if len(pos) == 1 {
		tf.config = pos[0]
	}
	if msg := tf.check(); msg != "" {
		fmt.Fprintln(stderr, "toolward tools:", msg)
		return nil, 2
	}
	return tf, -1
}

// check returns a usage message for inconsistent flags, or "".
func (tf *toolsFlags) check() string {
	n := 0
	for _, set := range []bool{tf.config != "", len(tf.command) > 0, tf.url != ""} {
		if set {
			n++
		}
	}
	switch {
	case n != 1:
		return "want exactly one of CONFIG, -- COMMAND, --url URL (see -h)"
	case tf.url != "" && !strings.HasPrefix(tf.url, "http://") && !strings.HasPrefix(tf.url, "https://"):
		return fmt.Sprintf("--url must start with http:// or https://, got %q", tf.url)
	case tf.oauthID != "" && tf.url == "":
		return "--oauth-client-id applies to --url only (a config sets server.oauth)"
	case (tf.oauthID == "") != (tf.oauthSecretEnv == "") || tf.oauthScope != "" && tf.oauthID == "":
		return "--oauth-client-id and --oauth-secret-env go together (and --oauth-scope with them)"
	case len(tf.headers) > 0 && tf.url == "":
		return "--header applies to --url only"
	case (len(tf.env) > 0 || tf.inheritEnv) && len(tf.command) == 0:
		return "--env and --inherit-env apply to -- COMMAND only (a config sets server.env)"
	case tf.timeout <= 0:
		return fmt.Sprintf("--timeout must be positive, got %s", tf.timeout)
	case tf.format != "text" && tf.format != "json":
		return fmt.Sprintf("--format must be text or json, got %q", tf.format)
	case tf.call == "" && (tf.args != "{}" || tf.confirm != string(session.ConfirmApprove)):
		return "--args and --confirm apply to --call only"
	case tf.call != "" && !slices.Contains(cell.ConfirmModes, cell.ConfirmMode(tf.confirm)):
		return fmt.Sprintf("--confirm must be auto, approve or deny, got %q", tf.confirm)
	case tf.call != "" && !jsonObject(tf.args):
		return fmt.Sprintf("--args must be a JSON object, got %q", tf.args)
	case tf.backend != "" && converters[tf.backend] == nil:
		return fmt.Sprintf("--backend must be one of %s, got %q", strings.Join(slices.Sorted(maps.Keys(converters)), ", "), tf.backend)
	}
	if _, err := keyValues(tf.env, "--env"); err != nil {
		return err.Error()
	}
	if _, err := keyValues(tf.headers, "--header"); err != nil {
		return err.Error()
	}
	return ""
}

// sentTool is one tool as a backend sends it to the model.
type sentTool struct {
	Name        string
	Description string
	Parameters  json.RawMessage
}

// converters turn a tool into what each backend sends the model. Adding
// a backend is one entry.
var converters = map[string]func(backend.Tool) (sentTool, error){
	"openai":    func(t backend.Tool) (sentTool, error) { return functionTool(openai.EncodeTool(t)) },
	"anthropic": func(t backend.Tool) (sentTool, error) { return anthropicTool(anthropic.EncodeTool(t)) },
	"ollama": func(t backend.Tool) (sentTool, error) {
		ot, err := ollama.ConvertTool(t)
		if err != nil {
			return sentTool{}, err
		}
		b, err := json.Marshal(ot)
		return functionTool(b, err)
	},
	"mcp": func(t backend.Tool) (sentTool, error) {
		p := bytes.TrimSpace(t.InputSchema)
		if len(p) == 0 || string(p) == "null" {
			p = []byte(`{"type":"object"}`)
		}
		return sentTool{Name: t.Name, Description: t.Description, Parameters: p}, nil
	},
}

// functionTool decodes a tool in the function-calling wire form that
// Ollama and OpenAI-compatible servers share:
// {"type":"function","function":{"name","description","parameters"}}.
func functionTool(wire []byte, err error) (sentTool, error) {
	if err != nil {
		return sentTool{}, err
	}
	var w struct {
		Function struct {
			Name        string          `json:"name"`
			Description string          `json:"description"`
			Parameters  json.RawMessage `json:"parameters"`
		} `json:"function"`
	}
	if err := json.Unmarshal(wire, &w); err != nil {
		return sentTool{}, fmt.Errorf("decoding the tool as sent: %w", err)
	}
	return sentTool{Name: w.Function.Name, Description: w.Function.Description, Parameters: w.Function.Parameters}, nil
}

// anthropicTool decodes a tool in the Messages API's wire form:
// {"name","description","input_schema"}.
func anthropicTool(wire []byte, err error) (sentTool, error) {
	if err != nil {
		return sentTool{}, err
	}
	var w struct {
		Name        string          `json:"name"`
		Description string          `json:"description"`
		InputSchema json.RawMessage `json:"input_schema"`
	}
	if err := json.Unmarshal(wire, &w); err != nil {
		return sentTool{}, fmt.Errorf("decoding the tool as sent: %w", err)
	}
	return sentTool{Name: w.Name, Description: w.Description, Parameters: w.InputSchema}, nil
}

// toolsOutput is what toolward tools prints.
type toolsOutput struct {
	Server       serverOut `json:"server"`
	Backend      string    `json:"backend"`
	Descriptions string    `json:"descriptions"`
	Tools        []toolOut `json:"tools"`
	// ProbeOnly names the tools kept from the model for state probes
	// (server.probe_only, or marked so by the server), in listing order.
	ProbeOnly []string `json:"probe_only,omitempty"`
	Call      *callOut `json:"call,omitempty"`
	warnings  []string // printed on stderr
}

type serverOut struct {
	Name            string `json:"name"`
	Version         string `json:"version"`
	ProtocolVersion string `json:"protocol_version"`
	Connection      string `json:"connection"` // builtin, command …, url …
}

type toolOut struct {
	Name string `json:"name"`
	// Description is what the model reads; DescriptionSet names the set
	// it came from, "" when it is the server's own.
	Description    string          `json:"description"`
	DescriptionSet string          `json:"description_set,omitempty"`
	Parameters     json.RawMessage `json:"parameters"`
	// Annotations are the MCP annotations as listed; nil when none.
	Annotations json.RawMessage `json:"annotations,omitempty"`
	Gated       bool            `json:"gated"`
	GateReason  string          `json:"gate_reason"`
}

// toolsTarget is the server, backend and description set to show.
type toolsTarget struct {
	server       schema.Server
	backend      string
	descName     string // description set name, "default" for the server's own
	descriptions toolset.Descriptions
}

// listTools connects to the server tf names and lists its tools.
func listTools(tf *toolsFlags) (*toolsOutput, error) {
	tg, err := resolveTools(tf)
	if err != nil {
		return nil, err
	}
	opts := session.Options{Server: tg.server, ClientVersion: engine.Version()}
	if b := tg.server.Builtin; b != nil {
		if opts.Builtin, err = bundledServer(*b); err != nil {
			return nil, fmt.Errorf("starting the builtin MCP server: %w", err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), tf.timeout)
	defer cancel()
	src, err := session.Open(ctx, opts)
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			err = fmt.Errorf("no answer within %s: %w", tf.timeout, err)
		}
		return nil, fmt.Errorf("connecting to the MCP server: %w", err)
	}
	defer src.Close()
	out, err := describeTools(src, tg)
	if err != nil {
		return nil, err
	}
	out.warnings = unknownDescribed(tg.descriptions, src.Tools(), tg.descName)
	if tf.call != "" {
		if out.Call, err = callTool(ctx, src, tf); err != nil {
			return out, err
		}
	}
	return out, nil
}

// callOut is the result of --call.
type callOut struct {
	Name         string   `json:"name"`
	Confirm      string   `json:"confirm"`            // the mode
	Decision     string   `json:"decision,omitempty"` // approved, denied, "" when not gated
	IsError      bool     `json:"is_error"`
	Text         string   `json:"text"`
	Structured   any      `json:"structured,omitempty"`
	Elicitations []string `json:"elicitations,omitempty"`
}

// callTool makes the --call through a session, as a run does.
func callTool(ctx context.Context, src *session.Source, tf *toolsFlags) (*callOut, error) {
	var args map[string]any
	if err := json.Unmarshal([]byte(tf.args), &args); err != nil {
		return nil, fmt.Errorf("--args: %w", err)
	}
	sess, err := src.Session(ctx, cell.ConfirmMode(tf.confirm))
	if err != nil {
		return nil, fmt.Errorf("connecting to the MCP server: %w", err)
	}
	defer sess.Close()
	res, err := sess.Call(ctx, tf.call, args, tf.timeout)
	if err != nil {
		return nil, fmt.Errorf("calling %s: %w", tf.call, err)
	}
	return &callOut{Name: tf.call, Confirm: tf.confirm, Decision: res.Confirm, IsError: res.IsError, Text: res.Text, Structured: res.Structured, Elicitations: res.Elicitations}, nil
}

// jsonObject reports whether s is one JSON object.
func jsonObject(s string) bool {
	var m map[string]any
	return json.Unmarshal([]byte(s), &m) == nil && m != nil
}

// resolveTools works out the server, backend and description set from
// the flags (and the config, if one is given).
func resolveTools(tf *toolsFlags) (*toolsTarget, error) {
	tg := &toolsTarget{backend: tf.backend, descName: tf.descriptions}
	cfg := &schema.Config{}
	switch {
	case tf.config != "":
		var err error
		if cfg, err = runconfig.Load(tf.config); err != nil {
			return nil, err
		}
		tg.server = cfg.Server
		if tg.backend == "" {
			tg.backend = configBackend(cfg.Backend)
		}
	case len(tf.command) > 0:
		env, _ := keyValues(tf.env, "--env") // checked by check
		tg.server = schema.Server{Command: tf.command, Env: env, InheritEnv: tf.inheritEnv}
	default:
		h, _ := keyValues(tf.headers, "--header")
		tg.server = schema.Server{URL: tf.url, Headers: h}
		if tf.oauthID != "" {
			tg.server.OAuth = &schema.OAuth{ClientID: tf.oauthID, ClientSecretEnv: tf.oauthSecretEnv, Scope: tf.oauthScope}
		}
	}
	if tg.backend == "" {
		tg.backend = "ollama"
	}
	if tf.descriptions != "default" {
		path := schema.DescriptionFile(cfg, tf.descriptions)
		if strings.HasSuffix(tf.descriptions, ".yaml") || strings.HasSuffix(tf.descriptions, ".yml") {
			if _, named := cfg.DescriptionSets[tf.descriptions]; !named {
				path = tf.descriptions
			}
		}
		d, err := toolset.LoadDescriptions(path)
		if err != nil {
			return nil, fmt.Errorf("--descriptions %s: %w", tf.descriptions, err)
		}
		tg.descriptions = d
	}
	return tg, nil
}

// configBackend is the converter matching a config's backend.
func configBackend(b schema.Backend) string {
	switch {
	case b.Ollama != nil:
		return "ollama"
	case b.OpenAI != nil:
		return "openai"
	case b.Anthropic != nil:
		return "anthropic"
	}
	// replay sends tools to no model: show them as the server lists them.
	return "mcp"
}

// keyValues parses K=V flag values.
func keyValues(kvs []string, flagName string) (map[string]string, error) {
	if len(kvs) == 0 {
		return nil, nil
	}
	m := make(map[string]string, len(kvs))
	for _, kv := range kvs {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" || strings.ContainsAny(k, " \t:") {
			return nil, fmt.Errorf("%s %q: want K=V (a name without spaces or colons, then =)", flagName, kv)
		}
		m[k] = v
	}
	return m, nil
}

// describeTools converts every tool of src for the target's backend.
func describeTools(src *session.Source, tg *toolsTarget) (*toolsOutput, error) {
	info := src.Info()
	out := &toolsOutput{
		Server:       serverOut{Name: info.Name, Version: info.Version, ProtocolVersion: info.ProtocolVersion, Connection: connection(tg.server)},
		Backend:      tg.backend,
		Descriptions: tg.descName,
		Tools:        []toolOut{},
	}
	convert := converters[tg.backend]
	tools := tg.descriptions.Apply(src.Tools())
	for i, t := range tools {
		st, err := convert(backend.Tool{Name: t.Name, Description: t.Description, InputSchema: t.InputSchema})
		if err != nil {
			return nil, fmt.Errorf("tool %s: %w", t.Name, err)
		}
		to := toolOut{Name: st.Name, Description: st.Description, Parameters: st.Parameters}
		if _, ok := tg.descriptions[t.Name]; ok {
			to.DescriptionSet = tg.descName
		}
		listed := src.Listed()[i]
		if a, _ := json.Marshal(listed.Annotations); string(a) != "{}" {
			to.Annotations = a
		}
		to.Gated, to.GateReason = gate(listed.Annotations)
		out.Tools = append(out.Tools, to)
	}
	for _, t := range src.ProbeOnly() {
		out.ProbeOnly = append(out.ProbeOnly, t.Name)
	}
	return out, nil
}

// connection names how the server was reached.
func connection(s schema.Server) string {
	switch {
	case s.Builtin != nil:
		return "builtin"
	case len(s.Command) > 0:
		return "command: " + strings.Join(s.Command, " ")
	}
	return "url: " + s.URL
}

// gate says whether confirm modes gate a tool, and why (session.Gated
// decides; this explains it).
func gate(a mcp.ToolAnnotation) (bool, string) {
	g := session.Gated(a)
	switch {
	case a.ReadOnlyHint != nil && *a.ReadOnlyHint:
		return g, "readOnlyHint: true"
	case a.DestructiveHint != nil && !*a.DestructiveHint:
		return g, "destructiveHint: false"
	case a.DestructiveHint != nil:
		return g, "destructiveHint: true"
	case a.ReadOnlyHint != nil:
		return g, "readOnlyHint: false, no destructiveHint (MCP default: destructive)"
	}
	return g, "no readOnlyHint or destructiveHint (MCP defaults: may write, destructive)"
}

// unknownDescribed warns about description-set entries that name no tool
// of the server (a typo there silently changes nothing).
func unknownDescribed(d toolset.Descriptions, tools []toolset.Tool, set string) []string {
	var unknown []string
	for name := range d {
		if !slices.ContainsFunc(tools, func(t toolset.Tool) bool { return t.Name == name }) {
			unknown = append(unknown, name)
		}
	}
	if len(unknown) == 0 {
		return nil
	}
	slices.Sort(unknown)
	return []string{fmt.Sprintf("description set %s names tools the server does not offer: %s", set, strings.Join(unknown, ", "))}
}

func writeToolsJSON(w io.Writer, out *toolsOutput) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(out)
}

func writeToolsText(w io.Writer, out *toolsOutput) error {
	var b bytes.Buffer
	s := out.Server
	fmt.Fprintf(&b, "server: %s %s (%s), MCP %s\n", report.DisplayLine(s.Name), report.DisplayLine(s.Version), s.Connection, report.DisplayLine(s.ProtocolVersion))
	fmt.Fprintf(&b, "%s; %s; descriptions %s\n", plural(len(out.Tools), "tool"), schemaSource(out.Backend), out.Descriptions)
	if len(out.ProbeOnly) > 0 {
		fmt.Fprintf(&b, "kept from the model, for state probes only: %s\n", report.DisplayLine(strings.Join(out.ProbeOnly, ", ")))
	}
	for _, t := range out.Tools {
		fmt.Fprintf(&b, "\n%s\n", report.DisplayLine(t.Name))
		label := "description"
		if t.DescriptionSet != "" {
			label += " (set " + t.DescriptionSet + ")"
		}
		fmt.Fprintf(&b, "  %s: %s\n", label, indentRest(textSafe(t.Description), "    "))
		ann := "none"
		if t.Annotations != nil {
			ann = string(t.Annotations)
		}
		fmt.Fprintf(&b, "  annotations: %s\n", ann)
		if t.Gated {
			fmt.Fprintf(&b, "  confirm: gated (%s): approve makes the call, deny refuses it\n", t.GateReason)
		} else {
			fmt.Fprintf(&b, "  confirm: not gated (%s)\n", t.GateReason)
		}
		var p bytes.Buffer
		if json.Indent(&p, t.Parameters, "    ", "  ") != nil {
			p.Reset()
			p.Write(t.Parameters)
		}
		fmt.Fprintf(&b, "  parameters:\n    %s\n", p.String())
	}
	if c := out.Call; c != nil {
		status := "result"
		if c.IsError {
			status = "error result"
		}
		fmt.Fprintf(&b, "\ncall %s (confirm %s", report.DisplayLine(c.Name), c.Confirm)
		if c.Decision != "" {
			fmt.Fprintf(&b, ", %s", c.Decision)
		}
		if len(c.Elicitations) > 0 {
			fmt.Fprintf(&b, "; elicitations answered: %s", strings.Join(c.Elicitations, ", "))
		}
		fmt.Fprintf(&b, "): %s\n  %s\n", status, indentRest(textSafe(c.Text), "  "))
	}
	_, err := w.Write(b.Bytes())
	return err
}

// schemaSource says where the shown parameter schemas come from.
func schemaSource(backend string) string {
	if backend == "mcp" {
		return "parameters as the server lists them (--backend mcp)"
	}
	return "name, description and parameters as backend " + backend + " sends them"
}

// textSafe shows the control and bidirectional characters of text a
// server sent as visible escapes (report.DisplaySafe), newlines kept:
// what a server sends must not drive the user's terminal or reorder what
// it shows. (JSON output escapes control characters anyway.)
func textSafe(s string) string { return report.DisplaySafe(s) }

// indentRest indents every line of s after the first.
func indentRest(s, indent string) string {
	return strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n"+indent)
}
