package wal

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/klauspost/compress/s2"

	"github.com/strata-db/strata/internal/vfs"
)

// textPayload is a compressible payload, like a commit's rows: repeated
// column values with a few varying bytes.
func textPayload(commit uint64) []byte {
	var b []byte
	for i := range 200 {
		b = fmt.Appendf(b, "0x%040x|token-%d|%d;", commit*7+uint64(i%13), i%5, commit)
	}
	return b
}

// TestCompressedRoundTrip checks a compressible payload is stored smaller
// (as an S2 block) and replays byte for byte, alongside incompressible and
// tiny ones stored as they are.
func TestCompressedRoundTrip(t *testing.T) {
	m, dir := newMem(t)
	w := mustOpen(t, m, dir, Options{})
	var raw int
	want := map[uint64][]byte{}
	for c := uint64(1); c <= 20; c++ {
		p := textPayload(c)
		if c%4 == 0 {
			p = payloadFor(c) // small: stored raw
		}
		want[c] = p
		raw += recordHeaderSize + len(p)
		if err := w.Commit(context.Background(), c, p); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	size := fileSize(t, m, filepath.Join(dir, SegmentName(1)))
	if size*2 > int64(headerSize+raw) {
		t.Fatalf("segment is %d bytes for %d framed raw bytes: payloads not compressed", size, headerSize+raw)
	}
	got, sum, err := replayAll(t, m, dir, 0)
	if err != nil || sum.Records != 20 {
		t.Fatalf("%+v %v", sum, err)
	}
	for _, r := range got {
		if !bytes.Equal(r.payload, want[r.commit]) {
			t.Fatalf("commit %d: payload differs after replay", r.commit)
		}
	}
}

// v1Segment builds a segment in format version 1 (no compression) holding
// commits [from, to], as a build before version 2 wrote it.
func v1Segment(num, from, to uint64) []byte {
	h := appendHeader(nil, num)
	binary.LittleEndian.PutUint32(h[8:12], 1)
	binary.LittleEndian.PutUint32(h[20:24], crcOf(h[:20]))
	for c := from; c <= to; c++ {
		h = appendRecord(h, c, textPayload(c), false, false)
	}
	return h
}

// TestReadsVersion1 checks a log written by a version 1 build replays, and
// that a Writer opened on it seals the old segment and writes version 2
// records into a new one rather than mixing formats in one file.
func TestReadsVersion1(t *testing.T) {
	m, dir := logWith(t, v1Segment(1, 1, 3), v1Segment(2, 4, 6))
	got, _, err := replayAll(t, m, dir, 0)
	if err != nil {
		t.Fatal(err)
	}
	checkRecordsWith(t, got, seq(1, 6), textPayload)
	w := mustOpen(t, m, dir, Options{})
	if err := w.Commit(context.Background(), 7, textPayload(7)); err != nil {
		t.Fatal(err)
	}
	if s := w.Stats().Segments; s != 3 {
		t.Fatalf("%d segments after opening a version 1 log, want 3", s)
	}
	if n, err := w.RemoveBefore(6); err != nil || n != 2 {
		t.Fatalf("RemoveBefore(6) removed %d: %v", n, err)
	}
	w.Close()
	data, err := vfs.ReadFile(m, filepath.Join(dir, SegmentName(3)))
	if err != nil {
		t.Fatal(err)
	}
	if v := binary.LittleEndian.Uint32(data[8:12]); v != formatVersion {
		t.Fatalf("new segment has version %d", v)
	}
	got, _, err = replayAll(t, m, dir, 0)
	if err != nil {
		t.Fatal(err)
	}
	checkRecordsWith(t, got, []uint64{7}, textPayload)
}

func checkRecordsWith(t *testing.T, got []rec, commits []uint64, payload func(uint64) []byte) {
	t.Helper()
	if len(got) != len(commits) {
		t.Fatalf("got %d records, want %d", len(got), len(commits))
	}
	for i, c := range commits {
		if got[i].commit != c || !bytes.Equal(got[i].payload, payload(c)) {
			t.Fatalf("record %d: commit %d, want %d (or its payload differs)", i, got[i].commit, c)
		}
	}
}

// TestBadBlockIsCorrupt checks a compressed payload whose checksums match
// but which does not decode is ErrCorrupt naming the segment and offset,
// even as the last record of the last segment, where a torn write would be
// cut: its checksum proves the bytes are what was written.
func TestBadBlockIsCorrupt(t *testing.T) {
	for _, last := range []bool{true, false} {
		h := appendHeader(nil, 1)
		h = appendRecord(h, 1, textPayload(1), false, true)
		off := len(h)
		// A block claiming more bytes than it holds.
		h = appendRecord(h, 2, []byte{0x80, 0x10, 0x00, 'x'}, true, true)
		segs := [][]byte{h}
		if !last {
			segs = append(segs, v1Segment(2, 3, 3))
		}
		m, dir := logWith(t, segs...)
		_, _, err := replayAll(t, m, dir, 0)
		wantCorrupt(t, err, 1, off)
		if last {
			// Open (which checks framing, not contents) must not cut it
			// as a torn tail either: Replay still finds it.
			w := mustOpen(t, m, dir, Options{})
			w.Close()
			_, _, err := replayAll(t, m, dir, 0)
			wantCorrupt(t, err, 1, off)
		}
	}
}

// TestVersion1RejectsCompressed checks a version 1 segment holding a
// compressed record, which no version 1 writer made, is ErrCorrupt naming
// the segment and offset, sealed or last (where a torn write would be
// cut: its checksums match, so it is not one), rather than decoded.
func TestVersion1RejectsCompressed(t *testing.T) {
	for _, last := range []bool{true, false} {
		seg := v1Segment(1, 1, 2)
		off := len(seg)
		var buf []byte
		stored, s2 := compress(&buf, textPayload(3))
		if !s2 {
			t.Fatal("the payload did not compress")
		}
		seg = appendRecord(seg, 3, stored, true, false)
		segs := [][]byte{seg}
		if !last {
			segs = append(segs, v1Segment(2, 4, 4))
		}
		m, dir := logWith(t, segs...)
		_, _, err := replayAll(t, m, dir, 0)
		wantCorrupt(t, err, 1, off)
	}
}

// TestSubmitCompressedSameRecords checks payloads compressed ahead with
// Compress and appended with SubmitCompressed make the same segment, byte
// for byte, as the same payloads given to Submit.
func TestSubmitCompressedSameRecords(t *testing.T) {
	var segs [2][]byte
	for i, ahead := range []bool{false, true} {
		m, dir := newMem(t)
		w := mustOpen(t, m, dir, Options{})
		for c := uint64(1); c <= 12; c++ {
			p := textPayload(c)
			if c%3 == 0 {
				p = payloadFor(c) // small: stored raw
			}
			var pending Pending
			var err error
			if ahead {
				cp := Compress(p)
				pending, err = w.SubmitCompressed(c, &cp)
				cp.Release()
			} else {
				pending, err = w.Submit(c, p)
			}
			if err != nil {
				t.Fatal(err)
			}
			if err := pending.Wait(context.Background()); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		data, err := vfs.ReadFile(m, filepath.Join(dir, SegmentName(1)))
		if err != nil {
			t.Fatal(err)
		}
		segs[i] = data
	}
	if !bytes.Equal(segs[0], segs[1]) {
		t.Fatalf("SubmitCompressed wrote %d bytes, Submit %d, and they differ", len(segs[1]), len(segs[0]))
	}
}

// TestS2ClaimBounded frames a record whose S2 block states a decoded
// length of almost MaxPayload but holds a few bytes, with good checksums:
// Replay must report it as corruption naming the segment and the record's
// offset without allocating what it claims (before s2Valid, it allocated
// 512 MiB for it).
func TestS2ClaimBounded(t *testing.T) {
	for _, body := range [][]byte{
		{0x00, 'x', 0x01, 0x00},               // a literal, then a repeat of offset 0
		{0x00, 'x', 0xfe, 0xff, 0xff, 0x00},   // copy whose length overruns nothing yet
		{0xfc, 0xff, 0xff, 0xff, 0x1f, 'a'},   // a literal claiming 512 MiB of 1 byte
		bytes.Repeat([]byte{0x00, 'y'}, 1000), // literals short of the claim
	} {
		block := binary.AppendUvarint(nil, MaxPayload-1)
		block = append(block, body...)
		seg := appendHeader(nil, 1)
		off := len(seg)
		seg = appendRecord(seg, 1, block, true, true)
		m, dir := newMem(t)
		if err := m.MkdirAll(dir); err != nil {
			t.Fatal(err)
		}
		if err := vfs.WriteFile(m, filepath.Join(dir, SegmentName(1)), seg); err != nil {
			t.Fatal(err)
		}
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		_, err := Replay(m, dir, 0, discard(), func(uint64, []byte) error { return nil })
		runtime.ReadMemStats(&after)
		want := fmt.Sprintf("segment %s offset %d", SegmentName(1), off)
		if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), want) {
			t.Fatalf("Replay of a block claiming %d bytes: %v (want ErrCorrupt naming %q)", MaxPayload-1, err, want)
		}
		if got := after.TotalAlloc - before.TotalAlloc; got > 16<<20 {
			t.Fatalf("Replay allocated %d bytes for a record of %d", got, len(block))
		}
	}
}

