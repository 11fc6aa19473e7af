package runconfig

import (
	"strconv"

	"cuelang.org/go/cue/token"

	"github.com/toolward/toolward/matchers"
	"github.com/toolward/toolward/schema"
	"github.com/toolward/toolward/schema/cell"
)

// backendUse is one backend of a config and what it is asked for. The
// job's backend serves the matrix's models at the matrix's temperatures;
// the simulator's (simulator.backend, or the job's backend when it names
// none) serves simulator.model at simulator.temperature. The checks
// that depend on what is asked (a pool host serving each model, the
// temperatures Anthropic accepts) run once per use, those of the
// backend's own settings once per backend (own).
type backendUse struct {
	at     []any // where the backend is configured: backend, simulator.backend
	b      *schema.Backend
	own    bool     // the use configures at itself (not the simulator borrowing the job's backend)
	models []string // the models asked for
	// modelAt is the config element naming models[i].
	modelAt func(i int) []any
	temps   []float64
	// temp adds msg as an error at the element naming temps[i]; when that
	// is the schema's default, the message says so and names fix.
	temp func(i int, msg, fix string)
}

// path is u.at followed by more.
func (u backendUse) path(more ...any) []any {
	return append(append([]any{}, u.at...), more...)
}

// pathString is u.path(more...) written out, e.g. simulator.backend.ollama.hosts.
func (u backendUse) pathString(more ...any) string { return matchers.PathString(u.path(more...)) }

// backendUses returns the job's backend's use, and the simulator's when
// the config has a simulator.
func backendUses(c *schema.Config, pos positions, errs *schema.Errors) []backendUse {
	jobTemps := c.Matrix.Values(cell.Temperature)
	job := backendUse{
		at: []any{"backend"}, b: &c.Backend, own: true,
		models:  c.Matrix.Values(cell.Model),
		modelAt: func(i int) []any { return []any{"matrix", "models", i} },
	}
	for _, v := range jobTemps {
		t, _ := strconv.ParseFloat(v, 64) // formatted by the axis
		job.temps = append(job.temps, t)
	}
	var at []token.Pos
	job.temp = func(i int, msg, fix string) {
		if !userSet(pos, "matrix", "temperatures") {
			*errs = append(*errs, pos.at(job.path("anthropic", "thinking_budget"), msg+" (the default); set matrix.temperatures: ["+fix+"]"))
			return
		}
		if at == nil {
			at = pos.elemPositions([]any{"matrix", "temperatures"})
		}
		e := pos.at([]any{"matrix", "temperatures"}, msg)
		e.Path = matchers.PathString([]any{"matrix", "temperatures", i})
		if i < len(at) && at[i].IsValid() && at[i].Filename() == pos.file {
			e.Line, e.Col = at[i].Line(), at[i].Column()
		}
		*errs = append(*errs, e)
	}
	uses := []backendUse{job}
	if j := c.Judge; j != nil {
		u := backendUse{
			at: []any{"judge", "backend"}, b: j.Backend, own: true,
			models:  []string{j.Model},
			modelAt: func(int) []any { return []any{"judge", "model"} },
			temps:   []float64{j.Temperature},
			temp: func(_ int, msg, fix string) {
				if !userSet(pos, "judge", "temperature") {
					msg += " (the default); set judge.temperature: " + fix
				}
				*errs = append(*errs, pos.at([]any{"judge", "temperature"}, msg))
			},
		}
		if u.b == nil {
			u.at, u.b, u.own = job.at, job.b, false
		}
		uses = append(uses, u)
	}
	sim := c.Simulator
	if sim == nil {
		return uses
	}
	u := backendUse{
		at: []any{"simulator", "backend"}, b: sim.Backend, own: true,
		models:  []string{sim.Model},
		modelAt: func(int) []any { return []any{"simulator", "model"} },
		temps:   []float64{sim.Temperature},
		temp: func(_ int, msg, fix string) {
			if !userSet(pos, "simulator", "temperature") {
				msg += " (the default); set simulator.temperature: " + fix
			}
			*errs = append(*errs, pos.at([]any{"simulator", "temperature"}, msg))
		},
	}
	if u.b == nil {
		u.at, u.b, u.own = job.at, job.b, false
	}
	return append(uses, u)
}
