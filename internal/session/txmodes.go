package session

import (
	"strings"

	"github.com/strata-db/strata/internal/sql/ast"
	"github.com/strata-db/strata/internal/sqlerr"
)

// Transaction modes (BEGIN …, SET TRANSACTION, SET SESSION CHARACTERISTICS
// AS TRANSACTION). A Strata transaction is its statements' writes buffered
// and made one commit at COMMIT (R5.1), so every isolation level behaves
// the same way and is only recorded (docs/pg-catalog.md says what that
// way is). READ ONLY changes what Strata does: a write inside it is
// refused with 25006, as PostgreSQL refuses it. DEFERRABLE is recorded.
//
// The modes live in the settings PostgreSQL shows them in:
// transaction_isolation, transaction_read_only and transaction_deferrable
// are the open transaction's (the defaults' values outside one), and the
// default_transaction_* ones are what the next BEGIN starts with.

// txSettings maps each transaction setting to the default it starts from.
var txSettings = map[string]string{
	"transaction_isolation":  "default_transaction_isolation",
	"transaction_read_only":  "default_transaction_read_only",
	"transaction_deferrable": "default_transaction_deferrable",
}

// beginModes starts the open transaction's modes from the defaults and
// applies BEGIN's own.
func (s *Session) beginModes(m *ast.TxModes) {
	for cur, def := range txSettings {
		s.settings.values[cur] = s.settings.values[def]
	}
	if m != nil {
		s.applyModes(*m, false)
	}
}

// endModes puts the transaction settings back to the defaults at COMMIT or
// ROLLBACK.
func (s *Session) endModes() {
	for cur, def := range txSettings {
		s.settings.values[cur] = s.settings.values[def]
	}
}

// applyModes records m on the open transaction (defaults false) or on the
// session's defaults.
func (s *Session) applyModes(m ast.TxModes, defaults bool) {
	prefix := ""
	if defaults {
		prefix = "default_"
	}
	if m.Isolation != "" {
		s.settings.values[prefix+"transaction_isolation"] = m.Isolation
	}
	if m.Access != ast.TxUnset {
		s.settings.values[prefix+"transaction_read_only"] = onOff(m.Access == ast.TxOn)
	}
	if m.Deferrable != ast.TxUnset {
		s.settings.values[prefix+"transaction_deferrable"] = onOff(m.Deferrable == ast.TxOn)
	}
	if defaults && s.tx == nil {
		s.endModes()
	}
}

func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}

// setTransaction runs SET TRANSACTION and SET SESSION CHARACTERISTICS AS
// TRANSACTION.
func (s *Session) setTransaction(n *ast.SetTransactionStmt) (*Result, error) {
	if n.Session {
		s.applyModes(n.Modes, true)
		return &Result{Tag: "SET"}, nil
	}
	if s.tx == nil {
		// PostgreSQL warns that SET TRANSACTION outside a transaction
		// block has no effect, and succeeds.
		return &Result{Tag: "SET"}, nil
	}
	if err := s.checkModeChange(n.Modes, n.Pos()); err != nil {
		return nil, err
	}
	s.applyModes(n.Modes, false)
	return &Result{Tag: "SET"}, nil
}

// checkModeChange refuses, as PostgreSQL does, a change of isolation level
// or a switch to READ WRITE once the transaction has run a statement: the
// statements before it ran under the old modes.
func (s *Session) checkModeChange(m ast.TxModes, pos int) error {
	if !s.tx.ran {
		return nil
	}
	if m.Isolation != "" && m.Isolation != s.settings.values["transaction_isolation"] {
		return sqlerr.New("25001", "SET TRANSACTION ISOLATION LEVEL must be called before any query").WithPos(pos)
	}
	if m.Access == ast.TxOff && s.settings.values["transaction_read_only"] == "on" {
		return sqlerr.New("25001", "transaction read-write mode must be set before any query").WithPos(pos)
	}
	return nil
}

