package session

import (
	"strconv"
	"strings"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/sql/ast"
	"github.com/strata-db/strata/internal/sql/token"
	"github.com/strata-db/strata/internal/sqlerr"
	"github.com/strata-db/strata/internal/storage"
	"github.com/strata-db/strata/internal/types"
)

// ddl runs a definition statement as one DDL commit. Everything that needs
// evaluation (types, DEFAULT values, password verifiers) is done before the
// Txn exists; the DDL function only applies specs to the catalog clone, so
// the ordering lock is held for as little as possible.
func (st *statement) ddl(stmt ast.Stmt) (*Result, error) {
	defer st.release()
	var (
		tag    string
		fn     func(c *catalog.Catalog, commit uint64) error
		err    error
		tables []string // what system.commits lists (R5.5)
	)
	cat := st.snapshot().Catalog()
	switch n := stmt.(type) {
	case *ast.CreateTableStmt:
		tag, tables = "CREATE TABLE", []string{n.Name.Name}
		if n.IfNotExists {
			if _, ok := cat.Table(n.Name.Name); ok {
				return &Result{Tag: tag}, nil
			}
		}
		var spec catalog.TableSpec
		if spec, err = st.tableSpec(n); err == nil {
			fn = func(c *catalog.Catalog, commit uint64) error {
				_, _, err := c.CreateTable(spec, commit)
				return err
			}
		}
	case *ast.CreateViewStmt:
		tag = "CREATE VIEW"
		if n.IfNotExists {
			if _, ok := cat.View(n.Name.Name); ok {
				return &Result{Tag: tag}, nil
			}
		}
		var spec catalog.ViewSpec
		if spec, err = st.viewSpec(n); err == nil {
			fn = func(c *catalog.Catalog, commit uint64) error {
				_, err := c.CreateView(spec, commit)
				return err
			}
		}
	case *ast.AlterTableStmt:
		tag, tables = "ALTER TABLE", []string{n.Table.Name}
		fn, err = st.alterTable(n, cat)
	case *ast.DropStmt:
		tag, fn = st.drop(n, cat)
		if fn == nil {
			return &Result{Tag: tag}, nil
		}
		if n.Kind == ast.ObjTable {
			for _, o := range n.Names {
				if _, ok := cat.Table(o.Name); ok {
					tables = append(tables, o.Name)
				}
			}
		}
	case *ast.CreateTransformationStmt:
		// It changes the target (its group gets an owner), as CREATE
		// INDEX changes its table.
		tag, tables = "CREATE TRANSFORMATION", []string{n.Target.Name}
		var spec catalog.TransformationSpec
		if spec, err = st.transformSpec(n, cat); err == nil {
			fn = createTransformation(spec, n.Target.Pos())
		}
	case *ast.CreateIndexStmt:
		tag, tables = "CREATE INDEX", []string{n.Table.Name}
		if n.IfNotExists {
			if _, ok := cat.Index(n.Name.Name); ok {
				return &Result{Tag: tag}, nil
			}
		}
		var spec catalog.IndexSpec
		if spec, err = indexSpec(n); err == nil {
			fn = func(c *catalog.Catalog, commit uint64) error {
				_, _, err := c.CreateIndex(spec, commit)
				return err
			}
		}
	case *ast.CreatePolicyStmt:
		tag = "CREATE POLICY"
		var spec catalog.PolicySpec
		if spec, err = policySpec(n); err == nil {
			// An object store this server cannot use is refused here, not
			// when the first part would move (outside the commit's lock:
			// the S3 driver reads its configuration).
			if r, ok := catalog.ParseRole(spec.Role); ok && r == catalog.RoleStorage {
				for _, set := range spec.Settings {
					if set.Key != "object_store" || set.Value.Kind != catalog.ValueString {
						continue
					}
					if err := st.s.eng.CheckObjectStore(set.Value.Text); err != nil {
						e := sqlerr.New(sqlerr.CodeFeatureNotSupported, "policy %s: object_store %s: %v", spec.Name, set.Value.Text, err).WithPos(n.Pos())
						if at := strings.Index(st.sql, ast.FormatString(set.Value.Text)); at >= 0 {
							e = e.WithPos(at) // at the value, written as a string
						}
						return nil, e
					}
				}
			}
			if r, ok := catalog.ParseRole(spec.Role); ok && r == catalog.RolePlacement {
				for _, set := range spec.Settings {
					if set.Key != "volumes" {
						continue
					}
					var vols []string
					for _, v := range append([]catalog.Value{set.Value}, set.Value.List...) {
						if v.Kind == catalog.ValueString {
							vols = append(vols, v.Text)
						}
					}
					if err := st.s.eng.CheckVolumes(vols); err != nil {
						return nil, sqlerr.New(sqlerr.CodeInvalidParameter, "policy %s: %v", spec.Name, err).WithPos(n.Pos())
					}
				}
			}
			fn = func(c *catalog.Catalog, commit uint64) error {
				_, _, err := c.CreatePolicy(spec, commit)
				return err
			}
		}
	case *ast.CreateUserStmt:
		tag = "CREATE ROLE"
		spec := catalog.UserSpec{Name: n.Name.Name}
		if n.HasPassword {
			if spec.Verifier, err = scramVerifier(n.Password); err != nil {
				return nil, err
			}
		}
		fn = func(c *catalog.Catalog, commit uint64) error {
			_, err := c.CreateUser(spec, commit)
			return err
		}
	case *ast.AlterUserStmt:
		tag = "ALTER ROLE"
		var v string
		if v, err = scramVerifier(n.Password); err != nil {
			return nil, err
		}
		name := n.Name.Name
		fn = func(c *catalog.Catalog, commit uint64) error { return c.AlterUser(name, v, commit) }
	default:
		return nil, sqlerr.NotSupported(stmt.Pos(), "this statement is not supported")
	}
	if err != nil {
		return nil, err
	}
	seq, err := st.s.eng.Commit(st.ctx, &storage.Txn{Kind: storage.KindDDL, DDL: fn, Tables: tables})
	if err != nil {
		return nil, err
	}
	if _, ok := stmt.(*ast.CreateTransformationStmt); ok {
		runnerFor(st.s.eng).kick() // its first step: the rows already in its sources
	}
	return &Result{Tag: tag, Commit: seq}, nil
}

