package system

import (
	"cmp"
	"hash/fnv"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/expr"
	"github.com/strata-db/strata/internal/types"
)

// The pg_catalog and information_schema relations: PostgreSQL's view of
// Strata's catalog, as much of it as psql's \d commands, the drivers'
// introspection and BI tools read (docs/pg-catalog.md). Every user table is
// in schema public; the object identifiers are derived from the catalog's
// stable ids, so an oid names the same object across restarts.

// The oid of every object is one of these ranges plus a catalog id.
const (
	oidTableBase      = 16384      // a table: 16384 + table id
	oidPrimaryKeyBase = 0x20000000 // its primary-key index: + table id
	oidConstraintBase = 0x30000000 // its primary-key constraint: + table id
	oidIndexBase      = 0x40000000 // a secondary index: + index id
	oidRoleBase       = 0x50000000 // a user: + a hash of the name
	oidAttrDefBase    = 0x60000000 // a column default: + table id << 12 + position
	oidViewBase       = 0x80000000 // a view: + a hash of the name
	oidViewTypeBase   = 0x90000000 // a view's row type: + the same hash
	oidViewArrayBase  = 0xA0000000 // the array of that row type: + the same hash
	oidTableTypeBase  = 0xB0000000 // a table's row type: + table id
	oidTableArrayBase = 0xC0000000 // the array of that row type: + table id

	oidBootstrapRole = 10   // the owner of every object, as PostgreSQL's bootstrap superuser
	oidPgCatalog     = 11   // pg_catalog's oid in PostgreSQL
	oidPublic        = 2200 // public's oid in PostgreSQL
	oidInfoSchema    = 13000
	oidDatabase      = 5
	oidHeapAM        = 2   // pg_am heap
	oidBtreeAM       = 403 // pg_am btree
	oidDefaultColl   = 100 // pg_collation default

	// BootstrapRole is the name of the role that owns every object.
	BootstrapRole = "strata"
)

// TableOID is the oid of table id in pg_class.
func TableOID(id catalog.TableID) uint32 { return oidTableBase + uint32(id) }

// primaryKeyName is the name PostgreSQL gives a table's primary-key index.
func primaryKeyName(t *catalog.Table) string { return t.Name + "_pkey" }

// nameHash is the low 28 bits of FNV-1a of name: the part of a user's or
// a view's oid that names it. Views and users have no catalog id, and the
// name keeps the oid across restarts and CREATE OR REPLACE, as
// PostgreSQL keeps a replaced view's oid.
func nameHash(name string) uint32 {
	h := fnv.New32a()
	h.Write([]byte(name))
	return h.Sum32() & hashMask
}

// hashMask keeps the 28 bits of an oid below its range's base.
const hashMask = 0x0fffffff

// named is an object whose oid is derived from its name.
type named struct {
	name    string
	created uint64 // its CREATE's commit
}

// nameHashes resolves the oid part of each of objs: its nameHash, unless
// an object created before it (by commit, then by name) took that value,
// when it takes the next free one (wrapping at 28 bits). Two names that
// hash alike thus get distinct oids; the result depends only on the
// catalog, so it is the same after a restart, and the first object keeps
// its oid when a later one collides with it.
func nameHashes(objs []named) map[string]uint32 {
	slices.SortFunc(objs, func(a, b named) int {
		return cmp.Or(cmp.Compare(a.created, b.created), cmp.Compare(a.name, b.name))
	})
	out := make(map[string]uint32, len(objs))
	taken := make(map[uint32]bool, len(objs))
	for _, o := range objs {
		h := nameHash(o.name)
		for taken[h] {
			h = (h + 1) & hashMask
		}
		taken[h] = true
		out[o.name] = h
	}
	return out
}

// viewHashes is nameHashes of cat's views: a view's oid is oidViewBase
// plus its value, its row type's oidViewTypeBase plus the same.
func viewHashes(cat *catalog.Catalog) map[string]uint32 {
	vs := cat.Views()
	objs := make([]named, len(vs))
	for i, v := range vs {
		objs[i] = named{v.Name, v.CreatedCommit}
	}
	return nameHashes(objs)
}

// roleOIDs maps each user of cat (not the bootstrap role) to its oid.
func roleOIDs(cat *catalog.Catalog) map[string]uint32 {
	var objs []named
	for _, u := range cat.Users() {
		if u.Name != BootstrapRole {
			objs = append(objs, named{u.Name, u.CreatedCommit})
		}
	}
	out := nameHashes(objs)
	for n, h := range out {
		out[n] = oidRoleBase + h
	}
	return out
}

var (
	tOid   = types.Of(types.Uint32)
	tInt2  = types.Of(types.Int16)
	tInt4  = types.Of(types.Int32)
	tFloat = types.Of(types.Float32)
)

func oid(x uint32) types.Value {
	v, _ := types.NewUint(tOid, uint64(x))
	return v
}

func i16(x int) types.Value {
	v, _ := types.NewInt(tInt2, int64(x))
	return v
}

func i32(x int) types.Value {
	v, _ := types.NewInt(tInt4, int64(x))
	return v
}

func boolean(b bool) types.Value { return types.NewBool(b) }

func null(t types.Type) types.Value { return types.Null(t) }

