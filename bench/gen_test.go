package main

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"
)

// tiny is a scale for tests: the same shares as the real ones.
var tiny = Scale{"tiny", 2_000, 20_000}

func allRows(t *testing.T, sc Scale, seed uint64) [][]Row {
	t.Helper()
	g := NewGenerator(sc, seed)
	var out [][]Row
	for {
		b := g.NextBatch(nil)
		if len(b) == 0 {
			return out
		}
		out = append(out, b)
	}
}

func TestGeneratorDeterministic(t *testing.T) {
	a, b := allRows(t, tiny, 7), allRows(t, tiny, 7)
	if len(a) != len(b) || len(a) != 20 {
		t.Fatalf("batches: %d and %d, want 20", len(a), len(b))
	}
	for i := range a {
		for j := range a[i] {
			if a[i][j] != b[i][j] {
				t.Fatalf("batch %d row %d differs between two runs of one seed", i, j)
			}
		}
	}
	c := allRows(t, tiny, 8)
	same := 0
	for j := range a[0] {
		if a[0][j] == c[0][j] {
			same++
		}
	}
	if same == len(a[0]) {
		t.Fatal("seeds 7 and 8 gave the same first batch")
	}
}

// TestGeneratorShares checks item 2's shape: batches of 1 000, 30 % late,
// 2 % exact re-deliveries, every key written, no two versions of a key
// tied on their ordering, and "late" meaning an earlier index than one
// already delivered.
func TestGeneratorShares(t *testing.T) {
	sc := Scale{"t", 10_000, 200_000}
	g := NewGenerator(sc, 3)
	type ver struct{ i, v uint64 }
	seen := map[int32]map[ver]Row{}
	maxIdx := map[int32]uint64{}
	late, rep, rows := 0, 0, 0
	for {
		b := g.NextBatch(nil)
		if len(b) == 0 {
			break
		}
		if len(b) != batchRows && rows+len(b) != sc.Versions {
			t.Fatalf("batch of %d rows before the last", len(b))
		}
		for _, r := range b {
			rows++
			if seen[r.Key] == nil {
				seen[r.Key] = map[ver]Row{}
			}
			k := ver{r.Index, r.Version}
			if old, ok := seen[r.Key][k]; ok {
				old.Repeat, old.Late = r.Repeat, r.Late
				if !r.Repeat || old != r {
					t.Fatalf("key %d: two different rows tie on (%d, %d)", r.Key, r.Index, r.Version)
				}
				rep++
				continue
			}
			if r.Repeat {
				t.Fatalf("key %d: a repeat of a version never delivered", r.Key)
			}
			seen[r.Key][k] = r
			if r.Late {
				late++
				if r.Index >= maxIdx[r.Key] {
					t.Fatalf("key %d: late row at index %d, but the greatest delivered is %d", r.Key, r.Index, maxIdx[r.Key])
				}
			}
			maxIdx[r.Key] = max(maxIdx[r.Key], r.Index)
			if r.ActIndex != r.Index*100+r.Version || r.Amount >= 1e12 {
				t.Fatalf("row %+v out of shape", r)
			}
		}
	}
	if rows != sc.Versions || len(seen) != sc.Keys {
		t.Fatalf("%d rows over %d keys, want %d over %d", rows, len(seen), sc.Versions, sc.Keys)
	}
	if l := pct(late, rows); math.Abs(l-latePct) > 1 {
		t.Errorf("late share %.2f %%, want %d %%", l, latePct)
	}
	if r := pct(rep, rows); math.Abs(r-redeliver) > 0.2 {
		t.Errorf("re-delivery share %.2f %%, want %d %%", r, redeliver)
	}
	if g.Late != late || g.Rep != rep {
		t.Errorf("generator counted %d late, %d repeats; the stream has %d and %d", g.Late, g.Rep, late, rep)
	}
}

