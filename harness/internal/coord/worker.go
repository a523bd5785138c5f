package coord

import (
	"bytes"
	"cmp"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"
)

// WorkerOptions set up a Worker.
type WorkerOptions struct {
	// URL is the leader's, http://HOST:PORT (its --coordinate address as
	// the workers reach it).
	URL  string
	Join Join
	// Beat, Silence and JoinWait default to DefaultBeat, DefaultSilence
	// and DefaultJoinWait.
	Beat, Silence, JoinWait time.Duration
	// Client sends the requests (nil: one of the Worker's own).
	Client *http.Client
}

// Worker is a shard's side of the protocol: it has joined the leader,
// beats until Close, and carries the calls of the shard's loop (Next,
// Ready, Begin, Send, Result). Its methods are safe for concurrent use.
type Worker struct {
	o      WorkerOptions
	base   string
	token  string
	client *http.Client

	// mu guards what follows.
	mu      sync.Mutex
	k       int
	pending []byte
	sig     *signal
	lastOK  time.Time
	lost    error
	// send serialises the posts of records (and a result after them), so
	// that a point's records all reach the leader before its result.
	send  sync.Mutex
	seq   int64
	retry *batch

	quit chan struct{}
	done chan struct{}
	once sync.Once
}

// batch is records posted under a sequence number, posted again as such
// when the post failed (the leader applies each number once).
type batch struct {
	k    int
	seq  int64
	data []byte
}

// signal is the leader's word on the point a worker is in: closed once,
// when the point is stopped or abandoned (or the leader lost).
type signal struct {
	k     int
	ch    chan struct{}
	stop  *Stop
	abort string
}

func (s *signal) set(stop *Stop, abort string) {
	select {
	case <-s.ch:
		return
	default:
	}
	s.stop, s.abort = stop, abort
	close(s.ch)
}

// Dial joins the leader at o.URL, trying again while it cannot be
// reached (for o.JoinWait), and starts beating. A refusal wraps
// ErrRefused with the leader's reason.
func Dial(ctx context.Context, o WorkerOptions) (*Worker, error) {
	if o.Beat <= 0 {
		o.Beat = DefaultBeat
	}
	if o.Silence <= 0 {
		o.Silence = DefaultSilence
	}
	if o.JoinWait <= 0 {
		o.JoinWait = DefaultJoinWait
	}
	u, err := url.Parse(o.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("--coordinator %q: want the leader's http://HOST:PORT", o.URL)
	}
	w := &Worker{o: o, base: strings.TrimSuffix(o.URL, "/"), client: o.Client, quit: make(chan struct{}), done: make(chan struct{})}
	if w.client == nil {
		w.client = &http.Client{Transport: &http.Transport{Proxy: http.ProxyFromEnvironment, MaxIdleConnsPerHost: 4}}
	}
	body, _ := json.Marshal(o.Join)
	deadline := time.Now().Add(o.JoinWait)
	var last error
	for pause := 250 * time.Millisecond; ; pause = min(2*pause, 2*time.Second) {
		var wl welcome
		status, refused, err := w.call(ctx, http.MethodPost, "join", nil, body, &wl)
		switch {
		case err == nil && status == http.StatusOK && wl.Token != "":
			w.token, w.lastOK = wl.Token, time.Now()
			go w.beat()
			return w, nil
		case err == nil && status == http.StatusConflict:
			return nil, fmt.Errorf("%s: %w: %s", o.Join.Name(), ErrRefused, refused)
		case err == nil:
			last = fmt.Errorf("it answered %d", status)
		default:
			last = err
		}
		if ctx.Err() != nil {
			return nil, context.Cause(ctx)
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("%s: could not join the leader at %s within %s: %w", o.Join.Name(), o.URL, o.JoinWait, last)
		}
		select {
		case <-time.After(pause):
		case <-ctx.Done():
			return nil, context.Cause(ctx)
		}
	}
}

// call sends one request and decodes its answer: a 200's into out, a
// 409's reason into refused. It returns the status, or the error of a
// request that got no answer.
func (w *Worker) call(ctx context.Context, method, path string, q url.Values, body []byte, out any) (status int, refused string, err error) {
	u := w.base + Prefix + path
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, u, rd)
	if err != nil {
		return 0, "", err
	}
	req.Header.Set("Content-Type", "application/json")
	if path == "beat" && body != nil {
		req.Header.Set("Content-Encoding", "gzip")
	}
	if w.token != "" {
		req.Header.Set(TokenHeader, w.token)
	}
	resp, err := w.client.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxJSON))
	if err != nil {
		return 0, "", err
	}
	switch resp.StatusCode {
	case http.StatusOK:
		if err := json.Unmarshal(data, out); err != nil {
			return 0, "", fmt.Errorf("%s %s: its answer is not the protocol's (%v): a leader of another sixpin version?", method, path, err)
		}
	case http.StatusConflict:
		var e errorBody
		_ = json.Unmarshal(data, &e)
		refused = cmp.Or(e.Error, "no reason given")
	}
	return resp.StatusCode, refused, nil
}

