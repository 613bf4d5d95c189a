package part

import (
	"fmt"
	"strconv"
	"sync"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress"
	pqzstd "github.com/parquet-go/parquet-go/compress/zstd"
	"github.com/parquet-go/parquet-go/encoding"

	"github.com/klauspost/compress/zstd"
	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/types"
)

// The fixed columns every part has, by Parquet column name. Table columns
// are named "c" followed by the decimal column id.
const (
	colSort         = "_sort"
	colGroup        = "_group"
	colCommit       = "_commit"
	colSeq          = "_seq"
	colTomb         = "_tomb"
	colWonAt        = "_won_at"
	colEndedAt      = "_ended_at"
	colSupersededBy = "_superseded_by"
	colState        = "_state"
	colOrder        = "_order"
)

// fixedIdx numbers the fixed columns for the reader's lookup tables.
const (
	fSort = iota
	fGroup
	fCommit
	fSeq
	fTomb
	fWonAt
	fEndedAt
	fSupersededBy
	fState
	fOrder
	numFixed
)

var fixedNames = [numFixed]string{
	fSort: colSort, fGroup: colGroup, fCommit: colCommit, fSeq: colSeq, fTomb: colTomb,
	fWonAt: colWonAt, fEndedAt: colEndedAt, fSupersededBy: colSupersededBy, fState: colState, fOrder: colOrder,
}

// columnName returns the Parquet name of table column id.
func columnName(id catalog.ColumnID) string { return "c" + strconv.FormatUint(uint64(id), 10) }

// physical is how one Strata type is laid out in Parquet.
type physical struct {
	// kind is the Parquet physical type.
	kind parquet.Kind
	// size is the byte width of a FIXED_LEN_BYTE_ARRAY, 0 otherwise.
	size int
	// leaf builds the (required) leaf node, with its logical annotation.
	leaf func() parquet.Node
}

// physicalOf maps a column type onto Parquet (doc.go, "Types"):
//
//	INT8…INT32, UINT8…UINT32   INT32 with the INT(bits, signed) annotation
//	INT64, UINT64              INT64 with the INT annotation
//	DATE                       INT32 DATE (days since 1970-01-01)
//	DATETIME64(p)              INT64 ticks of 10^-p s (the precision and zone live in Meta)
//	INT128, UINT128            FIXED_LEN_BYTE_ARRAY(16), big-endian two's complement
//	INT256, UINT256            FIXED_LEN_BYTE_ARRAY(32), likewise
//	DECIMAL(p,s)               DECIMAL over FIXED_LEN_BYTE_ARRAY(16) for p ≤ 38, (32) above
//	FLOAT32, FLOAT64           FLOAT, DOUBLE
//	BOOL                       BOOLEAN
//	STRING, BYTES              BYTE_ARRAY (STRING annotated UTF8)
//	UUID                       FIXED_LEN_BYTE_ARRAY(16) UUID
func physicalOf(t types.Type) (physical, error) {
	k := t.Kind
	switch {
	case k == types.Int8 || k == types.Int16 || k == types.Int32:
		return physical{kind: parquet.Int32, leaf: func() parquet.Node { return parquet.Int(k.Bits()) }}, nil
	case k == types.Uint8 || k == types.Uint16 || k == types.Uint32:
		return physical{kind: parquet.Int32, leaf: func() parquet.Node { return parquet.Uint(k.Bits()) }}, nil
	case k == types.Int64:
		return physical{kind: parquet.Int64, leaf: func() parquet.Node { return parquet.Int(64) }}, nil
	case k == types.Uint64:
		return physical{kind: parquet.Int64, leaf: func() parquet.Node { return parquet.Uint(64) }}, nil
	case k == types.Date:
		return physical{kind: parquet.Int32, leaf: parquet.Date}, nil
	case k == types.DateTime64:
		return physical{kind: parquet.Int64, leaf: func() parquet.Node { return parquet.Int(64) }}, nil
	case k == types.Int128 || k == types.Uint128 || k == types.Int256 || k == types.Uint256:
		n := k.Bits() / 8
		return physical{kind: parquet.FixedLenByteArray, size: n, leaf: func() parquet.Node {
			return parquet.Leaf(parquet.FixedLenByteArrayType(n))
		}}, nil
	case k == types.Decimal:
		if t.Precision < 1 || t.Precision > types.MaxDecimalPrecision || t.Scale > t.Precision {
			return physical{}, fmt.Errorf("bad type %s", t)
		}
		n := 32
		if t.Precision <= 38 {
			n = 16
		}
		return physical{kind: parquet.FixedLenByteArray, size: n, leaf: func() parquet.Node {
			return parquet.Decimal(int(t.Scale), int(t.Precision), parquet.FixedLenByteArrayType(n))
		}}, nil
	case k == types.Float32:
		return physical{kind: parquet.Float, leaf: func() parquet.Node { return parquet.Leaf(parquet.FloatType) }}, nil
	case k == types.Float64:
		return physical{kind: parquet.Double, leaf: func() parquet.Node { return parquet.Leaf(parquet.DoubleType) }}, nil
	case k == types.Bool:
		return physical{kind: parquet.Boolean, leaf: func() parquet.Node { return parquet.Leaf(parquet.BooleanType) }}, nil
	case k == types.String:
		return physical{kind: parquet.ByteArray, leaf: parquet.String}, nil
	case k == types.Bytes:
		return physical{kind: parquet.ByteArray, leaf: func() parquet.Node { return parquet.Leaf(parquet.ByteArrayType) }}, nil
	case k == types.UUID:
		return physical{kind: parquet.FixedLenByteArray, size: 16, leaf: parquet.UUID}, nil
	}
	return physical{}, fmt.Errorf("type %s cannot be stored", t)
}