func TestKeys(t *testing.T) {
	seen := map[string]int32{}
	chainsSeen, tokensSeen := map[int]bool{}, map[string]bool{}
	for k := int32(0); k < 50_000; k++ {
		c, a, tok := KeyOf(5, k)
		// The workload of earlier runs: the address as fmt wrote it.
		if _, hi, lo, _ := keyParts(5, k); a != fmt.Sprintf("0x%016x%016x%08x", hi, lo, uint32(mix(lo))) {
			t.Fatalf("key %d: address %s, fmt writes %s", k, a, fmt.Sprintf("0x%016x%016x%08x", hi, lo, uint32(mix(lo))))
		}
		if len(a) != 42 || !strings.HasPrefix(a, "0x") || strings.Trim(a[2:], "0123456789abcdef") != "" {
			t.Fatalf("address %q is not 0x and 40 hex digits", a)
		}
		key := strings.Join([]string{string(rune('0' + c)), a, tok}, "/")
		if o, dup := seen[key]; dup {
			t.Fatalf("keys %d and %d are both %s", o, k, key)
		}
		seen[key] = k
		chainsSeen[c], tokensSeen[tok] = true, true
	}
	if len(chainsSeen) != 4 || len(tokensSeen) != 20 {
		t.Fatalf("%d chains, %d tokens; want 4 and 20", len(chainsSeen), len(tokensSeen))
	}
}

func TestModel(t *testing.T) {
	m := NewModel(2)
	// SPEC R3.5's table for key 0; key 1 appears only after the middle.
	m.Apply([]Row{{Key: 0, Index: 100, Version: 1, Amount: 1}, {Key: 0, Index: 200, Version: 1, Amount: 2}})
	m.TakeMiddle()
	m.Apply([]Row{{Key: 0, Index: 150, Version: 9, Amount: 3}, {Key: 1, Index: 5, Version: 1, Amount: 7}})
	if got := m.Amount(0, false); got != "2" {
		t.Fatalf("after a late write: %s, want 2", got)
	}
	m.Apply([]Row{{Key: 0, Index: 200, Version: 2, Amount: 4}})
	if m.Amount(0, false) != "4" || m.Amount(0, true) != "2" || m.Amount(1, true) != "" {
		t.Fatalf("current %s, middle %s / %q", m.Amount(0, false), m.Amount(0, true), m.Amount(1, true))
	}
	cur, mid := m.Aggregate(5, false), m.Aggregate(5, true)
	var n int64
	for _, r := range cur {
		n += r.Count
	}
	if n != 2 || len(mid) != 1 || mid[0].Count != 1 || mid[0].Sum != "2" {
		t.Fatalf("aggregates %s / %s", cur, mid)
	}
}

func TestStatements(t *testing.T) {
	for _, f := range []string{"strata", "postgres", "sqlite", "duckdb"} {
		st, err := statements(f)
		if err != nil {
			t.Fatal(err)
		}
		for n, s := range st {
			if s == "" || strings.Contains(s, "-- name:") {
				t.Errorf("%s.sql section %s: %q", f, n, s)
			}
		}
		if !strings.Contains(st["asof"], "{{commit}}") {
			t.Errorf("%s.sql asof does not read at {{commit}}", f)
		}
	}
	st, _ := statements("strata")
	if !strings.HasPrefix(st["schema"], "CREATE TABLE balances (") || !strings.HasSuffix(st["schema"], "ORDER BY (chain_id, address, token)") {
		t.Errorf("strata schema: %q", st["schema"])
	}
}

func TestReplaceSection(t *testing.T) {
	doc := "# Benchmarks\n\nother text\n"
	out, err := replaceSection(doc, "one\n")
	if err != nil || out != doc+"\n"+beginMarker+"\none\n"+endMarker+"\n" {
		t.Fatalf("append: %q, %v", out, err)
	}
	out2, err := replaceSection(out+"after\n", "two\n")
	if err != nil || out2 != doc+"\n"+beginMarker+"\ntwo\n"+endMarker+"\nafter\n" {
		t.Fatalf("replace: %q, %v", out2, err)
	}
	if _, err := replaceSection(endMarker+beginMarker, "x"); err == nil {
		t.Fatal("markers out of order were accepted")
	}
}

