package engine

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/toolward/toolward/engine/agent"
	"github.com/toolward/toolward/engine/backend"
	"github.com/toolward/toolward/engine/toolset"
	"github.com/toolward/toolward/schema"
	"github.com/toolward/toolward/schema/cell"
)

// contextTimeout bounds the context check: one request per model and
// tool subset, the first of which may load the model.
const contextTimeout = 5 * time.Minute

// checkContext measures, before any run, the largest first prompt of
// each model and tool subset (its case's messages and offered tools, over
// every description set), under each options set, with a one-token
// request, and stops the job when
// one does not fit the context the backend gives it: such runs would
// answer a prompt the server cut (context_truncated). The simulated
// user's prompt is measured too, as far as it is known before a run (see
// checkSimulatorContext); one message names every prompt that does not
// fit, the model's and the simulator's. Backends that cannot measure
// (replay, servers that refuse a long prompt themselves) pass.
func (s *starting) checkContext() error {
	if s.opts.SkipContextCheck || s.l.Plan.Len() == 0 || s.nothingLeft() {
		return nil
	}
	ctx, cancel := context.WithTimeout(s.pre, contextTimeout)
	defer cancel()
	models, err := s.checkModelContext(ctx)
	if err != nil {
		return err
	}
	sim, err := s.checkSimulatorContext(ctx)
	if err != nil {
		return err
	}
	var what string
	switch {
	case len(models) > 0 && sim != "":
		what = "the prompts do not fit the model's context, nor the simulated user's its model's"
	case len(models) > 0:
		what = "the prompts do not fit the model's context"
	case sim != "":
		what = "the simulated user's prompt does not fit its model's context"
	default:
		return nil
	}
	if sim != "" {
		models = append(models, "simulated user: "+sim)
	}
	return fmt.Errorf("%s, nothing ran (--no-context-check skips this check):\n%s", what, strings.Join(models, "\n"))
}

// checkModelContext is checkContext for the models under test: a line
// per model and tool subset whose longest prompt does not fit.
func (s *starting) checkModelContext(ctx context.Context) ([]string, error) {
	if _, ok := s.be.(backend.PromptMeasurer); !ok {
		return nil, nil
	}
	first := s.l.Plan.Run(0).Cell
	var problems []string
	for _, model := range s.l.Plan.Values(cell.Model) {
		for _, sub := range s.l.Plan.Subsets() {
			req, caseID, err := s.largestPrompt(model, sub)
			if err != nil || req == nil {
				continue // the run records the tool selection's error
			}
			req.Seed, req.Temperature = first.Seed, first.Temperature
			// Each options set is measured with its own settings, as
			// its cells' runs send them (its num_ctx over the backend's).
			for _, set := range s.l.Plan.Values(cell.Options) {
				name := set
				if set == cell.DefaultOptions {
					name = "" // no set, as cells hold it
				}
				req.Options, req.OptionsName = cellOptions(s.l.Config, name), name
				var f *backend.PromptFit
				err := s.retried(ctx, func() (err error) { f, err = backend.Measure(ctx, s.be, req); return err })
				if err != nil {
					if s.stopped() {
						return nil, errInterrupted
					}
					return nil, fmt.Errorf("measuring the longest prompt of tool subset %s for model %s, nothing ran: %w", sub.Name, model, err)
				}
				if f.Cut() {
					opts := ""
					if name != "" {
						opts = ", options " + name
					}
					problems = append(problems, fmt.Sprintf("subset %s needs %s prompt tokens; %s: %s (model %s%s, longest prompt: case %s)",
						sub.Name, f.Needs(), f.Context, f.Fix, model, opts, caseID))
				}
			}
		}
	}
	return problems, nil
}

// largestPrompt is the first request of the plan's case with the most
// prompt text (messages, tool names, descriptions and schemas) under
// subset, over every description set.
func (s *starting) largestPrompt(model string, subset schema.ToolSubset) (*backend.Request, string, error) {
	var best *backend.Request
	bestID, bestSize := "", -1
	for _, c := range s.l.Plan.Cases() {
		ts, err := toolset.Select(s.src.Tools(), c.ID, c.Needs, c.Avoid, subset)
		if err != nil {
			return nil, "", err
		}
		msgs := agent.Messages(c)
		for _, set := range s.l.Plan.Values(cell.Descriptions) {
			offered := s.descs[set].Apply(ts)
			size := 0
			for _, m := range msgs {
				size += len(m.Content)
			}
			for _, t := range offered {
				size += len(t.Name) + len(t.Description) + len(t.InputSchema)
			}
			if size <= bestSize {
				continue
			}
			tools := make([]backend.Tool, len(offered))
			for i, t := range offered {
				tools[i] = backend.Tool{Name: t.Name, Description: t.Description, InputSchema: t.InputSchema}
			}
			best, bestID, bestSize = &backend.Request{Model: model, Messages: msgs, Tools: tools}, c.ID, size
		}
	}
	return best, bestID, nil
}

// checkSimulatorContext measures the simulated user's largest known
// prompt: the request a run's simulator (see simulator) builds from its
// system prompt and the case's opening, over the plan's simulated cases.
// It returns what does not fit, "" when all does. The first real prompt
// also holds the model's answer, and each turn adds to it, so this is a
// floor: a later turn the server cuts is a context_truncated error of
// that run (user.Simulator).
func (s *starting) checkSimulatorContext(ctx context.Context) (string, error) {
	sim := s.l.Config.Simulator
	if s.sim == nil || sim == nil {
		return "", nil
	}
	if _, ok := s.sim.(backend.PromptMeasurer); !ok {
		return "", nil
	}
	first := s.l.Plan.Run(0).Cell
	var best *backend.Request
	bestID, bestSize := "", 0
	for _, c := range s.l.Plan.Cases() {
		if !c.User.Simulated() {
			continue
		}
		req := simulator(sim, s.sim, c, first).Request(0, agent.Messages(c))
		size := 0
		for _, m := range req.Messages {
			size += len(m.Content)
		}
		if size > bestSize {
			best, bestID, bestSize = req, c.ID, size
		}
	}
	if best == nil {
		return "", nil
	}
	var f *backend.PromptFit
	err := s.retried(ctx, func() (err error) { f, err = backend.Measure(ctx, s.sim, best); return err })
	if err != nil {
		if s.stopped() {
			return "", errInterrupted
		}
		return "", fmt.Errorf("measuring the simulated user's longest opening prompt (model %s), nothing ran: %w", sim.Model, err)
	}
	if !f.Cut() {
		return "", nil
	}
	return fmt.Sprintf("its system prompt and the opening of case %s need %s prompt tokens; %s: %s (simulator model %s)",
		bestID, f.Needs(), f.Context, f.Fix, sim.Model), nil
}
