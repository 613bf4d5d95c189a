package expr

import (
	crand "crypto/rand"
	"fmt"
	"math/rand/v2"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"

	"github.com/strata-db/strata/internal/sqlerr"
	"github.com/strata-db/strata/internal/types"
)

// The functions PostgreSQL clients call on connect and in their catalog
// queries (psql's \d, the drivers' introspection, BI tools' probes): version(),
// current_database(), format_type, pg_get_userbyid, … They answer for Strata's
// own objects, as seen through the pg_catalog relations of package system;
// docs/pg-catalog.md lists them and what is approximate.

// PGObject is a kind of object the PostgreSQL functions name or look up.
type PGObject uint8

// The kinds of PGObject.
const (
	// PGRelation is a table or an index (pg_class).
	PGRelation PGObject = iota
	// PGNamespace is a schema (pg_namespace).
	PGNamespace
	// PGRelationSchema is the schema of a relation: Name gives the schema's
	// name for a relation's oid.
	PGRelationSchema
	// PGRole is a user (pg_roles).
	PGRole
	// PGIndexDef is the CREATE INDEX statement of an index
	// (pg_get_indexdef).
	PGIndexDef
	// PGConstraintDef is the definition of a constraint
	// (pg_get_constraintdef), such as "PRIMARY KEY (account)".
	PGConstraintDef
	// PGIndexColumns is the columns of an index, each as an identifier,
	// separated by NUL bytes (which no identifier holds).
	PGIndexColumns
	// PGViewDef is the definition of a view as pg_get_viewdef returns it:
	// its query laid out as PostgreSQL does, " SELECT …;".
	PGViewDef
)

// PGEnv is what the PostgreSQL functions read beyond their arguments: the
// statement's session settings and its snapshot's catalog. The session layer
// implements it (package system does the catalog part); a nil PGEnv makes
// the functions that need one fail with a clear error.
type PGEnv interface {
	// Setting returns a session setting by its lower-case name.
	Setting(name string) (string, bool)
	// Name returns the name (or definition, for PGIndexDef and
	// PGConstraintDef) of the object of that kind and oid.
	Name(kind PGObject, oid uint32) (string, bool)
	// OID returns the oid of the object of that kind and name.
	OID(kind PGObject, name string) (uint32, bool)
	// Size returns the bytes stored for the relation of that oid.
	Size(oid uint32) (int64, bool)
}

// PGTypeInfo is one row of pg_type: a PostgreSQL type a Strata column is
// shown as, or one that catalog relations use.
type PGTypeInfo struct {
	OID      uint32
	Name     string // typname
	Len      int16  // typlen; -1 for variable length
	Category string // typcategory
	Array    uint32 // typarray: the oid of the array type
	Elem     uint32 // typelem: the element type of an array type
}

// The type oids of PostgreSQL that Strata uses.
const (
	OIDBool        = 16
	OIDBytea       = 17
	OIDChar        = 18
	OIDName        = 19
	OIDInt8        = 20
	OIDInt2        = 21
	OIDInt4        = 23
	OIDText        = 25
	OIDOid         = 26
	OIDFloat4      = 700
	OIDFloat8      = 701
	OIDVarchar     = 1043
	OIDDate        = 1082
	OIDTimestamp   = 1114
	OIDTimestamptz = 1184
	OIDInterval    = 1186
	OIDNumeric     = 1700
	OIDUUID        = 2950
)

