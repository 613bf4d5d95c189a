package logictest

import (
	"path/filepath"
	"testing"
)

// TestConformanceWire and TestSQLWire run the same scripts as TestConformance
// and TestSQL, over the PostgreSQL wire (wire_adapter_test.go): everything
// that passes in-process must pass through a client driver too (issue 5,
// item 4). Pending files are left to the in-process suites.
func TestConformanceWire(t *testing.T) { runWire(t, conformanceDir(t), pendingConformance) }

func TestSQLWire(t *testing.T) { runWire(t, sqlDir(t), pendingSQL) }

func runWire(t *testing.T, dir string, pending map[string]string) {
	if testing.Short() {
		t.Skip("the wire suites start a server per script")
	}
	for _, f := range globOrFatal(t, filepath.Join(dir, "*.slt")) {
		name := filepath.Base(f)
		if _, skip := pending[name]; skip {
			continue
		}
		t.Run(name, func(t *testing.T) { RunFile(t, f, openWire, Options{}) })
	}
}
