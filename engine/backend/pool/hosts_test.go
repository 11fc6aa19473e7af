package pool_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ollama/ollama/api"

	"github.com/toolward/toolward/engine/backend"
	"github.com/toolward/toolward/engine/backend/ollama"
	"github.com/toolward/toolward/engine/backend/openai"
	"github.com/toolward/toolward/engine/backend/pool"
	"github.com/toolward/toolward/fixtures/fakes/fakeollama"
	"github.com/toolward/toolward/fixtures/fakes/fakeopenai"
)

// The pool over real backends, each host a fake server on loopback.

// server is one fake host of either kind.
type server struct {
	url   string
	close func()
}

// how says how a fake host answers a chat request.
type how int

const (
	answer how = iota // a normal reply
	hold              // no reply until the host is closed
	cut               // a stream cut off part-way
)

// kind starts fake hosts of one kind: models lists the models the host
// has, and onChat, called for every chat request with the host's count
// so far, says how to answer it (nil: always answer).
type kind struct {
	name  string
	start func(t *testing.T, models []string, onChat func(n int64) how) server
	mk    func(url string) (backend.Backend, error)
}

var kinds = []kind{
	{
		name: "ollama",
		start: func(t *testing.T, models []string, onChat func(int64) how) server {
			var n atomic.Int64
			var ms []fakeollama.Model
			for _, m := range models {
				ms = append(ms, fakeollama.Model{Name: m})
			}
			s := fakeollama.New(fakeollama.Options{Models: ms, Script: func(req *api.ChatRequest) fakeollama.Reply {
				switch h := answer; {
				case onChat != nil:
					if h = onChat(n.Add(1)); h == hold {
						return fakeollama.Reply{Delay: time.Hour}
					}
					if h == cut {
						return fakeollama.Reply{Content: "a long reply", Chunks: 4, ErrorAfter: 2}
					}
				}
				return fakeollama.Reply{Content: "ok"}
			}})
			var once sync.Once
			closeOnce := func() { once.Do(s.Close) }
			t.Cleanup(closeOnce)
			return server{url: s.URL, close: closeOnce}
		},
		mk: func(url string) (backend.Backend, error) { return ollama.New(ollama.Config{Host: url}) },
	},
	{
		name: "openai",
		start: func(t *testing.T, models []string, onChat func(int64) how) server {
			var n atomic.Int64
			var ms []fakeopenai.Model
			for _, m := range models {
				ms = append(ms, fakeopenai.Model{ID: m})
			}
			s := fakeopenai.New(fakeopenai.Options{Models: ms, Script: func(req *fakeopenai.Request) fakeopenai.Reply {
				if req.MaxTokens != nil && *req.MaxTokens == 1 {
					return fakeopenai.Reply{Content: "OK"} // the preflight probe
				}
				switch h := answer; {
				case onChat != nil:
					if h = onChat(n.Add(1)); h == hold {
						return fakeopenai.Reply{Delay: time.Hour}
					}
					if h == cut {
						return fakeopenai.Reply{Content: "a long reply", Chunks: 4, ErrorAfter: 2}
					}
				}
				return fakeopenai.Reply{Content: "ok"}
			}})
			var once sync.Once
			closeOnce := func() { once.Do(s.Close) }
			t.Cleanup(closeOnce)
			return server{url: s.BaseURL, close: closeOnce}
		},
		mk: func(url string) (backend.Backend, error) { return openai.New(openai.Config{BaseURL: url}) },
	},
}

func newPool(t *testing.T, k kind, servers []server, pins ...[]string) *pool.Pool {
	t.Helper()
	hosts := make([]pool.Host, len(servers))
	for i, s := range servers {
		be, err := k.mk(s.url)
		if err != nil {
			t.Fatal(err)
		}
		hosts[i] = pool.Host{Name: s.url, Backend: be, Limit: 2}
		if i < len(pins) {
			hosts[i].Models = pins[i]
		}
	}
	p, err := pool.New(hosts, pool.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestHostKilledMidRun: one of three hosts dies with a request in
// flight; that request and every later one are served by the others, and
// none fails.
func TestHostKilledMidRun(t *testing.T) {
	t.Parallel()
	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) {
			t.Parallel()
			hit := make(chan struct{})
			a := k.start(t, []string{"m"}, func(n int64) how {
				if n == 3 {
					close(hit)
					return hold
				}
				return answer
			})
			b := k.start(t, []string{"m"}, nil)
			c := k.start(t, []string{"m"}, nil)
			p := newPool(t, k, []server{a, b, c})
			go func() {
				<-hit
				a.close()
			}()
			const requests = 60
			var wg sync.WaitGroup
			errs := make(chan error, requests)
			var mu sync.Mutex
			served := map[string]int{}
			for range requests {
				wg.Go(func() {
					resp, err := p.Chat(context.Background(), &backend.Request{Model: "m", Messages: []backend.Message{{Role: "user", Content: "hi"}}})
					if err != nil {
						errs <- err
						return
					}
					mu.Lock()
					served[resp.Host]++
					mu.Unlock()
				})
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Errorf("request failed: %v", err)
			}
			select {
			case <-hit:
			default:
				t.Fatal("host a never got its third request")
			}
			// Host a holds at most Limit (2) requests: when its third
			// arrives, at least one earlier one has returned. The other
			// may still be in flight when a dies, and fail over.
			if served[a.url] < 1 || served[b.url] == 0 || served[c.url] == 0 {
				t.Errorf("served by host: %v", served)
			}
			if n := served[a.url] + served[b.url] + served[c.url]; n != requests {
				t.Errorf("%d responses, want %d", n, requests)
			}
		})
	}
}

