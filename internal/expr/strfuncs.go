package expr

import (
	"bytes"
	"crypto/md5"
	"encoding/hex"
	"math"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/strata-db/strata/internal/sqlerr"
	"github.com/strata-db/strata/internal/types"
)

// The string functions of PostgreSQL (docs/functions.md, "Strings"):
// replace, strpos, lpad, rpad, left, right, repeat, reverse, split_part,
// concat_ws, initcap, chr, ascii, starts_with, md5, overlay,
// regexp_replace and regexp_like. Lengths and positions count
// characters, not bytes, as PostgreSQL does for UTF-8. Each runs as one
// loop over the batch that reads the arguments' bytes in place and builds a
// result in one scratch buffer per batch: a fixed-size result (strpos,
// ascii, starts_with) allocates nothing per row.

// maxStringBytes is the longest string a function builds, PostgreSQL's 1 GB
// allocation limit: lpad, rpad and repeat refuse a longer result with
// 54000 rather than exhausting memory.
const maxStringBytes = 1 << 30

// maxBatchBytes bounds the strings one call builds for a batch of rows
// (a variable so that a test can lower it).
var maxBatchBytes int64 = maxStringBytes

// spaceFill is lpad's and rpad's default fill.
var spaceFill = []byte(" ")

func tooLong() error {
	return sqlerr.New(codeProgramLimit, "requested length too large")
}

// rows calls f for each row with no NULL argument and appends NULL for
// the others: the loop of a strict function.
func rows(vs []*types.Vector, n int, out *types.Vector, f func(i int) error) error {
	nulls := hasNulls(vs)
	for i := range n {
		if nulls && anyNull(vs, i) {
			out.AppendNull()
			continue
		}
		if err := f(i); err != nil {
			return err
		}
	}
	return nil
}

// prefixChars is the longest prefix of s with at most k characters.
func prefixChars(s []byte, k int64) []byte {
	if k <= 0 {
		return s[:0]
	}
	i := 0
	for ; i < len(s) && k > 0; k-- {
		_, size := utf8.DecodeRune(s[i:])
		i += size
	}
	return s[:i]
}

// suffixChars is the longest suffix of s with at most k characters.
func suffixChars(s []byte, k int64) []byte {
	if k <= 0 {
		return s[len(s):]
	}
	i := len(s)
	for ; i > 0 && k > 0; k-- {
		_, size := utf8.DecodeLastRune(s[:i])
		i -= size
	}
	return s[i:]
}

// appendPad appends k characters of fill, repeated and cut, to buf.
func appendPad(buf, fill []byte, k int64) []byte {
	for k > 0 {
		for i := 0; i < len(fill) && k > 0; k-- {
			_, size := utf8.DecodeRune(fill[i:])
			buf = append(buf, fill[i:i+size]...)
			i += size
		}
	}
	return buf
}

// pad is lpad or rpad: s cut or filled to n characters.
func pad(buf, s, fill []byte, n int64, left bool) ([]byte, error) {
	m := int64(utf8.RuneCount(s))
	if n <= m {
		return append(buf, prefixChars(s, n)...), nil
	}
	if len(fill) == 0 {
		return append(buf, s...), nil
	}
	k := n - m
	fc := int64(utf8.RuneCount(fill))
	if k/fc+1 > (maxStringBytes-int64(len(s)))/int64(len(fill)) {
		return buf, tooLong()
	}
	if !left {
		buf = append(buf, s...)
	}
	buf = appendPad(buf, fill, k)
	if left {
		buf = append(buf, s...)
	}
	return buf, nil
}

