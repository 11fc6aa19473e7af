// Package casegen writes synthetic but realistic case files, for
// measuring how fast `toolward validate` and the case loader are.
package casegen

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Write creates n case files (one case each) under dir/cases, spread over
// ten subdirectories, and a run config dir/configs/bench.cue that selects
// them. Each case has two or three expected calls and about seven
// matchers, a when override and a golden trajectory its expectations
// accept.
func Write(dir string, n int) error {
	for i := range n {
		sub := filepath.Join(dir, "cases", fmt.Sprintf("group%02d", i%10))
		if err := os.MkdirAll(sub, 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(sub, fmt.Sprintf("case%04d.yaml", i)), []byte(Case(i)), 0o644); err != nil {
			return err
		}
	}
	if err := os.MkdirAll(filepath.Join(dir, "configs"), 0o755); err != nil {
		return err
	}
	cfg := `name:  "bench"
cases: ["cases/**/*.yaml"]
server: builtin: {}
backend: ollama: {host: "http://127.0.0.1:11434"}
matrix: {
	models: ["qwen3:0.6b", "llama3.2:1b"]
	seeds: [1, 2, 3]
	temperatures: [0, 0.7]
	tools: [{name: "needed"}, for n in [8, 16, 32] {name: "n\(n)", count: n}, {name: "all"}]
	confirm: ["auto", "deny"]
}
limits: {max_iterations: 8, run_timeout: "120s", concurrency: 2, retries: 2}
`
	return os.WriteFile(filepath.Join(dir, "configs", "bench.cue"), []byte(cfg), 0o644)
}

var depts = []string{"Engineering", "Sales", "Marketing", "Support", "Finance"}

// Case returns the YAML of synthetic case i.
func Case(i int) string {
	d := depts[i%len(depts)]
	third := ""
	goldenThird := ""
	if i%2 == 0 {
		third = `
    - tool: send_email
      args:
        to: {$regex: "^[a-z.]+@example\\.com$"}
        subject: {$contains: "` + d + `"}
        body: {$absent_or: {$contains: "total"}}`
		goldenThird = `
    - {tool: send_email, args: {to: hr@example.com, subject: "` + d + ` raise", body: "The total is 84,960."}}`
	}
	return strings.TrimLeft(fmt.Sprintf(`
id: bench-%04d
description: Synthetic case %d for the validation benchmark.
tags: [bench, sql, multi-step]
prompt: What's the average salary in %s, and what would a 12%% raise cost in total?
needs: [query_database, calculate, send_email]
expect:
  calls:
    - tool: query_database
      args:
        sql: {$contains: %s}
        limit: {$absent_or: {$one_of: [10, 100]}}
    - tool: calculate
      args:
        expression: {$any: true}
        precision: {$absent_or: {$approx: {value: 2, tol: 0}}}%s
  order: sequence
  forbid: [delete_employee]
  max_calls: 6
  answer: {$contains: "84,960"}
  when:
    - confirm: deny
      answer: {$not: {$contains: deleted}}
golden:
  calls:
    - {tool: query_database, args: {sql: "SELECT SUM(salary) FROM employees WHERE dept = '%s'"}}
    - {tool: calculate, args: {expression: "708000 * 0.12"}}%s
  answer: A 12%% raise would cost $84,960 in total.
`, i, i, d, d, third, d, goldenThird), "\n")
}