// typeOf resolves a type name as written.
func typeOf(tn *ast.TypeName) (types.Type, error) {
	params := make([]types.Param, len(tn.Params))
	for i, p := range tn.Params {
		params[i] = types.Param{Int: p.Int, Str: p.Str, IsStr: p.IsStr}
	}
	t, err := types.FromName(tn.Name, params)
	if err != nil {
		return types.Type{}, sqlerr.New(sqlerr.CodeUndefinedObject, "%s", err.Error()).WithPos(tn.Pos())
	}
	if t.Kind == types.Interval {
		// SPEC §2 has no INTERVAL column type: intervals are values of
		// expressions (timestamp arithmetic) only.
		return types.Type{}, sqlerr.New(sqlerr.CodeFeatureNotSupported, "type INTERVAL cannot be a column type").WithPos(tn.Pos()).
			WithHint("store a timestamp, or a number of seconds or days, and compute intervals in queries")
	}
	return t, nil
}

func idents(list []*ast.Ident) []string {
	if len(list) == 0 {
		return nil
	}
	out := make([]string, len(list))
	for i, id := range list {
		out[i] = id.Name
	}
	return out
}

// codecText renders a CODEC(...) list the way catalog.ParseCodec reads it.
func codecText(list []*ast.Codec) string {
	parts := make([]string, len(list))
	for i, c := range list {
		parts[i] = c.Name
		if c.HasLevel {
			parts[i] += "(" + strconv.FormatInt(c.Level, 10) + ")"
		}
	}
	return strings.Join(parts, ", ")
}