// TestS2ValidAcceptsEncoder checks s2Valid against the encoder: every
// block compress produces, from runs (long repeats) to text to random
// bytes, is valid at its stated length and at no other.
func TestS2ValidAcceptsEncoder(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	payloads := [][]byte{make([]byte, 8<<20), bytes.Repeat([]byte("abc"), 100000), textPayload(3)}
	for range 200 {
		p := make([]byte, rng.IntN(70000)+compressMin)
		for i := range p {
			if rng.IntN(4) == 0 {
				p[i] = byte(rng.IntN(256))
			} else if i > 0 {
				p[i] = p[i-1-rng.IntN(min(i, 300))]
			}
		}
		payloads = append(payloads, p)
	}
	var buf []byte
	for i, p := range payloads {
		stored, s2ed := compress(&buf, p)
		if !s2ed {
			continue
		}
		if !s2Valid(stored, len(p)) {
			t.Fatalf("payload %d (%d bytes): the encoder's block is refused", i, len(p))
		}
		if s2Valid(stored, len(p)+1) || s2Valid(stored, len(p)-1) {
			t.Fatalf("payload %d: accepted at a wrong length", i)
		}
	}
}

// BenchmarkS2Valid compares s2Valid's walk of a commit-sized S2 block
// (about 140 KB of rows) with s2.Decode of it: what the check adds to
// Replay's decoding of each compressed record.
func BenchmarkS2Valid(b *testing.B) {
	var p []byte
	for c := range uint64(100) {
		p = append(p, textPayload(c)...)
	}
	var buf []byte
	stored, ok := compress(&buf, p)
	if !ok {
		b.Fatal("not compressed")
	}
	dst := make([]byte, len(p))
	b.Run("walk", func(b *testing.B) {
		b.SetBytes(int64(len(p)))
		for b.Loop() {
			if !s2Valid(stored, len(p)) {
				b.Fatal("refused")
			}
		}
	})
	b.Run("decode", func(b *testing.B) {
		b.SetBytes(int64(len(p)))
		for b.Loop() {
			if _, err := s2.Decode(dst, stored); err != nil {
				b.Fatal(err)
			}
		}
	})
}