var pgTypes = []PGTypeInfo{
	{OIDBool, "bool", 1, "B", 1000, 0}, {OIDBytea, "bytea", -1, "U", 1001, 0}, {OIDChar, "char", 1, "Z", 1002, 0},
	{OIDName, "name", 64, "S", 1003, 0}, {OIDInt8, "int8", 8, "N", 1016, 0}, {OIDInt2, "int2", 2, "N", 1005, 0},
	{OIDInt4, "int4", 4, "N", 1007, 0}, {OIDText, "text", -1, "S", 1009, 0}, {OIDOid, "oid", 4, "N", 1028, 0},
	{OIDFloat4, "float4", 4, "N", 1021, 0}, {OIDFloat8, "float8", 8, "N", 1022, 0},
	{OIDVarchar, "varchar", -1, "S", 1015, 0}, {OIDDate, "date", 4, "D", 1182, 0},
	{OIDTimestamp, "timestamp", 8, "D", 1115, 0}, {OIDTimestamptz, "timestamptz", 8, "D", 1185, 0},
	{OIDInterval, "interval", 16, "T", 1187, 0},
	{OIDNumeric, "numeric", -1, "N", 1231, 0}, {OIDUUID, "uuid", 16, "U", 2951, 0},
	{1000, "_bool", -1, "A", 0, OIDBool}, {1001, "_bytea", -1, "A", 0, OIDBytea}, {1002, "_char", -1, "A", 0, OIDChar},
	{1003, "_name", -1, "A", 0, OIDName}, {1005, "_int2", -1, "A", 0, OIDInt2}, {1007, "_int4", -1, "A", 0, OIDInt4},
	{1009, "_text", -1, "A", 0, OIDText}, {1015, "_varchar", -1, "A", 0, OIDVarchar},
	{1016, "_int8", -1, "A", 0, OIDInt8}, {1021, "_float4", -1, "A", 0, OIDFloat4},
	{1022, "_float8", -1, "A", 0, OIDFloat8}, {1028, "_oid", -1, "A", 0, OIDOid},
	{1115, "_timestamp", -1, "A", 0, OIDTimestamp}, {1182, "_date", -1, "A", 0, OIDDate},
	{1185, "_timestamptz", -1, "A", 0, OIDTimestamptz}, {1187, "_interval", -1, "A", 0, OIDInterval},
	{1231, "_numeric", -1, "A", 0, OIDNumeric},
	{2951, "_uuid", -1, "A", 0, OIDUUID},
}

// PGTypes returns the rows of pg_type, in oid order of the base types
// followed by their array types.
func PGTypes() []PGTypeInfo { return pgTypes }

// PGType returns the PostgreSQL type oid and type modifier (atttypmod) a
// Strata type is shown as, to clients and in pg_attribute: the integers
// wider than int8 and the unsigned ones that do not fit the next signed
// type are numeric with the precision that holds their range, DATETIME64 is
// timestamptz with its precision. typmod is -1 where PostgreSQL would have
// none.
func PGType(t types.Type) (oid uint32, typmod int32) {
	numeric := func(p, s int) (uint32, int32) { return OIDNumeric, int32(p<<16|s) + 4 }
	switch t.Kind {
	case types.Bool:
		return OIDBool, -1
	case types.Int8, types.Int16, types.Uint8:
		return OIDInt2, -1
	case types.Int32, types.Uint16:
		return OIDInt4, -1
	case types.Int64, types.Uint32:
		return OIDInt8, -1
	case types.Uint64:
		return numeric(20, 0)
	case types.Int128, types.Uint128:
		return numeric(39, 0)
	case types.Int256:
		return numeric(77, 0)
	case types.Uint256:
		return numeric(78, 0)
	case types.Decimal:
		return numeric(int(t.Precision), int(t.Scale))
	case types.Float32:
		return OIDFloat4, -1
	case types.Float64:
		return OIDFloat8, -1
	case types.String:
		if t.Len > 0 {
			return OIDVarchar, t.Len + 4
		}
		return OIDText, -1
	case types.Bytes:
		return OIDBytea, -1
	case types.Date:
		return OIDDate, -1
	case types.DateTime64:
		if t.Precision == 6 {
			return OIDTimestamptz, -1
		}
		return OIDTimestamptz, int32(t.Precision)
	case types.UUID:
		return OIDUUID, -1
	case types.Interval:
		return OIDInterval, -1
	}
	return OIDText, -1
}

// FormatType is format_type(oid, typmod): the SQL name of a PostgreSQL
// type, as psql's \d prints it.
func FormatType(oid uint32, typmod int32) string {
	switch oid {
	case OIDBool:
		return "boolean"
	case OIDInt8:
		return "bigint"
	case OIDInt2:
		return "smallint"
	case OIDInt4:
		return "integer"
	case OIDFloat4:
		return "real"
	case OIDFloat8:
		return "double precision"
	case OIDChar:
		return `"char"`
	case OIDVarchar:
		if typmod >= 4 {
			return fmt.Sprintf("character varying(%d)", typmod-4)
		}
		return "character varying"
	case OIDNumeric:
		if typmod >= 4 {
			return fmt.Sprintf("numeric(%d,%d)", (typmod-4)>>16, (typmod-4)&0xffff)
		}
		return "numeric"
	case OIDTimestamptz, OIDTimestamp:
		zone := " with time zone"
		if oid == OIDTimestamp {
			zone = " without time zone"
		}
		if typmod >= 0 {
			return fmt.Sprintf("timestamp(%d)%s", typmod, zone)
		}
		return "timestamp" + zone
	}
	for _, t := range pgTypes {
		if t.OID == oid {
			if t.Elem != 0 {
				return FormatType(t.Elem, typmod) + "[]"
			}
			return t.Name
		}
	}
	return "???"
}

