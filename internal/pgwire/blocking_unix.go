//go:build unix

package pgwire

import (
	"net"
	"syscall"
)

// setBlocking puts nc's socket in blocking mode, so that the connection's
// goroutine waits for the next message inside read(2), as a PostgreSQL
// backend does, instead of taking EAGAIN, parking, and being woken by the
// runtime's network poller (docs/pgwire.md, "Blocking reads"). It reports
// whether it did.
func setBlocking(nc net.Conn) bool {
	sc, ok := nc.(syscall.Conn)
	if !ok {
		return false
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return false
	}
	var serr error
	if err := rc.Control(func(fd uintptr) { serr = syscall.SetNonblock(int(fd), false) }); err != nil || serr != nil {
		return false
	}
	return true
}

// shutdownSocket shuts nc's socket down in both directions: a read or
// write blocked in the kernel returns, which closing it would not do (and
// Go's Close waits for them).
func shutdownSocket(nc net.Conn) {
	if sc, ok := nc.(syscall.Conn); ok {
		if rc, err := sc.SyscallConn(); err == nil {
			rc.Control(func(fd uintptr) { syscall.Shutdown(int(fd), syscall.SHUT_RDWR) }) //nolint:errcheck
		}
	}
}
