package wal

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/strata-db/strata/internal/vfs"
)

const (
	crashDirEnv   = "STRATA_WAL_CRASH_DIR"
	crashStartEnv = "STRATA_WAL_CRASH_START"
)

// TestHelperProcess is the child of TestCrashKill: it commits records with
// group commit from 8 goroutines (half of them through SubmitCompressed,
// whose Wait may write the batch itself; every fourth record is large and
// written early by Pending.Start) until it is killed, printing each
// acknowledged commit on its own line. Without the environment variable it
// does nothing.
func TestHelperProcess(t *testing.T) {
	dir := os.Getenv(crashDirEnv)
	if dir == "" {
		t.Skip("only runs as TestCrashKill's child")
	}
	next, err := strconv.ParseUint(os.Getenv(crashStartEnv), 10, 64)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	w, err := Open(vfs.OS{}, dir, Options{SegmentSize: 64 << 10, Preallocate: true})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	var mu, out sync.Mutex
	for g := range 8 {
		go func() {
			for {
				mu.Lock()
				c := next
				next++
				var p Pending
				var err error
				large := crashLarge(c)
				if g%2 == 0 && !large {
					p, err = w.Submit(c, crashPayload(c))
				} else { // records whose Wait may lead the flush, or Start write early
					pre := Compress(crashPayload(c))
					p, err = w.SubmitCompressed(c, &pre)
					pre.Release()
				}
				mu.Unlock()
				if err == nil {
					p.Start() // writes a large record's batch now, as the engine does
					err = p.Wait(context.Background())
				}
				if err != nil {
					fmt.Fprintln(os.Stderr, err)
					os.Exit(3)
				}
				out.Lock()
				os.Stdout.WriteString(strconv.FormatUint(c, 10) + "\n") // unbuffered: one write per line
				out.Unlock()
			}
		}()
	}
	select {} // until SIGKILL
}

// TestCrashKill runs TestHelperProcess as a real process, SIGKILLs it at a
// random moment, and checks that every commit it acknowledged replays
// exactly once and in order; then does it again on the same log.
func TestCrashKill(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	dir := filepath.Join(t.TempDir(), "wal")
	seed := uint64(time.Now().UnixNano())
	rng := rand.New(rand.NewPCG(seed, 0))
	t.Logf("seed %d", seed)
	acked := map[uint64]bool{}
	next := uint64(1)
	const runs = 24
	runsWithAcks, cuts, run := 0, 0, 0
	deadline := time.Now().Add(15 * time.Second)
	for ; run < runs && time.Now().Before(deadline); run++ {
		got := runChild(t, dir, next, time.Duration(20+rng.IntN(180))*time.Millisecond)
		if len(got) > 0 {
			runsWithAcks++
		}
		for _, c := range got {
			acked[c] = true
		}
		var prev uint64
		seen := 0
		sum, err := Replay(vfs.OS{}, dir, 0, discard(), func(c uint64, p []byte) error {
			if c <= prev {
				return fmt.Errorf("commit %d after %d", c, prev)
			}
			prev = c
			if !bytes.Equal(p, crashPayload(c)) {
				return fmt.Errorf("commit %d: payload differs", c)
			}
			if acked[c] {
				seen++
			}
			return nil
		})
		if err != nil {
			t.Fatalf("run %d: replay: %v", run, err)
		}
		if seen != len(acked) {
			t.Fatalf("run %d: %d of %d acknowledged commits replay", run, seen, len(acked))
		}
		if sum.CutBytes > 0 {
			cuts++
		}
		// Unacknowledged commits that reached the disk keep their numbers.
		next = sum.LastCommit + 1
	}
	if run < 20 || runsWithAcks < run/2 || len(acked) < 100 {
		t.Fatalf("too little happened: %d of %d runs acknowledged anything, %d commits in all", runsWithAcks, run, len(acked))
	}
	t.Logf("%d runs, %d acknowledged commits, %d torn tails cut", run, len(acked), cuts)
}

// runChild starts the helper, kills it after d and returns the commits it
// acknowledged (only whole lines: a line cut by the kill was never
// acknowledged to anyone).
func runChild(t *testing.T, dir string, start uint64, d time.Duration) []uint64 {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$")
	cmd.Env = append(os.Environ(), crashDirEnv+"="+dir, crashStartEnv+"="+strconv.FormatUint(start, 10))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var got []uint64
	done := make(chan error, 1)
	go func() {
		r := bufio.NewReader(stdout)
		for {
			line, err := r.ReadString('\n')
			if err != nil {
				done <- nil // EOF after the kill; a fragment without '\n' is dropped
				return
			}
			c, perr := strconv.ParseUint(strings.TrimSuffix(line, "\n"), 10, 64)
			if perr != nil {
				if strings.HasPrefix(line, "PASS") || strings.HasPrefix(line, "ok") {
					continue
				}
				done <- fmt.Errorf("child printed %q", line)
				return
			}
			got = append(got, c)
		}
	}()
	time.Sleep(d)
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatalf("kill: %v (stderr %s)", err, stderr.String())
	}
	rerr := <-done
	werr := cmd.Wait()
	if rerr != nil {
		t.Fatal(rerr)
	}
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() {
		t.Fatalf("child exited on its own: %v, stderr:\n%s", werr, stderr.String())
	}
	return got
}

// crashLarge says whether commit c's record in the crash tests is large
// (largePayloadFor), one in four.
func crashLarge(c uint64) bool { return c%4 == 0 }

// crashPayload is commit c's payload in the crash tests.
func crashPayload(c uint64) []byte {
	if crashLarge(c) {
		return largePayloadFor(c)
	}
	return payloadFor(c)
}
