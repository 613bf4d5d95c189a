//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package vfs

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// Lock implements FS with flock(2). A flock belongs to an open file
// description, so a second Lock from the same process conflicts too, and the
// kernel releases the lock when the holder dies.
func (OS) Lock(name string) (io.Closer, error) {
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		holder, _ := io.ReadAll(io.LimitReader(f, 32))
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, lockedError(name, string(holder))
		}
		return nil, &os.PathError{Op: "flock", Path: name, Err: err}
	}
	pid := strconv.Itoa(os.Getpid()) + "\n"
	err = f.Truncate(0)
	if err == nil {
		_, err = f.WriteAt([]byte(pid), 0)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return &osLock{f: f}, nil
}

type osLock struct{ f *os.File }

func (l *osLock) Close() error {
	if l.f == nil {
		return nil
	}
	f := l.f
	l.f = nil
	// Closing the descriptor releases the flock.
	return f.Close()
}

// lockedError names the holder recorded in the lock file.
func lockedError(name, holder string) error {
	holder = strings.TrimSpace(holder)
	if holder == "" {
		holder = "unknown"
	}
	return fmt.Errorf("vfs: lock %s: held by pid %s: %w", name, holder, ErrLocked)
}
