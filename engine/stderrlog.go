package engine

import (
	"fmt"
	"io"
	"sync"
)

// MaxStderrBytes bounds server-stderr.log, the stderr of a command MCP
// server, over a whole job (resumes included): a chatty server cannot
// fill the disk. Output past it is read and dropped, so the server
// never blocks on a full pipe.
const MaxStderrBytes = 16 << 20

// cappedLog writes at most limit bytes in all to w, then one line saying
// the log was cut, and drops the rest while still reporting every write
// as done. It is safe for concurrent use: every run's server process
// shares it.
type cappedLog struct {
	mu      sync.Mutex
	w       io.Writer
	written int64 // bytes in the log, those before this job included
	limit   int64
	cut     bool
}

func (c *cappedLog) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cut {
		return len(p), nil
	}
	room := c.limit - c.written
	if int64(len(p)) <= room {
		n, err := c.w.Write(p)
		c.written += int64(n)
		return n, err
	}
	c.cut = true
	if room > 0 {
		n, _ := c.w.Write(p[:room])
		c.written += int64(n)
	}
	fmt.Fprintf(c.w, "\n… server stderr cut at %d bytes; later output dropped\n", c.limit)
	return len(p), nil
}
