package lookup

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"
)

func fixtureClient(t *testing.T) *Client {
	t.Helper()
	hc, err := FixtureClient(os.DirFS("../../fixtures/drift"))
	if err != nil {
		t.Fatal(err)
	}
	return &Client{HTTP: hc, DriftURL: FixtureDriftURL, RunsURL: FixtureRunsURL}
}

func TestModelDriftFixture(t *testing.T) {
	c := fixtureClient(t)
	res, err := c.ModelDrift(context.Background(), "qwen3:0.6b")
	if err != nil {
		t.Fatal(err)
	}
	d := res.Models[0]
	if d.Change != -0.08 || d.BiggestAt != "2026-10-01" || d.Biggest != -0.06 || d.Versions != 2 {
		t.Errorf("drift = %+v", d)
	}
	want := "qwen3:0.6b pass_rate: regressed from 0.62 (2026-08-01) to 0.54 (2026-11-01), change -0.08 over 4 measurements; largest single move -0.06 on 2026-10-01, when the model version changed from a1b2c3 to d4e5f6."
	if res.Summary != want {
		t.Errorf("summary\n got %s\nwant %s", res.Summary, want)
	}
	all, err := c.ModelDrift(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	if len(all.Models) != 4 || all.Models[0].Model != "granite3.3:2b" || !strings.HasPrefix(all.Summary, "4 models, largest change first:") {
		t.Errorf("all models: %s", all.Summary)
	}
	if _, err := c.ModelDrift(context.Background(), "nope:1b"); err == nil || !strings.Contains(err.Error(), `knows nothing about "nope:1b"`) {
		t.Errorf("unknown model error = %v", err)
	}
}

func TestCompareRunsFixture(t *testing.T) {
	c := fixtureClient(t)
	cmp, err := c.CompareRuns(context.Background(), "checkout-agent")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(cmp.Regressed, ",") != "refund-partial,address-validation" || strings.Join(cmp.Fixed, ",") != "shipping-estimate" || cmp.BasePassed != 6 || cmp.NewPassed != 5 {
		t.Errorf("comparison = %+v", cmp)
	}
	if !strings.Contains(cmp.Summary, "Regressed, passed before and fails now (2): refund-partial, address-validation.") {
		t.Errorf("summary = %s", cmp.Summary)
	}
	cmp, err = c.CompareRuns(context.Background(), "sql-assistant")
	if err != nil || strings.Join(cmp.OnlyInOneRun, ",") != "hire-date-range" || strings.Join(cmp.Regressed, ",") != "top-earners" {
		t.Errorf("sql-assistant: %+v %v", cmp, err)
	}
	if _, err := c.CompareRuns(context.Background(), "nope"); err == nil || !strings.Contains(err.Error(), `"nope"`) {
		t.Errorf("unknown project error = %v", err)
	}
}

func TestFailures(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case strings.HasSuffix(r.URL.Path, "/status500"):
			http.Error(w, "boom", http.StatusInternalServerError)
		case strings.HasSuffix(r.URL.Path, "/malformed"):
			w.Write([]byte(`{"model": "x", "points": [`))
		case strings.HasSuffix(r.URL.Path, "/huge"):
			w.Write([]byte(`{"model": "`))
			w.Write([]byte(strings.Repeat("x", MaxBody)))
			w.Write([]byte(`"}`))
		case strings.HasSuffix(r.URL.Path, "/slow"):
			<-r.Context().Done()
		case strings.HasSuffix(r.URL.Path, "/empty"):
			w.Write([]byte(`{"model": "empty", "points": []}`))
		case strings.HasSuffix(r.URL.Path, "/ok"):
			w.Write([]byte(`{"model": "ok", "points": [{"date": "2026-01-02", "score": 0.5}, {"date": "2026-01-01", "score": 0.4}]}`))
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	c := &Client{HTTP: &http.Client{Timeout: 200 * time.Millisecond}, DriftURL: srv.URL}
	for model, want := range map[string]string{
		"status500": "answered 500 Internal Server Error",
		"malformed": "malformed JSON",
		"huge":      "larger than",
		"slow":      "did not answer in time",
		"empty":     "no measurements",
		"missing":   "knows nothing about",
	} {
		_, err := c.ModelDrift(context.Background(), model)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error = %v, want %q", model, err, want)
		}
	}
	res, err := c.ModelDrift(context.Background(), "ok")
	if err != nil || res.Models[0].First.Date != "2026-01-01" || res.Models[0].Change != 0.1 {
		t.Errorf("ok: %+v %v", res, err)
	}
	srv.Close()
	if _, err := c.ModelDrift(context.Background(), "ok"); err == nil || !strings.Contains(err.Error(), "unreachable") {
		t.Errorf("closed server: %v", err)
	}
	for _, bad := range []string{"", "file:///etc", "::"} {
		c := &Client{DriftURL: bad}
		if _, err := c.ModelDrift(context.Background(), "x"); err == nil {
			t.Errorf("base %q accepted", bad)
		}
	}
	if _, err := (&Client{RunsURL: "http://127.0.0.1:1"}).CompareRuns(context.Background(), " "); err == nil {
		t.Error("empty project accepted")
	}
}

// TestNamesStayOneSegment checks that a model-chosen name cannot reach
// another path of the configured service.
func TestNamesStayOneSegment(t *testing.T) {
	var paths []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		paths = append(paths, r.URL.EscapedPath())
		http.NotFound(w, r)
	}))
	defer srv.Close()
	c := &Client{DriftURL: srv.URL + "/drift", RunsURL: srv.URL + "/runs"}
	c.ModelDrift(context.Background(), "../admin")
	c.ModelDrift(context.Background(), "a/b?c#d")
	c.CompareRuns(context.Background(), "x/../../secret")
	want := []string{"/drift/models/..%2Fadmin", "/drift/models/a%2Fb%3Fc%23d", "/runs/projects/x%2F..%2F..%2Fsecret/compare"}
	if strings.Join(paths, " ") != strings.Join(want, " ") {
		t.Errorf("requested %q, want %q", paths, want)
	}
	for _, name := range []string{".", ".."} {
		if _, err := c.ModelDrift(context.Background(), name); err == nil || !strings.Contains(err.Error(), "not a valid name") {
			t.Errorf("%q: %v", name, err)
		}
	}
	if len(paths) != 3 {
		t.Errorf("dot segments reached the service: %q", paths)
	}
}
