// Package live serves the live page of a run.
//
// The page is one HTML file embedded in the binary (no network needed, nothing fetched from elsewhere) that
// updates every second over Server-Sent Events from a snapshot function,
// and shows the final report when the run is over.
//
// A command hooks it as harness does for `sixpin run` and `bakeoff`:
// Start(addr, source) before the first run, where source builds a
// Snapshot of whatever is running at the moment it is called (it is
// called once per Interval per open page, from the server's goroutines,
// so it must be safe for concurrent use); SetFinal(html) with the final
// report once everything is done; Close at exit.
package live

import (
	"embed"
	"encoding/json"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sixpin/sixpin/internal/listen"
)

// Interval is how often an open page gets a new snapshot.
const Interval = time.Second

//go:embed page
var page embed.FS

// ErrNotLoopback refuses a non-loopback address without AllowRemote.
var ErrNotLoopback = listen.ErrNotLoopback

// listener is the live page's rule for its address (listen.Listen): the
// page shows the run's target and figures.
var listener = listen.Server{Flag: "--live", RemoteFlag: "--live-remote", Shows: "the run's target and figures"}

// Option configures a Server.
type Option func(*Server)

// AllowRemote lets the server listen on a non-loopback address: anyone
// who can reach it sees the run's pins, figures and target.
func AllowRemote() Option { return func(s *Server) { s.remote = true } }

// WithInterval sets how often an open page gets a snapshot (default
// Interval).
func WithInterval(d time.Duration) Option {
	return func(s *Server) {
		if d > 0 {
			s.interval = d
		}
	}
}

// Server serves the live page. Its methods are safe for concurrent use.
type Server struct {
	source   func() Snapshot
	remote   bool
	interval time.Duration
	ln       net.Listener
	srv      *http.Server
	seq      atomic.Int64
	served   chan struct{}
	// closing ends every open event stream.
	closing chan struct{}
	once    sync.Once

	mu    sync.Mutex
	final []byte
}

// Start listens on addr and serves the page until Close. addr is
// host:port, taken by listener's rule (listen.Listen): a loopback host,
// a bare ":port" being 127.0.0.1, unless AllowRemote is given.
func Start(addr string, source func() Snapshot, opts ...Option) (*Server, error) {
	s := &Server{source: source, interval: Interval, served: make(chan struct{}), closing: make(chan struct{})}
	for _, o := range opts {
		o(s)
	}
	ln, err := listen.Listen(listener, addr, s.remote)
	if err != nil {
		return nil, err
	}
	s.ln = ln
	sub, _ := fs.Sub(page, "page")
	mux := http.NewServeMux()
	files := http.FileServerFS(sub)
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:")
		files.ServeHTTP(w, r)
	})
	mux.Handle("GET /live.js", files)
	mux.Handle("GET /live.css", files)
	mux.HandleFunc("GET /events", s.events)
	mux.HandleFunc("GET /snapshot", s.snapshot)
	mux.HandleFunc("GET /report", s.report)
	s.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		defer close(s.served)
		_ = s.srv.Serve(ln)
	}()
	return s, nil
}

// URL is the page's address.
func (s *Server) URL() string { return "http://" + s.ln.Addr().String() + "/" }

// Where is the page's URL as this machine opens it, and who can reach
// it (listen.Where).
func (s *Server) Where() (url, reach string) { return listen.Where(s.ln, "/") }

// SetFinal shows html (a whole page: the final report) at /report, and
// tells open pages to show it.
func (s *Server) SetFinal(html []byte) {
	s.mu.Lock()
	s.final = html
	s.mu.Unlock()
}

func (s *Server) finalPage() []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.final
}

// Close ends every open event stream and stops serving.
func (s *Server) Close() error {
	s.once.Do(func() { close(s.closing) })
	err := s.srv.Close()
	<-s.served
	return err
}

// next is the source's snapshot, numbered and marked final as it is.
func (s *Server) next() Snapshot {
	snap := s.source()
	snap.Seq = s.seq.Add(1)
	if s.finalPage() != nil {
		snap.Final, snap.State = true, "finished"
	}
	return snap
}

// events streams a snapshot at once and then every interval, as
// Server-Sent Events (one JSON object per event), until the page goes
// away or the server closes.
func (s *Server) events(w http.ResponseWriter, r *http.Request) {
	fl, ok := w.(http.Flusher)
	if !ok {
		http.Error(w, "streaming unsupported", http.StatusInternalServerError)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	tick := time.NewTicker(s.interval)
	defer tick.Stop()
	for {
		snap := s.next()
		data, err := json.Marshal(snap)
		if err != nil {
			return
		}
		if _, err := fmt.Fprintf(w, "id: %s\ndata: %s\n\n", strconv.FormatInt(snap.Seq, 10), data); err != nil {
			return
		}
		fl.Flush()
		select {
		case <-tick.C:
		case <-r.Context().Done():
			return
		case <-s.closing:
			return
		}
	}
}

// snapshot answers one snapshot as JSON (for scripts and curl).
func (s *Server) snapshot(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	_ = json.NewEncoder(w).Encode(s.next())
}

// report answers the final report, or 404 until there is one.
func (s *Server) report(w http.ResponseWriter, r *http.Request) {
	html := s.finalPage()
	if html == nil {
		http.Error(w, "the run is not over: the final report is not written yet", http.StatusNotFound)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_, _ = w.Write(html)
}
