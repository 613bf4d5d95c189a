package main

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// tierKeys is how many keys of the versioned table TestTierCrash writes.
const tierKeys = 50

// tierHistory is the retention policy's history interval in TestTierCrash,
// tierSlack how far the test keeps from its edge when it judges whether a
// version must have expired or must still be there (the client's clock
// readings and the commit times they bound are a few milliseconds apart).
const (
	tierHistory = 2 * time.Second
	tierSlack   = 300 * time.Millisecond
)

// tierVersion is one version of a key of the versioned table v as the
// clients of TestTierCrash sent it.
type tierVersion struct {
	val    int64
	round  int       // the round it was sent in
	sent   time.Time // before the statement was sent
	acked  bool
	ackAt  time.Time // when the commit was acknowledged
	landed bool      // acknowledged, or seen after a restart though never acknowledged
	gone   bool      // landed, and found expired from versions(v)
}

// tierLedger is what the clients of TestTierCrash know about their writes.
type tierLedger struct {
	mu        sync.Mutex
	nextSeq   int64
	seqTry    map[int64]int64 // seq of a row of a sent → the writer that sent it
	seqAck    map[int64]bool  // seq → acknowledged (or seen after a restart)
	nextI     [tierKeys + 1]int64
	vers      [tierKeys + 1]map[int64]*tierVersion // per key: i → version
	floorI    [tierKeys + 1]int64                  // per key: greatest i acknowledged or seen current
	killBy    map[int]time.Time                    // round → a time after its SIGKILL
	expired   int                                  // landed versions no longer in versions(v)
	moved     map[int][2]int64                     // round → parts of v and of a not local at its restart
	movedLive map[int]int64                        // round → most parts not local seen while writing
	pgErr     error                                // an error the server answered a write with
}

// commitBound returns a time no earlier than version x's commit, which
// landed: its acknowledgement, or else the kill of the round it was sent in.
func (l *tierLedger) commitBound(x *tierVersion) (time.Time, bool) {
	if x.acked {
		return x.ackAt, true
	}
	at, ok := l.killBy[x.round]
	return at, ok
}

