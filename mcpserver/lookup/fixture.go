package lookup

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"net/http"
	"net/url"
	"slices"
)

// Default base URLs of the bundled services; FixtureClient routes them to
// FixtureHandler in process. The .invalid domain never resolves, so
// nothing leaves the machine even if the routing were bypassed.
const (
	FixtureDriftURL = "http://fixtures.toolward.invalid/drift"
	FixtureRunsURL  = "http://fixtures.toolward.invalid/runs"
)

type driftFile struct {
	Metric string             `json:"metric"`
	Models map[string][]Point `json:"models"`
}

type runsFile struct {
	Projects map[string]map[string]any `json:"projects"`
}

// FixtureHandler serves drift.json and runs.json from fsys (the
// fixtures/drift directory) under /drift/… and /runs/… as described in
// the package documentation.
func FixtureHandler(fsys fs.FS) (http.Handler, error) {
	var drift driftFile
	var runs runsFile
	for name, v := range map[string]any{"drift.json": &drift, "runs.json": &runs} {
		b, err := fs.ReadFile(fsys, name)
		if err != nil {
			return nil, fmt.Errorf("lookup fixtures: %w", err)
		}
		if err := json.Unmarshal(b, v); err != nil {
			return nil, fmt.Errorf("lookup fixtures: %s: %w", name, err)
		}
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /drift/models", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, map[string]any{"metric": drift.Metric, "models": slices.Sorted(maps.Keys(drift.Models))})
	})
	mux.HandleFunc("GET /drift/models/{model}", func(w http.ResponseWriter, r *http.Request) {
		name := r.PathValue("model")
		pts, ok := drift.Models[name]
		if !ok {
			http.Error(w, `{"error": "unknown model"}`, http.StatusNotFound)
			return
		}
		writeJSON(w, modelHistory{Model: name, Metric: drift.Metric, Points: pts})
	})
	mux.HandleFunc("GET /runs/projects/{project}/compare", func(w http.ResponseWriter, r *http.Request) {
		name := r.PathValue("project")
		p, ok := runs.Projects[name]
		if !ok {
			http.Error(w, `{"error": "unknown project"}`, http.StatusNotFound)
			return
		}
		body := maps.Clone(p) // handlers run concurrently: never write to p
		if body == nil {
			body = map[string]any{}
		}
		body["project"] = name
		writeJSON(w, body)
	})
	return mux, nil
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(v)
}

// handlerTransport answers requests to one host by calling a handler in
// process, and refuses every other host.
type handlerTransport struct {
	host    string
	handler http.Handler
}

func (t handlerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.URL.Host != t.host {
		return nil, fmt.Errorf("lookup: fixture transport only serves %s, not %s", t.host, req.URL.Host)
	}
	rec := &recorder{header: http.Header{}}
	t.handler.ServeHTTP(rec, req)
	if rec.code == 0 {
		rec.code = http.StatusOK
	}
	return &http.Response{
		Status:        fmt.Sprintf("%d %s", rec.code, http.StatusText(rec.code)),
		StatusCode:    rec.code,
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        rec.header,
		Body:          io.NopCloser(bytes.NewReader(rec.body.Bytes())),
		ContentLength: int64(rec.body.Len()),
		Request:       req,
	}, nil
}

// recorder is the minimal http.ResponseWriter handlerTransport needs.
type recorder struct {
	header http.Header
	code   int
	body   bytes.Buffer
}

func (r *recorder) Header() http.Header { return r.header }

func (r *recorder) WriteHeader(code int) {
	if r.code == 0 {
		r.code = code
	}
}

func (r *recorder) Write(b []byte) (int, error) {
	r.WriteHeader(http.StatusOK)
	return r.body.Write(b)
}

// FixtureClient returns an HTTP client that reaches FixtureHandler(fsys)
// at FixtureDriftURL and FixtureRunsURL without a network.
func FixtureClient(fsys fs.FS) (*http.Client, error) {
	h, err := FixtureHandler(fsys)
	if err != nil {
		return nil, err
	}
	u, err := url.Parse(FixtureDriftURL)
	if err != nil {
		return nil, err
	}
	return &http.Client{Transport: handlerTransport{host: u.Host, handler: h}, Timeout: Timeout}, nil
}
