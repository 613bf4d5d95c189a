//go:build !unix

package pgwire

import (
	"errors"
	"net"
)

// setBlocking reports false: blocking reads are used on Unix systems only,
// and other systems read through the network poller.
func setBlocking(net.Conn) bool { return false }

// shutdownSocket has nothing to wake where sockets never block.
func shutdownSocket(net.Conn) {}

// detach reports false: see setBlocking.
func detach(net.Conn) (*fdSocket, bool) { return nil, false }

// fdSocket is never made on these systems (detach reports false); its
// methods exist for the code shared with Unix.
type fdSocket struct{}

var errNoDetach = errors.New("pgwire: detached sockets are Unix only")

func (*fdSocket) Read([]byte) (int, error)  { return 0, errNoDetach }
func (*fdSocket) Write([]byte) (int, error) { return 0, errNoDetach }
func (*fdSocket) shutdown()                 {}
func (*fdSocket) close()                    {}
