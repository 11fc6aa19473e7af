package calc

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Limits that bound the work one expression can cause.
const (
	// MaxLength is the longest expression accepted, in bytes.
	MaxLength = 2000
	// MaxDepth is the deepest nesting of parentheses and unary signs.
	MaxDepth = 64
	// MaxTokens is the largest number of tokens accepted.
	MaxTokens = 1000
)

// Error is an expression the calculator refuses, with the byte offset
// where the problem was found (-1 when it concerns the whole input).
type Error struct {
	Offset int
	Msg    string
}

func (e *Error) Error() string {
	if e.Offset < 0 {
		return e.Msg
	}
	return fmt.Sprintf("%s (at offset %d)", e.Msg, e.Offset)
}

func errAt(off int, format string, args ...any) *Error {
	return &Error{Offset: off, Msg: fmt.Sprintf(format, args...)}
}

// allowed is repeated in errors so the model learns the grammar.
const allowed = "only numbers, + - * / % ** (or ^) and parentheses are allowed"

type tokenKind int

const (
	tokNum tokenKind = iota
	tokOp
	tokLParen
	tokRParen
	tokEOF
)

type token struct {
	kind tokenKind
	op   string  // for tokOp: + - * / % **
	num  float64 // for tokNum
	off  int
	text string
}

// Lex splits expr into tokens.
func lex(expr string) ([]token, error) {
	if len(expr) > MaxLength {
		return nil, &Error{Offset: -1, Msg: fmt.Sprintf("expression too long: %d bytes (limit %d)", len(expr), MaxLength)}
	}
	if !utf8.ValidString(expr) {
		return nil, &Error{Offset: -1, Msg: "expression is not valid UTF-8"}
	}
	var toks []token
	i := 0
	for i < len(expr) {
		if len(toks) >= MaxTokens {
			return nil, errAt(i, "expression has too many tokens (limit %d)", MaxTokens)
		}
		c := expr[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case c >= '0' && c <= '9' || c == '.':
			j := i
			for j < len(expr) && (expr[j] >= '0' && expr[j] <= '9' || expr[j] == '.') {
				j++
			}
			// Optional exponent: 1e6, 2.5E-3.
			if j < len(expr) && (expr[j] == 'e' || expr[j] == 'E') {
				k := j + 1
				if k < len(expr) && (expr[k] == '+' || expr[k] == '-') {
					k++
				}
				if k < len(expr) && expr[k] >= '0' && expr[k] <= '9' {
					for k < len(expr) && expr[k] >= '0' && expr[k] <= '9' {
						k++
					}
					j = k
				}
			}
			text := expr[i:j]
			if j < len(expr) && expr[j] == ',' && j+1 < len(expr) && expr[j+1] >= '0' && expr[j+1] <= '9' {
				return nil, errAt(j, "thousands separators are not allowed: write %s without commas", strings.ReplaceAll(numberRun(expr[i:]), ",", ""))
			}
			if j < len(expr) && (isNameStart(expr[j:])) {
				return nil, errAt(j, "names are not allowed after a number (%q); %s", expr[i:min(len(expr), j+8)], allowed)
			}
			v, err := parseNumber(text)
			if err != nil {
				return nil, errAt(i, "%v", err)
			}
			toks = append(toks, token{kind: tokNum, num: v, off: i, text: text})
			i = j
		case c == '*' && i+1 < len(expr) && expr[i+1] == '*':
			toks = append(toks, token{kind: tokOp, op: "**", off: i, text: "**"})
			i += 2
		case c == '^':
			toks = append(toks, token{kind: tokOp, op: "**", off: i, text: "^"})
			i++
		case c == '+' || c == '-' || c == '*' || c == '/' || c == '%':
			if c == '/' && i+1 < len(expr) && expr[i+1] == '/' {
				return nil, errAt(i, "floor division // is not supported; %s", allowed)
			}
			toks = append(toks, token{kind: tokOp, op: string(c), off: i, text: string(c)})
			i++
		case c == '(':
			toks = append(toks, token{kind: tokLParen, off: i, text: "("})
			i++
		case c == ')':
			toks = append(toks, token{kind: tokRParen, off: i, text: ")"})
			i++
		case isNameStart(expr[i:]):
			j := i
			for j < len(expr) {
				r, n := utf8.DecodeRuneInString(expr[j:])
				if !(unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_') {
					break
				}
				j += n
			}
			name := expr[i:j]
			what := "names"
			rest := strings.TrimLeft(expr[j:], " \t")
			switch {
			case strings.HasPrefix(rest, "("):
				what = "function calls"
			case strings.HasPrefix(rest, "."):
				what = "attributes"
			}
			return nil, errAt(i, "%s are not allowed (found %q); %s", what, name, allowed)
		case c == '\'' || c == '"' || c == '`':
			return nil, errAt(i, "strings are not allowed; %s", allowed)
		case c == ',':
			return nil, errAt(i, "commas are not allowed (no function calls or thousands separators); %s", allowed)
		default:
			r, _ := utf8.DecodeRuneInString(expr[i:])
			return nil, errAt(i, "character %q is not allowed; %s", r, allowed)
		}
	}
	toks = append(toks, token{kind: tokEOF, off: len(expr)})
	return toks, nil
}

