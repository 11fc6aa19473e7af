package session

import (
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/toolward/toolward/schema"
)

// TestSplitProbeOnly: tools named in server.probe_only, and tools the
// server marks with schema.ProbeOnlyMeta, are kept from the model; the
// others keep their order.
func TestSplitProbeOnly(t *testing.T) {
	t.Parallel()
	marked := mcp.Tool{Name: "state", Meta: mcp.NewMetaFromMap(map[string]any{schema.ProbeOnlyMeta: true})}
	notMarked := mcp.Tool{Name: "c", Meta: mcp.NewMetaFromMap(map[string]any{schema.ProbeOnlyMeta: false})}
	tools := []mcp.Tool{{Name: "a"}, marked, {Name: "read_graph"}, notMarked}
	offered, probe := splitProbeOnly(tools, []string{"read_graph"})
	if len(offered) != 2 || offered[0].Name != "a" || offered[1].Name != "c" {
		t.Fatalf("offered %v", offered)
	}
	if len(probe) != 2 || probe[0].Name != "state" || probe[1].Name != "read_graph" {
		t.Fatalf("probe-only %v", probe)
	}
}

// TestProbeValue: structured content first, then the text as JSON, then
// the text.
func TestProbeValue(t *testing.T) {
	t.Parallel()
	if v := ProbeValue(&Result{Text: "x", Structured: map[string]any{"a": 1.0}}); v.(map[string]any)["a"] != 1.0 {
		t.Errorf("structured: %v", v)
	}
	if v, ok := ProbeValue(&Result{Text: ` {"entities": []} `}).(map[string]any); !ok || v["entities"] == nil {
		t.Errorf("JSON text: %v", v)
	}
	for _, text := range []string{"Remembered.", `{"a": 1} trailing`, `[1] [2]`} {
		if v := ProbeValue(&Result{Text: text}); v != text {
			t.Errorf("text %q: %v", text, v)
		}
	}
}
