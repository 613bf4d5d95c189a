package wal

import (
	"bytes"
	"encoding/binary"
	"path/filepath"
	"strings"
	"testing"

	"github.com/strata-db/strata/internal/vfs"
)

// fuzzSegment returns a segment as the Writer frames it: plain and S2
// records (payloadFor's commits 1..n, some compressed), in batches of
// up to three.
func fuzzSegment(n uint64) []byte {
	b := appendHeader(nil, 1)
	for c := uint64(1); c <= n; c++ {
		var buf []byte
		stored, s2 := compress(&buf, bytes.Repeat(payloadFor(c), 2))
		b = appendRecord(b, c, stored, s2, c%3 == 1)
	}
	return b
}

// reframe returns a copy of seg with the segment header's and every
// record's checksums recomputed where the framing lets it find them, so
// that a fuzzed segment reaches what lies past the checksums (lengths,
// S2 blocks, the torn-tail search) instead of stopping at the first CRC.
func reframe(seg []byte) []byte {
	b := bytes.Clone(seg)
	if len(b) < headerSize {
		return b
	}
	binary.LittleEndian.PutUint32(b[20:24], crcOf(b[:20]))
	for off := headerSize; off+recordHeaderSize <= len(b); {
		h := b[off : off+recordHeaderSize]
		binary.LittleEndian.PutUint32(h[12:16], crcOf(h[0:12]))
		n := int(binary.LittleEndian.Uint32(h[0:4]) &^ flagS2)
		if n > len(b)-off-recordHeaderSize {
			break
		}
		binary.LittleEndian.PutUint32(h[16:20], crcOf(b[off+recordHeaderSize:off+recordHeaderSize+n]))
		off += recordHeaderSize + n
	}
	return b
}

// FuzzReplay feeds damaged segments to Replay and to Open (which scans
// and repairs the last segment), as the log's last segment and as a
// sealed one followed by another: each must give records or an error
// naming the segment, never a panic, a hang or an allocation of what a
// damaged block claims. Every input is tried as fuzzed and with its
// checksums recomputed (reframe).
func FuzzReplay(f *testing.F) {
	f.Add(fuzzSegment(0))
	f.Add(fuzzSegment(6))
	f.Add(fuzzSegment(1)[:headerSize+7])
	// S2 records whose blocks state far more than they hold
	// (TestS2ClaimBounded): reframe keeps their checksums good.
	for _, claim := range []uint64{MaxPayload - 1, MaxPayload + 1, 1 << 20} {
		block := append(binary.AppendUvarint(nil, claim), 0x00, 'x', 0x01, 0x00, 0xfe, 0xff, 0xff, 0x00)
		f.Add(appendRecord(fuzzSegment(2), 3, block, true, true))
	}
	f.Fuzz(func(t *testing.T, seg []byte) {
		for _, b := range [][]byte{seg, reframe(seg)} {
			for _, sealed := range []bool{false, true} {
				fuzzReplayOnce(t, b, sealed)
			}
		}
	})
}

// fuzzReplayOnce replays a log whose first segment is seg (followed, when
// sealed, by an empty second one), then opens it for writing and appends.
func fuzzReplayOnce(t *testing.T, seg []byte, sealed bool) {
	m := vfs.NewMem()
	dir := "/db/wal"
	if err := m.MkdirAll(dir); err != nil {
		t.Fatal(err)
	}
	if err := vfs.WriteFile(m, filepath.Join(dir, SegmentName(1)), seg); err != nil {
		t.Fatal(err)
	}
	if sealed {
		if err := vfs.WriteFile(m, filepath.Join(dir, SegmentName(2)), appendHeader(nil, 2)); err != nil {
			t.Fatal(err)
		}
	}
	named := func(what string, err error) {
		t.Helper()
		if err != nil && !strings.Contains(err.Error(), SegmentName(1)) {
			t.Fatalf("%s (sealed %v): error not naming the segment: %v", what, sealed, err)
		}
	}
	var last uint64
	sum, err := Replay(m, dir, 0, discard(), func(commit uint64, payload []byte) error {
		last = commit
		_ = bytes.Count(payload, []byte{0}) // every byte of the payload is readable
		return nil
	})
	named("Replay", err)
	if err == nil && sum.LastCommit < last {
		t.Fatalf("Replay: last commit %d, a record of commit %d replayed", sum.LastCommit, last)
	}
	w, err := Open(m, dir, Options{Logger: discard()})
	named("Open", err)
	if err != nil {
		return
	}
	if err := w.Append(sum.LastCommit+1, []byte("after")); err != nil {
		t.Fatalf("append after open: %v", err)
	}
	if err := w.Close(); err != nil {
		t.Fatalf("close: %v", err)
	}
}
