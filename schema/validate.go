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
// result is sorted and empty when all is well.
func Validate(paths []string) Errors {
	var caseFiles, configFiles []string
	var errs Errors
	seen := map[string]bool{}
	addFile := func(p string) {
		p = filepath.Clean(p)
		if seen[p] {
			return
		}
		seen[p] = true
		switch strings.ToLower(filepath.Ext(p)) {
		case ".yaml", ".yml":
			caseFiles = append(caseFiles, p)
		case ".cue":
			configFiles = append(configFiles, p)
		}
	}
	for _, p := range paths {
		fi, err := os.Stat(p)
		if err != nil {
			errs = append(errs, &Error{File: p, Msg: errMsg(err)})
			continue
		}
		if !fi.IsDir() {
			switch strings.ToLower(filepath.Ext(p)) {
			case ".yaml", ".yml", ".cue":
				addFile(p)
			default:
				errs = append(errs, &Error{File: p, Msg: "not a case file (.yaml, .yml) or config (.cue)"})
			}
			continue
		}
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
			addFile(q)
			return nil
		})
		if err != nil {
			errs = append(errs, &Error{File: p, Msg: err.Error()})
		}
	}
	_, cerrs := loadCaseFiles(caseFiles)
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
	return errs.Sort()
}
