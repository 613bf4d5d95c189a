package pgwire

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/strata-db/strata/internal/storage"
)

// Config configures a Server. The zero value serves 127.0.0.1:5433
// without TLS, logging to slog.Default.
type Config struct {
	// Listen is the TCP address, host:port; "" means 127.0.0.1:5433, and a
	// port of 0 picks a free one (Addr reports it).
	Listen string
	// TLS, when set, is offered to clients that send SSLRequest; without it
	// the server answers 'N' and the client goes on in clear text.
	TLS *tls.Config
	// Logger receives connection and error logs; slog.Default if nil.
	Logger *slog.Logger
	// Version is Strata's release, shown in server_version and version().
	Version string
	// BlockingReads is how many connections at a time wait for their next
	// message in a blocking read(2) on a thread of their own, rather than
	// through the runtime's network poller: a request then costs fewer
	// system calls and no goroutine hand-off (docs/pgwire.md, "Blocking
	// reads"). Connections beyond it use the poller. 0 means
	// DefaultBlockingReads; a negative value turns blocking reads off.
	BlockingReads int
}

// DefaultBlockingReads is Config.BlockingReads' default: each blocking
// connection holds an OS thread while it waits, so the number is bounded
// well below the runtime's thread limit.
const DefaultBlockingReads = 64

// DefaultListen is the address strata serve listens on by default:
// loopback only, PostgreSQL's port plus one.
const DefaultListen = "127.0.0.1:5433"

// Server serves one storage engine (one data directory, seen as the
// database "strata") over the PostgreSQL protocol. Every connection gets its
// own session.
type Server struct {
	eng *storage.Engine
	cfg Config
	log *slog.Logger

	ln     net.Listener
	ctx    context.Context // cancelled by Shutdown: running statements stop
	cancel context.CancelFunc

	mu       sync.Mutex
	conns    map[uint32]*conn  // by process id, for CancelRequest and Shutdown
	starting map[net.Conn]bool // connections still in startup, closed by Shutdown
	closing  bool
	nextPID  atomic.Uint32
	wg       sync.WaitGroup
	serveErr chan error

	// Connections counts open client connections (for /metrics).
	connections atomic.Int64
	// blocking holds a token per connection reading with blocking
	// system calls (Config.BlockingReads); nil when they are off.
	blocking chan struct{}
	// onStatement is told each statement's run time (ObserveStatements).
	onStatement func(time.Duration)
}

// ObserveStatements makes the server tell f how long each statement took
// to run (to its result, before its rows are sent); /metrics' query
// latency histogram is fed from it. Call it before Serve; f must not block.
func (s *Server) ObserveStatements(f func(time.Duration)) { s.onStatement = f }

