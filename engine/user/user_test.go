package user

import (
	"context"
	"errors"
	"reflect"
	"testing"

	"github.com/toolward/toolward/engine/backend"
)

type reply struct {
	content string
	err     error
	got     *backend.Request
}

func (r *reply) Chat(ctx context.Context, req *backend.Request) (*backend.Response, error) {
	r.got = req
	if r.err != nil {
		return nil, r.err
	}
	return &backend.Response{Message: backend.Message{Content: r.content}, TokensIn: 5, TokensOut: 2}, nil
}

var conv = []backend.Message{
	{Role: "system", Content: "model system prompt"},
	{Role: "user", Content: "open a ticket"},
	{Role: "assistant", Content: "let me", ToolCalls: []backend.ToolCall{{Name: "create_ticket"}}},
	{Role: "tool", Content: "Created TCK-1001"},
	{Role: "assistant", Content: "Done: TCK-1001."},
}

// TestSimulatorSeesTheUsersSide: roles flipped, the model's system
// prompt, tool calls and results hidden, the framing with instructions
// and stop marker as system prompt, the run's seed and a user-side key.
func TestSimulatorSeesTheUsersSide(t *testing.T) {
	t.Parallel()
	b := &reply{content: "Make it high priority."}
	s := &Simulator{Backend: b, Model: "sim", Temperature: 0.3, Seed: 4, Stop: "###STOP###",
		System: Prompt("Play: {instructions} End with {stop}.", " You are Dana. ", "###STOP###"),
		Key:    backend.Key{Case: "c", Cell: map[string]string{"seed": "4"}}}
	tu, ok, err := s.Next(context.Background(), 0, conv)
	if err != nil || !ok || tu.Stop || tu.Content != "Make it high priority." || tu.Model != "sim" || tu.TokensIn != 5 {
		t.Fatalf("turn %+v ok %v err %v", tu, ok, err)
	}
	req := b.got
	want := []backend.Message{
		{Role: "system", Content: "Play: You are Dana. End with ###STOP###."},
		{Role: "assistant", Content: "open a ticket"},
		{Role: "user", Content: "Done: TCK-1001."},
	}
	if len(req.Messages) != len(want) {
		t.Fatalf("simulator saw %+v", req.Messages)
	}
	for i := range want {
		if req.Messages[i].Role != want[i].Role || req.Messages[i].Content != want[i].Content || req.Messages[i].ToolCalls != nil {
			t.Errorf("message %d: %+v, want %+v", i, req.Messages[i], want[i])
		}
	}
	if req.Model != "sim" || req.Seed != 4 || req.Temperature != 0.3 || len(req.Tools) != 0 || req.Key.Side != backend.SideUser || req.Key.Turn != 0 || req.Key.Case != "c" {
		t.Errorf("request %+v", req)
	}
	// Request, which the context check measures, is what Next sent.
	if got := s.Request(0, conv); !reflect.DeepEqual(got, req) {
		t.Errorf("Request = %+v; Next sent %+v", got, req)
	}
}

// TestSimulatorStopAndFailures: the stop marker anywhere ends the
// conversation; an empty reply is the simulator's failure; a backend
// error keeps its kind and says it was the simulated user's.
func TestSimulatorStopAndFailures(t *testing.T) {
	t.Parallel()
	s := &Simulator{Backend: &reply{content: "Thanks! ###STOP###"}, Stop: "###STOP###"}
	if tu, _, err := s.Next(context.Background(), 1, conv); err != nil || !tu.Stop {
		t.Errorf("stop: %+v %v", tu, err)
	}
	s.Backend = &reply{content: "  \n"}
	var be *backend.Error
	if _, _, err := s.Next(context.Background(), 1, conv); !errors.As(err, &be) || be.Kind != KindSimulator || !errors.Is(err, ErrSilent) {
		t.Errorf("empty reply: %v", err)
	}
	s.Backend = &reply{err: &backend.Error{Kind: backend.KindCassetteMiss, Msg: "no reply"}}
	if _, _, err := s.Next(context.Background(), 1, conv); !errors.As(err, &be) || be.Kind != backend.KindCassetteMiss || be.Msg != "simulated user: no reply" {
		t.Errorf("backend error: %v", err)
	}
	sc := &Script{Replies: []string{"a"}}
	if tu, ok, _ := sc.Next(context.Background(), 0, nil); !ok || tu.Content != "a" {
		t.Errorf("script 0: %+v %v", tu, ok)
	}
	if _, ok, _ := sc.Next(context.Background(), 1, nil); ok {
		t.Error("script past its replies goes on")
	}
}