// pgTable is a pg_catalog or information_schema relation. fill gets the
// session's settings as well as the snapshot.
func pgTable(name string, columns []Column, fill func(src Source, settings map[string]string, add func(...types.Value))) *Table {
	return &Table{Name: name, Columns: columns, fillS: fill}
}

// noRows is the fill of a relation that is empty in Strata: the objects it
// lists (comments, policies, publications, …) do not exist.
func noRows(Source, map[string]string, func(...types.Value)) {}

// LookupSchema returns the relation schema.name of pg_catalog or
// information_schema.
func LookupSchema(schema, name string) (*Table, bool) {
	var list []*Table
	switch schema {
	case "pg_catalog":
		list = pgCatalogTables
	case "information_schema":
		list = infoSchemaTables
	default:
		return nil, false
	}
	for _, t := range list {
		if t.Name == name {
			return t, true
		}
	}
	return nil, false
}

// namespaces are the schemas pg_namespace lists, in oid order.
var namespaces = []struct {
	oid  uint32
	name string
}{{oidPgCatalog, "pg_catalog"}, {oidPublic, "public"}, {oidInfoSchema, "information_schema"}, {oidSystem, "system"}}

var pgCatalogTables = []*Table{
	pgTable("pg_namespace", cols("oid", tOid, "nspname", tString, "nspowner", tOid, "nspacl", tString),
		func(_ Source, _ map[string]string, add func(...types.Value)) {
			for _, n := range namespaces {
				add(oid(n.oid), str(n.name), oid(oidBootstrapRole), null(tString))
			}
		}),
	pgTable("pg_class", cols("oid", tOid, "relname", tString, "relnamespace", tOid, "reltype", tOid,
		"reloftype", tOid, "relowner", tOid, "relam", tOid, "relfilenode", tOid, "reltablespace", tOid,
		"relpages", tInt4, "reltuples", tFloat, "relallvisible", tInt4, "reltoastrelid", tOid,
		"relhasindex", tBool, "relisshared", tBool, "relpersistence", tString, "relkind", tString,
		"relnatts", tInt2, "relchecks", tInt2, "relhasrules", tBool, "relhastriggers", tBool,
		"relhassubclass", tBool, "relrowsecurity", tBool, "relforcerowsecurity", tBool,
		"relispopulated", tBool, "relreplident", tString, "relispartition", tBool, "relrewrite", tOid,
		"relfrozenxid", tOid, "relminmxid", tOid, "relacl", tString, "reloptions", tString,
		"relpartbound", tString), fillPgClass),
	pgTable("pg_attribute", cols("attrelid", tOid, "attname", tString, "atttypid", tOid,
		"attstattarget", tInt4, "attlen", tInt2, "attnum", tInt2, "attndims", tInt4, "attcacheoff", tInt4,
		"atttypmod", tInt4, "attbyval", tBool, "attalign", tString, "attstorage", tString,
		"attcompression", tString, "attnotnull", tBool, "atthasdef", tBool, "atthasmissing", tBool,
		"attidentity", tString, "attgenerated", tString, "attisdropped", tBool, "attislocal", tBool,
		"attinhcount", tInt4, "attcollation", tOid, "attacl", tString, "attoptions", tString,
		"attfdwoptions", tString, "attmissingval", tString), fillPgAttribute),
	pgTable("pg_attrdef", cols("oid", tOid, "adrelid", tOid, "adnum", tInt2, "adbin", tString), fillPgAttrdef),
	pgTable("pg_type", cols("oid", tOid, "typname", tString, "typnamespace", tOid, "typowner", tOid,
		"typlen", tInt2, "typbyval", tBool, "typtype", tString, "typcategory", tString,
		"typispreferred", tBool, "typisdefined", tBool, "typdelim", tString, "typrelid", tOid,
		"typsubscript", tString, "typelem", tOid, "typarray", tOid, "typinput", tString, "typoutput", tString,
		"typreceive", tString, "typsend", tString, "typmodin", tString, "typmodout", tString,
		"typanalyze", tString, "typalign", tString, "typstorage", tString, "typnotnull", tBool,
		"typbasetype", tOid, "typtypmod", tInt4, "typndims", tInt4, "typcollation", tOid,
		"typdefaultbin", tString, "typdefault", tString, "typacl", tString), fillPgType),
	pgTable("pg_index", cols("indexrelid", tOid, "indrelid", tOid, "indnatts", tInt2, "indnkeyatts", tInt2,
		"indisunique", tBool, "indnullsnotdistinct", tBool, "indisprimary", tBool, "indisexclusion", tBool,
		"indimmediate", tBool, "indisclustered", tBool, "indisvalid", tBool, "indcheckxmin", tBool,
		"indisready", tBool, "indislive", tBool, "indisreplident", tBool, "indkey", tString,
		"indcollation", tString, "indclass", tString, "indoption", tString, "indexprs", tString,
		"indpred", tString), fillPgIndex),
	pgTable("pg_constraint", cols("oid", tOid, "conname", tString, "connamespace", tOid, "contype", tString,
		"condeferrable", tBool, "condeferred", tBool, "convalidated", tBool, "conrelid", tOid,
		"contypid", tOid, "conindid", tOid, "conparentid", tOid, "confrelid", tOid,
		"confupdtype", tString, "confdeltype", tString, "confmatchtype", tString, "conislocal", tBool,
		"coninhcount", tInt4, "connoinherit", tBool, "conkey", tString, "confkey", tString,
		"conbin", tString), fillPgConstraint),
	pgTable("pg_database", cols("oid", tOid, "datname", tString, "datdba", tOid, "encoding", tInt4,
		"datlocprovider", tString, "datistemplate", tBool, "datallowconn", tBool, "datconnlimit", tInt4,
		"datfrozenxid", tOid, "datminmxid", tOid, "dattablespace", tOid, "datcollate", tString,
		"datctype", tString, "daticulocale", tString, "datcollversion", tString, "datacl", tString),
		func(_ Source, _ map[string]string, add func(...types.Value)) {
			add(oid(oidDatabase), str(expr.DatabaseName), oid(oidBootstrapRole), i32(6), str("c"), boolean(false),
				boolean(true), i32(-1), oid(0), oid(1), oid(1663), str("C"), str("C"), null(tString),
				null(tString), null(tString))
		}),
	pgTable("pg_settings", cols("name", tString, "setting", tString, "unit", tString, "category", tString,
		"short_desc", tString, "extra_desc", tString, "context", tString, "vartype", tString,
		"source", tString, "min_val", tString, "max_val", tString, "enumvals", tString,
		"boot_val", tString, "reset_val", tString, "sourcefile", tString, "sourceline", tInt4,
		"pending_restart", tBool), fillPgSettings),
	pgTable("pg_roles", cols("rolname", tString, "rolsuper", tBool, "rolinherit", tBool,
		"rolcreaterole", tBool, "rolcreatedb", tBool, "rolcanlogin", tBool, "rolreplication", tBool,
		"rolconnlimit", tInt4, "rolpassword", tString, "rolvaliduntil", tTime, "rolbypassrls", tBool,
		"rolconfig", tString, "oid", tOid), fillPgRoles),
	pgTable("pg_user", cols("usename", tString, "usesysid", tOid, "usecreatedb", tBool, "usesuper", tBool,
		"userepl", tBool, "usebypassrls", tBool, "passwd", tString, "valuntil", tTime, "useconfig", tString),
		func(src Source, _ map[string]string, add func(...types.Value)) {
			for _, r := range roles(src) {
				add(str(r.name), oid(r.oid), boolean(true), boolean(true), boolean(false), boolean(true),
					str("********"), null(tTime), null(tString))
			}
		}),
	pgTable("pg_am", cols("oid", tOid, "amname", tString, "amhandler", tString, "amtype", tString),
		func(_ Source, _ map[string]string, add func(...types.Value)) {
			add(oid(oidHeapAM), str("heap"), str("heap_tableam_handler"), str("t"))
			add(oid(oidBtreeAM), str("btree"), str("bthandler"), str("i"))
		}),
	pgTable("pg_collation", cols("oid", tOid, "collname", tString, "collnamespace", tOid, "collowner", tOid,
		"collprovider", tString, "collisdeterministic", tBool, "collencoding", tInt4, "collcollate", tString,
		"collctype", tString, "colliculocale", tString, "collversion", tString),
		func(_ Source, _ map[string]string, add func(...types.Value)) {
			for _, c := range []struct {
				oid      uint32
				name     string
				provider string
				locale   types.Value
			}{{oidDefaultColl, "default", "d", null(tString)}, {950, "C", "c", str("C")}, {951, "POSIX", "c", str("POSIX")}} {
				add(oid(c.oid), str(c.name), oid(oidPgCatalog), oid(oidBootstrapRole), str(c.provider), boolean(true),
					i32(-1), c.locale, c.locale, null(tString), null(tString))
			}
		}),
	pgTable("pg_tablespace", cols("oid", tOid, "spcname", tString, "spcowner", tOid, "spcacl", tString,
		"spcoptions", tString), func(_ Source, _ map[string]string, add func(...types.Value)) {
		add(oid(1663), str("pg_default"), oid(oidBootstrapRole), null(tString), null(tString))
	}),
	pgTable("pg_tables", cols("schemaname", tString, "tablename", tString, "tableowner", tString,
		"tablespace", tString, "hasindexes", tBool, "hasrules", tBool, "hastriggers", tBool,
		"rowsecurity", tBool), func(src Source, _ map[string]string, add func(...types.Value)) {
		byTable := indexesByTable(src.Catalog())
		for _, t := range src.Catalog().Tables() {
			add(str("public"), str(t.Name), str(BootstrapRole), null(tString),
				boolean(len(t.Key) > 0 || len(byTable[t.ID]) > 0), boolean(false), boolean(false), boolean(false))
		}
	}),
	// pg_proc is empty: Strata has no user-defined functions, and its
	// built-in ones are not listed (docs/pg-catalog.md).
	pgTable("pg_proc", cols("oid", tOid, "proname", tString, "pronamespace", tOid, "proowner", tOid,
		"prolang", tOid, "procost", tFloat, "prorows", tFloat, "provariadic", tOid, "prosupport", tString,
		"prokind", tString, "prosecdef", tBool, "proleakproof", tBool, "proisstrict", tBool,
		"proretset", tBool, "provolatile", tString, "proparallel", tString, "pronargs", tInt2,
		"pronargdefaults", tInt2, "prorettype", tOid, "proargtypes", tString, "proallargtypes", tString,
		"proargmodes", tString, "proargnames", tString, "proargdefaults", tString, "protrftypes", tString,
		"prosrc", tString, "probin", tString, "prosqlbody", tString, "proconfig", tString, "proacl", tString), noRows),
	pgTable("pg_description", cols("objoid", tOid, "classoid", tOid, "objsubid", tInt4, "description", tString), noRows),
	pgTable("pg_shdescription", cols("objoid", tOid, "classoid", tOid, "description", tString), noRows),
	pgTable("pg_inherits", cols("inhrelid", tOid, "inhparent", tOid, "inhseqno", tInt4, "inhdetachpending", tBool), noRows),
	pgTable("pg_policy", cols("oid", tOid, "polname", tString, "polrelid", tOid, "polcmd", tString,
		"polpermissive", tBool, "polroles", tString, "polqual", tString, "polwithcheck", tString), noRows),
	pgTable("pg_statistic_ext", cols("oid", tOid, "stxrelid", tOid, "stxname", tString, "stxnamespace", tOid,
		"stxowner", tOid, "stxstattarget", tInt4, "stxkeys", tString, "stxkind", tString, "stxexprs", tString), noRows),
	pgTable("pg_publication", cols("oid", tOid, "pubname", tString, "pubowner", tOid, "puballtables", tBool,
		"pubinsert", tBool, "pubupdate", tBool, "pubdelete", tBool, "pubtruncate", tBool, "pubviaroot", tBool), noRows),
	pgTable("pg_publication_namespace", cols("oid", tOid, "pnpubid", tOid, "pnnspid", tOid), noRows),
	pgTable("pg_publication_rel", cols("oid", tOid, "prpubid", tOid, "prrelid", tOid, "prqual", tString,
		"prattrs", tString), noRows),
	pgTable("pg_auth_members", cols("roleid", tOid, "member", tOid, "grantor", tOid, "admin_option", tBool), noRows),
	pgTable("pg_views", cols("schemaname", tString, "viewname", tString, "viewowner", tString,
		"definition", tString), func(src Source, _ map[string]string, add func(...types.Value)) {
		// User views first, their definition as pg_get_viewdef gives it.
		for _, v := range src.Catalog().Views() {
			add(str("public"), str(v.Name), str(BootstrapRole), str(viewDef(v)))
		}
		// The catalog's views are computed by Strata, not defined in SQL:
		// their definition is NULL.
		for _, r := range catalogRels {
			if r.kind == "v" {
				add(str(r.schema), str(r.t.Name), str(BootstrapRole), null(tString))
			}
		}
	}),
	pgTable("pg_matviews", cols("schemaname", tString, "matviewname", tString, "matviewowner", tString,
		"tablespace", tString, "hasindexes", tBool, "ispopulated", tBool, "definition", tString), noRows),
	pgTable("pg_enum", cols("oid", tOid, "enumtypid", tOid, "enumsortorder", tFloat, "enumlabel", tString), noRows),
	pgTable("pg_range", cols("rngtypid", tOid, "rngsubtype", tOid, "rngmultitypid", tOid,
		"rngcollation", tOid, "rngsubopc", tOid, "rngcanonical", tString, "rngsubdiff", tString), noRows),
	pgTable("pg_extension", cols("oid", tOid, "extname", tString, "extowner", tOid, "extnamespace", tOid,
		"extrelocatable", tBool, "extversion", tString, "extconfig", tString, "extcondition", tString), noRows),
	pgTable("pg_trigger", cols("oid", tOid, "tgrelid", tOid, "tgparentid", tOid, "tgname", tString,
		"tgfoid", tOid, "tgtype", tInt2, "tgenabled", tString, "tgisinternal", tBool), noRows),
	pgTable("pg_rewrite", cols("oid", tOid, "rulename", tString, "ev_class", tOid, "ev_type", tString,
		"ev_enabled", tString, "is_instead", tBool), noRows),
	pgTable("pg_foreign_table", cols("ftrelid", tOid, "ftserver", tOid, "ftoptions", tString), noRows),
	pgTable("pg_sequence", cols("seqrelid", tOid, "seqtypid", tOid, "seqstart", tInt, "seqincrement", tInt,
		"seqmax", tInt, "seqmin", tInt, "seqcache", tInt, "seqcycle", tBool), noRows),
}