// TestTierCrash (R9.3, R9.4, R5.6): clients write to a versioned table
// bound to a storage policy (move_after 1 second, to the folder `cold` in
// the data directory) and a retention policy (2 seconds of history), and
// to an append table bound to the storage policy, over pgx to a real
// `strata serve`, which the background merger meanwhile flushes, merges
// for retention and moves parts of (one writer runs CHECKPOINT now and
// then to do what is due at once; most rounds let one table go quiet so
// that its parts move while the other is written, tierWritesAppend), and
// which is SIGKILLed at random moments, mid-ingest and so at times between
// a part's upload and its manifest edit, and restarted on the same
// directory. After every restart:
// each acknowledged append row is there exactly once and no row was never
// sent; each key's current version is the one with the greatest
// acknowledged i (or a later write's that was sent and landed); versions(v)
// holds only versions that were sent, at most once each, shows no version
// that stopped counting more than 2 s ago, and loses none that landed and
// stopped counting less than 2 s ago; `strata check` passes on the killed
// directory (runCrashRounds), and on the directory the final SIGTERM left.
// Parts must have been seen in the object store at some restart.
func TestTierCrash(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and kills servers")
	}
	bin, data := buildBinary(t)
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 17))
	const workers = 3
	const rounds = 8
	led := &tierLedger{seqTry: map[int64]int64{}, seqAck: map[int64]bool{}, killBy: map[int]time.Time{}, moved: map[int][2]int64{}, movedLive: map[int]int64{}}
	for k := range led.vers {
		led.vers[k] = map[int64]*tierVersion{}
	}
	check := func(ctx context.Context, c *pgx.Conn, round int) {
		if round > 0 {
			verifyTiered(t, ctx, c, led, round)
			return
		}
		execAll(t, ctx, c,
			"CREATE POLICY cold FOR STORAGE (object_store = 'file:cold', move_after = INTERVAL '1 second')",
			"CREATE POLICY keep2 FOR RETENTION (history = INTERVAL '2 seconds')",
			"CREATE TABLE v (k INT64 NOT NULL, val INT64, i INT64, PRIMARY KEY (k)) MODE VERSIONED VALID BY (i) POLICY cold, keep2",
			"CREATE TABLE a (seq INT64, w INT64) MODE APPEND POLICY cold",
		)
	}
	write := func(ctx context.Context, url string, round int, stop <-chan struct{}) {
		start := time.Now()
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			// stop is closed once the server has exited: every commit
			// of this round, acknowledged or not, came before now.
			defer wg.Done()
			<-stop
			led.mu.Lock()
			led.killBy[round] = time.Now()
			led.mu.Unlock()
		}()
		for w := 0; w < workers; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				wc, err := pgx.Connect(ctx, url)
				if err != nil {
					return // the kill may come first
				}
				defer wc.Close(context.Background())
				wrng := rand.New(rand.NewPCG(seed+uint64(round*workers+w), 19))
				lastCheckpoint := time.Now()
				for {
					select {
					case <-stop:
						return
					default:
					}
					var err error
					switch {
					case w == 0 && time.Since(lastCheckpoint) > time.Duration(200+wrng.IntN(300))*time.Millisecond:
						// Flush, merge and move what is due at once.
						if _, err = wc.Exec(ctx, "CHECKPOINT"); err == nil {
							var n int64
							if err = wc.QueryRow(ctx, "SELECT count(*) FROM system.parts WHERE location <> 'local'").Scan(&n); err == nil {
								led.mu.Lock()
								led.movedLive[round] = max(led.movedLive[round], n)
								led.mu.Unlock()
							}
						}
						lastCheckpoint = time.Now()
					case tierWritesAppend(round, time.Since(start), wrng):
						err = tierAppend(ctx, wc, led, wrng, int64(w))
					default:
						err = tierVersions(ctx, wc, led, wrng, round)
					}
					if err != nil {
						var pe *pgconn.PgError
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
		led.mu.Lock()
		defer led.mu.Unlock()
		if led.pgErr != nil {
			t.Errorf("round %d: a write failed: %v", round, led.pgErr)
			led.pgErr = nil
		}
	}
	runCrashRounds(t, bin, data, rounds, func() time.Duration { return time.Duration(1800+rng.IntN(2000)) * time.Millisecond }, check, write)
	if out, err := exec.Command(bin, "check", data).CombinedOutput(); err != nil {
		t.Fatalf("strata check after SIGTERM: %v\n%s", err, out)
	}

	led.mu.Lock()
	defer led.mu.Unlock()
	var movedMax int64
	for r := 1; r <= rounds; r++ {
		movedMax = max(movedMax, led.moved[r][0]+led.moved[r][1])
	}
	objects, _ := filepath.Glob(filepath.Join(data, "cold", "*"))
	var versions, ackedVersions int
	for k := 1; k <= tierKeys; k++ {
		for _, x := range led.vers[k] {
			versions++
			if x.acked {
				ackedVersions++
			}
		}
	}
	t.Logf("%d append rows acknowledged of %d sent; %d versions acknowledged of %d sent; %d expired from versions(v); parts of v and a in the object store at each restart %v, most while writing %v; %d objects in cold at the end; %d kills",
		len(led.seqAck), len(led.seqTry), ackedVersions, versions, led.expired, led.moved, led.movedLive, len(objects), rounds)
	if len(led.seqAck) < rounds || ackedVersions < rounds {
		t.Fatalf("only %d append rows and %d versions acknowledged over %d rounds: the test did not exercise the server", len(led.seqAck), ackedVersions, rounds)
	}
	if movedMax == 0 {
		t.Fatalf("no restart found a part in the object store: nothing was moved")
	}
	if led.expired == 0 {
		t.Fatalf("no version expired from versions(v): retention did nothing")
	}
}

// tierBurst is how long a round of TestTierCrash writes to both tables
// before it goes on with one of them, in the rounds that do.
const tierBurst = 400 * time.Millisecond