// encodingOf maps a codec onto a Parquet encoding. DELTA becomes
// DELTA_BINARY_PACKED on INT32 and INT64 columns. Wider integers and
// DECIMALs have no Parquet delta encoding; when the codec compresses they
// are stored BYTE_STREAM_SPLIT, which puts byte k of every value together,
// so the mostly-zero high bytes of big-endian numbers become long runs the
// compressor removes (a UINT256 balance column shrank from 4.4 to 0.8
// bytes per row against PLAIN under ZSTD(1)). Everything else is PLAIN.
func encodingOf(t types.Type, p physical, c catalog.Codec) encoding.Encoding {
	if c.Delta && (p.kind == parquet.Int32 || p.kind == parquet.Int64) {
		return &parquet.DeltaBinaryPacked
	}
	if t.Kind.Class() == types.ClassWide && c.Compression != catalog.CompressNone {
		return &parquet.ByteStreamSplit
	}
	return &parquet.Plain
}

// zstdCodecs holds one parquet zstd codec per encoder speed: the codecs
// pool their encoders, so they are shared rather than made per file.
var zstdCodecs sync.Map // zstd.EncoderLevel → *pqzstd.Codec

// compressionOf maps a codec's compressor onto Parquet: ZSTD(level) → ZSTD
// at the klauspost encoder speed for that level (it has four, for levels
// 1–2, 3–5, 6–9 and 10–22), LZ4 → LZ4_RAW, none → UNCOMPRESSED.
func compressionOf(c catalog.Codec) compress.Codec {
	switch c.Compression {
	case catalog.CompressZSTD:
		lv := zstd.EncoderLevelFromZstd(max(c.Level, 1))
		if v, ok := zstdCodecs.Load(lv); ok {
			return v.(*pqzstd.Codec)
		}
		v, _ := zstdCodecs.LoadOrStore(lv, &pqzstd.Codec{Level: lv})
		return v.(*pqzstd.Codec)
	case catalog.CompressLZ4:
		return &parquet.Lz4Raw
	}
	return &parquet.Uncompressed
}

// fixedCodec is the codec of the fixed columns: they are sorted or nearly
// constant, so deltas and a fast ZSTD make them almost free.
var fixedCodec = catalog.Codec{Delta: true, Compression: catalog.CompressZSTD, Level: 1}

// historyFixedCodec is the codec of the fixed columns of history parts.
// Only merges write those, in the background, and they hold most of a
// settled table, so they pay for klauspost's default ZSTD speed (levels
// 3–5) instead of the fastest: 1.5 % fewer bytes over the benchmark's
// merged parts, and no slower to decode (the deltas are bit-packed, so
// ZSTD finds few matches to undo at any level).
//
// BYTE_STREAM_SPLIT for _commit and the resolution columns of history
// parts (and PLAIN in current parts) was measured too: 12 % fewer bytes
// over the merged parts, because in key order commits jump at every key
// and make delta miniblocks wide, but 35–50 % more CPU to decode the
// fixed columns, since ZSTD then rebuilds 8 bytes a value instead of
// about 11 bits. Scans come first, so the deltas stay (docs/benchmarks.md,
// "Bytes on disk (2026-12-02, branch size)").
var historyFixedCodec = catalog.Codec{Delta: true, Compression: catalog.CompressZSTD, Level: 3}

// buildSchema returns the Parquet schema of a part of kind with the given
// table columns. The same function serves the writer and the reader's
// check of a file's schema (which compares types, not compression: each
// column chunk says how it is compressed, so the level is free to change).
func buildSchema(kind Kind, cols []ColumnMeta) (*parquet.Schema, error) {
	fc := fixedCodec
	if kind == KindHistory {
		fc = historyFixedCodec
	}
	comp := compressionOf(fc)
	req := func(n parquet.Node, enc encoding.Encoding) parquet.Node {
		return parquet.Compressed(parquet.Encoded(n, enc), comp)
	}
	g := parquet.Group{
		colSort:         req(parquet.Leaf(parquet.ByteArrayType), &parquet.DeltaByteArray),
		colGroup:        req(parquet.Uint(16), &parquet.DeltaBinaryPacked),
		colCommit:       req(parquet.Uint(64), &parquet.DeltaBinaryPacked),
		colSeq:          req(parquet.Uint(32), &parquet.DeltaBinaryPacked),
		colTomb:         req(parquet.Leaf(parquet.BooleanType), &parquet.Plain),
		colWonAt:        req(parquet.Uint(64), &parquet.DeltaBinaryPacked),
		colEndedAt:      req(parquet.Uint(64), &parquet.DeltaBinaryPacked),
		colSupersededBy: req(parquet.Uint(64), &parquet.DeltaBinaryPacked),
		colState:        req(parquet.Uint(8), &parquet.DeltaBinaryPacked),
		colOrder:        req(parquet.Leaf(parquet.ByteArrayType), &parquet.DeltaByteArray),
	}
	for _, c := range cols {
		p, err := physicalOf(c.Type)
		if err != nil {
			return nil, fmt.Errorf("column %d: %w", c.ID, err)
		}
		n := parquet.Encoded(p.leaf(), encodingOf(c.Type, p, c.Codec))
		g[columnName(c.ID)] = parquet.Optional(parquet.Compressed(n, compressionOf(c.Codec)))
	}
	return parquet.NewSchema("strata_part", g), nil
}
