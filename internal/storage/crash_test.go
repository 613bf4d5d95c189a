package storage

import (
	"bufio"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/types"
)

const (
	crashEnv     = "STRATA_STORAGE_CRASH_CHILD"
	crashRowsPer = 5
)

func crashSpec() catalog.TableSpec {
	// SHARDS AUTO with a small split size (TestCrashChild): shards split
	// while the child is killed.
	return catalog.TableSpec{Name: "log", Mode: catalog.ModeAppend, Columns: []catalog.ColumnSpec{
		{Name: "id", Type: types.Of(types.Int64)},
		{Name: "part", Type: types.Of(types.Int64)},
		{Name: "pad", Type: types.Of(types.String)},
	}, ShardBy: []string{"id"}, ShardsAuto: true}
}

// TestCrashChild is the child of TestSIGKILL: it commits until killed and
// prints "ack <commit> <id>" for each acknowledged commit.
func TestCrashChild(t *testing.T) {
	dir := os.Getenv(crashEnv)
	if dir == "" {
		t.Skip("run by TestSIGKILL")
	}
	// A small memtable makes the child flush (parts, manifest edits, WAL
	// truncation) while it is being killed.
	// Merges run all the time too: the background merger after every
	// flush, and a goroutine asking for policy and full merges, with output
	// parts cut small so a merge writes several before its edit.
	e, err := Open(dir, Options{MemtableBytes: 256 << 10, WALSegmentSize: 128 << 10, MergePartRows: 2000, ShardSplitBytes: 32 << 10})
	if err != nil {
		fmt.Println("open error:", err)
		os.Exit(2)
	}
	ctx := context.Background()
	tbl, ok := e.Catalog().Table("log")
	if !ok {
		if _, err := e.Commit(ctx, &Txn{Kind: KindDDL, DDL: func(c *catalog.Catalog, n uint64) error {
			_, _, err := c.CreateTable(crashSpec(), n)
			return err
		}}); err != nil {
			fmt.Println("create error:", err)
			os.Exit(2)
		}
		tbl, _ = e.Catalog().Table("log")
	}
	run, _ := strconv.Atoi(os.Getenv(crashEnv + "_RUN"))
	var mu sync.Mutex
	var wg sync.WaitGroup
	go func() {
		for i := 0; ; i++ {
			time.Sleep(20 * time.Millisecond)
			var opts []MergeOption
			if i%3 == 2 {
				opts = append(opts, MergeFull)
			}
			if err := e.MergeNow(ctx, opts...); err != nil {
				fmt.Println("merge error:", err)
				os.Exit(2)
			}
		}
	}()
	// The counters are printed on their own beat: a MergeNow can take
	// longer than a child lives (under -race), and background merges and
	// splits count too.
	go func() {
		for {
			time.Sleep(10 * time.Millisecond)
			mu.Lock()
			fmt.Printf("merges %d splits %d\n", e.merges.Load(), e.splits.Load())
			mu.Unlock()
		}
	}()
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; ; i++ {
				id := int64(run)*1_000_000 + int64(w)*100_000 + int64(i)
				var lines []string
				for p := 0; p < crashRowsPer; p++ {
					lines = append(lines, fmt.Sprintf("id=%d part=%d pad=%s", id, p, strings.Repeat("x", 50)))
				}
				wr, err := appendWrite(tbl, lines)
				if err != nil {
					panic(err)
				}
				n, err := e.Commit(ctx, &Txn{Kind: KindWrite, Writes: []Write{wr}, Tables: []string{"log"}, Rows: crashRowsPer})
				if err != nil {
					fmt.Println("commit error:", err)
					os.Exit(2)
				}
				mu.Lock()
				fmt.Printf("ack %d %d\n", n, id)
				mu.Unlock()
			}
		}(w)
	}
	wg.Wait()
}

