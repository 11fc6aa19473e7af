package backend

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// KindThrottled: the server refused the request for now (429, or 503
// with Retry-After). Backends return it Retryable with the wait the
// server asked for; Throttle waits and sends the same request again.
// Returned by Throttle itself, not retryable, it means the run's
// throttle budget ran out.
const KindThrottled = "throttled"

// DefaultThrottleWait is how long Throttle waits after a throttled
// answer that did not say (no Retry-After), doubling for each further one
// of the same request up to MaxThrottleWait.
const DefaultThrottleWait = time.Second

// MaxThrottleWait caps one wait, whatever the server asks.
const MaxThrottleWait = time.Minute

// Throttled reports whether err is a throttled answer a wait may get
// past.
func Throttled(err error) (*Error, bool) {
	var be *Error
	if errors.As(err, &be) && be.Kind == KindThrottled && be.Retryable {
		return be, true
	}
	return nil, false
}

// HostThrottle is what one host's rate limits cost a run.
type HostThrottle struct {
	Host     string        // the host's base URL; "" when the backend has no hosts
	Requests int           // throttled answers
	Wait     time.Duration // time spent waiting them out
}

// ThrottleLog collects the throttling of one run, per host. It is safe
// for concurrent use. Put it in the run's context with WithThrottleLog.
type ThrottleLog struct {
	// Budget bounds the run's total wait; 0 means no bound but the
	// context's.
	Budget time.Duration
	// Note, when set, is told of each throttled answer and each wait
	// (the progress line).
	Note func(host string, requests int, wait time.Duration)

	mu     sync.Mutex
	hosts  []HostThrottle
	waited time.Duration
}

type throttleKey struct{}

// WithThrottleLog returns ctx carrying log: every Throttle wrapper (and
// pool routing around a throttled host) under ctx records into it.
func WithThrottleLog(ctx context.Context, log *ThrottleLog) context.Context {
	return context.WithValue(ctx, throttleKey{}, log)
}

func throttleLog(ctx context.Context) *ThrottleLog {
	l, _ := ctx.Value(throttleKey{}).(*ThrottleLog)
	return l
}

// NoteThrottled records under ctx requests throttled answers of host and
// wait spent waiting for it; a context without a log records nothing.
func NoteThrottled(ctx context.Context, host string, requests int, wait time.Duration) {
	if l := throttleLog(ctx); l != nil {
		l.add(host, requests, wait)
	}
}

func (l *ThrottleLog) add(host string, requests int, wait time.Duration) {
	l.mu.Lock()
	i := 0
	for i < len(l.hosts) && l.hosts[i].Host != host {
		i++
	}
	if i == len(l.hosts) {
		l.hosts = append(l.hosts, HostThrottle{Host: host})
	}
	l.hosts[i].Requests += requests
	l.hosts[i].Wait += wait
	l.waited += wait
	l.mu.Unlock()
	if l.Note != nil {
		l.Note(host, requests, wait)
	}
}

// Hosts returns what was recorded, per host in order of first throttle.
func (l *ThrottleLog) Hosts() []HostThrottle {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]HostThrottle(nil), l.hosts...)
}

// take reserves d of the budget, reporting false when it would overrun.
func (l *ThrottleLog) take(d time.Duration) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.Budget <= 0 || l.waited+d <= l.Budget
}

// Throttle wraps a backend so that a throttled answer (KindThrottled,
// retryable) is waited out and the same request sent again, as often as
// the run's ThrottleLog budget and its context allow: throttling never
// costs a run an attempt, and never makes it send earlier turns again.
// Every other reply and error passes through. Optional capabilities
// (Preflighter, PromptMeasurer) are forwarded.
type Throttle struct {
	Backend Backend
	// Sleep waits d or until ctx ends; nil means a timer. Tests inject
	// one that returns at once.
	Sleep func(ctx context.Context, d time.Duration) error
}

var (
	_ Backend        = (*Throttle)(nil)
	_ Preflighter    = (*Throttle)(nil)
	_ PromptMeasurer = (*Throttle)(nil)
)

// Chat sends req, waiting out throttled answers.
func (t *Throttle) Chat(ctx context.Context, req *Request) (*Response, error) {
	return Retrying(ctx, t.Sleep, func() (*Response, error) { return t.Backend.Chat(ctx, req) })
}

// Retrying calls send until it returns anything but a throttled answer,
// waiting as each answer asks (else DefaultThrottleWait, doubling), each
// throttled answer and wait recorded in ctx's ThrottleLog. When the wait
// would overrun the log's budget, or ctx ends, it returns a
// KindThrottled error that is not retryable. A backend with its own
// request loop can use it directly.
func Retrying[T any](ctx context.Context, sleep func(context.Context, time.Duration) error, send func() (T, error)) (T, error) {
	if sleep == nil {
		sleep = Sleep
	}
	log := throttleLog(ctx)
	fallback := DefaultThrottleWait
	for n := 1; ; n++ {
		v, err := send()
		be, ok := Throttled(err)
		if !ok {
			return v, err
		}
		wait := be.RetryAfter
		if wait <= 0 {
			wait = fallback
			fallback = min(2*fallback, MaxThrottleWait)
		}
		wait = min(wait, MaxThrottleWait)
		if log != nil && !log.take(wait) {
			NoteThrottled(ctx, be.Host, 1, 0)
			return v, &Error{Kind: KindThrottled, Err: err,
				Msg: fmt.Sprintf("rate limited %d times in a row; waiting %s more would pass the run's limits.throttle_wait of %s", n, wait, log.Budget)}
		}
		NoteThrottled(ctx, be.Host, 1, wait)
		if err := sleep(ctx, wait); err != nil {
			return v, &Error{Kind: KindThrottled, Err: err, Msg: fmt.Sprintf("rate limited %d times in a row; the run ended while waiting", n)}
		}
	}
}

// Sleep waits d, or until ctx ends (returning its cause).
func Sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

// Preflight forwards to the wrapped backend when it has a preflight.
func (t *Throttle) Preflight(ctx context.Context, models []string) (*Info, error) {
	if p, ok := t.Backend.(Preflighter); ok {
		return p.Preflight(ctx, models)
	}
	return nil, nil
}

// MeasurePrompt forwards to the wrapped backend, waiting out throttled
// answers.
func (t *Throttle) MeasurePrompt(ctx context.Context, req *Request) (*PromptFit, error) {
	return Retrying(ctx, t.Sleep, func() (*PromptFit, error) { return Measure(ctx, t.Backend, req) })
}
