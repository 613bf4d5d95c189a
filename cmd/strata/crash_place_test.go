package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/strata-db/strata/internal/storage/part"
	"github.com/strata-db/strata/internal/vfs"
)

// placeSettle is how long TestPlacementCrash waits, after a restart, for
// every part to be on its shard's volume and every other part file to be
// gone; placeUnaided how long of it the test leaves the background merger
// alone before it runs CHECKPOINT now and then.
const (
	placeSettle  = 10 * time.Second
	placeUnaided = 500 * time.Millisecond
)

// placeFileName is the name of a part file: table, shard, and the id of
// the part it was written for (a moved part's copy takes a fresh id's).
var placeFileName = regexp.MustCompile(`^([0-9]+)-([0-9]+)-([0-9]+)\.part$`)

// placeFile is a part file found on disk by TestPlacementCrash. Its table,
// shard and part are what the part file itself says (part 0: a file that
// is not a whole part, a write under way or cut short).
type placeFile struct {
	table, shard, part uint64
	loc                string // as system.parts names it: local or volume:<path>
	path               string
}

// placePart is a row of system.parts.
type placePart struct {
	table       string
	shard, part uint64
	loc         string
}

// placeSnap is what a restart of TestPlacementCrash read at commit: v's
// current rows and a's count and sum of seq, for AS OF COMMIT later.
type placeSnap struct {
	commit      uint64
	v           map[int64]tierCur // k → val, i
	aRows, aSum int64
}

// placeLedger is what TestPlacementCrash knows beyond the rows (a
// tierLedger): the placement policy bound to each table, where parts were
// seen, the strays planted after each kill.
type placeLedger struct {
	rows *tierLedger

	mu        sync.Mutex
	bound     map[string]string // table → placement policy acknowledged (or seen after a restart)
	pending   map[string]string // table → policy of an ALTER sent but not answered
	alters    int               // ALTERs acknowledged
	altered   chan struct{}     // an ALTER was acknowledged
	tableID   map[string]uint64 // table → id, learned from its part files
	snaps     []placeSnap
	seenLoc   map[string]int // location → parts there at restarts
	away      []int          // per round: parts not on their shard's volume at its restart
	unaided   []bool         // per round: settled before the test ran CHECKPOINT
	swept     []int          // per round: part files the restart removed
	twice     []int          // per round: parts with a file in two places at the kill (a move under way, or an old file not yet removed)
	atKill    map[string]bool
	planted   []string // stray files put in place after the last kill
	ckpts     int
	pgErr     error
	serverLog string // where the servers log
	replans   int    // writes answered XX000 "schema changed since the statement was planned"
	replanErr string // the first of them
	bulkAcked int
}

