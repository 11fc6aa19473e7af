package session

import (
	"bytes"
	"fmt"
	"io"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/toolward/toolward/schema"
)

// InheritedEnv names the variables of toolward's own environment that a
// command server receives when server.inherit_env is false (the default),
// besides every variable starting with LC_. They are what a program needs
// to find executables, a home and a temporary directory, and a locale
// (npx needs PATH and HOME); anything else, tokens and keys included, must
// be named in server.env. On Windows names compare case-insensitively.
var InheritedEnv = []string{
	"PATH", "HOME", "USER", "LOGNAME", "SHELL", "TMPDIR", "TMP", "TEMP", "LANG", "TZ",
	// Windows: what processes need to start and to find a profile.
	"SYSTEMROOT", "SYSTEMDRIVE", "WINDIR", "COMSPEC", "PATHEXT", "USERPROFILE",
	"APPDATA", "LOCALAPPDATA", "PROGRAMDATA", "PROGRAMFILES",
}

// CommandEnv returns the environment of a command server: parent (as
// os.Environ gives it) filtered to InheritedEnv unless srv.InheritEnv,
// then srv.Env, which overrides, in key order.
func CommandEnv(srv schema.Server, parent []string) []string {
	env := make([]string, 0, len(parent)+len(srv.Env))
	for _, kv := range parent {
		name, _, _ := strings.Cut(kv, "=")
		if srv.InheritEnv || inherited(name) {
			env = append(env, kv)
		}
	}
	keys := make([]string, 0, len(srv.Env))
	for k := range srv.Env {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		// exec.Cmd keeps the last value of a duplicated name.
		env = append(env, k+"="+srv.Env[k])
	}
	return env
}

func inherited(name string) bool {
	if name == "" {
		return false
	}
	if runtime.GOOS == "windows" {
		name = strings.ToUpper(name)
	}
	return strings.HasPrefix(name, "LC_") || slices.Contains(InheritedEnv, name)
}

// waitDelay bounds how long closing a command server waits for its stderr
// to reach EOF after the process exited (a grandchild may hold it open).
const waitDelay = 2 * time.Second

// Limits of the stderr quoted in a start-up error.
const (
	headBytes    = 16 << 10 // stderr kept per connection for the message
	headLines    = 10       // lines quoted
	headLineSize = 300      // bytes quoted per line
)

// stderrHead forwards a command server's stderr to w and keeps its
// beginning: when a server dies at start-up, the cause is in the first
// lines (the last is often a runtime's version banner).
type stderrHead struct {
	w io.Writer

	mu    sync.Mutex
	head  []byte
	lines int // newlines seen in the whole stream
	tail  bool
}

func newStderrHead(w io.Writer) *stderrHead {
	if w == nil {
		w = io.Discard
	}
	return &stderrHead{w: w}
}

// Write keeps the first headBytes and forwards p.
func (h *stderrHead) Write(p []byte) (int, error) {
	h.mu.Lock()
	if room := headBytes - len(h.head); room > 0 {
		h.head = append(h.head, p[:min(room, len(p))]...)
	}
	h.lines += bytes.Count(p, []byte{'\n'})
	h.tail = len(p) > 0 && p[len(p)-1] != '\n'
	h.mu.Unlock()
	return h.w.Write(p)
}

// Lines returns the first non-blank lines of the stream (at most
// headLines, each cut at headLineSize bytes) and how many lines follow
// them.
func (h *stderrHead) Lines() (first []string, more int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	total := h.lines
	if h.tail {
		total++
	}
	raw := strings.Split(string(h.head), "\n")
	if len(h.head) > 0 && h.head[len(h.head)-1] == '\n' {
		raw = raw[:len(raw)-1]
	}
	seen := 0
	for _, l := range raw {
		if len(first) == headLines {
			break
		}
		seen++
		l = strings.TrimRight(l, " \t\r")
		if strings.TrimSpace(l) == "" {
			continue
		}
		l = cut(printable(l), headLineSize)
		first = append(first, l)
	}
	return first, max(total-seen, 0)
}

// csi matches a terminal control sequence (colours, cursor movement).
var csi = regexp.MustCompile(`\x1b\[[0-9;?]*[ -/]*[@-~]`)

// printable drops terminal control sequences from a line of a server's
// stderr and replaces other control characters (a tab excepted) with
// U+FFFD, so that quoting it cannot drive the user's terminal.
func printable(s string) string {
	s = csi.ReplaceAllString(s, "")
	return strings.Map(func(r rune) rune {
		if r != '\t' && (r < 0x20 || r == 0x7f) {
			return '\uFFFD'
		}
		return r
	}, s)
}

// cut shortens s to at most n bytes, at a rune boundary, marking the cut.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// quote formats the head for an error message, or "" when stderr was
// empty.
func (h *stderrHead) quote() string {
	if h == nil {
		return ""
	}
	first, more := h.Lines()
	if len(first) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("\nthe server's stderr begins:")
	for _, l := range first {
		b.WriteString("\n  " + l)
	}
	if more > 0 {
		fmt.Fprintf(&b, "\n  … (%d more lines)", more)
	}
	return b.String()
}
