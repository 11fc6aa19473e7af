package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

// TestMain lets testscript scripts run the real toolward command in-process
// as `exec toolward ...`.
//
// Each `exec toolward` is a new process of this test binary, about 270
// of them in the scripts. Under -race each process sleeps GORACE's
// atexit_sleep_ms before it exits (1 s by default, so that a race report
// being written by another goroutine gets out), which alone made the
// scripts take two minutes; 10 ms is still time to finish a report.
// testscript passes GORACE on to the scripts, and exec.Command inherits
// it; a GORACE that sets atexit_sleep_ms itself is left alone.
func TestMain(m *testing.M) {
	if g := os.Getenv("GORACE"); !strings.Contains(g, "atexit_sleep_ms") {
		os.Setenv("GORACE", strings.TrimSpace(g+" atexit_sleep_ms=10"))
	}
	testscript.Main(m, map[string]func(){
		"toolward": func() { os.Exit(Main(os.Args[1:], os.Stdout, os.Stderr)) },
	})
}

// TestScripts runs every testdata/script/*.txtar: end-to-end CLI behaviour
// (exit codes, stdout, stderr). Scripts start in $WORK; $REPO is the
// repository root, for scripts that need the real cases/, configs/ or
// fixtures/. Set UPDATE_SCRIPTS=1 to rewrite cmp'd golden files in place.
func TestScripts(t *testing.T) {
	repo, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	testscript.Run(t, testscript.Params{
		Dir:           "testdata/script",
		UpdateScripts: os.Getenv("UPDATE_SCRIPTS") != "",
		Setup: func(env *testscript.Env) error {
			env.Setenv("REPO", repo)
			return nil
		},
	})
}
