package judge

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/toolward/toolward/engine/backend"
	"github.com/toolward/toolward/matchers/score"
	"github.com/toolward/toolward/schema/record"
)

// Judge asks one judge model on one backend.
type Judge struct {
	Backend backend.Backend
	// ModelDigest is the judge model's digest from its backend's
	// preflight, stored with each verdict; "" when unknown.
	ModelDigest string
}

var _ score.Asker = (*Judge)(nil)

// MaxReason is the longest reason a verdict may give, in bytes: the
// judge is asked for one short sentence, and a longer reply is not the
// verdict asked for.
const MaxReason = 2000

// Request is the chat request for sample k of in, a judged answer of
// rec: in's messages with seed in.Seeds[k], keyed as the run's judge
// request in.Index*len(in.Seeds)+k.
func Request(rec *record.Record, in *score.JudgeInput, k int) *backend.Request {
	msgs := make([]backend.Message, len(in.Messages))
	for i, m := range in.Messages {
		msgs[i] = backend.Message{Role: m.Role, Content: m.Content}
	}
	return &backend.Request{
		Model: in.Model, Messages: msgs, Seed: in.Seeds[k], Temperature: in.Temperature,
		Key: backend.Key{Case: rec.Case, Cell: rec.Cell.Values(), Turn: in.Index*len(in.Seeds) + k, Side: backend.SideJudge, Input: in.Digest},
	}
}

// Ask sends every sample of in and returns the judgement: each vote, and
// their majority. The first failure ends it with an error of kind judge.
func (j *Judge) Ask(ctx context.Context, rec *record.Record, in *score.JudgeInput) (record.Judgement, error) {
	out := record.Judgement{Where: in.Where, Input: in.Digest, Model: in.Model, ModelDigest: j.ModelDigest}
	for k, seed := range in.Seeds {
		start := time.Now()
		resp, err := j.Backend.Chat(ctx, Request(rec, in, k))
		if err != nil {
			return out, backendError(in, err)
		}
		v, err := Parse(resp)
		if err != nil {
			return out, &backend.Error{Kind: score.KindJudge, Retryable: true,
				Msg: fmt.Sprintf("judge (%s) on %s, seed %d: the reply is not a verdict", in.Model, in.Where, seed), Err: err}
		}
		lat := resp.Latency
		if lat == 0 {
			lat = time.Since(start)
		}
		v.Seed, v.Tokens, v.Latency, v.Host = seed, record.Tokens{In: resp.TokensIn, Out: resp.TokensOut, Cached: resp.TokensCached}, record.FromDuration(lat), resp.Host
		out.Votes = append(out.Votes, v)
	}
	out.Pass, out.Reason = score.Majority(out.Votes)
	return out, nil
}

// backendError makes a failure of the judge's backend an error of kind
// judge, keeping whether a retry may help and naming the backend's kind.
func backendError(in *score.JudgeInput, err error) error {
	out := &backend.Error{Kind: score.KindJudge, Msg: fmt.Sprintf("judge (%s) on %s", in.Model, in.Where), Err: err}
	var be *backend.Error
	if errors.As(err, &be) {
		out.Retryable, out.RetryAfter = be.Retryable, be.RetryAfter
		out.Msg += " (" + be.Kind + ")"
	} else if errors.Is(err, context.DeadlineExceeded) {
		out.Retryable = true
	}
	return out
}

// Errors of Parse, the causes of a reply that is not a verdict.
var (
	ErrCut      = errors.New("the judge's reply was cut before its end")
	ErrEmpty    = errors.New("the judge wrote nothing")
	ErrToolCall = errors.New("the judge called a tool instead of answering")
)

// Parse reads a judge's reply strictly: its content, space around it
// aside, must be exactly one JSON object with the string fields verdict
// ("pass" or "fail") and reason (not empty, at most MaxReason bytes), and
// nothing else; the reply must not be cut (backend.Cut) or call a tool.
// What a model thought (its thinking) is not read.
func Parse(resp *backend.Response) (record.Vote, error) {
	switch {
	case backend.Cut(resp.DoneReason):
		return record.Vote{}, fmt.Errorf("%w (done reason %s)", ErrCut, resp.DoneReason)
	case len(resp.Message.ToolCalls) > 0:
		return record.Vote{}, ErrToolCall
	}
	text := strings.TrimSpace(resp.Message.Content)
	if text == "" {
		return record.Vote{}, ErrEmpty
	}
	var v struct {
		Verdict *string `json:"verdict"`
		Reason  *string `json:"reason"`
	}
	dec := json.NewDecoder(strings.NewReader(text))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&v); err != nil {
		return record.Vote{}, fmt.Errorf("want one JSON object {\"verdict\": \"pass\" or \"fail\", \"reason\": \"…\"}, got %s: %v", quote(text), err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return record.Vote{}, fmt.Errorf("want one JSON object and nothing after it, got %s", quote(text))
	}
	if !bytes.HasPrefix([]byte(text), []byte("{")) {
		return record.Vote{}, fmt.Errorf("want a JSON object, got %s", quote(text))
	}
	switch {
	case v.Verdict == nil:
		return record.Vote{}, fmt.Errorf("the object has no verdict: %s", quote(text))
	case *v.Verdict != "pass" && *v.Verdict != "fail":
		return record.Vote{}, fmt.Errorf("verdict %q, want \"pass\" or \"fail\"", *v.Verdict)
	case v.Reason == nil || strings.TrimSpace(*v.Reason) == "":
		return record.Vote{}, fmt.Errorf("the verdict gives no reason: %s", quote(text))
	case len(*v.Reason) > MaxReason:
		return record.Vote{}, fmt.Errorf("the reason has %d bytes, more than %d: not the short reason asked for", len(*v.Reason), MaxReason)
	}
	return record.Vote{Pass: *v.Verdict == "pass", Reason: strings.TrimSpace(*v.Reason)}, nil
}

// quote shows a reply in a message, cut to 200 bytes.
func quote(s string) string {
	if len(s) > 200 {
		return fmt.Sprintf("%q… (%d bytes)", s[:200], len(s))
	}
	return fmt.Sprintf("%q", s)
}
