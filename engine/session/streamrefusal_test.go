package session

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/toolward/toolward/fixtures/fakes/hostilemcp"
	"github.com/toolward/toolward/schema"
)

// TestBusyGetStreamBounded: a url server that answers every GET for the
// event stream 503 is asked for it Limits.StreamRefusals times, then no
// more, while tool calls go on working; before, mcp-go asked again every
// second for as long as the connection lived. The window after the last
// GET is longer than mcp-go's one-second retry interval.
func TestBusyGetStreamBounded(t *testing.T) {
	t.Parallel()
	const refusals = 2
	gets := make(chan struct{}, 100)
	h := hostilemcp.Handler("busyget")
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			gets <- struct{}{}
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(hs.Close)
	ctx := safety(t)
	_, sess := openSession(t, ctx, Options{Server: schema.Server{URL: hs.URL}, Limits: Limits{StreamRefusals: refusals}})
	for i := range refusals {
		select {
		case <-gets:
		case <-ctx.Done():
			t.Fatalf("GET %d never came", i+1)
		}
	}
	for range 2 {
		if res, err := sess.Call(ctx, "echo", nil, 5*time.Second); err != nil || res.Text != "ok" {
			t.Fatalf("call without the stream: %+v, %v", res, err)
		}
	}
	select {
	case <-gets:
		t.Fatalf("GET %d: the stream is asked for past Limits.StreamRefusals", refusals+1)
	case <-time.After(1500 * time.Millisecond):
	}
}

// TestListenAnswer: which answers to the GET event stream count as
// refusals, which stop the asking at once, and that an opened stream
// starts the count again. Each step's answer is what mcp-go receives.
func TestListenAnswer(t *testing.T) {
	t.Parallel()
	answer := func(status int, ctype string) func() (*http.Response, error) {
		return func() (*http.Response, error) {
			return &http.Response{StatusCode: status, Header: http.Header{"Content-Type": {ctype}}, Body: io.NopCloser(strings.NewReader(""))}, nil
		}
	}
	stream := answer(http.StatusOK, "text/event-stream")
	busy := answer(http.StatusServiceUnavailable, "text/plain")
	down := func() (*http.Response, error) { return nil, errors.New("connection refused") }
	for _, tc := range []struct {
		name  string
		steps []func() (*http.Response, error)
		want  []int // the status mcp-go sees; 0 for an error
	}{
		{"503 three times", []func() (*http.Response, error){busy, busy, busy}, []int{503, 503, 405}},
		{"a stream starts the count again", []func() (*http.Response, error){busy, busy, stream, busy, busy, busy}, []int{503, 503, 200, 503, 503, 405}},
		{"no answer counts", []func() (*http.Response, error){down, down, down}, []int{0, 0, 405}},
		{"403 at once", []func() (*http.Response, error){answer(http.StatusForbidden, "text/plain")}, []int{405}},
		{"JSON instead of a stream at once", []func() (*http.Response, error){answer(http.StatusOK, "application/json")}, []int{405}},
		{"401 and 429 may pass", []func() (*http.Response, error){answer(401, "text/plain"), answer(429, "text/plain"), busy}, []int{401, 429, 405}},
		{"404 is the session's end, not counted", []func() (*http.Response, error){busy, busy, answer(404, "text/plain"), answer(404, "text/plain")}, []int{503, 503, 404, 404}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			step := 0
			rt := &roundTripper{w: newWire(Limits{StreamRefusals: 3}), base: roundTripFunc(func(*http.Request) (*http.Response, error) {
				step++
				return tc.steps[step-1]()
			})}
			for i, want := range tc.want {
				req := httptest.NewRequest(http.MethodGet, "http://127.0.0.1/mcp", nil)
				resp, err := rt.RoundTrip(req)
				got := 0
				if err == nil {
					got = resp.StatusCode
				}
				if got != want {
					t.Fatalf("step %d: status %d (%v), want %d", i+1, got, err, want)
				}
			}
		})
	}
	// A GET that resumes a POST's stream is not the event stream.
	rt := &roundTripper{w: newWire(Limits{StreamRefusals: 1}), base: roundTripFunc(func(*http.Request) (*http.Response, error) { return busy() })}
	req := httptest.NewRequest(http.MethodGet, "http://127.0.0.1/mcp", nil)
	req.Header.Set("Last-Event-ID", "7")
	if resp, err := rt.RoundTrip(req); err != nil || resp.StatusCode != 503 {
		t.Errorf("resumption GET: %v %v, want the server's 503", resp, err)
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
