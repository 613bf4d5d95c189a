package catalog

import (
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/strata-db/strata/internal/types"
)

// Role is what a policy governs (R9.1).
type Role uint8

// The four roles. Every table is bound to one policy of each.
const (
	RolePlacement Role = iota
	RoleStorage
	RoleRetention
	RoleCompaction
	numRoles
)

var roleNames = [numRoles]string{"placement", "storage", "retention", "compaction"}

// String returns the lower-case role name.
func (r Role) String() string {
	if r < numRoles {
		return roleNames[r]
	}
	return "role(" + strconv.Itoa(int(r)) + ")"
}

// Roles returns every role in a fixed order.
func Roles() []Role { return []Role{RolePlacement, RoleStorage, RoleRetention, RoleCompaction} }

// ParseRole reads a role name, case-insensitively.
func ParseRole(s string) (Role, bool) {
	i := slices.Index(roleNames[:], strings.ToLower(s))
	return Role(i), i >= 0
}

// DefaultPolicyName is the name of the built-in policy of every role, which
// applies until another is bound and can be neither created nor dropped.
const DefaultPolicyName = "default"

// Bindings names the policy a table is bound to in each role; "default"
// where none was bound.
type Bindings struct {
	Placement  string `json:"placement"`
	Storage    string `json:"storage"`
	Retention  string `json:"retention"`
	Compaction string `json:"compaction"`
}

func defaultBindings() Bindings {
	return Bindings{DefaultPolicyName, DefaultPolicyName, DefaultPolicyName, DefaultPolicyName}
}

// Of returns the policy bound in role r.
func (b Bindings) Of(r Role) string {
	switch r {
	case RolePlacement:
		return b.Placement
	case RoleStorage:
		return b.Storage
	case RoleRetention:
		return b.Retention
	case RoleCompaction:
		return b.Compaction
	}
	return ""
}

func (b *Bindings) set(r Role, name string) {
	switch r {
	case RolePlacement:
		b.Placement = name
	case RoleStorage:
		b.Storage = name
	case RoleRetention:
		b.Retention = name
	case RoleCompaction:
		b.Compaction = name
	}
}

// ValueKind is the syntactic kind of a policy setting's value.
type ValueKind uint8

// The value kinds the parser can hand over.
const (
	ValueInvalid  ValueKind = iota
	ValueString             // 's3://bucket', '256MB'
	ValueInteger            // 8
	ValueInterval           // INTERVAL '90 days'
	ValueIdent              // event_time
	ValueList               // ('/mnt/a', '/mnt/b')
)

// Value is a setting's value as written: Text for strings, intervals (the
// quoted text) and identifiers, Int for integers, List for lists.
type Value struct {
	Kind ValueKind
	Text string
	Int  int64
	List []Value
}

// String renders v as SQL, the form system.policies shows.
func (v Value) String() string {
	switch v.Kind {
	case ValueString:
		return "'" + strings.ReplaceAll(v.Text, "'", "''") + "'"
	case ValueInteger:
		return strconv.FormatInt(v.Int, 10)
	case ValueInterval:
		return "INTERVAL '" + strings.ReplaceAll(v.Text, "'", "''") + "'"
	case ValueIdent:
		return v.Text
	case ValueList:
		parts := make([]string, len(v.List))
		for i, e := range v.List {
			parts[i] = e.String()
		}
		return "(" + strings.Join(parts, ", ") + ")"
	}
	return "?"
}

func (v Value) clone() Value {
	if v.List != nil {
		l := make([]Value, len(v.List))
		for i, e := range v.List {
			l[i] = e.clone()
		}
		v.List = l
	}
	return v
}

// SettingSpec is one `key = value` of CREATE POLICY.
type SettingSpec struct {
	Key   string
	Value Value
}

// PolicySpec is CREATE POLICY Name FOR Role (Settings...). Role is the
// role name as written; an unknown one is an error naming it.
type PolicySpec struct {
	Name        string
	IfNotExists bool
	Role        string
	Settings    []SettingSpec
}

