package merge

import (
	"slices"
	"testing"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/storage/manifest"
)

// mp is a part of the given id, commit range, size (KiB) and level.
func mp(id, lo, hi uint64, kib uint64, level uint8) manifest.Part {
	return manifest.Part{ID: id, MinCommit: lo, MaxCommit: hi, Bytes: kib << 10, Level: level, Kind: manifest.KindDelta}
}

func ids(ps []manifest.Part) []uint64 {
	var out []uint64
	for _, p := range ps {
		out = append(out, p.ID)
	}
	return out
}

func TestChoose(t *testing.T) {
	def := Settings{}
	small := Settings{TargetPartBytes: 1 << 20, MaxPartsPerShard: 3}
	cases := []struct {
		name   string
		parts  []manifest.Part
		s      Settings
		want   []uint64 // nil: no merge
		level  uint8
		oldest bool
		why    Why
	}{
		{name: "empty", s: def},
		{name: "one run", parts: []manifest.Part{mp(1, 1, 10, 100, 0)}, s: def},
		{name: "three flushes wait for a fourth", s: def,
			parts: []manifest.Part{mp(1, 1, 10, 100, 0), mp(2, 11, 20, 100, 0), mp(3, 21, 30, 100, 0)}},
		{name: "four similar flushes tier", s: def, level: 1, oldest: true, why: Tier, want: []uint64{1, 2, 3, 4},
			parts: []manifest.Part{mp(4, 31, 40, 120, 0), mp(2, 11, 20, 100, 0), mp(1, 1, 10, 90, 0), mp(3, 21, 30, 100, 0)}},
		{name: "a big old run stays out of the tier", s: def, level: 1, why: Tier, want: []uint64{2, 3, 4, 5},
			parts: []manifest.Part{mp(1, 1, 10, 50000, 3), mp(2, 11, 20, 100, 0), mp(3, 21, 30, 100, 0),
				mp(4, 31, 40, 100, 0), mp(5, 41, 50, 100, 0)}},
		{name: "the cheapest tier wins", s: def, level: 2, why: Tier, want: []uint64{5, 6, 7, 8},
			parts: []manifest.Part{mp(1, 1, 10, 4000, 1), mp(2, 11, 20, 4000, 1), mp(3, 21, 30, 4000, 1), mp(4, 31, 40, 4000, 1),
				mp(5, 41, 50, 100, 1), mp(6, 51, 60, 100, 0), mp(7, 61, 70, 100, 0), mp(8, 71, 80, 100, 0)}},
		{name: "dissimilar sizes do not tier", s: def,
			parts: []manifest.Part{mp(1, 1, 10, 10000, 2), mp(2, 11, 20, 1000, 1), mp(3, 21, 30, 100, 0), mp(4, 31, 40, 10, 0)}},
		{name: "over budget merges the cheapest pair", s: small, level: 4, why: Budget, want: []uint64{3, 4},
			parts: []manifest.Part{mp(1, 1, 10, 9000, 3), mp(2, 11, 20, 5000, 3), mp(3, 21, 30, 2000, 2), mp(4, 31, 40, 2000, 3)}},
		{name: "a run of current, history and split parts moves whole", s: small, level: 3, oldest: true, why: Budget,
			want: []uint64{1, 2, 3, 4},
			parts: []manifest.Part{mp(1, 1, 50, 900, 2), mp(2, 3, 48, 900, 2), mp(3, 20, 60, 900, 2),
				mp(4, 61, 70, 10, 0), mp(5, 71, 80, 5000, 0), mp(6, 81, 90, 5000, 0)}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, ok := Choose(c.parts, c.s)
			if c.want == nil {
				if ok {
					t.Fatalf("merge %v chosen, want none", ids(p.Inputs))
				}
				return
			}
			got := ids(p.Inputs)
			slices.Sort(got)
			if !ok || !slices.Equal(got, c.want) || p.Level != c.level || p.Oldest != c.oldest || p.Why != c.why {
				t.Fatalf("got ok=%v %v level %d oldest %v %v, want %v level %d oldest %v %v",
					ok, got, p.Level, p.Oldest, p.Why, c.want, c.level, c.oldest, c.why)
			}
		})
	}
}

