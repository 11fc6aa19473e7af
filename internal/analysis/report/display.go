package report

import (
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// Display safety. Model, tool and case text may hold control characters
// (ESC, BEL, a carriage return) that drive a terminal reading report.md,
// and bidirectional controls (U+202E and kin) that visually reorder the
// text around them, so a report could show a verdict or an argument other
// than the one it holds ("Trojan Source"). html/template and encoding/xml
// escape markup, not these. Every report renderer therefore writes through
// a displayWriter, which shows each such code point as a visible escape
// (`\x1b`, `\u202e`) and invalid UTF-8 as U+FFFD: one place, so no string
// can reach report.md, report.html or junit.xml around it. toolward's own
// text holds none of these code points, so it passes unchanged.

// hiddenControl reports whether r must not be written raw into a report:
// C0 controls other than newline and tab, DEL, C1 controls, and the
// bidirectional controls (embeddings and overrides U+202A–U+202E,
// isolates U+2066–U+2069, the marks U+200E, U+200F and U+061C).
func hiddenControl(r rune) bool {
	switch {
	case r == '\n' || r == '\t':
		return false
	case r < 0x20, r >= 0x7f && r <= 0x9f:
		return true
	case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
		return true
	}
	return r == 0x200e || r == 0x200f || r == 0x061c
}

// visibleEscape spells a hidden control as text: `\x1b` for ASCII
// controls, `\u202e` for the others.
func visibleEscape(r rune) string {
	if r < 0x80 {
		return fmt.Sprintf(`\x%02x`, r)
	}
	return fmt.Sprintf(`\u%04x`, r)
}

// displaySafe returns s with every hidden control shown as its visible
// escape and invalid UTF-8 replaced by U+FFFD.
func displaySafe(s string) string {
	if isDisplaySafe(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	for len(s) > 0 {
		r, n := utf8.DecodeRuneInString(s)
		switch {
		case r == utf8.RuneError && n == 1:
			b.WriteRune(utf8.RuneError)
		case hiddenControl(r):
			b.WriteString(visibleEscape(r))
		default:
			b.WriteString(s[:n])
		}
		s = s[n:]
	}
	return b.String()
}

// DisplaySafe is displaySafe for other printers of what a server or a
// model sent (toolward tools, init): hidden controls as visible escapes.
func DisplaySafe(s string) string { return displaySafe(s) }

// DisplayLine is DisplaySafe for text that must stay on one line (a tool
// name): newlines and tabs are shown as \n and \t too.
func DisplayLine(s string) string {
	return displaySafe(strings.NewReplacer("\n", `\n`, "\t", `\t`).Replace(s))
}

// isDisplaySafe reports whether displaySafe would leave s unchanged.
func isDisplaySafe(s string) bool {
	for i, r := range s {
		if hiddenControl(r) || (r == utf8.RuneError && !strings.HasPrefix(s[i:], "\uFFFD")) {
			return false
		}
	}
	return true
}

// displayWriter applies displaySafe to everything written through it. A
// multi-byte character split across two writes (bufio and the encoders
// cut anywhere) is held back until it is complete; Close writes what is
// left, an incomplete character as U+FFFD. It does not close w.
type displayWriter struct {
	w       io.Writer
	pending []byte // the start of a character cut off at the end of a write
}

func newDisplayWriter(w io.Writer) *displayWriter { return &displayWriter{w: w} }

// Write writes p made display-safe; it reports len(p) unless w fails.
func (d *displayWriter) Write(p []byte) (int, error) {
	data := p
	if len(d.pending) > 0 {
		data = append(d.pending, p...)
	}
	cut := incompleteTail(data)
	d.pending = append([]byte(nil), data[cut:]...)
	if err := d.writeSafe(data[:cut]); err != nil {
		return 0, err
	}
	return len(p), nil
}

// writeSafe writes b display-safe, as is when it already is (the common
// case, without copying).
func (d *displayWriter) writeSafe(b []byte) error {
	if isDisplaySafeBytes(b) {
		_, err := d.w.Write(b)
		return err
	}
	_, err := io.WriteString(d.w, displaySafe(string(b)))
	return err
}

// isDisplaySafeBytes is isDisplaySafe for a byte slice.
func isDisplaySafeBytes(b []byte) bool {
	for _, r := range string(b) { // no copy: the compiler ranges over b
		if hiddenControl(r) || r == utf8.RuneError {
			return false // a literal U+FFFD takes the slow path, unchanged
		}
	}
	return true
}

// Close writes a character still held back, as U+FFFD since no more
// bytes can complete it.
func (d *displayWriter) Close() error {
	if len(d.pending) == 0 {
		return nil
	}
	rest := d.pending
	d.pending = nil
	return d.writeSafe(rest)
}

// incompleteTail returns where a trailing, not yet complete UTF-8
// character starts in b, or len(b) when b ends on a whole one.
func incompleteTail(b []byte) int {
	for i := len(b) - 1; i >= 0 && i >= len(b)-(utf8.UTFMax-1); i-- {
		if utf8.RuneStart(b[i]) {
			if !utf8.FullRune(b[i:]) {
				return i
			}
			break
		}
	}
	return len(b)
}

// writeDisplaySafe runs render on a displayWriter over w and flushes it.
func writeDisplaySafe(w io.Writer, render func(io.Writer) error) error {
	d := newDisplayWriter(w)
	if err := render(d); err != nil {
		return err
	}
	return d.Close()
}
