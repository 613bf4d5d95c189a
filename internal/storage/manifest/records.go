package manifest

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"
	"time"
)

// Kind says what a part holds, and so which reads must open it.
type Kind uint8

const (
	// KindDelta is a part freshly flushed from a memtable or the output of
	// a minor merge: every version it holds, not yet split into current and
	// history.
	KindDelta Kind = 1
	// KindCurrent is the current run of a versioned or upsert shard: one
	// winner per key and group as of the part's MaxCommit.
	KindCurrent Kind = 2
	// KindHistory is the history run of a versioned shard: the versions
	// that stopped being current, each with the commit at which it did.
	KindHistory Kind = 3
	// KindAppend is a part of an append table: rows in arrival order.
	KindAppend Kind = 4
	// KindAsOf is part of the AS OF index of a versioned shard's run: the
	// rows of the current and history runs live in one epoch
	// [EpochFrom, EpochTo) of commits, sorted by key. It holds no version
	// the run does not, so the engine keeps it apart from the shard's
	// parts (internal/storage/asofindex.go); its MinCommit and MaxCommit
	// are the run's.
	KindAsOf Kind = 5
)

// String returns the name system.parts shows.
func (k Kind) String() string {
	switch k {
	case KindDelta:
		return "delta"
	case KindCurrent:
		return "current"
	case KindHistory:
		return "history"
	case KindAppend:
		return "append"
	case KindAsOf:
		return "asof"
	}
	return fmt.Sprintf("kind(%d)", uint8(k))
}

func (k Kind) valid() bool { return k >= KindDelta && k <= KindAsOf }

// Part is one immutable data file of one shard. Its identity is the ID,
// allocated by NextPartID and never reused (invariant 3 in doc.go).
type Part struct {
	// Table is the catalog's table id.
	Table uint64
	// Shard is the shard number inside the table.
	Shard uint32
	// ID is unique across the whole database.
	ID uint64
	// Level is the merge level: 0 for a flush, one more than the highest
	// input for a merge.
	Level uint8
	// Kind says what the part holds.
	Kind Kind
	// Rows and Bytes size the part (Bytes is the file size).
	Rows  uint64
	Bytes uint64
	// MinCommit and MaxCommit bound the _commit column, so a read AS OF n
	// skips every part with MinCommit > n.
	MinCommit, MaxCommit uint64
	// MinKey and MaxKey bound the encoded ORDER BY prefix, compared with
	// bytes.Compare. A nil and an empty key are the same key.
	MinKey, MaxKey []byte
	// File is the path of the data file relative to the data directory,
	// or to the volume when Location names one, or the object key when
	// Location is an object store.
	File string
	// Location is LocationLocal, VolumePrefix and a placement volume's
	// path (R9.6), or the URL of the object store holding File
	// (s3://bucket/prefix, file:///mnt/cold, ...).
	Location string
	// CreatedAt is when the part was written; tiering and retention read it.
	CreatedAt time.Time
	// ExpiresFrom is, for a KindHistory part, the lowest retention
	// horizon that expires one of its versions (version.ExpiresAt), or
	// math.MaxUint64 when none can; a lower horizon expires nothing of the
	// part, so a merge for retention need not rewrite it (R9.3). 0 means
	// not known (a part written before the field): judge by MinCommit.
	ExpiresFrom uint64
	// EpochFrom and EpochTo are, for a KindAsOf part, the commits
	// [EpochFrom, EpochTo) its epoch covers; zero for every other kind.
	EpochFrom, EpochTo uint64
}

// Ref returns the reference that removes this part in an Edit.
func (p *Part) Ref() PartRef { return PartRef{Table: p.Table, Shard: p.Shard, ID: p.ID} }

// validate checks the fields that do not depend on the rest of the
// manifest.
func (p *Part) validate() error {
	switch {
	case p.ID == 0:
		return fmt.Errorf("part in table %d shard %d has id 0", p.Table, p.Shard)
	case !p.Kind.valid():
		return fmt.Errorf("part %d has unknown kind %d", p.ID, p.Kind)
	case p.Kind == KindAsOf && p.EpochFrom >= p.EpochTo:
		return fmt.Errorf("part %d is an AS OF epoch with empty range [%d, %d)", p.ID, p.EpochFrom, p.EpochTo)
	case p.Kind != KindAsOf && (p.EpochFrom != 0 || p.EpochTo != 0):
		return fmt.Errorf("part %d of kind %s has an epoch range", p.ID, p.Kind)
	case p.MinCommit > p.MaxCommit:
		return fmt.Errorf("part %d has min commit %d > max commit %d", p.ID, p.MinCommit, p.MaxCommit)
	case bytes.Compare(p.MinKey, p.MaxKey) > 0:
		return fmt.Errorf("part %d has min key %x > max key %x", p.ID, p.MinKey, p.MaxKey)
	case p.File == "":
		return fmt.Errorf("part %d names no file", p.ID)
	case p.Location == LocationLocal:
		// The engine deletes local files no part names (invariant 2), so a
		// name must not reach outside the data directory.
		if !filepath.IsLocal(p.File) {
			return fmt.Errorf("part %d names file %q, which is not a path inside the data directory", p.ID, p.File)
		}
	case strings.HasPrefix(p.Location, VolumePrefix):
		// The same on a volume: the engine sweeps its folder there.
		if len(p.Location) == len(VolumePrefix) || !filepath.IsLocal(p.File) {
			return fmt.Errorf("part %d names file %q on %q, which is not a path inside a volume", p.ID, p.File, p.Location)
		}
	case !strings.Contains(p.Location, ":"):
		return fmt.Errorf("part %d has location %q; want %q or an object store URL", p.ID, p.Location, LocationLocal)
	}
	return nil
}

