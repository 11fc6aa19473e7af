package session

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"hash"
	"strconv"
)

// clipper shortens the long JSON strings of a server's message while the
// wire reads it, so that toolward holds a tool's 15 MiB answer as its
// first bytes and never whole: mcp-go, the run's trace, the scorer and
// the model all get the clipped message. A string of more than limit
// bytes (as sent, escapes counted as written) keeps its first bytes, cut
// on a character and never inside an escape, and a marker giving its
// length and the beginning of the SHA-256 of the rest, so that two
// answers that differ only past the cut still compare unequal; with the
// marker it is at most limit bytes. Bytes outside strings pass as they
// are. It works on the bytes as they come, in any pieces, appending to
// one buffer per message (or line); reset starts a new one.
type clipper struct {
	limit int
	h     hash.Hash

	inStr bool
	esc   bool // after a backslash
	hex   int  // hex digits of a \u escape still to come
	n     int  // bytes of the current string so far
	cutAt int  // where in the buffer its kept part ends, once known; else -1
	skip  bool // past the limit: the string's bytes are hashed, not kept
	bad   bool // the string holds a raw control character: kept whole
	read  int  // bytes given to add since reset
}

// markerRoom is more than a marker takes: a clipped string keeps at
// most limit - markerRoom bytes.
const markerRoom = 100

// newClipper clips strings longer than limit bytes (at least
// markerRoom).
func newClipper(limit int) *clipper { return &clipper{limit: max(limit, markerRoom)} }

// reset forgets any string in progress (a new message or line: JSON
// strings hold no raw newline).
func (c *clipper) reset() { c.inStr, c.read = false, 0 }

// add appends p to dst, clipped, and returns dst. dst must be what the
// last add returned, until reset.
func (c *clipper) add(dst, p []byte) []byte {
	c.read += len(p)
	start := 0 // the span of p from start on is not yet appended (or hashed, when skipping)
	for i := 0; i < len(p); i++ {
		if !c.inStr {
			j := bytes.IndexByte(p[i:], '"')
			if j < 0 {
				break
			}
			i += j
			c.inStr, c.esc, c.hex, c.n, c.cutAt, c.skip, c.bad = true, false, 0, 0, -1, false, false
			continue
		}
		if c.skip && !c.esc && c.hex == 0 {
			// The rest of a long string, up to its next quote or
			// backslash, is passed over unread (unchecked too).
			j := plainRun(p[i:])
			c.n += j
			if i += j; i == len(p) {
				break
			}
		}
		b := p[i]
		// A cut may fall before b when b starts a character and no
		// escape is open.
		boundary := !c.esc && c.hex == 0 && (b < 0x80 || b >= 0xC0)
		if b < 0x20 && !c.skip {
			// Not JSON (a raw control character in a string): the rest
			// is kept, so that the check of the message refuses it.
			c.bad = true
		}
		switch {
		case c.hex > 0:
			c.hex--
		case c.esc:
			c.esc = false
			if b == 'u' {
				c.hex = 4
			}
		case b == '\\':
			c.esc = true
		case b == '"':
			if c.skip {
				c.h.Write(p[start:i])
				dst = append(dst, c.marker()...)
				start, c.skip = i, false // the closing quote is kept
			}
			c.inStr = false
			continue
		}
		if !c.skip && !c.bad {
			if c.n <= c.limit-markerRoom && boundary {
				c.cutAt = len(dst) + i - start
			}
			if c.n == c.limit { // b is one byte more than the limit
				dst = append(dst, p[start:i]...)
				if c.h == nil {
					c.h = sha256.New()
				}
				c.h.Reset()
				if c.cutAt < 0 { // no character began where a cut fits: not UTF-8
					c.cutAt = len(dst) - markerRoom
				}
				c.h.Write(dst[c.cutAt:])
				dst, start, c.skip = dst[:c.cutAt], i, true
			}
		}
		c.n++
	}
	if c.skip {
		c.h.Write(p[start:])
		return dst
	}
	return append(dst, p[start:]...)
}

// plainRun is the length of the run of s before its first quote or
// backslash.
func plainRun(s []byte) int {
	if q := bytes.IndexByte(s, '"'); q >= 0 {
		s = s[:q]
	}
	if b := bytes.IndexByte(s, '\\'); b >= 0 {
		return b
	}
	return len(s)
}

// marker ends a clipped string: its length as sent (escapes counted as
// written) and the first 12 hex digits of the SHA-256 of what was cut.
func (c *clipper) marker() string {
	sum := c.h.Sum(nil)
	return "…[truncated by toolward: " + strconv.Itoa(c.n) + " bytes in all; sha256 of the rest " + hex.EncodeToString(sum[:6]) + "]"
}