// columnSpec converts one column definition, evaluating its DEFAULT.
func (st *statement) columnSpec(d *ast.ColumnDef) (catalog.ColumnSpec, error) {
	t, err := typeOf(d.Type)
	if err != nil {
		return catalog.ColumnSpec{}, err
	}
	if d.Unique && !d.PrimaryKey {
		return catalog.ColumnSpec{}, sqlerr.NotSupported(d.Pos(),
			"UNIQUE on column %s is not supported: a keyed table keeps one row per PRIMARY KEY, which is its only uniqueness", d.Name.Name)
	}
	spec := catalog.ColumnSpec{
		Name:         d.Name.Name,
		Type:         t,
		NotNull:      d.Null == ast.NotNullable,
		ExplicitNull: d.Null == ast.Nullable,
		PrimaryKey:   d.PrimaryKey,
		Codec:        codecText(d.Codecs),
	}
	if d.Default != nil {
		def, err := st.defaultOf(d.Default, t, d.Name.Name)
		if err != nil {
			return catalog.ColumnSpec{}, err
		}
		spec.Default = def
	}
	return spec, nil
}

// defaultOf evaluates a DEFAULT expression once, casts it to the column's
// type and records it as canonical text (catalog.Default); an expression
// that calls a function is marked volatile, evaluated again by each write
// (columnDefault).
func (st *statement) defaultOf(e ast.Expr, t types.Type, column string) (*catalog.Default, error) {
	var sub ast.Node
	ast.Inspect(e, func(n ast.Node) bool {
		switch n.(type) {
		case *ast.SubqueryExpr, *ast.ExistsExpr, *ast.SelectStmt:
			if sub == nil {
				sub = n
			}
			return false
		}
		return sub == nil
	})
	volatile := volatileExpr(e)
	if sub != nil {
		return nil, sqlerr.New(sqlerr.CodeFeatureNotSupported, "cannot use subquery in DEFAULT expression").WithPos(sub.Pos())
	}
	v, err := st.evalConst(e)
	if err != nil {
		return nil, err
	}
	v, err = types.Cast(v, t)
	if err != nil {
		return nil, sqlerr.New(sqlerr.CodeDatatypeMismatch, "DEFAULT of column %s: %s", column, types.WithColumn(err, column).Error()).WithPos(e.Pos())
	}
	d := &catalog.Default{SQL: ast.Format(e), Volatile: volatile}
	if v.IsNull() {
		d.Null = true
	} else {
		d.Value = string(types.AppendText(nil, v))
	}
	return d, nil
}

func (st *statement) tableSpec(n *ast.CreateTableStmt) (catalog.TableSpec, error) {
	if len(n.Uniques) > 0 {
		return catalog.TableSpec{}, sqlerr.NotSupported(n.Pos(),
			"UNIQUE constraints are not supported: a keyed table keeps one row per PRIMARY KEY, which is its only uniqueness")
	}
	if n.Name.Schema != "" && n.Name.Schema != "public" {
		return catalog.TableSpec{}, sqlerr.New("3F000", "tables cannot be created in schema %s", n.Name.Schema).WithPos(n.Name.Pos())
	}
	spec := catalog.TableSpec{
		Name:        n.Name.Name,
		IfNotExists: n.IfNotExists,
		PrimaryKey:  idents(n.PrimaryKey),
		ValidBy:     idents(n.ValidBy),
		RevisionBy:  idents(n.RevisionBy),
		ShardBy:     idents(n.ShardBy),
		OrderBy:     idents(n.OrderBy),
		Policies:    idents(n.Policies),
	}
	switch n.Mode {
	case ast.ModeAppend:
		spec.Mode = catalog.ModeAppend
	case ast.ModeUpsert:
		spec.Mode = catalog.ModeUpsert
	case ast.ModeVersioned:
		spec.Mode = catalog.ModeVersioned
	}
	if n.Shards != nil {
		spec.ShardsAuto = n.Shards.Auto
		if !n.Shards.Auto {
			if n.Shards.N <= 0 || n.Shards.N > catalog.MaxShards {
				return spec, sqlerr.New(sqlerr.CodeInvalidParameter, "SHARDS must be between 1 and %d, got %d", catalog.MaxShards, n.Shards.N).WithPos(n.Shards.Pos())
			}
			spec.Shards = int(n.Shards.N)
		}
	}
	for _, d := range n.Columns {
		c, err := st.columnSpec(d)
		if err != nil {
			return spec, err
		}
		spec.Columns = append(spec.Columns, c)
	}
	for _, g := range n.Groups {
		spec.Groups = append(spec.Groups, catalog.GroupSpec{Name: g.Name.Name, Columns: idents(g.Columns),
			ValidBy: idents(g.ValidBy), RevisionBy: idents(g.RevisionBy)})
	}
	return spec, nil
}