// LocationLocal is the Location of a part whose file is in the data
// directory.
const LocationLocal = "local"

// VolumePrefix begins the Location of a part whose file is on a placement
// volume (R9.6): "volume:" and the volume's path as its policy names it,
// absolute or relative to the data directory.
const VolumePrefix = "volume:"

// OnDisk reports whether the part's file is on a local disk: in the data
// directory or on a placement volume, not in an object store.
func (p *Part) OnDisk() bool {
	return p.Location == LocationLocal || strings.HasPrefix(p.Location, VolumePrefix)
}

// where is what tells two parts' files apart: the file, and the location
// when it is not the data directory (two volumes may hold one name).
func (p *Part) where() string {
	if p.Location == LocationLocal {
		return p.File
	}
	return p.Location + "\x00" + p.File
}

// PartRef names a live part. Table and Shard are part of the reference so
// that removing a part from the wrong shard is caught, not silently done.
type PartRef struct {
	Table uint64
	Shard uint32
	ID    uint64
}

// String formats the reference for error messages.
func (r PartRef) String() string {
	return fmt.Sprintf("part %d (table %d shard %d)", r.ID, r.Table, r.Shard)
}

// KeyRange is the half-open range [Lo, Hi) of the 64-bit hash space that a
// shard owns. Hi == 0 stands for 2^64, the end of the space, so the whole
// space is KeyRange{0, 0}. SHARDS AUTO splits a range with Split.
type KeyRange struct {
	Lo, Hi uint64
}

// FullRange is the whole hash space, the range of a table's only shard.
var FullRange = KeyRange{}

// Contains reports whether hash h falls in the range.
func (r KeyRange) Contains(h uint64) bool {
	return h >= r.Lo && (r.Hi == 0 || h < r.Hi)
}

// Split halves the range. It reports false when the range holds a single
// hash and cannot be split.
func (r KeyRange) Split() (lower, upper KeyRange, ok bool) {
	// width-1 fits in uint64 even for the full range.
	last := r.Hi - 1
	if last == r.Lo {
		return r, r, false
	}
	mid := r.Lo + (last-r.Lo)/2 + 1
	return KeyRange{r.Lo, mid}, KeyRange{mid, r.Hi}, true
}

// overlaps reports whether two ranges share a hash.
func (r KeyRange) overlaps(o KeyRange) bool {
	// r ends after o starts and o ends after r starts; Hi == 0 is +inf.
	return (r.Hi == 0 || r.Hi > o.Lo) && (o.Hi == 0 || o.Hi > r.Lo)
}

func (r KeyRange) valid() bool { return r.Hi == 0 || r.Lo < r.Hi }

// String formats the range as [lo, hi).
func (r KeyRange) String() string {
	if r.Hi == 0 {
		return fmt.Sprintf("[%#x, 2^64)", r.Lo)
	}
	return fmt.Sprintf("[%#x, %#x)", r.Lo, r.Hi)
}

// State is the life stage of a shard.
type State uint8

const (
	// StateActive shards take writes for the hashes in their range. The
	// ranges of a table's active shards never overlap.
	StateActive State = 1
	// StateRetired shards take no writes: a split handed their range to
	// new shards, and their parts stay readable until merged away.
	StateRetired State = 2
)

// String returns the name system.shards shows.
func (s State) String() string {
	switch s {
	case StateActive:
		return "active"
	case StateRetired:
		return "retired"
	}
	return fmt.Sprintf("state(%d)", uint8(s))
}

func (s State) valid() bool { return s == StateActive || s == StateRetired }

// Shard is the layout record of one shard of a table.
type Shard struct {
	Table uint64
	Shard uint32
	Range KeyRange
	State State
}

// ShardRef names a shard.
type ShardRef struct {
	Table uint64
	Shard uint32
}

// Commit kinds, as system.commits shows them (R5.5, R13.4).
const (
	CommitDDL            = "ddl"
	CommitWrite          = "write"
	CommitTransformation = "transformation"
)

// Commit is the summary of one commit that system.commits lists (R5.5)
// and AS OF TIMESTAMP resolves against (R6.7).
type Commit struct {
	// Seq is the commit sequence: 1, 2, 3, ... without gaps (R5.1).
	Seq uint64
	// At is the wall-clock time of the commit. It never decreases from one
	// commit to the next (invariant 5 in doc.go).
	At time.Time
	// Kind is CommitDDL, CommitWrite or CommitTransformation.
	Kind string
	// Tables are the names of the tables the commit touched.
	Tables []string
	// Rows is the number of rows the commit accepted.
	Rows uint64
}

func validCommitKind(k string) bool {
	return k == CommitDDL || k == CommitWrite || k == CommitTransformation
}

// Flushed records that every write of a shard up to and including Commit
// is in parts, so WAL replay can skip those writes for that shard.
type Flushed struct {
	Table  uint64
	Shard  uint32
	Commit uint64
}

// Transform is the checkpoint of a continuous transformation (R12.2): the
// commit of its source it has processed up to and its opaque state.
type Transform struct {
	Name      string
	Processed uint64
	State     []byte
}

// CatalogUpdate replaces the encoded catalog. Commit is the commit whose
// DDL produced Data; Data is opaque to the manifest.
type CatalogUpdate struct {
	Commit uint64
	Data   []byte
}
