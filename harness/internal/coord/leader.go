package coord

import (
	"cmp"
	"compress/gzip"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// Limits of what a worker may send, in bytes.
const (
	maxJSON    = 1 << 20   // a join, a leave
	maxRecords = 256 << 20 // one beat's records, decompressed
	maxResult  = 512 << 20 // one point's results
)

// LeaderOptions set up a Leader.
type LeaderOptions struct {
	// Count is N, the shards of the search, the leader's own (0)
	// included.
	Count int
	// RunID is the search's run id: a worker of another is refused.
	RunID string
	// Facts are what every worker must share with the leader.
	Facts []Fact
	// Silence is how long a worker may go unheard before it is gone (0:
	// DefaultSilence).
	Silence time.Duration
	// Records receives each beat's records from shard for point k, on
	// the beat's own goroutine (several may call at once, one per
	// worker); an error fails the point, naming the shard. Records of a
	// point no longer open are dropped before it is called.
	Records func(shard, k int, batch []byte) error
}

// Leader is shard 0's side of the protocol: an http.Handler for the
// workers, and the calls the search makes as it goes (Joined, Open,
// Ready, Stop, Abort, Results, Finish). Its methods are safe for
// concurrent use; the waits return when their condition holds, a shard
// fails, ctx ends or the Leader is closed.
type Leader struct {
	o LeaderOptions
	// mu guards everything below; wake is closed (and replaced) on every
	// change, for the waits.
	mu      sync.Mutex
	wake    chan struct{}
	workers map[int]*peer
	tokens  map[string]int
	// said are words for the search's log (joins, refusals), taken by
	// Joined.
	said   []string
	point  *pointState
	done   bool
	reason string
	closed chan struct{}
	once   sync.Once
}

// peer is a worker that joined.
type peer struct {
	join  Join
	token string
	seen  time.Time
	// gone says why the worker is gone ("" while it lives).
	gone string
	// told is set once it has been told the search is done.
	told bool
	// seq is the last beat applied, so that a beat sent again is not
	// counted twice.
	seq int64
}

// pointState is the point open now.
type pointState struct {
	p      Point
	ready  map[int]bool
	start  time.Time
	stop   *Stop
	abort  string
	result map[int]Result
	// err fails the point (a worker's error, silence or departure);
	// failed is closed when it is set.
	err    error
	failed chan struct{}
}

// ended says why the point was abandoned or failed ("": it goes on).
func (p *pointState) ended() string {
	if p.abort == "" && p.err != nil {
		return oneLine(p.err.Error())
	}
	return p.abort
}

// NewLeader returns a Leader; Close stops its watch of the workers'
// silence.
func NewLeader(o LeaderOptions) *Leader {
	if o.Silence <= 0 {
		o.Silence = DefaultSilence
	}
	l := &Leader{o: o, wake: make(chan struct{}), workers: map[int]*peer{}, tokens: map[string]int{}, closed: make(chan struct{})}
	go l.watch()
	return l
}

// Close ends the Leader's watch and every wait (they return an error).
func (l *Leader) Close() {
	l.once.Do(func() {
		close(l.closed)
		l.mu.Lock()
		l.changed()
		l.mu.Unlock()
	})
}

// changed wakes the waits; l.mu is held.
func (l *Leader) changed() {
	close(l.wake)
	l.wake = make(chan struct{})
}

// watch counts a worker not heard from for Silence as gone, every tenth
// of it.
func (l *Leader) watch() {
	t := time.NewTicker(l.o.Silence / 10)
	defer t.Stop()
	for {
		select {
		case <-l.closed:
			return
		case now := <-t.C:
			l.mu.Lock()
			for _, w := range l.workers {
				if w.gone == "" && now.Sub(w.seen) > l.o.Silence {
					l.lose(w, fmt.Sprintf("not heard from for %s (its process killed, its machine down, or the network cut)", l.o.Silence))
				}
			}
			l.mu.Unlock()
		}
	}
}

// lose counts w gone for why, failing the open point; l.mu is held.
func (l *Leader) lose(w *peer, why string) {
	w.gone = why
	l.said = append(l.said, fmt.Sprintf("%s is gone: %s", w.join.Name(), why))
	l.fail(fmt.Errorf("%s: %s", w.join.Name(), why))
}

// fail fails the open point with err (the first error stands); l.mu is
// held.
func (l *Leader) fail(err error) {
	if p := l.point; p != nil && p.err == nil && !l.done {
		p.err = err
		close(p.failed)
	}
	l.changed()
}

// wait calls cond under l.mu until it reports done, then returns its
// error; it gives up when ctx ends or the Leader is closed.
func (l *Leader) wait(ctx context.Context, cond func() (bool, error)) error {
	for {
		l.mu.Lock()
		ok, err := cond()
		wake := l.wake
		l.mu.Unlock()
		if ok || err != nil {
			return err
		}
		select {
		case <-wake:
		case <-ctx.Done():
			return context.Cause(ctx)
		case <-l.closed:
			return errors.New("the coordination was closed")
		}
	}
}

// Said takes the words the leader has for the search's log since the
// last call: workers that joined, were refused or went.
func (l *Leader) Said() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := l.said
	l.said = nil
	return s
}

