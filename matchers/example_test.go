package matchers_test

import (
	"fmt"

	"github.com/toolward/toolward/matchers"
)

func ExampleExpectation_Score() {
	e, err := matchers.CompileExpect(map[string]any{
		"calls": []any{
			map[string]any{"tool": "query_database", "args": map[string]any{"sql": map[string]any{"$contains": "Engineering"}}},
			map[string]any{"tool": "calculate"},
		},
		"answer": map[string]any{"$contains": "84,960"},
		"when": []any{map[string]any{
			"confirm": "deny",
			"answer":  map[string]any{"$not": map[string]any{"$contains": "deleted"}},
		}},
	})
	if err != nil {
		panic(err)
	}
	trace := matchers.Trace{
		Calls: []matchers.Call{
			{Tool: "query_database", Args: map[string]any{"sql": "SELECT AVG(salary) FROM employees"}},
			{Tool: "calculate", Args: map[string]any{"expression": "708000*0.12"}},
		},
		Answer: "About 85k.",
	}
	v := e.Score(trace, matchers.Cell{Confirm: "auto"})
	fmt.Println(v.Pass)
	for _, r := range v.Reasons {
		fmt.Println(r.Code+":", r.Detail)
	}
	// Output:
	// false
	// wrong_args: calls[0].args.sql: want string containing "Engineering", got "SELECT AVG(salary) FROM employees" (expect.calls[0])
	// answer_mismatch: answer: want string containing "84,960", got "About 85k."
}
