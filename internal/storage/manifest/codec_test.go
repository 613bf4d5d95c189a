package manifest

import (
	"encoding/binary"
	"encoding/hex"
	"errors"
	"math"
	"reflect"
	"testing"
	"time"
)

func samplePart() Part {
	return Part{
		Table: 7, Shard: 3, ID: 1 << 40, Level: 2, Kind: KindHistory,
		Rows: 123456, Bytes: 9 << 20, MinCommit: 5, MaxCommit: 900,
		MinKey: []byte{0, 1, 2}, MaxKey: []byte{0xff, 0},
		File: "t7/s3/1099511627776.parquet", Location: "s3://bucket/prefix",
		CreatedAt: time.Date(2026, 10, 1, 12, 5, 0, 123456789, time.UTC),
	}
}

func TestCodecPartRoundTrip(t *testing.T) {
	for _, p := range []Part{
		samplePart(),
		{ID: 1, Kind: KindDelta, File: "f", Location: "local"}, // zero fields omitted
		{Table: math.MaxUint64, Shard: math.MaxUint32, ID: math.MaxUint64, Level: math.MaxUint8,
			Kind: KindAppend, Rows: math.MaxUint64, MaxCommit: math.MaxUint64,
			File: "x", Location: "local", CreatedAt: time.Unix(0, 0).UTC()}, // the epoch is not the zero time
		{ID: 2, Kind: KindCurrent, File: "old", Location: "local",
			CreatedAt: time.Date(1, 1, 1, 0, 0, 0, 1, time.UTC)}, // outside UnixNano's range
		{ID: 3, Kind: KindAsOf, File: "ix", Location: "local", MinCommit: 4, MaxCommit: 90,
			EpochFrom: 17, EpochTo: math.MaxUint64}, // an AS OF epoch keeps its range
		{ID: 4, Kind: KindHistory, File: "h", Location: "volume:/mnt/a", ExpiresFrom: 12},
		{ID: 5, Kind: KindHistory, File: "h2", Location: "local", ExpiresFrom: math.MaxUint64},
	} {
		got, err := decodePart(encodePart(&p), nil)
		if err != nil {
			t.Fatalf("decode %+v: %v", p, err)
		}
		if !partEqual(&got, &p) {
			t.Fatalf("round trip:\n got %+v\nwant %+v", got, p)
		}
		if got.CreatedAt.IsZero() != p.CreatedAt.IsZero() {
			t.Fatalf("zero time changed: got %v want %v", got.CreatedAt, p.CreatedAt)
		}
	}
}

func TestCodecOtherRecordsRoundTrip(t *testing.T) {
	s := Shard{Table: 9, Shard: 2, Range: KeyRange{Lo: 1 << 63, Hi: 0}, State: StateRetired}
	if got, err := decodeShard(encodeShard(&s)); err != nil || got != s {
		t.Fatalf("shard: got %+v, %v; want %+v", got, err, s)
	}

	c := Commit{Seq: 42, At: time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC), Kind: CommitWrite,
		Tables: []string{"balances", "events"}, Rows: 17}
	if got, err := decodeCommit(encodeCommit(&c), &interner{}); err != nil || !commitEqual(&got, &c) {
		t.Fatalf("commit: got %+v, %v; want %+v", got, err, c)
	}

	cat := CatalogUpdate{Commit: 3, Data: []byte("catalog bytes")}
	if got, err := decodeCatalog(encodeCatalog(&cat)); err != nil || !reflect.DeepEqual(got, cat) {
		t.Fatalf("catalog: got %+v, %v; want %+v", got, err, cat)
	}

	tr := Transform{Name: "hourly", Processed: 99, State: []byte{1, 2, 3}}
	if got, err := decodeTransform("hourly", encodeTransform(&tr)); err != nil || !reflect.DeepEqual(got, tr) {
		t.Fatalf("transform: got %+v, %v; want %+v", got, err, tr)
	}

	for _, v := range []uint64{0, 1, math.MaxUint64} {
		if got, err := decodeUint(encodeUint(v), "v"); err != nil || got != v {
			t.Fatalf("uint %d: got %d, %v", v, got, err)
		}
	}
}

