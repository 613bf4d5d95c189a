package plan

import (
	"fmt"
	"strings"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/expr"
	"github.com/strata-db/strata/internal/storage"
	"github.com/strata-db/strata/internal/types"
)

// ColRef is an output column of a node: a plan-wide id (what expr.Col
// refers to), its name for EXPLAIN, and its type.
type ColRef struct {
	ID   int
	Name string
	T    types.Type
}

// Node is a plan operator. Nodes are plain data; exec builds operators from
// them.
type Node interface {
	// Output is the node's columns, in batch order.
	Output() []ColRef
	// Inputs are the child nodes.
	Inputs() []Node
}

// Scan reads a stored table (R6.1: at AsOf when non-zero).
type Scan struct {
	Table *catalog.Table
	Alias string
	AsOf  uint64
	// After, for an append table, keeps only rows committed after it: a
	// transformation reads its source's new rows (R12.2). Never set by
	// the binder.
	After  uint64
	Cols   []ColRef
	ColIDs []catalog.ColumnID // the table column each of Cols reads
	// Commit adds the hidden _commit column (R7.2) as CommitCol.
	Commit    bool
	CommitCol ColRef
	// Filter is re-checked on every row the scan returns (R10.2).
	Filter expr.Expr
	// Ranges are the key-prefix ranges pushed into storage, RangeText their
	// EXPLAIN form.
	Ranges    []storage.KeyRange
	RangeText []string
	// Key, when set, holds a value for every primary key column (in key
	// order): the filter pins one key, so exec reads it with the source's
	// point lookup and EXPLAIN shows a Lookup. Filter is still re-checked.
	Key []types.Value
	// Index, when set, is the index the scan reads through (R10.2,
	// index.go); Filter is still re-checked.
	Index *IndexUse
}

// Output implements Node.
func (n *Scan) Output() []ColRef {
	if n.Commit {
		return append(append([]ColRef(nil), n.Cols...), n.CommitCol)
	}
	return n.Cols
}

// Inputs implements Node.
func (n *Scan) Inputs() []Node { return nil }

// Versions reads every retained version of a versioned table (R7.1):
// Cols, then the storage.VersionsCols in Extra.
type Versions struct {
	Table  *catalog.Table
	Alias  string
	AsOf   uint64
	Cols   []ColRef
	ColIDs []catalog.ColumnID
	Extra  []ColRef
	Filter expr.Expr
	// Ranges are the key ranges the filter bounds (a full key is a
	// one-key range); storage reads only versions of keys in them.
	Ranges []storage.KeyRange
	// Index, when set, is the index the read goes through (R10.2).
	Index *IndexUse
}

// Output implements Node.
func (n *Versions) Output() []ColRef { return append(append([]ColRef(nil), n.Cols...), n.Extra...) }

// Inputs implements Node.
func (n *Versions) Inputs() []Node { return nil }

// VirtualScan reads a virtual relation such as system.commits.
type VirtualScan struct {
	Schema, Name string
	V            Virtual
	Cols         []ColRef
	Filter       expr.Expr
}

// Output implements Node.
func (n *VirtualScan) Output() []ColRef { return n.Cols }

// Inputs implements Node.
func (n *VirtualScan) Inputs() []Node { return nil }

// Values is a literal relation.
type Values struct {
	Rows [][]expr.Expr
	Cols []ColRef
}

// Output implements Node.
func (n *Values) Output() []ColRef { return n.Cols }

// Inputs implements Node.
func (n *Values) Inputs() []Node { return nil }

// Filter keeps the rows where Cond is TRUE.
type Filter struct {
	In   Node
	Cond expr.Expr
}

// Output implements Node.
func (n *Filter) Output() []ColRef { return n.In.Output() }

// Inputs implements Node.
func (n *Filter) Inputs() []Node { return []Node{n.In} }

// Project computes Exprs into Cols.
type Project struct {
	In    Node
	Exprs []expr.Expr
	Cols  []ColRef
}

// Output implements Node.
func (n *Project) Output() []ColRef { return n.Cols }