// setTxSetting runs SET transaction_isolation / transaction_read_only /
// transaction_deferrable = value, which PostgreSQL treats as SET
// TRANSACTION, and SET of their defaults, whose values it checks.
func (s *Session) setTxSetting(name, value string, pos int) (*Result, bool, error) {
	base := strings.TrimPrefix(name, "default_")
	if _, ok := txSettings[base]; !ok {
		return nil, false, nil
	}
	var m ast.TxModes
	v := strings.ToLower(strings.TrimSpace(value))
	if base == "transaction_isolation" {
		switch v {
		case "serializable", "repeatable read", "read committed", "read uncommitted":
			m.Isolation = v
		default:
			return nil, true, sqlerr.New(sqlerr.CodeInvalidParameter, "invalid value for parameter %q: %q", name, value).WithPos(pos).
				WithHint("Available values: serializable, repeatable read, read committed, read uncommitted.")
		}
	} else {
		b, ok := parseBool(v)
		if !ok {
			return nil, true, sqlerr.New(sqlerr.CodeInvalidParameter, "parameter %q requires a Boolean value", name).WithPos(pos)
		}
		t := ast.TxOff
		if b {
			t = ast.TxOn
		}
		if base == "transaction_read_only" {
			m.Access = t
		} else {
			m.Deferrable = t
		}
	}
	if name != base {
		s.applyModes(m, true)
		return &Result{Tag: "SET"}, true, nil
	}
	if s.tx == nil {
		return &Result{Tag: "SET"}, true, nil
	}
	if err := s.checkModeChange(m, pos); err != nil {
		return nil, true, err
	}
	s.applyModes(m, false)
	return &Result{Tag: "SET"}, true, nil
}

// parseBool reads a PostgreSQL Boolean setting value.
func parseBool(v string) (bool, bool) {
	switch v {
	case "on", "true", "yes", "1", "t", "y":
		return true, true
	case "off", "false", "no", "0", "f", "n":
		return false, true
	}
	return false, false
}

// readOnlyNow reports whether a write now must be refused: inside a READ
// ONLY transaction, or outside one while default_transaction_read_only is
// on (each statement is then its own read-only transaction).
func (s *Session) readOnlyNow() bool {
	if s.tx != nil {
		return s.settings.values["transaction_read_only"] == "on"
	}
	return s.settings.values["default_transaction_read_only"] == "on"
}

// checkWritable refuses a write statement or DDL in a read-only
// transaction with PostgreSQL's 25006 and its message, naming the command.
func (s *Session) checkWritable(stmt ast.Stmt, sql string) error {
	if !s.readOnlyNow() {
		return nil
	}
	if w := writingWith(stmt); w != nil {
		if _, isQuery := stmt.(*ast.SelectStmt); isQuery {
			// The first data-modifying definition names the refusal.
			for _, c := range w.CTEs {
				if c.Write != nil {
					return sqlerr.New("25006", "cannot execute %s in a read-only transaction", commandName(c.Write, sql)).WithPos(c.Write.Pos())
				}
			}
		}
	}
	switch stmt.(type) {
	case *ast.SelectStmt, *ast.ExplainStmt, *ast.TransactionStmt, *ast.SetStmt, *ast.SetTransactionStmt,
		*ast.ShowStmt, *ast.ResetStmt, *ast.ShowTablesStmt, *ast.DescribeStmt, *ast.ShowCreateTableStmt,
		*ast.CheckpointStmt:
		// CHECKPOINT changes no row and takes no commit (it only rewrites
		// how the data is laid out), so a read-only transaction may run
		// it, as PostgreSQL counts its CHECKPOINT read-only.
		return nil
	}
	return sqlerr.New("25006", "cannot execute %s in a read-only transaction", commandName(stmt, sql)).WithPos(stmt.Pos())
}

// commandName is the command a statement's text starts with, as
// PostgreSQL names it in messages: INSERT, UPDATE, CREATE TABLE, ….
func commandName(stmt ast.Stmt, sql string) string {
	switch stmt.(type) {
	case *ast.InsertStmt:
		// UPSERT INTO names itself; INSERT INTO is INSERT.
		if w := firstWords(stmt, sql, 1); w == "UPSERT" {
			return w
		}
		return "INSERT"
	case *ast.UpdateStmt:
		return "UPDATE"
	case *ast.DeleteStmt:
		return "DELETE"
	}
	return firstWords(stmt, sql, 2)
}

// firstWords returns the first n words of the statement's text, upper case.
func firstWords(stmt ast.Stmt, sql string, n int) string {
	start, stop := stmt.Pos(), stmt.End()
	if start < 0 || stop > len(sql) || start > stop {
		return "this statement"
	}
	f := strings.Fields(sql[start:stop])
	if len(f) > n {
		f = f[:n]
	}
	return strings.ToUpper(strings.Join(f, " "))
}