// tierWritesAppend picks the table the next write of a writer of
// TestTierCrash goes to, since its round began: true for a, false for v.
// Every third round writes both throughout; CHECKPOINT then merges each
// shard into one new run every time, so little is old enough to move, and
// the kill falls among flushes and merges. The others write both for
// tierBurst and then only v, or only a: the other table goes quiet, its
// parts move to the object store a second later while writes and
// CHECKPOINTs go on, and the kill falls among moves as well; the next
// round's writes merge the moved parts again.
func tierWritesAppend(round int, since time.Duration, wrng *rand.Rand) bool {
	if round%3 == 0 || since < tierBurst {
		return wrng.IntN(2) == 0
	}
	return round%3 == 2
}

// tierAppend inserts a few rows of unique seq into a in one commit.
func tierAppend(ctx context.Context, wc *pgx.Conn, led *tierLedger, wrng *rand.Rand, w int64) error {
	n := 1 + wrng.IntN(8)
	seqs := make([]int64, n)
	var sb strings.Builder
	sb.WriteString("INSERT INTO a VALUES ")
	led.mu.Lock()
	for j := range seqs {
		led.nextSeq++
		seqs[j] = led.nextSeq
		led.seqTry[seqs[j]] = w
		if j > 0 {
			sb.WriteString(", ")
		}
		fmt.Fprintf(&sb, "(%d, %d)", seqs[j], w)
	}
	led.mu.Unlock()
	if _, err := wc.Exec(ctx, sb.String()); err != nil {
		return err
	}
	led.mu.Lock()
	for _, s := range seqs {
		led.seqAck[s] = true
	}
	led.mu.Unlock()
	return nil
}

// tierVersions writes a new version, of the next i, of a few keys of v in
// one commit, by INSERT or UPSERT.
func tierVersions(ctx context.Context, wc *pgx.Conn, led *tierLedger, wrng *rand.Rand, round int) error {
	keys := wrng.Perm(tierKeys)[:1+wrng.IntN(4)]
	is := make([]int64, len(keys))
	var sb strings.Builder
	if wrng.IntN(2) == 0 {
		sb.WriteString("INSERT INTO v VALUES ")
	} else {
		sb.WriteString("UPSERT INTO v VALUES ")
	}
	led.mu.Lock()
	sent := time.Now()
	for j := range keys {
		keys[j]++
		k := keys[j]
		led.nextI[k]++
		is[j] = led.nextI[k]
		x := &tierVersion{val: wrng.Int64N(1 << 40), round: round, sent: sent}
		led.vers[k][is[j]] = x
		if j > 0 {
			sb.WriteString(", ")
		}
		fmt.Fprintf(&sb, "(%d, %d, %d)", k, x.val, is[j])
	}
	led.mu.Unlock()
	if _, err := wc.Exec(ctx, sb.String()); err != nil {
		return err
	}
	led.mu.Lock()
	at := time.Now()
	for j, k := range keys {
		x := led.vers[k][is[j]]
		x.acked, x.landed, x.ackAt = true, true, at
		led.floorI[k] = max(led.floorI[k], is[j])
	}
	led.mu.Unlock()
	return nil
}

// roundQuery returns a function that runs q on c and hands each row to
// scan, failing the test (naming round) on any error.
func roundQuery(t *testing.T, ctx context.Context, c *pgx.Conn, round int) func(q string, scan func(rows pgx.Rows) error) {
	return func(q string, scan func(rows pgx.Rows) error) {
		t.Helper()
		rows, err := c.Query(ctx, q)
		if err != nil {
			t.Fatalf("round %d: %s: %v", round, q, err)
		}
		defer rows.Close()
		for rows.Next() {
			if err := scan(rows); err != nil {
				t.Fatalf("round %d: %s: %v", round, q, err)
			}
		}
		if err := rows.Err(); err != nil {
			t.Fatalf("round %d: %s: %v", round, q, err)
		}
	}
}

// tierCur is a current row of v: its val and i.
type tierCur struct{ val, i int64 }

