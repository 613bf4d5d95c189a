package ast

// String methods for the enumerations, so that Dump and error messages
// show words rather than numbers.

func (k IsKind) String() string {
	return pick(int(k), "NULL", "TRUE", "FALSE", "UNKNOWN", "DISTINCT FROM")
}

func (k SetOpKind) String() string { return pick(int(k), "UNION", "INTERSECT", "EXCEPT") }

func (n NullsOrder) String() string { return pick(int(n), "DEFAULT", "FIRST", "LAST") }

func (k AsOfKind) String() string { return pick(int(k), "COMMIT", "TIMESTAMP") }

func (k JoinKind) String() string { return pick(int(k), "INNER", "LEFT", "RIGHT", "FULL", "CROSS") }

func (m TableMode) String() string { return pick(int(m), "DEFAULT", "APPEND", "UPSERT", "VERSIONED") }

func (n NullSpec) String() string { return pick(int(n), "DEFAULT", "NULL", "NOT NULL") }

func (k ObjectKind) String() string {
	return pick(int(k), "TABLE", "INDEX", "POLICY", "TRANSFORMATION", "USER")
}

func (s IndexScope) String() string { return pick(int(s), "DEFAULT", "CURRENT", "HISTORY", "BOTH") }

func (k TxKind) String() string { return pick(int(k), "BEGIN", "COMMIT", "ROLLBACK") }

func pick(i int, names ...string) string {
	if i >= 0 && i < len(names) {
		return names[i]
	}
	return "?"
}
