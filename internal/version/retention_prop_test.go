package version

import (
	"slices"
	"testing"

	"pgregory.net/rapid"
)

// withHorizon sets every ordered group's Horizon to c − lag: the horizon
// as it stood at each commit, a lag of commits behind it (R9.3).
func withHorizon(gs []Ordering, lag uint64) []Ordering {
	out := slices.Clone(gs)
	for g := range out {
		out[g].Horizon = func(c uint64) uint64 {
			if c > lag {
				return c - lag
			}
			return 0
		}
	}
	return out
}

// TestPropRetentionDropKeepsReads is the claim storage's expiry rests on
// (version.Expired, docs/retention.md): at a horizon hz that the clock has
// reached, a merge of every version (which discards repeats, Dropped) that
// also leaves out the versions expired at hz changes nothing a read at a
// commit ≥ hz sees — not the states of the versions kept, and not how any
// later write resolves, exact re-deliveries of expired versions included.
func TestPropRetentionDropKeepsReads(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		h := genHistory(t, true)
		lag := uint64(rapid.IntRange(1, 4).Draw(t, "lag"))
		if h.newest <= lag {
			t.Skip("no horizon yet")
		}
		gs := withHorizon(h.groups, lag)
		hz := uint64(rapid.Uint64Range(1, h.newest-lag).Draw(t, "hz"))
		rs := mustResolve(t, gs, h.vs, h.ds)

		// Later writes, after the merge: some repeat old versions exactly
		// (expired ones included), some are new.
		later := slices.Clone(h.vs[:0:0])
		for c := h.newest + 1; c <= h.newest+uint64(rapid.IntRange(0, 3).Draw(t, "later")); c++ {
			for s := range rapid.IntRange(1, 2).Draw(t, "laterRows") {
				var v Version
				if len(h.vs) > 0 && rapid.Bool().Draw(t, "redeliver") {
					v = h.vs[rapid.IntRange(0, len(h.vs)-1).Draw(t, "which")]
				} else {
					v = Version{Key: []byte{byte(rapid.IntRange(0, 2).Draw(t, "key"))}, Group: GroupID(rapid.IntRange(0, len(gs)-1).Draw(t, "group")),
						Values: []byte{byte(rapid.IntRange(0, 2).Draw(t, "value"))}}
					v.Order = genOrder(t, gs[v.Group].Columns())
				}
				v.Commit, v.Seq = c, uint32(10*s)
				later = append(later, v)
			}
		}

		var kept []int
		for i := range h.vs {
			if rs[i].State != Dropped && !Expired(rs[i], hz) {
				kept = append(kept, i)
			}
		}
		keptVs := make([]Version, 0, len(kept)+len(later))
		for _, i := range kept {
			keptVs = append(keptVs, h.vs[i])
		}
		full := mustResolve(t, gs, append(slices.Clone(h.vs), later...), h.ds)
		cut := mustResolve(t, gs, append(keptVs, later...), h.ds)
		newest := h.newest + 3
		check := func(what string, a, b Resolved) {
			for n := hz; n <= newest; n++ {
				sa, sb := StateAt(a, n), StateAt(b, n)
				if sa != sb {
					t.Fatalf("%s at %d: state %v with every version, %v without the expired ones (hz %d)", what, n, sa, sb, hz)
				}
				if sa != Current && sa != Invisible && sa != Dropped && a.SupersededBy != b.SupersededBy {
					t.Fatalf("%s at %d: superseded_by %d with every version, %d without the expired ones", what, n, a.SupersededBy, b.SupersededBy)
				}
			}
		}
		for k, i := range kept {
			check("kept version", full[i], cut[k])
		}
		for j := range later {
			check("later version", full[len(h.vs)+j], cut[len(kept)+j])
		}
	})
}

// TestPropRetentionRegisterAgrees: with a Horizon set, Register (memtables,
// merges) decides each version as Resolve (reads' reference, Check) does.
func TestPropRetentionRegisterAgrees(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		h := genHistory(t, false)
		gs := withHorizon(h.groups, uint64(rapid.IntRange(1, 3).Draw(t, "lag")))
		rs := mustResolve(t, gs, h.vs, h.ds)
		type slot struct {
			key byte
			g   GroupID
		}
		regs := map[slot]*Register{}
		idx := make([]int, len(h.vs))
		for i := range idx {
			idx[i] = i
		}
		slices.SortStableFunc(idx, func(a, b int) int { return h.vs[a].Pos().Compare(h.vs[b].Pos()) })
		for _, i := range idx {
			v := &h.vs[i]
			s := slot{v.Key[0], v.Group}
			if regs[s] == nil {
				regs[s] = new(Register)
				regs[s].Init(gs[v.Group])
			}
			step, err := regs[s].Add(v)
			if err != nil {
				t.Fatal(err)
			}
			want := rs[i].State
			switch step.Outcome {
			case Repeat:
				if want != Dropped {
					t.Fatalf("version %d %+v: Register says repeat, Resolve %v", i, *v, want)
				}
			case Lost:
				if want != Late {
					t.Fatalf("version %d %+v: Register says lost, Resolve %v", i, *v, want)
				}
			case Won:
				if want == Dropped || want == Late {
					t.Fatalf("version %d %+v: Register says won, Resolve %v", i, *v, want)
				}
			}
		}
	})
}