// Joined waits, at most within, for every worker to join; say receives
// each word of the log as it comes (on the caller's goroutine). The
// error names the shards that did not join.
func (l *Leader) Joined(ctx context.Context, within time.Duration, say func(string)) error {
	ctx, cancel := context.WithTimeoutCause(ctx, within, errors.New("timed out"))
	defer cancel()
	err := l.wait(ctx, func() (bool, error) {
		for _, s := range l.said {
			say(s)
		}
		l.said = nil
		return len(l.missing()) == 0, nil
	})
	if err == nil {
		return nil
	}
	l.mu.Lock()
	missing := l.missing()
	l.mu.Unlock()
	return fmt.Errorf("waiting %s for the workers to join: %w; not joined: %s", within, err, missing)
}

// missing lists the shards that have not joined, or are gone.
func (l *Leader) missing() string {
	var m []string
	for i := 1; i < l.o.Count; i++ {
		if w := l.workers[i]; w == nil || w.gone != "" {
			m = append(m, strconv.Itoa(i)+"/"+strconv.Itoa(l.o.Count))
		}
	}
	return joinWords(m)
}

// joinWords is "a, b and c".
func joinWords(s []string) string {
	switch len(s) {
	case 0:
		return ""
	case 1:
		return s[0]
	}
	out := ""
	for i, w := range s[:len(s)-1] {
		if i > 0 {
			out += ", "
		}
		out += w
	}
	return out + " and " + s[len(s)-1]
}

// Open makes p the point every worker takes next.
func (l *Leader) Open(p Point) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.point = &pointState{p: p, ready: map[int]bool{}, result: map[int]Result{}, failed: make(chan struct{})}
	for _, w := range l.workers {
		if w.gone != "" {
			l.fail(fmt.Errorf("%s: %s", w.join.Name(), w.gone))
			break
		}
	}
	l.changed()
}

// open is the point k when it is the one open; l.mu is held.
func (l *Leader) open(k int) *pointState {
	if p := l.point; p != nil && p.p.K == k {
		return p
	}
	return nil
}

// Failed is closed when point k fails (Err says why); a point not open
// has a channel that never closes.
func (l *Leader) Failed(k int) <-chan struct{} {
	l.mu.Lock()
	defer l.mu.Unlock()
	if p := l.open(k); p != nil {
		return p.failed
	}
	return make(chan struct{})
}

// Err is why point k failed (nil: it has not).
func (l *Leader) Err(k int) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if p := l.open(k); p != nil {
		return p.err
	}
	return nil
}

// Ready says the leader's own shard is ready for point k and waits for
// every worker's; then the start is margin from now, the same for every
// shard, and returned.
func (l *Leader) Ready(ctx context.Context, k int, margin time.Duration) (time.Time, error) {
	var at time.Time
	err := l.wait(ctx, func() (bool, error) {
		p := l.open(k)
		if p == nil {
			return false, fmt.Errorf("point %d is not open", k)
		}
		if p.err != nil {
			return false, p.err
		}
		if !p.start.IsZero() {
			at = p.start
			return true, nil
		}
		for i := 1; i < l.o.Count; i++ {
			if !p.ready[i] {
				return false, nil
			}
		}
		p.start = time.Now().Add(margin)
		at = p.start
		l.changed()
		return true, nil
	})
	return at, err
}

// Stop tells every worker to stop point k as s says.
func (l *Leader) Stop(k int, s Stop) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if p := l.open(k); p != nil && p.stop == nil {
		p.stop = &s
		l.changed()
	}
}

// Abort abandons point k: the workers stop it and hand in nothing.
func (l *Leader) Abort(k int, why string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if p := l.open(k); p != nil && p.abort == "" {
		p.abort = oneLine(why)
		l.changed()
	}
}

// Results waits for every worker's results of point k, indexed by shard
// (the leader's own, 0, is nil). The error names the shard that failed:
// its own error, its silence or its departure.
func (l *Leader) Results(ctx context.Context, k int) ([][]byte, error) {
	out := make([][]byte, l.o.Count)
	err := l.wait(ctx, func() (bool, error) {
		p := l.open(k)
		if p == nil {
			return false, fmt.Errorf("point %d is not open", k)
		}
		if p.err != nil {
			return false, p.err
		}
		for i := 1; i < l.o.Count; i++ {
			r, ok := p.result[i]
			if !ok {
				return false, nil
			}
			out[i] = r.Run
		}
		return true, nil
	})
	return out, err
}

