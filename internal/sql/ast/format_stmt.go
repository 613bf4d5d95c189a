package ast

import (
	"strconv"
	"strings"
)

// sets prints the assignments of a SET list.
func (p *printer) sets(list []*SetClause) {
	for i, c := range list {
		if i > 0 {
			p.str(", ")
		}
		p.ident(c.Column.Name)
		p.str(" = ")
		p.expr(c.Value, 0)
	}
}

func (p *printer) stmt(s Stmt) {
	switch s := s.(type) {
	case *SelectStmt:
		p.selectStmt(s)
	case *InsertStmt:
		if s.With != nil {
			p.with(s.With)
			p.str(" ")
		}
		if s.Upsert {
			p.str("UPSERT INTO ")
		} else {
			p.str("INSERT INTO ")
		}
		p.objectName(s.Table)
		if s.Alias != nil {
			p.str(" AS ")
			p.ident(s.Alias.Name)
		}
		if s.Columns != nil {
			p.str(" ")
			p.parenIdents(s.Columns)
		}
		p.str(" ")
		p.selectStmt(s.Source)
		if s.Group != nil {
			p.str(" ATTRIBUTE GROUP ")
			p.ident(s.Group.Name)
		}
		if c := s.OnConflict; c != nil {
			p.str(" ON CONFLICT")
			if c.Target != nil {
				p.str(" ")
				p.parenIdents(c.Target)
			}
			if c.Constraint != nil {
				p.str(" ON CONSTRAINT ")
				p.ident(c.Constraint.Name)
			}
			if !c.Update {
				p.str(" DO NOTHING")
			} else {
				p.str(" DO UPDATE SET ")
				p.sets(c.Sets)
				p.where(c.Where)
			}
		}
		p.returning(s.Returning)
	case *UpdateStmt:
		if s.With != nil {
			p.with(s.With)
			p.str(" ")
		}
		p.str("UPDATE ")
		p.objectName(s.Table)
		if s.Alias != nil {
			p.str(" AS ")
			p.ident(s.Alias.Name)
		}
		p.str(" SET ")
		p.sets(s.Sets)
		p.tables(" FROM ", s.From)
		p.where(s.Where)
		p.returning(s.Returning)
	case *DeleteStmt:
		if s.With != nil {
			p.with(s.With)
			p.str(" ")
		}
		p.str("DELETE FROM ")
		p.objectName(s.Table)
		if s.Alias != nil {
			p.str(" AS ")
			p.ident(s.Alias.Name)
		}
		p.tables(" USING ", s.Using)
		p.where(s.Where)
		p.returning(s.Returning)
	case *CreateTableStmt:
		p.createTable(s)
	case *AlterTableStmt:
		p.str("ALTER TABLE ")
		p.objectName(s.Table)
		for i, c := range s.Cmds {
			if i > 0 {
				p.str(",")
			}
			p.str(" ")
			p.alterCmd(c)
		}
	case *DropStmt:
		p.str("DROP " + objectKindNames[s.Kind] + " ")
		if s.IfExists {
			p.str("IF EXISTS ")
		}
		for i, n := range s.Names {
			if i > 0 {
				p.str(", ")
			}
			p.objectName(n)
		}
	case *CreateIndexStmt:
		p.createIndex(s)
	case *CreatePolicyStmt:
		p.str("CREATE POLICY ")
		p.ident(s.Name.Name)
		p.str(" FOR ")
		p.ident(s.Role.Name)
		p.str(" (")
		for i, st := range s.Settings {
			if i > 0 {
				p.str(", ")
			}
			p.ident(st.Key.Name)
			p.str(" = ")
			p.expr(st.Value, 0)
		}
		p.str(")")
	case *CreateTransformationStmt:
		p.str("CREATE TRANSFORMATION ")
		p.ident(s.Name.Name)
		p.str(" INTO ")
		p.objectName(s.Target)
		if s.Group != nil {
			p.str(" ATTRIBUTE GROUP ")
			p.ident(s.Group.Name)
		}
		p.str(" AS ")
		p.selectStmt(s.Query)
	case *CreateViewStmt:
		p.str("CREATE ")
		if s.OrReplace {
			p.str("OR REPLACE ")
		}
		p.str("VIEW ")
		if s.IfNotExists {
			p.str("IF NOT EXISTS ")
		}
		p.objectName(s.Name)
		if len(s.Columns) > 0 {
			p.str(" (")
			for i, c := range s.Columns {
				if i > 0 {
					p.str(", ")
				}
				p.ident(c.Name)
			}
			p.str(")")
		}
		p.str(" AS ")
		p.selectStmt(s.Query)
	case *SyncTransformationsStmt:
		p.str("SYNC TRANSFORMATIONS")
	case *CheckpointStmt:
		p.str("CHECKPOINT")
	case *CreateUserStmt:
		p.str("CREATE USER ")
		p.ident(s.Name.Name)
		if s.HasPassword {
			p.str(" WITH PASSWORD " + FormatString(s.Password))
		}
	case *AlterUserStmt:
		p.str("ALTER USER ")
		p.ident(s.Name.Name)
		p.str(" WITH PASSWORD " + FormatString(s.Password))
	case *TransactionStmt:
		p.str([...]string{TxBegin: "BEGIN", TxCommit: "COMMIT", TxRollback: "ROLLBACK",
			TxSavepoint: "SAVEPOINT ", TxRelease: "RELEASE SAVEPOINT ", TxRollbackTo: "ROLLBACK TO SAVEPOINT "}[s.Kind])
		if s.Name != nil {
			p.ident(s.Name.Name)
		}
		if s.Modes != nil {
			p.txModes(s.Modes)
		}
	case *SetTransactionStmt:
		if s.Session {
			p.str("SET SESSION CHARACTERISTICS AS TRANSACTION")
		} else {
			p.str("SET TRANSACTION")
		}
		p.txModes(&s.Modes)
	case *ExplainStmt:
		p.str("EXPLAIN ")
		if s.Analyze {
			p.str("ANALYZE ")
		}
		p.stmt(s.Stmt)
	case *ShowTablesStmt:
		p.str("SHOW TABLES")
	case *ShowCreateTableStmt:
		p.str("SHOW CREATE TABLE ")
		p.objectName(s.Table)
	case *DescribeStmt:
		p.str("DESCRIBE ")
		p.objectName(s.Table)
	case *SetStmt:
		p.str("SET ")
		if s.Local {
			p.str("LOCAL ")
		}
		p.settingName(s.Name)
		p.str(" = ")
		if s.Default {
			p.str("DEFAULT")
		} else {
			p.exprs(s.Values)
		}
	case *ShowStmt:
		p.str("SHOW ")
		if s.All {
			p.str("ALL")
		} else {
			p.settingName(s.Name)
		}
	case *ResetStmt:
		p.str("RESET ")
		if s.All {
			p.str("ALL")
		} else {
			p.settingName(s.Name)
		}
	default:
		p.str("/* unprintable statement */")
	}
}

