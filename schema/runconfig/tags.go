package runconfig

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"

	"cuelang.org/go/cue/ast"
	"cuelang.org/go/cue/format"
	"cuelang.org/go/cue/parser"
	"github.com/ollama/ollama/envconfig"

	"github.com/toolward/toolward/schema"
)

// This file holds config values set from the command line: a field
// declared with a tag attribute, as cue's own -t injects them,
//
//	matrix: models: [*"qwen3:0.6b" | string @tag(model)]
//
// takes the value of `-t model=qwen3:4b` (unified with what the field
// says: a default yields to it, a constraint still holds). type=int,
// number or bool in the attribute (@tag(seeds,type=int)) makes the value
// that type; the default is a string.

// injected holds this process's -t values (SetTags), by tag name.
var injected struct {
	mu   sync.Mutex
	vals map[string]string
}

// SetTags sets the tag values every later Load injects, each "name=value".
// A config that declares none of a name fails to load.
func SetTags(kvs []string) error {
	vals := map[string]string{}
	for _, kv := range kvs {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return fmt.Errorf("-t %q: want name=value (a field of the config declared with @tag(name))", kv)
		}
		vals[k] = v
	}
	injected.mu.Lock()
	injected.vals = vals
	injected.mu.Unlock()
	return nil
}

// tagged returns src with the -t values injected into the fields whose
// @tag names them ("x: V @tag(x)" becomes "x: (V) & VALUE @tag(x)", on
// the same line, so positions of everything else hold), or nil when no
// value is set (or src does not parse: compiling it reports why). The
// error names a value of the wrong type, or a tag the config does not
// declare.
func tagged(file string, src []byte) ([]byte, *schema.Error) {
	injected.mu.Lock()
	vals := injected.vals
	injected.mu.Unlock()
	if len(vals) == 0 {
		return nil, nil
	}
	f, err := parser.ParseFile(file, src)
	if err != nil {
		return nil, nil
	}
	type edit struct {
		at   int
		text string
	}
	var edits []edit
	declared := map[string]bool{}
	var bad *schema.Error
	ast.Walk(f, func(n ast.Node) bool {
		fd, ok := n.(*ast.Field)
		if !ok {
			return true
		}
		for _, a := range fd.Attrs {
			key, body := a.Split()
			if key != "tag" {
				continue
			}
			args := strings.Split(body, ",")
			name, typ := strings.TrimSpace(args[0]), "string"
			for _, x := range args[1:] {
				if t, ok := strings.CutPrefix(strings.TrimSpace(x), "type="); ok {
					typ = t
				}
			}
			declared[name] = true
			v, set := vals[name]
			if !set {
				continue
			}
			lit, err := tagLiteral(v, typ)
			if err != nil {
				if bad == nil {
					p := a.Pos().Position()
					bad = &schema.Error{File: file, Line: p.Line, Col: p.Column, Msg: fmt.Sprintf("-t %s=%s: %v", name, v, err)}
				}
				continue
			}
			edits = append(edits, edit{fd.Value.Pos().Offset(), "("}, edit{fd.Value.End().Offset(), ") & " + lit})
		}
		return true
	}, nil)
	if bad != nil {
		return nil, bad
	}
	for _, k := range slices.Sorted(maps.Keys(vals)) {
		if !declared[k] {
			known := "none"
			if len(declared) > 0 {
				known = strings.Join(slices.Sorted(maps.Keys(declared)), ", ")
			}
			return nil, &schema.Error{File: file, Msg: fmt.Sprintf("-t %s: the config declares no field with @tag(%s) (its tags: %s)", k, k, known)}
		}
	}
	slices.SortStableFunc(edits, func(a, b edit) int { return b.at - a.at }) // from the end: offsets hold
	out := slices.Clone(src)
	for _, e := range edits {
		out = slices.Insert(out, e.at, []byte(e.text)...)
	}
	return out, nil
}

// tagLiteral is v as CUE source of the tag's type.
func tagLiteral(v, typ string) (string, error) {
	switch typ {
	case "string":
		b, err := format.Node(ast.NewString(v))
		return string(b), err
	case "int":
		if _, err := strconv.ParseInt(v, 10, 64); err != nil {
			return "", fmt.Errorf("want an integer (type=int)")
		}
	case "number":
		if _, err := strconv.ParseFloat(v, 64); err != nil || strings.ContainsAny(v, "xXpP_") || strings.EqualFold(v, "inf") || strings.EqualFold(v, "nan") {
			return "", fmt.Errorf("want a number (type=number)")
		}
	case "bool":
		b, err := strconv.ParseBool(v)
		if err != nil {
			return "", fmt.Errorf("want true or false (type=bool)")
		}
		return strconv.FormatBool(b), nil
	default:
		return "", fmt.Errorf("unknown tag type %q (want string, int, number or bool)", typ)
	}
	return v, nil
}

// ollamaHost gives each Ollama backend block of cfg (backend, judge's,
// simulator's) that names neither host nor hosts the host OLLAMA_HOST
// names, read as Ollama's own CLI reads it (envconfig.Host: a bare
// host:port, a scheme or port left out), when it is set.
func ollamaHost(cfg *schema.Config, pos positions) {
	if strings.TrimSpace(envconfig.Var("OLLAMA_HOST")) == "" {
		return
	}
	blocks := map[string]*schema.Backend{"backend": &cfg.Backend}
	if cfg.Judge != nil {
		blocks["judge.backend"] = cfg.Judge.Backend
	}
	if cfg.Simulator != nil {
		blocks["simulator.backend"] = cfg.Simulator.Backend
	}
	for at, b := range blocks {
		if b == nil || b.Ollama == nil || len(b.Ollama.Hosts) > 0 {
			continue
		}
		if !userSet(pos, append(strings.Split(at, "."), "ollama", "host")...) {
			b.Ollama.Host = envconfig.Host().String()
		}
	}
}