// Inputs implements Node.
func (n *Project) Inputs() []Node { return []Node{n.In} }

// AggCall is one aggregate of an Aggregate node.
type AggCall struct {
	Fn       string // count, sum, avg, min, max, any_value, max_by, min_by, bool_and, bool_or
	Args     []expr.Expr
	Star     bool // count(*)
	Distinct bool
	T        types.Type
	// Pos is where the call stands in the statement, for its run-time
	// errors (an overflowing sum).
	Pos int
	// Order is the aggregate's ORDER BY (string_agg(s, ',' ORDER BY s),
	// WITHIN GROUP of percentile_cont, percentile_disc and mode): exec
	// feeds each group's rows in this order. Empty for the aggregates
	// whose result does not depend on the order, where the binder drops
	// a written ORDER BY.
	Order []SortKey
	// Grouping is grouping(…)'s arguments as positions in the
	// Aggregate's Groups (Fn "grouping"; no Args): its value is constant
	// per grouping set.
	Grouping []int
}

// Aggregate groups its input by Groups and computes Aggs per group. With no
// groups it yields exactly one row.
type Aggregate struct {
	In        Node
	Groups    []expr.Expr
	GroupCols []ColRef
	Aggs      []AggCall
	AggCols   []ColRef
	// Sets, when not nil, are GROUPING SETS / ROLLUP / CUBE: each set
	// lists the positions in Groups it groups on (sorted; may be empty,
	// the grand total). A row of a set has NULL in the group columns the
	// set leaves out. nil is a plain GROUP BY of every one of Groups.
	Sets [][]int
}

// Output implements Node.
func (n *Aggregate) Output() []ColRef {
	return append(append([]ColRef(nil), n.GroupCols...), n.AggCols...)
}

// Inputs implements Node.
func (n *Aggregate) Inputs() []Node { return []Node{n.In} }

// JoinKind is the kind of a Join.
type JoinKind uint8

// The join kinds. Semi and Anti output only the left side.
const (
	JoinInner JoinKind = iota
	JoinLeft
	JoinRight
	JoinFull
	JoinSemi
	JoinAnti
)

var joinNames = [...]string{"Inner", "Left", "Right", "Full", "Semi", "Anti"}

func (k JoinKind) String() string { return joinNames[k] }

// Join combines L and R. With equality keys exec runs a hash join (R is
// the build side), without a nested-loop join; Cond is the residual
// condition checked on each candidate pair.
type Join struct {
	Kind      JoinKind
	L, R      Node
	LeftKeys  []expr.Expr
	RightKeys []expr.Expr
	Cond      expr.Expr
}

// Output implements Node.
func (n *Join) Output() []ColRef {
	if n.Kind == JoinSemi || n.Kind == JoinAnti {
		return n.L.Output()
	}
	return appendJoinOutput(make([]ColRef, 0, joinOutputLen(n)), n)
}

// joinOutputLen and appendJoinOutput build a join tree's output in one
// allocation: asking each nested join for its Output copied every column
// once per level, quadratic in a left-deep tree of many joins.
func joinOutputLen(n Node) int {
	switch x := n.(type) {
	case *Join:
		if x.Kind == JoinSemi || x.Kind == JoinAnti {
			return joinOutputLen(x.L)
		}
		return joinOutputLen(x.L) + joinOutputLen(x.R)
	case *Filter:
		return joinOutputLen(x.In)
	}
	return len(n.Output())
}

func appendJoinOutput(dst []ColRef, n Node) []ColRef {
	switch x := n.(type) {
	case *Join:
		dst = appendJoinOutput(dst, x.L)
		if x.Kind == JoinSemi || x.Kind == JoinAnti {
			return dst
		}
		return appendJoinOutput(dst, x.R)
	case *Filter:
		return appendJoinOutput(dst, x.In)
	}
	return append(dst, n.Output()...)
}

// Inputs implements Node.
func (n *Join) Inputs() []Node { return []Node{n.L, n.R} }

