//go:build !unix

package pgwire

import (
	"net"
	"os"
)

// setBlocking reports false: blocking reads are used on Unix systems only,
// and other systems read through the network poller.
func setBlocking(net.Conn) bool { return false }

// shutdownSocket has nothing to wake where sockets never block.
func shutdownSocket(net.Conn) {}

// detach reports false: see setBlocking.
func detach(net.Conn) (*os.File, bool) { return nil, false }

// shutdownFile is never reached where detach fails.
func shutdownFile(*os.File) {}
