package backend

import "errors"

// ReplyBudget is what a backend may still keep of one reply: Limit bytes
// (its Config.MaxReplyBytes) of content, thinking, tool names and
// arguments in all. Each part asks Room before it is kept; a reply a part
// of which did not fit whole is Cut, and recorded with DoneReplyLimit.
type ReplyBudget struct {
	Limit int  // bytes one reply may keep
	Size  int  // bytes kept so far
	Cut   bool // some part did not fit whole
}

// ErrCut stops reading a reply that reached its limit.
var ErrCut = errors.New("reply size limit reached")

// Room returns how many of n more bytes fit, counting them kept and
// marking the reply cut when not all do.
func (b *ReplyBudget) Room(n int) int {
	left := b.Limit - b.Size
	if n > left {
		b.Cut = true
		n = max(left, 0)
	}
	b.Size += n
	return n
}

// Keep returns what fits of s (see Room).
func (b *ReplyBudget) Keep(s string) string { return s[:b.Room(len(s))] }
