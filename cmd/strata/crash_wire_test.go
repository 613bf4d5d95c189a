package main

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// wireLedger is what the clients of TestCrashOverWire know about their
// writes: the ids whose commit the server acknowledged, the ids whose
// commit was sent but never answered (either outcome is allowed), and per
// worker the last acknowledged and last attempted counter value.
type wireLedger struct {
	mu        sync.Mutex
	acked     map[int64]bool // id → acknowledged
	attempted map[int64]bool // sent, acknowledged or not
	lastAck   map[int64]int64
	lastTry   map[int64]int64
}

func (l *wireLedger) try(id int64) {
	l.mu.Lock()
	l.attempted[id] = true
	l.mu.Unlock()
}

func (l *wireLedger) ack(id int64) {
	l.mu.Lock()
	l.acked[id] = true
	l.mu.Unlock()
}

// TestCrashOverWire (R5.6): clients commit over pgx to a real `strata
// serve`, which is SIGKILLed at random moments and restarted on the same
// directory. After every restart each acknowledged commit is there exactly
// once (an append table would show a replayed commit twice), a
// two-statement transaction is all or nothing, an upsert counter never goes
// back behind its last acknowledged value nor past its last attempt, and
// `strata check DIR` passes on the killed directory.
func TestCrashOverWire(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and kills servers")
	}
	bin, data := buildBinary(t)
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 7))
	seed := rng.Uint64()
	t.Logf("seed %d", seed)
	rng = rand.New(rand.NewPCG(seed, 7))
	led := &wireLedger{acked: map[int64]bool{}, attempted: map[int64]bool{}, lastAck: map[int64]int64{}, lastTry: map[int64]int64{}}
	const workers = 4
	const rounds = 12
	var nextID int64 // ids are handed out by the test, never reused
	var idMu sync.Mutex
	newID := func() int64 {
		idMu.Lock()
		defer idMu.Unlock()
		nextID++
		return nextID
	}
	check := func(ctx context.Context, c *pgx.Conn, round int) {
		if round == 0 {
			for _, ddl := range []string{
				"CREATE TABLE log (id INT64, worker INT64) MODE APPEND",
				"CREATE TABLE pairs (id INT64, half INT64, PRIMARY KEY (id, half)) MODE VERSIONED",
				"CREATE TABLE counters (worker INT64, n INT64, PRIMARY KEY (worker))",
			} {
				if _, err := c.Exec(ctx, ddl); err != nil {
					t.Fatalf("%s: %v", ddl, err)
				}
			}
			return
		}
		if round == 1 {
			// A second process on the live directory is refused
			// clearly, and the server goes on (verifyLedger queries it).
			for _, args := range [][]string{{"serve", "--data", data, "--listen", freeAddr(t)}, {"sql", "--data", data, "-c", "SELECT 1"}} {
				out, err := exec.Command(bin, args...).CombinedOutput()
				if err == nil || !strings.Contains(string(out), "in use") {
					t.Fatalf("strata %s on a served directory: %v\n%s", args[0], err, out)
				}
			}
		}
		verifyLedger(t, ctx, c, led, round)
	}
	write := func(ctx context.Context, url string, round int, stop <-chan struct{}) {
		var wg sync.WaitGroup
		for w := int64(0); w < workers; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				wc, err := pgx.Connect(ctx, url)
				if err != nil {
					return // the kill may come first
				}
				defer wc.Close(context.Background())
				wrng := rand.New(rand.NewPCG(seed+uint64(round*workers)+uint64(w), 11))
				for {
					select {
					case <-stop:
						return
					default:
					}
					id := newID()
					var err error
					kind := wrng.IntN(3)
					if kind != 1 {
						led.try(id)
					}
					switch kind {
					case 0:
						_, err = wc.Exec(ctx, "INSERT INTO log VALUES ($1, $2)", id, w)
					case 1:
						led.mu.Lock()
						led.lastTry[w]++
						n := led.lastTry[w]
						led.mu.Unlock()
						_, err = wc.Exec(ctx, fmt.Sprintf("UPSERT INTO counters VALUES (%d, %d)", w, n))
						if err == nil {
							led.mu.Lock()
							led.lastAck[w] = n
							led.mu.Unlock()
						}
					default:
						// Two writes, one commit: both halves or neither.
						if _, err = wc.Exec(ctx, "BEGIN"); err == nil {
							if _, err = wc.Exec(ctx, "INSERT INTO pairs VALUES ($1, 0)", id); err == nil {
								if _, err = wc.Exec(ctx, "INSERT INTO pairs VALUES ($1, 1)", id); err == nil {
									_, err = wc.Exec(ctx, "COMMIT")
								}
							}
						}
					}
					if err != nil {
						return // the server is gone
					}
					if kind != 1 {
						led.ack(id)
					}
				}
			}()
		}
		wg.Wait()
	}
	runCrashRounds(t, bin, data, rounds, func() time.Duration { return time.Duration(50+rng.IntN(400)) * time.Millisecond }, check, write)
	led.mu.Lock()
	acked := len(led.acked)
	led.mu.Unlock()
	if acked < rounds {
		t.Fatalf("only %d acknowledged writes over %d rounds: the test did not exercise the server", acked, rounds)
	}
	t.Logf("%d acknowledged writes, %d sent, %d kills", acked, len(led.attempted), rounds)
}