// Setting is one checked setting of a policy: the value as written plus
// its meaning, parsed once so storage never parses text.
type Setting struct {
	Key   string
	Value Value
	// Duration is the length of an interval setting.
	Duration time.Duration
	// Int is the number of a size (in bytes) or count setting.
	Int int64
}

// Policy is a named set of settings for one role (§9).
type Policy struct {
	Name string
	Role Role
	// Settings are in the order written.
	Settings      []Setting
	CreatedCommit uint64
}

// Setting returns the setting of that key.
func (p *Policy) Setting(key string) (Setting, bool) {
	for _, s := range p.Settings {
		if s.Key == key {
			return s, true
		}
	}
	return Setting{}, false
}

// Duration returns an interval setting such as retention's history.
func (p *Policy) Duration(key string) (time.Duration, bool) {
	s, ok := p.Setting(key)
	return s.Duration, ok
}

// Int returns a size (bytes) or count setting.
func (p *Policy) Int(key string) (int64, bool) {
	s, ok := p.Setting(key)
	return s.Int, ok
}

// Text returns a string or identifier setting (object_store, by).
func (p *Policy) Text(key string) (string, bool) {
	s, ok := p.Setting(key)
	return s.Value.Text, ok && (s.Value.Kind == ValueString || s.Value.Kind == ValueIdent)
}

// List returns the strings of a list setting (placement's volumes).
func (p *Policy) List(key string) ([]string, bool) {
	s, ok := p.Setting(key)
	if !ok {
		return nil, false
	}
	if s.Value.Kind != ValueList {
		return []string{s.Value.Text}, true
	}
	out := make([]string, len(s.Value.List))
	for i, e := range s.Value.List {
		out[i] = e.Text
	}
	return out, true
}

// SettingsText renders the settings as written, "key = value, ...", for
// system.policies and system.table_storage_plans.
func (p *Policy) SettingsText() string {
	parts := make([]string, len(p.Settings))
	for i, s := range p.Settings {
		parts[i] = s.Key + " = " + s.Value.String()
	}
	return strings.Join(parts, ", ")
}

func (p *Policy) clone() *Policy {
	n := *p
	n.Settings = make([]Setting, len(p.Settings))
	for i, s := range p.Settings {
		s.Value = s.Value.clone()
		n.Settings[i] = s
	}
	return &n
}

// settingKind is the kind of value a key takes.
type settingKind uint8

const (
	kindInterval settingKind = iota // INTERVAL '90 days' (or the quoted text alone)
	kindColumn                      // an identifier naming a column
	kindURL                         // a string holding an object-store URL
	kindSize                        // '256MB' or an integer number of bytes
	kindPositive                    // a positive integer
	kindStrings                     // a list of strings (or one string)
)

var kindWanted = map[settingKind]string{
	kindInterval: "an INTERVAL such as INTERVAL '90 days'",
	kindColumn:   "a column name",
	kindURL:      "a URL string such as 's3://bucket/prefix'",
	kindSize:     "a size such as '256MB' or a number of bytes",
	kindPositive: "a positive integer",
	kindStrings:  "a list of strings such as ('/mnt/a', '/mnt/b')",
}

type keyDef struct {
	key  string
	kind settingKind
}

// roleKeys are the settings each role knows (R9.2), in documentation order.
var roleKeys = [numRoles][]keyDef{
	RolePlacement:  {{"volumes", kindStrings}, {"replicas", kindPositive}},
	RoleStorage:    {{"object_store", kindURL}, {"move_after", kindInterval}},
	RoleRetention:  {{"history", kindInterval}, {"rows", kindInterval}, {"by", kindColumn}},
	RoleCompaction: {{"target_part_bytes", kindSize}, {"max_parts_per_shard", kindPositive}},
}

// objectStoreSchemes are the URL schemes the storage layer serves (R9.4).
var objectStoreSchemes = []string{"s3", "gs", "azblob", "file"}

