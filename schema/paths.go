package schema

import (
	"errors"
	"io/fs"
	"path/filepath"

	"github.com/toolward/toolward/matchers"
)

// errMsg strips the path that os errors repeat.
func errMsg(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

// ErrMsg is an os error's message without the path it repeats, for
// messages that name the file themselves.
func ErrMsg(err error) string { return errMsg(err) }

// pathString names a location as matchers does, so config, case and
// matcher messages share one path syntax.
func pathString(elems []any) string { return matchers.PathString(elems) }

// DescriptionFile returns the file of description set name: its
// description_sets entry, or fixtures/descriptions/<name>.yaml. It returns
// "" for "default", the server's own descriptions.
func DescriptionFile(c *Config, name string) string {
	if name == "default" {
		return ""
	}
	if f, ok := c.DescriptionSets[name]; ok {
		return f
	}
	return filepath.Join("fixtures", "descriptions", name+".yaml")
}
