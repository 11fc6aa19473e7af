package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ollama/ollama/api"

	"github.com/toolward/toolward/fixtures/fakes/fakeollama"
	"github.com/toolward/toolward/internal/analysis/rescore"
)

// TestScoreAndResumeSendNoModelRequest is issue 9's "done when": run
// against a model (a fake Ollama over loopback that counts chat
// requests), edit an answer matcher of one case, and `toolward score`
// reports changed verdicts for that case only while the model gets no
// request; `toolward run --resume` after the same edit sends none either.
func TestScoreAndResumeSendNoModelRequest(t *testing.T) {
	fake := fakeollama.Start(t, fakeollama.Options{Script: func(req *api.ChatRequest) fakeollama.Reply {
		if strings.Contains(req.Messages[len(req.Messages)-1].Content, "hi") {
			return fakeollama.Reply{Content: "Hello!"}
		}
		return fakeollama.Reply{Content: "Goodbye!"}
	}})
	t.Chdir(t.TempDir())
	os.MkdirAll("cases", 0o755)
	const hi = "id: hi\nprompt: Say hi.\nexpect:\n  no_calls: true\n  answer: {$contains: Hello}\n"
	os.WriteFile("cases/hi.yaml", []byte(hi), 0o644)
	os.WriteFile("cases/bye.yaml", []byte("id: bye\nprompt: Say bye.\nexpect:\n  no_calls: true\n  answer: {$contains: Goodbye}\n"), 0o644)
	os.WriteFile("model.cue", []byte(fmt.Sprintf(`
name: "model"
cases: ["cases/*.yaml"]
server: builtin: {}
backend: ollama: host: %q
matrix: {models: [%q], seeds: [1, 2, 3]}
`, fake.URL, fakeollama.DefaultModel)), 0o644)
	run := func(want int, args ...string) (string, string) {
		t.Helper()
		var stdout, stderr strings.Builder
		if code := Main(args, &stdout, &stderr); code != want {
			t.Fatalf("toolward %s: exit %d, want %d\n%s%s", strings.Join(args, " "), code, want, stdout.String(), stderr.String())
		}
		return stdout.String(), stderr.String()
	}
	run(0, "run", "model.cue", "--out", "res")
	ran := len(fake.Requests())
	if ran != 6 {
		t.Fatalf("%d chat requests for 6 runs", ran)
	}

	os.WriteFile("cases/hi.yaml", []byte(strings.Replace(hi, "{$contains: Hello}", "{$contains: Howdy}", 1)), 0o644)
	out, _ := run(0, "score", "res", "--out", "res2")
	for _, want := range []string{"re-scored 6 runs of res\n", "  hi: 3 of 3 verdicts changed (3 pass → fail)\n", "  no verdict changed in the other 1 case\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("score output lacks %q:\n%s", want, out)
		}
	}
	if n := len(fake.Requests()); n != ran {
		t.Fatalf("toolward score sent %d model requests", n-ran)
	}

	_, errs := run(0, "run", "--resume", "res")
	if n := len(fake.Requests()); n != ran {
		t.Fatalf("toolward run --resume after a matcher edit sent %d model requests", n-ran)
	}
	if !strings.Contains(errs, "resume: case hi changed how runs are judged: 3 finished runs re-scored, no model request") {
		t.Errorf("resume output:\n%s", errs)
	}
	b, _ := os.ReadFile(filepath.Join("res", "report.md"))
	if !strings.Contains(string(b), "answer_mismatch") {
		t.Errorf("the resumed report does not show the re-scored failures")
	}
}

// TestPrintScoredReasonsApart: a failing run that fails with other
// reasons kept its verdict; score counts it apart from the verdicts that
// changed (it said "1 of 3 verdicts changed (1 fail with other reasons)").
func TestPrintScoredReasonsApart(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	printScored(&b, "res", &rescore.DirResult{Rescored: 6, Cases: []rescore.CaseResult{
		{Case: "only-reasons", Runs: 3, Reasons: 1},
		{Case: "both", Runs: 3, PassToFail: 1, Reasons: 2},
	}})
	want := "re-scored 6 runs of res\n" +
		"  only-reasons: no verdict of 3 changed; reasons changed only: 1 still failing\n" +
		"  both: 1 of 3 verdicts changed (1 pass → fail); reasons changed only: 2 still failing\n"
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
}
