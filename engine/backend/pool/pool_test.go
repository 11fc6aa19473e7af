package pool

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolward/toolward/engine/backend"
)

// fake is a host whose replies the test decides: fail, when set, is
// returned instead of a reply; gate, when set, holds each request until
// the test sends on it.
type fake struct {
	mu    sync.Mutex
	fail  error
	calls int
	gate  chan struct{}
	began chan struct{} // gets a value when a request arrives, if set
}

func (f *fake) Chat(ctx context.Context, req *backend.Request) (*backend.Response, error) {
	f.mu.Lock()
	f.calls++
	fail, gate, began := f.fail, f.gate, f.began
	f.mu.Unlock()
	if began != nil {
		began <- struct{}{}
	}
	if gate != nil {
		select {
		case <-gate:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	if fail != nil {
		return nil, fail
	}
	return &backend.Response{Message: backend.Message{Role: "assistant", Content: "ok " + req.Model}}, nil
}

func (f *fake) set(err error) {
	f.mu.Lock()
	f.fail = err
	f.mu.Unlock()
}

func (f *fake) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls
}

// clock is a settable clock.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

var errDown = &backend.Error{Kind: backend.KindUnavailable, Retryable: true, Msg: "cannot reach host"}

func newPool(t *testing.T, c *clock, hosts ...Host) *Pool {
	t.Helper()
	p, err := New(hosts, Options{Now: c.now})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func chat(t *testing.T, p *Pool, model string) *backend.Response {
	t.Helper()
	resp, err := p.Chat(context.Background(), &backend.Request{Model: model})
	if err != nil {
		t.Fatalf("Chat(%s): %v", model, err)
	}
	return resp
}

// TestFailedHostIsTakenOut: a host that fails is skipped, its request
// served by another at once; it stays out for Down, longer after each
// consecutive failure, and comes back after a success.
func TestFailedHostIsTakenOut(t *testing.T) {
	t.Parallel()
	c := &clock{t: time.Unix(1e9, 0)}
	a, b := &fake{fail: errDown}, &fake{}
	p := newPool(t, c, Host{Name: "a", Backend: a}, Host{Name: "b", Backend: b})
	for i := range 4 {
		if resp := chat(t, p, "m"); resp.Host != "b" {
			t.Fatalf("request %d served by %q, want b", i, resp.Host)
		}
	}
	if a.count() != 1 {
		t.Fatalf("a asked %d times while out, want 1", a.count())
	}
	c.add(DefaultDown(1)) // back: tried again, fails again, out for 2s
	chat(t, p, "m")
	if a.count() != 2 {
		t.Fatalf("a asked %d times after its down time, want 2", a.count())
	}
	c.add(DefaultDown(1))
	chat(t, p, "m")
	if a.count() != 2 {
		t.Fatalf("a asked again after 1s of its 2s second down time")
	}
	a.set(nil)
	c.add(DefaultDown(2))
	if resp := chat(t, p, "m"); resp.Host != "a" || a.count() != 3 {
		t.Fatalf("a not tried once back: %d calls", a.count())
	}
}

// TestRetryAfterKeepsHostOut: a 429's Retry-After outlasts the default
// down time.
func TestRetryAfterKeepsHostOut(t *testing.T) {
	t.Parallel()
	c := &clock{t: time.Unix(1e9, 0)}
	a, b := &fake{fail: &backend.Error{Kind: backend.KindUnavailable, Retryable: true, RetryAfter: 20 * time.Second, Msg: "429"}}, &fake{}
	p := newPool(t, c, Host{Name: "a", Backend: a}, Host{Name: "b", Backend: b})
	chat(t, p, "m")
	c.add(10 * time.Second)
	chat(t, p, "m")
	if a.count() != 1 {
		t.Fatalf("a asked %d times within its Retry-After, want 1", a.count())
	}
}

// TestAllHostsFail: the error is the last host's, still retryable
// infrastructure, and says every host failed.
func TestAllHostsFail(t *testing.T) {
	t.Parallel()
	c := &clock{t: time.Unix(1e9, 0)}
	p := newPool(t, c, Host{Name: "a", Backend: &fake{fail: errDown}}, Host{Name: "b", Backend: &fake{fail: errDown}})
	_, err := p.Chat(context.Background(), &backend.Request{Model: "m"})
	var be *backend.Error
	if !errors.As(err, &be) || be.Kind != backend.KindUnavailable || !be.Retryable {
		t.Fatalf("err = %#v, want a retryable backend error", err)
	}
	if want := "all 2 hosts that serve m failed; the last said: cannot reach host"; err.Error() != want {
		t.Fatalf("err = %q, want %q", err, want)
	}
	// Both out now: the next request still tries one (the soonest back)
	// rather than failing without asking.
	_, err = p.Chat(context.Background(), &backend.Request{Model: "m"})
	if err == nil {
		t.Fatal("no error")
	}
}

// TestOneHostErrorUnchanged: a pool of one returns its host's error as is.
func TestOneHostErrorUnchanged(t *testing.T) {
	t.Parallel()
	p := newPool(t, &clock{}, Host{Name: "a", Backend: &fake{fail: errDown}})
	if _, err := p.Chat(context.Background(), &backend.Request{Model: "m"}); err != errDown {
		t.Fatalf("err = %v, want the host's own", err)
	}
}

// TestHopelessErrorsDoNotFailOver: a request no host can serve better is
// not sent to the others.
func TestHopelessErrorsDoNotFailOver(t *testing.T) {
	t.Parallel()
	for _, k := range []string{backend.KindBadRequest, backend.KindContextOverflow, backend.KindNoTools} {
		e := &backend.Error{Kind: k, Msg: k}
		a, b := &fake{fail: e}, &fake{fail: e}
		p := newPool(t, &clock{}, Host{Name: "a", Backend: a}, Host{Name: "b", Backend: b})
		if _, err := p.Chat(context.Background(), &backend.Request{Model: "m"}); err != e {
			t.Errorf("%s: err = %v", k, err)
		}
		if a.count()+b.count() != 1 {
			t.Errorf("%s: %d requests, want 1", k, a.count()+b.count())
		}
	}
}

// TestCallerCancelDoesNotBlameHost: a request the caller gave up on
// takes no host out.
func TestCallerCancelDoesNotBlameHost(t *testing.T) {
	t.Parallel()
	a := &fake{gate: make(chan struct{}), began: make(chan struct{}, 1)}
	b := &fake{}
	p := newPool(t, &clock{}, Host{Name: "a", Backend: a}, Host{Name: "b", Backend: b})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() {
		_, err := p.Chat(ctx, &backend.Request{Model: "m"})
		done <- err
	}()
	<-a.began
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v", err)
	}
	if b.count() != 0 {
		t.Fatal("a cancelled request went on to another host")
	}
	a.gate = nil
	a.began = nil
	if resp := chat(t, p, "m"); resp.Host != "b" && resp.Host != "a" {
		t.Fatal(resp.Host)
	}
}

// TestLeastBusyWithinLimits: requests go to the host with fewest in
// flight; a host at its limit gets none until a slot frees.
func TestLeastBusyWithinLimits(t *testing.T) {
	t.Parallel()
	gate := make(chan struct{})
	began := make(chan struct{}, 8)
	a := &fake{gate: gate, began: began}
	b := &fake{gate: gate, began: began}
	p := newPool(t, &clock{}, Host{Name: "a", Backend: a, Limit: 1}, Host{Name: "b", Backend: b, Limit: 2})
	served := make(chan string, 8)
	send := func() {
		go func() {
			resp, err := p.Chat(context.Background(), &backend.Request{Model: "m"})
			if err != nil {
				served <- "error: " + err.Error()
				return
			}
			served <- resp.Host
		}()
	}
	for range 3 {
		send()
		<-began
	}
	if a.count() != 1 || b.count() != 2 {
		t.Fatalf("in flight a=%d b=%d, want 1 and 2", a.count(), b.count())
	}
	send() // every host is at its limit: it waits
	gate <- struct{}{}
	first := <-served
	<-began // the waiting request took the freed slot
	if a.count()+b.count() != 4 {
		t.Fatalf("%d requests sent, want 4", a.count()+b.count())
	}
	if first == "a" && a.count() != 2 || first == "b" && b.count() != 3 {
		t.Fatalf("the freed slot (%s) was not the one taken: a=%d b=%d", first, a.count(), b.count())
	}
	close(gate)
	for range 3 {
		if h := <-served; strings.HasPrefix(h, "error") {
			t.Fatal(h)
		}
	}
}

// TestPinnedModels: a pinned model goes only to the hosts that pin it;
// other models go to hosts that pin nothing.
func TestPinnedModels(t *testing.T) {
	t.Parallel()
	a, b := &fake{}, &fake{}
	p := newPool(t, &clock{}, Host{Name: "a", Backend: a, Models: []string{"big"}}, Host{Name: "b", Backend: b})
	for range 3 {
		if h := chat(t, p, "small").Host; h != "b" {
			t.Fatalf("small served by %s", h)
		}
	}
	hosts := map[string]bool{}
	for range 4 {
		hosts[chat(t, p, "big").Host] = true
	}
	if !hosts["a"] {
		t.Fatalf("big never served by the host that pins it: %v", hosts)
	}
	a.set(errDown)
	b.set(errDown)
	p2 := newPool(t, &clock{}, Host{Name: "a", Backend: a, Models: []string{"big"}})
	_, err := p2.Chat(context.Background(), &backend.Request{Model: "small"})
	if want := "no host serves model small; a pins other models"; err == nil || err.Error() != want {
		t.Fatalf("err = %v, want %q", err, want)
	}
}

// TestModelMissingAtChat: a host that says it lacks the model is not
// asked for it again; the others serve it.
func TestModelMissingAtChat(t *testing.T) {
	t.Parallel()
	a, b := &fake{fail: &backend.Error{Kind: backend.KindModelMissing, Msg: "model m not found"}}, &fake{}
	p := newPool(t, &clock{}, Host{Name: "a", Backend: a}, Host{Name: "b", Backend: b})
	for range 3 {
		if h := chat(t, p, "m").Host; h != "b" {
			t.Fatalf("served by %s", h)
		}
	}
	if a.count() != 1 {
		t.Fatalf("a asked %d times for a model it lacks", a.count())
	}
	if h := chat(t, p, "other").Host; h == "" {
		t.Fatal("no host")
	}
}

func TestNewRejects(t *testing.T) {
	t.Parallel()
	for _, hosts := range [][]Host{nil, {{Name: "a"}}, {{Name: "a", Backend: &fake{}}, {Name: "a", Backend: &fake{}}}, {{Name: "a", Backend: &fake{}, Limit: -1}}} {
		if _, err := New(hosts, Options{}); err == nil {
			t.Errorf("New(%v) accepted", hosts)
		}
	}
}

// preflighted is a host with a preflight that reports info.
type preflighted struct {
	fake
	info *backend.Info
}

func (p *preflighted) Preflight(ctx context.Context, models []string) (*backend.Info, error) {
	return p.info, nil
}

// TestPreflightDigestsDiffer: two hosts with different models under one
// name are a warning, and the first host's digest is recorded.
func TestPreflightDigestsDiffer(t *testing.T) {
	t.Parallel()
	a := &preflighted{info: &backend.Info{Server: "ollama at a", Digests: map[string]string{"m": "aaaaaaaaaaaaaaaa"}}}
	b := &preflighted{info: &backend.Info{Server: "ollama at b", Digests: map[string]string{"m": "bbbbbbbbbbbbbbbb"}, Warnings: []string{"old server"}}}
	p := newPool(t, &clock{}, Host{Name: "a", Backend: a}, Host{Name: "b", Backend: b})
	info, err := p.Preflight(context.Background(), []string{"m"})
	if err != nil {
		t.Fatal(err)
	}
	if info.Digests["m"] != "aaaaaaaaaaaaaaaa" || info.Server != "pool of 2 hosts: ollama at a; ollama at b" {
		t.Errorf("info %+v", info)
	}
	want := []string{"b: old server", "model m on host b is not the one on the other hosts (digest bbbbbbbbbbbb, not aaaaaaaaaaaa): results will mix two models; pull the same model everywhere"}
	if !slices.Equal(info.Warnings, want) {
		t.Errorf("warnings\n%q\nwant\n%q", info.Warnings, want)
	}
}

// TestRunsStickToAHost: with the hosts equally idle, every turn of a run
// goes to the same host, and different runs spread over the hosts.
func TestRunsStickToAHost(t *testing.T) {
	t.Parallel()
	p := newPool(t, &clock{}, Host{Name: "a", Backend: &fake{}}, Host{Name: "b", Backend: &fake{}}, Host{Name: "c", Backend: &fake{}})
	byHost := map[string]int{}
	for run := range 30 {
		key := backend.Key{Case: "case", Cell: map[string]string{"model": "m", "seed": fmt.Sprint(run)}}
		first := ""
		for turn := range 4 {
			key.Turn = turn
			resp, err := p.Chat(context.Background(), &backend.Request{Model: "m", Key: key})
			if err != nil {
				t.Fatal(err)
			}
			if first == "" {
				first = resp.Host
				byHost[first]++
			} else if resp.Host != first {
				t.Fatalf("run %d: turn %d on %s, turn 0 on %s", run, turn, resp.Host, first)
			}
		}
	}
	if len(byHost) != 3 {
		t.Errorf("runs by host: %v, want all three used", byHost)
	}
}
