package manifest

import (
	"bufio"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The crash test runs the edits below in a child process (this test binary
// re-executed with crashEnv set), kills it with SIGKILL at a random moment,
// reopens the file and checks that the manifest holds exactly the state
// after some edit at or past the last one the child acknowledged.
//
// Edit i (i = 1, 2, ...) appends commit i, adds part file "p-i" to shard
// i%2 of table 1, removes part "p-(i-2)" when i%3 == 0 (a merge), moves
// shard i%2's flushed commit to i, sets transformation "tr" to i, stores
// catalog "catalog-i" when i == 1 or i%5 == 0, and moves the WAL
// checkpoint to i-1. Because edit i adds commit i, LastCommit after
// reopening says which edit was the last to commit.

const crashEnv = "STRATA_MANIFEST_CRASH_FILE"

func crashEdit(t testing.TB, b *Bolt, i uint64) Edit {
	e := Edit{
		AppendCommits: []Commit{{Seq: i, At: t0.Add(time.Duration(i) * time.Millisecond), Kind: CommitWrite,
			Tables: []string{"t"}, Rows: i}},
		SetFlushed:    []Flushed{{Table: 1, Shard: uint32(i % 2), Commit: i}},
		SetTransforms: []Transform{{Name: "tr", Processed: i, State: []byte(fmt.Sprintf("state-%d", i))}},
		WALCheckpoint: i - 1,
	}
	if i == 1 {
		lower, upper, _ := FullRange.Split()
		e.SetShards = []Shard{
			{Table: 1, Shard: 0, Range: lower, State: StateActive},
			{Table: 1, Shard: 1, Range: upper, State: StateActive},
		}
	}
	if i == 1 || i%5 == 0 {
		e.Catalog = &CatalogUpdate{Commit: i, Data: []byte(fmt.Sprintf("catalog-%d", i))}
	}
	p := part(t, b, 1, uint32(i%2))
	p.File, p.Rows, p.MinCommit, p.MaxCommit = fmt.Sprintf("p-%d", i), i, i, i
	e.AddParts = []Part{p}
	if i%3 == 0 {
		want := fmt.Sprintf("p-%d", i-2)
		for _, q := range b.Snapshot().Parts(1, uint32((i-2)%2)) {
			if q.File == want {
				e.RemoveParts = []PartRef{q.Ref()}
			}
		}
		if e.RemoveParts == nil {
			t.Fatalf("edit %d: %s is not live", i, want)
		}
	}
	return e
}

// TestHelperProcess is the child of TestCrashKeepsAcknowledgedEdits; run
// directly it does nothing.
func TestHelperProcess(t *testing.T) {
	path := os.Getenv(crashEnv)
	if path == "" {
		t.Skip("only runs as the crash test's child")
	}
	b, err := Open(path, Options{LockTimeout: 5 * time.Second})
	if err != nil {
		fmt.Println("open:", err)
		os.Exit(2)
	}
	for i := b.Snapshot().LastCommit() + 1; ; i++ {
		if err := b.Apply(crashEdit(t, b, i)); err != nil {
			fmt.Println("apply:", err)
			os.Exit(2)
		}
		// os.Stdout is unbuffered: once this returns, the parent can read
		// the acknowledgement even if we are killed right after.
		fmt.Printf("ack %d\n", i)
	}
}

// verifyCrashState checks that s is exactly the state after edit n.
func verifyCrashState(t *testing.T, s *Snapshot, n uint64) {
	t.Helper()
	if s.LastCommit() != n {
		t.Fatalf("last commit %d, want %d", s.LastCommit(), n)
	}
	for i := uint64(1); i <= n; i++ {
		c, ok := s.Commit(i)
		if !ok || c.Rows != i || !c.At.Equal(t0.Add(time.Duration(i)*time.Millisecond)) {
			t.Fatalf("commit %d: %+v", i, c)
		}
	}
	if n == 0 {
		return
	}
	live := map[string]uint64{}
	for i := uint64(1); i <= n; i++ {
		live[fmt.Sprintf("p-%d", i)] = i
		if i%3 == 0 {
			delete(live, fmt.Sprintf("p-%d", i-2))
		}
	}
	got := 0
	for shard := uint32(0); shard < 2; shard++ {
		for _, p := range s.Parts(1, shard) {
			i, ok := live[p.File]
			if !ok || uint32(i%2) != shard || p.Rows != i || p.MinCommit != i {
				t.Fatalf("unexpected part %+v after edit %d", p, n)
			}
			got++
		}
		var flushed uint64
		for i := uint64(1); i <= n; i++ {
			if uint32(i%2) == shard {
				flushed = i
			}
		}
		if s.FlushedThrough(1, shard) != flushed {
			t.Fatalf("shard %d flushed through %d, want %d", shard, s.FlushedThrough(1, shard), flushed)
		}
	}
	if got != len(live) {
		t.Fatalf("%d parts live, want %d", got, len(live))
	}
	if p, st, ok := s.TransformProgress("tr"); !ok || p != n || string(st) != fmt.Sprintf("state-%d", n) {
		t.Fatalf("transformation at %d %q, want %d", p, st, n)
	}
	cat := n - n%5
	if cat == 0 {
		cat = 1
	}
	if c, d := s.Catalog(); c != cat || string(d) != fmt.Sprintf("catalog-%d", cat) {
		t.Fatalf("catalog %d %q, want %d", c, d, cat)
	}
	if s.WALCheckpoint() != n-1 {
		t.Fatalf("WAL checkpoint %d, want %d", s.WALCheckpoint(), n-1)
	}
}

// TestCrashKeepsAcknowledgedEdits kills a writing child process with
// SIGKILL at random moments and checks after each kill that every
// acknowledged edit survived, nothing half-applied did, and Check passes.
func TestCrashKeepsAcknowledgedEdits(t *testing.T) {
	if testing.Short() {
		t.Skip("starts 25 processes")
	}
	path := filepath.Join(t.TempDir(), "manifest.db")
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 7))
	const rounds = 25
	// unacked counts edits that committed but whose acknowledgement the
	// kill beat: allowed, and a sign the kills land mid-edit.
	var acked, unacked, prev uint64
	deadline := time.Now().Add(20 * time.Second)
	for round := range rounds {
		if time.Now().After(deadline) {
			t.Fatalf("only %d rounds in 20s", round)
		}
		cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$", "-test.count=1")
		cmd.Env = append(os.Environ(), crashEnv+"="+path)
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		lines := make(chan uint64, 1)
		var failure strings.Builder
		go func() {
			var last uint64
			sc := bufio.NewScanner(out)
			for sc.Scan() {
				if n, ok := strings.CutPrefix(sc.Text(), "ack "); ok {
					v, err := strconv.ParseUint(n, 10, 64)
					if err == nil && v > last {
						last = v
					}
				} else {
					failure.WriteString(sc.Text() + "\n")
				}
			}
			lines <- last
		}()
		time.Sleep(time.Duration(20+rng.IntN(280)) * time.Millisecond)
		if err := cmd.Process.Kill(); err != nil {
			t.Fatal(err)
		}
		last := <-lines
		_ = cmd.Wait()
		if failure.Len() > 0 {
			t.Fatalf("round %d: child failed:\n%s", round, failure.String())
		}

		b, err := Open(path, Options{})
		if err != nil {
			t.Fatalf("round %d: reopen after kill: %v", round, err)
		}
		n := b.Snapshot().LastCommit()
		if n < last {
			t.Fatalf("round %d: edit %d was acknowledged but the manifest ends at %d", round, last, n)
		}
		unacked += n - max(last, prev)
		prev = n
		verifyCrashState(t, b.Snapshot(), n)
		if err := b.Check(); err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		if err := b.Close(); err != nil {
			t.Fatal(err)
		}
		acked = max(acked, last)
	}
	if acked < rounds {
		t.Fatalf("only %d edits acknowledged over %d rounds; the kills came too early to test anything", acked, rounds)
	}
	t.Logf("%d rounds, %d edits acknowledged, %d committed edits were unacknowledged at the kill", rounds, acked, unacked)
}
