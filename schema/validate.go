package schema

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Validate checks case files (*.yaml, *.yml) and run configs (*.cue)
// named by paths; a directory is walked for such files (hidden
// directories are skipped). It reports every mistake: schema and matcher
// errors with positions, duplicate case ids across all the files, needs
// that omit an expected tool, golden trajectories the case's base
// expectations reject, and config references that do not resolve. The
// result is sorted and empty when all is well. A named directory that
// holds no case file or config is a mistake too: it is usually a wrong
// path, and a silent success would hide it.
func Validate(paths []string) Errors {
	_, errs := Check(paths)
	return errs
}

// Summary counts what Check looked at.
type Summary struct {
	CaseFiles int // case files read
	Cases     int // valid case documents in them
	Configs   int // configs read
}

// Check is Validate that also counts the files and cases it checked, for
// a summary line.
func Check(paths []string) (Summary, Errors) {
	var caseFiles, configFiles []string
	var errs Errors
	seen := map[string]bool{}
	// addFile adds p if it is a case file or config and reports whether
	// it is one.
	addFile := func(p string) bool {
		p = filepath.Clean(p)
		ext := strings.ToLower(filepath.Ext(p))
		if ext != ".yaml" && ext != ".yml" && ext != ".cue" {
			return false
		}
		if !seen[p] {
			seen[p] = true
			if ext == ".cue" {
				configFiles = append(configFiles, p)
			} else {
				caseFiles = append(caseFiles, p)
			}
		}
		return true
	}
	for _, p := range paths {
		fi, err := os.Stat(p)
		if err != nil {
			errs = append(errs, &Error{File: p, Msg: errMsg(err)})
			continue
		}
		if !fi.IsDir() {
			if !addFile(p) {
				errs = append(errs, &Error{File: p, Msg: "not a case file (.yaml, .yml) or config (.cue)"})
			}
			continue
		}
		found := false
		err = filepath.WalkDir(p, func(q string, d fs.DirEntry, err error) error {
			if err != nil {
				errs = append(errs, &Error{File: q, Msg: errMsg(err)})
				return nil
			}
			if d.IsDir() {
				if q != p && strings.HasPrefix(d.Name(), ".") {
					return fs.SkipDir
				}
				return nil
			}
			if addFile(q) {
				found = true
			}
			return nil
		})
		if err != nil {
			errs = append(errs, &Error{File: p, Msg: err.Error()})
		}
		if !found {
			errs = append(errs, &Error{File: p, Msg: "no case files (.yaml, .yml) or configs (.cue) in this directory"})
		}
	}
	cases, cerrs := loadCaseFiles(caseFiles)
	errs = append(errs, cerrs...)
	for _, f := range configFiles {
		if _, err := LoadConfig(f); err != nil {
			if es, ok := err.(Errors); ok {
				errs = append(errs, es...)
			} else {
				errs = append(errs, &Error{File: f, Msg: err.Error()})
			}
		}
	}
	return Summary{CaseFiles: len(caseFiles), Cases: len(cases), Configs: len(configFiles)}, errs.Sort()
}
