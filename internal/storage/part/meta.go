package part

import (
	"encoding/binary"
	"encoding/json"
	"fmt"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/types"
)

// FormatVersion is the newest version of the part layout, metaKey's
// "format" field. Write puts the oldest version that describes a part:
//
//	1  the original layout.
//	2  adds "order_from": the part's _order column is stored empty and
//	   readers rebuild each row's ordering values from the table columns
//	   it names (order.go). Only parts that use it are written as 2, so
//	   every other part stays readable by builds that know only 1.
//	3  adds "resolution_residual" (_won_at, _ended_at and _superseded_by)
//	   and "position_residual" (_commit and _seq): those columns hold what
//	   is left of each row's value once the part of it that follows from
//	   its group, state and neighbours in the page is taken away
//	   (resid.go). Merges write every history part with the first, and
//	   with the second where it pays; a part with both "order_from" and
//	   residuals is 3.
//
// Readers take every version from 1 to FormatVersion.
const FormatVersion = 3

// minFormatVersion is the oldest version readers take.
const minFormatVersion = 1

// formatOrderFrom is the first version with "order_from".
const formatOrderFrom = 2

// formatResidual is the first version with "resolution_residual".
const formatResidual = 3

// The Parquet key/value metadata keys of a part.
const (
	// metaKey holds fileMeta as JSON.
	metaKey = "strata.part"
	// filterKey holds the part's key filter (keyfilter.go) as raw bytes:
	// absent in parts written before it existed and in append parts.
	filterKey = "strata.keyfilter"
	// sealKey holds the seal: sealMagic, the data end in 16 hex digits and
	// the CRC-32C of the file's tail in 8 (doc.go, "Checksums").
	sealKey = "strata.seal"
)

// sealMagic starts the seal value; Open finds the seal by its last
// occurrence in the footer.
const sealMagic = "STRATA-SEAL:"

// sealLen is the length of the seal value.
const sealLen = len(sealMagic) + 16 + 8

// stripeSize is the span of data bytes one stripe CRC covers. A point
// lookup reads and checks the whole stripes around each page it decodes,
// and a page of a current part is a few hundred bytes to a few KiB: at
// 32 KiB a cold lookup read ~15× the bytes it decoded; at 8 KiB
// (BenchmarkLookupRuns/cold) current lookups take ~15 % and AS OF ones
// ~7 % less time, for a CRC list of 4 bytes per 8 KiB (0.05 % of a part).
// Readers take the size from the part (fileMeta.Stripe), so parts written
// with 32 KiB stripes read as before (TestReadFormat2's part has them).
const stripeSize = 8 << 10

// fileMeta is the JSON document under metaKey.
type fileMeta struct {
	Format    int          `json:"format"`
	Table     uint32       `json:"table"`
	Shard     uint32       `json:"shard"`
	Part      uint64       `json:"part"`
	Kind      string       `json:"kind"`
	Level     uint8        `json:"level"`
	Rows      uint64       `json:"rows"`
	MinCommit uint64       `json:"min_commit"`
	MaxCommit uint64       `json:"max_commit"`
	MinSort   []byte       `json:"min_sort"`
	MaxSort   []byte       `json:"max_sort"`
	KeyBlocks bool         `json:"key_blocks,omitempty"`
	PageRows  int          `json:"page_rows,omitempty"`
	Columns   []columnJSON `json:"columns"`
	Blocks    []blockJSON  `json:"blocks"`
	// Stripe is the stripe size; Stripes the big-endian CRC-32C of each
	// stripe of the data region [0, data end).
	Stripe  int    `json:"stripe"`
	Stripes []byte `json:"stripes"`
	// OrderFrom, when present (format 2), says _order is stored empty
	// and rebuilt from these columns (Meta.OrderFrom).
	OrderFrom []orderJSON `json:"order_from,omitempty"`
	// Residual and PositionResidual (format 3) say the resolution and
	// the positions hold residuals (Meta.Residual, Meta.PositionResidual).
	Residual         bool `json:"resolution_residual,omitempty"`
	PositionResidual bool `json:"position_residual,omitempty"`
}

