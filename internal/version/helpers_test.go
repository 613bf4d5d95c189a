package version

import (
	"encoding/binary"
	"strconv"
)

// enc is the tests' ordering encoding: big-endian uint64, which bytes.Compare
// orders like the integers.
func enc(x uint64) []byte { return binary.BigEndian.AppendUint64(nil, x) }

// ints encodes ordering values.
func ints(xs ...uint64) [][]byte {
	out := make([][]byte, len(xs))
	for i, x := range xs {
		out[i] = enc(x)
	}
	return out
}

// decimal appends an ordering value encoded by enc.
func decimal(dst []byte, _ int, b []byte) []byte {
	if len(b) != 8 {
		return append(dst, '?')
	}
	return strconv.AppendUint(dst, binary.BigEndian.Uint64(b), 10)
}

// ord builds an Ordering that prints with decimal.
func ord(valid, revision []string) Ordering {
	return Ordering{Valid: valid, Revision: revision, Format: decimal}
}

// mustResolve resolves or fails the test.
func mustResolve(t interface {
	Helper()
	Fatalf(string, ...any)
}, gs []Ordering, vs []Version, ds []Delete) []Resolved {
	t.Helper()
	rs, err := Resolve(gs, vs, ds)
	if err != nil {
		t.Fatalf("Resolve: %v", err)
	}
	return rs
}

// pick returns the resolved versions of one key and group, with their
// indexes in the input.
func pick(vs []Version, rs []Resolved, key string, g GroupID) ([]Resolved, []int) {
	var out []Resolved
	var at []int
	for i := range vs {
		if string(vs[i].Key) == key && vs[i].Group == g {
			out = append(out, rs[i])
			at = append(at, i)
		}
	}
	return out, at
}

// winnerValues returns the Values of the winner of (key, g) at n, or "" and
// false when the group is empty.
func winnerValues(vs []Version, rs []Resolved, key string, g GroupID, n uint64) (string, bool) {
	sub, at := pick(vs, rs, key, g)
	w := WinnerAt(sub, n)
	if w < 0 {
		return "", false
	}
	return string(vs[at[w]].Values), true
}
