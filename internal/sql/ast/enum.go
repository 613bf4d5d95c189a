package ast

// String methods for the enumerations, so that Dump and error messages
// show words rather than numbers.

// String returns the IsKind's SQL spelling.
func (k IsKind) String() string {
	return pick(int(k), "NULL", "TRUE", "FALSE", "UNKNOWN", "DISTINCT FROM")
}

// String returns the SetOpKind's SQL spelling.
func (k SetOpKind) String() string { return pick(int(k), "UNION", "INTERSECT", "EXCEPT") }

// String returns the NullsOrder's SQL spelling.
func (n NullsOrder) String() string { return pick(int(n), "DEFAULT", "FIRST", "LAST") }

// String returns the AsOfKind's SQL spelling.
func (k AsOfKind) String() string { return pick(int(k), "COMMIT", "TIMESTAMP") }

// String returns the JoinKind's SQL spelling.
func (k JoinKind) String() string { return pick(int(k), "INNER", "LEFT", "RIGHT", "FULL", "CROSS") }

// String returns the TableMode's SQL spelling.
func (m TableMode) String() string { return pick(int(m), "DEFAULT", "APPEND", "UPSERT", "VERSIONED") }

// String returns the NullSpec's SQL spelling.
func (n NullSpec) String() string { return pick(int(n), "DEFAULT", "NULL", "NOT NULL") }

// String returns the ObjectKind's SQL spelling.
func (k ObjectKind) String() string {
	return pick(int(k), "TABLE", "INDEX", "POLICY", "TRANSFORMATION", "USER", "VIEW")
}

// String returns the IndexScope's SQL spelling.
func (s IndexScope) String() string { return pick(int(s), "DEFAULT", "CURRENT", "HISTORY", "BOTH") }

// String returns the TxKind's SQL spelling.
func (k TxKind) String() string {
	return pick(int(k), "BEGIN", "COMMIT", "ROLLBACK", "SAVEPOINT", "RELEASE", "ROLLBACK TO")
}

func pick(i int, names ...string) string {
	if i >= 0 && i < len(names) {
		return names[i]
	}
	return "?"
}
