package lookup

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"time"
)

// Limits on one lookup.
const (
	Timeout = 5 * time.Second
	MaxBody = 1 << 20
)

// Client fetches from the two services.
type Client struct {
	HTTP     *http.Client // nil means a client with Timeout
	DriftURL string       // base URL of the drift service
	RunsURL  string       // base URL of the runs service
}

func (c *Client) get(ctx context.Context, base string, what string, path ...string) ([]byte, error) {
	if base == "" {
		return nil, fmt.Errorf("no %s service configured", what)
	}
	u, err := url.Parse(strings.TrimRight(base, "/"))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
		return nil, fmt.Errorf("%s service URL %q is not an http(s) URL", what, base)
	}
	// Each name is one path segment: escaped, and never a dot segment,
	// so a model-chosen name cannot walk to another path of the service.
	for _, p := range path {
		if p == "." || p == ".." {
			return nil, fmt.Errorf("%q is not a valid name", p)
		}
		u = u.JoinPath(url.PathEscape(p))
	}
	ctx, cancel := context.WithTimeout(ctx, Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, fmt.Errorf("%s service: %v", what, err)
	}
	req.Header.Set("Accept", "application/json")
	hc := c.HTTP
	if hc == nil {
		hc = &http.Client{Timeout: Timeout}
	}
	resp, err := hc.Do(req)
	if err != nil {
		var ne interface{ Timeout() bool }
		if errors.Is(err, context.DeadlineExceeded) || errors.As(err, &ne) && ne.Timeout() {
			return nil, fmt.Errorf("%s service did not answer in time: %v", what, err)
		}
		return nil, fmt.Errorf("%s service unreachable: %v", what, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, MaxBody+1))
	if err != nil {
		return nil, fmt.Errorf("%s service: reading response: %v", what, err)
	}
	if len(body) > MaxBody {
		return nil, fmt.Errorf("%s service response is larger than %d bytes", what, MaxBody)
	}
	if resp.StatusCode == http.StatusNotFound {
		return nil, &NotFoundError{What: what, Name: path[len(path)-1]}
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s service answered %s", what, resp.Status)
	}
	return body, nil
}

// NotFoundError is a 404 from a service.
type NotFoundError struct{ What, Name string }

func (e *NotFoundError) Error() string {
	return fmt.Sprintf("%s service knows nothing about %q", e.What, e.Name)
}

func decode(body []byte, what string, v any) error {
	if err := json.Unmarshal(body, v); err != nil {
		return fmt.Errorf("%s service sent malformed JSON: %v", what, err)
	}
	return nil
}

// Point is one measurement of a model.
type Point struct {
	Date    string  `json:"date"`
	Version string  `json:"version,omitempty"`
	Score   float64 `json:"score"`
}

// Drift summarises one model's history.
type Drift struct {
	Model     string  `json:"model"`
	Metric    string  `json:"metric"`
	Points    int     `json:"points"`
	First     Point   `json:"first"`
	Last      Point   `json:"last"`
	Change    float64 `json:"change"`          // Last.Score - First.Score
	BiggestAt string  `json:"biggest_move_at"` // date of the point after the largest single move
	Biggest   float64 `json:"biggest_move"`    // that move, signed
	Versions  int     `json:"versions"`        // distinct model versions seen
	Summary   string  `json:"summary"`
}

// DriftResult is model_drift's structured result.
type DriftResult struct {
	Models  []Drift `json:"models"`
	Summary string  `json:"summary"`
}

type modelHistory struct {
	Model  string  `json:"model"`
	Metric string  `json:"metric"`
	Points []Point `json:"points"`
}

// ModelDrift looks up one model, or every model when model is "".
func (c *Client) ModelDrift(ctx context.Context, model string) (*DriftResult, error) {
	var names []string
	if model != "" {
		names = []string{model}
	} else {
		body, err := c.get(ctx, c.DriftURL, "drift", "models")
		if err != nil {
			return nil, err
		}
		var list struct {
			Models []string `json:"models"`
		}
		if err := decode(body, "drift", &list); err != nil {
			return nil, err
		}
		if len(list.Models) == 0 {
			return nil, errors.New("drift service lists no models")
		}
		names = list.Models
	}
	res := &DriftResult{}
	for _, name := range names {
		body, err := c.get(ctx, c.DriftURL, "drift", "models", name)
		if err != nil {
			return nil, err
		}
		var h modelHistory
		if err := decode(body, "drift", &h); err != nil {
			return nil, err
		}
		if h.Model == "" {
			h.Model = name
		}
		d, err := summariseDrift(h)
		if err != nil {
			return nil, err
		}
		res.Models = append(res.Models, d)
	}
	sort.SliceStable(res.Models, func(i, j int) bool { return math.Abs(res.Models[i].Change) > math.Abs(res.Models[j].Change) })
	var lines []string
	for _, d := range res.Models {
		lines = append(lines, d.Summary)
	}
	if len(res.Models) > 1 {
		lines = append([]string{fmt.Sprintf("%d models, largest change first:", len(res.Models))}, lines...)
	}
	res.Summary = strings.Join(lines, "\n")
	return res, nil
}

func round(v float64, digits int) float64 {
	p := math.Pow(10, float64(digits))
	return math.Round(v*p) / p
}