// heard notes an answer from the leader.
func (w *Worker) heard() {
	w.mu.Lock()
	w.lastOK = time.Now()
	w.mu.Unlock()
}

// gone marks the leader lost for why, ending the point the worker is
// in; it returns the error every call then returns.
func (w *Worker) gone(why error) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.lost == nil {
		w.lost = fmt.Errorf("%w (%s): %w", ErrLost, w.o.URL, why)
		if w.sig != nil {
			w.sig.set(nil, w.lost.Error())
		}
	}
	return w.lost
}

// poll repeats a long poll until it gets an answer that says something
// (done reports whether it did), the leader is lost or ctx ends. A
// refusal (409: this worker counted gone) loses the leader at once.
func (w *Worker) poll(ctx context.Context, path string, q url.Values, out any, done func() bool) error {
	for pause := 100 * time.Millisecond; ; pause = min(2*pause, 2*time.Second) {
		if err := w.Lost(); err != nil {
			return err
		}
		cctx, cancel := context.WithTimeout(ctx, PollHold+10*time.Second)
		status, refused, err := w.call(cctx, http.MethodPost, path, q, nil, out)
		cancel()
		switch {
		case ctx.Err() != nil:
			return context.Cause(ctx)
		case err == nil && status == http.StatusOK:
			w.heard()
			if done() {
				return nil
			}
			pause = 100 * time.Millisecond
			continue
		case err == nil && status == http.StatusConflict:
			return w.gone(errors.New(refused))
		case err == nil:
			err = fmt.Errorf("it answered %d", status)
		}
		if err := w.again(ctx, pause, err); err != nil {
			return err
		}
	}
}

// again waits pause before a call that failed with err is tried again;
// it returns an error instead when the leader has been silent too long
// (it is lost) or ctx ends.
func (w *Worker) again(ctx context.Context, pause time.Duration, err error) error {
	if errors.Is(err, ErrLost) {
		return err
	}
	if w.silent() {
		return w.gone(err)
	}
	select {
	case <-time.After(pause):
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

// Lost is why the leader counts as lost (nil while it answers).
func (w *Worker) Lost() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.lost
}

// silent reports whether the leader has not answered for Silence.
func (w *Worker) silent() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return time.Since(w.lastOK) > w.o.Silence
}

// Next waits for the point after point after (0: the first), or the end
// of the search.
func (w *Worker) Next(ctx context.Context, after int) (Next, error) {
	var n Next
	err := w.poll(ctx, "next", url.Values{"point": {strconv.Itoa(after)}}, &n, func() bool { return n.Done || n.Point != nil })
	return n, err
}

// ErrAbandoned marks a point the leader abandoned (its own shard failed,
// or another worker's); the worker goes on to the next.
var ErrAbandoned = errors.New("the leader abandoned the point")

// Ready says the worker's shard is ready for point k and waits for the
// start every shard shares.
func (w *Worker) Ready(ctx context.Context, k int) (time.Time, error) {
	var s start
	err := w.poll(ctx, "ready", url.Values{"point": {strconv.Itoa(k)}}, &s, func() bool { return !s.At.IsZero() || s.Abort != "" })
	switch {
	case err != nil:
		return time.Time{}, err
	case s.Abort != "":
		return time.Time{}, fmt.Errorf("%w: %s", ErrAbandoned, s.Abort)
	}
	return s.At, nil
}

// Begin puts the worker in point k: the records Send queues for it go
// out with the beats, and the channel returned is closed once the leader
// stops or abandons the point (or is lost); Signal says which.
func (w *Worker) Begin(k int) <-chan struct{} {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.k, w.pending = k, nil
	w.sig = &signal{k: k, ch: make(chan struct{})}
	if w.lost != nil {
		w.sig.set(nil, w.lost.Error())
	}
	return w.sig.ch
}

// Signal is the leader's word on point k, once Begin's channel is
// closed: a stop, or why the point was abandoned.
func (w *Worker) Signal(k int) (stop *Stop, abort string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if s := w.sig; s != nil && s.k == k {
		select {
		case <-s.ch:
			return s.stop, s.abort
		default:
		}
	}
	return nil, ""
}