type role struct {
	name string
	oid  uint32
}

// roles are the bootstrap role and the catalog's users, by name.
func roles(src Source) []role {
	out := []role{{BootstrapRole, oidBootstrapRole}}
	oids := roleOIDs(src.Catalog())
	for _, u := range src.Catalog().Users() {
		if u.Name != BootstrapRole {
			out = append(out, role{u.Name, oids[u.Name]})
		}
	}
	return out
}

func fillPgRoles(src Source, _ map[string]string, add func(...types.Value)) {
	// Strata has no privileges beyond logging in: every role may do
	// everything, which is what a superuser is.
	for _, r := range roles(src) {
		add(str(r.name), boolean(true), boolean(true), boolean(true), boolean(true), boolean(true), boolean(false),
			i32(-1), str("********"), null(tTime), boolean(true), null(tString), oid(r.oid))
	}
}

func fillPgClass(src Source, _ map[string]string, add func(...types.Value)) {
	cat := src.Catalog()
	byTable := indexesByTable(cat)
	// typed is a relation with a row type of its own (reltype): a table,
	// as PostgreSQL gives every table one; indexes have none.
	typed := func(o uint32, ns uint32, name, kind string, am uint32, natts int, hasIndex bool, tuples float32, reltype uint32) {
		add(oid(o), str(name), oid(ns), oid(reltype), oid(0), oid(oidBootstrapRole), oid(am), oid(o), oid(0),
			i32(0), types.NewFloat32(tuples), i32(0), oid(0), boolean(hasIndex), boolean(false), str("p"), str(kind),
			i16(natts), i16(0), boolean(false), boolean(false), boolean(false), boolean(false), boolean(false),
			boolean(true), str("d"), boolean(false), oid(0), oid(0), oid(0), null(tString), null(tString), null(tString))
	}
	relation := func(o uint32, ns uint32, name, kind string, am uint32, natts int, hasIndex bool, tuples float32) {
		typed(o, ns, name, kind, am, natts, hasIndex, tuples, 0)
	}
	for _, t := range cat.Tables() {
		var rows uint64
		for _, s := range src.Shards(t.ID) {
			rows += s.Rows
		}
		ixs := byTable[t.ID]
		typed(TableOID(t.ID), oidPublic, t.Name, "r", oidHeapAM, len(t.Columns), len(t.Key) > 0 || len(ixs) > 0, float32(rows), oidTableTypeBase+uint32(t.ID))
		if len(t.Key) > 0 {
			relation(oidPrimaryKeyBase+uint32(t.ID), oidPublic, primaryKeyName(t), "i", oidBtreeAM, len(t.Key), false, float32(rows))
		}
		for _, ix := range ixs {
			relation(oidIndexBase+uint32(ix.ID), oidPublic, ix.Name, "i", oidBtreeAM, len(ix.Columns), false, float32(rows))
		}
	}
	// A view, as in PostgreSQL: no access method, storage or tuples, a row
	// type of its own, and relhasrules (its query is its _RETURN rule
	// there; psql then looks for other rules and finds none).
	hs := viewHashes(cat)
	for _, v := range cat.Views() {
		h := hs[v.Name]
		add(oid(oidViewBase+h), str(v.Name), oid(oidPublic), oid(oidViewTypeBase+h), oid(0), oid(oidBootstrapRole), oid(0), oid(0), oid(0),
			i32(0), types.NewFloat32(-1), i32(0), oid(0), boolean(false), boolean(false), str("p"), str("v"),
			i16(len(v.Columns)), i16(0), boolean(true), boolean(false), boolean(false), boolean(false), boolean(false),
			boolean(true), str("n"), boolean(false), oid(0), oid(0), oid(0), null(tString), null(tString), null(tString))
	}
	fillCatalogRels(relation)
}