// CreatePolicy checks a policy's role, keys and values and adds it. With
// IfNotExists and a policy of that name already there, it returns that
// policy and created false.
func (c *Catalog) CreatePolicy(spec PolicySpec, commit uint64) (p *Policy, created bool, err error) {
	if err := c.begin(commit); err != nil {
		return nil, false, err
	}
	if err := checkName("policy", spec.Name); err != nil {
		return nil, false, err
	}
	if spec.Name == DefaultPolicyName {
		return nil, false, errorf(CodeReservedName, "policy name default is reserved for the built-in policy of each role")
	}
	if old, ok := c.policies[spec.Name]; ok {
		if spec.IfNotExists {
			return old, false, nil
		}
		return nil, false, errorf(CodeDuplicateObject, "policy %s already exists (FOR %s)", spec.Name, strings.ToUpper(old.Role.String()))
	}
	role, ok := ParseRole(spec.Role)
	if !ok {
		return nil, false, errorf(CodeInvalidParameter, "unknown policy role %s for policy %s; the roles are placement, storage, retention and compaction", strings.ToLower(spec.Role), spec.Name)
	}
	p = &Policy{Name: spec.Name, Role: role, CreatedCommit: commit}
	for _, s := range spec.Settings {
		set, err := checkSetting(p, s)
		if err != nil {
			return nil, false, err
		}
		p.Settings = append(p.Settings, set)
	}
	if n, ok := p.Int("replicas"); ok && role == RolePlacement && n > 1 {
		// R9.6's replicas are copies on other nodes of a cluster; a
		// single server has no other node to put them on.
		return nil, false, errorf(CodeFeatureNotSupported, "setting replicas = %d of policy %s: this server is a single node and keeps one copy of each part; replicas need a cluster", n, p.Name)
	}
	if role == RoleRetention {
		_, hasRows := p.Setting("rows")
		if _, hasBy := p.Setting("by"); hasBy && !hasRows {
			return nil, false, errorf(CodeInvalidParameter, "setting by of policy %s names the column rows expire by; it needs rows = INTERVAL '...'", p.Name)
		}
	}
	c.policies[p.Name] = p
	c.commit = commit
	return p, true, nil
}

// checkSetting checks one key = value of policy p.
func checkSetting(p *Policy, s SettingSpec) (Setting, error) {
	var def *keyDef
	for i := range roleKeys[p.Role] {
		if roleKeys[p.Role][i].key == s.Key {
			def = &roleKeys[p.Role][i]
		}
	}
	if def == nil {
		known := make([]string, 0, len(roleKeys[p.Role]))
		for _, d := range roleKeys[p.Role] {
			known = append(known, d.key)
		}
		return Setting{}, errorf(CodeInvalidParameter, "unknown setting %s for %s policy %s; its settings are %s",
			s.Key, p.Role, p.Name, strings.Join(known, ", "))
	}
	if _, dup := p.Setting(s.Key); dup {
		return Setting{}, errorf(CodeInvalidParameter, "setting %s of policy %s is given twice", s.Key, p.Name)
	}
	set := Setting{Key: s.Key, Value: s.Value.clone()}
	wrong := func(detail string) error {
		msg := fmt.Sprintf("setting %s of policy %s must be %s, not %s", s.Key, p.Name, kindWanted[def.kind], s.Value)
		if detail != "" {
			msg += ": " + detail
		}
		return &Error{Code: CodeInvalidParameter, Msg: msg}
	}
	v := s.Value
	switch def.kind {
	case kindInterval:
		if v.Kind != ValueInterval && v.Kind != ValueString {
			return Setting{}, wrong("")
		}
		d, err := ParseInterval(v.Text)
		if err != nil {
			return Setting{}, wrong(err.Error())
		}
		set.Duration = d
	case kindColumn:
		if (v.Kind != ValueIdent && v.Kind != ValueString) || v.Text == "" {
			return Setting{}, wrong("")
		}
	case kindURL:
		if v.Kind != ValueString {
			return Setting{}, wrong("")
		}
		u, err := url.Parse(v.Text)
		if err != nil || !slices.Contains(objectStoreSchemes, u.Scheme) {
			return Setting{}, wrong("the scheme must be one of " + strings.Join(objectStoreSchemes, ", "))
		}
	case kindSize:
		switch v.Kind {
		case ValueInteger:
			set.Int = v.Int
		case ValueString:
			n, err := ParseSize(v.Text)
			if err != nil {
				return Setting{}, wrong(err.Error())
			}
			set.Int = n
		default:
			return Setting{}, wrong("")
		}
		if set.Int <= 0 {
			return Setting{}, wrong("a size must be positive")
		}
	case kindPositive:
		if v.Kind != ValueInteger || v.Int <= 0 {
			return Setting{}, wrong("")
		}
		set.Int = v.Int
	case kindStrings:
		items := v.List
		switch v.Kind {
		case ValueString:
			items = []Value{v}
		case ValueList:
		default:
			return Setting{}, wrong("")
		}
		if len(items) == 0 {
			return Setting{}, wrong("the list is empty")
		}
		for i, e := range items {
			if e.Kind != ValueString || e.Text == "" {
				return Setting{}, wrong("every entry must be a non-empty string")
			}
			for _, prev := range items[:i] {
				if prev.Text == e.Text {
					return Setting{}, wrong(e.String() + " is listed twice")
				}
			}
		}
		set.Int = int64(len(items))
	}
	return set, nil
}

