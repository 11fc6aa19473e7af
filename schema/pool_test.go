package schema

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// TestPoolHostJSON: hosts survive config.json (written and read back on
// resume) in both their forms.
func TestPoolHostJSON(t *testing.T) {
	in := Ollama{Hosts: []PoolHost{{URL: "http://a:1"}, {URL: "http://b:2", Concurrency: 3, Models: []string{"m"}}}}
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	if want := `"hosts":["http://a:1",{"url":"http://b:2","concurrency":3,"models":["m"]}]`; !strings.Contains(string(b), want) {
		t.Errorf("JSON %s lacks %s", b, want)
	}
	var out Ollama
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(out, in) {
		t.Errorf("round trip: %+v, want %+v", out, in)
	}
	if err := json.Unmarshal([]byte(`{"url":"http://a:1","gpus":2}`), new(PoolHost)); err == nil {
		t.Error("an unknown field in a host was accepted")
	}
}
