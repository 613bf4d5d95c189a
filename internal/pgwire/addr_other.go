//go:build !unix

package pgwire

import "errors"

// errAddrInUse matches nothing where the platform's error is not known.
var errAddrInUse = errors.New("address in use")