// TestPlacementCrash (R9.6, R5.6): a versioned table (3 shards) and an
// append table (2 shards) bound to placement policies over three volumes
// in temporary folders and the data directory ('.'), written over pgx to
// a real `strata serve`, while one client switches their placement
// policies with ALTER TABLE … SET POLICY and another runs CHECKPOINT (a
// flush and merges, and the moves of parts to their shards' volumes) now
// and then. The server is SIGKILLed at a random moment, or, every other
// round, a few milliseconds after an ALTER was acknowledged, while its
// moves are likely under way, and restarted on the same directory. After
// each kill the test also puts stray part files where a crashed move or
// flush leaves them: half copies of live parts, under their own name in
// another place and under a name of their own on a shard's volume, and a
// file of a part id never handed out. After every restart: the strays
// are gone; each acknowledged append row is there exactly once and no row
// was never sent; each key's current version is its greatest acknowledged
// i or a later one sent; versions(v) lists every version that landed,
// once; every earlier restart's reading is what AS OF its commit reads
// now; each table's placement policy is the one last acknowledged or the
// one in flight; then, within placeSettle (the background merger, and
// CHECKPOINT after placeUnaided), every part is on its shard's volume,
// volumes[(table + shard) % n], and the part files on the volumes and in
// parts/ are exactly those system.parts names, one each (matched by the
// part id each file holds). `strata check` passes on each killed
// directory (runCrashRounds) and on the directory the final SIGTERM left.
// A write that fails with an internal error because an ALTER raced it
// fails the test at the end (the rounds go on: nothing was written).
// STRATA_PLACE_SEED replays the test's random choices (not its timing).
func TestPlacementCrash(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and kills servers")
	}
	strataBin, data := buildBinary(t)
	// The servers log at debug level (each move of a part) to serverLog,
	// shown when the test fails.
	serverLog := filepath.Join(t.TempDir(), "serve.log")
	bin := filepath.Join(filepath.Dir(strataBin), "strata-logged")
	script := fmt.Sprintf("#!/bin/sh\nif [ \"$1\" = serve ]; then exec %q \"$@\" --log-level debug 2>>%q; fi\nexec %q \"$@\"\n", strataBin, serverLog, strataBin)
	if err := os.WriteFile(bin, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			if b, err := os.ReadFile(serverLog); err == nil {
				t.Logf("server log (%s), last 100 lines:\n%s", serverLog, placeTail(string(b), 100))
			}
		}
	})
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("STRATA_PLACE_SEED"); s != "" {
		seed, _ = strconv.ParseUint(s, 10, 64)
	}
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 23))
	const workers = 3
	const rounds = 8

	root := t.TempDir()
	volA, volB, volC := filepath.Join(root, "vol-a"), filepath.Join(root, "vol-b"), filepath.Join(root, "vol-c")
	for _, d := range []string{volA, volB, volC} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	vols := []string{volA, volB, volC}
	policies := map[string][]string{
		"two":   {volA, volB},
		"mix":   {".", volC},
		"three": {volB, volC, volA},
	}
	names := []string{"two", "mix", "three"}

	rl := &tierLedger{seqTry: map[int64]int64{}, seqAck: map[int64]bool{}, killBy: map[int]time.Time{}}
	for k := range rl.vers {
		rl.vers[k] = map[int64]*tierVersion{}
	}
	led := &placeLedger{rows: rl, bound: map[string]string{"v": "three", "a": "mix"}, pending: map[string]string{},
		tableID: map[string]uint64{}, seenLoc: map[string]int{}, altered: make(chan struct{}, 1), serverLog: serverLog}

	check := func(ctx context.Context, c *pgx.Conn, round int) {
		if round == 0 {
			stmts := []string{}
			for _, n := range names {
				quoted := make([]string, len(policies[n]))
				for i, v := range policies[n] {
					quoted[i] = "'" + v + "'"
				}
				stmts = append(stmts, fmt.Sprintf("CREATE POLICY %s FOR PLACEMENT (volumes = (%s))", n, strings.Join(quoted, ", ")))
			}
			stmts = append(stmts,
				"CREATE TABLE v (k INT64 NOT NULL, val INT64, i INT64, PRIMARY KEY (k)) MODE VERSIONED VALID BY (i) SHARDS 3 POLICY three",
				"CREATE TABLE a (seq INT64, w INT64) MODE APPEND SHARDS 2 POLICY mix",
			)
			execAll(t, ctx, c, stmts...)
			led.mu.Lock()
			defer led.mu.Unlock()
			led.snaps = append(led.snaps, placeSnap{commit: placeLastCommit(t, ctx, c, round), v: map[int64]tierCur{}})
			return
		}
		verifyPlaced(t, ctx, c, led, round, data, vols, policies)
	}

	write := func(ctx context.Context, url string, round int, stop <-chan struct{}) {
		var wg sync.WaitGroup
		for w := 0; w < workers; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				wc, err := pgx.Connect(ctx, url)
				if err != nil {
					return // the kill may come first
				}
				defer wc.Close(context.Background())
				wrng := rand.New(rand.NewPCG(seed+uint64(round*workers+w), 29))
				last := time.Now()
				every := func(lo, span int) bool {
					if time.Since(last) > time.Duration(lo+wrng.IntN(span))*time.Millisecond {
						last = time.Now()
						return true
					}
					return false
				}
				for {
					select {
					case <-stop:
						return
					default:
					}
					var err error
					switch {
					case w == 0 && every(200, 300):
						// Flush, merge, and move parts to their volumes at once.
						if _, err = wc.Exec(ctx, "CHECKPOINT"); err == nil {
							led.mu.Lock()
							led.ckpts++
							led.mu.Unlock()
						}
					case w == 1 && every(250, 500):
						err = placeAlter(ctx, wc, led, wrng, names)
					case wrng.IntN(2) == 0:
						err = placeAppend(ctx, wc, led, wrng, int64(w))
					default:
						err = tierVersions(ctx, wc, rl, wrng, round)
					}
					if err != nil {
						var pe *pgconn.PgError
						if errors.As(err, &pe) && pe.Code == "XX000" && strings.Contains(pe.Message, "schema changed since the statement was planned") {
							// A write racing ALTER … SET POLICY ran out of
							// replans (session.maxReplans) before the DDL
							// was applied: nothing was written. A bug,
							// reported at the end; the round goes on.
							led.mu.Lock()
							if led.replans++; led.replans == 1 {
								led.replanErr = fmt.Sprintf("round %d: %v", round, err)
							}
							led.mu.Unlock()
							continue
						}
						if errors.As(err, &pe) {
							led.mu.Lock()
							if led.pgErr == nil {
								led.pgErr = err
							}
							led.mu.Unlock()
						}
						return // the server is gone, or answered with an error (reported below)
					}
				}
			}()
		}
		wg.Wait()
		<-stop // the server has exited
		led.mu.Lock()
		defer led.mu.Unlock()
		if led.pgErr != nil {
			t.Errorf("round %d: a statement failed: %v", round, led.pgErr)
			led.pgErr = nil
		}
		files, err := placeListFiles(data, vols)
		if err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		led.atKill = map[string]bool{}
		twice := 0
		for id, fs := range files {
			for _, f := range fs {
				led.atKill[f.path] = true
			}
			if id != 0 && len(fs) > 1 {
				twice++
			}
		}
		led.twice = append(led.twice, twice)
		led.planted = placePlantStrays(t, data, vols, policies, names, files, rng, round)
	}

	// Every other round is killed a few milliseconds after an ALTER …
	// SET POLICY is acknowledged, while its moves are likely under way;
	// the others at a random moment, among flushes and merges too.
	pause := func() time.Duration {
		d := time.Duration(1200+rng.IntN(1800)) * time.Millisecond
		if rng.IntN(2) == 0 {
			return d
		}
		time.Sleep(d / 2)
		select {
		case <-led.altered:
		default:
		}
		select {
		case <-led.altered:
		case <-time.After(time.Second):
		}
		return time.Duration(rng.IntN(30)) * time.Millisecond
	}
	runCrashRounds(t, bin, data, rounds, pause, check, write)
	if out, err := exec.Command(bin, "check", data).CombinedOutput(); err != nil {
		t.Fatalf("strata check after SIGTERM: %v\n%s", err, out)
	}

	led.mu.Lock()
	defer led.mu.Unlock()
	rl.mu.Lock()
	defer rl.mu.Unlock()
	var versions, acked int
	for k := 1; k <= tierKeys; k++ {
		for _, x := range rl.vers[k] {
			versions++
			if x.acked {
				acked++
			}
		}
	}
	seenLoc := map[string]int{}
	for l, n := range led.seenLoc {
		seenLoc[strings.TrimPrefix(l, "volume:"+root+string(filepath.Separator))] = n
	}
	t.Logf("%d append rows acknowledged of %d sent (%d bulk inserts); %d versions acknowledged of %d sent; %d ALTER … SET POLICY acknowledged, %d CHECKPOINTs; "+
		"parts away from their volume at each restart %v, settled without CHECKPOINT %v; parts with files in two places at each kill %v, part files removed by each restart %v; parts seen at restarts per location %v; table ids %v; %d kills",
		len(rl.seqAck), len(rl.seqTry), led.bulkAcked, acked, versions, led.alters, led.ckpts, led.away, led.unaided, led.twice, led.swept, seenLoc, led.tableID, rounds)
	if led.replans > 0 {
		t.Errorf("%d writes failed with an internal error while an ALTER TABLE … SET POLICY was being applied (nothing was written; a write that races a DDL should be planned again on the new catalog, not fail); the first: %s",
			led.replans, led.replanErr)
	}
	if len(rl.seqAck) < rounds || acked < rounds {
		t.Fatalf("only %d append rows and %d versions acknowledged over %d rounds: the test did not exercise the server", len(rl.seqAck), acked, rounds)
	}
	if led.alters < rounds/2 {
		t.Fatalf("only %d ALTER TABLE … SET POLICY acknowledged over %d rounds: placement hardly changed", led.alters, rounds)
	}
	for _, l := range append([]string{"local"}, placeLocs(vols)...) {
		if led.seenLoc[l] == 0 {
			t.Errorf("no restart found a part at %s", l)
		}
	}
}