var objectKindNames = [...]string{
	ObjTable: "TABLE", ObjIndex: "INDEX", ObjPolicy: "POLICY",
	ObjTransformation: "TRANSFORMATION", ObjUser: "USER", ObjView: "VIEW",
}

// settingName prints a dotted setting name, quoting each part as needed.
func (p *printer) settingName(name string) {
	for i, part := range strings.Split(name, ".") {
		if i > 0 {
			p.str(".")
		}
		p.ident(part)
	}
}

func (p *printer) returning(items []*SelectItem) {
	if items == nil {
		return
	}
	p.str(" RETURNING ")
	for i, it := range items {
		if i > 0 {
			p.str(", ")
		}
		p.selectItem(it)
	}
}

// tables writes kw and the FROM items of UPDATE … FROM or DELETE … USING.
func (p *printer) tables(kw string, list []TableExpr) {
	for i, t := range list {
		if i == 0 {
			p.str(kw)
		} else {
			p.str(", ")
		}
		p.table(t)
	}
}

func (p *printer) where(e Expr) {
	if e != nil {
		p.str(" WHERE ")
		p.expr(e, 0)
	}
}

func (p *printer) createTable(s *CreateTableStmt) {
	p.str("CREATE TABLE ")
	if s.IfNotExists {
		p.str("IF NOT EXISTS ")
	}
	p.objectName(s.Name)
	p.str(" (")
	sep := ""
	for _, c := range s.Columns {
		p.str(sep)
		sep = ", "
		p.columnDef(c)
	}
	if s.PrimaryKey != nil {
		p.str(sep + "PRIMARY KEY ")
		sep = ", "
		p.parenIdents(s.PrimaryKey)
	}
	for _, u := range s.Uniques {
		p.str(sep + "UNIQUE ")
		sep = ", "
		p.parenIdents(u)
	}
	for _, g := range s.Groups {
		p.str(sep)
		sep = ", "
		p.group(g)
	}
	p.str(")")
	switch s.Mode {
	case ModeAppend:
		p.str(" MODE APPEND")
	case ModeUpsert:
		p.str(" MODE UPSERT")
	case ModeVersioned:
		p.str(" MODE VERSIONED")
	}
	p.ordering(s.ValidBy, s.RevisionBy)
	if s.ShardBy != nil {
		p.str(" SHARD BY ")
		p.parenIdents(s.ShardBy)
	}
	if s.Shards != nil {
		if s.Shards.Auto {
			p.str(" SHARDS AUTO")
		} else {
			p.str(" SHARDS " + strconv.FormatInt(s.Shards.N, 10))
		}
	}
	if s.OrderBy != nil {
		p.str(" ORDER BY ")
		p.parenIdents(s.OrderBy)
	}
	p.policies(s.Policies)
}

