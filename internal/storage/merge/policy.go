package merge

import (
	"cmp"
	"slices"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/storage/manifest"
)

// The defaults of the compaction settings (R9.5), used when the bound
// policy does not set them (the built-in default policy sets nothing).
const (
	// DefaultTargetPartBytes is the size up to which runs take part in
	// size-tiered merges; a run this large is merged again only when the
	// shard has too many runs.
	DefaultTargetPartBytes = 256 << 20
	// DefaultMaxPartsPerShard bounds the runs of a shard, and so the parts
	// a read of one key opens.
	DefaultMaxPartsPerShard = 8
)

// FanIn is the number of adjacent runs of similar size a size-tiered merge
// waits for; MaxFanIn the most runs one merge takes.
const (
	FanIn    = 4
	MaxFanIn = 2 * FanIn
)

// SizeRatio is how much larger than the smallest run of a tier its largest
// may be.
const SizeRatio = 4

// Settings are the compaction settings of R9.5.
type Settings struct {
	// TargetPartBytes: runs at or above it leave size tiering.
	TargetPartBytes int64
	// MaxPartsPerShard: more runs than this force a merge.
	MaxPartsPerShard int
}

// SettingsOf reads a compaction policy's settings, filling the defaults
// for what it leaves out. A nil policy is the built-in default.
func SettingsOf(p *catalog.Policy) Settings {
	s := Settings{TargetPartBytes: DefaultTargetPartBytes, MaxPartsPerShard: DefaultMaxPartsPerShard}
	if p == nil {
		return s
	}
	if v, ok := p.Int("target_part_bytes"); ok && v > 0 {
		s.TargetPartBytes = v
	}
	if v, ok := p.Int("max_parts_per_shard"); ok && v > 0 {
		s.MaxPartsPerShard = int(v)
	}
	return s
}

// Why says which goal a Plan serves.
type Why uint8

// The reasons for a merge.
const (
	// Tier: FanIn or more adjacent runs of similar size, below the target
	// (bounded write amplification).
	Tier Why = iota + 1
	// Budget: the shard has more runs than MaxPartsPerShard (bounded read
	// amplification).
	Budget
	// Settle: the shard is idle and its newer runs are worth folding into
	// its final runs (Settle).
	Settle
	// Expire: the table's retention policy has expired rows the shard
	// still holds (R9.3); the engine decides when, Options.Expire what.
	Expire
)

// String returns the reason's name.
func (w Why) String() string {
	switch w {
	case Tier:
		return "tier"
	case Budget:
		return "budget"
	case Settle:
		return "settle"
	case Expire:
		return "expire"
	}
	return "none"
}

// Plan is one merge the policy chose.
type Plan struct {
	// Inputs are the parts to merge: whole runs, adjacent in commit order,
	// sorted by (MinCommit, MaxCommit, ID).
	Inputs []manifest.Part
	// Level is the outputs' level: one more than the highest input's.
	Level uint8
	// Oldest is set when the inputs hold the shard's oldest data (Options.
	// Oldest): every part left out is newer than every input.
	Oldest bool
	// Why is the goal the merge serves.
	Why Why
}

// Run is a set of parts of one shard that came from one flush or merge: the
// parts whose commit ranges overlap, transitively. Runs cover disjoint
// commit ranges, so they are totally ordered by commit (doc.go invariant 1).
type Run struct {
	Parts                []manifest.Part
	MinCommit, MaxCommit uint64
	Bytes                int64
	Level                uint8
}

// Runs groups a shard's live parts into runs, oldest first.
func Runs(parts []manifest.Part) []Run {
	ps := slices.Clone(parts)
	slices.SortFunc(ps, func(a, b manifest.Part) int {
		if c := cmp.Compare(a.MinCommit, b.MinCommit); c != 0 {
			return c
		}
		if c := cmp.Compare(a.MaxCommit, b.MaxCommit); c != 0 {
			return c
		}
		return cmp.Compare(a.ID, b.ID)
	})
	var runs []Run
	for i, p := range ps {
		if n := len(runs); n > 0 && p.MinCommit <= runs[n-1].MaxCommit {
			r := &runs[n-1]
			r.Parts = ps[i-len(r.Parts) : i+1]
			r.MaxCommit = max(r.MaxCommit, p.MaxCommit)
			r.Bytes += int64(p.Bytes)
			r.Level = max(r.Level, p.Level)
			continue
		}
		runs = append(runs, Run{Parts: ps[i : i+1], MinCommit: p.MinCommit, MaxCommit: p.MaxCommit,
			Bytes: int64(p.Bytes), Level: p.Level})
	}
	return runs
}