// placeLocs returns the locations system.parts shows for the volumes.
func placeLocs(vols []string) []string {
	out := make([]string, len(vols))
	for i, v := range vols {
		out[i] = "volume:" + v
	}
	return out
}

// placeHome is where shard of table id lives under a placement policy
// over vols (the data directory when there is none).
func placeHome(vols []string, id, shard uint64) string {
	if len(vols) == 0 {
		return "local"
	}
	v := vols[(id+shard)%uint64(len(vols))]
	if v == "." {
		return "local"
	}
	return "volume:" + v
}

// placeAlter binds v or a to another placement policy.
func placeAlter(ctx context.Context, wc *pgx.Conn, led *placeLedger, wrng *rand.Rand, names []string) error {
	table := []string{"v", "a"}[wrng.IntN(2)]
	led.mu.Lock()
	cur := led.bound[table]
	led.mu.Unlock()
	var p string
	for p = cur; p == cur; {
		p = names[wrng.IntN(len(names))]
	}
	led.mu.Lock()
	led.pending[table] = p
	led.mu.Unlock()
	if _, err := wc.Exec(ctx, fmt.Sprintf("ALTER TABLE %s SET POLICY %s", table, p)); err != nil {
		return err
	}
	led.mu.Lock()
	led.bound[table] = p
	delete(led.pending, table)
	led.alters++
	led.mu.Unlock()
	select {
	case led.altered <- struct{}{}:
	default:
	}
	return nil
}