// parseNumber parses a number literal, refusing one whose magnitude is
// out of float64's range: above it (overflow) or, for a literal with a
// nonzero digit, so small that it rounds to 0 (underflow).
func parseNumber(text string) (float64, error) {
	v, err := strconv.ParseFloat(text, 64)
	if err != nil {
		if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange {
			return 0, fmt.Errorf("number %s is out of range: it overflows (magnitude above %.3g)", text, math.MaxFloat64)
		}
		return 0, fmt.Errorf("malformed number %q", text)
	}
	if v == 0 && nonzeroMantissa(text) {
		return 0, fmt.Errorf("number %s is out of range: it underflows to 0 (nonzero magnitude below %.3g)", text, math.SmallestNonzeroFloat64)
	}
	return v, nil
}

// nonzeroMantissa reports whether a number literal has a nonzero digit
// before its exponent.
func nonzeroMantissa(text string) bool {
	mant, _, _ := strings.Cut(strings.ToLower(text), "e")
	return strings.ContainsAny(mant, "123456789")
}

func numberRun(s string) string {
	j := 0
	for j < len(s) && (s[j] >= '0' && s[j] <= '9' || s[j] == '.' || s[j] == ',') {
		j++
	}
	return s[:j]
}

func isNameStart(s string) bool {
	r, _ := utf8.DecodeRuneInString(s)
	return unicode.IsLetter(r) || r == '_'
}

// Node is an expression tree node.
type Node interface{ node() }

// Num is a number literal.
type Num struct{ Value float64 }

// Unary is a sign applied to an operand: Op is "+" or "-".
type Unary struct {
	Op string
	X  Node
}

// Binary is an infix operation: Op is one of + - * / % **.
type Binary struct {
	Op   string
	X, Y Node
	Off  int // byte offset of the operator, for error messages
}

func (Num) node()    {}
func (Unary) node()  {}
func (Binary) node() {}

type parser struct {
	toks  []token
	pos   int
	depth int
}

func (p *parser) peek() token { return p.toks[p.pos] }
func (p *parser) next() token { t := p.toks[p.pos]; p.pos++; return t }

func (p *parser) enter(off int) error {
	p.depth++
	if p.depth > MaxDepth {
		return errAt(off, "expression nested too deeply (limit %d levels)", MaxDepth)
	}
	return nil
}

// Parse parses expr into a tree, without evaluating it.
func Parse(expr string) (Node, error) {
	toks, err := lex(expr)
	if err != nil {
		return nil, err
	}
	if len(toks) == 1 {
		return nil, &Error{Offset: -1, Msg: "empty expression"}
	}
	p := &parser{toks: toks}
	n, err := p.sum()
	if err != nil {
		return nil, err
	}
	if t := p.peek(); t.kind != tokEOF {
		if t.kind == tokRParen {
			return nil, errAt(t.off, "unbalanced ')'")
		}
		return nil, errAt(t.off, "unexpected %q: missing operator?", t.text)
	}
	return n, nil
}

// sum := product (('+'|'-') product)*
func (p *parser) sum() (Node, error) { return p.leftAssoc(p.product, "+", "-") }

// product := unary (('*'|'/'|'%') unary)*
func (p *parser) product() (Node, error) { return p.leftAssoc(p.unary, "*", "/", "%") }

// leftAssoc parses operand (op operand)* for left-associative operators
// ops of one precedence level.
func (p *parser) leftAssoc(operand func() (Node, error), ops ...string) (Node, error) {
	x, err := operand()
	if err != nil {
		return nil, err
	}
	for t := p.peek(); t.kind == tokOp && slices.Contains(ops, t.op); t = p.peek() {
		p.next()
		y, err := operand()
		if err != nil {
			return nil, err
		}
		x = Binary{Op: t.op, X: x, Y: y, Off: t.off}
	}
	return x, nil
}

// unary := ('+'|'-') unary | power
//
// As in Python, ** binds tighter than a leading sign: -2**2 is -4.
func (p *parser) unary() (Node, error) {
	t := p.peek()
	if t.kind == tokOp && (t.op == "+" || t.op == "-") {
		if err := p.enter(t.off); err != nil {
			return nil, err
		}
		defer func() { p.depth-- }()
		p.next()
		x, err := p.unary()
		if err != nil {
			return nil, err
		}
		return Unary{Op: t.op, X: x}, nil
	}
	return p.power()
}

// power := primary ('**' unary)?   (right-associative)
func (p *parser) power() (Node, error) {
	x, err := p.primary()
	if err != nil {
		return nil, err
	}
	if t := p.peek(); t.kind == tokOp && t.op == "**" {
		if err := p.enter(t.off); err != nil {
			return nil, err
		}
		defer func() { p.depth-- }()
		p.next()
		y, err := p.unary()
		if err != nil {
			return nil, err
		}
		return Binary{Op: "**", X: x, Y: y, Off: t.off}, nil
	}
	return x, nil
}

