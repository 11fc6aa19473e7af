package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/toolward/toolward/engine"
	"github.com/toolward/toolward/engine/judge"
	"github.com/toolward/toolward/internal/analysis/stats"
	"github.com/toolward/toolward/schema"
)

func init() {
	register(&command{name: "judge-check", summary: "measure a config's judge against the labelled answers of its cases: agreement, kappa, consistency", run: runJudgeCheck})
}

const judgeCheckUsage = `usage: toolward judge-check [--samples K] CONFIG

Judge-check measures CONFIG's judge before its verdicts are trusted. Each
labelled answer of the cases (calibration: [{answer, verdict, where?}],
verdicts a person gave) is put to the judge K times (seeds 1 to K), as a
judged answer of a run would be; so is each case's golden answer, which
must pass its own judge. For each rubric (a case's judged answer) it
prints:

  agree       how often the judge's majority verdict is the person's
  kappa       Cohen's kappa: agreement beyond what the two rates of pass
              give by chance (1 perfect, 0 chance, n/a when every
              answer got one verdict)
  base        the share of labelled answers the person passed: a judge
              that passes everything agrees that often
  consistent  the share of answers whose K votes were unanimous (the
              judge's self-consistency)
  golden      the judge's verdict on the golden answer

then the answers the judge got wrong, with its reason, and the judge's
requests, tokens and time. No model under test and no MCP server is
contacted.

Exit status: 0 when every golden answer passes and the judge answered
every request; 1 otherwise, or on an error; 2 on a usage error.

Flags:
`

func runJudgeCheck(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("judge-check", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, judgeCheckUsage); fs.PrintDefaults() }
	samples := fs.Int("samples", 0, "ask the judge `K` times per answer; 0 means the config's judge.samples, at least 3")
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if len(pos) != 1 || *samples < 0 {
		fmt.Fprintln(stderr, "toolward judge-check: want one CONFIG (and --samples 0 or more)")
		fs.Usage()
		return 2
	}
	l, err := engine.Load(pos[0], nil, "")
	if err != nil {
		fmt.Fprintln(stderr, "toolward judge-check:", err)
		return 1
	}
	jc := l.Config.Judge
	if jc == nil {
		fmt.Fprintf(stderr, "toolward judge-check: %s names no judge: add judge: {model: \"…\"}\n", pos[0])
		return 1
	}
	if dir := judgeReplay(l.Config); dir != "" {
		fmt.Fprintf(stderr, "toolward judge-check: the judge of %s replays from the cassettes in %s, which answer by position, not by what they are asked: "+
			"judge-check measures a live judge; point judge.backend at the judge model's server (see docs/judge.md)\n", pos[0], dir)
		return 1
	}
	k := *samples
	if k == 0 {
		k = max(jc.Samples, 3)
	}
	ctx := context.Background()
	j, err := engine.OpenJudge(ctx, l.Config, nil)
	if err != nil {
		fmt.Fprintln(stderr, "toolward judge-check:", err)
		return 1
	}
	start := time.Now()
	rubrics, err := judge.Check(ctx, l.Plan.Cases(), l.Rules, j, k)
	if err != nil {
		fmt.Fprintln(stderr, "toolward judge-check:", err)
		return 1
	}
	if len(rubrics) == 0 {
		fmt.Fprintf(stderr, "toolward judge-check: no case of %s has a judged answer with labelled answers (calibration) or a golden answer\n", pos[0])
		return 1
	}
	fmt.Fprintf(stdout, "judge %s (temperature %g), %d votes per answer\n\n", jc.Model, jc.Temperature, k)
	return printJudgeCheck(stdout, rubrics, time.Since(start))
}

// judgeReplay is the replay directory cfg's judge answers from, or "".
func judgeReplay(cfg *schema.Config) string {
	if b := cfg.Judge.Backend; b != nil {
		return b.Replay
	}
	return cfg.Backend.Replay
}

// printJudgeCheck writes the table, the disagreements and the judge's
// cost, and returns the exit code.
func printJudgeCheck(w io.Writer, rubrics []judge.Rubric, took time.Duration) int {
	code := 0
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "rubric\tanswers\tagree\tkappa\tbase\tconsistent\tgolden")
	var wrong []string
	var requests, in, out int
	var latency float64
	count := func(e *judge.Example) {
		for _, v := range e.Judgement.Votes {
			requests++
			in, out, latency = in+v.Tokens.In, out+v.Tokens.Out, latency+float64(v.Latency)
		}
	}
	var warned []string
	for _, r := range rubrics {
		var got, want []bool
		unanimous, failed := 0, 0
		for i := range r.Examples {
			e := &r.Examples[i]
			count(e)
			if e.Err != nil {
				failed++
				wrong = append(wrong, fmt.Sprintf("  %s %s #%d: the judge failed: %v", r.Case, r.Where, i+1, e.Err))
				continue
			}
			got, want = append(got, e.Judgement.Pass), append(want, e.Label)
			if e.Unanimous() {
				unanimous++
			}
			if e.Judgement.Pass != e.Label {
				wrong = append(wrong, fmt.Sprintf("  %s %s #%d: labelled %s, judged %s (%s): %q", r.Case, r.Where, i+1, verdictWord(e.Label), verdictWord(e.Judgement.Pass), e.Judgement.Reason, clipText(e.Answer, 80)))
			}
		}
		agree, kappa, base, consistent := "-", "-", "-", "-"
		if len(got) > 0 {
			a := stats.Kappa(got, want)
			agree, base = pct(a.Observed), pct(a.BaseRate)+" pass"
			kappa = "n/a"
			if a.KappaOK {
				kappa = fmt.Sprintf("%.2f", a.Kappa)
			}
			consistent = pct(float64(unanimous) / float64(len(got)))
			for _, e := range a.Warnings {
				warned = append(warned, fmt.Sprintf("  %s %s: %v", r.Case, r.Where, e))
			}
		}
		golden := "-"
		if g := r.Golden; g != nil {
			count(g)
			switch {
			case g.Err != nil:
				golden, code = "error", 1
				wrong = append(wrong, fmt.Sprintf("  %s %s golden: the judge failed: %v", r.Case, r.Where, g.Err))
			case g.Judgement.Pass:
				golden = "pass"
			default:
				golden, code = "FAIL", 1
				wrong = append(wrong, fmt.Sprintf("  %s %s golden: the case's golden answer fails its own judge (%s)", r.Case, r.Where, g.Judgement.Reason))
			}
		}
		if failed > 0 {
			code = 1
		}
		fmt.Fprintf(tw, "%s %s\t%d\t%s\t%s\t%s\t%s\t%s\n", r.Case, r.Where, len(r.Examples), agree, kappa, base, consistent, golden)
	}
	tw.Flush()
	if len(wrong) > 0 {
		fmt.Fprintf(w, "\nwhere the judge and the labels differ:\n%s\n", strings.Join(wrong, "\n"))
	}
	if len(warned) > 0 {
		fmt.Fprintf(w, "\nwarnings:\n%s\n", strings.Join(warned, "\n"))
	}
	fmt.Fprintf(w, "\njudge: %s, %d tokens in, %d out, %.1f s of judge latency (%.1f s wall)\n", plural(requests, "request"), in, out, latency/1000, took.Seconds())
	return code
}

func verdictWord(pass bool) string {
	if pass {
		return "pass"
	}
	return "fail"
}

func pct(f float64) string { return fmt.Sprintf("%.0f%%", 100*f) }

// clipText shortens s to n runes for a line of output.
func clipText(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}
