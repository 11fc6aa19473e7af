package schema

import (
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// Glob returns the paths matching pattern, sorted: the files (anything
// but a directory) under the pattern's directory that match it, or the
// one path a pattern without metacharacters names, if it exists. The pattern
// uses path.Match syntax per path segment, with forward slashes, plus
// "**" as a whole segment matching zero or more directories
// ("cases/**/*.yaml" matches cases/a.yaml and cases/x/y/b.yaml). A
// relative pattern resolves against the working directory.
func Glob(pattern string) ([]string, error) {
	pattern = filepath.ToSlash(pattern)
	if _, err := path.Match(strings.ReplaceAll(pattern, "**", "*"), ""); err != nil {
		return nil, err
	}
	segs := strings.Split(pattern, "/")
	// The longest prefix without metacharacters is the directory to walk.
	root := 0
	for root < len(segs)-1 && !hasMeta(segs[root]) {
		root++
	}
	base := strings.Join(segs[:root], "/")
	if base == "" && strings.HasPrefix(pattern, "/") {
		base = "/"
	}
	rest := segs[root:]
	if !hasMeta(strings.Join(rest, "/")) {
		// No metacharacters: the pattern names one path, returned
		// whatever it is so that the caller can say why it is not a case
		// file (ReadFile refuses directories, devices, pipes).
		if _, err := os.Lstat(filepath.FromSlash(pattern)); err != nil {
			return nil, nil
		}
		return []string{filepath.FromSlash(pattern)}, nil
	}
	walkRoot := base
	if walkRoot == "" {
		walkRoot = "."
	}
	var out []string
	err := filepath.WalkDir(filepath.FromSlash(walkRoot), func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == filepath.FromSlash(walkRoot) {
				return fs.SkipAll // a missing root matches nothing
			}
			return nil
		}
		if d.IsDir() {
			if p != filepath.FromSlash(walkRoot) && strings.HasPrefix(d.Name(), ".") {
				return fs.SkipDir
			}
			return nil
		}
		rel := filepath.ToSlash(p)
		if base != "" {
			rel = strings.TrimPrefix(strings.TrimPrefix(rel, strings.TrimSuffix(base, "/")), "/")
		}
		if matchSegs(rest, strings.Split(rel, "/")) {
			out = append(out, p)
		}
		return nil
	})
	sort.Strings(out)
	return out, err
}

func hasMeta(s string) bool { return strings.ContainsAny(s, `*?[\`) }

// matchSegs matches path segments against pattern segments, "**"
// matching any number of segments.
func matchSegs(pat, segs []string) bool {
	for len(pat) > 0 {
		if pat[0] == "**" {
			for i := 0; i <= len(segs); i++ {
				if matchSegs(pat[1:], segs[i:]) {
					return true
				}
			}
			return false
		}
		if len(segs) == 0 {
			return false
		}
		if ok, _ := path.Match(pat[0], segs[0]); !ok {
			return false
		}
		pat, segs = pat[1:], segs[1:]
	}
	return len(segs) == 0
}

// maxHintLevels bounds how far up from the working directory NoMatchHint
// looks for a directory a pattern would match from.
const maxHintLevels = 6

// NoMatchHint explains a relative pattern that matches no file: it
// resolved from the working directory, and, when it would match from
// the directory of the config that names it (configFile, "" for none)
// or from a directory above the working directory, where and how many.
// Only patterns whose first segment is literal are tried elsewhere, so
// that no hint walks a whole tree.
func NoMatchHint(pattern, configFile string) string {
	p := filepath.ToSlash(pattern)
	if path.IsAbs(p) || filepath.IsAbs(pattern) {
		return ""
	}
	wd, err := os.Getwd()
	if err != nil {
		return ""
	}
	msg := "resolved from the working directory " + wd + " (paths in a config resolve from there, not from the config's directory)"
	if first, _, _ := strings.Cut(p, "/"); first == "" || hasMeta(first) {
		return msg
	}
	count := func(dir string) int {
		m, err := Glob(path.Join(filepath.ToSlash(dir), p))
		if err != nil {
			return 0
		}
		return len(m)
	}
	files := func(n int) string {
		if n == 1 {
			return "1 file"
		}
		return strconv.Itoa(n) + " files"
	}
	if configFile != "" {
		if dir := filepath.Dir(configFile); dir != "." {
			if n := count(dir); n > 0 {
				return msg + fmt.Sprintf("; from the config's directory it matches %s: write %q, or run toolward in %s",
					files(n), path.Join(filepath.ToSlash(dir), p), dir)
			}
		}
	}
	dir := wd
	for range maxHintLevels {
		up := filepath.Dir(dir)
		if up == dir {
			break
		}
		dir = up
		if n := count(dir); n > 0 {
			rel, err := filepath.Rel(wd, dir)
			if err != nil {
				rel = dir
			}
			return msg + fmt.Sprintf("; from %s it matches %s: run toolward there (cd %s)", dir, files(n), rel)
		}
	}
	return msg
}
