// Package objstore holds parts in object storage (SPEC R9.4): an object
// store a storage policy names, through gocloud.dev/blob, and a read-only
// vfs.FS over its objects so that part.Reader reads a part there as it
// reads a local file, by ranges.
//
// URLs: file:///abs/dir (a local folder standing in for an object store;
// file:rel/dir is relative to the data directory), s3://bucket/prefix with
// gocloud's query parameters (region, endpoint, use_path_style, …) and
// credentials from the environment (AWS_ACCESS_KEY_ID, …). gs:// and
// azblob:// have no driver built in (their SDKs would double the
// binary); Supported says so, and CREATE POLICY refuses them.
package objstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"gocloud.dev/blob"
	"gocloud.dev/gcerrors"

	"github.com/strata-db/strata/internal/vfs"
)

// Store is one object store: a bucket and a key prefix.
type Store struct {
	url string
	b   *blob.Bucket
	// dir is the folder of a file:// store, "" for any other: its objects
	// are fsynced once written, since nothing else makes them durable.
	dir string
	// deletes counts the deletes FS().Remove started.
	deletes sync.WaitGroup
}

// Open opens the object store at rawURL; a relative file URL is taken
// relative to dir (the data directory).
func Open(ctx context.Context, rawURL, dir string) (*Store, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, fmt.Errorf("objstore: %q: %w", rawURL, err)
	}
	var b *blob.Bucket
	switch u.Scheme {
	case "file":
		p, err := folderOf(u, dir)
		if err != nil {
			return nil, fmt.Errorf("objstore: %q: %w", rawURL, err)
		}
		if err := (vfs.OS{}).MkdirAll(p); err != nil {
			return nil, fmt.Errorf("objstore: %w", err)
		}
		if b, err = blob.OpenBucket(ctx, "file://"+filepath.ToSlash(p)+"?no_tmp_dir=1&metadata=skip"); err != nil {
			return nil, fmt.Errorf("objstore: %q: %w", rawURL, err)
		}
		return &Store{url: rawURL, b: b, dir: p}, nil
	default:
		if u.Scheme == "s3" && os.Getenv("AWS_EC2_METADATA_DISABLED") == "" {
			// Never probe the cloud metadata address for credentials:
			// they come from the environment.
			os.Setenv("AWS_EC2_METADATA_DISABLED", "true")
		}
		prefix := strings.Trim(u.Path, "/")
		bu := *u
		bu.Path = ""
		if b, err = blob.OpenBucket(ctx, bu.String()); err != nil {
			return nil, fmt.Errorf("objstore: %q: %w", rawURL, err)
		}
		if prefix != "" {
			b = blob.PrefixedBucket(b, prefix+"/")
		}
	}
	return &Store{url: rawURL, b: b}, nil
}

// Supported returns an error naming what is wrong when the object store
// at rawURL cannot serve the database in dir: a scheme this binary has no
// driver for (gs://, azblob:// are not built in), a file URL with a host
// or naming a folder the database itself uses, a query parameter the
// driver does not know. It opens no connection and writes nothing.
func Supported(rawURL, dir string) error {
	u, err := url.Parse(rawURL)
	if err != nil {
		return err
	}
	switch {
	case u.Scheme == "file":
		_, err := folderOf(u, dir)
		return err
	case !blob.DefaultURLMux().ValidBucketScheme(u.Scheme):
		return fmt.Errorf("object store scheme %s is not built into this server; use s3:// (any S3-compatible endpoint: s3://bucket/prefix?endpoint=…&region=…&use_path_style=true) or a file: folder", u.Scheme)
	}
	// The driver checks its parameters when it opens the bucket, which
	// for S3 makes no request.
	s, err := Open(context.Background(), rawURL, dir)
	if err != nil {
		return err
	}
	return s.Close()
}

// folderOf returns the folder file URL u names, a relative one taken in
// dir, after checkFolder.
func folderOf(u *url.URL, dir string) (string, error) {
	p := u.Path
	if u.Opaque != "" {
		p = u.Opaque
	}
	if u.Host != "" && u.Host != "localhost" {
		return "", fmt.Errorf("a file URL names a local folder: file:///abs/path or file:rel/path, not host %s", u.Host)
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(dir, p)
	}
	return p, checkFolder(p, dir)
}

// checkFolder refuses a file store folder the database's own files are
// in: its directory itself, or its parts or wal folders (the engine
// removes files there that it does not name as its own).
func checkFolder(p, dir string) error {
	if dir == "" {
		return nil
	}
	p, dir = filepath.Clean(p), filepath.Clean(dir)
	for _, own := range []string{dir, filepath.Join(dir, "parts"), filepath.Join(dir, "wal")} {
		if rel, err := filepath.Rel(own, p); err == nil && (rel == "." || own != dir && !strings.HasPrefix(rel, "..")) {
			return fmt.Errorf("folder %s is the data directory's own (%s): name another, such as file:cold", p, own)
		}
	}
	return nil
}

// Put uploads what r reads as object key. The object exists, whole and
// durable, once Put returns nil.
func (s *Store) Put(ctx context.Context, key string, r io.Reader) error {
	ctx, cancel := context.WithTimeout(ctx, putTimeout)
	defer cancel()
	w, err := s.b.NewWriter(ctx, key, &blob.WriterOptions{ContentType: "application/octet-stream"})
	if err != nil {
		return fmt.Errorf("objstore: put %s: %w", key, err)
	}
	if _, err := io.Copy(w, r); err != nil {
		_ = w.Close()
		return fmt.Errorf("objstore: put %s: %w", key, err)
	}
	if err := w.Close(); err != nil {
		return fmt.Errorf("objstore: put %s: %w", key, err)
	}
	if s.dir != "" {
		if err := syncPath(filepath.Join(s.dir, filepath.FromSlash(key))); err != nil {
			return fmt.Errorf("objstore: put %s: %w", key, err)
		}
		if err := (vfs.OS{}).SyncDir(s.dir); err != nil {
			return fmt.Errorf("objstore: put %s: %w", key, err)
		}
	}
	return nil
}

