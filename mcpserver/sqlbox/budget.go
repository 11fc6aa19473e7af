package sqlbox

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/ncruces/go-sqlite3"
)

// Limits on how long one model-written query runs.
//
// A query is bounded by the work it does, not by time, so that the same
// query on the same data gets the same answer, or the same refusal with
// the same step count, on any machine and under any load. Work is counted
// in SQLite's virtual-machine steps (the instructions the compiled
// statement executes, SQLITE_STMTSTATUS_VM_STEP). Measured on
// fixtures/db/company.sql, the 26 distinct query_database calls of cases/
// and fixtures/cassettes/ take at most 707 steps
// (TestCaseQueriesWithinBudget in package mcpserver keeps every one under
// MaxSteps/100), the analytical queries of TestRealisticQueriesAccepted
// 5,762, a ranking by correlated subquery over all employees 16,442. A
// runaway query (a recursive CTE without its end condition, a join
// without its ON condition, a LIKE bomb on every row) is stopped just
// after MaxSteps, 0.13 to 0.7 s on a shared 2-core machine
// (TestRunawayStoppedByStepBudget).
//
// A step is bounded work only if the values it handles are: SQLite's own
// code copies, compares and converts a value in one step. So no value a
// query builds or reads may exceed MaxValueLen (SQLITE_LIMIT_LENGTH; a
// database with wider rows raises it, see Template.ValueLen), the
// functions of ordinary queries whose work grows with the product of two
// lengths (LIKE, GLOB, instr, replace, trim) and the NOCASE collation
// charge their work to the budget (see work.go), and the functions whose
// work no length bounds are refused (deniedFunctions). Each hostile
// query of these families is stopped by the budget, with its message,
// in seconds (TestHeavyStepsStoppedByBudget keeps them as regression
// tests under a small budget; the measurements are in docs/speed.md).
//
// Backstop is a wall clock kept only for work the step count does not
// see, so far above what MaxSteps takes that reaching it means the
// machine is stalled or the engine is stuck. Its error is not a
// *QueryError: the server answers the call with a protocol error, which
// toolward records as an infrastructure error, never as a tool result
// the model is scored on.
const (
	MaxSteps = 5_000_000        // virtual-machine steps one query may run
	Backstop = 20 * time.Second // wall-clock limit against a stall; below limits.call_timeout's default (30 s)
)

// A server may set another budget for its queries (Template.SetSteps,
// toolward serve --query-steps), for databases whose legitimate queries
// need more steps, within these bounds: fewer than MinSteps would refuse
// ordinary analytical queries; at MaxStepsLimit a plain runaway already
// takes about 4 s. Above about 15M steps the heaviest steps (see
// docs/speed.md) may reach the backstop before the budget.
const (
	MinSteps      = 10_000
	MaxStepsLimit = 100_000_000
)

// CheckSteps reports whether n is a budget of steps a server may set.
func CheckSteps(n int64) error {
	if n < MinSteps || n > MaxStepsLimit {
		return fmt.Errorf("a query's step budget must be between %d and %d (default %d), not %d", MinSteps, MaxStepsLimit, MaxSteps, n)
	}
	return nil
}

// maxSteps and backstop are MaxSteps and Backstop, except in tests.
var (
	maxSteps int64 = MaxSteps
	backstop       = Backstop
)

// progressOps is how many virtual-machine steps apart the driver's
// progress handler runs (sqlite3_progress_handler, installed by
// github.com/ncruces/go-sqlite3 on every connection). The handler polls
// the connection's interrupt context, which is how stepBudget counts.
const progressOps = 1000

// errOverBudget is the cause a stepBudget cancels with.
var errOverBudget = errors.New("sqlbox: step budget spent")

