package textcall

import (
	"regexp/syntax"
	"unicode"
)

// byteSet is a set of bytes.
type byteSet [256]bool

// index returns the index of the first byte of s in the set, -1 when none.
func (b *byteSet) index(s string) int {
	for i := 0; i < len(s); i++ {
		if b[s[i]] {
			return i
		}
	}
	return -1
}

// firstBytes returns the bytes a match of expr can start with, so that a
// search may skip the text up to the next of them; nil when it cannot
// tell (an assertion on what precedes the match, such as ^ or \b, or a
// pattern that can start anywhere), and the search then looks at every
// position. A rune past ASCII stands for every byte from 0x80, since the
// regexp package reads invalid UTF-8 as U+FFFD.
func firstBytes(expr string) *byteSet {
	re, err := syntax.Parse(expr, syntax.Perl)
	if err != nil {
		return nil
	}
	var set byteSet
	empty, ok := addFirst(re.Simplify(), &set)
	if !ok || empty {
		return nil
	}
	return &set
}

// addFirst adds the bytes re's matches can start with to set. empty says
// re can match the empty text (what follows it may then start the match);
// ok is false when the set cannot be known.
func addFirst(re *syntax.Regexp, set *byteSet) (empty, ok bool) {
	switch re.Op {
	case syntax.OpNoMatch:
		return false, true
	case syntax.OpEmptyMatch, syntax.OpEndLine, syntax.OpEndText:
		return true, true
	case syntax.OpLiteral:
		if len(re.Rune) == 0 {
			return true, true
		}
		return false, addRune(re.Rune[0], re.Flags&syntax.FoldCase != 0, set)
	case syntax.OpCharClass:
		for i := 0; i+1 < len(re.Rune); i += 2 {
			lo, hi := re.Rune[i], re.Rune[i+1]
			if hi >= 0x80 {
				addHigh(set)
				hi = 0x7f
			}
			for r := lo; r <= hi; r++ {
				set[r] = true
			}
		}
		return false, true
	case syntax.OpCapture:
		return addFirst(re.Sub[0], set)
	case syntax.OpStar, syntax.OpQuest:
		_, ok := addFirst(re.Sub[0], set)
		return true, ok
	case syntax.OpPlus:
		return addFirst(re.Sub[0], set)
	case syntax.OpRepeat:
		empty, ok := addFirst(re.Sub[0], set)
		return empty || re.Min == 0, ok
	case syntax.OpConcat:
		for _, sub := range re.Sub {
			empty, ok := addFirst(sub, set)
			if !ok || !empty {
				return false, ok
			}
		}
		return true, true
	case syntax.OpAlternate:
		canEmpty := false
		for _, sub := range re.Sub {
			empty, ok := addFirst(sub, set)
			if !ok {
				return false, false
			}
			canEmpty = canEmpty || empty
		}
		return canEmpty, true
	}
	// Any character, and assertions on what precedes the match.
	return false, false
}

func addRune(r rune, fold bool, set *byteSet) bool {
	if r >= 0x80 {
		addHigh(set)
		return true
	}
	set[r] = true
	if fold {
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			if f >= 0x80 { // e.g. k and the Kelvin sign
				addHigh(set)
			} else {
				set[f] = true
			}
		}
	}
	return true
}

func addHigh(set *byteSet) {
	for b := 0x80; b < 0x100; b++ {
		set[b] = true
	}
}