// Choose picks the next merge for a shard, given its
// live parts, or reports false when none is due. It is pure and cheap
// (quadratic in MaxFanIn per run), so the engine may call it after every
// flush. doc.go, "The policy", says why it chooses what it does.
func Choose(parts []manifest.Part, s Settings) (Plan, bool) {
	if s.TargetPartBytes <= 0 {
		s.TargetPartBytes = DefaultTargetPartBytes
	}
	if s.MaxPartsPerShard <= 0 {
		s.MaxPartsPerShard = DefaultMaxPartsPerShard
	}
	runs := Runs(parts)
	if len(runs) < 2 {
		return Plan{}, false
	}
	if i, j, ok := tier(runs, s); ok {
		return plan(runs, i, j, Tier), true
	}
	if len(runs) > s.MaxPartsPerShard {
		i, j := budget(runs)
		return plan(runs, i, j, Budget), true
	}
	return Plan{}, false
}

// SettleRatio bounds what folding an idle shard costs: its runs are
// folded into final runs only once the runs newer than the oldest hold at
// least 1/SettleRatio of the oldest run's bytes, so a byte of the oldest
// run is rewritten by folds at most once per SettleRatio of it written
// since, however often the shard goes idle.
const SettleRatio = 16

// Settles picks the merge that leaves an idle shard in its final form, or
// reports false when it is not due. final says the shard already is (one
// run and, for a keyed table, no delta part in it: nothing to fold). A
// shard that is not final is folded when it has one run (flushed or merged
// deltas and no merged run yet: cheap, it rewrites only itself), or when
// its newer runs hold at least 1/SettleRatio of its oldest run's bytes.
//
// The size-tiered policy (Choose) leaves a few runs of decreasing size
// beside the oldest once writes stop: each is bounded, but every point
// lookup seeks them, every first current read resolves them and each
// stores its rows twice until merged. Folding them when the shard goes
// idle costs one rewrite of the shard, which the ratio bounds.
func Settles(parts []manifest.Part, final bool) (Plan, bool) {
	if final || len(parts) == 0 {
		return Plan{}, false
	}
	runs := Runs(parts)
	if len(runs) > 1 {
		var newer int64
		for _, r := range runs[1:] {
			newer += r.Bytes
		}
		if newer*SettleRatio < runs[0].Bytes {
			return Plan{}, false
		}
	}
	return Full(parts, Settle), true
}

// Full is the merge of every part of a shard into its final runs, which
// therefore holds its oldest data.
func Full(parts []manifest.Part, why Why) Plan {
	runs := Runs(parts)
	return plan(runs, 0, len(runs), why)
}

// Through is the merge of a shard's oldest runs, every run whose commits
// begin at or before commit h (all of them for h = math.MaxUint64): the
// runs that may hold rows committed by h. false when there is none.
func Through(parts []manifest.Part, h uint64, why Why) (Plan, bool) {
	runs := Runs(parts)
	j := 0
	for j < len(runs) && runs[j].MinCommit <= h {
		j++
	}
	if j == 0 {
		return Plan{}, false
	}
	return plan(runs, 0, j, why), true
}

// tier finds the cheapest window of FanIn to MaxFanIn adjacent runs, each
// below the target, whose sizes are within SizeRatio of each other: the
// smallest total size wins, so small fresh runs are merged first and each
// byte is rewritten about once per tier (log_FanIn of its growth).
func tier(runs []Run, s Settings) (int, int, bool) {
	bi, bj, best := 0, 0, int64(-1)
	for i := range runs {
		lo, hi, total := int64(-1), int64(0), int64(0)
		for j := i; j < len(runs) && j-i < MaxFanIn; j++ {
			b := max(runs[j].Bytes, 1)
			if b >= s.TargetPartBytes {
				break
			}
			if lo < 0 || b < lo {
				lo = b
			}
			hi = max(hi, b)
			if hi > SizeRatio*lo {
				break
			}
			total += b
			if n := j - i + 1; n >= FanIn && (best < 0 || total < best) {
				bi, bj, best = i, j+1, total
			}
		}
	}
	return bi, bj, best >= 0
}

// budget finds the window of 2 to MaxFanIn adjacent runs that removes runs
// at the lowest cost in bytes rewritten per run removed. Every such merge
// leaves one run fewer or better, so repeated calls reach the budget.
func budget(runs []Run) (int, int) {
	bi, bj := 0, 2
	var best float64 = -1
	for i := range runs {
		total := int64(0)
		for j := i; j < len(runs) && j-i < MaxFanIn; j++ {
			total += max(runs[j].Bytes, 1)
			n := j - i + 1
			if n < 2 {
				continue
			}
			cost := float64(total) / float64(n-1)
			if best < 0 || cost < best {
				bi, bj, best = i, j+1, cost
			}
		}
	}
	return bi, bj
}

// plan builds the Plan merging runs[i:j].
func plan(runs []Run, i, j int, why Why) Plan {
	p := Plan{Oldest: i == 0, Why: why}
	var level uint8
	for _, r := range runs[i:j] {
		p.Inputs = append(p.Inputs, r.Parts...)
		level = max(level, r.Level)
	}
	if level < 255 {
		level++
	}
	p.Level = level
	return p
}