// Send queues records of point k for the next beat (dropped unless the
// worker is in point k).
func (w *Worker) Send(k int, records []byte) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if k == w.k {
		w.pending = append(w.pending, records...)
	}
}

// beat posts the queued records every Beat until Close, and reads the
// leader's word on the point in each answer.
func (w *Worker) beat() {
	defer close(w.done)
	t := time.NewTicker(w.o.Beat)
	defer t.Stop()
	for {
		select {
		case <-w.quit:
			return
		case <-t.C:
			if err := w.flush(context.Background()); err != nil && w.silent() {
				w.gone(err)
			}
		}
	}
}

// flush posts the records queued, once.
func (w *Worker) flush(ctx context.Context) error {
	w.send.Lock()
	defer w.send.Unlock()
	return w.post(ctx)
}

// drain posts the records queued until the leader has them all; w.send
// is held.
func (w *Worker) drain(ctx context.Context) error {
	for {
		err := w.post(ctx)
		w.mu.Lock()
		left := w.retry != nil || len(w.pending) > 0
		w.mu.Unlock()
		if err == nil && !left {
			return nil
		}
		if err == nil {
			continue
		}
		if err := w.again(ctx, w.o.Beat, err); err != nil {
			return err
		}
	}
}

// post sends one beat: a batch that failed before, else the records
// queued; w.send is held.
func (w *Worker) post(ctx context.Context) error {
	w.mu.Lock()
	if w.lost != nil {
		w.mu.Unlock()
		return w.lost
	}
	b := w.retry
	if b == nil {
		b = &batch{k: w.k}
		if len(w.pending) > 0 {
			w.seq++
			b.seq, b.data, w.pending = w.seq, w.pending, nil
		}
	}
	w.mu.Unlock()
	var body []byte
	if len(b.data) > 0 {
		var z bytes.Buffer
		zw := gzip.NewWriter(&z)
		_, _ = zw.Write(b.data)
		_ = zw.Close()
		body = z.Bytes()
	}
	cctx, cancel := context.WithTimeout(ctx, w.o.Silence)
	defer cancel()
	var bt beat
	status, refused, err := w.call(cctx, http.MethodPost, "beat", url.Values{"point": {strconv.Itoa(b.k)}, "seq": {strconv.FormatInt(b.seq, 10)}}, body, &bt)
	if err == nil && status == http.StatusConflict {
		return w.gone(errors.New(refused))
	}
	if err == nil && status != http.StatusOK {
		err = fmt.Errorf("its beat answered %d", status)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if err != nil {
		if len(b.data) > 0 {
			w.retry = b
		}
		return err
	}
	w.retry, w.lastOK = nil, time.Now()
	if s := w.sig; s != nil && s.k == b.k && (bt.Stop != nil || bt.Abort != "") {
		s.set(bt.Stop, bt.Abort)
	}
	return nil
}

// Result hands in the worker's result of point k, after every record it
// queued for it.
func (w *Worker) Result(ctx context.Context, k int, r Result) error {
	w.send.Lock()
	defer w.send.Unlock()
	if err := w.drain(ctx); err != nil {
		return err
	}
	w.mu.Lock()
	if w.k == k {
		w.k, w.pending = 0, nil
	}
	w.mu.Unlock()
	body, err := json.Marshal(r)
	if err != nil {
		return err
	}
	for pause := 100 * time.Millisecond; ; pause = min(2*pause, 2*time.Second) {
		var ok errorBody
		status, refused, err := w.call(ctx, http.MethodPost, "result", url.Values{"point": {strconv.Itoa(k)}}, body, &ok)
		switch {
		case err == nil && status == http.StatusOK:
			w.heard()
			return nil
		case err == nil && status == http.StatusConflict:
			return w.gone(errors.New(refused))
		case err == nil:
			err = fmt.Errorf("its result answered %d", status)
		}
		if err := w.again(ctx, pause, err); err != nil {
			return err
		}
	}
}

// Close stops the beats and tells the leader the worker is leaving, and
// why (at most a few seconds are spent telling it).
func (w *Worker) Close(why string) {
	w.once.Do(func() {
		close(w.quit)
		<-w.done
		if w.Lost() != nil {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		defer cancel()
		body, _ := json.Marshal(leave{Why: why})
		var ok errorBody
		_, _, _ = w.call(ctx, http.MethodPost, "leave", nil, body, &ok)
	})
}
