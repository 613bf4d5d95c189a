package part

import (
	"bytes"
	"encoding/binary"
	"fmt"

	"github.com/cespare/xxhash/v2"
)

// A point lookup must ask every part whose key bounds hold its key whether
// it has rows of the key. With keys that are random (hashes, addresses),
// every flushed part's bounds span nearly the whole key space, so after an
// ingest a lookup probed each delta part's sort-key page — a cold page is
// a read, stripe checksums, zstd and Parquet decoding — to learn, in all
// but one part, that the key is not there. A KeyFilter answers that from
// memory: a split-block Bloom filter over the part's distinct sort keys,
// written with the part (the footer's "strata.keyfilter" entry, so the
// seal's CRC covers it) and loaded at Open.
//
// The filter is a sequence of 256-bit blocks of eight 32-bit words. A key
// hashes (xxhash64) to one block (the high 32 bits, scaled to the block
// count) and sets one bit in each of the block's words, chosen by the low
// 32 bits times a per-word odd constant (the scheme of Parquet's split
// block Bloom filter). A probe reads one 32-byte block: one cache line.
// It never says "absent" for a key the part holds; it says "maybe" for a
// fraction of other keys (about 0.1 % at KeyFilterBits; TestKeyFilterRate
// measures it). Parts without a filter (written before it existed, or of
// a kind that has none) answer "maybe" for every key.

// KeyFilterBits is the filter bits per distinct key Write spends: 16 bits
// (2 bytes) per key gives about 0.1 % false positives, so that a lookup
// that could meet tens of delta parts decodes a page of one it need not
// in about one lookup of a hundred or fewer.
const KeyFilterBits = 16

// filterBlock is the bytes of one filter block.
const filterBlock = 32

// filterSalt are the per-word multipliers that pick a key's bit in each
// word of its block.
var filterSalt = [8]uint32{
	0x47b6137b, 0x44974d91, 0x8824ad5b, 0xa2b7289d,
	0x705495c7, 0x2df1424b, 0x9efc4947, 0x5c6bfb31,
}

// KeyFilter is a part's filter of sort keys, decoded; the zero value (no
// filter) may contain any key.
type KeyFilter struct {
	words []uint32
}

// keyHash is the hash a key filter is built and probed with.
func keyHash(key []byte) uint64 { return xxhash.Sum64(key) }

// blockOf returns the index of the first word of the block h falls in.
func (f *KeyFilter) blockOf(h uint64) int {
	n := uint64(len(f.words) / 8)
	return 8 * int(((h>>32)*n)>>32)
}

// add sets key's bits.
func (f *KeyFilter) add(h uint64) {
	w := f.words[f.blockOf(h):]
	x := uint32(h)
	for i := range 8 {
		w[i] |= 1 << ((x * filterSalt[i]) >> 27)
	}
}

// MayContain reports whether the part can hold rows of key: false only
// when it certainly holds none.
func (f *KeyFilter) MayContain(key []byte) bool {
	if len(f.words) == 0 {
		return true
	}
	return f.mayContainHash(keyHash(key))
}

// mayContainHash is MayContain for a hash already computed.
func (f *KeyFilter) mayContainHash(h uint64) bool {
	w := f.words[f.blockOf(h):]
	w = w[:8]
	x := uint32(h)
	for i := range 8 {
		if w[i]&(1<<((x*filterSalt[i])>>27)) == 0 {
			return false
		}
	}
	return true
}

// Bytes is the filter's size.
func (f *KeyFilter) Bytes() int { return 4 * len(f.words) }

// buildKeyFilter returns the filter of the distinct sort keys of d, which
// is sorted by sort key, at bitsPerKey bits per key.
func buildKeyFilter(d *Data, bitsPerKey int) KeyFilter {
	distinct := 0
	for i := range d.Rows {
		if i == 0 || !bytes.Equal(d.Sort.BytesAt(i), d.Sort.BytesAt(i-1)) {
			distinct++
		}
	}
	blocks := max(1, (distinct*bitsPerKey+8*filterBlock-1)/(8*filterBlock))
	f := KeyFilter{words: make([]uint32, 8*blocks)}
	for i := range d.Rows {
		if i == 0 || !bytes.Equal(d.Sort.BytesAt(i), d.Sort.BytesAt(i-1)) {
			f.add(keyHash(d.Sort.BytesAt(i)))
		}
	}
	return f
}

// encode returns the filter's words, little-endian: the filterKey value.
func (f *KeyFilter) encode() []byte {
	b := make([]byte, 0, 4*len(f.words))
	for _, w := range f.words {
		b = binary.LittleEndian.AppendUint32(b, w)
	}
	return b
}

// decodeKeyFilter reads the filterKey value back; empty is no
// filter. A length that is not whole blocks is corruption.
func decodeKeyFilter(b []byte) (KeyFilter, error) {
	if len(b) == 0 {
		return KeyFilter{}, nil
	}
	if len(b)%filterBlock != 0 {
		return KeyFilter{}, fmt.Errorf("%s: key filter of %d bytes is not whole %d-byte blocks", filterKey, len(b), filterBlock)
	}
	f := KeyFilter{words: make([]uint32, len(b)/4)}
	for i := range f.words {
		f.words[i] = binary.LittleEndian.Uint32(b[4*i:])
	}
	return f, nil
}

// keyFilterHook, set by tests, replaces the filter Write stores: nil
// writes a part as one from before filters existed, a cleared one a
// filter that misses keys (which Check must report).
var keyFilterHook func([]byte) []byte

// hasKeyFilter reports whether Write gives a part of kind k a key filter:
// the keyed kinds, whose rows a lookup seeks by key.
func hasKeyFilter(k Kind) bool { return k == KindDelta || k == KindCurrent || k == KindHistory }
