package schema

import "github.com/toolward/toolward/internal/userfile"

// Size limits of the files toolward reads from a user. Reading stops at
// the limit, so a path naming something endless (/dev/zero, a file that
// grows while it is read) costs at most the limit in memory and time.
const (
	// MaxCaseFileSize bounds one case file (*.yaml, *.yml): 4 MiB, some
	// thousands of cases.
	MaxCaseFileSize = 4 << 20
	// MaxConfigFileSize bounds one run config (*.cue): 1 MiB.
	MaxConfigFileSize = 1 << 20
	// MaxDescriptionFileSize bounds one description set file: 1 MiB.
	MaxDescriptionFileSize = 1 << 20
	// MaxCassetteFileSize bounds one cassette file of the replay backend:
	// 64 MiB, room for recorded answers of several MiB each.
	MaxCassetteFileSize = 64 << 20
)

// TooLargeError is a file over its size limit (see package userfile).
type TooLargeError = userfile.TooLargeError

// NotRegularError is a path naming something other than a regular file.
type NotRegularError = userfile.NotRegularError

// ReadFile reads a user-supplied file through userfile.Read: regular
// files only, at most limit bytes; what names the file's role in
// messages ("case file").
func ReadFile(path, what string, limit int64) ([]byte, error) {
	return userfile.Read(path, what, limit)
}

// CheckFile reports the error ReadFile would return for path without
// reading it.
func CheckFile(path, what string, limit int64) error {
	return userfile.Check(path, what, limit)
}
