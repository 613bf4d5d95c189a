package version

import "strconv"

// Reason builds the _reason sentence of versions() (rule 5, R7.1) for
// version v in state s. by is the version that decided: the one that
// superseded v, the winner v lost to, or the version v repeats; nil for
// current and deleted. at is the commit of the delete for deleted. The
// sentence names the first ordering column on which the two differ, with both
// values printed by ord.Format ("lost to commit 7: balance_index 150 < 200"),
// or says that the tie was broken by commit or by position. It is empty for a
// current or invisible version. Reason allocates; it is for reads of
// versions(), never for deciding.
func Reason(ord Ordering, s State, v, by *Version, at uint64) string {
	switch s {
	case Deleted:
		return "deleted at commit " + strconv.FormatUint(at, 10)
	case Late:
		if by == nil {
			return "lost on arrival"
		}
		return "lost to commit " + strconv.FormatUint(by.Commit, 10) + ": " + explain(&ord, v, by)
	case Superseded:
		if by == nil {
			return "superseded"
		}
		return "superseded by commit " + strconv.FormatUint(by.Commit, 10) + ": " + explain(&ord, v, by)
	case Dropped:
		if by == nil {
			return "repeat"
		}
		return "repeats commit " + strconv.FormatUint(by.Commit, 10) + ": same ordering values and values"
	}
	return ""
}

// explain says why lo is less than hi under rule 1.
func explain(ord *Ordering, lo, hi *Version) string {
	n := ord.Columns()
	if k := firstDiff(n, lo.Order, hi.Order); k >= 0 {
		rel := " < "
		if compareOrder(n, lo.Order, hi.Order) > 0 {
			// Not reachable through Resolve; say what is true anyway.
			rel = " > "
		}
		return ord.name(k) + " " + ord.format(k, col(lo.Order, k)) + rel + ord.format(k, col(hi.Order, k))
	}
	tie := "same ordering values, "
	if n == 0 {
		tie = ""
	}
	if hi.Commit != lo.Commit {
		return tie + "later commit"
	}
	return tie + "later position in commit " + strconv.FormatUint(hi.Commit, 10)
}
