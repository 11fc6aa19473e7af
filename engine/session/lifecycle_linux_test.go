package session

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/toolward/toolward/schema"
)

// TestServerDiesWithToolward: when toolward is killed with SIGKILL while
// a command server is blocked in a call, the server dies too (Linux:
// Pdeathsig). Before, it was left running.
func TestServerDiesWithToolward(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	parent := exec.Command(exe)
	parent.Env = append(os.Environ(), roleEnv+"="+roleParent)
	out, err := parent.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := parent.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	pid, perr := strconv.Atoi(strings.TrimSpace(line))
	if err != nil || perr != nil {
		parent.Process.Kill()
		parent.Wait()
		t.Fatalf("parent said %q (%v)", line, err)
	}
	t.Cleanup(func() { syscall.Kill(pid, syscall.SIGKILL) })
	parent.Process.Signal(syscall.SIGKILL)
	parent.Wait()
	// The kernel signals the server when the parent dies; give it a
	// bounded while to be gone (or a zombie awaiting its new parent).
	for range 500 {
		if !alive(pid) {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("server %d still running 10s after toolward was killed", pid)
}

// alive reports whether pid is a process that is neither gone nor a
// zombie.
func alive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] != 'Z'
}

// TestCloseKillsServerGroup: closing a source ends what its command
// server started and left behind, not only the server. Before, a
// server's children outlived the job.
func TestCloseKillsServerGroup(t *testing.T) {
	if _, err := exec.LookPath("sleep"); err != nil {
		t.Skip("no sleep command")
	}
	ctx := safety(t)
	src, sess := openHang(t, Options{})
	res, err := sess.Call(ctx, "spawn", nil, 0)
	if err != nil || res.IsError {
		t.Fatalf("spawn: %v %+v", err, res)
	}
	pid, err := strconv.Atoi(res.Text)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Kill(pid, syscall.SIGKILL) })
	sess.Close()
	src.Close()
	for range 500 {
		if !alive(pid) {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("the server's child %d still runs 10s after the source closed", pid)
}

func detached() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setsid: true} }

// TestRunServerDescendantsReaped: with isolation "run", what each run's
// server started in a session of its own (setsid, out of the server's
// process group) ends with the run, its server closed gracefully.
// Before, every run left its child running (8 runs, 8 orphans).
func TestRunServerDescendantsReaped(t *testing.T) {
	if _, err := exec.LookPath("sleep"); err != nil {
		t.Skip("no sleep command")
	}
	ctx := safety(t)
	srv := selfCommand(t, roleHang)
	srv.Isolation = schema.IsolationRun
	src, err := Open(ctx, Options{Server: srv})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	var left []int
	for range 4 {
		sess, err := src.Session(ctx, ConfirmAuto)
		if err != nil {
			t.Fatal(err)
		}
		res, err := sess.Call(ctx, "spawnsetsid", nil, 0)
		if err != nil || res.IsError {
			t.Fatalf("spawnsetsid: %v %+v", err, res)
		}
		pid, err := strconv.Atoi(res.Text)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { syscall.Kill(pid, syscall.SIGKILL) })
		sess.Close()
		if alive(pid) {
			left = append(left, pid)
		}
	}
	if len(left) > 0 {
		t.Errorf("after 4 runs, %d of the servers' detached children still run: %v", len(left), left)
	}
}