// Finish ends the search for the workers, saying why, and waits at most
// within for every live one to hear it.
func (l *Leader) Finish(ctx context.Context, reason string, within time.Duration) {
	l.mu.Lock()
	l.done, l.reason = true, oneLine(reason)
	l.changed()
	l.mu.Unlock()
	ctx, cancel := context.WithTimeout(ctx, within)
	defer cancel()
	_ = l.wait(ctx, func() (bool, error) {
		for _, w := range l.workers {
			if w.gone == "" && !w.told {
				return false, nil
			}
		}
		return true, nil
	})
}

// ServeHTTP serves the workers.
func (l *Leader) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.Method + " " + r.URL.Path {
	case "POST " + Prefix + "join":
		l.serveJoin(w, r)
	case "POST " + Prefix + "next":
		l.serveNext(w, r)
	case "POST " + Prefix + "ready":
		l.serveReady(w, r)
	case "POST " + Prefix + "beat":
		l.serveBeat(w, r)
	case "POST " + Prefix + "result":
		l.serveResult(w, r)
	case "POST " + Prefix + "leave":
		l.serveLeave(w, r)
	default:
		reply(w, http.StatusNotFound, errorBody{Error: "no such call: " + r.Method + " " + r.URL.Path})
	}
}

// reply writes v as JSON with status.
func reply(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func (l *Leader) serveJoin(w http.ResponseWriter, r *http.Request) {
	var j Join
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxJSON)).Decode(&j); err != nil {
		reply(w, http.StatusBadRequest, errorBody{Error: "a join: " + err.Error()})
		return
	}
	refuse := func(format string, args ...any) {
		why := fmt.Sprintf(format, args...)
		l.mu.Lock()
		l.said = append(l.said, "refused "+j.Name()+": "+why)
		l.changed()
		l.mu.Unlock()
		reply(w, http.StatusConflict, welcome{Error: why})
	}
	switch {
	case j.Count != l.o.Count:
		refuse("the search is split %d ways, the worker says %d (--shard I/%d)", l.o.Count, j.Count, l.o.Count)
		return
	case j.Shard < 1 || j.Shard >= l.o.Count:
		refuse("shard %d: the workers are shards 1 to %d (shard 0 is the leader)", j.Shard, l.o.Count-1)
		return
	case j.RunID != l.o.RunID:
		refuse("run id %q, the leader's is %q: a worker of another search", j.RunID, l.o.RunID)
		return
	}
	if why := Mismatch(l.o.Facts, j.Facts); why != "" {
		refuse("%s", why)
		return
	}
	tok := make([]byte, 16)
	_, _ = rand.Read(tok)
	token := hex.EncodeToString(tok)
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.done {
		reply(w, http.StatusConflict, welcome{Error: "the search has ended: " + l.reason})
		return
	}
	if old := l.workers[j.Shard]; old != nil {
		if old.gone == "" {
			why := fmt.Sprintf("shard %d/%d has already joined, from %s", j.Shard, j.Count, old.join.Host)
			l.said = append(l.said, "refused "+j.Name()+": "+why)
			l.changed()
			reply(w, http.StatusConflict, welcome{Error: why})
			return
		}
		delete(l.tokens, old.token)
	}
	l.workers[j.Shard] = &peer{join: j, token: token, seen: time.Now()}
	l.tokens[token] = j.Shard
	again := ""
	if l.point != nil {
		again = ", again"
	}
	l.said = append(l.said, j.Name()+" joined"+again)
	l.changed()
	reply(w, http.StatusOK, welcome{Token: token})
}

// who is the live worker a request comes from, marked heard from; nil
// after the reply that refuses it.
func (l *Leader) who(w http.ResponseWriter, r *http.Request) *peer {
	l.mu.Lock()
	defer l.mu.Unlock()
	i, ok := l.tokens[r.Header.Get(TokenHeader)]
	p := l.workers[i]
	switch {
	case !ok || p == nil:
		reply(w, http.StatusConflict, errorBody{Error: "not a worker of this search: join first"})
		return nil
	case p.gone != "":
		reply(w, http.StatusConflict, errorBody{Error: "this worker was counted gone: " + p.gone})
		return nil
	}
	p.seen = time.Now()
	return p
}

// about is the live worker a request about a point comes from, and the
// point's number; nil after the reply that refuses the request.
func (l *Leader) about(w http.ResponseWriter, r *http.Request) (*peer, int) {
	p := l.who(w, r)
	if p == nil {
		return nil, 0
	}
	k, err := strconv.Atoi(r.URL.Query().Get("point"))
	if err != nil || k < 0 {
		reply(w, http.StatusBadRequest, errorBody{Error: "want ?point=K"})
		return nil, 0
	}
	return p, k
}