// SortKey is one ORDER BY term.
type SortKey struct {
	E          expr.Expr
	Desc       bool
	NullsFirst bool
}

// Sort orders its input.
type Sort struct {
	In   Node
	Keys []SortKey
}

// Output implements Node.
func (n *Sort) Output() []ColRef { return n.In.Output() }

// Inputs implements Node.
func (n *Sort) Inputs() []Node { return []Node{n.In} }

// TopN is ORDER BY Keys LIMIT Count OFFSET Offset in one operator: it keeps
// only the best Count+Offset rows seen (a bounded heap) instead of sorting
// its whole input, then emits them in order, skipping Offset. Ties keep
// their input order, as the stable Sort does.
type TopN struct {
	In            Node
	Keys          []SortKey
	Count, Offset int64
}

// Output implements Node.
func (n *TopN) Output() []ColRef { return n.In.Output() }

// Inputs implements Node.
func (n *TopN) Inputs() []Node { return []Node{n.In} }

// Limit passes Count rows after skipping Offset; Count < 0 means no limit.
type Limit struct {
	In            Node
	Count, Offset int64
}

// Output implements Node.
func (n *Limit) Output() []ColRef { return n.In.Output() }

// Inputs implements Node.
func (n *Limit) Inputs() []Node { return []Node{n.In} }

// Distinct removes duplicate rows (NULLs equal).
type Distinct struct {
	In Node
	// On, when set, are the DISTINCT ON columns (of In's output): the
	// first row of each distinct tuple of them is kept, whole.
	On []ColRef
}

// Output implements Node.
func (n *Distinct) Output() []ColRef { return n.In.Output() }

// Inputs implements Node.
func (n *Distinct) Inputs() []Node { return []Node{n.In} }

// SetOpKind is UNION, INTERSECT or EXCEPT.
type SetOpKind uint8

// The set operations.
const (
	Union SetOpKind = iota
	Intersect
	Except
)

// SetOp combines two inputs of equal column types positionally into Cols.
type SetOp struct {
	Kind SetOpKind
	All  bool
	L, R Node
	Cols []ColRef
}

// Output implements Node.
func (n *SetOp) Output() []ColRef { return n.Cols }

// Inputs implements Node.
func (n *SetOp) Inputs() []Node { return []Node{n.L, n.R} }

