package engine

import (
	"context"
	"fmt"

	"github.com/toolward/toolward/engine/backend"
	"github.com/toolward/toolward/engine/judge"
	"github.com/toolward/toolward/schema"
)

// OpenJudge builds the judge of cfg outside a job, for `toolward score`
// and `toolward judge-check`: judge.backend, or else cfg's backend (a
// replay directory answers from its turns with role judge), rate limits
// waited out, preflighted as a job preflights it (server reachable, the
// judge model present). be, when not nil, replaces the backend (tests).
func OpenJudge(ctx context.Context, cfg *schema.Config, be backend.Backend) (*judge.Judge, error) {
	jc := cfg.Judge
	if jc == nil {
		return nil, fmt.Errorf("%s names no judge: add judge: {model: \"…\"}", cfgName(cfg))
	}
	if be == nil {
		b, where := cfg.Backend, "backend"
		if jc.Backend != nil {
			b, where = *jc.Backend, "judge.backend"
		}
		var err error
		if be, err = newBackend(b, where); err != nil {
			return nil, fmt.Errorf("judge: %w", err)
		}
		be = &backend.Throttle{Backend: be}
	}
	j := &judge.Judge{Backend: be}
	if pf, ok := be.(backend.Preflighter); ok {
		pctx, cancel := context.WithTimeout(ctx, preflightTimeout)
		info, err := pf.Preflight(pctx, []string{jc.Model})
		cancel()
		if err != nil {
			return nil, fmt.Errorf("judge preflight failed (model %s): %w", jc.Model, err)
		}
		if info != nil {
			j.ModelDigest = info.Digests[jc.Model]
		}
	}
	return j, nil
}

func cfgName(cfg *schema.Config) string {
	if cfg.File != "" {
		return cfg.File
	}
	return "the config " + cfg.Name
}