func fillPgAttribute(src Source, _ map[string]string, add func(...types.Value)) {
	attr := func(rel uint32, c *catalog.Column, num int, notNull, hasDef bool) {
		typ, mod := expr.PGType(c.Type)
		length, align, storage, byval, coll := pgTypeLayout(typ)
		add(oid(rel), str(c.Name), oid(typ), i32(-1), i16(length), i16(num), i32(0), i32(-1),
			i32(int(mod)), boolean(byval), str(align), str(storage), str(""), boolean(notNull),
			boolean(hasDef), boolean(false), str(""), str(""), boolean(false), boolean(true), i32(0),
			oid(coll), null(tString), null(tString), null(tString), null(tString))
	}
	// An index has attributes of its own, one per column, as in
	// PostgreSQL: psql's \d index lists them.
	indexAttrs := func(rel uint32, t *catalog.Table, ids []catalog.ColumnID) {
		for i, id := range ids {
			for j := range t.Columns {
				if t.Columns[j].ID == id {
					attr(rel, t.Columns[j], i+1, false, false)
				}
			}
		}
	}
	cat := src.Catalog()
	byTable := indexesByTable(cat)
	for _, t := range cat.Tables() {
		for i := range t.Columns {
			c := t.Columns[i]
			attr(TableOID(t.ID), c, i+1, !c.Nullable, c.Default != nil)
		}
		if len(t.Key) > 0 {
			indexAttrs(oidPrimaryKeyBase+uint32(t.ID), t, t.Key)
		}
		for _, ix := range byTable[t.ID] {
			indexAttrs(oidIndexBase+uint32(ix.ID), t, ix.Columns)
		}
	}
	hs := viewHashes(cat)
	for _, v := range cat.Views() {
		for i, name := range v.Columns {
			attr(oidViewBase+hs[v.Name], &catalog.Column{Name: name, Type: v.Types[i], Nullable: true}, i+1, false, false)
		}
	}
	fillCatalogAttributes(add)
}