func summariseDrift(h modelHistory) (Drift, error) {
	if len(h.Points) == 0 {
		return Drift{}, fmt.Errorf("drift service has no measurements for %q", h.Model)
	}
	pts := append([]Point(nil), h.Points...)
	sort.SliceStable(pts, func(i, j int) bool { return pts[i].Date < pts[j].Date })
	metric := h.Metric
	if metric == "" {
		metric = "score"
	}
	d := Drift{Model: h.Model, Metric: metric, Points: len(pts), First: pts[0], Last: pts[len(pts)-1]}
	d.Change = round(d.Last.Score-d.First.Score, 4)
	versions := map[string]bool{}
	for i, p := range pts {
		if p.Version != "" {
			versions[p.Version] = true
		}
		if i > 0 {
			if mv := round(p.Score-pts[i-1].Score, 4); math.Abs(mv) > math.Abs(d.Biggest) {
				d.Biggest, d.BiggestAt = mv, p.Date
			}
		}
	}
	d.Versions = len(versions)
	trend := "stable"
	switch {
	case d.Change <= -0.03:
		trend = "regressed"
	case d.Change >= 0.03:
		trend = "improved"
	}
	d.Summary = fmt.Sprintf("%s %s: %s from %.2f (%s) to %.2f (%s), change %+.2f over %d measurements",
		d.Model, metric, trend, d.First.Score, d.First.Date, d.Last.Score, d.Last.Date, d.Change, d.Points)
	if d.BiggestAt != "" {
		d.Summary += fmt.Sprintf("; largest single move %+.2f on %s", d.Biggest, d.BiggestAt)
		for i := 1; i < len(pts); i++ {
			if pts[i].Date == d.BiggestAt && pts[i].Version != pts[i-1].Version && pts[i].Version != "" {
				d.Summary += fmt.Sprintf(", when the model version changed from %s to %s", pts[i-1].Version, pts[i].Version)
				break
			}
		}
	}
	d.Summary += "."
	return d, nil
}

// RunInfo identifies one run in a comparison.
type RunInfo struct {
	Run    string `json:"run"`
	Model  string `json:"model,omitempty"`
	Commit string `json:"commit,omitempty"`
}

// Comparison is compare_runs's structured result.
type Comparison struct {
	Project      string   `json:"project"`
	Base         RunInfo  `json:"base"`
	New          RunInfo  `json:"new"`
	Cases        int      `json:"cases"`
	BasePassed   int      `json:"base_passed"`
	NewPassed    int      `json:"new_passed"`
	Regressed    []string `json:"regressed"`       // pass → fail
	Fixed        []string `json:"fixed"`           // fail → pass
	StillFailing []string `json:"still_failing"`   // fail → fail
	OnlyInOneRun []string `json:"only_in_one_run"` // missing from base or new
	Summary      string   `json:"summary"`
}

type compareBody struct {
	Project string  `json:"project"`
	Base    RunInfo `json:"base"`
	New     RunInfo `json:"new"`
	Cases   []struct {
		ID   string  `json:"id"`
		Base *string `json:"base"`
		New  *string `json:"new"`
	} `json:"cases"`
}

// CompareRuns looks up a project's latest base/new comparison.
func (c *Client) CompareRuns(ctx context.Context, project string) (*Comparison, error) {
	if strings.TrimSpace(project) == "" {
		return nil, errors.New("project must not be empty")
	}
	body, err := c.get(ctx, c.RunsURL, "runs", "projects", project, "compare")
	if err != nil {
		var nf *NotFoundError
		if errors.As(err, &nf) {
			nf.Name = project
		}
		return nil, err
	}
	var cb compareBody
	if err := decode(body, "runs", &cb); err != nil {
		return nil, err
	}
	if len(cb.Cases) == 0 {
		return nil, fmt.Errorf("runs service has no cases for project %q", project)
	}
	cmp := &Comparison{Project: project, Base: cb.Base, New: cb.New,
		Regressed: []string{}, Fixed: []string{}, StillFailing: []string{}, OnlyInOneRun: []string{}}
	for _, cs := range cb.Cases {
		cmp.Cases++
		if cs.Base == nil || cs.New == nil {
			cmp.OnlyInOneRun = append(cmp.OnlyInOneRun, cs.ID)
		}
		bp := cs.Base != nil && *cs.Base == "pass"
		np := cs.New != nil && *cs.New == "pass"
		if bp {
			cmp.BasePassed++
		}
		if np {
			cmp.NewPassed++
		}
		if cs.Base == nil || cs.New == nil {
			continue
		}
		switch {
		case bp && !np:
			cmp.Regressed = append(cmp.Regressed, cs.ID)
		case !bp && np:
			cmp.Fixed = append(cmp.Fixed, cs.ID)
		case !bp && !np:
			cmp.StillFailing = append(cmp.StillFailing, cs.ID)
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %d of %d cases passed in the base run (%s), %d of %d in the new run (%s).",
		project, cmp.BasePassed, cmp.Cases, describe(cb.Base), cmp.NewPassed, cmp.Cases, describe(cb.New))
	list := func(label string, ids []string) {
		if len(ids) > 0 {
			fmt.Fprintf(&b, " %s (%d): %s.", label, len(ids), strings.Join(ids, ", "))
		}
	}
	if len(cmp.Regressed) == 0 {
		b.WriteString(" No case regressed.")
	}
	list("Regressed, passed before and fails now", cmp.Regressed)
	list("Fixed, failed before and passes now", cmp.Fixed)
	list("Still failing", cmp.StillFailing)
	list("Present in only one run", cmp.OnlyInOneRun)
	cmp.Summary = b.String()
	return cmp, nil
}

func describe(r RunInfo) string {
	parts := []string{}
	for _, p := range []string{r.Run, r.Model, r.Commit} {
		if p != "" {
			parts = append(parts, p)
		}
	}
	if len(parts) == 0 {
		return "unidentified"
	}
	return strings.Join(parts, ", ")
}