// DropPolicy removes a named policy that nothing is bound to. Without
// ifExists an unknown policy is an error; with it, dropped is false.
func (c *Catalog) DropPolicy(name string, ifExists bool, commit uint64) (dropped bool, err error) {
	if err := c.begin(commit); err != nil {
		return false, err
	}
	if name == DefaultPolicyName {
		return false, errorf(CodeDependentObjects, "the built-in policy default cannot be dropped")
	}
	p, ok := c.policies[name]
	if !ok {
		if ifExists {
			return false, nil
		}
		return false, errorf(CodeUndefinedObject, "policy %s does not exist", name)
	}
	for _, t := range c.Tables() {
		if t.Policies.Of(p.Role) == name {
			return false, errorf(CodeDependentObjects, "policy %s is bound to table %s; bind another policy to it first", name, t.Name)
		}
	}
	for _, ix := range c.AllIndexes() {
		if ix.Policy == name {
			return false, errorf(CodeDependentObjects, "policy %s is bound to index %s; drop the index first", name, ix.Name)
		}
	}
	delete(c.policies, name)
	c.commit = commit
	return true, nil
}

// Policy returns the named, user-created policy.
func (c *Catalog) Policy(name string) (*Policy, bool) {
	p, ok := c.policies[name]
	return p, ok
}

// DefaultPolicy returns the built-in policy of role r: no settings, which
// means the engine's defaults (keep all history, local storage, one volume).
func DefaultPolicy(r Role) *Policy { return &Policy{Name: DefaultPolicyName, Role: r} }

// Bound returns the policy table t is bound to in role r, the built-in
// default included.
func (c *Catalog) Bound(t *Table, r Role) *Policy {
	if p, ok := c.policies[t.Policies.Of(r)]; ok && p.Role == r {
		return p
	}
	return DefaultPolicy(r)
}

