package progress

import (
	"strings"
	"testing"
	"time"
)

// fakeClock advances one second per reading.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time { c.t = c.t.Add(time.Second); return c.t }

func TestPlainEveryTenth(t *testing.T) {
	var b strings.Builder
	clk := &fakeClock{t: time.Unix(0, 0)}
	m := New(&b, 20, Options{Interval: time.Hour, Now: clk.now})
	for i := range 20 {
		if i%4 == 3 {
			m.Done("error")
		} else if i%2 == 0 {
			m.Done("pass")
		} else {
			m.Done("fail")
		}
	}
	m.Finish()
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if len(lines) != 10 { // one per 10%; Finish adds nothing new
		t.Fatalf("%d lines:\n%s", len(lines), b.String())
	}
	last := lines[len(lines)-1]
	if !strings.HasPrefix(last, "20/20 runs, pass 66.7%, 5 errors") || strings.Contains(b.String(), "\r") {
		t.Fatalf("last line %q", last)
	}
	if !strings.Contains(lines[0], "ETA") {
		t.Fatalf("first line lacks ETA: %q", lines[0])
	}
}

func TestTTYRedraws(t *testing.T) {
	var b strings.Builder
	clk := &fakeClock{t: time.Unix(0, 0)}
	m := New(&b, 3, Options{TTY: true, Now: clk.now})
	m.Done("pass")
	m.Done("pass")
	m.Done("fail")
	m.Finish()
	out := b.String()
	if strings.Count(out, "\r") != 3 || !strings.HasSuffix(out, "\n") || !strings.Contains(out, "[====================] 3/3 runs, pass 66.7%") {
		t.Fatalf("tty output %q", out)
	}
}

func TestFinishPrintsUndrawnState(t *testing.T) {
	var b strings.Builder
	clk := &fakeClock{t: time.Unix(0, 0)}
	m := New(&b, 100, Options{Interval: time.Hour, Now: clk.now})
	m.Done("pass")
	m.Finish()
	if got := strings.TrimSpace(b.String()); !strings.HasPrefix(got, "1/100 runs, pass 100.0%") || strings.Count(got, "\n") != 0 {
		t.Fatalf("output %q", b.String())
	}
}

// TestHugePlanETA: a 3x10^9-run plan at one run per second has an ETA of
// about 95 years, beyond what a time.Duration holds in nanoseconds at a
// slower rate; it is spelled in days, never as a wrapped negative
// duration.
func TestHugePlanETA(t *testing.T) {
	var b strings.Builder
	clk := &fakeClock{t: time.Unix(0, 0)}
	m := New(&b, 3_000_000_000, Options{Interval: time.Nanosecond, Now: func() time.Time { clk.t = clk.t.Add(1000 * time.Second); return clk.t }})
	m.Done("pass")
	if got := b.String(); !strings.Contains(got, "1/3000000000 runs") || !strings.Contains(got, "ETA 34722222 days") || strings.Contains(got, "-") {
		t.Fatalf("output %q", got)
	}
}

// TestThrottledPerHost: the line names each throttled host with its
// throttled requests and the time waited.
func TestThrottledPerHost(t *testing.T) {
	var b strings.Builder
	clk := &fakeClock{t: time.Unix(0, 0)}
	m := New(&b, 2, Options{Interval: time.Hour, Now: clk.now})
	m.Throttled("http://a:1/v1", 1, time.Second)
	m.Throttled("http://b:1/v1", 1, 0)
	m.Throttled("http://a:1/v1", 1, 2*time.Second)
	m.Done("pass")
	m.Done("pass")
	m.Finish()
	if want := "errors, http://a:1/v1 throttled 2 (waited 3s), http://b:1/v1 throttled 1 (waited 0s)"; !strings.Contains(b.String(), want) {
		t.Errorf("progress %q lacks %q", b.String(), want)
	}
}