// placeAppend inserts rows of unique seq into a in one commit: a few, or
// now and then several hundred, for parts that take a while to copy.
func placeAppend(ctx context.Context, wc *pgx.Conn, led *placeLedger, wrng *rand.Rand, w int64) error {
	if wrng.IntN(50) != 0 {
		return tierAppend(ctx, wc, led.rows, wrng, w)
	}
	n := int64(200 + wrng.IntN(800))
	l := led.rows
	l.mu.Lock()
	lo := l.nextSeq + 1
	l.nextSeq += n
	for s := lo; s <= l.nextSeq; s++ {
		l.seqTry[s] = w
	}
	l.mu.Unlock()
	if _, err := wc.Exec(ctx, fmt.Sprintf("INSERT INTO a SELECT g, %d FROM generate_series(%d, %d) g", w, lo, lo+n-1)); err != nil {
		return err
	}
	l.mu.Lock()
	for s := lo; s < lo+n; s++ {
		l.seqAck[s] = true
	}
	l.mu.Unlock()
	led.mu.Lock()
	led.bulkAcked++
	led.mu.Unlock()
	return nil
}

// placeListFiles returns the part files in data's parts/ folder and in
// every strata-* folder of the volumes, by the part id each file holds
// (0 for a file that does not open as a part, or whose name is not its
// table's and shard's).
func placeListFiles(data string, vols []string) (map[uint64][]placeFile, error) {
	out := map[uint64][]placeFile{}
	list := func(dir, loc string) error {
		ents, err := os.ReadDir(dir)
		if errors.Is(err, os.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		for _, e := range ents {
			f := placeFile{loc: loc, path: filepath.Join(dir, e.Name())}
			if m := placeFileName.FindStringSubmatch(e.Name()); m != nil {
				if r, err := part.Open(vfs.OS{}, f.path); err == nil {
					meta := r.Meta()
					if fmt.Sprintf("%d-%d", meta.Table, meta.Shard) == m[1]+"-"+m[2] {
						f.table, f.shard, f.part = uint64(meta.Table), uint64(meta.Shard), meta.Part
					}
					r.Close()
				}
			}
			out[f.part] = append(out[f.part], f)
		}
		return nil
	}
	if err := list(filepath.Join(data, "parts"), "local"); err != nil {
		return nil, err
	}
	for _, v := range vols {
		dirs, err := filepath.Glob(filepath.Join(v, "strata-*"))
		if err != nil {
			return nil, err
		}
		if len(dirs) > 1 {
			return nil, fmt.Errorf("volume %s has %d database folders: %v", v, len(dirs), dirs)
		}
		for _, d := range dirs {
			if err := list(d, "volume:"+v); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}

// placePlantStrays puts, in the killed directory, part files that no
// manifest names, as a crash leaves them: half copies of live parts (a
// move cut short) and a file of a part id never handed out in parts/ and
// in a volume folder (a flush cut short). It returns their paths.
func placePlantStrays(t *testing.T, data string, vols []string, policies map[string][]string, names []string, files map[uint64][]placeFile, rng *rand.Rand, round int) []string {
	t.Helper()
	var folder string // this database's folder name on the volumes
	for _, v := range vols {
		if dirs, _ := filepath.Glob(filepath.Join(v, "strata-*")); len(dirs) == 1 {
			folder = filepath.Base(dirs[0])
		}
	}
	if folder == "" {
		return nil
	}
	dirOf := func(loc string) string {
		if loc == "local" {
			return filepath.Join(data, "parts")
		}
		return filepath.Join(strings.TrimPrefix(loc, "volume:"), folder)
	}
	var planted []string
	plant := func(path string, src string, n int64) {
		if _, err := os.Stat(path); err == nil {
			return
		}
		if _, err := os.Stat(filepath.Dir(path)); err != nil {
			return // a volume folder the server has not made: left alone
		}
		out, err := os.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		if src != "" {
			in, err := os.Open(src)
			if err != nil {
				t.Fatal(err)
			}
			_, err = io.CopyN(out, in, n)
			in.Close()
			if err != nil && err != io.EOF {
				t.Fatal(err)
			}
		} else if _, err := out.Write([]byte("not a part: a flush cut short")); err != nil {
			t.Fatal(err)
		}
		if err := out.Close(); err != nil {
			t.Fatal(err)
		}
		planted = append(planted, path)
	}
	// Half copies of up to three part files: under its own name in
	// another place, and under a name of its own (an id no manifest hands
	// out soon) on the shard's volume under one of the policies, as moves
	// cut short leave them.
	var ids []uint64
	for id := range files {
		if id != 0 {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	rng.Shuffle(len(ids), func(i, j int) { ids[i], ids[j] = ids[j], ids[i] })
	locs := append([]string{"local"}, placeLocs(vols)...)
	for i, id := range ids[:min(3, len(ids))] {
		f := files[id][0]
		fi, err := os.Stat(f.path)
		if err != nil {
			t.Fatal(err)
		}
		if l := locs[rng.IntN(len(locs))]; l != f.loc {
			plant(filepath.Join(dirOf(l), filepath.Base(f.path)), f.path, fi.Size()/2)
		}
		l := placeHome(policies[names[rng.IntN(len(names))]], f.table, f.shard)
		plant(filepath.Join(dirOf(l), fmt.Sprintf("%d-%d-%d.part", f.table, f.shard, uint64(1)<<40+uint64(round*8+i))), f.path, fi.Size()/2)
	}
	// Parts never written in full, of ids no manifest will hand out soon.
	never := fmt.Sprintf("1-0-%d.part", uint64(1)<<40+uint64(round*8+7))
	plant(filepath.Join(data, "parts", never), "", 0)
	plant(filepath.Join(vols[round%len(vols)], folder, never), "", 0)
	return planted
}

// placeLastCommit returns the last commit.
func placeLastCommit(t *testing.T, ctx context.Context, c *pgx.Conn, round int) uint64 {
	t.Helper()
	var n int64
	if err := c.QueryRow(ctx, "SELECT max(commit) FROM system.commits").Scan(&n); err != nil {
		t.Fatalf("round %d: last commit: %v", round, err)
	}
	return uint64(n)
}

// verifyPlaced checks the restarted server against what the clients of
// TestPlacementCrash were told, and waits for its parts to settle.
func verifyPlaced(t *testing.T, ctx context.Context, c *pgx.Conn, led *placeLedger, round int, data string, vols []string, policies map[string][]string) {
	t.Helper()
	led.mu.Lock()
	defer led.mu.Unlock()
	rl := led.rows
	rl.mu.Lock()
	defer rl.mu.Unlock()
	query := roundQuery(t, ctx, c, round)

	// The strays put in place after the kill went at the open.
	for _, p := range led.planted {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("round %d: the stray part file %s is still there after the restart", round, p)
		}
	}
	files, err := placeListFiles(data, vols)
	if err != nil {
		t.Fatalf("round %d: %v", round, err)
	}
	now := map[string]bool{}
	for _, fs := range files {
		for _, f := range fs {
			now[f.path] = true
		}
	}
	swept := 0
	for p := range led.atKill {
		if !now[p] {
			swept++
		}
	}
	led.swept = append(led.swept, swept)

	// Each table's placement policy: the last acknowledged, or one sent.
	boundNow := map[string]string{}
	query("SELECT table_name, policy FROM system.table_storage_plans WHERE role = 'placement'", func(rows pgx.Rows) error {
		var table, p string
		if err := rows.Scan(&table, &p); err != nil {
			return err
		}
		boundNow[table] = p
		return nil
	})
	for _, table := range []string{"v", "a"} {
		p := boundNow[table]
		if p != led.bound[table] && p != led.pending[table] {
			t.Errorf("round %d: %s has placement policy %q, acknowledged %q, in flight %q", round, table, p, led.bound[table], led.pending[table])
		}
		led.bound[table] = p
		delete(led.pending, table)
	}
	// Where the parts are at the open, before any CHECKPOINT.
	parts, _ := placeProblems(t, ctx, c, led, round, data, vols, policies, boundNow, query)
	away := 0
	for _, p := range parts {
		led.seenLoc[p.loc]++
		if p.loc != placeHome(policies[boundNow[p.table]], led.tableID[p.table], p.shard) {
			away++
		}
	}
	led.away = append(led.away, away)

	// The append table: every acknowledged row once, nothing never sent.
	seen := map[int64]int{}
	var aRows, aSum int64
	query("SELECT seq, w FROM a", func(rows pgx.Rows) error {
		var seq, w int64
		if err := rows.Scan(&seq, &w); err != nil {
			return err
		}
		seen[seq]++
		aRows, aSum = aRows+1, aSum+seq
		if sw, ok := rl.seqTry[seq]; !ok || sw != w {
			t.Errorf("round %d: a has (seq %d, w %d), which was never sent", round, seq, w)
		}
		return nil
	})
	for seq, n := range seen {
		if n != 1 {
			t.Errorf("round %d: append row seq %d is there %d times", round, seq, n)
		}
	}
	lost := 0
	for seq := range rl.seqAck {
		if seen[seq] == 0 {
			if lost++; lost <= 10 {
				t.Errorf("round %d: acknowledged append row seq %d is lost", round, seq)
			}
		}
	}
	if lost > 10 {
		t.Errorf("round %d: %d acknowledged append rows lost in all", round, lost)
	}

	// v's current rows: the greatest acknowledged i per key, or a later
	// one that was sent.
	current := rl.verifyCurrent(t, round, query)

	// versions(v): with no retention every version that landed stays,
	// once, whichever volumes its parts went through.
	listed := rl.scanVersions(t, round, query, func(k, i, _ int64, state string) {
		if cu := current[k]; (state == "current") != (cu.i == i) {
			t.Errorf("round %d: versions(v) has (k %d, i %d) %s, v reads i %d current", round, k, i, state, cu.i)
		}
	})
	for k := int64(1); k <= tierKeys; k++ {
		for i, x := range rl.vers[k] {
			if x.landed && !listed[vk{k, i}] {
				t.Errorf("round %d: versions(v) lacks (k %d, i %d, acknowledged %v), which landed", round, k, i, x.acked)
			}
		}
	}

	// Every earlier restart's reading, AS OF its commit.
	for _, s := range led.snaps {
		got := map[int64]tierCur{}
		query(fmt.Sprintf("SELECT k, val, i FROM v AS OF COMMIT %d", s.commit), func(rows pgx.Rows) error {
			var k, val, i int64
			if err := rows.Scan(&k, &val, &i); err != nil {
				return err
			}
			got[k] = tierCur{val, i}
			return nil
		})
		if len(got) != len(s.v) {
			t.Errorf("round %d: v AS OF COMMIT %d has %d keys, %d were read then", round, s.commit, len(got), len(s.v))
		}
		for k, want := range s.v {
			if got[k] != want {
				t.Errorf("round %d: v AS OF COMMIT %d has key %d at (val, i) %v, %v was read then", round, s.commit, k, got[k], want)
			}
		}
		var n, sum int64
		if err := c.QueryRow(ctx, fmt.Sprintf("SELECT count(*), coalesce(sum(seq), 0) FROM a AS OF COMMIT %d", s.commit)).Scan(&n, &sum); err != nil {
			t.Fatalf("round %d: a AS OF COMMIT %d: %v", round, s.commit, err)
		}
		if n != s.aRows || sum != s.aSum {
			t.Errorf("round %d: a AS OF COMMIT %d has %d rows of seq sum %d, %d rows of sum %d were read then", round, s.commit, n, sum, s.aRows, s.aSum)
		}
	}

	if t.Failed() {
		t.FailNow()
	}

	// What survived stays: later rounds hold it to what was seen here.
	for seq := range seen {
		rl.seqAck[seq] = true
	}
	for k, cu := range current {
		if k >= 1 && k <= tierKeys {
			rl.floorI[k] = max(rl.floorI[k], cu.i)
		}
	}

	// Where the parts are: once settled, each on its shard's volume and
	// no other part file anywhere.
	start := time.Now()
	var lastCkpt time.Time
	for {
		_, problems := placeProblems(t, ctx, c, led, round, data, vols, policies, boundNow, query)
		if len(problems) == 0 {
			led.unaided = append(led.unaided, lastCkpt.IsZero())
			break
		}
		if time.Since(start) > placeSettle {
			t.Fatalf("round %d: parts not settled %s after the restart (%d problems):\n%s\nthe server log's lines about those parts:\n%s",
				round, placeSettle, len(problems), strings.Join(problems, "\n"), placeLogAbout(led.serverLog, problems))
		}
		if time.Since(start) > placeUnaided && time.Since(lastCkpt) > 300*time.Millisecond {
			if _, err := c.Exec(ctx, "CHECKPOINT"); err != nil {
				t.Fatalf("round %d: CHECKPOINT: %v", round, err)
			}
			lastCkpt = time.Now()
		}
		time.Sleep(50 * time.Millisecond)
	}
	led.snaps = append(led.snaps, placeSnap{commit: placeLastCommit(t, ctx, c, round), v: current, aRows: aRows, aSum: aSum})
}

// placeProblems compares system.parts with the part files on disk and with
// where each shard should be: it returns the parts and every difference,
// nil once settled. Table ids are learned from the part files' names.
func placeProblems(t *testing.T, ctx context.Context, c *pgx.Conn, led *placeLedger, round int, data string, vols []string,
	policies map[string][]string, bound map[string]string, query func(string, func(pgx.Rows) error)) ([]placePart, []string) {
	t.Helper()
	var parts []placePart
	query("SELECT table_name, shard, part, location FROM system.parts", func(rows pgx.Rows) error {
		var p placePart
		if err := rows.Scan(&p.table, &p.shard, &p.part, &p.loc); err != nil {
			return err
		}
		parts = append(parts, p)
		return nil
	})
	files, err := placeListFiles(data, vols)
	if err != nil {
		t.Fatalf("round %d: %v", round, err)
	}
	var problems []string
	named := map[uint64]bool{}
	for _, p := range parts {
		named[p.part] = true
		fs := files[p.part]
		var at *placeFile
		for i := range fs {
			if fs[i].loc == p.loc {
				at = &fs[i]
			} else {
				problems = append(problems, fmt.Sprintf("part %d of %s shard %d (at %s) has another file: %s", p.part, p.table, p.shard, p.loc, fs[i].path))
			}
		}
		if at == nil {
			problems = append(problems, fmt.Sprintf("part %d of %s shard %d has no file at %s", p.part, p.table, p.shard, p.loc))
			continue
		}
		if at.shard != p.shard {
			t.Fatalf("round %d: part %d of %s shard %d is in file %s", round, p.part, p.table, p.shard, at.path)
		}
		if id, ok := led.tableID[p.table]; !ok {
			led.tableID[p.table] = at.table
		} else if id != at.table {
			t.Fatalf("round %d: part %d of %s (table id %d) is in file %s", round, p.part, p.table, id, at.path)
		}
		if home := placeHome(policies[bound[p.table]], led.tableID[p.table], p.shard); p.loc != home {
			problems = append(problems, fmt.Sprintf("part %d of %s shard %d is at %s, not on its volume %s (policy %s)", p.part, p.table, p.shard, p.loc, home, bound[p.table]))
		}
	}
	for id, fs := range files {
		if !named[id] {
			for _, f := range fs {
				problems = append(problems, fmt.Sprintf("file %s is no part's", f.path))
			}
		}
	}
	slices.Sort(problems)
	return parts, problems
}

// placeTail returns the last n lines of s.
func placeTail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// placeLogAbout returns the lines of the server log at path that name a
// part problems name (part N, or a file …-N.part).
func placeLogAbout(path string, problems []string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	ids := map[string]bool{}
	for _, p := range problems {
		for _, m := range regexp.MustCompile(`part ([0-9]+)|-([0-9]+)\.part`).FindAllStringSubmatch(p, -1) {
			ids[m[1]+m[2]] = true
		}
	}
	var out []string
	for _, l := range strings.Split(string(b), "\n") {
		for id := range ids {
			if strings.Contains(l, "part="+id+" ") || strings.Contains(l, "-"+id+".part") || strings.Contains(l, " "+id+" ") {
				out = append(out, l)
				break
			}
		}
	}
	return strings.Join(out, "\n")
}