// TestSIGKILL kills a committing child process at random moments, over
// and over, and checks after each restart that every acknowledged commit
// is present exactly once, with all its rows at its commit, and that no
// commit is partly visible (R5.1, R5.6).
func TestSIGKILL(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	dir := t.TempDir()
	acked := map[int64]uint64{} // id → commit
	// 25 kills or 15 s; then, on a loaded machine where the short lives
	// never merged or grew a shard past the split size, kills go on (each
	// child living longer) until both happened, for at most 45 s more.
	deadline := time.Now().Add(15 * time.Second)
	extra := deadline.Add(45 * time.Second)
	runs, merges, splits := 0, 0, 0
	for ; ; runs++ {
		now := time.Now()
		if (runs >= 25 || now.After(deadline)) && (splits > 0 && merges > 0 || now.After(extra)) {
			break
		}
		life := time.Duration(150+rand.IntN(350)) * time.Millisecond
		if runs >= 25 || now.After(deadline) {
			life += time.Second
		}
		cmd := exec.Command(os.Args[0], "-test.run=^TestCrashChild$", "-test.count=1")
		cmd.Env = append(os.Environ(), crashEnv+"="+dir, fmt.Sprintf("%s_RUN=%d", crashEnv, runs+1))
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		var lines []string
		runMerges, runSplits := 0, 0
		done := make(chan struct{})
		go func() {
			sc := bufio.NewScanner(out)
			for sc.Scan() {
				lines = append(lines, sc.Text())
			}
			close(done)
		}()
		time.Sleep(life)
		_ = cmd.Process.Signal(syscall.SIGKILL)
		<-done
		_ = cmd.Wait()
		for _, l := range lines {
			var n uint64
			var id int64
			var sp int
			if _, err := fmt.Sscanf(l, "merges %d splits %d", &n, &sp); err == nil {
				runMerges = max(runMerges, int(n))
				runSplits = max(runSplits, sp)
				continue
			}
			if _, err := fmt.Sscanf(l, "ack %d %d", &n, &id); err != nil {
				if strings.Contains(l, "error") {
					t.Fatalf("child: %s", l)
				}
				continue
			}
			acked[id] = n
		}
		merges += runMerges
		splits += runSplits
		verifyCrash(t, dir, acked)
	}
	e, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	tbl, _ := e.Catalog().Table("log")
	snap := e.Snapshot()
	parts := len(snap.Parts(tbl.ID))
	snap.Release()
	shards := len(e.cur.Load().tables[tbl.ID].shards)
	if err := e.Check(); err != nil {
		t.Fatal(err)
	}
	_ = e.Close()
	if err := CheckDir(dir, Options{}); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d kills, %d acknowledged commits, %d parts, %d merges, %d splits, %d shards", runs, len(acked), parts, merges, splits, shards)
	if parts == 0 {
		t.Error("the child never flushed")
	}
	if merges == 0 {
		t.Error("the child never merged")
	}
	if shards < 2 {
		t.Error("the child never split a shard")
	}
	if runs < 20 {
		t.Errorf("only %d kills before the deadline", runs)
	}
}

func verifyCrash(t *testing.T, dir string, acked map[int64]uint64) {
	t.Helper()
	e, err := Open(dir, Options{})
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	defer e.Close()
	if err := e.Check(); err != nil {
		t.Fatalf("check after restart: %v", err)
	}
	tbl, ok := e.Catalog().Table("log")
	if !ok {
		if len(acked) > 0 {
			t.Fatal("table lost")
		}
		return
	}
	snap := e.Snapshot()
	defer snap.Release()
	type seen struct {
		commit uint64
		parts  int
	}
	got := map[int64]*seen{}
	_, err = snap.Scan(context.Background(), ScanSpec{Table: tbl.ID, Cols: allCols(tbl)[:1], Commit: true}, func(b *types.Batch) error {
		ids, cs := b.Cols[0].Int64s(), b.Cols[1].Uint64s()
		for i := 0; i < b.Rows; i++ {
			s := got[ids[i]]
			if s == nil {
				s = &seen{commit: cs[i]}
				got[ids[i]] = s
			}
			if s.commit != cs[i] {
				return fmt.Errorf("id %d at commits %d and %d", ids[i], s.commit, cs[i])
			}
			s.parts++
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for id, n := range acked {
		s := got[id]
		if s == nil {
			t.Fatalf("acknowledged commit %d (id %d) lost", n, id)
		}
		if s.commit != n {
			t.Fatalf("id %d acknowledged at commit %d, stored at %d", id, n, s.commit)
		}
	}
	for id, s := range got {
		if s.parts != crashRowsPer {
			t.Fatalf("commit %d (id %d) has %d of its %d rows", s.commit, id, s.parts, crashRowsPer)
		}
	}
	if int(snap.Commit()) != len(snap.Commits()) {
		t.Fatalf("snapshot at %d lists %d commits", snap.Commit(), len(snap.Commits()))
	}
}