// Describe returns the one-line EXPLAIN text of a node (without children).
// src, when not nil, adds the shards and parts a scan will touch.
func Describe(n Node, src Source) string {
	switch n := n.(type) {
	case *Scan:
		var sb strings.Builder
		if n.Key != nil {
			sb.WriteString("Lookup " + n.Table.Name)
		} else {
			sb.WriteString("Scan " + n.Table.Name)
		}
		if n.Alias != "" && n.Alias != n.Table.Name {
			sb.WriteString(" AS " + n.Alias)
		}
		if n.AsOf != 0 {
			fmt.Fprintf(&sb, " AS OF COMMIT %d", n.AsOf)
		}
		names := colNames(n.Cols)
		if n.Commit {
			names = append(names, "_commit")
		}
		sb.WriteString(" columns=[" + strings.Join(names, ", ") + "]")
		if n.Key != nil {
			ks := make([]string, len(n.Key))
			for i, id := range n.Table.Key {
				c, _ := n.Table.AnyColumn(id)
				ks[i] = c.Name + " = " + (&expr.Const{V: n.Key[i]}).String()
			}
			sb.WriteString(" key=[" + strings.Join(ks, ", ") + "]")
		} else if len(n.RangeText) > 0 {
			sb.WriteString(" ranges=[" + strings.Join(n.RangeText, ", ") + "]")
		}
		sb.WriteString(indexText(n.Index))
		if n.Filter != nil {
			sb.WriteString(" filter=" + n.Filter.String())
		}
		if src != nil {
			shards, parts := src.Shards(n.Table.ID), src.Parts(n.Table.ID)
			fmt.Fprintf(&sb, " shards=%d parts=%d", len(shards), countParts(parts, n.AsOf))
		}
		return sb.String()
	case *Versions:
		s := "Versions " + n.Table.Name
		if n.AsOf != 0 {
			s += fmt.Sprintf(" AS OF COMMIT %d", n.AsOf)
		}
		s += " columns=[" + strings.Join(colNames(n.Cols), ", ") + "]"
		s += indexText(n.Index)
		if n.Filter != nil {
			s += " filter=" + n.Filter.String()
		}
		if src != nil {
			s += fmt.Sprintf(" shards=%d parts=%d", len(src.Shards(n.Table.ID)), countParts(src.Parts(n.Table.ID), n.AsOf))
		}
		return s
	case *VirtualScan:
		s := "VirtualScan " + n.Schema + "." + n.Name + " columns=[" + strings.Join(colNames(n.Cols), ", ") + "]"
		if n.Filter != nil {
			s += " filter=" + n.Filter.String()
		}
		return s
	case *Values:
		return fmt.Sprintf("Values rows=%d columns=[%s]", len(n.Rows), strings.Join(colNames(n.Cols), ", "))
	case *Filter:
		return "Filter " + n.Cond.String()
	case *Project:
		parts := make([]string, len(n.Exprs))
		for i, e := range n.Exprs {
			s := e.String()
			if s != n.Cols[i].Name {
				s += " AS " + n.Cols[i].Name
			}
			parts[i] = s
		}
		return "Project " + strings.Join(parts, ", ")
	case *Aggregate:
		var parts []string
		for _, g := range n.Groups {
			parts = append(parts, g.String())
		}
		s := "Aggregate"
		if len(parts) > 0 {
			s += " group=[" + strings.Join(parts, ", ") + "]"
		}
		if n.Sets != nil {
			sets := make([]string, len(n.Sets))
			for i, set := range n.Sets {
				cols := make([]string, len(set))
				for j, g := range set {
					cols[j] = parts[g]
				}
				sets[i] = "(" + strings.Join(cols, ", ") + ")"
			}
			s += " sets=[" + strings.Join(sets, ", ") + "]"
		}
		var aggs []string
		for _, a := range n.Aggs {
			if a.Fn == "grouping" {
				args := make([]string, len(a.Grouping))
				for i, g := range a.Grouping {
					args[i] = parts[g]
				}
				aggs = append(aggs, "grouping("+strings.Join(args, ", ")+")")
				continue
			}
			aggs = append(aggs, aggString(a))
		}
		return s + " aggs=[" + strings.Join(aggs, ", ") + "]"
	case *Join:
		s := "HashJoin"
		if len(n.LeftKeys) == 0 {
			s = "NestedLoopJoin"
		}
		s += " " + n.Kind.String()
		for i := range n.LeftKeys {
			if i == 0 {
				s += " on "
			} else {
				s += " AND "
			}
			s += n.LeftKeys[i].String() + " = " + n.RightKeys[i].String()
		}
		if n.Cond != nil {
			s += " filter=" + n.Cond.String()
		}
		return s
	case *TopN:
		s := fmt.Sprintf("TopN %d", n.Count)
		if n.Offset > 0 {
			s += fmt.Sprintf(" offset %d", n.Offset)
		}
		return s + " by " + sortKeysString(n.Keys)
	case *Sort:
		return "Sort " + sortKeysString(n.Keys)
	case *Limit:
		s := "Limit"
		if n.Count >= 0 {
			s += fmt.Sprintf(" %d", n.Count)
		}
		if n.Offset > 0 {
			s += fmt.Sprintf(" offset %d", n.Offset)
		}
		return s
	case *Distinct:
		if len(n.On) > 0 {
			return "Distinct on [" + strings.Join(colNames(n.On), ", ") + "]"
		}
		return "Distinct"
	case *SetOp:
		s := [...]string{"Union", "Intersect", "Except"}[n.Kind]
		if n.All {
			s += " All"
		}
		return s
	case *TableFunction:
		return n.String()
	case *Lateral:
		return n.String()
	case *Recursive:
		s := "Recursive " + n.Name
		if n.All {
			s += " All"
		}
		return s
	case *Window:
		return describeWindow(n)
	case *CTEScan:
		return describeCTEScan(n)
	case *cteDef:
		return "CTE " + n.c.Name
	case *WorkTable:
		return "WorkTable " + n.Rec.Name + " columns=[" + strings.Join(colNames(n.Cols), ", ") + "]"
	}
	return fmt.Sprintf("%T", n)
}

