package merge

import (
	"encoding/binary"
	"errors"
)

// ErrOrder is wrapped by the error SplitOrder returns for an encoding that
// is not a sequence of length-prefixed values.
var ErrOrder = errors.New("merge: malformed ordering values")

// AppendOrder appends the part encoding of a version's ordering values
// (part.Data.Order): for each value, its length as a uvarint, then its
// bytes. Flushes and merges must agree on it, so it lives here, beside the
// one reader of it that resolves parts.
func AppendOrder(dst []byte, vals [][]byte) []byte {
	for _, v := range vals {
		dst = binary.AppendUvarint(dst, uint64(len(v)))
		dst = append(dst, v...)
	}
	return dst
}

// SplitOrder appends to dst the ordering values encoded in enc by
// AppendOrder, as sub-slices of enc (nothing is copied), and returns the
// extended slice. It fails when enc is truncated or does not hold exactly
// want values; want < 0 accepts any number.
func SplitOrder(dst [][]byte, enc []byte, want int) ([][]byte, error) {
	n := 0
	for len(enc) > 0 {
		l, k := binary.Uvarint(enc)
		if k <= 0 || l > uint64(len(enc)-k) {
			return dst, ErrOrder
		}
		dst = append(dst, enc[k:k+int(l):k+int(l)])
		enc = enc[k+int(l):]
		n++
	}
	if want >= 0 && n != want {
		return dst, ErrOrder
	}
	return dst, nil
}
