package main

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Model is the straightforward in-memory answer to the workload: per key
// the holding group's winner under R3.1 (greatest balance_index, then
// balance_version; the generator never lets two versions of a key tie),
// kept current and as it stood after the middle batch. It is what the CI
// smoke run checks Strata against, and so what every peer is checked
// against by way of Strata.
type Model struct {
	cur, mid []winner
	midTaken bool
}

type winner struct {
	index, version, amount uint64
	ok                     bool
}

// NewModel makes an empty model for k keys.
func NewModel(k int) *Model { return &Model{cur: make([]winner, k)} }

// Apply folds one batch in.
func (m *Model) Apply(rows []Row) {
	for i := range rows {
		r := &rows[i]
		w := &m.cur[r.Key]
		if !w.ok || r.Index > w.index || (r.Index == w.index && r.Version > w.version) {
			*w = winner{r.Index, r.Version, r.Amount, true}
		}
	}
}

// TakeMiddle records the current state as the middle commit's.
func (m *Model) TakeMiddle() { m.mid = slices.Clone(m.cur); m.midTaken = true }

// Amount returns key k's current (or, with mid, middle) amount as text, or
// "" when the key has no row there.
func (m *Model) Amount(k int32, mid bool) string {
	ws := m.cur
	if mid {
		ws = m.mid
	}
	if !ws[k].ok {
		return ""
	}
	return strconv.FormatUint(ws[k].amount, 10)
}

// Agg is the answer of R2/R3: per token, the number of keys and the sum of
// their amounts, as text sorted by token so any system's answer compares.
type Agg []AggRow

// AggRow is one token's line of an Agg.
type AggRow struct {
	Token string
	Count int64
	Sum   string
}

// String prints the answer compactly, for error messages.
func (a Agg) String() string {
	var b strings.Builder
	for i, r := range a {
		if i > 0 {
			b.WriteString("; ")
		}
		fmt.Fprintf(&b, "%s %d %s", r.Token, r.Count, r.Sum)
	}
	return b.String()
}

// Equal reports whether two answers are the same.
func (a Agg) Equal(b Agg) bool { return slices.Equal(a, b) }

// sortAgg orders the rows by token.
func sortAgg(a Agg) Agg {
	slices.SortFunc(a, func(x, y AggRow) int { return strings.Compare(x.Token, y.Token) })
	return a
}

// Aggregate computes the model's R2 (mid false) or R3 (mid true) answer.
func (m *Model) Aggregate(seed uint64, mid bool) Agg {
	ws := m.cur
	if mid {
		ws = m.mid
	}
	type acc struct {
		n   int64
		sum uint64
	}
	per := map[string]*acc{}
	for k := range ws {
		if !ws[k].ok {
			continue
		}
		_, _, tok := KeyOf(seed, int32(k))
		a := per[tok]
		if a == nil {
			a = &acc{}
			per[tok] = a
		}
		a.n++
		a.sum += ws[k].amount
	}
	var out Agg
	for tok, a := range per {
		out = append(out, AggRow{tok, a.n, strconv.FormatUint(a.sum, 10)})
	}
	return sortAgg(out)
}