// PGVersion is what version() returns. Clients parse the leading
// "PostgreSQL 15.0" to pick their queries; the rest says what answers.
var PGVersion = fmt.Sprintf("PostgreSQL 15.0 (Strata) on %s-%s, compiled by %s, 64-bit",
	runtime.GOARCH, runtime.GOOS, runtime.Version())

// DatabaseName is the one database of a data directory (issue 5).
const DatabaseName = "strata"

// NewFuncEnv is NewFunc with the PostgreSQL compatibility functions too,
// which read env.
func NewFuncEnv(name string, argTypes []types.Type, pos int, env PGEnv) (*Func, Signature, error) {
	f, sig, ok, err := pgFunc(name, argTypes, pos, env)
	if ok {
		return f, sig, err
	}
	return NewFunc(name, argTypes, pos)
}

var (
	tText = types.Of(types.String)
	tOid  = types.Of(types.Uint32)
	tBool = types.Of(types.Bool)
	tInt4 = types.Of(types.Int32)
	tInt8 = types.Of(types.Int64)
)

func oidValue(x uint32) types.Value {
	v, _ := types.NewUint(tOid, uint64(x))
	return v
}

// pgFunc binds the PostgreSQL function name, reporting ok false when name
// is not one.
func pgFunc(name string, argTypes []types.Type, pos int, env PGEnv) (f *Func, sig Signature, ok bool, err error) {
	n := len(argTypes)
	bad := func() (*Func, Signature, bool, error) {
		ts := make([]string, n)
		for i, t := range argTypes {
			ts[i] = t.String()
		}
		return nil, Signature{}, true, sqlerr.New(sqlerr.CodeUndefinedFunction, "function %s(%s) does not exist", name, strings.Join(ts, ", ")).
			WithPos(pos).WithHint("No function matches the given name and argument types.")
	}
	// params fixes the parameter types, checking the count against the
	// shortest and longest argument lists.
	params := func(min int, ps ...types.Type) bool {
		if n < min || n > len(ps) {
			return false
		}
		sig.Params = ps[:n]
		return true
	}
	needEnv := func() error {
		if env == nil {
			return sqlerr.NotSupported(pos, "%s() needs a session", name)
		}
		return nil
	}
	f = &Func{Name: name, Pos: pos, strict: true}
	sig.Result = tText
	switch name {
	case "version":
		if !params(0) {
			return bad()
		}
		f.fn = func([]types.Value, types.Type) (types.Value, error) { return types.NewString(PGVersion), nil }
	case "current_database", "current_catalog":
		if !params(0) {
			return bad()
		}
		f.fn = func([]types.Value, types.Type) (types.Value, error) { return types.NewString(DatabaseName), nil }
	case "current_user", "session_user", "current_role":
		if !params(0) {
			return bad()
		}
		if err := needEnv(); err != nil {
			return nil, sig, true, err
		}
		f.fn = func([]types.Value, types.Type) (types.Value, error) {
			u, _ := env.Setting("session_authorization")
			return types.NewString(u), nil
		}
	case "current_schema":
		if !params(0) {
			return bad()
		}
		if err := needEnv(); err != nil {
			return nil, sig, true, err
		}
		f.fn = func([]types.Value, types.Type) (types.Value, error) {
			for _, s := range searchPath(env) {
				if _, ok := env.OID(PGNamespace, s); ok {
					return types.NewString(s), nil
				}
			}
			return types.Null(tText), nil
		}
	case "current_schemas":
		if !params(1, tBool) {
			return bad()
		}
		if err := needEnv(); err != nil {
			return nil, sig, true, err
		}
		f.fn = func(a []types.Value, _ types.Type) (types.Value, error) {
			var out []string
			if a[0].Bool() {
				out = append(out, "pg_catalog")
			}
			for _, s := range searchPath(env) {
				if _, ok := env.OID(PGNamespace, s); ok && s != "pg_catalog" {
					out = append(out, s)
				}
			}
			return types.NewString(arrayText(out)), nil
		}
	case "current_setting":
		if !params(1, tText, tBool) {
			return bad()
		}
		if err := needEnv(); err != nil {
			return nil, sig, true, err
		}
		f.fn = func(a []types.Value, _ types.Type) (types.Value, error) {
			v, ok := env.Setting(strings.ToLower(a[0].Str()))
			if !ok {
				if len(a) == 2 && a[1].Bool() {
					return types.Null(tText), nil
				}
				return types.Value{}, sqlerr.New(sqlerr.CodeUndefinedObject, "unrecognized configuration parameter %q", a[0].Str())
			}
			return types.NewString(v), nil
		}
	case "set_config":
		ok := params(3, tText, tText, tBool)
		return setConfig(f, sig, ok, env, pos)
	case "pg_sleep":
		// pg_sleep(seconds) waits, once per row, and returns NULL (void in
		// PostgreSQL). A cancel or a statement timeout ends the wait
		// (Func.evalSleep); it runs only when the query does, never when
		// the planner folds constants.
		if !params(1, types.Of(types.Float64)) {
			return bad()
		}
		f.strict = false
		f.effect = true
		f.fn = func([]types.Value, types.Type) (types.Value, error) { return types.Null(tText), nil }
	case "pg_backend_pid":
		if !params(0) {
			return bad()
		}
		if err := needEnv(); err != nil {
			return nil, sig, true, err
		}
		sig.Result = tInt4
		f.fn = func([]types.Value, types.Type) (types.Value, error) {
			s, _ := env.Setting("strata.backend_pid")
			pid, _ := strconv.ParseInt(s, 10, 32)
			return types.NewInt(tInt4, pid)
		}
	case "format_type":
		if !params(2, tOid, tInt4) {
			return bad()
		}
		f.strict = false
		f.fn = func(a []types.Value, _ types.Type) (types.Value, error) {
			if a[0].IsNull() {
				return types.Null(tText), nil
			}
			mod := int32(-1)
			if !a[1].IsNull() {
				mod = int32(a[1].Int64())
			}
			return types.NewString(FormatType(uint32(a[0].Uint64()), mod)), nil
		}
	case "pg_get_userbyid":
		if !params(1, tOid) {
			return bad()
		}
		if err := needEnv(); err != nil {
			return nil, sig, true, err
		}
		f.fn = func(a []types.Value, _ types.Type) (types.Value, error) {
			oid := uint32(a[0].Uint64())
			if s, ok := env.Name(PGRole, oid); ok {
				return types.NewString(s), nil
			}
			return types.NewString(fmt.Sprintf("unknown (OID=%d)", oid)), nil
		}
	case "pg_table_is_visible":
		// Visible means its schema is pg_catalog (always searched first) or
		// on the search path; NULL for an oid that names no relation.
		if !params(1, tOid) {
			return bad()
		}
		if err := needEnv(); err != nil {
			return nil, sig, true, err
		}
		sig.Result = tBool
		f.fn = func(a []types.Value, _ types.Type) (types.Value, error) {
			schema, ok := env.Name(PGRelationSchema, uint32(a[0].Uint64()))
			if !ok {
				return types.Null(tBool), nil
			}
			visible := schema == "pg_catalog"
			for _, s := range searchPath(env) {
				visible = visible || s == schema
			}
			return types.NewBool(visible), nil
		}
	case "pg_type_is_visible", "pg_function_is_visible":
		// Every type and function is in pg_catalog, which is always
		// searched.
		if !params(1, tOid) {
			return bad()
		}
		sig.Result = tBool
		f.fn = func([]types.Value, types.Type) (types.Value, error) { return types.NewBool(true), nil }
	case "has_table_privilege", "has_schema_privilege", "has_database_privilege", "has_column_privilege",
		"has_any_column_privilege", "has_function_privilege", "has_sequence_privilege":
		// Strata has no privileges beyond logging in: every user may do
		// everything to every object (SPEC R13.6).
		if n < 2 || n > 4 {
			return bad()
		}
		sig.Params = make([]types.Type, n)
		for i, t := range argTypes {
			sig.Params[i] = t
			if t.Kind == types.Unknown {
				sig.Params[i] = tText
			}
		}
		sig.Result = tBool
		f.fn = func([]types.Value, types.Type) (types.Value, error) { return types.NewBool(true), nil }
	case "obj_description", "col_description", "shobj_description":
		// Strata has no COMMENT ON: every description is NULL, as for an
		// object without a comment in PostgreSQL.
		if n < 1 || n > 2 {
			return bad()
		}
		sig.Params = make([]types.Type, n)
		for i, t := range argTypes {
			sig.Params[i] = t
			if t.Kind == types.Unknown {
				sig.Params[i] = tText
			}
		}
		f.strict = false
		f.fn = func([]types.Value, types.Type) (types.Value, error) { return types.Null(tText), nil }
	case "pg_get_expr":
		// pg_attrdef.adbin holds the expression's SQL text, not a parsed
		// node tree, so deparsing it is returning it.
		if !params(2, tText, tOid, tBool) {
			return bad()
		}
		f.fn = func(a []types.Value, _ types.Type) (types.Value, error) { return a[0], nil }
	case "pg_get_indexdef", "pg_get_constraintdef":
		ps := []types.Type{tOid, tInt4, tBool}
		kind := PGIndexDef
		if name == "pg_get_constraintdef" {
			ps, kind = []types.Type{tOid, tBool}, PGConstraintDef
		}
		if !params(1, ps...) {
			return bad()
		}
		if err := needEnv(); err != nil {
			return nil, sig, true, err
		}
		f.fn = func(a []types.Value, _ types.Type) (types.Value, error) {
			if kind == PGIndexDef && len(a) > 1 && a[1].Int64() != 0 {
				// The definition of one column of the index: its name.
				cols, ok := env.Name(PGIndexColumns, uint32(a[0].Uint64()))
				list := strings.Split(cols, "\x00")
				if i := a[1].Int64(); ok && i >= 1 && i <= int64(len(list)) {
					return types.NewString(list[i-1]), nil
				}
				return types.Null(tText), nil
			}
			if s, ok := env.Name(kind, uint32(a[0].Uint64())); ok {
				if kind == PGIndexDef && len(a) == 3 && a[2].Bool() {
					// Pretty-printed, a name on the search path goes unqualified.
					s = strings.Replace(s, " ON public.", " ON ", 1)
				}
				return types.NewString(s), nil
			}
			return types.Null(tText), nil
		}
	case "pg_encoding_to_char":
		if !params(1, tInt4) {
			return bad()
		}
		f.fn = func(a []types.Value, _ types.Type) (types.Value, error) {
			if a[0].Int64() == 6 {
				return types.NewString("UTF8"), nil
			}
			return types.NewString(""), nil
		}
	case "quote_ident":
		if !params(1, tText) {
			return bad()
		}
		f.fn = func(a []types.Value, _ types.Type) (types.Value, error) {
			return types.NewString(QuoteIdent(a[0].Str())), nil
		}
	case "array_to_string":
		// Arrays are shown as their PostgreSQL text form in catalog
		// relations (docs/pg-catalog.md); this joins the elements of one.
		if !params(2, tText, tText, tText) {
			return bad()
		}
		f.fn = func(a []types.Value, _ types.Type) (types.Value, error) {
			elems, nulls, err := parseArrayText(a[0].Str())
			if err != nil {
				return types.Value{}, err
			}
			var out []string
			for i, e := range elems {
				if nulls[i] {
					if len(a) == 3 && !a[2].IsNull() {
						out = append(out, a[2].Str())
					}
					continue
				}
				out = append(out, e)
			}
			return types.NewString(strings.Join(out, a[1].Str())), nil
		}
	case "textregexeq", "textregexne", "texticregexeq", "texticregexne":
		if !params(2, tText, tText) {
			return bad()
		}
		sig.Result = tBool
		want := name == "textregexeq" || name == "texticregexeq"
		fold := strings.HasPrefix(name, "textic")
		var cache regexCache
		f.fn = func(a []types.Value, _ types.Type) (types.Value, error) {
			re, err := cache.get(a[1].Str(), fold)
			if err != nil {
				return types.Value{}, err
			}
			return types.NewBool(re.MatchString(a[0].Str()) == want), nil
		}
	case "regclass", "regnamespace", "regrole", "regtype", "to_regclass", "to_regnamespace", "to_regrole", "to_regtype":
		// to_regclass(text) … are the casts that give NULL instead of an
		// error for a name nothing has.
		toReg := strings.HasPrefix(name, "to_")
		name := strings.TrimPrefix(name, "to_")
		if toReg && (n != 1 || !argTypes[0].Kind.IsInteger() && argTypes[0].Kind != types.String && argTypes[0].Kind != types.Unknown) {
			return bad()
		}
		kind := map[string]PGObject{"regclass": PGRelation, "regnamespace": PGNamespace, "regrole": PGRole}[name]
		what := map[string]string{"regclass": "relation", "regnamespace": "schema", "regrole": "role", "regtype": "type"}[name]
		if n != 1 {
			return bad()
		}
		if name != "regtype" {
			if err := needEnv(); err != nil {
				return nil, sig, true, err
			}
		}
		if argTypes[0].Kind.IsInteger() {
			// An oid shows as the object's name, or as the number when no
			// object has it, as PostgreSQL's reg* output does.
			sig.Params = []types.Type{tOid}
			f.fn = func(a []types.Value, _ types.Type) (types.Value, error) {
				oid := uint32(a[0].Uint64())
				if name == "regtype" {
					if s := FormatType(oid, -1); s != "???" {
						return types.NewString(s), nil
					}
				} else if s, ok := env.Name(kind, oid); ok {
					return types.NewString(s), nil
				}
				return types.NewString(strconv.FormatUint(uint64(oid), 10)), nil
			}
			break
		}
		if argTypes[0].Kind != types.String && argTypes[0].Kind != types.Unknown {
			return bad()
		}
		sig.Params, sig.Result = []types.Type{tText}, tOid
		f.fn = func(a []types.Value, _ types.Type) (types.Value, error) {
			s := a[0].Str()
			if name == "regtype" {
				s = strings.TrimPrefix(s, "pg_catalog.")
				for _, t := range pgTypes {
					if t.Name == s || FormatType(t.OID, -1) == s {
						return oidValue(t.OID), nil
					}
				}
			} else if oid, ok := env.OID(kind, s); ok {
				return oidValue(oid), nil
			}
			if x, err := strconv.ParseUint(s, 10, 32); err == nil {
				return oidValue(uint32(x)), nil
			}
			if toReg {
				return types.Null(tOid), nil
			}
			code := sqlerr.CodeUndefinedObject
			if name == "regclass" {
				code = sqlerr.CodeUndefinedTable
			}
			return types.Value{}, sqlerr.New(code, "%s %q does not exist", what, a[0].Str())
		}
	case "array":
		// ARRAY(query), parsed as array of the scalar subquery: one row or
		// none (docs/pg-catalog.md).
		if n != 1 {
			return bad()
		}
		sig.Params = []types.Type{argTypes[0]}
		if argTypes[0].Kind == types.Unknown {
			sig.Params[0] = tText
		}
		f.strict = false
		f.fn = func(a []types.Value, _ types.Type) (types.Value, error) {
			if a[0].IsNull() {
				return types.NewString("{}"), nil
			}
			return types.NewString(arrayText([]string{a[0].String()})), nil
		}
	case "anyarray_op":
		// x = ANY(a) and x <> ALL(a) over an array's text form, with
		// PostgreSQL's three-valued result: NULL when no element decides
		// and an element or x is NULL.
		if n < 3 || n > 4 || argTypes[2].Kind != types.String && argTypes[2].Kind != types.Unknown {
			return bad()
		}
		elem := argTypes[1]
		if elem.Kind == types.Unknown {
			elem = tText
		}
		sig.Params = []types.Type{tText, elem, tText, tBool}[:n]
		sig.Result = tBool
		f.strict = false
		f.fn = func(a []types.Value, _ types.Type) (types.Value, error) {
			all := len(a) == 4 && a[3].Bool()
			if a[2].IsNull() {
				return types.Null(tBool), nil
			}
			elems, nulls, err := parseArrayText(a[2].Str())
			if err != nil {
				return types.Value{}, err
			}
			unknown := a[1].IsNull() && len(elems) > 0
			for i, e := range elems {
				if nulls[i] || a[1].IsNull() {
					unknown = true
					continue
				}
				v, err := types.Cast(types.NewString(e), elem)
				if err != nil {
					return types.Value{}, err
				}
				eq := types.Equal(v, a[1])
				if a[0].Str() == "<>" {
					eq = !eq
				}
				if eq != all {
					return types.NewBool(!all), nil
				}
			}
			if unknown {
				return types.Null(tBool), nil
			}
			return types.NewBool(all), nil
		}
	case "array_element":
		// a[i] over an array's text form: NULL outside its bounds, as in
		// PostgreSQL.
		if !params(2, tText, tInt8) {
			return bad()
		}
		f.fn = func(a []types.Value, _ types.Type) (types.Value, error) {
			elems, nulls, err := parseArrayText(a[0].Str())
			if err != nil {
				return types.Value{}, err
			}
			i := a[1].Int64()
			if i < 1 || i > int64(len(elems)) || nulls[i-1] {
				return types.Null(tText), nil
			}
			return types.NewString(elems[i-1]), nil
		}
	case "array_upper", "array_length":
		if !params(2, tText, tInt4) {
			return bad()
		}
		sig.Result = tInt4
		f.fn = func(a []types.Value, _ types.Type) (types.Value, error) {
			elems, _, err := parseArrayText(a[0].Str())
			if err != nil {
				return types.Value{}, err
			}
			if a[1].Int64() != 1 || len(elems) == 0 {
				return types.Null(tInt4), nil
			}
			return types.NewInt(tInt4, int64(len(elems)))
		}
	case "pg_get_viewdef":
		// A view's definition as the environment gives it (PGViewDef:
		// PostgreSQL's layout, led by a space, ended by a semicolon); the
		// second argument (pretty) changes nothing.
		if !params(1, tOid, tBool) {
			return bad()
		}
		if err := needEnv(); err != nil {
			return nil, sig, true, err
		}
		f.fn = func(a []types.Value, _ types.Type) (types.Value, error) {
			if s, ok := env.Name(PGViewDef, uint32(a[0].Uint64())); ok {
				return types.NewString(s), nil
			}
			return types.Null(tText), nil
		}
	case "pg_get_function_result", "pg_get_function_arguments", "pg_get_function_identity_arguments",
		"pg_get_triggerdef", "pg_get_ruledef", "pg_get_statisticsobjdef_columns":
		// pg_proc, pg_trigger, pg_rewrite and pg_statistic_ext are
		// empty, so no oid names one of theirs: NULL, as PostgreSQL
		// answers for an oid that names nothing.
		if n < 1 || n > 2 {
			return bad()
		}
		sig.Params = []types.Type{tOid, tBool}[:n]
		f.fn = func([]types.Value, types.Type) (types.Value, error) { return types.Null(tText), nil }
	case "pg_is_in_recovery":
		// One process serves the data directory and takes writes: never a
		// standby.
		if !params(0) {
			return bad()
		}
		sig.Result = tBool
		f.fn = func([]types.Value, types.Type) (types.Value, error) { return types.NewBool(false), nil }
	case "pg_get_serial_sequence", "pg_get_partkeydef":
		// Strata has no sequences and no partitioned tables: no column owns
		// a sequence, no table has a partition key.
		ps := []types.Type{tText, tText}
		if name == "pg_get_partkeydef" {
			ps = []types.Type{tOid}
		}
		if !params(len(ps), ps...) {
			return bad()
		}
		f.fn = func([]types.Value, types.Type) (types.Value, error) { return types.Null(tText), nil }
	case "pg_client_encoding":
		if !params(0) {
			return bad()
		}
		if err := needEnv(); err != nil {
			return nil, sig, true, err
		}
		f.fn = func([]types.Value, types.Type) (types.Value, error) {
			v, _ := env.Setting("client_encoding")
			return types.NewString(v), nil
		}
	case "pg_relation_is_publishable":
		if !params(1, tOid) {
			return bad()
		}
		if err := needEnv(); err != nil {
			return nil, sig, true, err
		}
		sig.Result = tBool
		f.fn = func(a []types.Value, _ types.Type) (types.Value, error) {
			_, ok := env.Name(PGRelation, uint32(a[0].Uint64()))
			return types.NewBool(ok), nil
		}
	case "pg_table_size", "pg_relation_size", "pg_total_relation_size", "pg_indexes_size":
		if !params(1, tOid, tText) {
			return bad()
		}
		if err := needEnv(); err != nil {
			return nil, sig, true, err
		}
		sig.Result = tInt8
		f.fn = func(a []types.Value, _ types.Type) (types.Value, error) {
			if name == "pg_indexes_size" {
				return types.NewInt64(0), nil // an index is a sort order of its table's parts, not stored apart
			}
			if b, ok := env.Size(uint32(a[0].Uint64())); ok {
				return types.NewInt64(b), nil
			}
			return types.Null(tInt8), nil
		}
	case "pg_size_pretty":
		if !params(1, tInt8) {
			return bad()
		}
		f.fn = func(a []types.Value, _ types.Type) (types.Value, error) {
			return types.NewString(SizePretty(a[0].Int64())), nil
		}
	case "random":
		// A uniform float in [0, 1), another on every call: the planner
		// neither folds nor moves it (plan.volatileFunc), so a WITH query
		// that calls it is computed once and all its readers agree.
		if !params(0) {
			return bad()
		}
		sig.Result = types.Of(types.Float64)
		f.fn = func([]types.Value, types.Type) (types.Value, error) {
			return types.NewFloat64(rand.Float64()), nil
		}
	case "gen_random_uuid":
		// A version 4 UUID (RFC 9562), another on every call, as random().
		if !params(0) {
			return bad()
		}
		sig.Result = types.Of(types.UUID)
		f.fn = func([]types.Value, types.Type) (types.Value, error) {
			var u [16]byte
			if _, err := crand.Read(u[:]); err != nil {
				return types.Value{}, err
			}
			u[6] = u[6]&0x0f | 0x40 // version 4
			u[8] = u[8]&0x3f | 0x80 // the RFC's variant
			return types.NewUUID(u), nil
		}
	default:
		return nil, Signature{}, false, nil
	}
	f.T = sig.Result
	return f, sig, true, nil
}

