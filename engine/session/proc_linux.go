package session

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
)

// setProcAttr makes a command server the leader of a process group of its
// own, so that closing it can end the processes it started too, and has
// the kernel kill it when toolward dies (even by SIGKILL), so that no
// server is left running, blocked in a tool call. The death signal is
// tied to the thread that started the server; the Go runtime keeps its
// threads alive, except those of goroutines that lock one and exit,
// which toolward does not do.
//
// A process the server starts may leave the group (setsid) and outlive
// its parent; killTree finds it all the same: the server carries a mark
// of its own in its environment (ServerMarkEnv), which its descendants
// inherit. toolward is not made a child subreaper (PR_SET_CHILD_SUBREAPER):
// Go's os/exec reaps only the children it started, so the orphans that
// exited by themselves would stay zombies of toolward for the whole job,
// and once exited an orphan's environment no longer says whose it was;
// left to init, they are reaped. A cgroup per server would also catch a
// descendant that empties its environment and leaves the server's tree;
// TODO where cgroup v2 is delegated to the user (it is not in most
// containers).
func setProcAttr(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	cmd.Env = append(cmd.Env, fmt.Sprintf("%s=%d.%d", ServerMarkEnv, os.Getpid(), serverSeq.Add(1)))
}

var serverSeq atomic.Int64

// ServerMarkEnv is the variable each command server is started with
// (toolward's pid and a sequence number), so that what it starts can be
// told apart from other processes when it is closed.
const ServerMarkEnv = "TOOLWARD_SERVER"

// killGroup kills every process a command server left behind: its
// process group, and every process that carries its mark or descends
// from it (killTree).
func killGroup(cmd *exec.Cmd) {
	if cmd == nil || cmd.Process == nil {
		return
	}
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	killTree(cmd.Process.Pid, markOf(cmd.Env))
}

// markOf returns the ServerMarkEnv entry of env, "" when there is none.
func markOf(env []string) string {
	for i := len(env) - 1; i >= 0; i-- {
		if strings.HasPrefix(env[i], ServerMarkEnv+"=") {
			return env[i]
		}
	}
	return ""
}

// killTree kills the descendants of the server pid (not pid itself,
// which os/exec waits for) and every process carrying mark in its
// environment, with theirs, until a scan of /proc finds none left (a
// process forking while it is killed is found by the next scan; ten
// scans at most).
func killTree(pid int, mark string) {
	if mark == "" {
		return
	}
	killed := map[int]bool{}
	for range 10 {
		found := descendants(scanProcs(), pid, mark)
		fresh := 0
		for _, p := range found {
			if p == pid || killed[p] {
				continue
			}
			_ = syscall.Kill(p, syscall.SIGKILL)
			killed[p] = true
			fresh++
		}
		if fresh == 0 {
			return
		}
	}
}

// proc is one process of /proc.
type proc struct{ ppid int }

// scanProcs lists the processes /proc shows with their parents.
func scanProcs() map[int]proc {
	out := map[int]proc{}
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if ppid, ok := parentOf(p); ok {
			out[p] = proc{ppid: ppid}
		}
	}
	return out
}

// parentOf reads the parent of p from /proc/p/stat.
func parentOf(p int) (int, bool) {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(p), "stat"))
	if err != nil {
		return 0, false
	}
	// pid (comm) state ppid ...: comm may hold spaces and parentheses.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, false
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 2 {
		return 0, false
	}
	ppid, err := strconv.Atoi(f[1])
	return ppid, err == nil
}

// descendants returns the processes carrying mark (root's below it
// too, while root is the marked server and not a process that took its
// pid), with every process below them.
func descendants(procs map[int]proc, root int, mark string) []int {
	children := map[int][]int{}
	var roots []int
	for p, pr := range procs {
		children[pr.ppid] = append(children[pr.ppid], p)
		if p != root && hasMark(p, mark) {
			roots = append(roots, p)
		}
	}
	if !hasMark(root, mark) {
		children[root] = nil
	}
	seen := map[int]bool{}
	var out []int
	var walk func(int)
	walk = func(p int) {
		if seen[p] {
			return
		}
		seen[p] = true
		out = append(out, p)
		for _, c := range children[p] {
			walk(c)
		}
	}
	for _, c := range children[root] {
		walk(c)
	}
	for _, r := range roots {
		walk(r)
	}
	return out
}

// hasMark reports whether p's environment (as it was started) holds mark.
func hasMark(p int, mark string) bool {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(p), "environ"))
	if err != nil {
		return false
	}
	for _, kv := range bytes.Split(b, []byte{0}) {
		if string(kv) == mark {
			return true
		}
	}
	return false
}

// terminate asks a command server to exit.
func terminate(cmd *exec.Cmd) { _ = cmd.Process.Signal(syscall.SIGTERM) }

// seekData is Linux's SEEK_DATA whence.
const seekData = 3

// nextData is the offset of the first data at or after off in f (size
// when only a hole is left), as SEEK_DATA says; off itself when the file
// system cannot say.
func nextData(f *os.File, off, size int64) int64 {
	n, err := syscall.Seek(int(f.Fd()), off, seekData)
	switch {
	case err == syscall.ENXIO:
		return size // nothing but a hole after off
	case err != nil:
		return off
	}
	return n
}

// dataSize is what a file holds on disk: its allocated blocks, which a
// sparse file's holes do not count, at most its size.
func dataSize(fi os.FileInfo) int64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return min(st.Blocks*512, fi.Size())
	}
	return fi.Size()
}