// alterTable converts every action of an ALTER TABLE; they apply in order
// inside one DDL function, so the statement is atomic.
func (st *statement) alterTable(n *ast.AlterTableStmt, cat *catalog.Catalog) (func(*catalog.Catalog, uint64) error, error) {
	name := n.Table.Name
	tab, ok := cat.Table(name)
	if !ok {
		if _, isView := cat.View(name); isView {
			return nil, sqlerr.NotSupported(n.Table.Pos(), "ALTER TABLE on view %s: a view is changed with CREATE OR REPLACE VIEW", name)
		}
		return nil, sqlerr.UndefinedTable(n.Table.Pos(), name)
	}
	var steps []func(c *catalog.Catalog, commit uint64) error
	for _, cmd := range n.Cmds {
		var step func(c *catalog.Catalog, commit uint64) error
		switch a := cmd.(type) {
		case *ast.AddColumn:
			col, err := st.columnSpec(a.Column)
			if err != nil {
				return nil, err
			}
			spec := catalog.AddColumnSpec{Table: name, Column: col, KnownEmpty: st.neverHeldRows(tab)}
			if a.Group != nil {
				spec.Group = a.Group.Name
			}
			step = func(c *catalog.Catalog, commit uint64) error {
				spec.Table = currentName(c, tab.ID, name)
				_, err := c.AddColumn(spec, commit)
				return err
			}
		case *ast.AddGroup:
			g := a.Group
			spec := catalog.AddGroupSpec{Table: name, Name: g.Name.Name, ValidBy: idents(g.ValidBy), RevisionBy: idents(g.RevisionBy)}
			for _, d := range g.ColumnDefs {
				col, err := st.columnSpec(d)
				if err != nil {
					return nil, err
				}
				spec.Columns = append(spec.Columns, col)
			}
			step = func(c *catalog.Catalog, commit uint64) error {
				spec.Table = currentName(c, tab.ID, name)
				_, err := c.AddGroup(spec, commit)
				return err
			}
		case *ast.DropColumn:
			col, ifExists := a.Name.Name, a.IfExists
			step = func(c *catalog.Catalog, commit uint64) error {
				t := currentName(c, tab.ID, name)
				if ifExists {
					if ct, ok := c.Table(t); ok {
						if _, has := ct.Column(col); !has {
							return nil
						}
					}
				}
				_, err := c.DropColumn(catalog.DropColumnSpec{Table: t, Column: col}, commit)
				return err
			}
		case *ast.RenameColumn:
			old, nw := a.Old.Name, a.New.Name
			step = func(c *catalog.Catalog, commit uint64) error {
				_, err := c.RenameColumn(catalog.RenameColumnSpec{Table: currentName(c, tab.ID, name), Old: old, New: nw}, commit)
				return err
			}
		case *ast.RenameTable:
			nw := a.New.Name
			step = func(c *catalog.Catalog, commit uint64) error {
				_, err := c.RenameTable(catalog.RenameTableSpec{Table: currentName(c, tab.ID, name), New: nw, Rewrite: renameTableIn}, commit)
				return err
			}
		case *ast.SetDefault:
			col, ok := tab.Column(a.Column.Name)
			if !ok {
				return nil, sqlerr.UndefinedColumn(a.Column.Pos(), a.Column.Name)
			}
			def, err := st.defaultOf(a.Expr, col.Type, col.Name)
			if err != nil {
				return nil, err
			}
			colName, typ := col.Name, col.Type
			step = func(c *catalog.Catalog, commit uint64) error {
				t := currentName(c, tab.ID, name)
				if ct, ok := c.Table(t); ok {
					if cc, ok := ct.Column(colName); ok && cc.Type != typ {
						return sqlerr.New("40001", "column %s changed type while its DEFAULT was evaluated; retry", colName)
					}
				}
				_, err := c.SetDefault(catalog.SetDefaultSpec{Table: t, Column: colName, Default: *def}, commit)
				return err
			}
		case *ast.DropDefault:
			col := a.Column.Name
			step = func(c *catalog.Catalog, commit uint64) error {
				_, err := c.DropDefault(catalog.DropDefaultSpec{Table: currentName(c, tab.ID, name), Column: col}, commit)
				return err
			}
		case *ast.AlterColumnType:
			t, err := typeOf(a.Type)
			if err != nil {
				return nil, err
			}
			col := a.Column.Name
			step = func(c *catalog.Catalog, commit uint64) error {
				_, err := c.AlterColumnType(catalog.AlterColumnTypeSpec{Table: currentName(c, tab.ID, name), Column: col, Type: t}, commit)
				return err
			}
		case *ast.SetPolicy:
			pols := idents(a.Policies)
			step = func(c *catalog.Catalog, commit uint64) error {
				_, err := c.SetPolicy(catalog.SetPolicySpec{Table: currentName(c, tab.ID, name), Policies: pols}, commit)
				return err
			}
		default:
			return nil, sqlerr.NotSupported(cmd.Pos(), "this ALTER TABLE action is not supported")
		}
		steps = append(steps, step)
	}
	return func(c *catalog.Catalog, commit uint64) error {
		for _, step := range steps {
			if err := step(c, commit); err != nil {
				return err
			}
		}
		return nil
	}, nil
}

