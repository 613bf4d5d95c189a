package pgwire

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"io"
	"log/slog"
	"math/big"
	"net"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/strata-db/strata/internal/storage"
)

// selfSigned makes a certificate for 127.0.0.1 and a pool that trusts it.
func selfSigned(t *testing.T) (tls.Certificate, *x509.CertPool) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "strata test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, pool
}

// connectTLS connects to srv with sslmode=verify-full, trusting pool.
func connectTLS(t *testing.T, srv *Server, pool *x509.CertPool) *pgx.Conn {
	t.Helper()
	cfg, err := pgx.ParseConfig("postgres://u@" + srv.Addr().String() + "/strata?sslmode=verify-full")
	if err != nil {
		t.Fatal(err)
	}
	cfg.TLSConfig = &tls.Config{RootCAs: pool, ServerName: "127.0.0.1"}
	c, err := pgx.ConnectConfig(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestTLS: with a certificate the server accepts SSLRequest and speaks TLS;
// without one it declines with 'N' and sslmode=prefer goes on in clear.
func TestTLS(t *testing.T) {
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	cert, pool := selfSigned(t)
	eng, err := storage.Open(t.TempDir(), storage.Options{Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	srv, err := New(eng, Config{Listen: "127.0.0.1:0", Logger: quiet, TLS: &tls.Config{Certificates: []tls.Certificate{cert}}})
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(context.Background())
	defer srv.Shutdown(context.Background())
	ctx := context.Background()
	c := connectTLS(t, srv, pool)
	defer c.Close(ctx)
	if _, ok := c.PgConn().Conn().(*tls.Conn); !ok {
		t.Fatalf("connection is %T, not TLS", c.PgConn().Conn())
	}
	var n int
	if err := c.QueryRow(ctx, "SELECT 41 + 1").Scan(&n); err != nil || n != 42 {
		t.Fatalf("over TLS: %d %v", n, err)
	}

	// No TLS configured: sslmode=require fails, prefer works in clear.
	_, plain := startServer(t)
	if c, err := pgx.Connect(ctx, plain[:len(plain)-len("disable")]+"require"); err == nil {
		c.Close(ctx)
		t.Fatal("sslmode=require connected to a server without TLS")
	}
	c2, err := pgx.Connect(ctx, plain[:len(plain)-len("disable")]+"prefer")
	if err != nil {
		t.Fatal(err)
	}
	c2.Close(ctx)
}
