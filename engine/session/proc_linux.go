package session

import (
	"os/exec"
	"syscall"
)

// setProcAttr makes a command server the leader of a process group of its
// own, so that closing it can end the processes it started too, and has
// the kernel kill it when toolward dies (even by SIGKILL), so that no
// server is left running, blocked in a tool call. The death signal is
// tied to the thread that started the server; the Go runtime keeps its
// threads alive, except those of goroutines that lock one and exit,
// which toolward does not do.
func setProcAttr(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// killGroup kills every process left in a command server's group.
func killGroup(cmd *exec.Cmd) {
	if cmd != nil && cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}

// terminate asks a command server to exit.
func terminate(cmd *exec.Cmd) { _ = cmd.Process.Signal(syscall.SIGTERM) }
