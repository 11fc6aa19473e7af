//go:build !linux

package session

import "syscall"

func detached() *syscall.SysProcAttr { return nil }
