package logictest

import (
	"fmt"
	"strings"
)

// maxDiffCells bounds the longest-common-subsequence table of a diff; larger
// inputs are compared line by line at equal positions instead, which is
// enough to point at the first difference of a long result.
const maxDiffCells = 4 << 20

// maxDiffLines bounds how many diff lines a failure prints.
const maxDiffLines = 80

// Diff returns a line diff of want against got, one line per input line:
// "  x" for a line both have, "- x" for a line only want has, "+ x" for a
// line only got has. It is meant for people, so it is cut after
// maxDiffLines lines with a note saying how many were left out.
func Diff(want, got []string) string {
	ops := diffOps(want, got)
	var b strings.Builder
	shown := 0
	for k, op := range ops {
		if shown == maxDiffLines {
			fmt.Fprintf(&b, "  ... %d more diff lines\n", len(ops)-k)
			break
		}
		b.WriteString(op)
		b.WriteByte('\n')
		shown++
	}
	return b.String()
}

// diffOps computes the diff lines. Equal runs longer than a few lines are
// folded so that the differences stay on screen.
func diffOps(want, got []string) []string {
	var raw []string
	if len(want)*len(got) > maxDiffCells {
		raw = positionalOps(want, got)
	} else {
		raw = lcsOps(want, got)
	}
	return foldEqual(raw, 3)
}

// lcsOps is the classic dynamic-programming diff over the longest common
// subsequence: deletions before insertions at each point of difference.
func lcsOps(a, b []string) []string {
	n, m := len(a), len(b)
	// l[i][j] = LCS length of a[i:] and b[j:], stored row-major.
	l := make([]int32, (n+1)*(m+1))
	at := func(i, j int) int32 { return l[i*(m+1)+j] }
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			v := at(i+1, j)
			if a[i] == b[j] {
				v = at(i+1, j+1) + 1
			} else if w := at(i, j+1); w > v {
				v = w
			}
			l[i*(m+1)+j] = v
		}
	}
	ops := make([]string, 0, n+m)
	i, j := 0, 0
	for i < n && j < m {
		switch {
		case a[i] == b[j]:
			ops = append(ops, "  "+a[i])
			i++
			j++
		case at(i+1, j) >= at(i, j+1):
			ops = append(ops, "- "+a[i])
			i++
		default:
			ops = append(ops, "+ "+b[j])
			j++
		}
	}
	for ; i < n; i++ {
		ops = append(ops, "- "+a[i])
	}
	for ; j < m; j++ {
		ops = append(ops, "+ "+b[j])
	}
	return ops
}

// positionalOps compares line k with line k.
func positionalOps(a, b []string) []string {
	ops := make([]string, 0, max(len(a), len(b)))
	for k := 0; k < len(a) || k < len(b); k++ {
		switch {
		case k < len(a) && k < len(b) && a[k] == b[k]:
			ops = append(ops, "  "+a[k])
		default:
			if k < len(a) {
				ops = append(ops, "- "+a[k])
			}
			if k < len(b) {
				ops = append(ops, "+ "+b[k])
			}
		}
	}
	return ops
}

// foldEqual replaces a run of unchanged lines longer than 2*context+1 by its
// first and last context lines around a "... n equal lines" marker.
func foldEqual(ops []string, context int) []string {
	out := make([]string, 0, len(ops))
	for i := 0; i < len(ops); {
		if !strings.HasPrefix(ops[i], "  ") {
			out = append(out, ops[i])
			i++
			continue
		}
		j := i
		for j < len(ops) && strings.HasPrefix(ops[j], "  ") {
			j++
		}
		lead, trail := context, context
		if i == 0 {
			lead = 0
		}
		if j == len(ops) {
			trail = 0
		}
		if j-i > lead+trail+1 {
			out = append(out, ops[i:i+lead]...)
			out = append(out, fmt.Sprintf("  ... %d equal lines", j-i-lead-trail))
			out = append(out, ops[j-trail:j]...)
		} else {
			out = append(out, ops[i:j]...)
		}
		i = j
	}
	return out
}