// TestChooseReachesBudget: applying Choose's merges to many flushes always
// ends within the budget, with every merge taking adjacent whole runs.
func TestChooseReachesBudget(t *testing.T) {
	s := Settings{TargetPartBytes: 64 << 20, MaxPartsPerShard: 5}
	var parts []manifest.Part
	id := uint64(0)
	for c := uint64(1); c <= 200; c++ {
		id++
		parts = append(parts, mp(id, c, c, 1000+c%7*100, 0))
		for {
			p, ok := Choose(parts, s)
			if !ok {
				break
			}
			lo, hi := p.Inputs[0].MinCommit, p.Inputs[len(p.Inputs)-1].MaxCommit
			var rest []manifest.Part
			var bytes uint64
			for _, q := range parts {
				in := slices.ContainsFunc(p.Inputs, func(x manifest.Part) bool { return x.ID == q.ID })
				if !in && q.MaxCommit >= lo && q.MinCommit <= hi {
					t.Fatalf("merge of %v skips part %d in its commit range", ids(p.Inputs), q.ID)
				}
				if in {
					bytes += q.Bytes
				} else {
					rest = append(rest, q)
				}
			}
			id++
			parts = append(rest, manifest.Part{ID: id, MinCommit: lo, MaxCommit: hi, Bytes: bytes, Level: p.Level})
		}
		if n := len(Runs(parts)); n > s.MaxPartsPerShard {
			t.Fatalf("after commit %d: %d runs", c, n)
		}
	}
}

func TestSettingsOf(t *testing.T) {
	if s := SettingsOf(nil); s.TargetPartBytes != DefaultTargetPartBytes || s.MaxPartsPerShard != DefaultMaxPartsPerShard {
		t.Fatalf("defaults %+v", s)
	}
	p := &catalog.Policy{Name: "merge_big", Role: catalog.RoleCompaction, Settings: []catalog.Setting{
		{Key: "target_part_bytes", Int: 1 << 30}, {Key: "max_parts_per_shard", Int: 3}}}
	if s := SettingsOf(p); s.TargetPartBytes != 1<<30 || s.MaxPartsPerShard != 3 {
		t.Fatalf("settings %+v", s)
	}
}

func TestRuns(t *testing.T) {
	rs := Runs([]manifest.Part{mp(3, 11, 20, 1, 0), mp(1, 1, 8, 1, 1), mp(2, 2, 10, 1, 1), mp(4, 21, 21, 1, 0)})
	var got [][]uint64
	for _, r := range rs {
		got = append(got, ids(r.Parts))
	}
	if len(got) != 3 || !slices.Equal(got[0], []uint64{1, 2}) || rs[0].MaxCommit != 10 || rs[0].Bytes != 2<<10 || rs[0].Level != 1 {
		t.Fatalf("runs %v %+v", got, rs)
	}
}

func TestSettles(t *testing.T) {
	cases := []struct {
		name  string
		parts []manifest.Part
		final bool
		want  []uint64 // nil: not due
	}{
		{name: "empty shard"},
		{name: "final shard", parts: []manifest.Part{mp(1, 1, 10, 100, 1)}, final: true},
		// One run of deltas (flushed, never merged): folding it rewrites
		// only itself into a current and a history run.
		{name: "one delta run", parts: []manifest.Part{mp(1, 1, 10, 100, 0)}, want: []uint64{1}},
		// Newer runs at exactly 1/SettleRatio of the oldest: due.
		{name: "at the ratio", parts: []manifest.Part{mp(1, 1, 10, 1600, 2), mp(2, 11, 20, 60, 1), mp(3, 21, 30, 40, 0)},
			want: []uint64{1, 2, 3}},
		// One KiB less: the fold would rewrite 1600 KiB for 99 KiB new.
		{name: "below the ratio", parts: []manifest.Part{mp(1, 1, 10, 1600, 2), mp(2, 11, 20, 59, 1), mp(3, 21, 30, 40, 0)}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, ok := Settles(c.parts, c.final)
			if ok != (c.want != nil) {
				t.Fatalf("due = %v, want %v", ok, c.want != nil)
			}
			if !ok {
				return
			}
			if got := ids(p.Inputs); !slices.Equal(got, c.want) {
				t.Errorf("inputs %v, want %v", got, c.want)
			}
			if !p.Oldest || p.Why != Settle || p.Why.String() != "settle" {
				t.Errorf("plan %+v: want the oldest data, why settle", p)
			}
		})
	}
}