// A newer build may add fields; this build must skip them and keep the
// fields it knows.
func TestCodecSkipsUnknownFields(t *testing.T) {
	p := samplePart()
	b := encodePart(&p)
	b = binary.AppendUvarint(b, 500<<3|wireVarint)
	b = binary.AppendUvarint(b, 12345)
	b = binary.AppendUvarint(b, 501<<3|wireBytes)
	b = binary.AppendUvarint(b, 3)
	b = append(b, "new"...)
	got, err := decodePart(b, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !partEqual(&got, &p) {
		t.Fatalf("got %+v want %+v", got, p)
	}
}

func TestCodecRejectsCorruption(t *testing.T) {
	p := samplePart()
	good := encodePart(&p)

	cases := map[string][]byte{
		"empty":         {},
		"future":        append([]byte{recordFormat + 1}, good[1:]...),
		"wire type":     append(append([]byte(nil), good...), byte(20<<3|5)),
		"wrong wire":    {recordFormat, partFile<<3 | wireVarint, 1},
		"shard 2^32":    binary.AppendUvarint(binary.AppendUvarint([]byte{recordFormat}, partShard<<3), 1<<32),
		"long length":   {recordFormat, partFile<<3 | wireBytes, 100, 'a'},
		"bad nanos":     binary.AppendUvarint(binary.AppendUvarint([]byte{recordFormat}, (partCreatedAt+1)<<3), 2e9),
		"cut in varint": {recordFormat, partRows << 3, 0x80},
	}
	for name, b := range cases {
		if _, err := decodePart(b, nil); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: got %v, want ErrCorrupt", name, err)
		}
	}

	// Every truncation either decodes (a prefix of whole fields) or fails
	// cleanly; none panics.
	for n := range len(good) {
		_, _ = decodePart(good[:n], &interner{})
	}
}

// The bytes on disk are a format: this test pins them, so a change to the
// encoding (a renumbered field, a new default) fails here before it makes
// old files unreadable. Layout: format byte 01, then key/value pairs, e.g.
// 08 07 = field 1 (table) varint 7; 52 03 000102 = field 10 (min key), 3
// bytes.
func TestCodecGoldenBytes(t *testing.T) {
	p := samplePart()
	c := Commit{Seq: 42, At: t0, Kind: CommitWrite, Tables: []string{"balances"}, Rows: 17}
	s := Shard{Table: 9, Shard: 2, Range: KeyRange{Lo: 1 << 63}, State: StateActive}
	cases := []struct {
		name string
		got  []byte
		want string
	}{
		{"part", encodePart(&p), "0108071003188080808080202002280330c0c407388080c004400548840752030001025a02ff00" +
			"621b74372f73332f313039393531313632373737362e706172717565746a1273333a2f2f6275636b65742f707265666978" +
			"70d8b1f2ab0d78959aef3a"},
		{"commit", encodeCommit(&c), "01082a120577726974651a0862616c616e63657320112880adf2ab0d"},
		{"shard", encodeShard(&s), "010809100218808080808080808080012801"},
	}
	for _, c := range cases {
		if got := hex.EncodeToString(c.got); got != c.want {
			t.Errorf("%s encodes as\n%s\nwant\n%s", c.name, got, c.want)
		}
	}
}

// An epoch range belongs to AS OF index parts alone, and is never empty.
func TestPartEpochValidate(t *testing.T) {
	ok := Part{ID: 1, Kind: KindAsOf, File: "f", Location: LocationLocal, EpochFrom: 0, EpochTo: 5}
	if err := ok.validate(); err != nil {
		t.Fatalf("valid epoch part refused: %v", err)
	}
	empty := ok
	empty.EpochFrom = 5
	if err := empty.validate(); err == nil {
		t.Fatal("empty epoch accepted")
	}
	delta := Part{ID: 1, Kind: KindDelta, File: "f", Location: LocationLocal, EpochTo: 5}
	if err := delta.validate(); err == nil {
		t.Fatal("epoch range on a delta part accepted")
	}
}
