package main

import (
	"math"
	"testing"
)

// contentBits estimates how many bits an ideal encoding of what the
// workload gives a database to keep needs: a lower bound for the bytes
// per version any engine can store it in (docs/benchmarks.md, "Bytes on
// disk, second pass"). It counts, in bits:
//
//   - amount: each version's amount, uniform below 10^12;
//   - ordering: each key's first balance_index (uniform over 1000
//     values) and then, per version in arrival order, the change of
//     (balance_index, balance_version) from the key's previous arrival,
//     at its empirical (order-0) entropy over the whole stream;
//   - arrival: which key each stored version's (commit, seq) belongs to,
//     log2(N! / prod n_k!) for N versions of which key k has n_k; and
//     commitOnly, the same without the order inside a commit;
//   - keys: each address as the 160 random bits it looks like, plus its
//     8 (chain, token) pairs out of 80.
//
// Everything else a row holds follows from these: updated_at,
// transfer_count, last_transfer_at and activity_index are functions of
// the ordering values and the arrival count, the activity group repeats
// the holding group's version, and the resolution (won at, ended at,
// superseded by) follows from ordering values and commits. Exact
// re-deliveries add nothing a settled table keeps (they are dropped as
// repeats) and are left out.
type contentBits struct {
	rows, versions, keys        int
	amount, ordering, keyBits   float64
	arrival, commitOnly, perVer float64
}

// log2Fact returns log2(n!).
func log2Fact(n int) float64 {
	lg, _ := math.Lgamma(float64(n) + 1)
	return lg / math.Ln2
}

func measureContent(sc Scale, seed uint64) contentBits {
	g := NewGenerator(sc, seed)
	var c contentBits
	type sym struct {
		dIndex  int64
		version uint64
	}
	hist := map[sym]int{}
	type last struct {
		index uint64
		seen  bool
	}
	prev := make([]last, sc.Keys)
	n := make([]int, sc.Keys)
	var buf []Row
	for {
		buf = g.NextBatch(buf)
		if len(buf) == 0 {
			break
		}
		perCommit := 0
		for _, r := range buf {
			c.rows++
			if r.Repeat {
				continue
			}
			c.versions++
			perCommit++
			n[r.Key]++
			c.amount += math.Log2(1e12)
			p := &prev[r.Key]
			if !p.seen {
				c.ordering += math.Log2(1000)
			} else {
				hist[sym{int64(r.Index) - int64(p.index), r.Version}]++
			}
			p.index, p.seen = r.Index, true
		}
		c.commitOnly -= log2Fact(perCommit)
	}
	total := 0
	for _, k := range hist {
		total += k
	}
	for _, k := range hist {
		c.ordering -= float64(k) * math.Log2(float64(k)/float64(total))
	}
	c.arrival = log2Fact(c.versions)
	for _, k := range n {
		c.arrival -= log2Fact(k)
		if k > 0 {
			c.keys++
		}
	}
	c.commitOnly += c.arrival
	addresses := (sc.Keys + perAddress - 1) / perAddress
	c.keyBits = float64(addresses) * (160 + log2Fact(chains*len(tokens)) - log2Fact(perAddress) - log2Fact(chains*len(tokens)-perAddress))
	c.perVer = (c.amount + c.ordering + c.arrival + c.keyBits) / 8 / float64(c.rows)
	return c
}

// TestContentBound prints the bound for small scale (tiny with -short) and
// checks its parts against their closed forms, so that a generator change
// that moves them is noticed here and in the docs.
func TestContentBound(t *testing.T) {
	sc := Scales["small"]
	if testing.Short() {
		sc = Scales["tiny"]
	}
	c := measureContent(sc, 1)
	per := func(bits float64) float64 { return bits / 8 / float64(c.rows) }
	t.Logf("%s: %d rows, %d versions (re-deliveries left out), %d keys", sc.Name, c.rows, c.versions, c.keys)
	t.Logf("bytes per delivered row: amount %.2f, ordering values %.2f, arrival (commit, seq) %.2f (commit alone %.2f), keys %.2f; total %.2f",
		per(c.amount), per(c.ordering), per(c.arrival), per(c.commitOnly), per(c.keyBits), c.perVer)
	if c.keys != sc.Keys {
		t.Errorf("%d keys written, want %d", c.keys, sc.Keys)
	}
	// ~2 % of rows are re-deliveries; the amount is log2(10^12) bits a version.
	if r := float64(c.versions) / float64(c.rows); r < 0.97 || r > 0.99 {
		t.Errorf("versions are %.3f of rows, want about 0.98", r)
	}
	// A key's arrivals: log2 of K choices a version, less the order inside
	// a key, which the per-key count already fixes.
	if a := per(c.arrival); a < 1 || a > math.Log2(float64(sc.Keys))/8 {
		t.Errorf("arrival %.2f bytes a row, want between 1 and log2(K)/8", a)
	}
	if c.perVer < 5 || c.perVer > 10 {
		t.Errorf("bound %.2f bytes a row, want 5 to 10", c.perVer)
	}
}
