package expr

import (
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"hash"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/strata-db/strata/internal/sqlerr"
	"github.com/strata-db/strata/internal/types"
)

// encode(bytes, format) and decode(text, format), PostgreSQL's conversions
// between BYTES and text in the formats hex, base64 and escape
// (docs/functions.md, "Strings"). An unknown format is 22023, input that
// is not valid in its format 22P02, as there.

// bytesFunc binds encode and decode, reporting whether name is one of
// them; f.fn stays nil when the arguments do not fit.
func bytesFunc(f *Func, sig *Signature, name string, argTypes []types.Type) bool {
	if name != "encode" && name != "decode" {
		return false
	}
	isStr := func(t types.Type) bool { return t.Kind == types.String || t.Kind == types.Unknown }
	if len(argTypes) != 2 || !isStr(argTypes[1]) {
		return true
	}
	str, byt := types.Of(types.String), types.Of(types.Bytes)
	if name == "encode" {
		// Text is taken as its bytes, so that encode('abc', 'hex') works
		// as PostgreSQL's does for an untyped literal.
		if argTypes[0].Kind != types.Bytes && !isStr(argTypes[0]) {
			return true
		}
		sig.Params, sig.Result = []types.Type{byt, str}, str
		f.fn = func(a []types.Value, _ types.Type) (types.Value, error) {
			s, err := encodeBytes(a[0].Bytes(), a[1].Str())
			return types.NewString(s), err
		}
		return true
	}
	if !isStr(argTypes[0]) {
		return true
	}
	sig.Params, sig.Result = []types.Type{str, str}, byt
	f.fn = func(a []types.Value, _ types.Type) (types.Value, error) {
		b, err := decodeText(a[0].Str(), a[1].Str())
		return types.NewBytes(b), err
	}
	return true
}

func unknownEncoding(format string) error {
	return sqlerr.New(sqlerr.CodeInvalidParameter, "unrecognized encoding: %q", format).
		WithHint("Valid encodings are \"base64\", \"escape\" and \"hex\".")
}

// encodeBytes is encode(b, format).
func encodeBytes(b []byte, format string) (string, error) {
	switch strings.ToLower(format) {
	case "hex":
		return hex.EncodeToString(b), nil
	case "base64":
		// PostgreSQL breaks the text into lines of 76 characters.
		s := base64.StdEncoding.EncodeToString(b)
		var sb strings.Builder
		for len(s) > 76 {
			sb.WriteString(s[:76])
			sb.WriteByte('\n')
			s = s[76:]
		}
		sb.WriteString(s)
		return sb.String(), nil
	case "escape":
		// A zero byte or one with the high bit set is \ooo, a backslash
		// is doubled, the rest stand as they are.
		var sb strings.Builder
		for _, c := range b {
			switch {
			case c == '\\':
				sb.WriteString(`\\`)
			case c == 0 || c >= 0x80:
				sb.WriteByte('\\')
				sb.WriteByte('0' + c>>6)
				sb.WriteByte('0' + c>>3&7)
				sb.WriteByte('0' + c&7)
			default:
				sb.WriteByte(c)
			}
		}
		return sb.String(), nil
	}
	return "", unknownEncoding(format)
}