// stepBudget is the interrupt context (Conn.SetInterrupt) of one query: it
// is cancelled, which makes SQLite stop the statement with
// SQLITE_INTERRUPT, once the statement has run more than limit steps.
//
// The driver calls Err from SQLite's progress handler, and once before
// each Prepare and Step. SQLite runs the handler each time the statement's
// step count passes a multiple of progressOps, but adds a Step's steps to
// the statement's VM_STEP counter only when the Step returns; so Err reads
// the counter and counts the handler's calls since it last moved. The
// multiples of progressOps passed so far are a lower bound of the steps
// run, less than progressOps below the true count, and the budget is spent
// when that bound is over limit. The count depends only on the statement
// and the data, so a query stops at the same step on every run.
type stepBudget struct {
	context.Context
	cancel context.CancelCauseFunc
	limit  int64         // 0: no limit
	stmt   *sqlite3.Stmt // the statement being stepped; nil while preparing
	last   int64         // its VM_STEP counter at the last poll
	ticks  int64         // progress handler calls since that counter moved
	work   int64         // steps charged by metered functions (see work.go)
	over   bool          // the budget is spent
}

// newBudget returns the interrupt context of a query run under ctx with
// at most limit steps (0: no limit), and the function that releases it.
func newBudget(ctx context.Context, limit int64) (*stepBudget, func()) {
	ctx, cancel := context.WithCancelCause(ctx)
	b := &stepBudget{Context: ctx, cancel: cancel, limit: limit, last: -1}
	return b, func() { cancel(nil) }
}

// watch starts counting the steps of stmt.
func (b *stepBudget) watch(stmt *sqlite3.Stmt) { b.stmt, b.last, b.ticks, b.work = stmt, -1, 0, 0 }

// Err counts the steps of the watched statement and reports the context's
// error, which is set once the budget is spent.
func (b *stepBudget) Err() error {
	if b.stmt != nil && b.limit > 0 && !b.over {
		if n := int64(b.stmt.Status(sqlite3.STMTSTATUS_VM_STEP, false)); n != b.last {
			b.last, b.ticks = n, 0
		} else {
			b.ticks++
		}
		b.check()
	}
	return b.Context.Err()
}

// check cancels the budget once the steps known to have run, with the
// work charged, are over the limit.
func (b *stepBudget) check() {
	if (b.last/progressOps+b.ticks)*progressOps+b.work > b.limit {
		b.over = true
		b.cancel(errOverBudget)
	}
}

// charge adds n steps of work done inside one step of the watched
// statement (a metered function's call) and reports whether the budget
// still holds them; if not, the budget is spent and the caller must not
// do the work.
func (b *stepBudget) charge(n int64) bool {
	if b.stmt == nil || b.limit <= 0 || b.over {
		return !b.over
	}
	b.work += n
	b.check()
	return !b.over
}

// steps returns how many steps the watched statement has run; it is exact
// between Steps (and after one that was interrupted).
func (b *stepBudget) steps() int64 {
	if b.stmt == nil {
		return 0
	}
	return int64(b.stmt.Status(sqlite3.STMTSTATUS_VM_STEP, false)) + b.work
}

// stopped explains an error that ended a query while ctx (the query's
// context, Backstop included) and budget b were in force, or returns nil
// if neither stopped it. Over budget, the error is a *QueryError for the
// model; the caller's context ending or the backstop is an error of the
// server's, not a *QueryError.
func (b *stepBudget) stopped(ctx context.Context, wall time.Duration) error {
	switch {
	case b.over && b.work > 0:
		return queryErr("query stopped after %d steps of the database engine, over the limit of %d steps per query, %d of them the work of LIKE, GLOB, instr, replace, trim or NOCASE comparisons on long values: match shorter strings or patterns, filter rows before matching, or add a LIMIT", b.steps(), b.limit, b.work)
	case b.over:
		return queryErr("query stopped after %d steps of the database engine, over the limit of %d steps per query: is a recursive query missing its end condition, or a join missing its ON or WHERE condition? Filter or aggregate earlier, or add a LIMIT", b.steps(), b.limit)
	case ctx.Err() == nil:
		return nil
	case errors.Is(ctx.Err(), context.DeadlineExceeded) && wall > 0 && context.Cause(ctx) == errBackstop:
		return fmt.Errorf("sqlbox: query still running after the %s wall-clock backstop, at %d of its %d steps: the engine is too slow or stuck, not the query at fault", wall, b.steps(), b.limit)
	}
	return fmt.Errorf("sqlbox: query cancelled after %d steps: %w", b.steps(), context.Cause(ctx))
}

// errBackstop is the cause of a query's context ending at Backstop.
var errBackstop = errors.New("sqlbox: wall-clock backstop")
