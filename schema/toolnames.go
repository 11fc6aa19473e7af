package schema

// ToolUse is one tool name a case uses, and where.
type ToolUse struct {
	Tool string
	// Elems locates the name in the case document, e.g. ["expect",
	// "forbid", 0]; Locate turns it into a position.
	Elems []any
	// Role is what the name does: "needs", "avoid", "call" (an expected
	// call, base or when), "forbid" (base or when) or "golden".
	Role string
}

// ToolUses returns every tool name c uses: needs, avoid, the tools of
// expected calls and forbid lists (of the base expectation, of every
// when entry and of their turns) and of golden calls (a conversation's
// in its turns), in document order by field.
func ToolUses(c *Case) []ToolUse {
	var out []ToolUse
	add := func(role string, names []string, elems ...any) {
		for i, n := range names {
			out = append(out, ToolUse{Tool: n, Role: role, Elems: append(append([]any{}, elems...), i)})
		}
	}
	add("needs", c.Needs, "needs")
	add("avoid", c.Avoid, "avoid")
	rules := func(m map[string]any, elems ...any) {
		calls, _ := m["calls"].([]any)
		for i, x := range calls {
			if cm, ok := x.(map[string]any); ok {
				if t, ok := cm["tool"].(string); ok {
					out = append(out, ToolUse{Tool: t, Role: "call", Elems: append(append([]any{}, elems...), "calls", i, "tool")})
				}
			}
		}
		add("forbid", strs(m["forbid"]), append(append([]any{}, elems...), "forbid")...)
	}
	withTurns := func(m map[string]any, elems ...any) {
		rules(m, elems...)
		turns, _ := m["turns"].([]any)
		for i, x := range turns {
			if tm, ok := x.(map[string]any); ok {
				rules(tm, append(append([]any{}, elems...), "turns", i)...)
			}
		}
	}
	withTurns(c.Expect, "expect")
	whens, _ := c.Expect["when"].([]any)
	for i, w := range whens {
		if wm, ok := w.(map[string]any); ok {
			withTurns(wm, "expect", "when", i)
		}
	}
	golden := func(g *Golden, elems ...any) {
		for i, gc := range g.Calls {
			out = append(out, ToolUse{Tool: gc.Tool, Role: "golden", Elems: append(append([]any{}, elems...), "calls", i, "tool")})
		}
		for t, turn := range g.Turns {
			for i, gc := range turn.Calls {
				out = append(out, ToolUse{Tool: gc.Tool, Role: "golden", Elems: append(append([]any{}, elems...), "turns", t, "calls", i, "tool")})
			}
		}
	}
	if c.Golden != nil {
		golden(c.Golden, "golden")
	}
	for _, wg := range c.WhenGoldens {
		golden(&wg.Golden, "expect", "when", wg.When, "golden")
	}
	return out
}

// Locate returns an Error for msg at elems of case c: it reads c.File
// again and finds the node in the document that starts at c.Line and
// c.Col. When the file cannot be read or has changed, the error is at the
// case itself. Meant for the few mistakes found after loading (a tool
// the live server lacks), not for every node.
func Locate(c *Case, elems []any, msg string) *Error {
	e := &Error{File: c.File, Line: c.Line, Col: c.Col, Path: pathString(elems), Msg: msg}
	src, err := ReadFile(c.File, "case file", MaxCaseFileSize)
	if err != nil {
		return e
	}
	for doc := range documents(src) {
		if doc == nil {
			break // a syntax error: the file has changed
		}
		if root := doc.Content[0]; root.Line == c.Line && root.Column == c.Col {
			n := nodeAt(doc, elems)
			e.Line, e.Col = n.Line, n.Column
			return e
		}
	}
	return e // no such document any more
}