// tinyStrataRun sets up a run of Strata embedded alone at the tiny scale,
// seed 11, 200 lookups: its config, report and model, and the batch whose
// commit R3 and R4 read.
func tinyStrataRun() (*config, *Report, *Model, int) {
	cfg := &config{scale: tiny, seed: 11, systems: []string{"strata"}, lookups: 200, reps: 1}
	rep := &Report{Scale: tiny, Seed: 11, Systems: cfg.systems, Results: map[string]map[string]Result{}, Unavailable: map[string]string{}}
	model := NewModel(tiny.Keys)
	g := NewGenerator(tiny, 11)
	mid := g.Batches() / 2
	for i := 1; ; i++ {
		b := g.NextBatch(nil)
		if len(b) == 0 {
			break
		}
		model.Apply(b)
		if i == mid {
			model.TakeMiddle()
		}
	}
	rep.Distinct = tiny.Versions - g.Rep
	return cfg, rep, model, mid
}

// TestStrataSmoke runs the whole pipeline on Strata embedded at a tiny
// scale: every answer is checked against the model inside runSystem.
func TestStrataSmoke(t *testing.T) {
	cfg, rep, model, mid := tinyStrataRun()
	sys := newStrataEmbedded(11)
	defer sys.Close()
	got, err := runSystem(context.Background(), cfg, rep, sys, t.TempDir(), mid, model, lookupKeys(cfg))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range rep.Failures {
		t.Error(f)
	}
	for _, asOf := range []bool{false, true} {
		if want := model.Aggregate(11, asOf); !got[asOf].Equal(want) {
			t.Errorf("AS OF %v: got %s, want %s", asOf, got[asOf], want)
		}
	}
	if rep.Results["strata"][mW1].Value <= 0 {
		t.Error("no W1 figure")
	}
}

// TestStopInterrupted: an interrupted run keeps the finished systems,
// drops the half-measured one and marks it and the rest as not measured.
func TestStopInterrupted(t *testing.T) {
	rep := &Report{Results: map[string]map[string]Result{
		"strata": {"W1": {Value: 1}}, "postgres": {"W1": {Value: 2}}, "sqlite": {"R1p50": {Value: 3}},
	}, Unavailable: map[string]string{}}
	stopInterrupted(rep, []string{"strata", "postgres", "sqlite", "duckdb"}, "sqlite")
	if _, ok := rep.Results["sqlite"]; ok {
		t.Fatal("the interrupted system's partial results were kept")
	}
	if len(rep.Results) != 2 {
		t.Fatalf("finished systems lost: %v", rep.Results)
	}
	for _, s := range []string{"sqlite", "duckdb"} {
		if !strings.Contains(rep.Unavailable[s], "interrupted while sqlite ran") {
			t.Fatalf("%s not marked: %q", s, rep.Unavailable[s])
		}
	}
	if _, ok := rep.Unavailable["postgres"]; ok {
		t.Fatal("a finished system was marked as not measured")
	}
}