// TestBrokenStreamFailsOver: a host whose replies break off part-way is
// taken out after the first, and the turn is served whole by another.
func TestBrokenStreamFailsOver(t *testing.T) {
	t.Parallel()
	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) {
			t.Parallel()
			a := k.start(t, []string{"m"}, func(int64) how { return cut })
			b := k.start(t, []string{"m"}, nil)
			p := newPool(t, k, []server{a, b})
			for i := range 5 {
				resp, err := p.Chat(context.Background(), &backend.Request{Model: "m", Messages: []backend.Message{{Role: "user", Content: "hi"}}})
				if err != nil {
					t.Fatalf("request %d: %v", i, err)
				}
				if resp.Host != b.url || resp.Message.Content != "ok" {
					t.Fatalf("request %d: %q from %s", i, resp.Message.Content, resp.Host)
				}
			}
		})
	}
}

// TestPreflightReportsWhichHostLacksWhichModel: a host without a model is
// a warning and gets none of that model's requests; a model no host has
// stops the job, naming the hosts.
func TestPreflightReportsWhichHostLacksWhichModel(t *testing.T) {
	t.Parallel()
	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) {
			t.Parallel()
			a := k.start(t, []string{"m1", "m2"}, nil)
			b := k.start(t, []string{"m1"}, nil)
			p := newPool(t, k, []server{a, b})
			info, err := p.Preflight(context.Background(), []string{"m1", "m2"})
			if err != nil {
				t.Fatal(err)
			}
			if !contains(info.Warnings, "host "+b.url+" lacks model m2; other hosts serve it") {
				t.Errorf("warnings %q", info.Warnings)
			}
			if !strings.HasPrefix(info.Server, "pool of 2 hosts: ") {
				t.Errorf("server %q", info.Server)
			}
			for range 6 {
				resp, err := p.Chat(context.Background(), &backend.Request{Model: "m2", Messages: []backend.Message{{Role: "user", Content: "hi"}}})
				if err != nil {
					t.Fatal(err)
				}
				if resp.Host != a.url {
					t.Fatalf("m2 served by %s, which lacks it", resp.Host)
				}
			}

			_, err = newPool(t, k, []server{a, b}).Preflight(context.Background(), []string{"m1", "m3", "m2"})
			var be *backend.Error
			if !errors.As(err, &be) || be.Kind != backend.KindModelMissing {
				t.Fatalf("err = %v, want model_missing", err)
			}
			want := "no host of the pool serves model m3: " + a.url + " lacks m3; " + b.url + " lacks m3"
			if !strings.HasPrefix(err.Error(), want) {
				t.Fatalf("err = %q\nwant prefix %q", err, want)
			}
		})
	}
}

// TestPreflightUnreachableHost: a host down at preflight is a warning
// when others serve every model, and an error when none answers.
func TestPreflightUnreachableHost(t *testing.T) {
	t.Parallel()
	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) {
			t.Parallel()
			a := k.start(t, []string{"m"}, nil)
			b := k.start(t, []string{"m"}, nil)
			b.close()
			info, err := newPool(t, k, []server{a, b}).Preflight(context.Background(), []string{"m"})
			if err != nil {
				t.Fatal(err)
			}
			if len(info.Warnings) == 0 || !strings.Contains(info.Warnings[0], "host "+b.url+" is unreachable") {
				t.Errorf("warnings %q", info.Warnings)
			}
			a.close()
			_, err = newPool(t, k, []server{a, b}).Preflight(context.Background(), []string{"m"})
			if err == nil || !strings.HasPrefix(err.Error(), "no host of the pool answered") {
				t.Fatalf("err = %v", err)
			}
		})
	}
}

// TestPreflightPinned: a host is asked only about the models pinned to
// it, and a model pinned only to a host that lacks it is reported.
func TestPreflightPinned(t *testing.T) {
	t.Parallel()
	k := kinds[0]
	a := k.start(t, []string{"big"}, nil)
	b := k.start(t, []string{"small"}, nil)
	p := newPool(t, k, []server{a, b}, []string{"big"}, []string{"small"})
	info, err := p.Preflight(context.Background(), []string{"big", "small"})
	if err != nil {
		t.Fatal(err)
	}
	if len(info.Warnings) != 0 || len(info.Digests) != 2 {
		t.Errorf("info %+v", info)
	}
	p = newPool(t, k, []server{a, b}, []string{"big", "small"}, []string{"big"})
	_, err = p.Preflight(context.Background(), []string{"big", "small"})
	want := "no host of the pool serves model small: " + a.url + " lacks small; " + b.url + " pins other models"
	if err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Fatalf("err = %v\nwant prefix %q", err, want)
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// TestPreflightHangingHost: a host that accepts connections but never
// answers is left out when the preflight's time runs short, instead of
// failing the preflight of the hosts that did answer.
func TestPreflightHangingHost(t *testing.T) {
	t.Parallel()
	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) {
			t.Parallel()
			a := k.start(t, []string{"m"}, nil)
			hang := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() }))
			t.Cleanup(func() { hang.CloseClientConnections(); hang.Close() })
			url := hang.URL
			if k.name == "openai" {
				url += "/v1"
			}
			p := newPool(t, k, []server{a, {url: url}})
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			defer cancel()
			info, err := p.Preflight(ctx, []string{"m"})
			if err != nil {
				t.Fatal(err)
			}
			if len(info.Warnings) != 1 || !strings.Contains(info.Warnings[0], "host "+url+" is unreachable") {
				t.Errorf("warnings %q", info.Warnings)
			}
		})
	}
}