// orderJSON is one GroupOrder.
type orderJSON struct {
	Group uint16   `json:"group"`
	Cols  []uint32 `json:"cols"`
}

// columnJSON is one table column: the type as its fields (Text is the
// human-readable form, not read back) and the codec's canonical text.
type columnJSON struct {
	ID        uint32 `json:"id"`
	Text      string `json:"type"`
	Kind      string `json:"kind"`
	Precision uint8  `json:"precision,omitempty"`
	Scale     uint8  `json:"scale,omitempty"`
	Len       int32  `json:"len,omitempty"`
	TZ        string `json:"tz,omitempty"`
	Codec     string `json:"codec"`
}

type blockJSON struct {
	Rows      int      `json:"rows"`
	MinSort   []byte   `json:"min_sort"`
	MaxSort   []byte   `json:"max_sort"`
	MinCommit uint64   `json:"min_commit"`
	MaxCommit uint64   `json:"max_commit"`
	Keys      [][]byte `json:"keys,omitempty"`
}

// encodeMeta renders meta, the blocks and the stripe CRCs as the metaKey
// value.
func encodeMeta(m *Meta, blocks []BlockInfo, stripes []uint32) (string, error) {
	fm := fileMeta{
		Format: minFormatVersion, Table: uint32(m.Table), Shard: m.Shard, Part: m.Part, Kind: m.Kind.String(),
		Level: m.Level, Rows: m.Rows, MinCommit: m.MinCommit, MaxCommit: m.MaxCommit,
		MinSort: m.MinSort, MaxSort: m.MaxSort, KeyBlocks: m.KeyBlocks, PageRows: m.PageRows, Stripe: stripeSize,
		Columns: make([]columnJSON, len(m.Columns)),
		Blocks:  make([]blockJSON, len(blocks)),
		Stripes: make([]byte, 0, 4*len(stripes)),
	}
	for i, c := range m.Columns {
		fm.Columns[i] = columnJSON{
			ID: uint32(c.ID), Text: c.Type.String(), Kind: c.Type.Kind.String(), Precision: c.Type.Precision,
			Scale: c.Type.Scale, Len: c.Type.Len, TZ: c.Type.TZ, Codec: c.Codec.String(),
		}
	}
	for i, b := range blocks {
		fm.Blocks[i] = blockJSON(b)
	}
	for _, s := range stripes {
		fm.Stripes = binary.BigEndian.AppendUint32(fm.Stripes, s)
	}
	if len(m.OrderFrom) > 0 {
		fm.Format = formatOrderFrom
		for _, g := range m.OrderFrom {
			o := orderJSON{Group: g.Group, Cols: make([]uint32, len(g.Cols))}
			for i, c := range g.Cols {
				o.Cols[i] = uint32(c)
			}
			fm.OrderFrom = append(fm.OrderFrom, o)
		}
	}
	if m.Residual || m.PositionResidual {
		fm.Format, fm.Residual, fm.PositionResidual = formatResidual, m.Residual, m.PositionResidual
	}
	b, err := json.Marshal(&fm)
	return string(b), err
}

// kindByName maps Kind.String() back to the kind.
var kindByName = func() map[string]types.Kind {
	m := make(map[string]types.Kind)
	for k := types.Bool; k.String() != fmt.Sprintf("Kind(%d)", uint8(k)); k++ {
		m[k.String()] = k
	}
	return m
}()

