package logictest

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkParse parses select4.test (1.2 MB, 3,857 records); -benchmem and
// the MB/s column tell what parsing the 26 MB corpus costs.
func BenchmarkParse(b *testing.B) {
	path := filepath.Join(corpusDir(b), "select4.test")
	data, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, err := Parse(path, data, DialectAuto); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRunOverhead runs select1.test (1,031 records) on a fake engine
// that answers from a map: what the runner itself costs per record
// (parsing, a goroutine and timer per statement, rendering, sorting,
// hashing, comparison).
func BenchmarkRunOverhead(b *testing.B) {
	path := filepath.Join(corpusDir(b), "select1.test")
	s, err := ParseFile(path, DialectAuto)
	if err != nil {
		b.Fatal(err)
	}
	e := newFake()
	for _, rec := range s.Records {
		switch rec.Kind {
		case KindStatement:
			e.ok(Rewrite(rec.SQL))
		case KindQuery:
			e.rows(Rewrite(rec.SQL), len(rec.Types), "1|2|3|4|5|6|7|8|9|10"[:2*len(rec.Types)-1])
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		rep, err := Run(context.Background(), path, e.open, Options{MaxFailures: -1})
		if err != nil || rep.Records != len(s.Records) {
			b.Fatalf("%v %s", err, rep.Summary())
		}
		e.sent = e.sent[:0]
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(s.Records)), "ns/record")
}
