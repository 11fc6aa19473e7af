package calc

import (
	"strings"
	"testing"
)

func TestEvaluate(t *testing.T) {
	tests := []struct {
		expr, want string
	}{
		{"2 + 3 * 4", "14"},
		{"708000 * 0.12", "84960"},
		{"(2 + 3) * 4", "20"},
		{"2 ** 10", "1024"},
		{"2 ^ 10", "1024"},
		{"2 ** 3 ** 2", "512"}, // right-associative
		{"-2 ** 2", "-4"},      // ** binds tighter than unary minus
		{"(-2) ** 2", "4"},
		{"2 ** -1", "0.5"},
		{"--3", "3"},
		{"+-+3", "-3"},
		{"7 % 3", "1"},
		{"-7 % 3", "2"}, // floored, like Python
		{"7 % -3", "-2"},
		{"0.1 + 0.2", "0.3"},
		{"1 / 3", "0.333333333333"},
		{"10 / 4", "2.5"},
		{"1e3 + 1", "1001"},
		{"2.5E-3 * 2", "0.005"},
		{"1e20", "1e+20"},
		{"123456789012345", "123456789012345"},
		{"0.0000001", "1e-07"},
		{"-0", "0"},
		{"  42  ", "42"},
		{"((((1))))", "1"},
		{"100 - 10 - 1", "89"}, // left-associative
		{"100 / 10 / 2", "5"},
		// Zero results that are exact are not underflow.
		{"0e-400", "0"},
		{"0.000e-999 + 1", "1"},
		{"0 * 1e-300", "0"},
		{"1e-300 - 1e-300", "0"},
		{"0 / 5", "0"},
		{"0 ** 2", "0"},
		{"6 % 3", "0"},
		// Subnormal results are not 0, so not underflow.
		{"2 ** -1074", "5e-324"},
		{"1e-310", "1e-310"},
		{"1e-200 * 1e-110", "1e-310"},
	}
	for _, tt := range tests {
		v, err := Evaluate(tt.expr)
		if err != nil {
			t.Errorf("Evaluate(%q): %v", tt.expr, err)
			continue
		}
		if got := Format(v); got != tt.want {
			t.Errorf("Evaluate(%q) = %s (%v), want %s", tt.expr, got, v, tt.want)
		}
	}
}

func TestRefused(t *testing.T) {
	tests := []struct {
		expr, want string
	}{
		{"__import__('os').system('x')", "function calls are not allowed"},
		{"os.system", "attributes are not allowed"},
		{"x + 1", "names are not allowed"},
		{"abs(-1)", "function calls are not allowed"},
		{"'a' * 3", "strings are not allowed"},
		{"1,000 + 1", "thousands separators"},
		{"1 / 0", "division by zero"},
		{"1 % 0", "modulo by zero"},
		{"0 ** -1", "division by zero"},
		{"9**9**9**9", "overflows"},
		{"10 ** 400", "overflows"},
		{"1e308 * 10", "overflows"},
		{"1e999", "number 1e999 is out of range: it overflows"},
		// Underflow is refused like overflow: a nonzero value that rounds to 0.
		{"1e-400", "number 1e-400 is out of range: it underflows to 0"},
		{"0.00001e-320", "underflows"},
		{"2**-1075", `result of "**" underflows to 0`},
		{"0.5 ** 2000", `result of "**" underflows`},
		{"(-2) ** -1075", `result of "**" underflows`},
		{"1e-200 * 1e-200", `result of "*" underflows`},
		{"-1e-200 * 1e-200", `result of "*" underflows`},
		{"1e-300 / 1e300", `result of "/" underflows`},
		{"(-8) ** 0.5", "not a real number"},
		{"", "empty expression"},
		{"   ", "empty expression"},
		{"1 +", "ends where a number was expected"},
		{"(1 + 2", "missing ')'"},
		{"1 + 2)", "unbalanced ')'"},
		{"1 2", "missing operator"},
		{"1 // 2", "floor division"},
		{"1..2", "malformed number"},
		{"2 & 3", "not allowed"},
		{"3x", "names are not allowed"},
		{"1 ; 2", "not allowed"},
		{strings.Repeat("(", 100) + "1" + strings.Repeat(")", 100), "nested too deeply"},
		{strings.Repeat("-", 100) + "1", "nested too deeply"},
		{strings.Repeat("(", 10000) + "1" + strings.Repeat(")", 10000), "too long"},
		{strings.Repeat("1+", 1<<19) + "1", "too long"},
		{strings.Repeat("1+", 600) + "1", "too many tokens"},
	}
	for _, tt := range tests {
		v, err := Evaluate(tt.expr)
		name := tt.expr
		if len(name) > 40 {
			name = name[:40] + "…"
		}
		if err == nil {
			t.Errorf("Evaluate(%q) = %v, want error containing %q", name, v, tt.want)
			continue
		}
		if !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Evaluate(%q) error = %q, want it to contain %q", name, err, tt.want)
		}
	}
}

func TestDepthLimitBoundary(t *testing.T) {
	ok := strings.Repeat("(", MaxDepth) + "1" + strings.Repeat(")", MaxDepth)
	if _, err := Evaluate(ok); err != nil {
		t.Errorf("%d nested parentheses: %v", MaxDepth, err)
	}
	bad := "(" + ok + ")"
	if _, err := Evaluate(bad); err == nil {
		t.Errorf("%d nested parentheses accepted", MaxDepth+1)
	}
}

func FuzzCalculate(f *testing.F) {
	for _, s := range []string{"2 + 3 * 4", "708000 * 0.12", "9**9**9**9", "(((1)))", "-2**-2", "1e308*1e308", "__import__('os')", "1 % -0.5", "0**0"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, expr string) {
		v, err := Evaluate(expr)
		if err != nil {
			if _, ok := err.(*Error); !ok {
				t.Fatalf("error of type %T: %v", err, err)
			}
			return
		}
		if len(expr) > MaxLength {
			t.Fatalf("accepted %d-byte expression", len(expr))
		}
		s := Format(v)
		if s == "" || strings.Contains(s, "Inf") || strings.Contains(s, "NaN") {
			t.Fatalf("Format(%v) = %q", v, s)
		}
	})
}
