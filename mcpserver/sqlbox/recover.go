package sqlbox

import (
	"errors"
	"fmt"

	"github.com/ncruces/go-sqlite3"
	"github.com/ncruces/go-sqlite3/ext/serdes"
	"github.com/ncruces/go-sqlite3/vfs/memdb"
)

// A panic in the SQL layer (the wasm SQLite running out of its stack, the
// driver panicking on an allocation failure, or a bug) leaves the
// connection it happened on in an unknown state: its C stack pointer and
// SQLite's own structures were abandoned half-way, and every later call on
// it, Close included, may panic again. Box therefore treats a panic as
// poisoning the whole box: it recovers, rebuilds both connections on a
// fresh database copy, and returns an error. The process never sees the
// panic.

// Fault says how a panic in the SQL layer was handled.
type Fault struct {
	Op       string // the Box method that panicked: "query", "exec", "query row", "tx"
	Value    any    // the recovered panic value
	Restored string // RestoredSession, RestoredTemplate, or "": the box could not be rebuilt and is closed
}

func (f *Fault) Error() string {
	return fmt.Sprintf("sqlbox: %s panicked (%v); %s", f.Op, f.Value, f.restoredText())
}

func (f *Fault) restoredText() string {
	switch f.Restored {
	case RestoredSession:
		return "the session database was reopened with its data intact"
	case RestoredTemplate:
		return "the session database was reset to its initial data (changes made in this session are lost)"
	}
	return "the session database could not be reopened"
}

// OutOfMemory reports whether the panic was the driver's answer to an
// allocation failure (SQLite hitting MaxHeap).
func (f *Fault) OutOfMemory() bool {
	err, ok := f.Value.(error)
	// The driver panics with an unexported error value with this text
	// whenever SQLite reports SQLITE_NOMEM.
	return ok && (errors.Is(err, sqlite3.NOMEM) || err.Error() == "sqlite3: out of memory")
}

// Values of Fault.Restored.
const (
	RestoredSession  = "session"  // the rebuilt box has the session's data as last committed
	RestoredTemplate = "template" // the rebuilt box has the template's data: the session's writes are lost
)

// faultHook, when set by a test, is called at the start of each guarded
// operation with its name, so a test can force a panic there.
var faultHook func(op string)

// guarded runs fn with b.mu held and turns a panic into a *Fault after
// rebuilding the box.
func (b *Box) guarded(op string, fn func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = b.poisoned(op, r)
		}
	}()
	if faultHook != nil {
		faultHook(op)
	}
	return fn()
}

// poisoned rebuilds the box after a panic; b.mu is held.
func (b *Box) poisoned(op string, value any) *Fault {
	f := &Fault{Op: op, Value: value}
	old := b.conns
	b.conns = conns{}
	image, from := b.snapshot(old.name)
	discard(old)
	c, err := openImage(image, b.tmpl.valueLen)
	if err != nil && from == RestoredSession {
		image, from = b.tmpl.image, RestoredTemplate
		c, err = openImage(image, b.tmpl.valueLen)
	}
	if err != nil {
		b.closed = true
		return f
	}
	b.conns = c
	f.Restored = from
	return f
}

// snapshot copies the current contents of the database called name
// through a fresh private connection, so it does not depend on which
// connection panicked. A dead connection that held PENDING or EXCLUSIVE
// may have been writing pages: then the copy fails with BUSY and the
// template is used instead. Under any lesser lock (the query connection
// never holds more than SHARED; the writer before it starts writing
// pages) the data is the last committed state, and is kept.
func (b *Box) snapshot(name string) (image []byte, from string) {
	defer func() {
		if recover() != nil {
			image, from = b.tmpl.image, RestoredTemplate
		}
	}()
	c, err := sqlite3.OpenFlags(uri(name), sqlite3.OPEN_READONLY|sqlite3.OPEN_URI)
	if err != nil {
		return b.tmpl.image, RestoredTemplate
	}
	defer c.Close()
	image, err = serdes.Serialize(c, "main")
	if err != nil || len(image) == 0 {
		return b.tmpl.image, RestoredTemplate
	}
	return image, RestoredSession
}

// discard closes what can be closed of a poisoned box's connections and
// deletes its database copy. A connection whose Close panics is dropped
// for the garbage collector, with whatever locks it held on the old copy,
// which nobody uses any more.
func discard(c conns) {
	for _, conn := range []*sqlite3.Conn{c.reader, c.writer} {
		closeQuietly(conn)
	}
	if c.name != "" {
		memdb.Delete(c.name)
	}
}

// closeQuietly closes conn, swallowing any error or panic.
func closeQuietly(conn *sqlite3.Conn) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("sqlbox: closing a connection panicked: %v", r)
		}
	}()
	if conn == nil {
		return nil
	}
	// Statements the box keeps prepared (see delegate) would make Close
	// fail with SQLITE_BUSY.
	var open []*sqlite3.Stmt
	for s := range conn.Stmts() {
		open = append(open, s)
	}
	for _, s := range open {
		s.Close()
	}
	return conn.Close()
}