// SizePretty is pg_size_pretty: PostgreSQL's rule, bytes below 10 kB,
// then the largest unit that keeps the value below 20 480 of it, rounded
// half up.
func SizePretty(b int64) string {
	const limit = 10 * 1024
	abs := func(x int64) int64 {
		if x < 0 {
			return -x
		}
		return x
	}
	if abs(b) < limit {
		return strconv.FormatInt(b, 10) + " bytes"
	}
	half := func(x int64) int64 {
		if x < 0 {
			return (x - 1) / 2
		}
		return (x + 1) / 2
	}
	x := b >> 9 // one extra bit kept for the rounding
	for _, u := range []string{"kB", "MB", "GB", "TB"} {
		if abs(x) < 2*limit-1 || u == "TB" {
			return strconv.FormatInt(half(x), 10) + " " + u
		}
		x >>= 10
	}
	return ""
}

// searchPath returns the schemas of the search_path setting, "$user"
// replaced by the session user.
func searchPath(env PGEnv) []string {
	v, _ := env.Setting("search_path")
	var out []string
	for _, s := range strings.Split(v, ",") {
		s = strings.Trim(strings.TrimSpace(s), `"`)
		if s == "$user" {
			s, _ = env.Setting("session_authorization")
		}
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}

// QuoteIdent is quote_ident: s as an identifier, double-quoted unless it is
// a lower-case name that needs no quotes.
func QuoteIdent(s string) string {
	plain := s != ""
	for i, c := range s {
		if !(c >= 'a' && c <= 'z' || c == '_' || i > 0 && (c >= '0' && c <= '9' || c == '$')) {
			plain = false
			break
		}
	}
	if plain {
		return s
	}
	return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
}

// arrayText is the PostgreSQL text form of a one-dimensional text array.
func arrayText(elems []string) string {
	var b strings.Builder
	b.WriteByte('{')
	for i, e := range elems {
		if i > 0 {
			b.WriteByte(',')
		}
		if e == "" || strings.ContainsAny(e, `{},"\ `) || strings.EqualFold(e, "null") {
			b.WriteString(`"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(e) + `"`)
		} else {
			b.WriteString(e)
		}
	}
	b.WriteByte('}')
	return b.String()
}

// parseArrayText reads the PostgreSQL text form of a one-dimensional array:
// {a,"b c",NULL}.
func parseArrayText(s string) (elems []string, nulls []bool, err error) {
	bad := func() ([]string, []bool, error) {
		return nil, nil, sqlerr.New(sqlerr.CodeInvalidText, "malformed array literal: %q", s)
	}
	s = strings.TrimSpace(s)
	if len(s) < 2 || s[0] != '{' || s[len(s)-1] != '}' {
		return bad()
	}
	body := s[1 : len(s)-1]
	if strings.TrimSpace(body) == "" {
		return nil, nil, nil
	}
	for i := 0; i <= len(body); {
		for i < len(body) && body[i] == ' ' {
			i++
		}
		var e strings.Builder
		quoted := false
		if i < len(body) && body[i] == '"' {
			quoted = true
			i++
			for ; i < len(body) && body[i] != '"'; i++ {
				if body[i] == '\\' && i+1 < len(body) {
					i++
				}
				e.WriteByte(body[i])
			}
			if i >= len(body) {
				return bad()
			}
			i++
			for i < len(body) && body[i] == ' ' {
				i++
			}
		} else {
			for ; i < len(body) && body[i] != ','; i++ {
				if body[i] == '{' || body[i] == '"' {
					return bad() // nested arrays are not kept in catalog text
				}
				e.WriteByte(body[i])
			}
		}
		if i < len(body) && body[i] != ',' {
			return bad()
		}
		v := e.String()
		if !quoted {
			v = strings.TrimSpace(v)
		}
		elems = append(elems, v)
		nulls = append(nulls, !quoted && strings.EqualFold(v, "null"))
		i++
	}
	return elems, nulls, nil
}

// regexCache keeps the last compiled pattern of one call site: a pattern is
// nearly always a constant, so it is compiled once per statement.
type regexCache struct {
	mu      sync.Mutex
	pattern string
	flags   string
	global  bool
	re      *regexp.Regexp
}

// get compiles pattern for the ~ and ~* operators: PostgreSQL's default
// options (regexFlags), folding case for ~*.
func (c *regexCache) get(pattern string, fold bool) (*regexp.Regexp, error) {
	flags := ""
	if fold {
		flags = "i"
	}
	re, _, err := c.getFlags(pattern, flags)
	return re, err
}
