package pgwire

import (
	"context"
	"encoding/binary"
	"math/rand/v2"
	"net"
	"testing"
	"time"
)

// TestGarbage: random bytes at every stage, startup included, and
// well-framed messages of random types and bodies after startup, never
// take the server down: afterwards it still answers a query.
func TestGarbage(t *testing.T) {
	srv, url := startServer(t)
	rng := rand.New(rand.NewPCG(1, 2))
	addr := srv.Addr().String()
	send := func(b []byte) {
		nc, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer nc.Close()
		nc.SetDeadline(time.Now().Add(200 * time.Millisecond))
		nc.Write(b)
		buf := make([]byte, 4096)
		for {
			if _, err := nc.Read(buf); err != nil {
				return
			}
		}
	}
	for i := 0; i < 120; i++ {
		junk := make([]byte, rng.IntN(64))
		for j := range junk {
			junk[j] = byte(rng.Uint32())
		}
		switch i % 3 {
		case 0:
			send(junk)
		case 1:
			body := []byte{0, 3, 0, 0}
			body = append(body, "user\x00fuzz\x00database\x00strata\x00\x00"...)
			msg := append(binary.BigEndian.AppendUint32(nil, uint32(len(body)+4)), body...)
			send(append(msg, junk...))
		default:
			body := []byte{0, 3, 0, 0}
			body = append(body, "user\x00fuzz\x00\x00"...)
			msg := append(binary.BigEndian.AppendUint32(nil, uint32(len(body)+4)), body...)
			types := "QPBDESCHFXdcf"
			for k := 0; k < 5; k++ {
				payload := junk[:rng.IntN(len(junk)+1)]
				msg = append(msg, types[rng.IntN(len(types))])
				msg = binary.BigEndian.AppendUint32(msg, uint32(len(payload)+4))
				msg = append(msg, payload...)
			}
			send(msg)
		}
	}
	c := connect(t, url)
	var one int
	if err := c.QueryRow(context.Background(), "SELECT 1").Scan(&one); err != nil || one != 1 {
		t.Fatalf("server after garbage: %v", err)
	}
}

// TestShutdownDuringStartup: a client that connects and says nothing does
// not hold up Shutdown.
func TestShutdownDuringStartup(t *testing.T) {
	srv, _ := startServer(t)
	nc, err := net.Dial("tcp", srv.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	time.Sleep(50 * time.Millisecond) // let the server accept it
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	if err := srv.Shutdown(ctx); err != nil {
		t.Fatalf("shutdown with a silent client: %v", err)
	}
}