// TestAppendStamp: the rows' timestamps are the text time.Format writes,
// over leap days, century years, the epoch and a random spread.
func TestAppendStamp(t *testing.T) {
	const layout = "2006-01-02 15:04:05.000"
	ms := []int64{0, 1, 999, 86_399_999, 86_400_000, baseMillis}
	for _, d := range []string{"2000-02-29", "2000-03-01", "1999-12-31", "2100-02-28", "2100-03-01", "2024-02-29", "9999-12-31"} {
		at, err := time.Parse("2006-01-02", d)
		if err != nil {
			t.Fatal(err)
		}
		ms = append(ms, at.UnixMilli(), at.UnixMilli()-1, at.UnixMilli()+86_399_999)
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 200_000 {
		ms = append(ms, r.Int64N(253_402_300_800_000)) // to the end of 9999
	}
	for _, m := range ms {
		if got, want := string(appendStamp(nil, m)), time.UnixMilli(m).UTC().Format(layout); got != want {
			t.Fatalf("appendStamp(%d) = %s, time.Format writes %s", m, got, want)
		}
	}
}

func BenchmarkAppendStamp(b *testing.B) {
	buf := make([]byte, 0, 32)
	for i := range b.N {
		buf = appendStamp(buf[:0], baseMillis+int64(i)*1001)
	}
}

func BenchmarkTimeFormat(b *testing.B) {
	buf := make([]byte, 0, 32)
	for i := range b.N {
		buf = time.UnixMilli(baseMillis+int64(i)*1001).UTC().AppendFormat(buf[:0], "2006-01-02 15:04:05.000")
	}
}

// countPoints records the keys a System's point lookups ask for.
type countPoints struct {
	System
	asked []string
}

func (c *countPoints) Point(ctx context.Context, chain int, address, token string, commit uint64) (string, error) {
	c.asked = append(c.asked, fmt.Sprintf("%d/%s/%s@%d", chain, address, token, commit))
	return c.System.Point(ctx, chain, address, token, commit)
}

// TestLookupWarmUp: each lookup phase (R1, R4, R1 settled) first looks
// up warmKeys' keys, then the timed keys in order, and R1's
// and R1 settled's warm-ups are noted in the report.
func TestLookupWarmUp(t *testing.T) {
	cfg, rep, model, mid := tinyStrataRun()
	inner := newStrataEmbedded(11)
	defer inner.Close()
	sys := &countPoints{System: inner}
	keys, warm := lookupKeys(cfg), warmKeys(cfg)
	if len(warm) != 20 {
		t.Fatalf("%d warm-up keys for 200 lookups, want 20", len(warm))
	}
	if slices.Equal(warm, keys[:len(warm)]) {
		t.Fatal("the warm-up looks up the timed keys")
	}
	if _, err := runSystem(context.Background(), cfg, rep, sys, t.TempDir(), mid, model, keys); err != nil {
		t.Fatal(err)
	}
	for _, f := range rep.Failures {
		t.Error(f)
	}
	name := func(k int32) string {
		chain, addr, tok := KeyOf(cfg.seed, k)
		return fmt.Sprintf("%d/%s/%s@", chain, addr, tok)
	}
	phase := len(warm) + len(keys)
	// R1, R4 (AS OF), R1 settled; R5 asks for no point lookup.
	if len(sys.asked) != 3*phase {
		t.Fatalf("%d point lookups, want 3 phases of %d", len(sys.asked), phase)
	}
	for p := 0; p < 3; p++ {
		got := sys.asked[p*phase : (p+1)*phase]
		// R1 and R1 settled ask for commit 0, R4 for the middle one.
		current := func(q string) bool { return strings.HasSuffix(q, "@0") }
		for i, k := range warm {
			if !strings.HasPrefix(got[i], name(k)) || current(got[i]) != (p != 1) {
				t.Fatalf("phase %d lookup %d is %s, want warm-up key %s", p, i, got[i], name(k))
			}
		}
		for i, k := range keys {
			if q := got[len(warm)+i]; !strings.HasPrefix(q, name(k)) || current(q) != (p != 1) {
				t.Fatalf("phase %d timed lookup %d is %s, want %s", p, i, q, name(k))
			}
		}
	}
	noted := 0
	for _, n := range rep.Notes {
		if strings.Contains(n, "warm-up") {
			noted++
		}
	}
	if noted != 2 {
		t.Fatalf("%d warm-up notes, want R1's and R1 settled's: %q", noted, rep.Notes)
	}
}
