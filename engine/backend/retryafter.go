package backend

import (
	"net/http"
	"strconv"
	"strings"
	"time"
)

// RetryAfter reads how long a server asks a client to wait before
// sending again: Retry-After-Ms in milliseconds (OpenAI's), else
// Retry-After in seconds or as an HTTP date, measured from now; at most
// limit, and 0 when absent or unreadable.
func RetryAfter(h http.Header, now time.Time, limit time.Duration) time.Duration {
	var d time.Duration
	if v := h.Get("Retry-After-Ms"); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms > 0 {
			d = time.Duration(ms * float64(time.Millisecond))
		}
	}
	if v := strings.TrimSpace(h.Get("Retry-After")); d == 0 && v != "" {
		if s, err := strconv.ParseFloat(v, 64); err == nil {
			d = time.Duration(s * float64(time.Second))
		} else if t, err := http.ParseTime(v); err == nil {
			d = t.Sub(now)
		}
	}
	return min(max(d, 0), limit)
}
