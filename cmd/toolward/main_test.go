package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/toolward/toolward/fixtures/fakes/raceexit"
)

// TestMain lets testscript scripts run the real toolward command in-process
// as `exec toolward ...`.
//
// Each `exec toolward` is a new process of this test binary, about 270
// of them in the scripts; under -race each waited a second before it
// exited (see package raceexit), which alone made the scripts take two
// minutes. testscript passes GORACE on to the scripts, and exec.Command
// inherits it. A `toolward serve` that toolward starts as a command
// server gets only the variables of session.InheritedEnv, GORACE not
// among them: it starts itself again with GORACE set.
func TestMain(m *testing.M) {
	if filepath.Base(os.Args[0]) == "toolward" {
		raceexit.Restart()
	}
	raceexit.Setenv()
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
