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
	return string(AppendReason(nil, &ord, s, v, by, at))
}

// AppendReason appends Reason's sentence to dst: a read of versions()
// builds each version's reason into one buffer, where the sentence put
// together from strings cost about five allocations a version, half of
// what reading one key's versions allocated.
func AppendReason(dst []byte, ord *Ordering, s State, v, by *Version, at uint64) []byte {
	switch s {
	case Deleted:
		return strconv.AppendUint(append(dst, "deleted at commit "...), at, 10)
	case Late:
		if by == nil {
			return append(dst, "lost on arrival"...)
		}
		dst = strconv.AppendUint(append(dst, "lost to commit "...), by.Commit, 10)
		return appendExplain(append(dst, ": "...), ord, v, by)
	case Superseded:
		if by == nil {
			return append(dst, "superseded"...)
		}
		dst = strconv.AppendUint(append(dst, "superseded by commit "...), by.Commit, 10)
		return appendExplain(append(dst, ": "...), ord, v, by)
	case Dropped:
		if by == nil {
			return append(dst, "repeat"...)
		}
		dst = strconv.AppendUint(append(dst, "repeats commit "...), by.Commit, 10)
		return append(dst, ": same ordering values and values"...)
	}
	return dst
}

// appendExplain appends why lo is less than hi under rule 1.
func appendExplain(dst []byte, ord *Ordering, lo, hi *Version) []byte {
	n := ord.Columns()
	if k := firstDiff(n, lo.Order, hi.Order); k >= 0 {
		rel := " < "
		if compareOrder(n, lo.Order, hi.Order) > 0 {
			// Not reachable through Resolve; say what is true anyway.
			rel = " > "
		}
		dst = append(append(dst, ord.name(k)...), ' ')
		dst = ord.appendFormat(dst, k, col(lo.Order, k))
		return ord.appendFormat(append(dst, rel...), k, col(hi.Order, k))
	}
	if n > 0 {
		dst = append(dst, "same ordering values, "...)
	}
	if hi.Commit != lo.Commit {
		return append(dst, "later commit"...)
	}
	return strconv.AppendUint(append(dst, "later position in commit "...), hi.Commit, 10)
}