// pgTypeLayout is what pg_attribute repeats of pg_type: length, alignment,
// storage, whether passed by value, and the collation of a text type.
func pgTypeLayout(typ uint32) (length int, align, storage string, byval bool, coll uint32) {
	for _, t := range expr.PGTypes() {
		if t.OID != typ {
			continue
		}
		length = int(t.Len)
		switch {
		case t.Len == -1:
			align, storage = "i", "x"
			if t.OID == expr.OIDNumeric {
				storage = "m"
			}
		case t.Len == 8:
			align, storage, byval = "d", "p", true
		case t.Len == 16 || t.Len == 64:
			align, storage = "c", "p"
			if t.Len == 64 {
				coll = 950
			}
		default:
			align, storage, byval = map[int16]string{1: "c", 2: "s", 4: "i"}[t.Len], "p", true
		}
		if t.Category == "S" && t.Len == -1 {
			coll = oidDefaultColl
		}
		return
	}
	return -1, "i", "x", false, 0
}

func fillPgAttrdef(src Source, _ map[string]string, add func(...types.Value)) {
	for _, t := range src.Catalog().Tables() {
		for i, c := range t.Columns {
			if c.Default != nil {
				add(oid(oidAttrDefBase+uint32(t.ID)<<12+uint32(i+1)), oid(TableOID(t.ID)), i16(i+1), str(c.Default.SQL))
			}
		}
	}
}

