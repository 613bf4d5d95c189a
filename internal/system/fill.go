package system

import (
	"fmt"
	"strings"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/storage"
	"github.com/strata-db/strata/internal/types"
)

func fillTables(src Source, add func(...types.Value)) {
	for _, t := range src.Catalog().Tables() {
		shards := t.Shards
		if n := len(src.Shards(t.ID)); n > 0 {
			shards = n
		}
		if shards == 0 {
			shards = 1
		}
		add(str(t.Name), str(t.Mode.String()), i64(int64(shards)), columnNames(t, t.OrderBy), u64(t.CreatedCommit),
			columnNames(t, t.ShardColumns()), types.NewBool(t.ShardsAuto), columnNames(t, t.Key),
			u64(t.AlteredCommit), u64(t.Generation))
	}
}

func fillColumns(src Source, add func(...types.Value)) {
	for _, t := range src.Catalog().Tables() {
		for _, c := range t.Columns {
			def := types.Null(tString)
			if c.Default != nil {
				def = str(c.Default.SQL)
			}
			group := types.Null(tString)
			if g, ok := t.GroupByID(c.Group); ok {
				group = str(g.Name)
			}
			add(str(t.Name), str(c.Name), i64(int64(c.Position)), str(c.Type.String()), types.NewBool(c.Nullable),
				def, group, u64(c.AddedCommit), types.NewBool(t.IsKey(c.ID)), str(c.Codec))
		}
	}
}

func fillGroups(src Source, add func(...types.Value)) {
	for _, t := range src.Catalog().Tables() {
		for _, g := range t.Groups {
			add(str(t.Name), str(g.Name), columnNames(t, g.ValidBy), columnNames(t, g.RevisionBy), strOrNull(g.Owner),
				columnNames(t, g.Columns), u64(g.AddedCommit))
		}
	}
}

func fillCommits(src Source, add func(...types.Value)) {
	st, ok := src.(Stats)
	if !ok {
		return
	}
	for _, c := range st.Commits() {
		at, err := types.FromTime(tTime, c.At)
		if err != nil {
			at = types.Null(tTime)
		}
		add(u64(c.Commit), at, str(c.Kind.String()), strOrNull(strings.Join(c.Tables, ", ")), u64(c.Rows))
	}
}

func fillPolicies(src Source, add func(...types.Value)) {
	for _, r := range catalog.Roles() {
		add(str(catalog.DefaultPolicyName), str(r.String()), types.Null(tString), types.Null(tUint), types.NewBool(true))
	}
	for _, p := range src.Catalog().Policies() {
		add(str(p.Name), str(p.Role.String()), strOrNull(p.SettingsText()), u64(p.CreatedCommit), types.NewBool(false))
	}
}

// fillPlans has one row per table and role (R9.7). Its state says what
// the role looks like now, from the storage statistics; horizon_commit is
// the retention row's horizon, the oldest commit a read AS OF may name
// (R9.3), NULL in the other roles' rows.
func fillPlans(src Source, add func(...types.Value)) {
	cat := src.Catalog()
	ret, hasRet := src.(Retainer)
	for _, t := range cat.Tables() {
		shards := src.Shards(t.ID)
		var rows, bytes, object uint64
		parts := 0
		for _, s := range shards {
			rows, bytes, object, parts = rows+s.Rows, bytes+s.Bytes, object+s.ObjectBytes, parts+s.Parts
		}
		for _, r := range catalog.Roles() {
			p := cat.Bound(t, r)
			var state string
			horizon := types.Null(tUint)
			switch r {
			case catalog.RoleRetention:
				var rt storage.Retention
				if hasRet {
					rt = ret.Retention(t.ID)
				}
				h := max(rt.Horizon, t.CreatedCommit)
				horizon = u64(h)
				state = retentionState(t, rt, h)
			case catalog.RoleStorage:
				state = fmt.Sprintf("local %d bytes, object store %d bytes", bytes-object, object)
			case catalog.RolePlacement:
				state = placementState(shards)
			case catalog.RoleCompaction:
				state = fmt.Sprintf("%d parts, %d rows", parts, rows)
			}
			add(str(t.Name), str(r.String()), str(p.Name), strOrNull(p.SettingsText()), str(state), horizon)
		}
	}
}

// retentionState describes what retention rt expires of table t, whose
// horizon is h.
func retentionState(t *catalog.Table, rt storage.Retention, h uint64) string {
	if !rt.Active() {
		if rt.Policy == nil {
			return fmt.Sprintf("horizon commit %d", h)
		}
		// A setting for another mode expires nothing here (docs/retention.md).
		why := "its history setting applies to versioned tables"
		switch t.Mode {
		case catalog.ModeUpsert:
			why = "an upsert table keeps no history"
		case catalog.ModeAppend:
			why = "its rows setting is not set; history applies to versioned tables"
		case catalog.ModeVersioned:
			why = "its history setting is not set; rows applies to append tables"
		}
		return fmt.Sprintf("horizon commit %d; nothing expires: %s", h, why)
	}
	cut := rt.Cutoff.UTC().Format("2006-01-02 15:04:05.000000")
	switch {
	case rt.ByCol != 0:
		name := "?"
		if c, ok := t.AnyColumn(rt.ByCol); ok {
			name = c.Name
		}
		by := fmt.Sprintf("horizon commit %d; rows with %s before %s UTC are expired", h, name, rt.ByCutoff.UTC().Format("2006-01-02 15:04:05.000000"))
		if rt.Horizon != 0 {
			by += fmt.Sprintf(", and rows committed by commit %d (an earlier policy)", rt.Horizon)
		}
		return by
	case t.Mode == catalog.ModeAppend:
		return fmt.Sprintf("horizon commit %d; rows committed before %s UTC are expired", h, cut)
	}
	return fmt.Sprintf("horizon commit %d; versions that stopped counting before %s UTC are expired", h, cut)
}

