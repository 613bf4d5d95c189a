package part

import (
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/types"
	"github.com/strata-db/strata/internal/vfs"
)

// readEverything opens path and reads every block with every column.
func readEverything(fsys vfs.FS, path string) error {
	r, err := Open(fsys, path)
	if err != nil {
		return err
	}
	defer r.Close()
	all := make([]catalog.ColumnID, len(r.Meta().Columns))
	for i, c := range r.Meta().Columns {
		all[i] = c.ID
	}
	var d Data
	for i := range r.Blocks() {
		if err := r.ReadBlock(i, all, &d); err != nil {
			return err
		}
	}
	return nil
}

// TestBitFlips flips one bit at many offsets of a part: the footer and
// trailer at every byte, the data region at a stride, and asserts that
// both a full read and Check report ErrCorrupt naming the file. No byte
// is exempt (doc.go, "Layout and checksums"): every one is under a stripe
// CRC, the seal, or the magic checks.
//
// It runs on a current part and on a history part, whose resolution is
// stored as residuals (format 3, resid.go).
func TestBitFlips(t *testing.T) {
	for _, kind := range []Kind{KindCurrent, KindHistory} {
		t.Run(kind.String(), func(t *testing.T) { testBitFlips(t, kind) })
	}
}

func testBitFlips(t *testing.T, kind Kind) {
	fsys := newFS(t)
	fx := makeFixture(t, 1500, allTypes, nil)
	fx.meta.Kind = kind
	writeFixture(t, fsys, "parts/good.parquet", fx, WriteOptions{BlockRows: 500, PageRows: 128})
	orig, err := vfs.ReadFile(fsys, "parts/good.parquet")
	if err != nil {
		t.Fatal(err)
	}
	r, err := Open(fsys, "parts/good.parquet")
	if err != nil {
		t.Fatal(err)
	}
	dataEnd := r.dataEnd
	r.Close()
	var offsets []int
	for off := range len(orig) {
		if off < 64 || int64(off) >= dataEnd-64 || off%41 == 0 {
			offsets = append(offsets, off)
		}
	}
	t.Logf("file %d bytes, data region %d, %d offsets flipped", len(orig), dataEnd, len(offsets))
	const path = "parts/bad.parquet"
	buf := make([]byte, len(orig))
	for _, off := range offsets {
		copy(buf, orig)
		buf[off] ^= 1 << (off % 8)
		if err := vfs.WriteFile(fsys, path, buf); err != nil {
			t.Fatal(err)
		}
		for name, run := range map[string]func(vfs.FS, string) error{"read": readEverything, "Check": Check} {
			err := run(fsys, path)
			if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), path) {
				t.Fatalf("flip at %d (data end %d, size %d): %s gave %v", off, dataEnd, len(orig), name, err)
			}
		}
	}
}

func TestTruncated(t *testing.T) {
	fsys := newFS(t)
	fx := makeFixture(t, 300, allTypes[:5], nil)
	writeFixture(t, fsys, "parts/t.parquet", fx, WriteOptions{})
	orig, _ := vfs.ReadFile(fsys, "parts/t.parquet")
	for _, n := range []int{0, 3, 11, 12, len(orig) / 2, len(orig) - 9, len(orig) - 1} {
		if err := vfs.WriteFile(fsys, "parts/t2.parquet", orig[:n]); err != nil {
			t.Fatal(err)
		}
		if err := Check(fsys, "parts/t2.parquet"); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("truncated to %d: %v", n, err)
		}
	}
	extended := append(append([]byte(nil), orig...), 0)
	if err := vfs.WriteFile(fsys, "parts/t3.parquet", extended); err != nil {
		t.Fatal(err)
	}
	if err := Check(fsys, "parts/t3.parquet"); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("one byte appended: %v", err)
	}
}

func TestIOErrorIsNotCorruption(t *testing.T) {
	fsys := newFS(t)
	fx := makeFixture(t, 300, allTypes[:3], nil)
	writeFixture(t, fsys, "parts/io.parquet", fx, WriteOptions{})
	ff := vfs.NewFault(fsys)
	ff.Inject(vfs.Rule{Op: vfs.OpRead, Nth: 1, Repeat: true})
	err := Check(ff, "parts/io.parquet")
	if err == nil || errors.Is(err, ErrCorrupt) || !errors.Is(err, vfs.ErrInjected) {
		t.Fatalf("read fault: %v", err)
	}
}

