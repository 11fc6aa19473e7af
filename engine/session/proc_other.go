//go:build !linux

package session

import (
	"os"
	"os/exec"
)

// setProcAttr does nothing here. A process group of its own would take
// the server out of the terminal's group, so that Ctrl-C no longer
// reached it, and without Linux's death signal nothing would end it if
// toolward died.
func setProcAttr(*exec.Cmd) {}

// killGroup does nothing here; closing a connection ends the server itself.
func killGroup(*exec.Cmd) {}

// terminate ends a command server (SIGTERM is not portable).
func terminate(cmd *exec.Cmd) { _ = cmd.Process.Kill() }

// nextData returns off: here every block is read, and zero blocks are
// still written as holes (copySparse).
func nextData(_ *os.File, off, _ int64) int64 { return off }

// dataSize is a file's size: holes are counted here.
func dataSize(fi os.FileInfo) int64 { return fi.Size() }