// splitPart is field k (from 1, or from the end when negative) of s cut
// at delim, or "" past the last field, as PostgreSQL 14's split_part.
func splitPart(s, delim []byte, k int64) []byte {
	if len(s) == 0 {
		return nil
	}
	if len(delim) == 0 {
		if k == 1 || k == -1 {
			return s
		}
		return nil
	}
	if k < 0 {
		k = int64(bytes.Count(s, delim)) + 1 + k + 1
		if k < 1 {
			return nil
		}
	}
	for ; k > 1; k-- {
		i := bytes.Index(s, delim)
		if i < 0 {
			return nil
		}
		s = s[i+len(delim):]
	}
	if i := bytes.Index(s, delim); i >= 0 {
		return s[:i]
	}
	return s
}

// appendInitcap appends s with the first letter of each word upper case
// and the others lower case, a word being a run of letters and digits
// (PostgreSQL's initcap).
func appendInitcap(buf, s []byte) []byte {
	inWord := false
	for len(s) > 0 {
		r, size := utf8.DecodeRune(s)
		s = s[size:]
		if inWord {
			r = unicode.ToLower(r)
		} else {
			r = unicode.ToUpper(r)
		}
		inWord = unicode.IsLetter(r) || unicode.IsDigit(r)
		buf = utf8.AppendRune(buf, r)
	}
	return buf
}

// chr is the character of code point x, with PostgreSQL's errors for the
// values UTF-8 has no character for.
func chr(buf []byte, x int64) ([]byte, error) {
	switch {
	case x == 0:
		return buf, sqlerr.New(codeCharNotPermitted, "null character not permitted")
	case x < 0:
		return buf, sqlerr.New(sqlerr.CodeInvalidParameter, "character number must be positive: %d", x)
	case x > unicode.MaxRune:
		return buf, sqlerr.New(codeProgramLimit, "requested character too large for encoding: %d", x)
	case x >= 0xD800 && x <= 0xDFFF:
		return buf, sqlerr.New(codeProgramLimit, "requested character not valid for encoding: %d", x)
	}
	return utf8.AppendRune(buf, rune(x)), nil
}

// overlay is overlay(s PLACING r FROM from FOR count): the characters of
// s before from, then r, then those of s from from+count on.
func overlay(buf, s, r []byte, from, count int64) ([]byte, error) {
	if from <= 0 {
		return buf, sqlerr.New(codeSubstring, "negative substring length not allowed")
	}
	if count > 0 && from > math.MaxInt64-count {
		return buf, sqlerr.OutOfRange(-1, "integer out of range: overlay from %d for %d", from, count)
	}
	buf = append(buf, prefixChars(s, from-1)...)
	buf = append(buf, r...)
	if rest := from + count - 1; rest <= 0 {
		buf = append(buf, s...)
	} else {
		n := int64(utf8.RuneCount(s))
		buf = append(buf, suffixChars(s, n-rest)...)
	}
	return buf, nil
}

