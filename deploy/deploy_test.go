// Package deploy_test checks the deployment files against the real
// binary, without Docker or Kubernetes: the Dockerfile's build steps are
// run as written, and the Kubernetes Jobs' scripts are run as the Jobs
// would run them.
package deploy_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"gopkg.in/yaml.v3"
)

// root is the repository root, relative to this package.
const root = ".."

// mirroredSteps returns the Dockerfile's RUN commands marked "# mirrored",
// continuation lines joined.
func mirroredSteps(t *testing.T) []string {
	t.Helper()
	src, err := os.ReadFile(filepath.Join(root, "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	var steps []string
	lines := strings.Split(strings.ReplaceAll(string(src), "\\\n", " "), "\n")
	for i, l := range lines {
		if !strings.HasPrefix(l, "# mirrored") {
			continue
		}
		j := i + 1
		for j < len(lines) && strings.HasPrefix(lines[j], "#") {
			j++ // the comment goes on
		}
		if j == len(lines) {
			t.Fatalf("Dockerfile line %d: a mirrored step without its RUN line", i+1)
		}
		run, ok := strings.CutPrefix(lines[j], "RUN ")
		if !ok {
			t.Fatalf("Dockerfile line %d: a mirrored step must be a RUN line, got %q", j+1, lines[j])
		}
		steps = append(steps, run)
	}
	if len(steps) != 3 || !strings.Contains(steps[0], "go build") {
		t.Fatalf("Dockerfile: want the go build, suite and check steps marked # mirrored, got %q", steps)
	}
	return steps
}

// buildImage runs the Dockerfile's mirrored steps with /out under dir,
// returning the binary and the suite directory, laid out as in the image.
func buildImage(t *testing.T, dir string) (bin, suite string) {
	t.Helper()
	out := filepath.Join(dir, "out")
	for _, step := range mirroredSteps(t) {
		cmd := exec.Command("sh", "-c", strings.ReplaceAll(step, "/out/", out+"/"))
		cmd.Dir = root
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("Dockerfile step %q: %v\n%s", step, err, b)
		}
	}
	return filepath.Join(out, "toolward"), filepath.Join(out, "suite")
}

// container is what a Job runs: its command line and environment.
type container struct {
	WorkingDir string   `yaml:"workingDir"`
	Command    []string `yaml:"command"`
	Args       []string `yaml:"args"`
	Env        []struct {
		Name  string `yaml:"name"`
		Value string `yaml:"value"`
	} `yaml:"env"`
}

type job struct {
	Kind string `yaml:"kind"`
	Spec struct {
		CompletionMode string `yaml:"completionMode"`
		Completions    int    `yaml:"completions"`
		Template       struct {
			Spec struct {
				Containers []container `yaml:"containers"`
			} `yaml:"spec"`
		} `yaml:"template"`
	} `yaml:"spec"`
}

func loadJob(t *testing.T, file string) job {
	t.Helper()
	src, err := os.ReadFile(filepath.Join(root, "deploy", "kubernetes", file))
	if err != nil {
		t.Fatal(err)
	}
	var j job
	if err := yaml.Unmarshal(src, &j); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	if j.Kind != "Job" || len(j.Spec.Template.Spec.Containers) != 1 {
		t.Fatalf("%s: want a Job with one container", file)
	}
	return j
}

// env is the container's environment as the manifest sets it, with the
// values in over replacing the manifest's (paths of the image that are
// elsewhere here); every name in over must be one the manifest sets.
func (c container) env(t *testing.T, base []string, over map[string]string) []string {
	t.Helper()
	env := slices.Clone(base)
	seen := map[string]bool{}
	for _, e := range c.Env {
		v := e.Value
		if o, ok := over[e.Name]; ok {
			v = o
			seen[e.Name] = true
		}
		env = append(env, e.Name+"="+v)
	}
	for k := range over {
		if !seen[k] {
			t.Fatalf("the manifest does not set %s", k)
		}
	}
	return env
}

func (c container) get(name string) string {
	for _, e := range c.Env {
		if e.Name == name {
			return e.Value
		}
	}
	return ""
}

// command is the container's command line, run in dir, killed when ctx
// is done.
func (c container) command(ctx context.Context, dir string, env []string) *exec.Cmd {
	argv := append(slices.Clone(c.Command), c.Args...)
	if _, err := os.Stat(argv[0]); err != nil {
		argv[0] = filepath.Base(argv[0]) // e.g. /bin/sh elsewhere on PATH
	}
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir, cmd.Env = dir, env
	return cmd
}

// outcome is what the comparison looks at in a record.
type outcome struct {
	Outcome string
	Reasons []string
}

func readRuns(t *testing.T, file string) map[string]outcome {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string]outcome{}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		var r struct {
			ID      string `json:"id"`
			Outcome string `json:"outcome"`
			Reasons []struct {
				Code string `json:"code"`
			} `json:"reasons"`
		}
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		if _, dup := out[r.ID]; dup {
			t.Fatalf("%s: run %s twice", file, r.ID)
		}
		o := outcome{Outcome: r.Outcome}
		for _, c := range r.Reasons {
			o.Reasons = append(o.Reasons, c.Code)
		}
		out[r.ID] = o
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// countLines counts complete lines of file (0 when it does not exist).
func countLines(file string) int {
	b, _ := os.ReadFile(file)
	return bytes.Count(b, []byte("\n"))
}

// simBound bounds the whole shard simulation (four shards, a kill and a
// resume, the merge and a single-process run of the plan).
const simBound = 5 * time.Minute

// simConfig is the offline demo with more seeds, so that a shard runs
// long enough to be killed part-way.
func simConfig(t *testing.T, suite string) string {
	t.Helper()
	demo, err := os.ReadFile(filepath.Join(suite, "configs", "demo.cue"))
	if err != nil {
		t.Fatal(err)
	}
	seeds := make([]string, 20)
	for i := range seeds {
		seeds[i] = strconv.Itoa(i + 1)
	}
	src := strings.Replace(string(demo), "seeds: [1, 2]", "seeds: ["+strings.Join(seeds, ", ")+"]", 1)
	src = strings.Replace(src, `name:  "demo"`, `name:  "shardsim"`, 1)
	if src == string(demo) || !strings.Contains(src, "shardsim") {
		t.Fatal("configs/demo.cue changed shape: update simConfig")
	}
	name := filepath.Join("configs", "shardsim.cue")
	if err := os.WriteFile(filepath.Join(suite, name), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return name
}

// TestKubernetesShardSimulation builds the image's contents as the
// Dockerfile does, then runs the Indexed Job of deploy/kubernetes/job.yaml
// as Kubernetes would: one process per index with JOB_COMPLETION_INDEX
// set, the manifest's own command line and environment (only paths
// changed), in the image's read-only /suite. One shard is SIGKILLed after
// it has recorded some runs and started again, as the Job's retry would;
// merge-job.yaml joins the shards. The merged runs must be those of one
// process running the whole plan: the same run ids with the same
// outcomes and reasons.
func TestKubernetesShardSimulation(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh")
	}
	tmp := t.TempDir()
	bin, suite := buildImage(t, tmp)
	config := simConfig(t, suite)
	// The simulation has a bound of its own, well inside go test's
	// 10-minute default: every process it starts is killed at simBound,
	// and the test says so rather than hang the package.
	ctx, cancel := context.WithTimeout(context.Background(), simBound)
	defer cancel()
	t.Cleanup(func() {
		if ctx.Err() == context.DeadlineExceeded {
			t.Errorf("the shard simulation passed its bound of %v: its processes were killed", simBound)
		}
	})
	// The image's /suite is read-only to the pods (readOnlyRootFilesystem).
	if err := os.Chmod(suite, 0o555); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(suite, 0o755) })

	shards := loadJob(t, "job.yaml")
	if shards.Spec.CompletionMode != "Indexed" {
		t.Fatalf("job.yaml: completionMode %q, want Indexed", shards.Spec.CompletionMode)
	}
	c := shards.Spec.Template.Spec.Containers[0]
	n := shards.Spec.Completions
	if got := c.get("TOOLWARD_SHARDS"); got != strconv.Itoa(n) {
		t.Fatalf("job.yaml: TOOLWARD_SHARDS %q, completions %d: keep them equal", got, n)
	}
	if c.WorkingDir != "/suite" {
		t.Fatalf("job.yaml: workingDir %q, want the image's /suite", c.WorkingDir)
	}
	results := filepath.Join(tmp, "results")
	base := []string{
		"PATH=" + filepath.Dir(bin) + string(os.PathListSeparator) + os.Getenv("PATH"),
		"HOME=" + suite, "TMPDIR=" + filepath.Join(tmp), // as in the image: a read-only home, /tmp writable
	}
	env := c.env(t, base, map[string]string{"TOOLWARD_CONFIG": config, "TOOLWARD_RESULTS": results})

	pod := func(i int) *exec.Cmd {
		cmd := c.command(ctx, suite, append(slices.Clone(env), "JOB_COMPLETION_INDEX="+strconv.Itoa(i)))
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		return cmd
	}
	shardDir := func(i int) string { return filepath.Join(results, "shard-"+strconv.Itoa(i)) }
	const victim = 1
	cmds := make([]*exec.Cmd, n)
	for i := range n {
		cmds[i] = pod(i)
		if err := cmds[i].Start(); err != nil {
			t.Fatal(err)
		}
	}

	// Kill the victim once it has recorded a run, as a preempted node
	// would: no signal it can catch.
	runs := filepath.Join(shardDir(victim), "runs.jsonl")
	exited := make(chan error, 1)
	go func() { exited <- cmds[victim].Wait() }()
	var werr error
	killed := false
