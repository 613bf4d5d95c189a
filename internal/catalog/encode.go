package catalog

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/strata-db/strata/internal/types"
)

// The encoding is JSON, chosen because the catalog is small, read once at
// startup and worth being able to read by eye during an incident:
//
//	{"format": 1, "minor": 0, "commit": 14, "next_table": 3, ...,
//	 "tables": [{"id": 1, "name": "s2", "mode": "versioned",
//	             "columns": [{"id": 1, "name": "k", "type": {"kind": "INT64"}, ...}], ...}],
//	 "policies": [...], "indexes": [...], "transformations": [...], "users": [...]}
//
// Compatibility rules (invariant 5 in doc.go):
//   - "format" is the major version. A reader refuses a larger one with
//     ErrNewerFormat: its meaning may have changed in ways it cannot see.
//   - "minor" grows when fields are added; readers ignore fields they do
//     not know, and a missing field reads as its zero value, so every
//     addition must give the zero value the old meaning.
//   - Enumerations (kinds, modes, roles, scopes) are written as names, not
//     numbers, so reordering a Go constant list cannot change a catalog.
//   - Lists are written sorted (tables by id, the rest by name): the same
//     catalog always encodes to the same bytes.

// FormatMajor and FormatMinor are the version this package writes.
const (
	FormatMajor = 1
	FormatMinor = 1 // 1: views
)

// ErrNewerFormat is returned (wrapped) by Decode for an encoding of a
// newer major format than this build knows.
var ErrNewerFormat = errors.New("catalog: encoding has a newer format")

// ErrCorrupt is returned (wrapped) by Decode for bytes that are not a
// well-formed catalog.
var ErrCorrupt = errors.New("catalog: corrupt encoding")

type fileJSON struct {
	Format          int              `json:"format"`
	Minor           int              `json:"minor"`
	Commit          uint64           `json:"commit"`
	NextTable       TableID          `json:"next_table"`
	NextIndex       IndexID          `json:"next_index"`
	NextTransform   TransformationID `json:"next_transformation"`
	Tables          []tableJSON      `json:"tables"`
	Policies        []policyJSON     `json:"policies"`
	Indexes         []indexJSON      `json:"indexes"`
	Transformations []transformJSON  `json:"transformations"`
	Users           []userJSON       `json:"users"`
	Views           []viewJSON       `json:"views,omitempty"`
}

type viewJSON struct {
	Name          string      `json:"name"`
	Select        string      `json:"select"`
	Columns       []string    `json:"columns"`
	Types         []typeJSON  `json:"types"`
	Sources       []TableID   `json:"sources,omitempty"`
	Views         []string    `json:"views,omitempty"`
	Reads         []ColumnKey `json:"reads,omitempty"`
	CreatedCommit uint64      `json:"created_commit"`
}

type tableJSON struct {
	ID            TableID            `json:"id"`
	Name          string             `json:"name"`
	Mode          string             `json:"mode"`
	Columns       []columnJSON       `json:"columns"`
	Dropped       []columnJSON       `json:"dropped,omitempty"`
	Key           []ColumnID         `json:"key,omitempty"`
	Groups        []groupJSON        `json:"groups,omitempty"`
	ShardBy       []ColumnID         `json:"shard_by,omitempty"`
	Shards        int                `json:"shards,omitempty"`
	ShardsAuto    bool               `json:"shards_auto,omitempty"`
	OrderBy       []ColumnID         `json:"order_by,omitempty"`
	Policies      Bindings           `json:"policies"`
	RetentionLog  []RetentionBinding `json:"retention_log,omitempty"`
	CreatedCommit uint64             `json:"created_commit"`
	AlteredCommit uint64             `json:"altered_commit"`
	Generation    uint64             `json:"generation"`
	NextColumn    ColumnID           `json:"next_column"`
	NextGroup     GroupID            `json:"next_group"`
}

