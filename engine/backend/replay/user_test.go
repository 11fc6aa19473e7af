package replay

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolward/toolward/engine/backend"
)

const conversationCassette = `case: conv
runs:
  - turns:
      - content: Which project?
      - role: user
        content: Atlas.
      - tool_calls: [{name: query_database, arguments: {sql: "SELECT 1"}}]
      - content: It is 450,000.
      - role: user
        content: "Thanks ###STOP###"
`

// TestReplayUserSide: turns with role user answer the simulated user's
// requests (Key.Side user) in their order; the model's turns skip them.
func TestReplayUserSide(t *testing.T) {
	t.Parallel()
	r, err := New(writeDir(t, map[string]string{"conv.yaml": conversationCassette}))
	if err != nil {
		t.Fatal(err)
	}
	ask := func(side string, turn int) (string, error) {
		resp, err := r.Chat(context.Background(), &backend.Request{Key: backend.Key{Case: "conv", Cell: cellOf(), Turn: turn, Side: side}})
		if err != nil {
			return "", err
		}
		if len(resp.Message.ToolCalls) > 0 {
			return "call " + resp.Message.ToolCalls[0].Name, nil
		}
		return resp.Message.Content, nil
	}
	for _, tc := range []struct {
		side string
		turn int
		want string
	}{
		{"", 0, "Which project?"}, {"", 1, "call query_database"}, {"", 2, "It is 450,000."},
		{backend.SideUser, 0, "Atlas."}, {backend.SideUser, 1, "Thanks ###STOP###"},
	} {
		if got, err := ask(tc.side, tc.turn); err != nil || got != tc.want {
			t.Errorf("side %q turn %d: %q, %v; want %q", tc.side, tc.turn, got, err, tc.want)
		}
	}
	if _, err := ask(backend.SideUser, 2); err == nil || !strings.Contains(err.Error(), "simulated user turn 2") || !strings.Contains(err.Error(), "2 turns with role user") {
		t.Errorf("user turn past the cassette: %v", err)
	}
	if _, err := New(writeDir(t, map[string]string{"bad.yaml": "case: c\nruns:\n  - turns:\n      - {role: user, tool_calls: [{name: f}]}\n      - {role: robot, content: x}\n"})); err == nil ||
		!strings.Contains(err.Error(), "has no tool calls") || !strings.Contains(err.Error(), `got "robot"`) {
		t.Errorf("bad user turns: %v", err)
	}
}

// TestRecorderUserSide: the recorder writes the simulated user's replies
// (through Wrap) among the model's turns where they came, and the
// cassette replays both sides.
func TestRecorderUserSide(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	model := &fixed{replies: []string{"Which project?", "It is 450,000."}}
	sim := &fixed{replies: []string{"Atlas.", "Thanks ###STOP###"}}
	rec := NewRecorder(model, dir)
	user := rec.Wrap(sim)
	c := cellOf()
	steps := []struct {
		b    backend.Backend
		side string
		turn int
	}{{rec, "", 0}, {user, backend.SideUser, 0}, {rec, "", 1}, {user, backend.SideUser, 1}}
	for _, s := range steps {
		if _, err := s.b.Chat(context.Background(), &backend.Request{Key: backend.Key{Case: "conv", Cell: c, Turn: s.turn, Side: s.side}}); err != nil {
			t.Fatal(err)
		}
	}
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "conv.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	order := []string{"Which project?", "role: user", "Atlas.", "It is 450,000.", "role: user", "Thanks ###STOP###"}
	at := 0
	for _, w := range order {
		i := strings.Index(text[at:], w)
		if i < 0 {
			t.Fatalf("cassette lacks %q in order:\n%s", w, text)
		}
		at += i + len(w)
	}
	r, err := New(dir)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := r.Chat(context.Background(), &backend.Request{Key: backend.Key{Case: "conv", Cell: c, Turn: 1, Side: backend.SideUser}})
	if err != nil || resp.Message.Content != "Thanks ###STOP###" {
		t.Errorf("replayed user turn 1: %+v, %v", resp, err)
	}
}

// fixed answers with its replies in turn, whatever the request.
type fixed struct {
	replies []string
	n       int
}

func (f *fixed) Chat(ctx context.Context, req *backend.Request) (*backend.Response, error) {
	m := f.replies[f.n%len(f.replies)]
	f.n++
	return &backend.Response{Message: backend.Message{Role: "assistant", Content: m}}, nil
}

// measurer is a backend that measures every prompt as 5000 tokens cut
// to 4096.
type measurer struct{ backend.Backend }

func (measurer) MeasurePrompt(context.Context, *backend.Request) (*backend.PromptFit, error) {
	return &backend.PromptFit{Tokens: 4096, Limit: 4096, Need: 5000}, nil
}

// TestRecorderWrapMeasures: a wrapped simulator backend still measures
// prompts, so --record keeps the simulator's context check.
func TestRecorderWrapMeasures(t *testing.T) {
	t.Parallel()
	w := NewRecorder(measurer{}, t.TempDir()).Wrap(measurer{})
	f, err := backend.Measure(context.Background(), w, &backend.Request{Model: "u"})
	if err != nil || f.Need != 5000 || !f.Cut() {
		t.Fatalf("fit %+v, err %v; want the inner backend's", f, err)
	}
}