// strFunc binds the string functions; ok is false for another name. It
// leaves f.fn and f.vec nil when the arguments do not fit.
func strFunc(f *Func, sig *Signature, name string, argTypes []types.Type) bool {
	n := len(argTypes)
	str := types.Of(types.String)
	// params checks the arguments against the letters of kinds, one per
	// parameter ('s' text, 'i' integer, 'b' text or bytes), the last
	// minOpt of them optional, and fixes sig.Params.
	params := func(kinds string, opt int) bool {
		if n > len(kinds) || n < len(kinds)-opt {
			return false
		}
		sig.Params = make([]types.Type, n)
		for i, t := range argTypes {
			k := t.Kind
			switch kinds[i] {
			case 's':
				if k != types.String && k != types.Unknown {
					return false
				}
				sig.Params[i] = str
			case 'b':
				switch k {
				case types.String, types.Unknown:
					sig.Params[i] = str
				case types.Bytes:
					sig.Params[i] = t
				default:
					return false
				}
			case 'i':
				if !k.IsInteger() && k != types.Unknown {
					return false
				}
				sig.Params[i] = types.Of(types.Int64)
			}
		}
		sig.Result = str
		return true
	}
	// text is the vecFunc of a function that builds a string in buf. A
	// batch holds up to 1024 rows in one vector, so it bounds their sum
	// too: 1024 rows of repeat(s, n) must not each take a gigabyte.
	text := func(g func(vs []*types.Vector, i int, buf []byte) ([]byte, error)) vecFunc {
		return func(vs []*types.Vector, n int, out *types.Vector) error {
			var buf []byte
			return rows(vs, n, out, func(i int) error {
				var err error
				if buf, err = g(vs, i, buf[:0]); err != nil {
					return err
				}
				if out.ValueBytes()+int64(len(buf)) > maxBatchBytes {
					return sqlerr.New(codeProgramLimit, "%s: the results of one batch of rows exceed 1 GB", name)
				}
				out.AppendBytes(buf)
				return nil
			})
		}
	}
	switch name {
	case "replace":
		if params("sss", 0) {
			f.vec = text(func(vs []*types.Vector, i int, buf []byte) ([]byte, error) {
				s, from, to := vs[0].BytesAt(i), vs[1].BytesAt(i), vs[2].BytesAt(i)
				if len(from) == 0 {
					return append(buf, s...), nil
				}
				for {
					j := bytes.Index(s, from)
					if j < 0 {
						return append(buf, s...), nil
					}
					buf = append(append(buf, s[:j]...), to...)
					s = s[j+len(from):]
				}
			})
		}
	case "strpos":
		if params("ss", 0) {
			sig.Result = types.Of(types.Int32)
			f.vec = func(vs []*types.Vector, n int, out *types.Vector) error {
				return rows(vs, n, out, func(i int) error {
					s := vs[0].BytesAt(i)
					j := bytes.Index(s, vs[1].BytesAt(i))
					if j >= 0 {
						j = utf8.RuneCount(s[:j]) + 1
					} else {
						j = 0
					}
					out.AppendInt64(int64(j))
					return nil
				})
			}
		}
	case "starts_with":
		if params("ss", 0) {
			sig.Result = types.Of(types.Bool)
			f.vec = func(vs []*types.Vector, n int, out *types.Vector) error {
				return rows(vs, n, out, func(i int) error {
					out.AppendBool(bytes.HasPrefix(vs[0].BytesAt(i), vs[1].BytesAt(i)))
					return nil
				})
			}
		}
	case "ascii":
		if params("s", 0) {
			sig.Result = types.Of(types.Int32)
			f.vec = func(vs []*types.Vector, n int, out *types.Vector) error {
				return rows(vs, n, out, func(i int) error {
					r, size := utf8.DecodeRune(vs[0].BytesAt(i))
					if size == 0 {
						r = 0
					}
					out.AppendInt64(int64(r))
					return nil
				})
			}
		}
	case "lpad", "rpad":
		if params("sis", 1) {
			left := name == "lpad"
			f.vec = text(func(vs []*types.Vector, i int, buf []byte) ([]byte, error) {
				fill := spaceFill
				if len(vs) == 3 {
					fill = vs[2].BytesAt(i)
				}
				return pad(buf, vs[0].BytesAt(i), fill, vs[1].Int64s()[i], left)
			})
		}
	case "left", "right":
		if params("si", 0) {
			left := name == "left"
			f.vec = text(func(vs []*types.Vector, i int, buf []byte) ([]byte, error) {
				s, k := vs[0].BytesAt(i), vs[1].Int64s()[i]
				if k < 0 {
					// All but the last (left) or first (right) -k characters.
					k = max(int64(utf8.RuneCount(s))+k, 0)
				}
				if left {
					return append(buf, prefixChars(s, k)...), nil
				}
				return append(buf, suffixChars(s, k)...), nil
			})
		}
	case "repeat":
		if params("si", 0) {
			f.vec = text(func(vs []*types.Vector, i int, buf []byte) ([]byte, error) {
				s, k := vs[0].BytesAt(i), vs[1].Int64s()[i]
				if k <= 0 || len(s) == 0 {
					return buf, nil
				}
				if k > maxStringBytes/int64(len(s)) {
					return buf, tooLong()
				}
				for range k {
					buf = append(buf, s...)
				}
				return buf, nil
			})
		}
	case "reverse":
		if params("s", 0) {
			f.vec = text(func(vs []*types.Vector, i int, buf []byte) ([]byte, error) {
				s := vs[0].BytesAt(i)
				for len(s) > 0 {
					_, size := utf8.DecodeLastRune(s)
					buf = append(buf, s[len(s)-size:]...)
					s = s[:len(s)-size]
				}
				return buf, nil
			})
		}
	case "split_part":
		if params("ssi", 0) {
			f.vec = text(func(vs []*types.Vector, i int, buf []byte) ([]byte, error) {
				k := vs[2].Int64s()[i]
				if k == 0 {
					return buf, sqlerr.New(sqlerr.CodeInvalidParameter, "field position must not be zero")
				}
				return append(buf, splitPart(vs[0].BytesAt(i), vs[1].BytesAt(i), k)...), nil
			})
		}
	case "initcap":
		if params("s", 0) {
			f.vec = text(func(vs []*types.Vector, i int, buf []byte) ([]byte, error) {
				return appendInitcap(buf, vs[0].BytesAt(i)), nil
			})
		}
	case "chr":
		if params("i", 0) {
			f.vec = text(func(vs []*types.Vector, i int, buf []byte) ([]byte, error) {
				return chr(buf, vs[0].Int64s()[i])
			})
		}
	case "md5":
		if params("b", 0) {
			f.vec = text(func(vs []*types.Vector, i int, buf []byte) ([]byte, error) {
				sum := md5.Sum(vs[0].BytesAt(i))
				buf = append(buf, make([]byte, 2*len(sum))...)
				hex.Encode(buf[len(buf)-2*len(sum):], sum[:])
				return buf, nil
			})
		}
	case "overlay":
		if params("ssii", 1) {
			f.vec = text(func(vs []*types.Vector, i int, buf []byte) ([]byte, error) {
				s, r := vs[0].BytesAt(i), vs[1].BytesAt(i)
				count := int64(utf8.RuneCount(r))
				if len(vs) == 4 {
					count = vs[3].Int64s()[i]
				}
				return overlay(buf, s, r, vs[2].Int64s()[i], count)
			})
		}
	case "concat_ws":
		// concat_ws(sep, v, …): the non-NULL values as text, sep between
		// them; NULL only when sep is.
		if n < 2 || argTypes[0].Kind != types.String && argTypes[0].Kind != types.Unknown {
			break
		}
		sig.Params = make([]types.Type, n)
		for i := range sig.Params {
			sig.Params[i] = str
		}
		sig.Result = str
		f.strict = false
		f.vec = func(vs []*types.Vector, n int, out *types.Vector) error {
			var buf []byte
			for i := range n {
				if vs[0].IsNull(i) {
					out.AppendNull()
					continue
				}
				buf = buf[:0]
				first := true
				for _, v := range vs[1:] {
					if v.IsNull(i) {
						continue
					}
					if !first {
						buf = append(buf, vs[0].BytesAt(i)...)
					}
					buf = append(buf, v.BytesAt(i)...)
					first = false
				}
				out.AppendBytes(buf)
			}
			return nil
		}
	case "regexp_replace":
		if params("ssss", 1) {
			var cache regexCache
			f.vec = text(func(vs []*types.Vector, i int, buf []byte) ([]byte, error) {
				flags := ""
				if len(vs) == 4 {
					flags = vs[3].StringAt(i)
				}
				re, global, err := cache.getFlags(vs[1].StringAt(i), flags)
				if err != nil {
					return buf, err
				}
				return regexpReplace(buf, re, vs[0].BytesAt(i), vs[2].BytesAt(i), global), nil
			})
		}
	case "regexp_like":
		if params("sss", 1) {
			var cache regexCache
			sig.Result = types.Of(types.Bool)
			f.vec = func(vs []*types.Vector, n int, out *types.Vector) error {
				return rows(vs, n, out, func(i int) error {
					flags := ""
					if len(vs) == 3 {
						flags = vs[2].StringAt(i)
					}
					re, global, err := cache.getFlags(vs[1].StringAt(i), flags)
					if err != nil {
						return err
					}
					if global {
						return sqlerr.New(sqlerr.CodeInvalidParameter, "regexp_like() does not support the \"global\" option")
					}
					out.AppendBool(re.Match(vs[0].BytesAt(i)))
					return nil
				})
			}
		}
	default:
		return false
	}
	return true
}