wait:
	for {
		select {
		case werr = <-exited:
			break wait
		default:
		}
		if countLines(runs) > 0 {
			if err := cmds[victim].Process.Signal(syscall.SIGKILL); err == nil {
				killed = true
			}
			werr = <-exited
			break
		}
		time.Sleep(2 * time.Millisecond)
	}
	var ee *exec.ExitError
	if !killed || !errors.As(werr, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("shard %d was not killed part-way (it ended with %v): make simConfig's plan bigger\n%s", victim, werr, cmds[victim].Stdout)
	}
	partial := countLines(runs)
	for i, cmd := range cmds {
		if i == victim {
			continue
		}
		if err := cmd.Wait(); err != nil {
			t.Fatalf("shard %d: %v\n%s", i, err, cmd.Stdout)
		}
	}

	// The Job's retry: the same pod again, which resumes the shard.
	retry := pod(victim)
	if err := retry.Run(); err != nil {
		t.Fatalf("retried shard %d: %v\n%s", victim, err, retry.Stdout)
	}
	if !strings.Contains(fmt.Sprint(retry.Stdout), "already done") {
		t.Errorf("the retry did not resume:\n%s", retry.Stdout)
	}
	done := countLines(runs)
	if done <= partial {
		t.Fatalf("resume added no runs (%d before, %d after)", partial, done)
	}
	// A retry of a finished shard runs nothing and succeeds.
	again := pod(victim)
	if err := again.Run(); err != nil {
		t.Fatalf("second retry of shard %d: %v\n%s", victim, err, again.Stdout)
	}
	if countLines(runs) != done {
		t.Fatalf("a retry of a finished shard ran again")
	}

	mj := loadJob(t, "merge-job.yaml")
	mc := mj.Spec.Template.Spec.Containers[0]
	if got := mc.get("TOOLWARD_SHARDS"); got != strconv.Itoa(n) {
		t.Fatalf("merge-job.yaml: TOOLWARD_SHARDS %q, job.yaml has %d shards", got, n)
	}
	if mc.get("TOOLWARD_RESULTS") != c.get("TOOLWARD_RESULTS") {
		t.Fatalf("merge-job.yaml and job.yaml disagree on TOOLWARD_RESULTS")
	}
	merge := mc.command(ctx, suite, mc.env(t, base, map[string]string{"TOOLWARD_RESULTS": results}))
	if b, err := merge.CombinedOutput(); err != nil {
		t.Fatalf("merge: %v\n%s", err, b)
	}

	single := exec.CommandContext(ctx, bin, "run", "--out", filepath.Join(tmp, "single"), config)
	single.Dir, single.Env = suite, base
	if b, err := single.CombinedOutput(); err != nil {
		t.Fatalf("single run: %v\n%s", err, b)
	}
	want := readRuns(t, filepath.Join(tmp, "single", "runs.jsonl"))
	got := readRuns(t, filepath.Join(results, "merged", "runs.jsonl"))
	if len(want) != 9*20*2*2*2*2 {
		t.Fatalf("single run has %d runs", len(want))
	}
	if !reflect.DeepEqual(got, want) {
		diffs := 0
		for id, w := range want {
			if g, ok := got[id]; !ok || !reflect.DeepEqual(g, w) {
				if diffs++; diffs <= 5 {
					t.Errorf("run %s: merged %+v, single %+v", id, g, w)
				}
			}
		}
		t.Fatalf("merged %d runs, single %d; %d differ", len(got), len(want), diffs)
	}
}