// runCrashRounds drives a kill-and-restart test on one data directory:
// for round 0 to rounds it starts `strata serve` (the binary bin), connects
// and runs check (round 0 sets up), then, but in the last round, runs
// write until a SIGKILL after pause() (write must return once stop is
// closed or the server is gone) and `strata check` on the killed
// directory. The last round ends with SIGTERM, which must exit cleanly.
func runCrashRounds(t *testing.T, bin, data string, rounds int, pause func() time.Duration,
	check func(ctx context.Context, c *pgx.Conn, round int),
	write func(ctx context.Context, url string, round int, stop <-chan struct{})) {
	t.Helper()
	for round := 0; round <= rounds; round++ {
		srv, exited, logs, url := startServer(t, bin, data)
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		c, err := pgx.Connect(ctx, url)
		if err != nil {
			t.Fatalf("round %d: connect: %v\n%s", round, err, logs.String())
		}
		check(ctx, c, round)
		c.Close(ctx)
		if round == rounds {
			srv.Process.Signal(syscall.SIGTERM)
			if err := <-exited; err != nil {
				t.Fatalf("exit after SIGTERM: %v\n%s", err, logs.String())
			}
			cancel()
			return
		}
		stop := make(chan struct{})
		wrote := make(chan struct{})
		go func() {
			defer close(wrote)
			write(ctx, url, round, stop)
		}()
		time.Sleep(pause())
		if err := srv.Process.Kill(); err != nil {
			t.Fatal(err)
		}
		<-exited
		close(stop)
		<-wrote
		cancel()
		if out, err := exec.Command(bin, "check", data).CombinedOutput(); err != nil {
			t.Fatalf("round %d: strata check after SIGKILL: %v\n%s", round, err, out)
		}
	}
}

// startServer starts `strata serve` (the binary bin) on data at a free
// loopback address and waits until it listens; exited receives its exit.
func startServer(t *testing.T, bin, data string) (srv *exec.Cmd, exited chan error, logs *bytes.Buffer, url string) {
	t.Helper()
	addr := freeAddr(t)
	logs = &bytes.Buffer{}
	srv = exec.Command(bin, "serve", "--data", data, "--listen", addr)
	srv.Stdout, srv.Stderr = logs, logs
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	exited = make(chan error, 1)
	go func() { exited <- srv.Wait() }()
	waitListening(t, addr, exited, logs)
	return srv, exited, logs, "postgres://crash@" + addr + "/strata?sslmode=disable"
}

// execAll runs each statement on c, failing the test at the first error.
func execAll(t *testing.T, ctx context.Context, c *pgx.Conn, stmts ...string) {
	t.Helper()
	for _, q := range stmts {
		if _, err := c.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}

// verifyLedger checks the restarted server against what the clients were told.
func verifyLedger(t *testing.T, ctx context.Context, c *pgx.Conn, led *wireLedger, round int) {
	t.Helper()
	led.mu.Lock()
	defer led.mu.Unlock()
	count := func(q string) map[int64]int64 {
		rows, err := c.Query(ctx, q)
		if err != nil {
			t.Fatalf("round %d: %s: %v", round, q, err)
		}
		got := map[int64]int64{}
		for rows.Next() {
			var id, n int64
			if err := rows.Scan(&id, &n); err != nil {
				t.Fatal(err)
			}
			got[id] = n
		}
		if err := rows.Err(); err != nil {
			t.Fatalf("round %d: %s: %v", round, q, err)
		}
		return got
	}
	logs := count("SELECT id, count(*) FROM log GROUP BY id")
	pairs := count("SELECT id, count(*) FROM pairs GROUP BY id")
	for id, n := range logs {
		if !led.attempted[id] {
			t.Errorf("round %d: log id %d was never sent", round, id)
		}
		if n != 1 {
			t.Errorf("round %d: log id %d is there %d times", round, id, n)
		}
	}
	for id, n := range pairs {
		if !led.attempted[id] {
			t.Errorf("round %d: pair %d was never sent", round, id)
		}
		if n != 2 {
			t.Errorf("round %d: transaction %d is half visible (%d of 2 rows)", round, id, n)
		}
	}
	for id := range led.acked {
		if logs[id] == 0 && pairs[id] == 0 {
			t.Errorf("round %d: acknowledged commit %d is lost", round, id)
		}
	}
	counters := count("SELECT worker, n FROM counters")
	for w, ack := range led.lastAck {
		n := counters[w]
		if n < ack || n > led.lastTry[w] {
			t.Errorf("round %d: worker %d's counter is %d, acknowledged %d, last sent %d", round, w, n, ack, led.lastTry[w])
		}
	}
	if t.Failed() {
		t.FailNow()
	}
	// Later rounds keep counting from what survived, so an unacknowledged
	// value that did land is not sent again as if new.
	for w, n := range counters {
		if n > led.lastAck[w] {
			led.lastAck[w] = n
		}
	}
}