// hold waits, at most PollHold, until cond (under l.mu) holds.
func (l *Leader) hold(r *http.Request, cond func() bool) {
	ctx, cancel := context.WithTimeout(r.Context(), PollHold)
	defer cancel()
	_ = l.wait(ctx, func() (bool, error) { return cond(), nil })
}

func (l *Leader) serveNext(w http.ResponseWriter, r *http.Request) {
	p, after := l.about(w, r)
	if p == nil {
		return
	}
	var next Next
	l.hold(r, func() bool {
		switch {
		case l.done:
			next = Next{Done: true, Reason: l.reason}
			p.told = true
			l.changed()
		case l.point != nil && l.point.p.K > after && l.point.ended() == "":
			pt := l.point.p
			next = Next{Point: &pt}
		default:
			return false
		}
		return true
	})
	reply(w, http.StatusOK, next)
}

func (l *Leader) serveReady(w http.ResponseWriter, r *http.Request) {
	p, k := l.about(w, r)
	if p == nil {
		return
	}
	var st start
	l.hold(r, func() bool {
		pt := l.open(k)
		switch {
		case pt == nil:
			st.Abort = fmt.Sprintf("point %d is not open", k)
		case pt.ended() != "":
			st.Abort = pt.ended()
		case !pt.start.IsZero():
			st.At = pt.start
		default:
			if !pt.ready[p.join.Shard] {
				pt.ready[p.join.Shard] = true
				l.changed()
			}
			return false
		}
		return true
	})
	reply(w, http.StatusOK, st)
}

func (l *Leader) serveBeat(w http.ResponseWriter, r *http.Request) {
	p, k := l.about(w, r)
	if p == nil {
		return
	}
	seq, _ := strconv.ParseInt(r.URL.Query().Get("seq"), 10, 64)
	if r.ContentLength != 0 {
		zr, err := gzip.NewReader(http.MaxBytesReader(w, r.Body, maxRecords))
		var batch []byte
		if err == nil {
			batch, err = io.ReadAll(io.LimitReader(zr, maxRecords+1))
		}
		if err == nil && len(batch) > maxRecords {
			err = fmt.Errorf("more than %d bytes of records in one beat", maxRecords)
		}
		if err != nil {
			reply(w, http.StatusBadRequest, errorBody{Error: "records: " + err.Error()})
			return
		}
		l.mu.Lock()
		fresh := seq > p.seq && l.open(k) != nil && !l.done
		if fresh {
			p.seq = seq
		}
		l.mu.Unlock()
		if fresh && len(batch) > 0 && l.o.Records != nil {
			if err := l.o.Records(p.join.Shard, k, batch); err != nil {
				l.mu.Lock()
				if l.open(k) != nil {
					l.fail(fmt.Errorf("%s: its records: %w", p.join.Name(), err))
				}
				l.mu.Unlock()
				reply(w, http.StatusBadRequest, errorBody{Error: "records: " + err.Error()})
				return
			}
		}
	}
	l.mu.Lock()
	var b beat
	if pt := l.open(k); pt != nil {
		b.Stop, b.Abort = pt.stop, pt.ended()
	}
	l.mu.Unlock()
	reply(w, http.StatusOK, b)
}

func (l *Leader) serveResult(w http.ResponseWriter, r *http.Request) {
	p, k := l.about(w, r)
	if p == nil {
		return
	}
	var res Result
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxResult)).Decode(&res); err != nil {
		reply(w, http.StatusBadRequest, errorBody{Error: "a result: " + err.Error()})
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if pt := l.open(k); pt != nil {
		pt.result[p.join.Shard] = res
		if res.Error != "" {
			l.said = append(l.said, fmt.Sprintf("%s could not run point %d: %s", p.join.Name(), k, oneLine(res.Error)))
			l.fail(fmt.Errorf("%s: %s", p.join.Name(), oneLine(res.Error)))
		}
		l.changed()
	}
	reply(w, http.StatusOK, errorBody{})
}

func (l *Leader) serveLeave(w http.ResponseWriter, r *http.Request) {
	p := l.who(w, r)
	if p == nil {
		return
	}
	var lv leave
	_ = json.NewDecoder(http.MaxBytesReader(w, r.Body, maxJSON)).Decode(&lv)
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.done {
		p.gone = "left after the search ended"
		l.changed()
	} else {
		l.lose(p, "it left: "+oneLine(cmp.Or(lv.Why, "no reason given")))
	}
	reply(w, http.StatusOK, errorBody{})
}
