package storage

import (
	"errors"
	"strings"
	"testing"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/storage/manifest"
	"github.com/strata-db/strata/internal/storage/part"
	"github.com/strata-db/strata/internal/vfs"
)

// TestCheckFindsFlippedBitInEveryPartKind (issue 3, item 4): a bit
// flipped in the first page of a delta part, a current run, a history run
// and an AS OF index part is reported by Check as corruption naming the
// file, and the database checks clean again once the byte is restored.
func TestCheckFindsFlippedBitInEveryPartKind(t *testing.T) {
	h := newHarness(t)
	h.create(kvSpec("t", catalog.ModeVersioned))
	tbl := h.table("t")
	for c := range 6 {
		commitRound(t, h, tbl, c, 40)
	}
	if err := h.e.MergeNow(t.Context(), MergeFull); err != nil {
		t.Fatal(err)
	}
	commitRound(t, h, tbl, 6, 40)
	if err := h.e.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := h.e.Check(); err != nil {
		t.Fatalf("sound database: %v", err)
	}
	sd := asofShards(h, "t")[0]
	byKind := map[manifest.Kind]*partFile{}
	for _, pf := range append(sd.parts, sd.asof...) {
		if byKind[pf.man.Kind] == nil {
			byKind[pf.man.Kind] = pf
		}
	}
	for _, k := range []manifest.Kind{manifest.KindDelta, manifest.KindCurrent, manifest.KindHistory, manifest.KindAsOf} {
		pf := byKind[k]
		if pf == nil {
			t.Fatalf("the shard has no %s part", k)
		}
		path := pf.refs.path
		orig, err := vfs.ReadFile(h.mem, path)
		if err != nil {
			t.Fatal(err)
		}
		// Past the magic, inside the first column chunk's first page.
		bad := append([]byte(nil), orig...)
		bad[100] ^= 0x08
		if err := vfs.WriteFile(h.mem, path, bad); err != nil {
			t.Fatal(err)
		}
		err = h.e.Check()
		if !errors.Is(err, part.ErrCorrupt) || !strings.Contains(err.Error(), path) {
			t.Fatalf("%s part %s with a flipped bit: Check gave %v", k, path, err)
		}
		if err := vfs.WriteFile(h.mem, path, orig); err != nil {
			t.Fatal(err)
		}
		if err := h.e.Check(); err != nil {
			t.Fatalf("%s part restored: %v", k, err)
		}
	}
}