// regexpReplace appends s with its first match of re (every match when
// global) replaced by repl, read as PostgreSQL reads it: \1 … \9 are the
// groups (empty when a group did not take part), \& the whole match, \\
// one backslash, and any other backslash stands for itself.
func regexpReplace(buf []byte, re *regexp.Regexp, s, repl []byte, global bool) []byte {
	k := 1
	if global {
		k = -1
	}
	last := 0
	for _, m := range re.FindAllSubmatchIndex(s, k) {
		buf = append(buf, s[last:m[0]]...)
		for j := 0; j < len(repl); j++ {
			c := repl[j]
			if c != '\\' || j+1 == len(repl) {
				buf = append(buf, c)
				continue
			}
			switch d := repl[j+1]; {
			case d >= '1' && d <= '9':
				if g := int(d - '0'); 2*g+1 < len(m) && m[2*g] >= 0 {
					buf = append(buf, s[m[2*g]:m[2*g+1]]...)
				}
				j++
			case d == '&':
				buf = append(buf, s[m[0]:m[1]]...)
				j++
			case d == '\\':
				buf = append(buf, '\\')
				j++
			default:
				buf = append(buf, '\\')
			}
		}
		last = m[1]
	}
	return append(buf, s[last:]...)
}

// regexFlags translates PostgreSQL's regular-expression option letters
// into the RE2 flags that mean the same: by default "." matches a newline
// and ^ and $ match only at the ends (RE2's s flag); n (or m) makes the
// match newline-sensitive (RE2's m flag, no s); i and c switch case
// folding; g, where the function takes it, replaces every match. Other
// letters (x, p, w, b, e, q) are PostgreSQL's and have no RE2 equivalent.
func regexFlags(flags string) (prefix string, global bool, err error) {
	fold, newline := false, false
	for _, c := range flags {
		switch c {
		case 'g':
			global = true
		case 'i':
			fold = true
		case 'c':
			fold = false
		case 'n', 'm':
			newline = true
		case 's':
			newline = false
		default:
			return "", false, sqlerr.New(sqlerr.CodeInvalidParameter, "invalid regular expression option: %q", string(c))
		}
	}
	var sb strings.Builder
	sb.WriteString("(?")
	if fold {
		sb.WriteByte('i')
	}
	if newline {
		sb.WriteByte('m')
	} else {
		sb.WriteByte('s')
	}
	sb.WriteByte(')')
	return sb.String(), global, nil
}

// getFlags returns the compiled pattern with PostgreSQL's option letters
// applied (regexFlags), compiling it only when pattern or flags differ
// from the last call's: a column of rows usually has one pattern.
func (c *regexCache) getFlags(pattern, flags string) (*regexp.Regexp, bool, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.re != nil && c.pattern == pattern && c.flags == flags {
		return c.re, c.global, nil
	}
	prefix, global, err := regexFlags(flags)
	if err != nil {
		return nil, false, err
	}
	re, err := regexp.Compile(prefix + pattern)
	if err != nil {
		return nil, false, sqlerr.New(codeInvalidRegex, "invalid regular expression: %v", err)
	}
	c.pattern, c.flags, c.global, c.re = pattern, flags, global, re
	return re, global, nil
}
