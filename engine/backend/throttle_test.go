package backend

import (
	"context"
	"testing"
	"time"
)

type scripted struct {
	errs []error // answers in order; past the end, a reply
	n    int
}

func (s *scripted) Chat(ctx context.Context, req *Request) (*Response, error) {
	s.n++
	if s.n <= len(s.errs) {
		return nil, s.errs[s.n-1]
	}
	return &Response{Message: Message{Content: "ok"}}, nil
}

func TestThrottleWaitsAndResends(t *testing.T) {
	t.Parallel()
	throttled := func(after time.Duration) error {
		return &Error{Kind: KindThrottled, Retryable: true, RetryAfter: after, Host: "h"}
	}
	b := &scripted{errs: []error{throttled(3 * time.Second), throttled(0), throttled(0)}}
	var waits []time.Duration
	th := &Throttle{Backend: b, Sleep: func(_ context.Context, d time.Duration) error { waits = append(waits, d); return nil }}
	log := &ThrottleLog{Budget: time.Minute}
	resp, err := th.Chat(WithThrottleLog(context.Background(), log), &Request{})
	if err != nil || resp.Message.Content != "ok" || b.n != 4 {
		t.Fatalf("Chat = %+v, %v after %d requests; want the reply after 4", resp, err, b.n)
	}
	// The server's 3s, then the fallback doubling: 1s, 2s.
	if len(waits) != 3 || waits[0] != 3*time.Second || waits[1] != time.Second || waits[2] != 2*time.Second {
		t.Errorf("waits %v", waits)
	}
	if h := log.Hosts(); len(h) != 1 || h[0] != (HostThrottle{Host: "h", Requests: 3, Wait: 6 * time.Second}) {
		t.Errorf("log %+v", h)
	}

	// Past the budget: a throttled error that is not retryable.
	b = &scripted{errs: []error{throttled(4 * time.Second), throttled(4 * time.Second)}}
	th.Backend = b
	log = &ThrottleLog{Budget: 5 * time.Second}
	_, err = th.Chat(WithThrottleLog(context.Background(), log), &Request{})
	be, ok := err.(*Error)
	if !ok || be.Kind != KindThrottled || be.Retryable || b.n != 2 {
		t.Fatalf("over budget: %#v after %d requests", err, b.n)
	}
	// Other errors pass through untouched, at once.
	down := &Error{Kind: KindUnavailable, Retryable: true}
	th.Backend = &scripted{errs: []error{down}}
	if _, err := th.Chat(context.Background(), &Request{}); err != down {
		t.Errorf("a backend error became %v", err)
	}
}
