package runconfig

import "github.com/toolward/toolward/schema"

// validate is CheckWith without extra checks, for tests that want only the errors.
func validate(paths []string) schema.Errors {
	_, errs := CheckWith(paths, Options{})
	return errs
}

// checkPaths is CheckWith without extra checks.
func checkPaths(paths []string) (Summary, schema.Errors) { return CheckWith(paths, Options{}) }