// verifyCurrent checks v's current rows against the ledger (held by the
// caller): one per key, each one sent, none behind the greatest i
// acknowledged or seen before, no acknowledged key missing. It returns
// them by key.
// vk names one version of v: its key and its i.
type vk struct{ k, i int64 }

// scanVersions reads versions(v), checks what every check of it needs —
// each version listed once, of a key written, sent with that value —
// marks each one listed as landed, hands it to check, and returns the
// versions listed.
func (led *tierLedger) scanVersions(t *testing.T, round int, query func(string, func(pgx.Rows) error), check func(k, i, val int64, state string)) map[vk]bool {
	listed := map[vk]bool{}
	query("SELECT k, i, val, _state FROM versions(v)", func(rows pgx.Rows) error {
		var k, i, val int64
		var state string
		if err := rows.Scan(&k, &i, &val, &state); err != nil {
			return err
		}
		if listed[vk{k, i}] {
			t.Errorf("round %d: versions(v) lists (k %d, i %d) twice", round, k, i)
		}
		listed[vk{k, i}] = true
		if k < 1 || k > tierKeys {
			t.Errorf("round %d: versions(v) has key %d, never written", round, k)
			return nil
		}
		x, ok := led.vers[k][i]
		if !ok || x.val != val {
			t.Errorf("round %d: versions(v) has (k %d, val %d, i %d), which was never sent", round, k, val, i)
			return nil
		}
		x.landed = true
		check(k, i, val, state)
		return nil
	})
	return listed
}

func (led *tierLedger) verifyCurrent(t *testing.T, round int, query func(string, func(pgx.Rows) error)) map[int64]tierCur {
	t.Helper()
	current := map[int64]tierCur{}
	query("SELECT k, val, i FROM v", func(rows pgx.Rows) error {
		var k, val, i int64
		if err := rows.Scan(&k, &val, &i); err != nil {
			return err
		}
		if _, dup := current[k]; dup {
			t.Errorf("round %d: key %d is current twice", round, k)
		}
		current[k] = tierCur{val, i}
		if k < 1 || k > tierKeys {
			t.Errorf("round %d: v has key %d, never written", round, k)
			return nil
		}
		x, ok := led.vers[k][i]
		switch {
		case !ok || x.val != val:
			t.Errorf("round %d: v has (k %d, val %d, i %d), which was never sent", round, k, val, i)
		case i < led.floorI[k]:
			t.Errorf("round %d: key %d is at i %d (val %d), behind i %d, acknowledged or seen before", round, k, i, val, led.floorI[k])
		}
		return nil
	})
	for k := int64(1); k <= tierKeys; k++ {
		if _, ok := current[k]; !ok && led.floorI[k] > 0 {
			t.Errorf("round %d: key %d is lost (i %d was acknowledged)", round, k, led.floorI[k])
		}
	}
	return current
}

