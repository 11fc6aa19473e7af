package pool

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/toolward/toolward/engine/backend"
)

// Host is one member of a pool.
type Host struct {
	// Name identifies the host in records and messages: its base URL.
	Name string
	// Backend talks to this host alone.
	Backend backend.Backend
	// Limit caps requests in flight to the host; 0 means no limit.
	Limit int
	// Models pins models to the host: it serves only these. Empty means
	// any model.
	Models []string
}

// Options tune a pool. The zero value is ready to use.
type Options struct {
	// Down is how long a host stays out after its n-th consecutive
	// failure (n >= 1); nil means DefaultDown.
	Down func(n int) time.Duration
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// MaxDown is the longest DefaultDown takes a host out.
const MaxDown = 30 * time.Second

// DefaultDown takes a host out for 1s after its first consecutive
// failure, doubling after each further one up to MaxDown.
func DefaultDown(n int) time.Duration {
	return min(time.Second<<min(max(n-1, 0), 5), MaxDown)
}

// Pool sends each request to one of its hosts; see the package doc. It is
// safe for concurrent use.
type Pool struct {
	hosts []*member
	down  func(int) time.Duration
	now   func() time.Time

	mu      sync.Mutex
	next    int           // round-robin start among equally busy hosts
	waiters int           // Chat calls waiting for a slot
	wake    chan struct{} // closed when a slot frees while someone waits
}

// member is a host and what the pool knows of it.
type member struct {
	Host
	inflight int
	failures int             // consecutive failures
	until    time.Time       // out until then
	lacks    map[string]bool // models the host said it does not have
}

var (
	_ backend.Backend        = (*Pool)(nil)
	_ backend.Preflighter    = (*Pool)(nil)
	_ backend.PromptMeasurer = (*Pool)(nil)
)

// New returns a pool of hosts, which must be at least one, each with a
// Backend and a distinct Name.
func New(hosts []Host, opts Options) (*Pool, error) {
	if len(hosts) == 0 {
		return nil, errors.New("pool: no hosts")
	}
	p := &Pool{down: opts.Down, now: opts.Now, wake: make(chan struct{})}
	if p.down == nil {
		p.down = DefaultDown
	}
	if p.now == nil {
		p.now = time.Now
	}
	seen := make(map[string]bool, len(hosts))
	for _, h := range hosts {
		switch {
		case h.Backend == nil:
			return nil, fmt.Errorf("pool: host %q has no backend", h.Name)
		case seen[h.Name]:
			return nil, fmt.Errorf("pool: host %q is listed twice", h.Name)
		case h.Limit < 0:
			return nil, fmt.Errorf("pool: host %q: negative limit %d", h.Name, h.Limit)
		}
		seen[h.Name] = true
		p.hosts = append(p.hosts, &member{Host: h, lacks: map[string]bool{}})
	}
	return p, nil
}

// serves reports whether m may be asked for model (call with p.mu held).
func (m *member) serves(model string) bool {
	return (len(m.Models) == 0 || slices.Contains(m.Models, model)) && !m.lacks[model]
}

// Chat sends req to the least-busy healthy host that serves its model,
// and on to the next when a host fails with a retryable infrastructure
// error. The response names the host that answered.
func (p *Pool) Chat(ctx context.Context, req *backend.Request) (*backend.Response, error) {
	tried := make([]bool, len(p.hosts))
	run := runHash(req.Key)
	var last error
	attempts := 0
	throttled := "" // the host whose throttled answer the pool is routing around
	for {
		i, err := p.acquire(ctx, req.Model, run, tried)
		if err != nil {
			return nil, err
		}
		if i < 0 {
			if last == nil {
				return nil, p.noHost(req.Model)
			}
			return nil, p.exhausted(req.Model, attempts, last)
		}
		if throttled != "" {
			// Routed around: the caller never sees this answer.
			backend.NoteThrottled(ctx, throttled, 1, 0)
			throttled = ""
		}
		m := p.hosts[i]
		resp, err := m.Backend.Chat(ctx, req)
		failover := p.release(ctx, m, req.Model, err)
		if err == nil {
			resp.Host = m.Name
			return resp, nil
		}
		if _, ok := backend.Throttled(err); ok {
			err, throttled = withHost(err, m.Name), m.Name
		}
		if !failover {
			return nil, err
		}
		tried[i] = true
		last = err
		attempts++
	}
}

// withHost returns err naming host when it is a *backend.Error.
func withHost(err error, host string) error {
	var be *backend.Error
	if !errors.As(err, &be) {
		return err
	}
	c := *be
	c.Host = host
	return &c
}

// MeasurePrompt measures req's prompt on one host that serves its model
// (the hosts of a pool serve the same models alike), taking a slot there
// like a chat; a host that fails retryably hands it to the next.
func (p *Pool) MeasurePrompt(ctx context.Context, req *backend.Request) (*backend.PromptFit, error) {
	tried := make([]bool, len(p.hosts))
	var last error
	for {
		i, err := p.acquire(ctx, req.Model, 0, tried)
		if err != nil {
			return nil, err
		}
		if i < 0 {
			if last == nil {
				return nil, p.noHost(req.Model)
			}
			return nil, last
		}
		m := p.hosts[i]
		f, err := backend.Measure(ctx, m.Backend, req)
		if !p.release(ctx, m, req.Model, err) {
			return f, err
		}
		tried[i], last = true, err
	}
}

// acquire takes a slot on the best untried host for model and returns its
// index, or -1 when no untried host serves the model. It waits while
// every candidate is at its limit.
func (p *Pool) acquire(ctx context.Context, model string, run uint64, tried []bool) (int, error) {
	for {
		p.mu.Lock()
		i, wait := p.pick(model, run, tried)
		if i >= 0 {
			p.hosts[i].inflight++
			p.next = (i + 1) % len(p.hosts)
			p.mu.Unlock()
			return i, nil
		}
		if !wait {
			p.mu.Unlock()
			return -1, nil
		}
		p.waiters++
		wake := p.wake
		p.mu.Unlock()
		select {
		case <-wake:
			p.mu.Lock()
			p.waiters--
			p.mu.Unlock()
		case <-ctx.Done():
			p.mu.Lock()
			p.waiters--
			p.mu.Unlock()
			return -1, ctx.Err()
		}
	}
}

// pick chooses among the untried hosts that serve model (p.mu held): the
// least busy healthy one with a free slot; when none is healthy, the one
// due back soonest. wait reports that a candidate exists but has no free
// slot. Ties go to the host the run prefers (see affinity), so that the
// turns of one run tend to stay on one host and find their prompt prefix
// still cached there; requests of no run (run 0) go round-robin.
func (p *Pool) pick(model string, run uint64, tried []bool) (best int, wait bool) {
	now := p.now()
	best, back := -1, -1
	healthy := false
	n := len(p.hosts)
	for k := range n {
		i := (p.next + k) % n
		m := p.hosts[i]
		if tried[i] || !m.serves(model) {
			continue
		}
		up := !m.until.After(now)
		healthy = healthy || up
		full := m.Limit > 0 && m.inflight >= m.Limit
		if full {
			wait = true
			continue
		}
		if up && (best < 0 || m.inflight < p.hosts[best].inflight ||
			m.inflight == p.hosts[best].inflight && run != 0 && affinity(run, m.Name) > affinity(run, p.hosts[best].Name)) {
			best = i
		}
		if !up && (back < 0 || m.until.Before(p.hosts[back].until)) {
			back = i
		}
	}
	if best < 0 && !healthy && back >= 0 {
		best = back
	}
	if best >= 0 {
		wait = false
	}
	return best, wait
}

// release frees m's slot and learns from err; it reports whether the
// request should go on to another host.
func (p *Pool) release(ctx context.Context, m *member, model string, err error) (failover bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	m.inflight--
	if p.waiters > 0 {
		close(p.wake)
		p.wake = make(chan struct{})
	}
	if err == nil {
		m.failures, m.until = 0, time.Time{}
		return false
	}
	if ctx.Err() != nil {
		return false // the caller gave up; the host is not to blame
	}
	var be *backend.Error
	if !errors.As(err, &be) {
		return false
	}
	switch {
	case be.Kind == backend.KindModelMissing:
		m.lacks[model] = true
		return true
	case be.Kind == backend.KindThrottled && be.Retryable:
		// Not a failure: out until it said to come back, not longer.
		wait := be.RetryAfter
		if wait <= 0 {
			wait = backend.DefaultThrottleWait
		}
		m.until = p.now().Add(wait)
		return true
	case be.Retryable:
		m.failures++
		m.until = p.now().Add(max(p.down(m.failures), be.RetryAfter))
		return true
	}
	return false
}

// exhausted is the error when every candidate host failed: the last one,
// saying so when there were several.
func (p *Pool) exhausted(model string, attempts int, last error) error {
	if attempts <= 1 {
		return last
	}
	var be *backend.Error
	if !errors.As(last, &be) {
		return last
	}
	return &backend.Error{
		Kind: be.Kind, Retryable: be.Retryable, RetryAfter: be.RetryAfter, Host: be.Host, Err: last,
		Msg: fmt.Sprintf("all %d hosts that serve %s failed; the last said", attempts, model),
	}
}

// noHost is the error when no host serves model at all.
func (p *Pool) noHost(model string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	var lack, other []string
	for _, m := range p.hosts {
		if m.lacks[model] {
			lack = append(lack, m.Name)
		} else {
			other = append(other, m.Name)
		}
	}
	msg := fmt.Sprintf("no host serves model %s", model)
	if len(lack) > 0 {
		msg += fmt.Sprintf(": %s said %s not have it", strings.Join(lack, ", "), plural(len(lack), "it does", "they do"))
	}
	if len(other) > 0 {
		msg += fmt.Sprintf("; %s %s other models", strings.Join(other, ", "), plural(len(other), "pins", "pin"))
	}
	return &backend.Error{Kind: backend.KindModelMissing, Msg: msg}
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// runHash identifies the run a request belongs to (its case and cell,
// not its turn), without allocating; 0 for a request with no key.
func runHash(k backend.Key) uint64 {
	if k.Case == "" {
		return 0
	}
	h := fnv(fnvOffset, k.Case)
	for name, v := range k.Cell { // a sum: the same whatever the map order
		h += mix(fnv(fnv(fnvOffset, name), v))
	}
	return h | 1
}

// affinity is how much run prefers host (rendezvous hashing): each run
// ranks the hosts in its own order, and removing a host moves only the
// runs that preferred it.
func affinity(run uint64, host string) uint64 { return mix(fnv(run, host)) }

const fnvOffset, fnvPrime = 14695981039346656037, 1099511628211

func fnv(h uint64, s string) uint64 {
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= fnvPrime
	}
	return h
}

// mix is splitmix64's finaliser.
func mix(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	return x ^ x>>31
}