// primary := NUMBER | '(' sum ')'
func (p *parser) primary() (Node, error) {
	t := p.next()
	switch t.kind {
	case tokNum:
		return Num{Value: t.num}, nil
	case tokLParen:
		if err := p.enter(t.off); err != nil {
			return nil, err
		}
		defer func() { p.depth-- }()
		x, err := p.sum()
		if err != nil {
			return nil, err
		}
		if c := p.next(); c.kind != tokRParen {
			if c.kind == tokEOF {
				return nil, errAt(t.off, "unbalanced '(': missing ')'")
			}
			return nil, errAt(c.off, "expected ')' but found %q", c.text)
		}
		return x, nil
	case tokEOF:
		return nil, errAt(t.off, "expression ends where a number was expected")
	case tokRParen:
		return nil, errAt(t.off, "unexpected ')' where a number was expected")
	default:
		return nil, errAt(t.off, "unexpected %q where a number was expected", t.text)
	}
}

// Eval evaluates a tree. It refuses division (and %) by zero, any result
// that is not a finite number (overflow, NaN) and any result that rounds
// to 0 although its exact value is not 0 (underflow: 2**-1075, 1e-200 *
// 1e-200). Results that round to a subnormal number are kept: they are
// not 0.
func Eval(n Node) (float64, error) {
	switch n := n.(type) {
	case Num:
		return n.Value, nil
	case Unary:
		x, err := Eval(n.X)
		if err != nil {
			return 0, err
		}
		if n.Op == "-" {
			return -x, nil
		}
		return x, nil
	case Binary:
		x, err := Eval(n.X)
		if err != nil {
			return 0, err
		}
		y, err := Eval(n.Y)
		if err != nil {
			return 0, err
		}
		var v float64
		switch n.Op {
		case "+":
			v = x + y
		case "-":
			v = x - y
		case "*":
			v = x * y
		case "/":
			if y == 0 {
				return 0, errAt(n.Off, "division by zero")
			}
			v = x / y
		case "%":
			if y == 0 {
				return 0, errAt(n.Off, "modulo by zero")
			}
			// Floored modulo, as in Python: the result has the divisor's sign.
			v = math.Mod(x, y)
			if v != 0 && (v < 0) != (y < 0) {
				v += y
			}
		case "**":
			if x == 0 && y < 0 {
				return 0, errAt(n.Off, "division by zero (0 raised to a negative power)")
			}
			if x < 0 && y != math.Trunc(y) {
				return 0, errAt(n.Off, "a negative number raised to a fractional power is not a real number")
			}
			v = math.Pow(x, y)
		default:
			return 0, errAt(n.Off, "unknown operator %q", n.Op)
		}
		if math.IsInf(v, 0) || math.IsNaN(v) {
			return 0, errAt(n.Off, "result of %q overflows (magnitude above %.3g)", n.Op, math.MaxFloat64)
		}
		if v == 0 && underflows(n.Op, x, y) {
			return 0, errAt(n.Off, "result of %q underflows to 0 (nonzero magnitude below %.3g)", n.Op, math.SmallestNonzeroFloat64)
		}
		return v, nil
	}
	return 0, &Error{Offset: -1, Msg: fmt.Sprintf("unknown node %T", n)}
}

// underflows reports whether x op y, computed as 0, has a nonzero exact
// value. Only *, / and ** can lose a nonzero result that way: with
// gradual underflow, + and - of floats give 0 only when the exact result
// is 0, and % gives 0 only for an exact multiple.
func underflows(op string, x, y float64) bool {
	switch op {
	case "*":
		return x != 0 && y != 0
	case "/", "**":
		return x != 0 // y != 0 for /: division by zero is refused before
	}
	return false
}

// Evaluate parses and evaluates expr.
func Evaluate(expr string) (float64, error) {
	n, err := Parse(expr)
	if err != nil {
		return 0, err
	}
	return Eval(n)
}

// Format renders v for a reader after Round: integers below 1e15 and
// other values from 1e-6 up to 1e15 in plain decimal notation (84960,
// 0.3), anything else in the shortest exponent form (1.5e+20).
func Format(v float64) string {
	r := Round(v)
	if r == 0 {
		return "0" // also folds -0
	}
	// Nonzero integers below 1e15 fall in this range too.
	if a := math.Abs(r); a >= 1e-6 && a < 1e15 {
		return strconv.FormatFloat(r, 'f', -1, 64)
	}
	return strconv.FormatFloat(r, 'g', -1, 64)
}

// Round returns v rounded to the 12 significant digits Format shows,
// which removes binary floating-point noise; integers below 2^53 are
// exact and returned unchanged.
func Round(v float64) float64 {
	if v == math.Trunc(v) && math.Abs(v) < 1<<53 {
		return v + 0 // exact integers are kept; +0 folds -0
	}
	r, _ := strconv.ParseFloat(strconv.FormatFloat(v, 'g', 12, 64), 64)
	if r == 0 {
		return 0
	}
	return r
}
