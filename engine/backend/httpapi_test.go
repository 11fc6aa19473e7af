package backend

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"
)

// TestRetryAfter: Retry-After in seconds (fractions too) or as an HTTP
// date, Retry-After-Ms first, capped at the limit; absent, negative or
// unreadable is 0.
func TestRetryAfter(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		h    http.Header
		want time.Duration
	}{
		{http.Header{"Retry-After": {"7"}}, 7 * time.Second},
		{http.Header{"Retry-After": {" 1.5 "}}, 1500 * time.Millisecond},
		{http.Header{"Retry-After": {now.Add(20 * time.Second).Format(http.TimeFormat)}}, 20 * time.Second},
		{http.Header{"Retry-After": {now.Add(-time.Hour).Format(http.TimeFormat)}}, 0},
		{http.Header{"Retry-After": {"3600"}}, time.Minute},
		{http.Header{"Retry-After": {"-3"}}, 0},
		{http.Header{"Retry-After": {"soon"}}, 0},
		{http.Header{"Retry-After-Ms": {"250"}, "Retry-After": {"1"}}, 250 * time.Millisecond},
		{http.Header{"Retry-After-Ms": {"x"}, "Retry-After": {"2"}}, 2 * time.Second},
		{http.Header{}, 0},
	} {
		if got := RetryAfter(tc.h, now, time.Minute); got != tc.want {
			t.Errorf("%v: %s, want %s", tc.h, got, tc.want)
		}
	}
}

// TestSetStatus: the statuses every HTTP API means alike, and a
// throttled answer's wait in its message.
func TestSetStatus(t *testing.T) {
	t.Parallel()
	ra := http.Header{"Retry-After": {"3"}}
	for _, tc := range []struct {
		code      int
		h         http.Header
		kind      string
		retryable bool
		wait      time.Duration
		msg       string
	}{
		{408, nil, KindTimeout, true, 0, "x"},
		{504, ra, KindTimeout, true, 0, "x"},
		{429, ra, KindThrottled, true, 3 * time.Second, "x (retry after 3s)"},
		{429, nil, KindThrottled, true, 0, "x"},
		{500, nil, KindUnavailable, true, 0, "x"},
		{503, ra, KindUnavailable, true, 3 * time.Second, "x"},
		{400, ra, KindBadRequest, false, 0, "x"},
		{418, nil, KindBadRequest, false, 0, "x"},
	} {
		e := &Error{Msg: "x"}
		e.SetStatus(tc.code, tc.h, time.Minute)
		if e.Kind != tc.kind || e.Retryable != tc.retryable || e.RetryAfter != tc.wait || e.Msg != tc.msg {
			t.Errorf("%d: %+v; want %s retryable %v wait %s msg %q", tc.code, e, tc.kind, tc.retryable, tc.wait, tc.msg)
		}
	}
	e := &Error{Msg: "x"}
	e.SetThrottled(http.Header{"Retry-After": {"120"}}, 5*time.Second)
	if e.Kind != KindThrottled || !e.Retryable || e.RetryAfter != 5*time.Second || e.Msg != "x (retry after 5s)" {
		t.Errorf("SetThrottled past the cap: %+v", e)
	}
}

type timeoutErr struct{}

func (timeoutErr) Error() string   { return "i/o timeout" }
func (timeoutErr) Timeout() bool   { return true }
func (timeoutErr) Temporary() bool { return true }

// TestTransportError: deadlines (the context's or the connection's) are
// retryable timeouts, a canceled context is not retryable, anything else
// is a retryable unavailable server.
func TestTransportError(t *testing.T) {
	t.Parallel()
	dead, cancel := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancel()
	canceled, cancel2 := context.WithCancel(context.Background())
	cancel2()
	refused := errors.New("connection refused")
	for _, tc := range []struct {
		ctx       context.Context
		err       error
		kind, msg string
		retryable bool
	}{
		{dead, refused, KindTimeout, "at h: timed out", true},
		{context.Background(), context.DeadlineExceeded, KindTimeout, "at h: timed out", true},
		{canceled, refused, KindUnavailable, "at h: canceled", false},
		{context.Background(), timeoutErr{}, KindTimeout, "at h: timed out", true},
		{context.Background(), refused, KindUnavailable, "at h", true},
	} {
		e := TransportError(tc.ctx, tc.err, "at h")
		if e.Kind != tc.kind || e.Msg != tc.msg || e.Retryable != tc.retryable {
			t.Errorf("%v: %+v; want %s %q retryable %v", tc.err, e, tc.kind, tc.msg, tc.retryable)
		}
	}
}

// TestAPIKeyAndHeaders: a named variable that is unset is an error
// naming it; the headers put the fixed ones over the configured ones and
// leave out empty values.
func TestAPIKeyAndHeaders(t *testing.T) {
	t.Setenv("TOOLWARD_TEST_KEY", "sekrit")
	if k, err := APIKey("TOOLWARD_TEST_KEY", "x: api_key_env", "set it"); k != "sekrit" || err != nil {
		t.Errorf("set: %q %v", k, err)
	}
	if k, err := APIKey("", "x: api_key_env", "set it"); k != "" || err != nil {
		t.Errorf("none: %q %v", k, err)
	}
	_, err := APIKey("TOOLWARD_TEST_KEY_UNSET", "x: api_key_env", "set it")
	if err == nil || err.Error() != "x: api_key_env names $TOOLWARD_TEST_KEY_UNSET, which is not set; set it" {
		t.Errorf("unset: %v", err)
	}
	h := Headers(map[string]string{"content-type": "text/plain", "X-Org": "o"}, "X-Api-Key", "", "Anthropic-Version", "v")
	if h.Get("Content-Type") != "application/json" || h.Get("X-Org") != "o" || h.Get("Anthropic-Version") != "v" || h.Values("X-Api-Key") != nil {
		t.Errorf("headers %v", h)
	}
}