// TestGitHubActionsMatrix checks what can be checked of the workflow
// without GitHub: it parses, its matrix lists the shards 0..SHARDS-1, the
// shard step runs --shard with the matrix value, and the merge job waits
// for the shards and runs even when some failed.
func TestGitHubActionsMatrix(t *testing.T) {
	src, err := os.ReadFile(filepath.Join(root, "deploy", "github-actions", "toolward-matrix.yml"))
	if err != nil {
		t.Fatal(err)
	}
	type step struct {
		Run string `yaml:"run"`
	}
	var wf struct {
		Env  map[string]string `yaml:"env"`
		Jobs map[string]struct {
			Needs    any    `yaml:"needs"`
			If       string `yaml:"if"`
			Strategy struct {
				Matrix struct {
					Shard []int `yaml:"shard"`
				} `yaml:"matrix"`
			} `yaml:"strategy"`
			Steps []step `yaml:"steps"`
		} `yaml:"jobs"`
	}
	if err := yaml.Unmarshal(src, &wf); err != nil {
		t.Fatal(err)
	}
	n, err := strconv.Atoi(wf.Env["SHARDS"])
	if err != nil {
		t.Fatalf("env.SHARDS: %v", err)
	}
	shard, merge := wf.Jobs["shard"], wf.Jobs["merge"]
	var want []int
	for i := range n {
		want = append(want, i)
	}
	if !slices.Equal(shard.Strategy.Matrix.Shard, want) {
		t.Errorf("matrix.shard %v, want %v (env.SHARDS %d)", shard.Strategy.Matrix.Shard, want, n)
	}
	if !slices.ContainsFunc(shard.Steps, func(s step) bool {
		return strings.Contains(s.Run, `--shard "${{ matrix.shard }}/$SHARDS"`)
	}) {
		t.Error("no shard step runs --shard with the matrix value")
	}
	if merge.Needs != "shard" || merge.If != "always()" {
		t.Errorf("merge job: needs %v, if %q; want needs shard, if always()", merge.Needs, merge.If)
	}
	if !slices.ContainsFunc(merge.Steps, func(s step) bool { return strings.Contains(s.Run, "toolward merge out/merged out/shard-*") }) {
		t.Error("the merge job does not merge the shards")
	}
}