func fillPgType(src Source, _ map[string]string, add func(...types.Value)) {
	// The row type (typtype c, typrelid the relation) and its array type
	// that PostgreSQL creates with every table and view, in schema public.
	// A relation's row type keeps its name; its array type is "_name", with
	// more underscores while that names a relation or an array already
	// listed, as PostgreSQL moves an array type out of a new table's way.
	taken := map[string]bool{}
	if src != nil && src.Catalog() != nil {
		for _, t := range src.Catalog().Tables() {
			taken[t.Name] = true
		}
		for _, v := range src.Catalog().Views() {
			taken[v.Name] = true
		}
	}
	rowType := func(name string, typ, arr, rel uint32) {
		arrName := "_" + name
		for taken[arrName] {
			arrName = "_" + arrName
		}
		taken[arrName] = true
		add(oid(typ), str(name), oid(oidPublic), oid(oidBootstrapRole), i16(-1), boolean(false), str("c"),
			str("C"), boolean(false), boolean(true), str(","), oid(rel), str("-"), oid(0), oid(arr),
			str("record_in"), str("record_out"), str("record_recv"), str("record_send"), str("-"), str("-"), str("-"),
			str("d"), str("x"), boolean(false), oid(0), i32(-1), i32(0), oid(0), null(tString), null(tString),
			null(tString))
		add(oid(arr), str(arrName), oid(oidPublic), oid(oidBootstrapRole), i16(-1), boolean(false), str("b"),
			str("A"), boolean(false), boolean(true), str(","), oid(0), str("array_subscript_handler"), oid(typ), oid(0),
			str("array_in"), str("array_out"), str("array_recv"), str("array_send"), str("-"), str("-"), str("array_typanalyze"),
			str("d"), str("x"), boolean(false), oid(0), i32(-1), i32(0), oid(0), null(tString), null(tString),
			null(tString))
	}
	if src != nil && src.Catalog() != nil {
		// In creation order, which decides who keeps a contested name.
		tables := src.Catalog().Tables()
		slices.SortFunc(tables, func(a, b *catalog.Table) int { return cmp.Compare(a.ID, b.ID) })
		for _, t := range tables {
			rowType(t.Name, oidTableTypeBase+uint32(t.ID), oidTableArrayBase+uint32(t.ID), TableOID(t.ID))
		}
		hs := viewHashes(src.Catalog())
		for _, v := range src.Catalog().Views() {
			h := hs[v.Name]
			rowType(v.Name, oidViewTypeBase+h, oidViewArrayBase+h, oidViewBase+h)
		}
	}
	for _, t := range expr.PGTypes() {
		_, align, storage, byval, coll := pgTypeLayout(t.OID)
		subscript := "-"
		if t.Elem != 0 {
			subscript = "array_subscript_handler"
		}
		add(oid(t.OID), str(t.Name), oid(oidPgCatalog), oid(oidBootstrapRole), i16(int(t.Len)), boolean(byval), str("b"),
			str(t.Category), boolean(false), boolean(true), str(","), oid(0), str(subscript), oid(t.Elem), oid(t.Array),
			str(t.Name+"in"), str(t.Name+"out"), str(t.Name+"recv"), str(t.Name+"send"), str("-"), str("-"), str("-"),
			str(align), str(storage), boolean(false), oid(0), i32(-1), i32(0), oid(coll), null(tString), null(tString),
			null(tString))
	}
}

// attnums is the int2vector text of the 1-based positions of ids in t.
func attnums(t *catalog.Table, ids []catalog.ColumnID) string {
	var b strings.Builder
	for i, id := range ids {
		if i > 0 {
			b.WriteByte(' ')
		}
		for j, c := range t.Columns {
			if c.ID == id {
				b.WriteString(itoa(j + 1))
			}
		}
	}
	return b.String()
}

func itoa(x int) string {
	if x == 0 {
		return "0"
	}
	var buf [20]byte
	i := len(buf)
	for ; x > 0; x /= 10 {
		i--
		buf[i] = byte('0' + x%10)
	}
	return string(buf[i:])
}

func zeros(n int) string { return strings.TrimSpace(strings.Repeat("0 ", n)) }

func fillPgIndex(src Source, _ map[string]string, add func(...types.Value)) {
	cat := src.Catalog()
	byTable := indexesByTable(cat)
	index := func(o uint32, t *catalog.Table, ids []catalog.ColumnID, primary bool) {
		add(oid(o), oid(TableOID(t.ID)), i16(len(ids)), i16(len(ids)), boolean(primary), boolean(false),
			boolean(primary), boolean(false), boolean(true), boolean(false), boolean(true), boolean(false),
			boolean(true), boolean(true), boolean(false), str(attnums(t, ids)), str(zeros(len(ids))),
			str(zeros(len(ids))), str(zeros(len(ids))), null(tString), null(tString))
	}
	for _, t := range cat.Tables() {
		if len(t.Key) > 0 {
			index(oidPrimaryKeyBase+uint32(t.ID), t, t.Key, true)
		}
		for _, ix := range byTable[t.ID] {
			index(oidIndexBase+uint32(ix.ID), t, ix.Columns, false)
		}
	}
}

