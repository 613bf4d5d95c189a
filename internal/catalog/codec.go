package catalog

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/strata-db/strata/internal/types"
)

// Compression is the general-purpose compressor of a column codec.
type Compression uint8

// The compressors of R11.3.
const (
	CompressNone Compression = iota
	CompressZSTD
	CompressLZ4
)

// MaxZSTDLevel is the highest ZSTD level a codec may name.
const MaxZSTDLevel = 22

// DefaultZSTDLevel is the level of ZSTD written without one, and of every
// codec chosen per type: level 1 is ClickHouse's default and compresses at
// several hundred MB/s, which keeps flushes cheap.
const DefaultZSTDLevel = 1

// Codec is a parsed column codec (R11.3): an optional DELTA pre-pass, which
// stores differences between consecutive values, followed by an optional
// compressor. The zero Codec is NONE.
type Codec struct {
	Delta       bool
	Compression Compression
	// Level is the ZSTD level (1..22); 0 for other compressors.
	Level int
}

// String returns the codec's canonical text, the form
// system.table_column_codecs shows and ParseCodec reads back:
// "NONE", "LZ4", "ZSTD(3)", "DELTA", "DELTA, ZSTD(1)".
func (c Codec) String() string {
	var comp string
	switch c.Compression {
	case CompressZSTD:
		comp = "ZSTD(" + strconv.Itoa(c.Level) + ")"
	case CompressLZ4:
		comp = "LZ4"
	}
	switch {
	case c.Delta && comp != "":
		return "DELTA, " + comp
	case c.Delta:
		return "DELTA"
	case comp != "":
		return comp
	}
	return "NONE"
}

// deltaAllowed reports whether DELTA suits values of type t: differences
// are meaningful only for integers and the integer-backed DATE and
// DATETIME64.
func deltaAllowed(t types.Type) bool {
	return t.Kind.IsInteger() || t.Kind == types.Date || t.Kind == types.DateTime64
}

// DefaultCodec returns the codec chosen for a column of type t that names
// none (R11.3):
//
//	integers, DATE, DATETIME64   DELTA, ZSTD(1)  (sorted or slowly changing numbers delta well)
//	BOOL                         NONE            (storage packs bits already)
//	everything else              ZSTD(1)         (strings, bytes, floats, decimals, UUIDs)
func DefaultCodec(t types.Type) Codec {
	switch {
	case deltaAllowed(t):
		return Codec{Delta: true, Compression: CompressZSTD, Level: DefaultZSTDLevel}
	case t.Kind == types.Bool:
		return Codec{}
	}
	return Codec{Compression: CompressZSTD, Level: DefaultZSTDLevel}
}

// ParseCodec reads a codec list as written inside CODEC(...), e.g.
// "ZSTD(3)", "DELTA, ZSTD", "LZ4" or "NONE" (case-insensitive), and checks
// that it suits a column of type t. The error says which part is wrong;
// callers add the column.
func ParseCodec(text string, t types.Type) (Codec, error) {
	var c Codec
	parts := strings.Split(text, ",")
	sawNone := false
	for i, raw := range parts {
		p := strings.ToUpper(strings.TrimSpace(raw))
		name, arg, hasArg, err := splitCodecCall(p)
		if err != nil {
			return Codec{}, err
		}
		switch name {
		case "NONE":
			if hasArg || len(parts) != 1 {
				return Codec{}, fmt.Errorf("codec NONE stands alone")
			}
			sawNone = true
		case "DELTA":
			if hasArg {
				return Codec{}, fmt.Errorf("codec DELTA takes no level")
			}
			if i != 0 || c.Delta {
				return Codec{}, fmt.Errorf("codec DELTA must come first, once")
			}
			if !deltaAllowed(t) {
				return Codec{}, fmt.Errorf("codec DELTA applies to integers, DATE and DATETIME64, not %s", t)
			}
			c.Delta = true
		case "ZSTD", "LZ4":
			if c.Compression != CompressNone {
				return Codec{}, fmt.Errorf("codec %s: only one compressor may be named", p)
			}
			if name == "LZ4" {
				if hasArg {
					return Codec{}, fmt.Errorf("codec LZ4 takes no level")
				}
				c.Compression = CompressLZ4
				break
			}
			c.Compression, c.Level = CompressZSTD, DefaultZSTDLevel
			if hasArg {
				lv, err := strconv.Atoi(arg)
				if err != nil || lv < 1 || lv > MaxZSTDLevel {
					return Codec{}, fmt.Errorf("codec %s: the ZSTD level must be an integer from 1 to %d", p, MaxZSTDLevel)
				}
				c.Level = lv
			}
		case "":
			return Codec{}, fmt.Errorf("codec list %q has an empty entry", text)
		default:
			return Codec{}, fmt.Errorf("unknown codec %s (known: NONE, LZ4, ZSTD, ZSTD(level), DELTA)", p)
		}
	}
	if sawNone {
		return Codec{}, nil
	}
	return c, nil
}

// splitCodecCall splits "ZSTD(3)" into ("ZSTD", "3", true).
func splitCodecCall(p string) (name, arg string, hasArg bool, err error) {
	open := strings.IndexByte(p, '(')
	if open < 0 {
		if strings.ContainsAny(p, ") ") {
			return "", "", false, fmt.Errorf("malformed codec %s", p)
		}
		return p, "", false, nil
	}
	if !strings.HasSuffix(p, ")") || strings.Count(p, "(") != 1 || strings.Count(p, ")") != 1 {
		return "", "", false, fmt.Errorf("malformed codec %s", p)
	}
	return strings.TrimSpace(p[:open]), strings.TrimSpace(p[open+1 : len(p)-1]), true, nil
}