// verifyTiered checks the restarted server against what the clients of
// TestTierCrash were told.
func verifyTiered(t *testing.T, ctx context.Context, c *pgx.Conn, led *tierLedger, round int) {
	t.Helper()
	led.mu.Lock()
	defer led.mu.Unlock()
	query := roundQuery(t, ctx, c, round)

	// The append table: every acknowledged row once, nothing never sent.
	seen := map[int64]int{}
	query("SELECT seq, w FROM a", func(rows pgx.Rows) error {
		var seq, w int64
		if err := rows.Scan(&seq, &w); err != nil {
			return err
		}
		seen[seq]++
		if sw, ok := led.seqTry[seq]; !ok || sw != w {
			t.Errorf("round %d: a has (seq %d, w %d), which was never sent", round, seq, w)
		}
		return nil
	})
	for seq, n := range seen {
		if n != 1 {
			t.Errorf("round %d: append row seq %d is there %d times", round, seq, n)
		}
	}
	for seq := range led.seqAck {
		if seen[seq] == 0 {
			t.Errorf("round %d: acknowledged append row seq %d is lost", round, seq)
		}
	}

	// The versioned table's current rows: the greatest acknowledged i
	// per key, or a later one that was sent.
	current := led.verifyCurrent(t, round, query)

	// versions(v): only versions that were sent, each at most once, the
	// current one as above; none that stopped counting more than the
	// history interval ago, and every one that landed and stopped counting
	// less than that ago.
	before := time.Now()
	listed := led.scanVersions(t, round, query, func(k, i, val int64, state string) {
		switch state {
		case "current":
			if cu := current[k]; cu.i != i || cu.val != val {
				t.Errorf("round %d: versions(v) has (k %d, i %d, val %d) current, v reads (i %d, val %d)", round, k, i, val, cu.i, cu.val)
			}
		case "superseded", "late":
			if cu, ok := current[k]; ok && cu.i == i {
				t.Errorf("round %d: versions(v) has (k %d, i %d) %s, v reads it current", round, k, i, state)
			}
		default:
			t.Errorf("round %d: versions(v) has (k %d, i %d) %s", round, k, i, state)
		}
	})
	after := time.Now()
	for k := int64(1); k <= tierKeys; k++ {
		if cu, ok := current[k]; ok && !listed[vk{k, cu.i}] {
			t.Errorf("round %d: versions(v) lacks key %d's current version (i %d)", round, k, cu.i)
		}
		// Walk down from the greatest i: laterBound is the earliest
		// bound on the commit of a greater version that landed (by then
		// this one stopped counting), laterSent the earliest send of a
		// greater version (this one counted until then at least, or until
		// its own commit if it never counted).
		var laterBound, laterSent time.Time
		for i := led.nextI[k]; i >= 1; i-- {
			x := led.vers[k][i]
			if x == nil {
				continue
			}
			notCurrent := laterBound != time.Time{}
			if listed[vk{k, i}] && notCurrent {
				if cb, ok := led.commitBound(x); ok {
					stopped := cb
					if laterBound.After(stopped) {
						stopped = laterBound
					}
					if before.Sub(stopped) > tierHistory+tierSlack {
						t.Errorf("round %d: versions(v) lists (k %d, i %d), which stopped counting by %s, %s before the read (history is %s)",
							round, k, i, stopped.Format(time.StampMilli), before.Sub(stopped), tierHistory)
					}
				}
			}
			if x.landed && !listed[vk{k, i}] {
				stoppedFrom := x.sent
				if laterSent != (time.Time{}) && laterSent.Before(stoppedFrom) {
					stoppedFrom = laterSent
				}
				if after.Sub(stoppedFrom) < tierHistory-tierSlack {
					t.Errorf("round %d: versions(v) lacks (k %d, i %d, acknowledged %v), which counted until %s or later, only %s before the read (history is %s)",
						round, k, i, x.acked, stoppedFrom.Format(time.StampMilli), after.Sub(stoppedFrom), tierHistory)
				}
				if !x.gone {
					x.gone = true
					led.expired++
				}
			}
			if x.landed || listed[vk{k, i}] {
				if cb, ok := led.commitBound(x); ok && (laterBound == time.Time{} || cb.Before(laterBound)) {
					laterBound = cb
				}
			}
			if laterSent == (time.Time{}) || x.sent.Before(laterSent) {
				laterSent = x.sent
			}
		}
	}

	// Where the parts are.
	var moved [2]int64 // of v, of a
	query("SELECT table_name, location, count(*) FROM system.parts WHERE table_name IN ('v', 'a') GROUP BY table_name, location", func(rows pgx.Rows) error {
		var table, loc string
		var n int64
		if err := rows.Scan(&table, &loc, &n); err != nil {
			return err
		}
		switch loc {
		case "local":
		case "file:cold":
			if table == "v" {
				moved[0] = n
			} else {
				moved[1] = n
			}
		default:
			t.Errorf("round %d: %d parts of %s are at %q", round, n, table, loc)
		}
		return nil
	})
	led.moved[round] = moved
	if t.Failed() {
		t.FailNow()
	}

	// What survived stays: later rounds hold it to what was seen here.
	for seq := range seen {
		led.seqAck[seq] = true
	}
	for k, cu := range current {
		if k >= 1 && k <= tierKeys {
			led.floorI[k] = max(led.floorI[k], cu.i)
		}
	}
}
