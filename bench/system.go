package main

import (
	"context"
	"embed"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// pageCacheBytes is Strata's page cache in both its forms, the memory
// PostgreSQL gets for its buffers here (shared_buffers=1GB, pg.go): how
// much of a table lookups find decoded is then decided by the same budget.
const pageCacheBytes = 1 << 30

// System is one database under test. Every batch is one commit; the
// harness passes back the commit a system returned for the middle batch
// when it asks for AS OF reads.
type System interface {
	// Name is the name the -systems flag and the tables use.
	Name() string
	// Open starts the system in dir (empty, private to it) and creates
	// the schema.
	Open(ctx context.Context, dir string) error
	// Ingest writes one batch (batch numbers start at 1) as one commit and
	// returns that commit.
	Ingest(ctx context.Context, rows []Row, batch int) (uint64, error)
	// Aggregate answers R2 (commit 0) or R3 (AS OF commit).
	Aggregate(ctx context.Context, commit uint64) (Agg, error)
	// Point returns one key's current amount (commit 0) or its amount AS OF
	// commit, as text; "" when the key has no row.
	Point(ctx context.Context, chain int, address, token string, commit uint64) (string, error)
	// Versions reads the history of one key and returns how many rows it has.
	Versions(ctx context.Context, chain int, address, token string) (int, error)
	// Settle lets background work finish (Strata's merges, a peer's
	// checkpoint or vacuum); it returns false when the system has no such
	// step to call.
	Settle(ctx context.Context) (bool, error)
	// Bytes is the data's size on disk.
	Bytes(ctx context.Context) (int64, error)
	// Close stops the system and releases everything it started.
	Close() error
}

// wired is a system the harness reaches over a socket; its point lookups
// are timed on an unlocked goroutine (see runSystem's lookups).
type wired interface {
	overWire() bool
}

//go:embed peers/*.sql
var peerFiles embed.FS

// statements reads bench/peers/NAME.sql into its named sections: each
// starts at a line "-- name: X" and runs to the next; other comment lines
// and blank edges are dropped.
func statements(name string) (map[string]string, error) {
	b, err := fs.ReadFile(peerFiles, "peers/"+name+".sql")
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	cur := ""
	var body strings.Builder
	flush := func() {
		if cur != "" {
			out[cur] = strings.TrimSpace(body.String())
		}
		body.Reset()
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if n, ok := strings.CutPrefix(line, "-- name: "); ok {
			flush()
			cur = strings.TrimSpace(n)
			continue
		}
		if cur == "" || strings.HasPrefix(strings.TrimSpace(line), "--") {
			continue
		}
		body.WriteString(line)
		body.WriteByte('\n')
	}
	flush()
	return out, nil
}

// need returns the named sections or an error naming the first missing one.
func need(st map[string]string, file string, names ...string) error {
	for _, n := range names {
		if _, ok := st[n]; !ok {
			return fmt.Errorf("bench/peers/%s.sql has no section %q", file, n)
		}
	}
	return nil
}

// withCommit puts a commit number into a statement's {{commit}}.
func withCommit(sql string, commit uint64) string {
	return strings.ReplaceAll(sql, "{{commit}}", fmt.Sprint(commit))
}

// dirBytes is the size of every regular file under dir.
func dirBytes(dir string) (int64, error) {
	var n int64
	err := filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil {
			if os.IsNotExist(err) {
				return nil // a file removed by a merge while we walk
			}
			return err
		}
		if d.Type().IsRegular() {
			if info, err := d.Info(); err == nil {
				n += info.Size()
			}
		}
		return nil
	})
	return n, err
}

// Literal rows. Every system gets the same text for the same row, except
// for the history's extra commit_seq column.

// appendStamp appends the instant ms milliseconds after the epoch as
// "2006-01-02 15:04:05.000" in UTC, for ms ≥ 0. It writes time.Format's
// text (TestAppendStamp compares them) in 44 ns against 112 ns
// (BenchmarkAppendStamp, BenchmarkTimeFormat): the timestamp is written
// for every row inside the timed ingest loop, for every system alike.
func appendStamp(b []byte, ms int64) []byte {
	days, rem := ms/86_400_000, ms%86_400_000
	// The civil date of a day count (the proleptic Gregorian calendar in
	// 400-year eras, March-based years so that the leap day ends a year).
	z := days + 719_468
	era := z / 146_097
	doe := z - era*146_097
	yoe := (doe - doe/1460 + doe/36_524 - doe/146_096) / 365
	doy := doe - (365*yoe + yoe/4 - yoe/100)
	mp := (5*doy + 2) / 153
	d := doy - (153*mp+2)/5 + 1
	m := mp + 3
	if m > 12 {
		m -= 12
	}
	y := yoe + era*400
	if m <= 2 {
		y++
	}
	b = appendDigits(b, y, 4)
	b = append(b, '-')
	b = appendDigits(b, m, 2)
	b = append(b, '-')
	b = appendDigits(b, d, 2)
	b = append(b, ' ')
	b = appendDigits(b, rem/3_600_000, 2)
	b = append(b, ':')
	b = appendDigits(b, rem/60_000%60, 2)
	b = append(b, ':')
	b = appendDigits(b, rem/1000%60, 2)
	b = append(b, '.')
	return appendDigits(b, rem%1000, 3)
}

// appendDigits appends v ≥ 0 in decimal, zero-padded to n digits.
func appendDigits(b []byte, v int64, n int) []byte {
	b = append(b, "0000"[:n]...)
	for i := len(b) - 1; i >= len(b)-n; i-- {
		b[i] = byte('0' + v%10)
		v /= 10
	}
	return b
}

// appendRow appends "(chain, 'address', 'token', amount, 'updated_at',
// balance_index, balance_version, transfer_count, 'last_transfer_at',
// activity_index" without the closing parenthesis.
func appendRow(b []byte, seed uint64, r *Row) []byte {
	chain, hi, lo, tok := keyParts(seed, r.Key)
	b = append(b, '(')
	b = appendUint(b, uint64(chain))
	b = append(b, ", '"...)
	b = appendAddress(b, hi, lo)
	b = append(b, "', '"...)
	b = append(b, tok...)
	b = append(b, "', "...)
	b = appendUint(b, r.Amount)
	b = append(b, ", '"...)
	at := len(b)
	b = appendStamp(b, r.UpdatedMs)
	stamp := b[at:]
	b = append(b, "', "...)
	b = appendUint(b, r.Index)
	b = append(b, ", "...)
	b = appendUint(b, r.Version)
	b = append(b, ", "...)
	b = appendUint(b, r.Transfers)
	b = append(b, ", '"...)
	b = append(b, stamp...) // last_transfer_at is updated_at
	b = append(b, "', "...)
	b = appendUint(b, r.ActIndex)
	return b
}

// appendUint appends v in decimal.
func appendUint(b []byte, v uint64) []byte { return strconv.AppendUint(b, v, 10) }
