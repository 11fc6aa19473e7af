package schema

import (
	"io/fs"
	"os"
	"path/filepath"
)

// osFS is the file system rooted at the working directory, accepting
// absolute paths too.
type osFS struct{}

func (osFS) Open(name string) (fs.File, error) { return os.Open(filepath.FromSlash(name)) }

func (osFS) Stat(name string) (fs.FileInfo, error) { return os.Stat(filepath.FromSlash(name)) }
