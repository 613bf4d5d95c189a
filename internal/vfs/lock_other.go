//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package vfs

import (
	"errors"
	"fmt"
	"io"
	"strings"
)

// Lock implements FS. Strata locks data directories with flock(2); on
// systems without it, opening a data directory fails rather than running
// unprotected.
func (OS) Lock(name string) (io.Closer, error) {
	return nil, fmt.Errorf("vfs: lock %s: %w", name, errors.ErrUnsupported)
}

func lockedError(name, holder string) error {
	holder = strings.TrimSpace(holder)
	if holder == "" {
		holder = "unknown"
	}
	return fmt.Errorf("vfs: lock %s: held by pid %s: %w", name, holder, ErrLocked)
}