func fillPgConstraint(src Source, _ map[string]string, add func(...types.Value)) {
	for _, t := range src.Catalog().Tables() {
		if len(t.Key) == 0 {
			continue
		}
		add(oid(oidConstraintBase+uint32(t.ID)), str(primaryKeyName(t)), oid(oidPublic), str("p"), boolean(false),
			boolean(false), boolean(true), oid(TableOID(t.ID)), oid(0), oid(oidPrimaryKeyBase+uint32(t.ID)), oid(0),
			oid(0), str(" "), str(" "), str(" "), boolean(true), i32(0), boolean(true),
			str("{"+strings.ReplaceAll(attnums(t, t.Key), " ", ",")+"}"), null(tString), null(tString))
	}
}

func fillPgSettings(_ Source, settings map[string]string, add func(...types.Value)) {
	names := make([]string, 0, len(settings))
	for n := range settings {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		add(str(n), str(settings[n]), null(tString), str("Strata"), str(""), null(tString), str("user"), str("string"),
			str("session"), null(tString), null(tString), null(tString), null(tString), str(settings[n]), null(tString),
			null(tInt4), boolean(false))
	}
}

// pgEnv implements expr.PGEnv over a snapshot and a session's settings.
// The objects by oid are indexed on first use, once per statement: a
// catalog query calls pg_table_is_visible or pg_get_indexdef once per row.
type pgEnv struct {
	src      Source
	cat      *catalog.Catalog
	settings func(name string) (string, bool)
	// values are the settings when settings is nil (PGEnv.Init).
	values map[string]string

	once sync.Once
	objs map[uint32]pgObject
}

// pgObject is what the functions say of one oid of a user table or index.
type pgObject struct {
	name          string // relname
	table         *catalog.Table
	indexDef      string // pg_get_indexdef, for an index
	indexCols     string // its columns as identifiers, NUL-separated
	constraintDef string // pg_get_constraintdef, for a constraint
	viewDef       string // pg_get_viewdef, for a view (whose table is nil)
}

// NewPGEnv returns what the PostgreSQL functions read: the statement's
// snapshot (nil when it has none) and its session's settings.
func NewPGEnv(src Source, setting func(name string) (string, bool)) expr.PGEnv {
	e := &pgEnv{src: src, settings: setting}
	if src != nil {
		e.cat = src.Catalog()
	}
	return e
}

// PGEnv is NewPGEnv's env as a value, for a caller that allocates it
// with the rest of a query's state: a point SELECT calls no PostgreSQL
// function and should not pay an allocation for them. Init sets it up;
// Env is what to plan with.
type PGEnv struct {
	pgEnv
	set func(name, value string, local bool) error
}

// Init readies e over the statement's snapshot (nil when it has none) and
// its session's settings, read in place; set, when not nil, runs SET for
// set_config() (expr.PGSetter).
func (e *PGEnv) Init(src Source, settings map[string]string, set func(name, value string, local bool) error) {
	e.src, e.values, e.set = src, settings, set
	if src != nil {
		e.cat = src.Catalog()
	}
}

// Env returns e as the functions' expr.PGEnv, an expr.PGSetter too when
// Init was given set.
func (e *PGEnv) Env() expr.PGEnv {
	if e.set != nil {
		return settablePGEnv{e}
	}
	return &e.pgEnv
}

// settablePGEnv is a PGEnv whose set_config() changes settings. It is one
// pointer, so making it an interface value allocates nothing.
type settablePGEnv struct{ *PGEnv }

func (e settablePGEnv) SetSetting(name, value string, local bool) error {
	return e.set(name, value, local)
}

// indexesByTable groups the catalog's indexes by table, in name order.
func indexesByTable(cat *catalog.Catalog) map[catalog.TableID][]*catalog.Index {
	out := map[catalog.TableID][]*catalog.Index{}
	for _, ix := range cat.AllIndexes() {
		out[ix.Table] = append(out[ix.Table], ix)
	}
	return out
}