// decodeMeta parses the metaKey value. Every inconsistency is a plain
// error; the caller wraps it in ErrCorrupt.
func decodeMeta(s string) (*Meta, []BlockInfo, *fileMeta, error) {
	var fm fileMeta
	if err := json.Unmarshal([]byte(s), &fm); err != nil {
		return nil, nil, nil, fmt.Errorf("metadata: %v", err)
	}
	if fm.Format < minFormatVersion || fm.Format > FormatVersion {
		return nil, nil, nil, fmt.Errorf("%w: format %d (this build reads %d to %d)", ErrVersion, fm.Format, minFormatVersion, FormatVersion)
	}
	if len(fm.OrderFrom) > 0 && fm.Format < formatOrderFrom {
		return nil, nil, nil, fmt.Errorf("metadata: order_from in a format %d part", fm.Format)
	}
	kind, ok := parseKind(fm.Kind)
	if !ok {
		return nil, nil, nil, fmt.Errorf("metadata: unknown part kind %q", fm.Kind)
	}
	if (fm.Residual || fm.PositionResidual) && (fm.Format < formatResidual || !residualKind(kind) || fm.PageRows <= 0) {
		return nil, nil, nil, fmt.Errorf("metadata: resolution residuals in a format %d %s part", fm.Format, kind)
	}
	if fm.Stripe <= 0 || len(fm.Stripes)%4 != 0 {
		return nil, nil, nil, fmt.Errorf("metadata: bad stripe table")
	}
	m := &Meta{
		Table: catalog.TableID(fm.Table), Shard: fm.Shard, Part: fm.Part, Kind: kind, Level: fm.Level,
		Rows: fm.Rows, MinCommit: fm.MinCommit, MaxCommit: fm.MaxCommit, MinSort: fm.MinSort, MaxSort: fm.MaxSort,
		KeyBlocks: fm.KeyBlocks, PageRows: fm.PageRows, Columns: make([]ColumnMeta, len(fm.Columns)),
		Residual: fm.Residual, PositionResidual: fm.PositionResidual,
	}
	for i, c := range fm.Columns {
		k, ok := kindByName[c.Kind]
		if !ok {
			return nil, nil, nil, fmt.Errorf("metadata: column %d has unknown type kind %q", c.ID, c.Kind)
		}
		t := types.Type{Kind: k, Precision: c.Precision, Scale: c.Scale, Len: c.Len, TZ: c.TZ}
		if _, err := physicalOf(t); err != nil {
			return nil, nil, nil, fmt.Errorf("metadata: column %d: %v", c.ID, err)
		}
		codec, err := catalog.ParseCodec(c.Codec, t)
		if err != nil {
			return nil, nil, nil, fmt.Errorf("metadata: column %d codec: %v", c.ID, err)
		}
		m.Columns[i] = ColumnMeta{ID: catalog.ColumnID(c.ID), Type: t, Codec: codec}
	}
	for _, o := range fm.OrderFrom {
		g := GroupOrder{Group: o.Group, Cols: make([]catalog.ColumnID, len(o.Cols))}
		if len(o.Cols) == 0 {
			return nil, nil, nil, fmt.Errorf("metadata: order_from of group %d names no column", o.Group)
		}
		for i, c := range o.Cols {
			g.Cols[i] = catalog.ColumnID(c)
			if m.Column(g.Cols[i]) < 0 {
				return nil, nil, nil, fmt.Errorf("metadata: order_from of group %d names column %d, which the part does not hold", o.Group, c)
			}
		}
		for _, h := range m.OrderFrom {
			if h.Group == g.Group {
				return nil, nil, nil, fmt.Errorf("metadata: order_from lists group %d twice", o.Group)
			}
		}
		m.OrderFrom = append(m.OrderFrom, g)
	}
	blocks := make([]BlockInfo, len(fm.Blocks))
	var rows uint64
	for i, b := range fm.Blocks {
		if b.Rows <= 0 {
			return nil, nil, nil, fmt.Errorf("metadata: block %d has %d rows", i, b.Rows)
		}
		rows += uint64(b.Rows)
		blocks[i] = BlockInfo(b)
	}
	if rows != m.Rows {
		return nil, nil, nil, fmt.Errorf("metadata: blocks hold %d rows, part says %d", rows, m.Rows)
	}
	return m, blocks, &fm, nil
}

// stripeCRC returns the CRC of stripe i from the metadata table.
func (fm *fileMeta) stripeCRC(i int) uint32 { return binary.BigEndian.Uint32(fm.Stripes[4*i:]) }
