package system

import (
	"github.com/strata-db/strata/internal/expr"
	"github.com/strata-db/strata/internal/types"
)

// information_schema: the SQL standard's catalog views, which BI tools and
// ORMs read instead of pg_catalog. Every user table is a BASE TABLE of
// schema public in catalog strata.

var infoSchemaTables = []*Table{
	pgTable("schemata", cols("catalog_name", tString, "schema_name", tString, "schema_owner", tString,
		"default_character_set_catalog", tString, "default_character_set_schema", tString,
		"default_character_set_name", tString, "sql_path", tString),
		func(_ Source, _ map[string]string, add func(...types.Value)) {
			for _, n := range namespaces {
				add(str(expr.DatabaseName), str(n.name), str(BootstrapRole), null(tString), null(tString), null(tString),
					null(tString))
			}
		}),
	pgTable("tables", cols("table_catalog", tString, "table_schema", tString, "table_name", tString,
		"table_type", tString, "self_referencing_column_name", tString, "reference_generation", tString,
		"user_defined_type_catalog", tString, "user_defined_type_schema", tString,
		"user_defined_type_name", tString, "is_insertable_into", tString, "is_typed", tString,
		"commit_action", tString), func(src Source, _ map[string]string, add func(...types.Value)) {
		for _, t := range src.Catalog().Tables() {
			add(str(expr.DatabaseName), str("public"), str(t.Name), str("BASE TABLE"), null(tString), null(tString),
				null(tString), null(tString), null(tString), str("YES"), str("NO"), null(tString))
		}
		for _, v := range src.Catalog().Views() {
			add(str(expr.DatabaseName), str("public"), str(v.Name), str("VIEW"), null(tString), null(tString),
				null(tString), null(tString), null(tString), str("NO"), str("NO"), null(tString))
		}
		for _, r := range catalogRels {
			typ := "BASE TABLE"
			if r.kind == "v" {
				typ = "VIEW"
			}
			add(str(expr.DatabaseName), str(r.schema), str(r.t.Name), str(typ), null(tString), null(tString),
				null(tString), null(tString), null(tString), str("NO"), str("NO"), null(tString))
		}
	}),
	pgTable("columns", cols("table_catalog", tString, "table_schema", tString, "table_name", tString,
		"column_name", tString, "ordinal_position", tInt4, "column_default", tString, "is_nullable", tString,
		"data_type", tString, "character_maximum_length", tInt4, "character_octet_length", tInt4,
		"numeric_precision", tInt4, "numeric_precision_radix", tInt4, "numeric_scale", tInt4,
		"datetime_precision", tInt4, "interval_type", tString, "interval_precision", tInt4,
		"collation_name", tString, "udt_catalog", tString, "udt_schema", tString, "udt_name", tString,
		"dtd_identifier", tString, "is_identity", tString, "identity_generation", tString,
		"is_generated", tString, "generation_expression", tString, "is_updatable", tString), fillInfoColumns),
	pgTable("table_constraints", cols("constraint_catalog", tString, "constraint_schema", tString,
		"constraint_name", tString, "table_catalog", tString, "table_schema", tString, "table_name", tString,
		"constraint_type", tString, "is_deferrable", tString, "initially_deferred", tString, "enforced", tString),
		func(src Source, _ map[string]string, add func(...types.Value)) {
			for _, t := range src.Catalog().Tables() {
				if len(t.Key) > 0 {
					add(str(expr.DatabaseName), str("public"), str(primaryKeyName(t)), str(expr.DatabaseName), str("public"),
						str(t.Name), str("PRIMARY KEY"), str("NO"), str("NO"), str("YES"))
				}
			}
		}),
	pgTable("key_column_usage", cols("constraint_catalog", tString, "constraint_schema", tString,
		"constraint_name", tString, "table_catalog", tString, "table_schema", tString, "table_name", tString,
		"column_name", tString, "ordinal_position", tInt4, "position_in_unique_constraint", tInt4),
		func(src Source, _ map[string]string, add func(...types.Value)) {
			for _, t := range src.Catalog().Tables() {
				for i, n := range t.Names(t.Key) {
					add(str(expr.DatabaseName), str("public"), str(primaryKeyName(t)), str(expr.DatabaseName), str("public"),
						str(t.Name), str(n), i32(i+1), null(tInt4))
				}
			}
		}),
	pgTable("views", cols("table_catalog", tString, "table_schema", tString, "table_name", tString,
		"view_definition", tString, "check_option", tString, "is_updatable", tString, "is_insertable_into", tString),
		func(src Source, _ map[string]string, add func(...types.Value)) {
			// User views, with the definition pg_views shows.
			for _, v := range src.Catalog().Views() {
				add(str(expr.DatabaseName), str("public"), str(v.Name), str(viewDef(v)), str("NONE"), str("NO"), str("NO"))
			}
			// The catalog's views are computed by Strata, not defined in
			// SQL: their definition is NULL.
			for _, r := range catalogRels {
				if r.kind == "v" {
					add(str(expr.DatabaseName), str(r.schema), str(r.t.Name), null(tString), str("NONE"), str("NO"), str("NO"))
				}
			}
		}),
}