type typeJSON struct {
	Kind      string `json:"kind"`
	Precision uint8  `json:"precision,omitempty"`
	Scale     uint8  `json:"scale,omitempty"`
	Len       int32  `json:"len,omitempty"`
	TZ        string `json:"tz,omitempty"`
}

type columnJSON struct {
	ID            ColumnID `json:"id"`
	Name          string   `json:"name"`
	Type          typeJSON `json:"type"`
	Nullable      bool     `json:"nullable,omitempty"`
	Default       *Default `json:"default,omitempty"`
	Introduced    *Default `json:"introduced,omitempty"`
	Group         GroupID  `json:"group"`
	AddedCommit   uint64   `json:"added_commit"`
	DroppedCommit uint64   `json:"dropped_commit,omitempty"`
	Codec         string   `json:"codec"`
	CodecNamed    bool     `json:"codec_named,omitempty"`
	Position      int      `json:"position,omitempty"`
}

type groupJSON struct {
	ID          GroupID    `json:"id"`
	Name        string     `json:"name"`
	Columns     []ColumnID `json:"columns,omitempty"`
	ValidBy     []ColumnID `json:"valid_by,omitempty"`
	RevisionBy  []ColumnID `json:"revision_by,omitempty"`
	Owner       string     `json:"owner,omitempty"`
	AddedCommit uint64     `json:"added_commit"`
}

type valueJSON struct {
	Kind string      `json:"kind"`
	Text string      `json:"text,omitempty"`
	Int  int64       `json:"int,omitempty"`
	List []valueJSON `json:"list,omitempty"`
}

type settingJSON struct {
	Key   string    `json:"key"`
	Value valueJSON `json:"value"`
	// Nanos and Int are the parsed meaning, stored so that a later, stricter
	// parser never turns an accepted catalog into an unreadable one.
	Nanos int64 `json:"nanos,omitempty"`
	Int   int64 `json:"int,omitempty"`
}

type policyJSON struct {
	Name          string        `json:"name"`
	Role          string        `json:"role"`
	Settings      []settingJSON `json:"settings,omitempty"`
	CreatedCommit uint64        `json:"created_commit"`
}

type indexJSON struct {
	ID            IndexID    `json:"id"`
	Name          string     `json:"name"`
	Table         TableID    `json:"table"`
	Columns       []ColumnID `json:"columns"`
	Scope         string     `json:"scope"`
	Policy        string     `json:"policy,omitempty"`
	CreatedCommit uint64     `json:"created_commit"`
}

type transformJSON struct {
	ID            TransformationID `json:"id"`
	Name          string           `json:"name"`
	Target        TableID          `json:"target"`
	Group         GroupID          `json:"group"`
	Select        string           `json:"select"`
	Sources       []TableID        `json:"sources"`
	Reads         []ColumnKey      `json:"reads,omitempty"`
	CreatedCommit uint64           `json:"created_commit"`
	Stateful      bool             `json:"stateful,omitempty"`
}

type userJSON struct {
	Name          string `json:"name"`
	Verifier      string `json:"verifier,omitempty"`
	CreatedCommit uint64 `json:"created_commit"`
	AlteredCommit uint64 `json:"altered_commit"`
}

var valueKindNames = map[ValueKind]string{
	ValueString: "string", ValueInteger: "integer", ValueInterval: "interval", ValueIdent: "ident", ValueList: "list",
}

// kindByName maps every types.Kind name to its kind; built from
// Kind.String so that kinds added to types are known without a change here.
var kindByName = func() map[string]types.Kind {
	m := map[string]types.Kind{}
	for k := types.Kind(0); k < 255; k++ {
		m[k.String()] = k
	}
	return m
}()

