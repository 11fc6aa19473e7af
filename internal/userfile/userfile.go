// Package userfile reads files that a user names (cases, configs,
// description sets, cassettes, catalogs, corpora) with two guarantees:
// only regular files are opened, so a device such as /dev/zero or a named
// pipe is refused before it can block or stream forever, and no more than
// a stated number of bytes is read, even from a file that grows while it
// is read. It depends on the standard library alone, so the bundled MCP
// server and the analysis side can use it without linking CUE.
package userfile

import (
	"fmt"
	"io"
	"io/fs"
	"os"
)

// TooLargeError is a file over its size limit.
type TooLargeError struct {
	What  string // the file's role, e.g. "case file"
	Limit int64  // bytes
	// Size is the file's size in bytes, or -1 when the file was within
	// the limit when opened and grew past it while being read.
	Size int64
}

func (e *TooLargeError) Error() string {
	if e.Size < 0 {
		return fmt.Sprintf("%s grew past the %s limit while being read", e.What, ByteSize(e.Limit))
	}
	return fmt.Sprintf("%s is %s (%d bytes), over the %s limit", e.What, ByteSize(e.Size), e.Size, ByteSize(e.Limit))
}

// NotRegularError is a path that names something other than a regular
// file: a directory, a device, a named pipe, a socket.
type NotRegularError struct {
	What string      // the file's role, e.g. "case file"
	Mode fs.FileMode // what the path names
}

func (e *NotRegularError) Error() string {
	return fmt.Sprintf("not a regular file (%s); want a %s", describeMode(e.Mode), e.What)
}

// Read reads the regular file path, refusing anything else (a
// directory, a device such as /dev/zero, a named pipe, a socket) and any
// file over limit bytes. what names the file's role in messages ("case
// file"). Errors are *fs.PathError wrapping a *NotRegularError or a
// *TooLargeError, or the error of the failed system call.
//
// Every loader of a user-supplied file should read it through Read:
// schema for cases, configs and description sets, engine/toolset for
// description sets, the replay backend for cassettes, the bundled server
// for catalogs and corpora.
func Read(path, what string, limit int64) ([]byte, error) {
	// Refuse before opening: opening a named pipe blocks until a writer
	// appears.
	if err := Check(path, what, limit); err != nil {
		return nil, err
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	// The path may have been replaced since CheckFile.
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, &fs.PathError{Op: "read", Path: path, Err: &NotRegularError{What: what, Mode: fi.Mode()}}
	}
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, &fs.PathError{Op: "read", Path: path, Err: err}
	}
	if int64(len(b)) > limit {
		size := int64(-1)
		if fi.Size() > limit {
			size = fi.Size()
		}
		return nil, &fs.PathError{Op: "read", Path: path, Err: &TooLargeError{What: what, Limit: limit, Size: size}}
	}
	return b, nil
}

// Check reports the error Read would return for path without
// reading it: path must name a regular file (symbolic links followed) of
// at most limit bytes. It is cheap enough to check every file a pattern
// matches.
func Check(path, what string, limit int64) error {
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() {
		return &fs.PathError{Op: "read", Path: path, Err: &NotRegularError{What: what, Mode: fi.Mode()}}
	}
	if fi.Size() > limit {
		return &fs.PathError{Op: "read", Path: path, Err: &TooLargeError{What: what, Limit: limit, Size: fi.Size()}}
	}
	return nil
}

// describeMode names the kind of file a mode describes.
func describeMode(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a device"
	case m&fs.ModeSocket != 0:
		return "a socket"
	}
	return "an irregular file"
}

// ByteSize renders n bytes for a person: 4 MiB, 5.5 MiB, 900 KiB, 12 bytes.
func ByteSize(n int64) string {
	const kib, mib = 1 << 10, 1 << 20
	unit := func(div int64, name string) string {
		if n%div == 0 {
			return fmt.Sprintf("%d %s", n/div, name)
		}
		return fmt.Sprintf("%.1f %s", float64(n)/float64(div), name)
	}
	switch {
	case n >= mib:
		return unit(mib, "MiB")
	case n >= kib:
		return unit(kib, "KiB")
	}
	return fmt.Sprintf("%d bytes", n)
}
