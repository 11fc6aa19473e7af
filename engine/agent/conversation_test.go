package agent

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/toolward/toolward/engine/backend"
	"github.com/toolward/toolward/engine/user"
	"github.com/toolward/toolward/schema/record"
)

// TestConversationScripted: after each final answer the next scripted
// reply is sent after the answer; every user turn is recorded with the
// model turn it precedes, model turns are numbered across the
// conversation, and the conversation ends when the last reply is
// answered.
func TestConversationScripted(t *testing.T) {
	t.Parallel()
	b := &script{replies: []backend.Message{
		{ToolCalls: []backend.ToolCall{call("add", `{"a":2,"b":3}`)}},
		{Content: "5"},
		{Content: "8, then"},
		{Content: "bye"},
		{Content: "never asked"},
	}}
	in := input()
	in.User = &user.Script{Replies: []string{"and plus 3?", "thanks"}}
	in.MaxUserTurns = 3
	out, err := Run(context.Background(), b, &tools{}, in)
	if err != nil {
		t.Fatal(err)
	}
	if len(b.seen) != 4 {
		t.Fatalf("%d model requests, want 4", len(b.seen))
	}
	for i, req := range b.seen {
		if req.Key.Turn != i || req.Key.Side != "" {
			t.Errorf("request %d: key turn %d side %q", i, req.Key.Turn, req.Key.Side)
		}
	}
	// The third request holds the first answer, then the reply.
	msgs := b.seen[2].Messages
	if n := len(msgs); msgs[n-2].Role != "assistant" || msgs[n-2].Content != "5" || msgs[n-1].Role != "user" || msgs[n-1].Content != "and plus 3?" {
		t.Errorf("third request ends with %+v", msgs[max(n-2, 0):])
	}
	want := []record.UserTurn{
		{Before: 0, Content: "add 2 and 3", From: record.UserFromCase},
		{Before: 2, Content: "and plus 3?", From: record.UserFromScript},
		{Before: 3, Content: "thanks", From: record.UserFromScript},
	}
	if len(out.Trace.Users) != len(want) {
		t.Fatalf("users %+v", out.Trace.Users)
	}
	for i, u := range out.Trace.Users {
		if !reflect.DeepEqual(u, want[i]) {
			t.Errorf("users[%d] = %+v, want %+v", i, u, want[i])
		}
	}
	if out.Trace.Answer != "bye" || out.OutOfTurns || out.OutOfUserTurns {
		t.Errorf("answer %q, out of turns %v, out of user turns %v", out.Trace.Answer, out.OutOfTurns, out.OutOfUserTurns)
	}
	sc := out.Trace.Scored()
	if strings.Join(sc.Answers, "|") != "5|8, then|bye" || sc.Calls[0].UserTurn != 0 {
		t.Errorf("scored answers %q, calls %+v", sc.Answers, sc.Calls)
	}
}

// TestConversationMaxIterationsPerUserTurn: the model-turn limit counts
// the turns spent on one user message, not the whole conversation.
func TestConversationMaxIterationsPerUserTurn(t *testing.T) {
	t.Parallel()
	loop := backend.Message{ToolCalls: []backend.ToolCall{call("add", `{}`)}}
	b := &script{replies: []backend.Message{loop, loop, {Content: "a"}, loop, loop, loop, {Content: "b"}}}
	in := input()
	in.MaxIterations = 3
	in.User = &user.Script{Replies: []string{"again"}}
	out, err := Run(context.Background(), b, &tools{}, in)
	if err != nil {
		t.Fatal(err)
	}
	if !out.OutOfTurns || len(b.seen) != 6 {
		t.Fatalf("out of turns %v after %d requests; want true after 6 (3 + 3)", out.OutOfTurns, len(b.seen))
	}
}

// simUser is a User that ends with a stop message after some replies.
type simUser struct {
	replies []string
	stopAt  int
}

func (s *simUser) Next(ctx context.Context, n int, conv []backend.Message) (user.Turn, bool, error) {
	if n >= s.stopAt {
		return user.Turn{Content: "bye ###STOP###", From: record.UserFromSimulator, Model: "sim", Stop: true}, true, nil
	}
	return user.Turn{Content: s.replies[n], From: record.UserFromSimulator, Model: "sim", TokensIn: 7, TokensOut: 3}, true, nil
}

// TestConversationStopAndMaxTurns: a stop message ends the conversation
// unsent; a user still going after MaxUserTurns messages ends it with
// OutOfUserTurns, its last message unsent too.
func TestConversationStopAndMaxTurns(t *testing.T) {
	t.Parallel()
	answers := []backend.Message{{Content: "a0"}, {Content: "a1"}, {Content: "a2"}, {Content: "a3"}}
	in := input()
	in.User, in.MaxUserTurns = &simUser{replies: []string{"r1", "r2", "r3"}, stopAt: 1}, 3
	out, err := Run(context.Background(), &script{replies: answers}, &tools{}, in)
	if err != nil {
		t.Fatal(err)
	}
	u := out.Trace.Users
	if len(u) != 3 || !u[2].Stop || !u[2].Unsent || u[1].Unsent || out.OutOfUserTurns || out.Trace.Answer != "a1" {
		t.Fatalf("stop: users %+v, out of user turns %v, answer %q", u, out.OutOfUserTurns, out.Trace.Answer)
	}
	if u[1].Tokens == nil || u[1].Tokens.In != 7 || out.Tokens.In != 20 {
		t.Errorf("simulator tokens %+v kept apart from the model's %+v", u[1].Tokens, out.Tokens)
	}

	in.User = &simUser{replies: []string{"r1", "r2", "r3"}, stopAt: 9}
	b := &script{replies: answers}
	out, err = Run(context.Background(), b, &tools{}, in)
	if err != nil {
		t.Fatal(err)
	}
	u = out.Trace.Users
	if !out.OutOfUserTurns || len(u) != 4 || !u[3].Unsent || u[3].Stop || len(b.seen) != 3 {
		t.Fatalf("max turns: users %+v, out of user turns %v, %d model requests", u, out.OutOfUserTurns, len(b.seen))
	}
	if got := out.Trace.Scored().Answers; len(got) != 3 {
		t.Errorf("answers %q, want the three sent turns answered", got)
	}
}
