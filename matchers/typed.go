package matchers

import (
	"encoding/json"
	"math"
	"strconv"
	"strings"
)

// This file holds the matchers that compare with a looser or a stricter
// notion of equality than a literal: $norm (normalised strings) and $int
// (integers only).

// normDrop lists the characters Normalize removes.
const normDrop = " ,./-_*^"

// Normalize is the string normalisation of $norm, the one the Berkeley
// Function Calling Leaderboard's checker applies before comparing
// strings: the characters space , . / - _ * ^ are removed, the rest is
// lower-cased and every ' becomes ". So "April 1, 2024", "april 1 2024"
// and "April-1-2024" are all "april12024".
func Normalize(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		if strings.ContainsRune(normDrop, r) {
			continue
		}
		b.WriteRune(r)
	}
	return strings.ReplaceAll(strings.ToLower(b.String()), "'", `"`)
}

// normM matches a string equal to want after Normalize on both sides.
type normM struct {
	want, norm string
}

func (n normM) describe() string { return "string like " + strconv.Quote(n.want) + " (normalised)" }
func (n normM) match(_ *mctx, v any, present bool) *mismatch {
	if x, ok := v.(string); present && ok && Normalize(x) == n.norm {
		return nil
	}
	return miss(n.describe(), v, present)
}

// intM matches an integer equal to want: a number with no fractional
// part, and, when the number's JSON text is known (a json.Number, as
// decoded with UseNumber), one written without a decimal point or
// exponent, so that 10.0 is not the integer 10. A string "10" or a
// boolean never matches.
type intM struct{ want number }

func compileInt(p, ap path, arg any) (node, error) {
	n, ok := toNumber(arg)
	if !ok || !isIntValue(arg, n) {
		return nil, compileErr(p, ap, "$int takes an integer, got %s", show(arg))
	}
	return intM{want: n}, nil
}

// isIntValue reports whether v, whose numeric value is n, is an integer:
// written as one when its text is known, integral otherwise.
func isIntValue(v any, n number) bool {
	if s, ok := v.(json.Number); ok {
		return !strings.ContainsAny(string(s), ".eE")
	}
	if n.big != nil {
		return true
	}
	return !math.IsInf(n.f, 0) && n.f == math.Trunc(n.f)
}

func (i intM) describe() string { return "integer " + i.want.String() }
func (i intM) match(_ *mctx, v any, present bool) *mismatch {
	if present {
		if x, ok := toNumber(v); ok && isIntValue(v, x) && x.equal(i.want) {
			return nil
		}
	}
	m := miss(i.describe(), v, present)
	if s, ok := v.(json.Number); ok && present {
		m.msg = "want " + i.describe() + ", got " + string(s)
	}
	return m
}