func (e *pgEnv) objects() map[uint32]pgObject {
	e.once.Do(func() {
		e.objs = map[uint32]pgObject{}
		if e.cat == nil {
			return
		}
		ixs := indexesByTable(e.cat)
		for _, t := range e.cat.Tables() {
			idents := func(ids []catalog.ColumnID) []string {
				names := t.Names(ids)
				for i, n := range names {
					names[i] = expr.QuoteIdent(n)
				}
				return names
			}
			keyList := func(ids []catalog.ColumnID) string { return strings.Join(idents(ids), ", ") }
			colList := func(ids []catalog.ColumnID) string { return strings.Join(idents(ids), "\x00") }
			on := " ON public." + expr.QuoteIdent(t.Name) + " USING btree ("
			e.objs[TableOID(t.ID)] = pgObject{name: t.Name, table: t}
			if len(t.Key) > 0 {
				e.objs[oidPrimaryKeyBase+uint32(t.ID)] = pgObject{name: primaryKeyName(t), table: t,
					indexDef:  "CREATE UNIQUE INDEX " + expr.QuoteIdent(primaryKeyName(t)) + on + keyList(t.Key) + ")",
					indexCols: colList(t.Key)}
				e.objs[oidConstraintBase+uint32(t.ID)] = pgObject{name: primaryKeyName(t), table: t,
					constraintDef: "PRIMARY KEY (" + keyList(t.Key) + ")"}
			}
			for _, ix := range ixs[t.ID] {
				e.objs[oidIndexBase+uint32(ix.ID)] = pgObject{name: ix.Name, table: t,
					indexDef:  "CREATE INDEX " + expr.QuoteIdent(ix.Name) + on + keyList(ix.Columns) + ")",
					indexCols: colList(ix.Columns)}
			}
		}
		hs := viewHashes(e.cat)
		for _, v := range e.cat.Views() {
			e.objs[oidViewBase+hs[v.Name]] = pgObject{name: v.Name, viewDef: viewDef(v)}
		}
	})
	return e.objs
}

func (e *pgEnv) Setting(name string) (string, bool) {
	if e.settings == nil {
		v, ok := e.values[name]
		return v, ok
	}
	return e.settings(name)
}

// Size is the bytes of a table's shards; an index is a sort order over its
// table's parts and has none of its own.
func (e *pgEnv) Size(o uint32) (int64, bool) {
	obj, ok := e.objects()[o]
	if !ok {
		if _, ok := catalogRelByOID(o); ok {
			return 0, true
		}
		return 0, false
	}
	if obj.table == nil || o != TableOID(obj.table.ID) {
		return 0, true // a view stores nothing; an index is its table's order
	}
	var b uint64
	for _, s := range e.src.Shards(obj.table.ID) {
		b += s.Bytes
	}
	return int64(b), true
}

func (e *pgEnv) Name(kind expr.PGObject, o uint32) (string, bool) {
	switch kind {
	case expr.PGNamespace:
		for _, n := range namespaces {
			if n.oid == o {
				return n.name, true
			}
		}
		return "", false
	case expr.PGRole:
		if o == oidBootstrapRole {
			return BootstrapRole, true
		}
		if e.cat != nil {
			for name, x := range roleOIDs(e.cat) {
				if x == o {
					return name, true
				}
			}
		}
		return "", false
	}
	obj, ok := e.objects()[o]
	switch kind {
	case expr.PGRelation, expr.PGRelationSchema:
		if ok && obj.constraintDef == "" {
			if kind == expr.PGRelationSchema {
				return "public", true
			}
			return obj.name, true
		}
		if r, ok := catalogRelByOID(o); ok {
			if kind == expr.PGRelationSchema {
				return r.schema, true
			}
			if r.schema != "pg_catalog" {
				return r.schema + "." + r.t.Name, true // not on the search path: qualified, as regclass prints it
			}
			return r.t.Name, true
		}
	case expr.PGIndexDef:
		return obj.indexDef, ok && obj.indexDef != ""
	case expr.PGIndexColumns:
		return obj.indexCols, ok && obj.indexDef != ""
	case expr.PGConstraintDef:
		return obj.constraintDef, ok && obj.constraintDef != ""
	case expr.PGViewDef:
		return obj.viewDef, ok && obj.viewDef != ""
	}
	return "", false
}

func (e *pgEnv) OID(kind expr.PGObject, name string) (uint32, bool) {
	switch kind {
	case expr.PGNamespace:
		for _, n := range namespaces {
			if n.name == name {
				return n.oid, true
			}
		}
	case expr.PGRole:
		if name == BootstrapRole {
			return oidBootstrapRole, true
		}
		if e.cat != nil {
			if x, ok := roleOIDs(e.cat)[name]; ok {
				return x, true
			}
		}
	case expr.PGRelation:
		schema, name := splitQualified(name)
		if schema != "" && schema != "public" || e.cat == nil {
			r, ok := catalogRelByName(schema, name)
			return r.oid, ok
		}
		if t, ok := e.cat.Table(name); ok {
			return TableOID(t.ID), true
		}
		if ix, ok := e.cat.Index(name); ok {
			return oidIndexBase + uint32(ix.ID), true
		}
		if _, ok := e.cat.View(name); ok {
			return oidViewBase + viewHashes(e.cat)[name], true
		}
		for _, t := range e.cat.Tables() {
			if len(t.Key) > 0 && primaryKeyName(t) == name {
				return oidPrimaryKeyBase + uint32(t.ID), true
			}
		}
		if schema == "" {
			r, ok := catalogRelByName("pg_catalog", name)
			return r.oid, ok
		}
	}
	return 0, false
}

// FormatView, set by the session layer (which may parse SQL, as this
// package may not), lays a view's query out as PostgreSQL's
// pg_get_viewdef does, clause by clause; nil leaves the stored one-line
// text.
var FormatView func(v *catalog.View) string

// viewDef is a view's definition as pg_get_viewdef, pg_views and
// information_schema.views show it: its query, led by a space and ended by
// a semicolon, as PostgreSQL's.
func viewDef(v *catalog.View) string {
	if FormatView != nil {
		return FormatView(v) + ";"
	}
	return " " + v.Select + ";"
}