func TestVersionRefused(t *testing.T) {
	_, _, _, err := decodeMeta(fmt.Sprintf(`{"format":%d,"kind":"delta","stripe":32768}`, FormatVersion+1))
	if !errors.Is(err, ErrVersion) {
		t.Fatalf("format %d: %v", FormatVersion+1, err)
	}
}

// countFS counts the bytes read through ReadAt.
type countFS struct {
	vfs.FS
	n atomic.Int64
}

type countFile struct {
	vfs.File
	n *atomic.Int64
}

func (c *countFS) Open(name string) (vfs.File, error) {
	f, err := c.FS.Open(name)
	if err != nil {
		return nil, err
	}
	return &countFile{File: f, n: &c.n}, nil
}

func (f *countFile) ReadAt(p []byte, off int64) (int, error) {
	n, err := f.File.ReadAt(p, off)
	f.n.Add(int64(n))
	return n, err
}

// TestProjection proves that unrequested columns are not read: it corrupts
// the middle of a large column chunk, reads the block without that column
// (fine) and with it (ErrCorrupt), and counts the bytes a narrow read
// takes against a full one.
func TestProjection(t *testing.T) {
	fsys := newFS(t)
	wideText := typeCase{types.Of(types.String), []string{strings.Repeat("incompressible? ", 1), "NULL"}}
	cases := []typeCase{allTypes[3], wideText, allTypes[11]}
	fx := makeFixture(t, 2000, cases, func(types.Type) catalog.Codec { return catalog.Codec{} })
	// Make the string column big and varied so its chunk spans many stripes.
	s := types.NewVector(types.Of(types.String), 2000)
	for i := range 2000 {
		var b strings.Builder
		for j := range 40 {
			b.WriteByte(byte('a' + (i*31+j*7)%26))
			b.WriteByte(byte('A' + (i*13+j*11)%26))
		}
		s.AppendString(b.String())
	}
	fx.d.Cols[1] = s
	writeFixture(t, fsys, "parts/p.parquet", fx, WriteOptions{})
	r, err := Open(fsys, "parts/p.parquet")
	if err != nil {
		t.Fatal(err)
	}
	start, end := chunkRange(&r.file.Metadata().RowGroups[0], r.leaf[1])
	r.Close()
	if end-start < 4*stripeSize {
		t.Fatalf("string chunk of %d bytes is too small for the test", end-start)
	}
	orig, _ := vfs.ReadFile(fsys, "parts/p.parquet")
	bad := append([]byte(nil), orig...)
	bad[(start+end)/2] ^= 0x10
	if err := vfs.WriteFile(fsys, "parts/p2.parquet", bad); err != nil {
		t.Fatal(err)
	}
	cfs := &countFS{FS: fsys}
	r2, err := Open(cfs, "parts/p2.parquet")
	if err != nil {
		t.Fatal(err)
	}
	defer r2.Close()
	var d Data
	afterOpen := cfs.n.Load()
	missing := catalog.ColumnID(999)
	if err := r2.ReadBlock(0, []catalog.ColumnID{12, missing, 10}, &d); err != nil {
		t.Fatalf("read without the corrupt column: %v", err)
	}
	narrow := cfs.n.Load() - afterOpen
	if d.Cols[1] != nil || d.Cols[0] == nil || d.Cols[2] == nil || d.IDs[1] != missing {
		t.Fatalf("projection: ids %v, nil columns %v %v %v", d.IDs, d.Cols[0] == nil, d.Cols[1] == nil, d.Cols[2] == nil)
	}
	if d.Cols[0].Type() != types.Of(types.Uint256) || d.Cols[2].Type() != types.Of(types.Int64) || d.Cols[0].Len() != 2000 {
		t.Fatalf("projected columns: %s %s", d.Cols[0].Type(), d.Cols[2].Type())
	}
	if narrow > int64(len(orig))-(end-start)+2*stripeSize {
		t.Fatalf("a read of two small columns took %d of %d bytes (the unread chunk has %d)", narrow, len(orig), end-start)
	}
	if err := r2.ReadBlock(0, []catalog.ColumnID{11}, &d); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("read of the corrupt column: %v", err)
	}
	if err := Check(fsys, "parts/p2.parquet"); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("Check: %v", err)
	}
}
