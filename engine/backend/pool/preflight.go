package pool

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/toolward/toolward/engine/backend"
)

// hostCheck is what preflight learned about one host.
type hostCheck struct {
	info    *backend.Info
	lacks   []string // models the host said it does not have
	down    error    // the host could not be reached
	fatal   error    // a problem no other host can make up for
	checked []string // models asked about
}

// Preflight checks every host, in parallel, for the models it serves (see
// the package doc). A pool of one host returns that host's preflight
// unchanged.
func (p *Pool) Preflight(ctx context.Context, models []string) (*backend.Info, error) {
	if len(p.hosts) == 1 {
		return preflightOne(ctx, p.hosts[0].Backend, models)
	}
	// A host that hangs must not use up the whole preflight: each host
	// gets until a little before the caller's deadline, and one that has
	// not answered by then is left out like an unreachable one.
	hctx, cancel := hostContext(ctx)
	defer cancel()
	checks := make([]hostCheck, len(p.hosts))
	var wg sync.WaitGroup
	for i, m := range p.hosts {
		var want []string
		for _, model := range models {
			if (len(m.Models) == 0 || slices.Contains(m.Models, model)) && !slices.Contains(want, model) {
				want = append(want, model)
			}
		}
		wg.Go(func() {
			checks[i] = check(hctx, m.Backend, want)
			if checks[i].fatal != nil && hctx.Err() != nil && ctx.Err() == nil {
				checks[i].fatal, checks[i].down = nil, fmt.Errorf("no answer before the preflight's deadline: %w", checks[i].fatal)
			}
		})
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	for i := range checks {
		if err := checks[i].fatal; err != nil {
			return nil, fmt.Errorf("host %s: %w", p.hosts[i].Name, err)
		}
	}
	p.learn(checks)
	return p.merge(models, checks)
}

// maxHostMargin is the most of the caller's preflight time kept back
// from the hosts, to report on the ones that did answer.
const maxHostMargin = 15 * time.Second

// hostContext bounds one host's preflight: the caller's deadline less a
// margin (an eighth of the time left, at most maxHostMargin).
func hostContext(ctx context.Context) (context.Context, context.CancelFunc) {
	dl, ok := ctx.Deadline()
	if !ok {
		return context.WithCancel(ctx)
	}
	margin := min(time.Until(dl)/8, maxHostMargin)
	return context.WithDeadline(ctx, dl.Add(-margin))
}

// preflightOne runs b's preflight, if it has one.
func preflightOne(ctx context.Context, b backend.Backend, models []string) (*backend.Info, error) {
	if pf, ok := b.(backend.Preflighter); ok {
		return pf.Preflight(ctx, models)
	}
	return nil, nil
}

// check preflights one host for models. When the host lacks some, it
// asks model by model to learn which.
func check(ctx context.Context, b backend.Backend, models []string) hostCheck {
	c := hostCheck{checked: models}
	if len(models) == 0 {
		return c
	}
	info, err := preflightOne(ctx, b, models)
	if err == nil {
		c.info = info
		return c
	}
	switch kind(err) {
	case backend.KindModelMissing:
	case backend.KindUnavailable, backend.KindTimeout:
		c.down = err
		return c
	default:
		c.fatal = err
		return c
	}
	for _, m := range models {
		info, err := preflightOne(ctx, b, []string{m})
		switch {
		case err == nil:
			c.info = mergeInfo(c.info, info)
		case kind(err) == backend.KindModelMissing:
			c.lacks = append(c.lacks, m)
		case kind(err) == backend.KindUnavailable || kind(err) == backend.KindTimeout:
			c.down = err
			return c
		default:
			c.fatal = err
			return c
		}
	}
	return c
}

// kind is err's backend error kind, or "".
func kind(err error) string {
	var be *backend.Error
	if errors.As(err, &be) {
		return be.Kind
	}
	return ""
}

// mergeInfo adds b's facts to a's (either may be nil).
func mergeInfo(a, b *backend.Info) *backend.Info {
	if a == nil {
		return b
	}
	if b == nil {
		return a
	}
	a.Unseeded = a.Unseeded || b.Unseeded
	for m, d := range b.Digests {
		if a.Digests == nil {
			a.Digests = map[string]string{}
		}
		a.Digests[m] = d
	}
	for m, mi := range b.Models {
		if a.Models == nil {
			a.Models = map[string]backend.ModelInfo{}
		}
		a.Models[m] = mi
	}
	for _, w := range b.Warnings {
		if !slices.Contains(a.Warnings, w) {
			a.Warnings = append(a.Warnings, w)
		}
	}
	return a
}

// learn marks the hosts preflight found lacking models, or unreachable.
func (p *Pool) learn(checks []hostCheck) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for i, c := range checks {
		m := p.hosts[i]
		for _, model := range c.lacks {
			m.lacks[model] = true
		}
		if c.down != nil {
			m.failures++
			m.until = p.now().Add(p.down(m.failures))
		}
	}
}

