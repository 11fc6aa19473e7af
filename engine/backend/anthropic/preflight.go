package anthropic

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/toolward/toolward/engine/backend"
	"github.com/toolward/toolward/matchers"
)

// ProbePrompt is the user message of the one-token request Preflight
// sends (backend.ProbeRequest).
const ProbePrompt = backend.ProbePrompt

// MaxModelPages bounds the pages of GET /v1/models preflight reads.
const MaxModelPages = 50

// modelPageSize is the limit asked for per page (the API's largest).
const modelPageSize = 1000

// Preflight checks, before any run, that the API answers, accepts the key
// and serves every model. It lists the models (GET /v1/models, every
// page); a model the list does not name (an alias) is sent one request
// asking for one token, which finds whether it exists. A refused key
// stops the job with the api_key_env hint; a missing model stops it with
// the listed models and the closest one. The Info says the backend takes
// no seed.
func (b *Backend) Preflight(ctx context.Context, models []string) (*backend.Info, error) {
	info := &backend.Info{Server: b.where(), Models: map[string]backend.ModelInfo{}, Unseeded: true}
	listed, warn, err := b.list(ctx)
	if err != nil {
		return nil, err
	}
	if warn != nil {
		info.Warnings = append(info.Warnings, fmt.Sprintf("cannot list models (%v); checking each model with a request instead", warn))
	}
	var missing []string
	for _, m := range models {
		if _, done := info.Models[m]; done || slices.Contains(missing, m) {
			continue
		}
		if i := slices.IndexFunc(listed, func(l backend.ModelInfo) bool { return l.ID == m }); i >= 0 {
			info.Models[m] = listed[i]
			continue
		}
		if err := b.probe(ctx, m); err != nil {
			var be *backend.Error
			if errors.As(err, &be) && be.Kind == backend.KindModelMissing {
				missing = append(missing, m)
				continue
			}
			return nil, err
		}
		info.Models[m] = backend.ModelInfo{ID: m}
		if listed != nil {
			info.Warnings = append(info.Warnings, fmt.Sprintf("GET %s/v1/models does not list %s, but it answers (an alias?): the model behind it may change", b.base, m))
		}
	}
	if len(missing) > 0 {
		return nil, b.missing(missing, listed)
	}
	return info, nil
}

// missing says which models the API lacks, which it lists, and the
// closest listed name to each missing one.
func (b *Backend) missing(models []string, listed []backend.ModelInfo) error {
	var msg strings.Builder
	fmt.Fprintf(&msg, "%s has no model %s", b.where(), strings.Join(models, ", "))
	ids := make([]string, len(listed))
	for i, m := range listed {
		ids[i] = m.ID
	}
	slices.Sort(ids)
	for _, m := range models {
		if s := matchers.Suggest(m, ids); s != "" {
			fmt.Fprintf(&msg, " (did you mean %s?)", s)
		}
	}
	switch {
	case listed == nil:
	case len(ids) == 0:
		msg.WriteString("; it lists no models")
	default:
		fmt.Fprintf(&msg, "; it lists: %s", strings.Join(ids, ", "))
	}
	msg.WriteString(". Fix matrix.models")
	return &backend.Error{Kind: backend.KindModelMissing, Msg: msg.String()}
}

// list fetches every page of GET /v1/models (following has_more and
// last_id, at most MaxModelPages). It returns the models (nil when there
// is no readable list), why there is none (a warning), and an error that
// stops the preflight: no server there, or a refused key.
func (b *Backend) list(ctx context.Context) (listed []backend.ModelInfo, warn, err error) {
	listed = []backend.ModelInfo{}
	after := ""
	for page := 0; ; page++ {
		if page == MaxModelPages {
			return listed, fmt.Errorf("GET %s/v1/models has more than %d pages; read the first", b.base, MaxModelPages), nil
		}
		p, warn, err := b.page(ctx, after)
		if err != nil || warn != nil {
			return nil, warn, err
		}
		for _, m := range p.Data {
			mi := backend.ModelInfo{ID: m.ID, OwnedBy: "anthropic"}
			if t, err := time.Parse(time.RFC3339, m.CreatedAt); err == nil {
				mi.Created = t.Unix()
			}
			listed = append(listed, mi)
		}
		if !p.HasMore || p.LastID == "" || p.LastID == after {
			return listed, nil, nil
		}
		after = p.LastID
	}
}

// page fetches one page of the model list, after the model id after.
func (b *Backend) page(ctx context.Context, after string) (*modelPage, error, error) {
	q := url.Values{"limit": {fmt.Sprint(modelPageSize)}}
	if after != "" {
		q.Set("after_id", after)
	}
	var p modelPage
	lr := &backend.ListRequest{
		Client: b.client, Header: b.headers, URL: b.base + "/v1/models?" + q.Encode(), Where: b.where(), Limit: b.limit,
		Refused: func(resp *http.Response) *backend.Error { return b.statusError(resp, "listing models", "") },
		Said:    serverMessage,
		Unreachable: func(err error) string {
			return fmt.Sprintf("cannot reach the Anthropic API at %s (%v); check the network, or backend.anthropic.base_url", b.base, err)
		},
	}
	if _, warn, err := lr.Get(ctx, &p); warn != nil || err != nil {
		return nil, warn, err
	}
	return &p, nil, nil
}

// probe sends model a one-token request offering one tool (none when
// ctx is backend.ToolFree), waiting out throttled answers
// (backend.Retrying).
func (b *Backend) probe(ctx context.Context, model string) error {
	body, err := b.encode(backend.ProbeRequest(ctx, model), true)
	if err != nil {
		return err
	}
	_, err = backend.Retrying(ctx, nil, func() (*backend.Response, error) {
		return b.send(ctx, body, "checking model "+model, model)
	})
	return err
}
