package main

import (
	"io"
	"strconv"
	"testing"
)

// wideResult is n rows of an integer, a short string and a NULL-or-number.
func wideResult(n int) *result {
	r := &result{tag: "SELECT " + strconv.Itoa(n), columns: []column{{"k", "INT64"}, {"address", "STRING"}, {"amount", "UINT256"}}}
	r.rows = make([][]cell, n)
	for i := range r.rows {
		amount := cell{text: strconv.Itoa(i * 1000)}
		if i%7 == 0 {
			amount = cell{null: true}
		}
		r.rows[i] = []cell{{text: strconv.Itoa(i)}, {text: "0x9c2e4f1a"}, amount}
	}
	return r
}

func benchmarkFormat(b *testing.B, f format) {
	r := wideResult(10000)
	b.ReportAllocs()
	for b.Loop() {
		if err := writeResult(io.Discard, f, r); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/10000, "ns/row")
}

func BenchmarkTable(b *testing.B) { benchmarkFormat(b, formatTable) }
func BenchmarkCSV(b *testing.B)   { benchmarkFormat(b, formatCSV) }
func BenchmarkJSONL(b *testing.B) { benchmarkFormat(b, formatJSONL) }