func (p *printer) ordering(valid, revision []*Ident) {
	if valid != nil {
		p.str(" VALID BY ")
		p.parenIdents(valid)
	}
	if revision != nil {
		p.str(" REVISION BY ")
		p.parenIdents(revision)
	}
}

func (p *printer) policies(list []*Ident) {
	if list != nil {
		p.str(" POLICY ")
		p.idents(list)
	}
}

func (p *printer) group(g *AttributeGroupDef) {
	p.str("ATTRIBUTE GROUP ")
	p.ident(g.Name.Name)
	p.str(" (")
	if g.ColumnDefs != nil {
		for i, c := range g.ColumnDefs {
			if i > 0 {
				p.str(", ")
			}
			p.columnDef(c)
		}
	} else {
		p.idents(g.Columns)
	}
	p.str(")")
	p.ordering(g.ValidBy, g.RevisionBy)
}

func (p *printer) columnDef(c *ColumnDef) {
	p.ident(c.Name.Name)
	p.str(" ")
	p.typeName(c.Type)
	switch c.Null {
	case Nullable:
		p.str(" NULL")
	case NotNullable:
		p.str(" NOT NULL")
	}
	if c.Default != nil {
		p.str(" DEFAULT ")
		p.expr(c.Default, 0)
	}
	if c.PrimaryKey {
		p.str(" PRIMARY KEY")
	}
	if c.Unique {
		p.str(" UNIQUE")
	}
	if c.Codecs != nil {
		p.str(" CODEC(")
		for i, k := range c.Codecs {
			if i > 0 {
				p.str(", ")
			}
			if isBareTypeName(k.Name) {
				p.str(k.Name)
			} else {
				p.ident(k.Name)
			}
			if k.HasLevel {
				p.str("(" + strconv.FormatInt(k.Level, 10) + ")")
			}
		}
		p.str(")")
	}
}

func (p *printer) alterCmd(c AlterCmd) {
	switch c := c.(type) {
	case *AddColumn:
		p.str("ADD COLUMN ")
		p.columnDef(c.Column)
		if c.Group != nil {
			p.str(" TO ATTRIBUTE GROUP ")
			p.ident(c.Group.Name)
		}
	case *AddGroup:
		p.str("ADD ")
		p.group(c.Group)
	case *DropColumn:
		p.str("DROP COLUMN ")
		if c.IfExists {
			p.str("IF EXISTS ")
		}
		p.ident(c.Name.Name)
	case *RenameColumn:
		p.str("RENAME COLUMN ")
		p.ident(c.Old.Name)
		p.str(" TO ")
		p.ident(c.New.Name)
	case *RenameTable:
		p.str("RENAME TO ")
		p.ident(c.New.Name)
	case *SetDefault:
		p.str("ALTER COLUMN ")
		p.ident(c.Column.Name)
		p.str(" SET DEFAULT ")
		p.expr(c.Expr, 0)
	case *DropDefault:
		p.str("ALTER COLUMN ")
		p.ident(c.Column.Name)
		p.str(" DROP DEFAULT")
	case *AlterColumnType:
		p.str("ALTER COLUMN ")
		p.ident(c.Column.Name)
		p.str(" TYPE ")
		p.typeName(c.Type)
	case *SetPolicy:
		p.str("SET POLICY ")
		p.idents(c.Policies)
	}
}

func (p *printer) createIndex(s *CreateIndexStmt) {
	p.str("CREATE ")
	if s.Unique {
		p.str("UNIQUE ")
	}
	p.str("INDEX ")
	if s.IfNotExists {
		p.str("IF NOT EXISTS ")
	}
	p.ident(s.Name.Name)
	p.str(" ON ")
	p.objectName(s.Table)
	p.str(" (")
	for i, c := range s.Columns {
		if i > 0 {
			p.str(", ")
		}
		p.ident(c.Name.Name)
		if c.Desc {
			p.str(" DESC")
		}
	}
	p.str(")")
	switch s.Scope {
	case ScopeCurrent:
		p.str(" SCOPE CURRENT")
	case ScopeHistory:
		p.str(" SCOPE HISTORY")
	case ScopeBoth:
		p.str(" SCOPE BOTH")
	}
	p.policies(s.Policies)
}

// txModes prints transaction modes after BEGIN or SET TRANSACTION, each
// preceded by a space and separated by commas.
func (p *printer) txModes(m *TxModes) {
	sep := " "
	put := func(s string) {
		p.str(sep + s)
		sep = ", "
	}
	if m.Isolation != "" {
		put("ISOLATION LEVEL " + strings.ToUpper(m.Isolation))
	}
	switch m.Access {
	case TxOn:
		put("READ ONLY")
	case TxOff:
		put("READ WRITE")
	}
	switch m.Deferrable {
	case TxOn:
		put("DEFERRABLE")
	case TxOff:
		put("NOT DEFERRABLE")
	}
}