// decodeText is decode(s, format).
func decodeText(s, format string) ([]byte, error) {
	switch strings.ToLower(format) {
	case "hex":
		// PostgreSQL skips whitespace between pairs of digits.
		s = strings.Map(func(r rune) rune {
			if r == ' ' || r == '\t' || r == '\n' || r == '\r' {
				return -1
			}
			return r
		}, s)
		if len(s)%2 == 1 {
			return nil, sqlerr.New(sqlerr.CodeInvalidText, "invalid hexadecimal data: odd number of digits")
		}
		b, err := hex.DecodeString(s)
		if err != nil {
			i := strings.IndexFunc(s, func(r rune) bool { return !strings.ContainsRune("0123456789abcdefABCDEF", r) })
			_, size := utf8.DecodeRuneInString(s[i:])
			return nil, sqlerr.New(sqlerr.CodeInvalidText, "invalid hexadecimal digit: %q", s[i:i+size])
		}
		return b, nil
	case "base64":
		s = strings.Map(func(r rune) rune {
			if r == ' ' || r == '\t' || r == '\n' || r == '\r' {
				return -1
			}
			return r
		}, s)
		b, err := base64.StdEncoding.DecodeString(s)
		if err != nil {
			return nil, sqlerr.New(sqlerr.CodeInvalidText, "invalid base64 data %q", s)
		}
		return b, nil
	case "escape":
		out := make([]byte, 0, len(s))
		for i := 0; i < len(s); i++ {
			c := s[i]
			if c != '\\' {
				out = append(out, c)
				continue
			}
			switch {
			case i+1 < len(s) && s[i+1] == '\\':
				out = append(out, '\\')
				i++
			case i+3 < len(s) && isOct(s[i+1]) && s[i+1] <= '3' && isOct(s[i+2]) && isOct(s[i+3]):
				out = append(out, (s[i+1]-'0')<<6|(s[i+2]-'0')<<3|(s[i+3]-'0'))
				i += 3
			default:
				return nil, sqlerr.New(sqlerr.CodeInvalidText, "invalid input syntax for type bytea")
			}
		}
		return out, nil
	}
	return nil, unknownEncoding(format)
}

func isOct(c byte) bool { return c >= '0' && c <= '7' }

// hashFunc binds to_hex and the SHA-2 digests sha224, sha256, sha384 and
// sha512, reporting whether name is one of them; f.vec stays nil when the
// arguments do not fit.
func hashFunc(f *Func, sig *Signature, name string, argTypes []types.Type) bool {
	switch name {
	case "to_hex":
		if len(argTypes) != 1 {
			return true
		}
		// PostgreSQL has to_hex(int4) and to_hex(int8) and writes a
		// negative number as its two's complement in that width:
		// to_hex(-1) is ffffffff, to_hex(-1::int8) 16 f's. An integer of
		// up to 32 signed bits is an int4 (the planner types a literal
		// that fits as one, as PostgreSQL does); a UINT64 has no sign.
		t := argTypes[0]
		var bits32 bool
		switch k := t.Kind; {
		case k == types.Uint64:
			sig.Params = []types.Type{t}
		case k.IsInteger() && k.Bits() <= 32 && k != types.Uint32:
			sig.Params, bits32 = []types.Type{types.Of(types.Int32)}, true
		case k.IsInteger() && k.Bits() <= 64 || k == types.Unknown:
			sig.Params = []types.Type{types.Of(types.Int64)}
		default:
			return true
		}
		sig.Result = types.Of(types.String)
		f.vec = func(vs []*types.Vector, n int, out *types.Vector) error {
			var buf []byte
			v := vs[0]
			return rows(vs, n, out, func(i int) error {
				var x uint64
				switch {
				case t.Kind == types.Uint64:
					x = v.Uint64s()[i]
				case bits32:
					x = uint64(uint32(v.Int64s()[i]))
				default:
					x = uint64(v.Int64s()[i])
				}
				buf = strconv.AppendUint(buf[:0], x, 16)
				out.AppendBytes(buf)
				return nil
			})
		}
	case "sha224", "sha256", "sha384", "sha512":
		// PostgreSQL's take bytea only: an untyped literal is read as
		// bytea ('abc', or '\x616263'), a text value is 42883.
		if len(argTypes) != 1 || argTypes[0].Kind != types.Bytes && argTypes[0].Kind != types.Unknown {
			return true
		}
		byt := types.Of(types.Bytes)
		sig.Params, sig.Result = []types.Type{byt}, byt
		newHash := map[string]func() hash.Hash{
			"sha224": sha256.New224, "sha256": sha256.New, "sha384": sha512.New384, "sha512": sha512.New,
		}[name]
		f.vec = func(vs []*types.Vector, n int, out *types.Vector) error {
			// One hash and one digest buffer per batch.
			h := newHash()
			var buf []byte
			return rows(vs, n, out, func(i int) error {
				h.Reset()
				h.Write(vs[0].BytesAt(i))
				buf = h.Sum(buf[:0])
				out.AppendBytes(buf)
				return nil
			})
		}
	default:
		return false
	}
	return true
}
