//go:build linux

package vfs

import (
	"os"
	"syscall"
)

// StartWriteback asks the operating system to start writing f's bytes in
// [off, off+n) to the device and returns without waiting for them
// (sync_file_range(2) with SYNC_FILE_RANGE_WRITE). It makes nothing
// durable, only Sync does; but a Sync that follows finds less left to
// write, so a caller with other work to do before it needs the bytes
// durable overlaps their I/O with that work. A no-op for files that are
// not the operating system's and on systems without the call; a failure
// is ignored, the Sync after it reports what matters.
func StartWriteback(f File, off, n int64) {
	of, ok := f.(*os.File)
	if !ok || n <= 0 {
		return
	}
	rc, err := of.SyscallConn()
	if err != nil {
		return
	}
	rc.Control(func(fd uintptr) { //nolint:errcheck // best effort, see above
		syscall.SyncFileRange(int(fd), off, n, syncFileRangeWrite) //nolint:errcheck
	})
}

// syncFileRangeWrite is SYNC_FILE_RANGE_WRITE: start writing the range's
// dirty pages that are not being written already, without waiting.
const syncFileRangeWrite = 2