// Encode returns the catalog's stable, versioned encoding.
func (c *Catalog) Encode() ([]byte, error) {
	f := fileJSON{
		Format: FormatMajor, Minor: FormatMinor, Commit: c.commit,
		NextTable: c.nextTable, NextIndex: c.nextIndex, NextTransform: c.nextTransform,
		Tables: []tableJSON{}, Policies: []policyJSON{}, Indexes: []indexJSON{},
		Transformations: []transformJSON{}, Users: []userJSON{},
	}
	for _, t := range c.tablesByID() {
		f.Tables = append(f.Tables, encodeTable(t))
	}
	for _, p := range c.Policies() {
		pj := policyJSON{Name: p.Name, Role: p.Role.String(), CreatedCommit: p.CreatedCommit}
		for _, s := range p.Settings {
			pj.Settings = append(pj.Settings, settingJSON{Key: s.Key, Value: encodeValue(s.Value), Nanos: int64(s.Duration), Int: s.Int})
		}
		f.Policies = append(f.Policies, pj)
	}
	for _, ix := range c.AllIndexes() {
		f.Indexes = append(f.Indexes, indexJSON{ID: ix.ID, Name: ix.Name, Table: ix.Table, Columns: ix.Columns,
			Scope: ix.Scope.String(), Policy: ix.Policy, CreatedCommit: ix.CreatedCommit})
	}
	for _, x := range c.Transformations() {
		f.Transformations = append(f.Transformations, transformJSON{ID: x.ID, Name: x.Name, Target: x.Target, Group: x.Group,
			Select: x.Select, Sources: x.Sources, Reads: x.Reads, CreatedCommit: x.CreatedCommit, Stateful: x.Stateful})
	}
	for _, u := range c.Users() {
		f.Users = append(f.Users, userJSON(*u))
	}
	for _, v := range c.Views() {
		vj := viewJSON{Name: v.Name, Select: v.Select, Columns: v.Columns, Sources: v.Sources, Views: v.Views,
			Reads: v.Reads, CreatedCommit: v.CreatedCommit}
		for _, t := range v.Types {
			vj.Types = append(vj.Types, encodeType(t))
		}
		f.Views = append(f.Views, vj)
	}
	return json.MarshalIndent(f, "", " ")
}

func (c *Catalog) tablesByID() []*Table {
	out := make([]*Table, 0, len(c.tables))
	for id := TableID(1); id < c.nextTable && len(out) < len(c.tables); id++ {
		if t, ok := c.tables[id]; ok {
			out = append(out, t)
		}
	}
	return out
}

func encodeTable(t *Table) tableJSON {
	tj := tableJSON{
		ID: t.ID, Name: t.Name, Mode: t.Mode.String(), Key: t.Key, ShardBy: t.ShardBy, Shards: t.Shards,
		ShardsAuto: t.ShardsAuto, OrderBy: t.OrderBy, Policies: t.Policies, RetentionLog: t.RetentionLog, CreatedCommit: t.CreatedCommit,
		AlteredCommit: t.AlteredCommit, Generation: t.Generation, NextColumn: t.nextColumn, NextGroup: t.nextGroup,
		Columns: []columnJSON{},
	}
	for _, col := range t.Columns {
		tj.Columns = append(tj.Columns, encodeColumn(col))
	}
	for _, col := range t.Dropped {
		tj.Dropped = append(tj.Dropped, encodeColumn(col))
	}
	for _, g := range t.Groups {
		tj.Groups = append(tj.Groups, groupJSON{ID: g.ID, Name: g.Name, Columns: g.Columns, ValidBy: g.ValidBy,
			RevisionBy: g.RevisionBy, Owner: g.Owner, AddedCommit: g.AddedCommit})
	}
	return tj
}

func encodeColumn(c *Column) columnJSON {
	return columnJSON{
		ID: c.ID, Name: c.Name, Nullable: c.Nullable, Default: c.Default, Introduced: c.Introduced,
		Type:  encodeType(c.Type),
		Group: c.Group, AddedCommit: c.AddedCommit, DroppedCommit: c.DroppedCommit, Codec: c.Codec,
		CodecNamed: c.CodecNamed, Position: c.Position,
	}
}

