//go:build !(linux && (amd64 || arm64))

package hugepage

import "unsafe"

// Reserve does nothing on this system.
func Reserve(int64) {}

// Note does nothing on this system.
func Note(unsafe.Pointer) {}

// Refresh does nothing on this system.
func Refresh() {}

// Recollapse does nothing on this system.
func Recollapse() int { return 0 }