func fillCodecs(src Source, add func(...types.Value)) {
	st, hasStats := src.(Stats)
	for _, t := range src.Catalog().Tables() {
		var sizes map[catalog.ColumnID][2]uint64
		if hasStats {
			sizes = st.ColumnBytes(t.ID)
		}
		for _, c := range t.Columns {
			sz := sizes[c.ID]
			add(str(t.Name), str(c.Name), str(c.Type.String()), str(c.Codec), u64(sz[0]), u64(sz[1]))
		}
	}
}

func fillIndexes(src Source, add func(...types.Value)) {
	cat := src.Catalog()
	for _, ix := range cat.AllIndexes() {
		t, ok := cat.TableByID(ix.Table)
		if !ok {
			continue
		}
		add(str(ix.Name), str(t.Name), columnNames(t, ix.Columns), str(ix.Scope.String()), strOrNull(ix.Policy),
			u64(ix.CreatedCommit))
	}
}

func fillShards(src Source, add func(...types.Value)) {
	for _, t := range src.Catalog().Tables() {
		for _, s := range src.Shards(t.ID) {
			add(str(t.Name), u64(uint64(s.Shard)), u64(s.Rows), u64(s.Bytes), i64(int64(s.Parts)), strOrNull(s.Location))
		}
	}
}

func fillParts(src Source, add func(...types.Value)) {
	for _, t := range src.Catalog().Tables() {
		for _, p := range src.Parts(t.ID) {
			add(str(t.Name), u64(uint64(p.Shard)), u64(p.Part), u64(uint64(p.Level)), u64(p.Rows), u64(p.Bytes),
				u64(p.MinCommit), u64(p.MaxCommit), strOrNull(p.Location))
		}
	}
}

// TransformationStatus is what system.transformations shows of a running
// transformation beyond its definition.
type TransformationStatus struct {
	// Processed is the commit it has processed up to (R12.2).
	Processed uint64
	// Lag counts the commits after Processed that wrote one of its
	// sources.
	Lag uint64
	// Status is "running", "failing" or "stopped"; LastError the last
	// failure's message, "" when none.
	Status, LastError string
}

// TransformationStatusOf reports the status of x as of src; the session
// package, which runs transformations, sets it.
var TransformationStatusOf func(src Source, x *catalog.Transformation) TransformationStatus

// fillTransformations lists each transformation with its progress.
func fillTransformations(src Source, add func(...types.Value)) {
	cat := src.Catalog()
	for _, x := range cat.Transformations() {
		target, _ := cat.TableByID(x.Target)
		group := types.Null(tString)
		if target != nil {
			if g, ok := target.GroupByID(x.Group); ok {
				group = str(g.Name)
			}
		}
		st := TransformationStatus{Status: "stopped"}
		if TransformationStatusOf != nil {
			st = TransformationStatusOf(src, x)
		}
		processed := types.Null(tUint)
		if st.Processed > 0 {
			processed = u64(st.Processed)
		}
		add(str(x.Name), strOrNull(strings.Join(cat.SourceNames(x), ", ")), strOrNull(tableName(cat, x.Target)), group,
			processed, u64(st.Lag), str(st.Status), strOrNull(st.LastError), u64(x.CreatedCommit))
	}
}

func fillUsers(src Source, add func(...types.Value)) {
	for _, u := range src.Catalog().Users() {
		add(str(u.Name), types.NewBool(u.Verifier != ""), u64(u.CreatedCommit), u64(u.AlteredCommit))
	}
}

// fillViews lists each view: its query as stored, its output columns and
// the tables it reads (through other views too).
func fillViews(src Source, add func(...types.Value)) {
	cat := src.Catalog()
	for _, v := range cat.Views() {
		var tables []string
		for _, id := range v.Sources {
			if t, ok := cat.TableByID(id); ok {
				tables = append(tables, t.Name)
			}
		}
		add(str(v.Name), str(v.Select), str(strings.Join(v.Columns, ", ")), str(strings.Join(tables, ", ")), u64(v.CreatedCommit))
	}
}

// placementState says where a table's shards are (R9.6): how many on
// each place their new parts go, and how many parts wait to move there.
func placementState(shards []storage.ShardInfo) string {
	var homes []string
	count := map[string]int{}
	misplaced := 0
	for _, s := range shards {
		if count[s.Home] == 0 {
			homes = append(homes, s.Home)
		}
		count[s.Home]++
		misplaced += s.Misplaced
	}
	var b strings.Builder
	for i, h := range homes {
		if i > 0 {
			b.WriteString(", ")
		}
		noun := "shards"
		if count[h] == 1 {
			noun = "shard"
		}
		if v, ok := strings.CutPrefix(h, "volume:"); ok {
			fmt.Fprintf(&b, "%d %s on volume %s", count[h], noun, v)
		} else {
			fmt.Fprintf(&b, "%d %s in the data directory", count[h], noun)
		}
	}
	if misplaced > 0 {
		fmt.Fprintf(&b, ", %d parts to move", misplaced)
	}
	return b.String()
}
