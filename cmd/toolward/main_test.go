package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

// TestMain lets testscript scripts run the real toolward command in-process
// as `exec toolward ...`.
func TestMain(m *testing.M) {
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
