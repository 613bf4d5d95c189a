package objstore

import (
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
)

// roundTrip puts an object, reads it back by ranges through FS, removes it.
func roundTrip(t *testing.T, s *Store) {
	t.Helper()
	ctx := context.Background()
	data := bytes.Repeat([]byte("0123456789abcdef"), 1000)
	if err := s.Put(ctx, "1-0-7.part", bytes.NewReader(data)); err != nil {
		t.Fatal(err)
	}
	f, err := s.FS().Open("1-0-7.part")
	if err != nil {
		t.Fatal(err)
	}
	if fi, err := f.Stat(); err != nil || fi.Size() != int64(len(data)) {
		t.Fatalf("stat: %v, %v", fi, err)
	}
	for _, r := range [][2]int{{0, 16}, {100, 1000}, {len(data) - 5, 5}, {15990, 10}} {
		buf := make([]byte, r[1])
		if n, err := f.ReadAt(buf, int64(r[0])); err != nil || n != r[1] || !bytes.Equal(buf, data[r[0]:r[0]+r[1]]) {
			t.Fatalf("ReadAt(%d, %d): %d, %v", r[0], r[1], n, err)
		}
	}
	// Past the end: a short read says io.EOF, as os.File does.
	buf := make([]byte, 10)
	if n, err := f.ReadAt(buf, int64(len(data)-4)); n != 4 || err != io.EOF {
		t.Fatalf("ReadAt past the end: %d, %v", n, err)
	}
	if _, err := f.Write([]byte("x")); err == nil {
		t.Fatal("a write to an object succeeded")
	}
	if err := s.FS().Remove("1-0-7.part"); err != nil {
		t.Fatal(err)
	}
	s.deletes.Wait() // Remove deletes in the background
	if _, err := s.FS().Open("1-0-7.part"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("open after remove: %v", err)
	}
	if err := s.FS().Remove("1-0-7.part"); err != nil {
		t.Fatalf("removing a missing object: %v", err)
	}
	s.deletes.Wait()
}

func TestFileStore(t *testing.T) {
	dir := t.TempDir()
	for _, u := range []string{"file:cold", "file://" + dir + "/abs"} {
		s, err := Open(context.Background(), u, dir)
		if err != nil {
			t.Fatal(err)
		}
		roundTrip(t, s)
		_ = s.Close()
	}
	if _, err := Open(context.Background(), "file://elsewhere/x", dir); err == nil || !strings.Contains(err.Error(), "local folder") {
		t.Fatalf("a file URL with a host: %v", err)
	}
	// The data directory's own folders are refused: the engine removes
	// files there that it does not name.
	for _, u := range []string{"file:parts", "file:parts/x", "file:wal", "file:.", "file://" + dir} {
		if err := Supported(u, dir); err == nil || !strings.Contains(err.Error(), "data directory's own") {
			t.Errorf("Supported(%s): %v", u, err)
		}
		if _, err := Open(context.Background(), u, dir); err == nil {
			t.Errorf("Open(%s) succeeded", u)
		}
	}
	for _, u := range []string{"file:cold", "file:partsx", "file://" + dir + "/cold"} {
		if err := Supported(u, dir); err != nil {
			t.Errorf("Supported(%s): %v", u, err)
		}
	}
	if err := Supported("gs://b/p", dir); err == nil || !strings.Contains(err.Error(), "not built into") {
		t.Errorf("Supported(gs://): %v", err)
	}
	if err := Supported("s3://b/p?regoin=x", dir); err == nil {
		t.Error("Supported accepts an S3 URL with an unknown parameter")
	}
}

// TestS3Store runs the same against an S3 server in the test process, on
// loopback, with static credentials (the SDK must not look for others).
func TestS3Store(t *testing.T) {
	backend := s3mem.New()
	srv := httptest.NewServer(gofakes3.New(backend).Server())
	defer srv.Close()
	if err := backend.CreateBucket("cold"); err != nil {
		t.Fatal(err)
	}
	t.Setenv("AWS_ACCESS_KEY_ID", "test")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "test")
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	u := "s3://cold/db1?region=us-east-1&use_path_style=true&disable_https=true&endpoint=" + srv.URL
	s, err := Open(context.Background(), u, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	roundTrip(t, s)
	// The prefix is part of every key.
	if err := s.Put(context.Background(), "k", strings.NewReader("v")); err != nil {
		t.Fatal(err)
	}
	if _, err := backend.HeadObject("cold", "db1/k"); err != nil {
		t.Fatalf("object db1/k: %v", err)
	}
}
