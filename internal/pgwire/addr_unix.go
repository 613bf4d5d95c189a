//go:build unix

package pgwire

import "syscall"

// errAddrInUse is the error of a listen on a port that is taken.
var errAddrInUse error = syscall.EADDRINUSE
