package main

import (
	"strings"
	"testing"
)

// TestExitCodes: usage errors exit 2 (as the README says), help and the
// version exit 0; each message says what was wrong.
func TestExitCodes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"run", "--filter", "cas=x", "../../configs/demo.cue"}, 2, `unknown key "cas" (did you mean "case"?`},
		{[]string{"plan", "--filter", "colour=red", "../../configs/demo.cue"}, 2, `unknown key "colour"`},
		{[]string{"plan", "--filter", "nokey", "../../configs/demo.cue"}, 2, "want key=glob"},
		{[]string{"valdate"}, 2, `(did you mean "validate"?)`},
		{[]string{"help", "frobnicate"}, 2, `unknown command "frobnicate"`},
		{[]string{"serve", "--query-steps", "0"}, 2, "--query-steps: a query's step budget must be between 10000 and 100000000"},
		{[]string{"help", "run"}, 0, "usage: toolward run"},
		{[]string{"--version"}, 0, "toolward "},
		{[]string{"help"}, 0, "toolward help <command>"},
	}
	for _, tt := range tests {
		var stdout, stderr strings.Builder
		code := Main(tt.args, &stdout, &stderr)
		if out := stdout.String() + stderr.String(); code != tt.code || !strings.Contains(out, tt.want) {
			t.Errorf("toolward %s: exit %d, want %d with %q\n%s", strings.Join(tt.args, " "), code, tt.code, tt.want, out)
		}
	}
}
