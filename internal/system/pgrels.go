package system

import (
	"strings"

	"github.com/strata-db/strata/internal/expr"
	"github.com/strata-db/strata/internal/types"
)

// The catalog's own relations as rows of pg_class and pg_attribute:
// pg_catalog's, information_schema's and Strata's system.* tables, so that
// 'pg_class'::regclass, d.classoid = 'pg_namespace'::regclass, \dS and
// \d system.commits find them as they find user tables.

// catalogRel is one relation of pg_catalog, information_schema or system.
type catalogRel struct {
	oid    uint32
	schema string
	kind   string // pg_class.relkind: r for a table, v for a view
	t      *Table
}

// pgRelOIDs are the oids PostgreSQL 15 gives its catalogs and views.
var pgRelOIDs = map[string]uint32{"pg_tablespace": 1213, "pg_type": 1247, "pg_attribute": 1249, "pg_proc": 1255,
	"pg_class": 1259, "pg_auth_members": 1261, "pg_database": 1262, "pg_sequence": 2224, "pg_shdescription": 2396,
	"pg_am": 2601, "pg_attrdef": 2604, "pg_constraint": 2606, "pg_description": 2609, "pg_index": 2610,
	"pg_inherits": 2611, "pg_namespace": 2615, "pg_rewrite": 2618, "pg_trigger": 2620, "pg_extension": 3079,
	"pg_foreign_table": 3118, "pg_policy": 3256, "pg_statistic_ext": 3381, "pg_collation": 3456, "pg_enum": 3501,
	"pg_range": 3541, "pg_publication": 6104, "pg_publication_rel": 6106, "pg_publication_namespace": 6237,
	"pg_roles": 12000, "pg_user": 12014, "pg_views": 12028, "pg_tables": 12033, "pg_matviews": 12038,
	"pg_settings": 12104}

// The oids of the relations PostgreSQL does not have: base + position.
const (
	oidOtherPgRelBase = 0x70000000
	oidInfoRelBase    = 0x70001000
	oidSystemRelBase  = 0x70002000
	oidSystem         = 13001 // the system schema
)

// catalogRels is built at init: the relation lists refer to the fills,
// which read catalogRels.
var catalogRels []catalogRel

func init() { catalogRels = buildCatalogRels() }

func buildCatalogRels() []catalogRel {
	var out []catalogRel
	for i, t := range pgCatalogTables {
		o, ok := pgRelOIDs[t.Name]
		if !ok {
			o = oidOtherPgRelBase + uint32(i)
		}
		kind := "r"
		if o >= 12000 && o < 13000 {
			kind = "v"
		}
		out = append(out, catalogRel{o, "pg_catalog", kind, t})
	}
	for i, t := range infoSchemaTables {
		out = append(out, catalogRel{oidInfoRelBase + uint32(i), "information_schema", "v", t})
	}
	for i, t := range tables {
		out = append(out, catalogRel{oidSystemRelBase + uint32(i), "system", "v", t})
	}
	return out
}

func namespaceOID(schema string) uint32 {
	for _, n := range namespaces {
		if n.name == schema {
			return n.oid
		}
	}
	return 0
}

// fillCatalogRels adds the rows of the catalog relations to pg_class.
func fillCatalogRels(relation func(o uint32, ns uint32, name, kind string, am uint32, natts int, hasIndex bool, tuples float32)) {
	for _, r := range catalogRels {
		am := uint32(oidHeapAM)
		if r.kind == "v" {
			am = 0
		}
		relation(r.oid, namespaceOID(r.schema), r.t.Name, r.kind, am, len(r.t.Columns), false, -1)
	}
}

// fillCatalogAttributes adds the columns of the catalog relations to
// pg_attribute.
func fillCatalogAttributes(add func(...types.Value)) {
	for _, r := range catalogRels {
		for i, c := range r.t.Columns {
			typ, mod := expr.PGType(c.Type)
			length, align, storage, byval, coll := pgTypeLayout(typ)
			add(oid(r.oid), str(c.Name), oid(typ), i32(-1), i16(length), i16(i+1), i32(0), i32(-1),
				i32(int(mod)), boolean(byval), str(align), str(storage), str(""), boolean(false),
				boolean(false), boolean(false), str(""), str(""), boolean(false), boolean(true), i32(0),
				oid(coll), null(tString), null(tString), null(tString), null(tString))
		}
	}
}

// catalogRelByOID returns the catalog relation of oid o.
func catalogRelByOID(o uint32) (catalogRel, bool) {
	for _, r := range catalogRels {
		if r.oid == o {
			return r, true
		}
	}
	return catalogRel{}, false
}

// catalogRelByName returns the catalog relation schema.name; an empty
// schema means pg_catalog.
func catalogRelByName(schema, name string) (catalogRel, bool) {
	if schema == "" {
		schema = "pg_catalog"
	}
	for _, r := range catalogRels {
		if r.schema == schema && r.t.Name == name {
			return r, true
		}
	}
	return catalogRel{}, false
}

// splitQualified splits "schema.name" (either part may be double-quoted,
// an unquoted part is folded to lower case, as regclass's input does) into
// its parts; schema is "" for an unqualified name.
func splitQualified(s string) (schema, name string) {
	dot, quoted := -1, false
	for i := 0; i < len(s); i++ {
		switch {
		case s[i] == '"':
			quoted = !quoted
		case s[i] == '.' && !quoted:
			dot = i
		}
	}
	unquote := func(p string) string {
		if len(p) >= 2 && p[0] == '"' && p[len(p)-1] == '"' {
			return strings.ReplaceAll(p[1:len(p)-1], `""`, `"`)
		}
		return strings.ToLower(p)
	}
	if dot < 0 {
		return "", unquote(s)
	}
	return unquote(s[:dot]), unquote(s[dot+1:])
}