// syncPath fsyncs a file.
func syncPath(path string) error {
	f, err := (vfs.OS{}).Open(path)
	if err != nil {
		return err
	}
	err = f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// Delete removes object key; a missing one is not an error.
func (s *Store) Delete(ctx context.Context, key string) error {
	if err := s.b.Delete(ctx, key); err != nil && gcerrors.Code(err) != gcerrors.NotFound {
		return fmt.Errorf("objstore: delete %s: %w", key, err)
	}
	return nil
}

// List returns the keys of the store's objects (under its prefix).
func (s *Store) List(ctx context.Context) ([]string, error) {
	var keys []string
	it := s.b.List(nil)
	for {
		o, err := it.Next(ctx)
		if err == io.EOF {
			return keys, nil
		}
		if err != nil {
			return keys, fmt.Errorf("objstore: list %s: %w", s.url, err)
		}
		if !o.IsDir {
			keys = append(keys, o.Key)
		}
	}
}

// Close waits for the deletes under way and closes the bucket.
func (s *Store) Close() error {
	s.deletes.Wait()
	return s.b.Close()
}

// FS returns a read-only vfs.FS over the store's objects: Open reads an
// object by ranges, Stat sizes it, Remove deletes it; the rest fail.
func (s *Store) FS() vfs.FS { return storeFS{s} }

type storeFS struct{ s *Store }

var errReadOnly = errors.New("objstore: objects are written whole by Put, never through the file system")

// timeout bounds one request: a store that does not answer fails the read
// instead of hanging it; putTimeout bounds one upload.
const (
	timeout    = 2 * time.Minute
	putTimeout = 30 * time.Minute
)

func (f storeFS) Open(name string) (vfs.File, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	a, err := f.s.b.Attributes(ctx, name)
	if err != nil {
		if gcerrors.Code(err) == gcerrors.NotFound {
			return nil, fmt.Errorf("objstore: %s in %s: %w", name, f.s.url, fs.ErrNotExist)
		}
		return nil, fmt.Errorf("objstore: %s in %s: %w", name, f.s.url, err)
	}
	return &object{s: f.s, key: name, size: a.Size, mod: a.ModTime}, nil
}

func (f storeFS) Stat(name string) (fs.FileInfo, error) {
	o, err := f.Open(name)
	if err != nil {
		return nil, err
	}
	return o.Stat()
}

// Remove deletes the object in the background: the engine retires a part
// under locks commits wait on, and a request to a slow store must not
// hold them. Close waits for the deletes under way. A delete that fails
// leaves the object behind, unnamed by any manifest (docs/tiering.md).
func (f storeFS) Remove(name string) error {
	f.s.deletes.Add(1)
	go func() {
		defer f.s.deletes.Done()
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		_ = f.s.Delete(ctx, name)
	}()
	return nil
}

func (storeFS) Create(string) (vfs.File, error)        { return nil, errReadOnly }
func (storeFS) OpenReadWrite(string) (vfs.File, error) { return nil, errReadOnly }
func (storeFS) OpenAppend(string) (vfs.File, error)    { return nil, errReadOnly }
func (storeFS) Rename(string, string) error            { return errReadOnly }
func (storeFS) MkdirAll(string) error                  { return nil }
func (storeFS) List(string) ([]string, error)          { return nil, errReadOnly }
func (storeFS) SyncDir(string) error                   { return nil }
func (storeFS) Lock(string) (io.Closer, error)         { return nil, errReadOnly }

// object is an open object: reads by ranges.
type object struct {
	s    *Store
	key  string
	size int64
	mod  time.Time
	mu   sync.Mutex
	off  int64 // for Read
}

func (o *object) ReadAt(p []byte, off int64) (int, error) {
	if off >= o.size {
		return 0, io.EOF
	}
	n := int64(len(p))
	if off+n > o.size {
		n = o.size - off
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	r, err := o.s.b.NewRangeReader(ctx, o.key, off, n, nil)
	if err != nil {
		return 0, fmt.Errorf("objstore: read %s: %w", o.key, err)
	}
	defer r.Close()
	got, err := io.ReadFull(r, p[:n])
	if err != nil {
		return got, fmt.Errorf("objstore: read %s: %w", o.key, err)
	}
	if got < len(p) {
		return got, io.EOF
	}
	return got, nil
}

func (o *object) Read(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	n, err := o.ReadAt(p, o.off)
	o.off += int64(n)
	return n, err
}

func (o *object) Stat() (fs.FileInfo, error) { return objectInfo{o}, nil }
func (o *object) Close() error               { return nil }
func (o *object) Write([]byte) (int, error)  { return 0, errReadOnly }
func (o *object) Sync() error                { return errReadOnly }
func (o *object) Truncate(int64) error       { return errReadOnly }

type objectInfo struct{ o *object }

func (i objectInfo) Name() string       { return filepath.Base(i.o.key) }
func (i objectInfo) Size() int64        { return i.o.size }
func (i objectInfo) Mode() fs.FileMode  { return 0o444 }
func (i objectInfo) ModTime() time.Time { return i.o.mod }
func (i objectInfo) IsDir() bool        { return false }
func (i objectInfo) Sys() any           { return nil }