func encodeValue(v Value) valueJSON {
	vj := valueJSON{Kind: valueKindNames[v.Kind], Text: v.Text, Int: v.Int}
	for _, e := range v.List {
		vj.List = append(vj.List, encodeValue(e))
	}
	return vj
}

// Decode reads an encoding written by Encode of this or an older minor
// version, and checks it (Catalog.Check) before returning it.
func Decode(data []byte) (*Catalog, error) {
	var head struct {
		Format *int `json:"format"`
		Minor  int  `json:"minor"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrCorrupt, err)
	}
	switch {
	case head.Format == nil:
		return nil, fmt.Errorf("%w: no format number", ErrCorrupt)
	case *head.Format > FormatMajor:
		return nil, fmt.Errorf("%w: format %d.%d, this build reads format %d; upgrade Strata to open this database",
			ErrNewerFormat, *head.Format, head.Minor, FormatMajor)
	case *head.Format < 1:
		return nil, fmt.Errorf("%w: format %d", ErrCorrupt, *head.Format)
	}
	var f fileJSON
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrCorrupt, err)
	}
	c := New()
	c.commit, c.nextTable, c.nextIndex, c.nextTransform = f.Commit, f.NextTable, f.NextIndex, f.NextTransform
	for _, tj := range f.Tables {
		t, err := decodeTable(tj)
		if err != nil {
			return nil, err
		}
		if _, dup := c.tables[t.ID]; dup {
			return nil, fmt.Errorf("%w: table id %d twice", ErrCorrupt, t.ID)
		}
		if _, dup := c.tableNames[t.Name]; dup {
			return nil, fmt.Errorf("%w: table name %s twice", ErrCorrupt, t.Name)
		}
		c.putTable(t)
	}
	for _, pj := range f.Policies {
		role, ok := ParseRole(pj.Role)
		if !ok {
			return nil, fmt.Errorf("%w: policy %s has unknown role %q", ErrCorrupt, pj.Name, pj.Role)
		}
		p := &Policy{Name: pj.Name, Role: role, CreatedCommit: pj.CreatedCommit}
		for _, sj := range pj.Settings {
			v, err := decodeValue(sj.Value)
			if err != nil {
				return nil, fmt.Errorf("%w: policy %s setting %s: %v", ErrCorrupt, pj.Name, sj.Key, err)
			}
			p.Settings = append(p.Settings, Setting{Key: sj.Key, Value: v, Duration: time.Duration(sj.Nanos), Int: sj.Int})
		}
		c.policies[p.Name] = p
	}
	for _, ij := range f.Indexes {
		scope, ok := ParseScope(ij.Scope)
		if !ok {
			return nil, fmt.Errorf("%w: index %s has unknown scope %q", ErrCorrupt, ij.Name, ij.Scope)
		}
		c.indexes[ij.Name] = &Index{ID: ij.ID, Name: ij.Name, Table: ij.Table, Columns: ij.Columns, Scope: scope,
			Policy: ij.Policy, CreatedCommit: ij.CreatedCommit}
	}
	for _, xj := range f.Transformations {
		c.transforms[xj.Name] = &Transformation{ID: xj.ID, Name: xj.Name, Target: xj.Target, Group: xj.Group,
			Select: xj.Select, Sources: xj.Sources, Reads: xj.Reads, CreatedCommit: xj.CreatedCommit, Stateful: xj.Stateful}
	}
	for _, uj := range f.Users {
		u := User(uj)
		c.users[u.Name] = &u
	}
	for _, vj := range f.Views {
		v := &View{Name: vj.Name, Select: vj.Select, Columns: vj.Columns, Sources: vj.Sources, Views: vj.Views,
			Reads: vj.Reads, CreatedCommit: vj.CreatedCommit}
		for _, tj := range vj.Types {
			t, ok := decodeType(tj)
			if !ok {
				return nil, fmt.Errorf("%w: view %s has a column of unknown type kind %q", ErrCorrupt, vj.Name, tj.Kind)
			}
			v.Types = append(v.Types, t)
		}
		c.views[v.Name] = v
	}
	if len(c.policies) != len(f.Policies) || len(c.indexes) != len(f.Indexes) ||
		len(c.transforms) != len(f.Transformations) || len(c.users) != len(f.Users) || len(c.views) != len(f.Views) {
		return nil, fmt.Errorf("%w: a policy, index, transformation, user or view name appears twice", ErrCorrupt)
	}
	if err := c.Check(); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrCorrupt, err)
	}
	return c, nil
}

func decodeTable(tj tableJSON) (*Table, error) {
	mode, ok := ParseMode(tj.Mode)
	if !ok {
		return nil, fmt.Errorf("%w: table %s has unknown mode %q", ErrCorrupt, tj.Name, tj.Mode)
	}
	t := &Table{
		ID: tj.ID, Name: tj.Name, Mode: mode, Key: tj.Key, ShardBy: tj.ShardBy, Shards: tj.Shards,
		ShardsAuto: tj.ShardsAuto, OrderBy: tj.OrderBy, Policies: tj.Policies, RetentionLog: tj.RetentionLog, CreatedCommit: tj.CreatedCommit,
		AlteredCommit: tj.AlteredCommit, Generation: tj.Generation, nextColumn: tj.NextColumn, nextGroup: tj.NextGroup,
	}
	for _, list := range []struct {
		in  []columnJSON
		out *[]*Column
	}{{tj.Columns, &t.Columns}, {tj.Dropped, &t.Dropped}} {
		for _, cj := range list.in {
			typ, ok := decodeType(cj.Type)
			if !ok {
				return nil, fmt.Errorf("%w: column %s of table %s has unknown type kind %q", ErrCorrupt, cj.Name, tj.Name, cj.Type.Kind)
			}
			*list.out = append(*list.out, &Column{
				ID: cj.ID, Name: cj.Name, Nullable: cj.Nullable, Default: cj.Default, Introduced: cj.Introduced,
				Type:  typ,
				Group: cj.Group, AddedCommit: cj.AddedCommit, DroppedCommit: cj.DroppedCommit, Codec: cj.Codec,
				CodecNamed: cj.CodecNamed, Position: cj.Position,
			})
		}
	}
	for _, gj := range tj.Groups {
		t.Groups = append(t.Groups, &Group{ID: gj.ID, Name: gj.Name, Columns: gj.Columns, ValidBy: gj.ValidBy,
			RevisionBy: gj.RevisionBy, Owner: gj.Owner, AddedCommit: gj.AddedCommit})
	}
	return t, nil
}

func decodeValue(vj valueJSON) (Value, error) {
	v := Value{Text: vj.Text, Int: vj.Int}
	for k, name := range valueKindNames {
		if name == vj.Kind {
			v.Kind = k
		}
	}
	if v.Kind == ValueInvalid {
		return Value{}, fmt.Errorf("unknown value kind %q", vj.Kind)
	}
	for _, e := range vj.List {
		ev, err := decodeValue(e)
		if err != nil {
			return Value{}, err
		}
		v.List = append(v.List, ev)
	}
	return v, nil
}

func encodeType(t types.Type) typeJSON {
	return typeJSON{Kind: t.Kind.String(), Precision: t.Precision, Scale: t.Scale, Len: t.Len, TZ: t.TZ}
}

// decodeType is encodeType's inverse; false for an unknown kind name.
func decodeType(tj typeJSON) (types.Type, bool) {
	kind, ok := kindByName[tj.Kind]
	if !ok {
		return types.Type{}, false
	}
	return types.Type{Kind: kind, Precision: tj.Precision, Scale: tj.Scale, Len: tj.Len, TZ: tj.TZ}, true
}
