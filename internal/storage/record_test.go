package storage

import (
	"testing"
	"time"

	"github.com/strata-db/strata/internal/catalog"
)

func sampleRecord(t testing.TB) []byte {
	tbl := mustTable(t)
	w, err := versionWrite(tbl, "g", []string{"k=1 v='a b' idx=3", "k=2 v=NULL idx=4"})
	if err != nil {
		t.Fatal(err)
	}
	p := encodeWrites(nil, []Write{w})
	return appendTrailer(p, time.Unix(1700000000, 5), KindWrite, 2, []string{"t"}, []byte("cat"), nil)
}

func mustTable(t testing.TB) *catalog.Table {
	c := catalog.New()
	tbl, _, err := c.CreateTable(kvSpec("t", catalog.ModeVersioned), 1)
	if err != nil {
		t.Fatal(err)
	}
	return tbl
}

func TestRecordRoundTrip(t *testing.T) {
	rec, err := decodeRecord(7, sampleRecord(t))
	if err != nil {
		t.Fatal(err)
	}
	if rec.commit != 7 || rec.kind != KindWrite || rec.rows != 2 || len(rec.tables) != 1 || string(rec.catalog) != "cat" ||
		rec.at.UnixNano() != time.Unix(1700000000, 5).UnixNano() || len(rec.writes) != 1 {
		t.Fatalf("decoded %+v", rec)
	}
	w := rec.writes[0]
	if w.Batch.Rows != 2 || w.Batch.Cols[1].Get(0).Str() != "a b" || !w.Batch.Cols[1].IsNull(1) || w.Batch.Cols[2].Get(1).Int64() != 4 {
		t.Fatalf("decoded batch wrong")
	}
}

// FuzzDecodeRecord: no payload makes decodeRecord panic; damage is an
// error (the WAL's checksums make this a second line of defence).
func FuzzDecodeRecord(f *testing.F) {
	f.Add(sampleRecord(f))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		_, _ = decodeRecord(1, b)
	})
}
