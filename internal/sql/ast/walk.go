package ast

import "reflect"

// Inspect traverses the tree rooted at n in source order, calling f for
// each node; if f returns false, the node's children are skipped. It is
// the binder's tool for finding aggregates, subqueries or parameters, in
// the manner of go/ast.Inspect. The items of a VALUES list kept compact
// (Values.Lits: lone literals and NULLs) are not visited.
func Inspect(n Node, f func(Node) bool) {
	if isNil(n) || !f(n) {
		return
	}
	in := func(c Node) { Inspect(c, f) }
	exprs := func(list []Expr) {
		for _, e := range list {
			in(e)
		}
	}
	idents := func(list []*Ident) {
		for _, id := range list {
			in(id)
		}
	}
	returning := func(list []*SelectItem) {
		for _, it := range list {
			in(it)
		}
	}
	switch n := n.(type) {
	case *UnaryExpr:
		in(n.X)
	case *BinaryExpr:
		in(n.L)
		in(n.R)
	case *IsExpr:
		in(n.X)
		in(n.From)
	case *BetweenExpr:
		in(n.X)
		in(n.Lo)
		in(n.Hi)
	case *InExpr:
		in(n.X)
		exprs(n.List)
		in(n.Query)
	case *LikeExpr:
		in(n.X)
		in(n.Pattern)
		in(n.Escape)
	case *CastExpr:
		in(n.X)
		in(n.Type)
	case *TypedLit:
		in(n.Type)
	case *CaseExpr:
		in(n.Operand)
		for _, w := range n.Whens {
			in(w)
		}
		in(n.Else)
	case *When:
		in(n.Cond)
		in(n.Result)
	case *QuantifiedExpr:
		in(n.X)
		in(n.Query)
	case *ExistsExpr:
		in(n.Query)
	case *SubqueryExpr:
		in(n.Query)
	case *FuncCall:
		exprs(n.Args)
		for _, o := range n.OrderBy {
			in(o)
		}
		in(n.Filter)
		inspectWindow(n.Over, f)
	case *ParenExpr:
		in(n.X)
	case *TupleExpr:
		exprs(n.Items)
	case *GroupingSet:
		exprs(n.Items)

	case *SelectStmt:
		in(n.With)
		in(n.Body)
		for _, o := range n.OrderBy {
			in(o)
		}
		in(n.AsOf)
		in(n.Limit)
		in(n.Offset)
	case *With:
		for _, c := range n.CTEs {
			in(c)
		}
	case *CTE:
		in(n.Name)
		idents(n.Columns)
		in(n.Query)
		if n.Write != nil {
			in(n.Write)
		}
	case *SelectBlock:
		exprs(n.DistinctOn)
		for _, it := range n.Items {
			in(it)
		}
		for _, t := range n.From {
			in(t)
		}
		in(n.Where)
		exprs(n.GroupBy)
		in(n.Having)
		for _, w := range n.Windows {
			inspectWindow(w.Spec, f)
		}
	case *SelectItem:
		in(n.Expr)
		in(n.Alias)
	case *SetOp:
		in(n.Left)
		in(n.Right)
	case *Values:
		// Compact rows (Lits) are lone literals and NULLs, with nothing
		// inside them a walk looks for (parameters, subqueries, calls,
		// names): their nodes are not built to be visited. A walk that
		// wants the literals themselves reads AllRows.
		for _, r := range n.Rows {
			in(r)
		}
	case *Row:
		exprs(n.Items)
	case *ParenSelect:
		in(n.Select)
	case *OrderItem:
		in(n.Expr)
	case *AsOf:
		in(n.Expr)
	case *Alias:
		in(n.Name)
		idents(n.Columns)
	case *TableRef:
		in(n.Name)
		in(n.AsOf)
		in(n.Alias)
	case *TableFunc:
		in(n.Name)
		exprs(n.Args)
		in(n.AsOf)
		in(n.Alias)
	case *DerivedTable:
		in(n.Query)
		in(n.Alias)
	case *ParenTable:
		in(n.Inner)
		in(n.Alias)
	case *JoinExpr:
		in(n.Left)
		in(n.Right)
		in(n.On)
		idents(n.Using)

	case *InsertStmt:
		in(n.With)
		in(n.Table)
		in(n.Alias)
		idents(n.Columns)
		in(n.Source)
		in(n.Group)
		in(n.OnConflict)
		returning(n.Returning)
	case *OnConflict:
		idents(n.Target)
		in(n.Constraint)
		for _, s := range n.Sets {
			in(s)
		}
		in(n.Where)
	case *UpdateStmt:
		in(n.With)
		in(n.Table)
		in(n.Alias)
		for _, s := range n.Sets {
			in(s)
		}
		for _, t := range n.From {
			in(t)
		}
		in(n.Where)
		returning(n.Returning)
	case *SetClause:
		in(n.Column)
		in(n.Value)
	case *DeleteStmt:
		in(n.With)
		in(n.Table)
		in(n.Alias)
		for _, t := range n.Using {
			in(t)
		}
		in(n.Where)
		returning(n.Returning)
	case *ExplainStmt:
		in(n.Stmt)
	case *ShowCreateTableStmt:
		in(n.Table)
	case *DescribeStmt:
		in(n.Table)
	case *SetStmt:
		exprs(n.Values)

	case *CreateTableStmt:
		in(n.Name)
		for _, c := range n.Columns {
			in(c)
		}
		idents(n.PrimaryKey)
		for _, u := range n.Uniques {
			idents(u)
		}
		for _, g := range n.Groups {
			in(g)
		}
		idents(n.ValidBy)
		idents(n.RevisionBy)
		idents(n.ShardBy)
		in(n.Shards)
		idents(n.OrderBy)
		idents(n.Policies)
	case *ColumnDef:
		in(n.Name)
		in(n.Type)
		in(n.Default)
		for _, c := range n.Codecs {
			in(c)
		}
	case *AttributeGroupDef:
		in(n.Name)
		idents(n.Columns)
		for _, c := range n.ColumnDefs {
			in(c)
		}
		idents(n.ValidBy)
		idents(n.RevisionBy)
	case *AlterTableStmt:
		in(n.Table)
		for _, c := range n.Cmds {
			in(c)
		}
	case *AddColumn:
		in(n.Column)
		in(n.Group)
	case *AddGroup:
		in(n.Group)
	case *DropColumn:
		in(n.Name)
	case *RenameColumn:
		in(n.Old)
		in(n.New)
	case *RenameTable:
		in(n.New)
	case *SetDefault:
		in(n.Column)
		in(n.Expr)
	case *DropDefault:
		in(n.Column)
	case *AlterColumnType:
		in(n.Column)
		in(n.Type)
	case *SetPolicy:
		idents(n.Policies)
	case *DropStmt:
		for _, name := range n.Names {
			in(name)
		}
	case *CreateIndexStmt:
		in(n.Name)
		in(n.Table)
		for _, c := range n.Columns {
			in(c)
		}
		idents(n.Policies)
	case *IndexColumn:
		in(n.Name)
	case *CreatePolicyStmt:
		in(n.Name)
		in(n.Role)
		for _, s := range n.Settings {
			in(s)
		}
	case *PolicySetting:
		in(n.Key)
		in(n.Value)
	case *CreateTransformationStmt:
		in(n.Name)
		in(n.Target)
		in(n.Group)
		in(n.Query)
	case *CreateViewStmt:
		in(n.Name)
		for _, c := range n.Columns {
			in(c)
		}
		in(n.Query)
	case *CreateUserStmt:
		in(n.Name)
	case *AlterUserStmt:
		in(n.Name)
	}
}

// isNil reports whether n is nil or a typed nil pointer, so optional
// children can be passed to Inspect unchecked.
func isNil(n Node) bool {
	if n == nil {
		return true
	}
	v := reflect.ValueOf(n)
	return v.Kind() == reflect.Pointer && v.IsNil()
}