// merge joins the hosts' facts into one Info, or fails when a model has
// no host left that serves it.
func (p *Pool) merge(models []string, checks []hostCheck) (*backend.Info, error) {
	info := &backend.Info{Digests: map[string]string{}, Models: map[string]backend.ModelInfo{}}
	var servers, noHost []string
	var firstDown error
	served := map[string]bool{}
	for i, c := range checks {
		name := p.hosts[i].Name
		switch {
		case c.down != nil:
			servers = append(servers, name+" (unreachable)")
			info.Warnings = append(info.Warnings, fmt.Sprintf("host %s is unreachable and is left out until it answers: %v", name, c.down))
			if firstDown == nil {
				firstDown = c.down
			}
			continue
		case c.info != nil && c.info.Server != "":
			servers = append(servers, c.info.Server)
		default:
			servers = append(servers, name)
		}
		if len(c.lacks) > 0 {
			info.Warnings = append(info.Warnings, fmt.Sprintf("host %s lacks %s %s; other hosts serve %s", name, plural(len(c.lacks), "model", "models"), strings.Join(c.lacks, ", "), plural(len(c.lacks), "it", "them")))
		}
		for _, m := range c.checked {
			if !slices.Contains(c.lacks, m) {
				served[m] = true
			}
		}
		if c.info == nil {
			continue
		}
		for _, w := range c.info.Warnings {
			info.Warnings = append(info.Warnings, name+": "+w)
		}
		info.Unseeded = info.Unseeded || c.info.Unseeded
		p.mergeFacts(info, name, c.info)
	}
	for _, m := range models {
		if !served[m] && !slices.Contains(noHost, m) {
			noHost = append(noHost, m)
		}
	}
	if len(noHost) > 0 {
		if allDown(checks) {
			names := make([]string, len(p.hosts))
			for i, m := range p.hosts {
				names[i] = m.Name
			}
			return nil, fmt.Errorf("no host of the pool answered (%s); start them, or fix the hosts in the config; the first said: %w", strings.Join(names, ", "), firstDown)
		}
		return nil, p.lacking(noHost, checks)
	}
	info.Server = fmt.Sprintf("pool of %d hosts: %s", len(p.hosts), strings.Join(servers, "; "))
	return info, nil
}

// mergeFacts adds one host's digests and model facts to info, warning
// when two hosts hold different models under one name.
func (p *Pool) mergeFacts(info *backend.Info, host string, hi *backend.Info) {
	for _, m := range sortedKeys(hi.Digests) {
		d := hi.Digests[m]
		if old, ok := info.Digests[m]; ok && old != d {
			info.Warnings = append(info.Warnings, fmt.Sprintf("model %s on host %s is not the one on the other hosts (digest %.12s, not %.12s): results will mix two models; pull the same model everywhere", m, host, d, old))
			continue
		}
		info.Digests[m] = d
	}
	for m, mi := range hi.Models {
		if _, ok := info.Models[m]; !ok {
			info.Models[m] = mi
		}
	}
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// lacking is the preflight error for models no host serves: which hosts
// lack which, and which could not be asked.
func (p *Pool) lacking(models []string, checks []hostCheck) error {
	var msg strings.Builder
	fmt.Fprintf(&msg, "no host of the pool serves %s %s:", plural(len(models), "model", "models"), strings.Join(models, ", "))
	for i, c := range checks {
		name := p.hosts[i].Name
		var lacks []string
		for _, m := range models {
			if slices.Contains(c.lacks, m) {
				lacks = append(lacks, m)
			}
		}
		switch {
		case c.down != nil:
			fmt.Fprintf(&msg, " %s is unreachable;", name)
		case len(lacks) > 0:
			fmt.Fprintf(&msg, " %s lacks %s;", name, strings.Join(lacks, ", "))
		case !slices.ContainsFunc(models, func(m string) bool { return slices.Contains(c.checked, m) }):
			fmt.Fprintf(&msg, " %s pins other models;", name)
		}
	}
	s := strings.TrimSuffix(msg.String(), ";")
	s += ". Pull or load each model on a host that serves it, or fix the hosts' models lists"
	return &backend.Error{Kind: backend.KindModelMissing, Msg: s}
}

// allDown reports whether every host that was asked could not be reached.
func allDown(checks []hostCheck) bool {
	asked := false
	for _, c := range checks {
		if len(c.checked) == 0 {
			continue
		}
		if c.down == nil {
			return false
		}
		asked = true
	}
	return asked
}
