package version

import "testing"

// TestExpired pins the retention rule (R9.3): a version expires at horizon
// h once it stopped counting at or before h; a current one never does.
func TestExpired(t *testing.T) {
	cases := []struct {
		name string
		r    Resolved
		h    uint64
		want bool
	}{
		{"current never", Resolved{Commit: 1, State: Current, WonAt: 1, EndedAt: Forever}, 100, false},
		{"superseded before h", Resolved{Commit: 1, State: Superseded, WonAt: 1, EndedAt: 4}, 5, true},
		{"superseded at h", Resolved{Commit: 1, State: Superseded, WonAt: 1, EndedAt: 5}, 5, true},
		{"superseded after h", Resolved{Commit: 1, State: Superseded, WonAt: 1, EndedAt: 6}, 5, false},
		{"deleted at h", Resolved{Commit: 2, State: Deleted, WonAt: 2, EndedAt: 5}, 5, true},
		{"deleted after h", Resolved{Commit: 2, State: Deleted, WonAt: 2, EndedAt: 9}, 5, false},
		{"late by commit at h", Resolved{Commit: 5, State: Late, SupersededBy: 3}, 5, true},
		{"late after h", Resolved{Commit: 6, State: Late, SupersededBy: 3}, 5, false},
		{"dropped before h", Resolved{Commit: 4, State: Dropped, SupersededBy: 2}, 5, true},
		{"no horizon", Resolved{Commit: 1, State: Superseded, EndedAt: 2}, 0, false},
	}
	for _, c := range cases {
		if got := Expired(c.r, c.h); got != c.want {
			t.Errorf("%s: Expired = %v, want %v", c.name, got, c.want)
		}
	}
}
