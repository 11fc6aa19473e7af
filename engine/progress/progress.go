package progress

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/toolward/toolward/schema/record"
)

// Meter counts finished runs and prints progress. It is safe for
// concurrent use.
type Meter struct {
	w        io.Writer
	tty      bool
	total    int64
	interval time.Duration
	now      func() time.Time

	mu                 sync.Mutex
	start              time.Time
	done, pass, scored int64
	errs               int64
	lastPrint          time.Time
	lastTenth          int64
	drawnDone          int64 // done at the last draw
	width              int
	throttled          []hostThrottle // per host, in order of first throttle
}

// hostThrottle is one host's rate limiting so far.
type hostThrottle struct {
	host     string
	requests int
	wait     time.Duration
}

// Options configure a Meter.
type Options struct {
	// TTY selects in-place redrawing.
	TTY bool
	// Interval between plain lines; 0 means 5 s.
	Interval time.Duration
	// Now returns the time; nil means time.Now.
	Now func() time.Time
}

// New returns a meter for total runs writing to w.
func New(w io.Writer, total int64, opts Options) *Meter {
	m := &Meter{w: w, tty: opts.TTY, total: total, interval: opts.Interval, now: opts.Now}
	if m.interval <= 0 {
		m.interval = 5 * time.Second
	}
	if m.now == nil {
		m.now = time.Now
	}
	m.start = m.now()
	m.lastPrint = m.start
	return m
}

// Done counts one finished run with its outcome (record.Pass, record.Fail
// or record.Error).
func (m *Meter) Done(outcome record.Outcome) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.done++
	switch outcome {
	case record.Pass:
		m.pass++
		m.scored++
	case record.Fail:
		m.scored++
	default:
		m.errs++
	}
	now := m.now()
	if m.tty {
		if now.Sub(m.lastPrint) >= 100*time.Millisecond || m.done == m.total {
			m.draw(now)
		}
		return
	}
	tenth := int64(0)
	if m.total > 0 {
		tenth = m.done * 10 / m.total
	}
	if now.Sub(m.lastPrint) >= m.interval || tenth > m.lastTenth {
		m.lastTenth = tenth
		m.draw(now)
	}
}

// Throttled counts requests throttled answers of host and wait spent
// waiting them out; the progress line shows them per host. Its signature
// is backend.ThrottleLog's Note.
func (m *Meter) Throttled(host string, requests int, wait time.Duration) {
	m.mu.Lock()
	defer m.mu.Unlock()
	i := 0
	for i < len(m.throttled) && m.throttled[i].host != host {
		i++
	}
	if i == len(m.throttled) {
		m.throttled = append(m.throttled, hostThrottle{host: host})
	}
	m.throttled[i].requests += requests
	m.throttled[i].wait += wait
}

// Finish prints the final state (and ends the redrawn line on a terminal).
func (m *Meter) Finish() {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.done != m.drawnDone || (m.tty && m.width == 0) {
		m.draw(m.now())
	}
	if m.tty {
		fmt.Fprintln(m.w)
	}
}

func (m *Meter) draw(now time.Time) {
	m.lastPrint = now
	m.drawnDone = m.done
	line := m.line(now)
	if m.tty {
		pad := ""
		if n := m.width - len(line); n > 0 {
			pad = strings.Repeat(" ", n)
		}
		m.width = len(line)
		fmt.Fprintf(m.w, "\r%s%s", line, pad)
		return
	}
	fmt.Fprintln(m.w, line)
}

func (m *Meter) line(now time.Time) string {
	var b strings.Builder
	if m.tty {
		const width = 20
		filled := 0
		if m.total > 0 {
			filled = int(m.done * width / m.total)
		}
		b.WriteString("[" + strings.Repeat("=", filled) + strings.Repeat(" ", width-filled) + "] ")
	}
	fmt.Fprintf(&b, "%d/%d runs", m.done, m.total)
	if m.scored > 0 {
		fmt.Fprintf(&b, ", pass %.1f%%", 100*float64(m.pass)/float64(m.scored))
	}
	fmt.Fprintf(&b, ", %d errors", m.errs)
	for _, t := range m.throttled {
		host := t.host
		if host == "" {
			host = "the server"
		}
		fmt.Fprintf(&b, ", %s throttled %d (waited %s)", host, t.requests, t.wait.Round(time.Second))
	}
	el := now.Sub(m.start)
	if m.done > 0 && el > 0 {
		rate := float64(m.done) / el.Seconds()
		fmt.Fprintf(&b, ", %.1f runs/s", rate)
		if left := m.total - m.done; left > 0 {
			fmt.Fprintf(&b, ", ETA %s", eta(float64(left)/rate))
		}
	}
	return b.String()
}

// eta spells a number of seconds left: as a duration up to two days, in
// days beyond (a huge plan's ETA overflows a time.Duration).
func eta(secs float64) string {
	if secs < 48*3600 {
		return time.Duration(secs * float64(time.Second)).Round(time.Second).String()
	}
	return fmt.Sprintf("%.0f days", secs/86400)
}