// currentName returns the name table id has in c: an earlier RENAME TO of
// the same ALTER TABLE (or a concurrent one) may have changed it.
func currentName(c *catalog.Catalog, id catalog.TableID, fallback string) string {
	if t, ok := c.TableByID(id); ok {
		return t.Name
	}
	return fallback
}

// neverHeldRows reports whether the table has stored nothing at any commit
// (catalog.AddColumnSpec.KnownEmpty): every retained version and append row
// is counted by Shards, and the memtables never drop an entry.
func (st *statement) neverHeldRows(t *catalog.Table) bool {
	for _, sh := range st.snapshot().Shards(t.ID) {
		if sh.Rows > 0 {
			return false
		}
	}
	return true
}

// drop converts DROP …; fn is nil when IF EXISTS leaves nothing to do.
func (st *statement) drop(n *ast.DropStmt, cat *catalog.Catalog) (string, func(*catalog.Catalog, uint64) error) {
	kinds := map[ast.ObjectKind]string{ast.ObjTable: "TABLE", ast.ObjIndex: "INDEX", ast.ObjPolicy: "POLICY",
		ast.ObjTransformation: "TRANSFORMATION", ast.ObjUser: "ROLE", ast.ObjView: "VIEW"}
	tag := "DROP " + kinds[n.Kind]
	var names []string
	for _, o := range n.Names {
		exists := true
		switch n.Kind {
		case ast.ObjTable:
			_, exists = cat.Table(o.Name)
		case ast.ObjIndex:
			_, exists = cat.Index(o.Name)
		case ast.ObjPolicy:
			_, exists = cat.Policy(o.Name)
		case ast.ObjTransformation:
			_, exists = cat.Transformation(o.Name)
		case ast.ObjUser:
			_, exists = cat.User(o.Name)
		case ast.ObjView:
			_, exists = cat.View(o.Name)
		}
		if exists || !n.IfExists {
			names = append(names, o.Name)
		}
	}
	if len(names) == 0 {
		return tag, nil
	}
	kind, ifExists := n.Kind, n.IfExists
	return tag, func(c *catalog.Catalog, commit uint64) error {
		for _, name := range names {
			var err error
			switch kind {
			case ast.ObjTable:
				_, err = c.DropTable(name, ifExists, commit)
			case ast.ObjIndex:
				_, err = c.DropIndex(name, ifExists, commit)
			case ast.ObjPolicy:
				_, err = c.DropPolicy(name, ifExists, commit)
			case ast.ObjTransformation:
				_, err = c.DropTransformation(name, ifExists, commit)
			case ast.ObjUser:
				_, err = c.DropUser(name, ifExists, commit)
			case ast.ObjView:
				_, err = c.DropView(name, ifExists, commit)
			}
			if err != nil {
				return err
			}
		}
		return nil
	}
}