func sortKeysString(ks []SortKey) string {
	var keys []string
	for _, k := range ks {
		s := k.E.String()
		if k.Desc {
			s += " DESC"
		}
		if k.NullsFirst != k.Desc {
			if k.NullsFirst {
				s += " NULLS FIRST"
			} else {
				s += " NULLS LAST"
			}
		}
		keys = append(keys, s)
	}
	return strings.Join(keys, ", ")
}

func aggString(a AggCall) string {
	if a.Star {
		return a.Fn + "(*)"
	}
	var args []string
	for _, x := range a.Args {
		args = append(args, x.String())
	}
	d := ""
	if a.Distinct {
		d = "DISTINCT "
	}
	if orderedSetAggs[a.Fn] {
		return a.Fn + "(" + strings.Join(args[:len(args)-1], ", ") + ") WITHIN GROUP (ORDER BY " + sortKeysString(a.Order) + ")"
	}
	if len(a.Order) > 0 {
		return a.Fn + "(" + d + strings.Join(args, ", ") + " ORDER BY " + sortKeysString(a.Order) + ")"
	}
	return a.Fn + "(" + d + strings.Join(args, ", ") + ")"
}

// countParts counts the parts a read at asOf may touch: those whose min
// commit is not above it.
func countParts(parts []storage.PartInfo, asOf uint64) int {
	n := 0
	for _, p := range parts {
		if asOf == 0 || p.MinCommit <= asOf {
			n++
		}
	}
	return n
}

func colNames(cs []ColRef) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.Name
	}
	return out
}

// Explain renders the tree rooted at n, one line per node, children
// indented under their parent. annotate, when not nil, adds text to a
// node's line (EXPLAIN ANALYZE's counters).
func Explain(n Node, src Source, annotate func(Node) string) []string {
	var lines []string
	var walk func(n Node, prefix, childPrefix string)
	walk = func(n Node, prefix, childPrefix string) {
		line := prefix + Describe(n, src)
		if annotate != nil {
			if a := annotate(n); a != "" {
				line += " (" + a + ")"
			}
		}
		lines = append(lines, line)
		ins := n.Inputs()
		if prefix == "" {
			// The materialized WITH queries come first below the top
			// node, once each, as PostgreSQL shows them.
			var defs []Node
			for _, c := range ctesOf(n) {
				defs = append(defs, &cteDef{c: c})
			}
			ins = append(defs, ins...)
		}
		for i, c := range ins {
			if i == len(ins)-1 {
				walk(c, childPrefix+"└─ ", childPrefix+"   ")
			} else {
				walk(c, childPrefix+"├─ ", childPrefix+"│  ")
			}
		}
	}
	walk(n, "", "")
	return lines
}

// Recursive is a WITH RECURSIVE query's fixpoint: Init's rows, then Step's
// rows computed over the rows the round before added (which the WorkTable
// nodes in Step that point to it read), until a round adds none. Without
// All (UNION) a row already produced is not added again, so a cycle ends.
type Recursive struct {
	Name       string
	Init, Step Node
	All        bool
	Cols       []ColRef
}

// Output implements Node.
func (n *Recursive) Output() []ColRef { return n.Cols }

// Inputs implements Node.
func (n *Recursive) Inputs() []Node { return []Node{n.Init, n.Step} }

// WorkTable reads the rows the previous round of Rec added (the recursive
// query's reference to itself).
type WorkTable struct {
	Rec  *Recursive
	Cols []ColRef
}

// Output implements Node.
func (n *WorkTable) Output() []ColRef { return n.Cols }

// Inputs implements Node.
func (n *WorkTable) Inputs() []Node { return nil }