// New returns a server for eng listening on cfg.Listen. It refuses to
// serve an address other than loopback while the catalog has no user:
// such a server would let anyone on the network in.
func New(eng *storage.Engine, cfg Config) (*Server, error) {
	if cfg.Listen == "" {
		cfg.Listen = DefaultListen
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Version == "" {
		cfg.Version = "dev"
	}
	host, _, err := net.SplitHostPort(cfg.Listen)
	if err != nil {
		return nil, fmt.Errorf("pgwire: listen address %q: %w", cfg.Listen, err)
	}
	if !loopbackHost(host) && len(eng.Catalog().Users()) == 0 {
		return nil, fmt.Errorf("pgwire: refusing to serve %s with no user: anyone who can reach it could connect. "+
			"Add a user first (strata sql --data DIR -c \"CREATE USER name PASSWORD '…'\") or listen on 127.0.0.1", cfg.Listen)
	}
	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		var op *net.OpError
		if errors.As(err, &op) && errors.Is(err, errAddrInUse) {
			return nil, fmt.Errorf("pgwire: %s is already in use (another server on this port?); choose another with --listen", cfg.Listen)
		}
		return nil, fmt.Errorf("pgwire: listen on %s: %w", cfg.Listen, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &Server{eng: eng, cfg: cfg, log: cfg.Logger, ln: ln, ctx: ctx, cancel: cancel,
		conns: map[uint32]*conn{}, starting: map[net.Conn]bool{}, serveErr: make(chan error, 1)}
	switch n := cfg.BlockingReads; {
	case n == 0:
		s.blocking = make(chan struct{}, DefaultBlockingReads)
	case n > 0:
		s.blocking = make(chan struct{}, n)
	}
	return s, nil
}

// startupTimeout bounds the startup phase (TLS, authentication), as
// PostgreSQL's authentication_timeout does, so a client that connects and
// says nothing does not hold a goroutine forever.
const startupTimeout = time.Minute

// loopbackHost reports whether host names only this machine.
func loopbackHost(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// Addr returns the address the server listens on, with the port chosen
// when Listen asked for port 0.
func (s *Server) Addr() net.Addr { return s.ln.Addr() }

// Connections returns the number of open client connections.
func (s *Server) Connections() int64 { return s.connections.Load() }

// BlockingConnections returns how many open connections read their
// socket with blocking system calls (Config.BlockingReads).
func (s *Server) BlockingConnections() int { return len(s.blocking) }

// startBlocking switches c to blocking reads if a slot is free and the
// socket allows it; the returned function gives the slot back.
func (s *Server) startBlocking(c *conn) (release func()) {
	select {
	case s.blocking <- struct{}{}:
	default:
		return func() {} // no slot (or blocking reads are off: nil channel)
	}
	if c.nc == c.raw { // no TLS layer holds the socket: detach it
		c.mu.Lock()
		defer c.mu.Unlock()
		if !c.closing {
			if f, ok := detach(c.raw); ok {
				c.wmu.Lock()
				c.sock.rw = f
				c.wmu.Unlock()
				c.file.Store(f)
				c.blocking.Store(true)
				return func() {
					c.wmu.Lock()
					f.close()
					c.wmu.Unlock()
					<-s.blocking
				}
			}
		}
	}
	if !setBlocking(c.raw) {
		<-s.blocking
		return func() {}
	}
	c.blocking.Store(true)
	return func() { <-s.blocking }
}

// Serve accepts connections until Shutdown (it then returns nil) or until
// ctx is done (it then shuts down and returns ctx's error, once every
// connection is closed: the caller may close the engine next).
func (s *Server) Serve(ctx context.Context) error {
	shut := make(chan struct{})
	stop := context.AfterFunc(ctx, func() {
		defer close(shut)
		grace, cancel := context.WithTimeout(context.Background(), ShutdownGrace)
		defer cancel()
		s.Shutdown(grace)
	})
	defer func() {
		// The shutdown closes the listener first, so Accept fails (and
		// Serve gets here) before it has closed the connections.
		if !stop() {
			<-shut
		}
	}()
	for {
		nc, err := s.ln.Accept()
		if err != nil {
			s.mu.Lock()
			closing := s.closing
			s.mu.Unlock()
			if closing {
				if ctx.Err() != nil {
					return ctx.Err()
				}
				return nil
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			return fmt.Errorf("pgwire: accept: %w", err)
		}
		s.mu.Lock()
		s.starting[nc] = true
		s.mu.Unlock()
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			s.handle(nc)
		}()
	}
}

// ListenAndServe is Serve with a background context: it returns when
// Shutdown is called.
func (s *Server) ListenAndServe() error { return s.Serve(context.Background()) }

// ShutdownGrace is how long Serve, when its context ends, waits for
// cancelled statements to stop before it closes their connections anyway.
const ShutdownGrace = 10 * time.Second

// Shutdown stops accepting, cancels the statements that are running,
// closes every connection once its statement has stopped (idle ones at
// once, with FATAL 57P01 as PostgreSQL's fast shutdown sends) and waits
// for them. When ctx ends first it closes the remaining sockets and
// returns ctx's error. It does not close the engine.
func (s *Server) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	if !s.closing {
		s.closing = true
		s.ln.Close()
	}
	conns := make([]*conn, 0, len(s.conns))
	for _, c := range s.conns {
		conns = append(conns, c)
	}
	for nc := range s.starting {
		nc.Close()
	}
	s.mu.Unlock()
	s.cancel()
	for _, c := range conns {
		c.terminate()
	}
	done := make(chan struct{})
	go func() { s.wg.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		for _, c := range conns {
			c.closeSocket()
		}
		return ctx.Err()
	}
}

// register gives c a process id and secret for BackendKeyData.
func (s *Server) register(c *conn) bool {
	var b [4]byte
	rand.Read(b[:])
	c.secret = binary.BigEndian.Uint32(b[:])
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closing {
		return false
	}
	c.pid = s.nextPID.Add(1)
	s.conns[c.pid] = c
	delete(s.starting, c.raw)
	s.connections.Add(1)
	return true
}

func (s *Server) unregister(c *conn) {
	s.mu.Lock()
	if s.conns[c.pid] == c {
		delete(s.conns, c.pid)
		s.connections.Add(-1)
	}
	s.mu.Unlock()
}

// cancelRequest cancels the running statement of the connection whose key
// matches; a wrong key does nothing, as in PostgreSQL.
func (s *Server) cancelRequest(pid uint32, secret []byte) {
	if len(secret) != 4 {
		return
	}
	s.mu.Lock()
	c := s.conns[pid]
	s.mu.Unlock()
	if c != nil && c.secret == binary.BigEndian.Uint32(secret) {
		c.cancelRunning()
	}
}