func indexSpec(n *ast.CreateIndexStmt) (catalog.IndexSpec, error) {
	if n.Unique {
		return catalog.IndexSpec{}, sqlerr.NotSupported(n.Pos(), "UNIQUE indexes are not supported: an index never changes a result (R10.2)")
	}
	spec := catalog.IndexSpec{Name: n.Name.Name, IfNotExists: n.IfNotExists, Table: n.Table.Name}
	for _, c := range n.Columns {
		spec.Columns = append(spec.Columns, c.Name.Name)
	}
	switch n.Scope {
	case ast.ScopeCurrent:
		spec.Scope = "current"
	case ast.ScopeHistory:
		spec.Scope = "history"
	case ast.ScopeBoth:
		spec.Scope = "both"
	}
	if len(n.Policies) > 1 {
		return spec, sqlerr.New(sqlerr.CodeInvalidDefinition, "an index takes one POLICY, got %d", len(n.Policies)).WithPos(n.Policies[1].Pos())
	}
	if len(n.Policies) == 1 {
		spec.Policy = n.Policies[0].Name
	}
	return spec, nil
}

func policySpec(n *ast.CreatePolicyStmt) (catalog.PolicySpec, error) {
	spec := catalog.PolicySpec{Name: n.Name.Name, Role: n.Role.Name}
	for _, s := range n.Settings {
		v, err := policyValue(s.Value)
		if err != nil {
			return spec, err
		}
		spec.Settings = append(spec.Settings, catalog.SettingSpec{Key: s.Key.Name, Value: v})
	}
	return spec, nil
}

// policyValue converts a setting's value as written (R9.2).
func policyValue(e ast.Expr) (catalog.Value, error) {
	switch v := e.(type) {
	case *ast.StringLit:
		return catalog.Value{Kind: catalog.ValueString, Text: v.Value}, nil
	case *ast.IntervalLit:
		return catalog.Value{Kind: catalog.ValueInterval, Text: v.Value}, nil
	case *ast.ColumnRef:
		if v.Table == "" {
			return catalog.Value{Kind: catalog.ValueIdent, Text: v.Name}, nil
		}
	case *ast.NumberLit:
		n, err := strconv.ParseInt(v.Text, 10, 64)
		if err == nil {
			return catalog.Value{Kind: catalog.ValueInteger, Int: n}, nil
		}
	case *ast.UnaryExpr:
		if num, ok := v.X.(*ast.NumberLit); ok && v.Op == token.MINUS {
			n, err := strconv.ParseInt("-"+num.Text, 10, 64)
			if err == nil {
				return catalog.Value{Kind: catalog.ValueInteger, Int: n}, nil
			}
		}
	case *ast.ParenExpr:
		inner, err := policyValue(v.X)
		if err != nil {
			return inner, err
		}
		return catalog.Value{Kind: catalog.ValueList, List: []catalog.Value{inner}}, nil
	case *ast.TupleExpr:
		list := catalog.Value{Kind: catalog.ValueList}
		for _, it := range v.Items {
			x, err := policyValue(it)
			if err != nil {
				return x, err
			}
			list.List = append(list.List, x)
		}
		return list, nil
	}
	return catalog.Value{}, sqlerr.New(sqlerr.CodeInvalidParameter,
		"a policy setting takes a string, an integer, an INTERVAL, a column name or a list, got %s", ast.Format(e)).WithPos(e.Pos())
}
