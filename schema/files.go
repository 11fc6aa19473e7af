package schema

// LoadCaseFiles loads the case files named (paths, not globs) in
// parallel and checks case ids across them, returning the cases that
// loaded and every mistake. `toolward validate` (package
// schema/runconfig) uses it for the files it collects.
func LoadCaseFiles(files []string) ([]*Case, Errors) { return loadCaseFiles(files) }

// LoadCassetteFiles reads and parses the cassette files named and checks
// that no case has cassettes in two places.
func LoadCassetteFiles(files []string) ([]*Cassette, Errors) { return loadCassetteFiles(files) }