// Policies returns the user-created policies sorted by name; the built-in
// defaults are not listed (see DefaultPolicy).
func (c *Catalog) Policies() []*Policy {
	out := make([]*Policy, 0, len(c.policies))
	for _, p := range c.policies {
		out = append(out, p)
	}
	slices.SortFunc(out, func(a, b *Policy) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// bindPolicies binds the named policies to t (which the caller may still
// discard), at most one per role, each able to serve t.
func (c *Catalog) bindPolicies(t *Table, names []string, commit uint64) error {
	var seen [numRoles]string
	for _, name := range names {
		p, ok := c.policies[name]
		if !ok {
			if name == DefaultPolicyName {
				return errorf(CodeInvalidParameter, "policy default names one built-in policy per role and cannot be bound by name (table %s)", t.Name)
			}
			return errorf(CodeUndefinedObject, "policy %s does not exist (bound to table %s)", name, t.Name)
		}
		if prev := seen[p.Role]; prev != "" {
			return errorf(CodeInvalidParameter, "table %s is given two %s policies, %s and %s; a table has one policy per role", t.Name, p.Role, prev, name)
		}
		seen[p.Role] = name
		if err := servePolicy(p, t); err != nil {
			return err
		}
		if err := c.statefulReaders(t, p); err != nil {
			return err
		}
		if p.Role == RoleRetention {
			if len(t.RetentionLog) == 0 && t.CreatedCommit != 0 && t.CreatedCommit < commit {
				// A table from before bindings were logged: its policy so
				// far, from its creation.
				if old, ok := c.policies[t.Policies.Retention]; ok {
					if err := t.logRetention(old, t.CreatedCommit); err != nil {
						return err
					}
				}
			}
			if err := t.logRetention(p, commit); err != nil {
				return err
			}
		}
		t.Policies.set(p.Role, name)
	}
	return nil
}

// servePolicy checks that p can serve table t (R9.2): a retention policy's
// `by` column must be a DATE or DATETIME64 column of t.
func servePolicy(p *Policy, t *Table) error {
	if p.Role != RoleRetention {
		return nil
	}
	by, ok := p.Text("by")
	if !ok {
		return nil
	}
	col, ok := t.Column(by)
	if !ok {
		return errorf(CodeUndefinedColumn, "retention policy %s expires rows by column %s, which table %s does not have", p.Name, by, t.Name)
	}
	if col.Type.Kind != types.DateTime64 && col.Type.Kind != types.Date {
		return errorf(CodeDatatypeMismatch, "retention policy %s expires rows by column %s of table %s, which has type %s; it must be DATETIME64 or DATE", p.Name, by, t.Name, col.Type)
	}
	return nil
}

// ParseInterval reads interval text such as '90 days', '1 hour',
// '15 minutes', '1 week' or '1 day 12 hours' (units singular or plural,
// abbreviations s, m, h, d, w allowed, a number glued to its unit too).
// A month counts 30 days and a year 365: retention is about age, not
// calendar dates.
func ParseInterval(text string) (time.Duration, error) {
	fields := strings.Fields(strings.ToLower(text))
	if len(fields) == 0 {
		return 0, fmt.Errorf("interval %q is empty", text)
	}
	var total time.Duration
	for i := 0; i < len(fields); i++ {
		num, unit := splitNumber(fields[i])
		if unit == "" && i+1 < len(fields) {
			i++
			unit = fields[i]
		}
		n, err := strconv.ParseInt(num, 10, 64)
		if err != nil || n < 0 {
			return 0, fmt.Errorf("interval %q: %q is not a whole number", text, num)
		}
		per, ok := intervalUnit(unit)
		if !ok {
			return 0, fmt.Errorf("interval %q: unknown unit %q (use seconds, minutes, hours, days, weeks, months or years)", text, unit)
		}
		if n > int64((1<<63-1)/per) || total > time.Duration(1<<63-1)-time.Duration(n)*per {
			return 0, fmt.Errorf("interval %q is too long", text)
		}
		total += time.Duration(n) * per
	}
	if total <= 0 {
		return 0, fmt.Errorf("interval %q must be longer than zero", text)
	}
	return total, nil
}

func intervalUnit(u string) (time.Duration, bool) {
	switch u {
	case "ms", "msec", "msecs", "millisecond", "milliseconds":
		return time.Millisecond, true
	}
	switch strings.TrimSuffix(u, "s") {
	case "", "sec", "second":
		return time.Second, u != ""
	case "m", "min", "minute":
		return time.Minute, true
	case "h", "hour", "hr":
		return time.Hour, true
	case "d", "day":
		return 24 * time.Hour, true
	case "w", "week":
		return 7 * 24 * time.Hour, true
	case "mon", "month":
		return 30 * 24 * time.Hour, true
	case "y", "year", "yr":
		return 365 * 24 * time.Hour, true
	}
	return 0, false
}

// splitNumber splits "90days" into ("90", "days"). A sign or decimal
// point stays with the number, so that "1.5" is reported as not whole.
func splitNumber(s string) (num, rest string) {
	i := 0
	for i < len(s) && (s[i] >= '0' && s[i] <= '9' || s[i] == '.' || s[i] == '-' || s[i] == '+') {
		i++
	}
	return s[:i], s[i:]
}

// ParseSize reads a byte size such as '256MB', '1GiB', '512 kB' or '4096'.
// As in PostgreSQL's settings, kB, MB, GB and TB are powers of 1024; the
// KiB, MiB, GiB and TiB spellings mean the same.
func ParseSize(text string) (int64, error) {
	s := strings.TrimSpace(text)
	num, unit := splitNumber(s)
	unit = strings.ToUpper(strings.TrimSpace(unit))
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("size %q must be a whole number with an optional unit (B, kB, MB, GB, TB)", text)
	}
	var per int64
	switch strings.Replace(unit, "IB", "B", 1) {
	case "", "B":
		per = 1
	case "K", "KB":
		per = 1 << 10
	case "M", "MB":
		per = 1 << 20
	case "G", "GB":
		per = 1 << 30
	case "T", "TB":
		per = 1 << 40
	default:
		return 0, fmt.Errorf("size %q has unknown unit %q (use B, kB, MB, GB or TB)", text, unit)
	}
	if n > (1<<63-1)/per {
		return 0, fmt.Errorf("size %q is too large", text)
	}
	return n * per, nil
}

// RetentionBinding is the retention settings a table had from commit From
// on (R9.3). A table keeps every binding it had (Table.RetentionLog), so
// that what expired under earlier settings stays expired after a change,
// and a write is judged by the settings of its own commit (repeats,
// version rule 3): reads never depend on which merges ran.
type RetentionBinding struct {
	From uint64 `json:"from"`
	// History and Rows are the policy's intervals, 0 when unset; By is
	// the column rows expire by, 0 for commit time.
	History time.Duration `json:"history,omitempty"`
	Rows    time.Duration `json:"rows,omitempty"`
	By      ColumnID      `json:"by,omitempty"`
}

// RetentionBindingOf is retention policy p as a binding of table t from
// commit from.
func RetentionBindingOf(t *Table, p *Policy, from uint64) RetentionBinding {
	b := RetentionBinding{From: from}
	b.History, _ = p.Duration("history")
	b.Rows, _ = p.Duration("rows")
	if by, ok := p.Text("by"); ok {
		if col, ok := t.Column(by); ok {
			b.By = col.ID
		}
	}
	return b
}

// logRetention records that retention policy p applies to t from commit
// on. Rows that expire by a column cannot switch to another column: what
// the first one expired would come back.
func (t *Table) logRetention(p *Policy, commit uint64) error {
	b := RetentionBindingOf(t, p, commit)
	if n := len(t.RetentionLog); n > 0 {
		last := t.RetentionLog[n-1]
		if last.History == b.History && last.Rows == b.Rows && last.By == b.By {
			return nil
		}
	}
	if b.By != 0 {
		for _, old := range t.RetentionLog {
			if old.By != 0 && old.By != b.By {
				return errorf(CodeFeatureNotSupported, "table %s has expired rows by column %s; retention policy %s, which expires them by another column, cannot be bound to it: rows the first expired would come back",
					t.Name, columnNameOf(t, old.By), p.Name)
			}
		}
	}
	t.RetentionLog = append(t.RetentionLog, b)
	return nil
}

// columnNameOf names column id of t, dropped or not.
func columnNameOf(t *Table, id ColumnID) string {
	if c, ok := t.AnyColumn(id); ok {
		return c.Name
	}
	return fmt.Sprintf("#%d", id)
}