// infoDataType is information_schema's data_type of a PostgreSQL type.
func infoDataType(oid uint32) string {
	switch oid {
	case expr.OIDVarchar:
		return "character varying"
	case expr.OIDNumeric:
		return "numeric"
	case expr.OIDTimestamptz:
		return "timestamp with time zone"
	}
	return expr.FormatType(oid, -1)
}

func fillInfoColumns(src Source, _ map[string]string, add func(...types.Value)) {
	for _, t := range src.Catalog().Tables() {
		for i, c := range t.Columns {
			def := null(tString)
			if c.Default != nil {
				def = str(c.Default.SQL)
			}
			infoColumn(add, "public", t.Name, i+1, c.Name, c.Type, c.Nullable, def)
		}
	}
	for _, v := range src.Catalog().Views() {
		for i, name := range v.Columns {
			infoColumn(add, "public", v.Name, i+1, name, v.Types[i], true, null(tString))
		}
	}
	for _, r := range catalogRels {
		for i, c := range r.t.Columns {
			infoColumn(add, r.schema, r.t.Name, i+1, c.Name, c.Type, true, null(tString))
		}
	}
}

// infoColumn adds the information_schema.columns row of one column.
func infoColumn(add func(...types.Value), schema, table string, pos int, name string, ct types.Type, isNullable bool,
	def types.Value) {
	typ, mod := expr.PGType(ct)
	nullable := "YES"
	if !isNullable {
		nullable = "NO"
	}
	maxLen, octets, prec, radix, scale, dtPrec := null(tInt4), null(tInt4), null(tInt4), null(tInt4), null(tInt4), null(tInt4)
	switch {
	case typ == expr.OIDVarchar:
		maxLen, octets = i32(int(ct.Len)), i32(4*int(ct.Len))
	case typ == expr.OIDText:
		octets = i32(1 << 30)
	case typ == expr.OIDNumeric:
		prec, radix, scale = i32(int((mod-4)>>16)), i32(10), i32(int((mod-4)&0xffff))
	case typ == expr.OIDInt2 || typ == expr.OIDInt4 || typ == expr.OIDInt8:
		prec, radix, scale = i32(map[uint32]int{expr.OIDInt2: 16, expr.OIDInt4: 32, expr.OIDInt8: 64}[typ]), i32(2), i32(0)
	case typ == expr.OIDFloat4 || typ == expr.OIDFloat8:
		prec, radix = i32(map[uint32]int{expr.OIDFloat4: 24, expr.OIDFloat8: 53}[typ]), i32(2)
	case typ == expr.OIDTimestamptz:
		dtPrec = i32(int(ct.Precision))
	case typ == expr.OIDDate:
		dtPrec = i32(0)
	}
	udt := ""
	for _, pt := range expr.PGTypes() {
		if pt.OID == typ {
			udt = pt.Name
		}
	}
	add(str(expr.DatabaseName), str(schema), str(table), str(name), i32(pos), def, str(nullable),
		str(infoDataType(typ)), maxLen, octets, prec, radix, scale, dtPrec, null(tString), null(tInt4),
		null(tString), str(expr.DatabaseName), str("pg_catalog"), str(udt), str(itoa(pos)), str("NO"),
		null(tString), str("NEVER"), null(tString), str("YES"))
}
