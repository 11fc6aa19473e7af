package engine

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/toolward/toolward/engine/backend"
)

// retried calls f, a request made before any run (a preflight, a context
// check's measurement), as a run's turn is tried: again while it fails
// with a retryable *backend.Error, up to limits.retries more times, after
// the runs' backoff or the server's Retry-After (up to MaxPreflightWait).
// Its last error says how often it was tried, when more than once.
func (s *starting) retried(ctx context.Context, f func() error) error {
	attempts := max(s.l.Config.Limits.Retries, 0) + 1
	backoff := s.opts.Backoff
	if backoff == nil {
		backoff = defaultBackoff
	}
	for attempt := 1; ; attempt++ {
		err := f()
		var be *backend.Error
		if err == nil || !errors.As(err, &be) || !be.Retryable || ctx.Err() != nil {
			return err
		}
		if attempt >= attempts {
			if attempt == 1 {
				return err
			}
			return &triedError{err: err, n: attempt}
		}
		wait := min(max(backoff(attempt), be.RetryAfter), MaxPreflightWait)
		if backend.Sleep(ctx, wait) != nil {
			return err
		}
	}
}

// MaxPreflightWait bounds one wait between two tries of a request made
// before any run, whatever Retry-After asks.
const MaxPreflightWait = time.Minute

// triedError is a request's last error after n tries (limits.retries).
type triedError struct {
	err error
	n   int
}

func (e *triedError) Error() string {
	return fmt.Sprintf("%v (tried %d times, limits.retries)", e.err, e.n)
}

func (e *triedError) Unwrap() error { return e.err }
