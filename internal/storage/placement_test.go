package storage

import (
	"testing"
	"time"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/storage/manifest"
)

// TestPlacementWaitingParts binds a table to a placement volume that does
// not exist yet (R9.6, docs/placement.md): a flush writes its part to the
// data directory, and once the volume exists the background merger moves
// the part there by itself, with no write, flush or MergeNow to wake it
// (expiryWake looks every volumeDownFor while parts wait).
func TestPlacementWaitingParts(t *testing.T) {
	old := volumeDownFor
	volumeDownFor = 200 * time.Millisecond
	t.Cleanup(func() { volumeDownFor = old })
	// No settling pass (SettleAfter < 0): it would wake the merger too.
	h := (&harness{t: t, bgMerges: true, settleAfter: -1}).start()
	const vol = "/volumes/a"
	h.ddl(func(c *catalog.Catalog, commit uint64) error {
		_, _, err := c.CreatePolicy(catalog.PolicySpec{Name: "one", Role: "placement", Settings: []catalog.SettingSpec{
			{Key: "volumes", Value: catalog.Value{Kind: catalog.ValueList, List: []catalog.Value{{Kind: catalog.ValueString, Text: vol}}}},
		}}, commit)
		return err
	})
	spec := kvSpec("v", catalog.ModeVersioned)
	spec.Policies = []string{"one"}
	h.create(spec)
	v := h.table("v")
	w, err := versionWrite(v, "g", []string{"k=1 v=a idx=1", "k=2 v=b idx=1"})
	if err != nil {
		t.Fatal(err)
	}
	h.mustCommit(&Txn{Kind: KindWrite, Writes: []Write{w}})
	h.mustFlush()
	locations := func() []string {
		s := h.e.Snapshot()
		defer s.Release()
		var out []string
		for _, p := range s.Parts(v.ID) {
			out = append(out, p.Location)
		}
		return out
	}
	if got := locations(); len(got) != 1 || got[0] != manifest.LocationLocal {
		t.Fatalf("with the volume missing, parts at %v; want one in the data directory", got)
	}
	// Let the merger's pass after the flush's kick find the volume
	// missing and go to sleep: from here on nothing kicks it.
	time.Sleep(500 * time.Millisecond)
	if got := locations(); len(got) != 1 || got[0] != manifest.LocationLocal {
		t.Fatalf("with the volume still missing, parts at %v", got)
	}
	if err := h.mem.MkdirAll(vol); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		got := locations()
		if len(got) == 1 && got[0] == manifest.VolumePrefix+vol {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the part did not move to the volume by itself: parts at %v", got)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if !h.e.man.HasVolume(manifest.VolumePrefix + vol) {
		t.Fatal("the volume's folder is not recorded in the manifest")
	}
}
