package scenario

import (
	"fmt"
	"strconv"
	"strings"
)

// Shard names part I of N of a plan (0 ≤ I < N). The zero Shard is the
// whole plan.
type Shard struct {
	I, N int
}

// ParseShard reads "I/N" (`--shard 2/8`).
func ParseShard(s string) (Shard, error) {
	a, b, ok := strings.Cut(s, "/")
	i, err1 := strconv.Atoi(a)
	n, err2 := strconv.Atoi(b)
	switch {
	case !ok || err1 != nil || err2 != nil:
		return Shard{}, fmt.Errorf("--shard %q: want I/N, e.g. 0/4", s)
	case n < 1 || i < 0 || i >= n:
		return Shard{}, fmt.Errorf("--shard %q: want 0 ≤ I < N", s)
	}
	return Shard{I: i, N: n}, nil
}

// String is "I/N".
func (sh Shard) String() string { return fmt.Sprintf("%d/%d", sh.I, sh.n()) }

// Whole reports whether sh is the whole plan (N ≤ 1).
func (sh Shard) Whole() bool { return sh.N <= 1 }

// n is N, at least 1.
func (sh Shard) n() int { return max(sh.N, 1) }

// share is how many of n things indexed 0…n-1 are dealt to shard I when
// thing i goes to shard i mod N: ⌈(n − I) / N⌉.
func (sh Shard) share(n int) int {
	if sh.Whole() || n <= 0 {
		return n
	}
	return (n - sh.I + sh.N - 1) / sh.N
}

// Shard returns shard sh of the plan: the units Unit(0), Unit(1), … of the
// result are this plan's units I, I+N, I+2N, … (requests, agentic
// sessions or trace sessions, dealt out like cards), so the N shards are
// disjoint and their union is the plan. Each shard runs its share of the
// streams (closed loop and agentic: stream s goes to shard s mod N), of
// the rate (open loop: arrival k goes to shard k mod N, so each carries
// rate/N and together they are the planned arrival process), and of the
// request, session and in-flight bounds. It fails when a shard would get
// no stream, session or request, or no in-flight slot. Shard the whole
// plan only.
func (p *Plan) Shard(sh Shard) (*Plan, error) {
	if !p.sh.Whole() {
		return nil, fmt.Errorf("plan is already shard %s", p.sh)
	}
	if sh.N < 1 || sh.I < 0 || sh.I >= sh.N {
		return nil, fmt.Errorf("shard %d/%d: want 0 ≤ I < N", sh.I, sh.N)
	}
	s := p.s
	check := func(n int, what string) error {
		if n > 0 && sh.N > n {
			return fmt.Errorf("shard %s: N is more than the %d %s; every shard needs at least one", sh, n, what)
		}
		return nil
	}
	var errs []error
	switch p.Mode() {
	case ModeClosed, ModeSessions:
		errs = append(errs, check(s.Pins.Concurrency.Streams, "streams (pins.concurrency.streams)"))
	case ModeOpen:
		errs = append(errs, check(s.Pins.Concurrency.MaxInFlight, "in-flight slots (pins.concurrency.max_in_flight)"))
	case ModeTrace:
		errs = append(errs, check(p.TraceSessions(), "sessions of the trace"))
	}
	errs = append(errs, check(s.Workload.Sessions, "sessions (workload.sessions)"), check(s.Requests, "requests"))
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	q := &Plan{s: p.s, seed: p.seed, salt: p.salt, classes: p.classes, cum: p.cum,
		turns: p.turns, firstPrompt: p.firstPrompt, output: p.output, growth: p.growth, think: p.think,
		sh: sh}
	if p.trace != nil {
		q.trace = &traceReader{f: p.trace.f}
	}
	return q, nil
}

// ShardOf returns which shard of its scenario's plan p is (the zero Shard:
// the whole).
func (p *Plan) ShardOf() Shard { return p.sh }

// Unit returns the index in the whole plan of this plan's unit j (from
// 0): j itself for the whole plan, j·N + I for shard I of N. Request,
// Session and TraceSession take that index.
func (p *Plan) Unit(j int) int {
	if p.sh.Whole() {
		return j
	}
	return j*p.sh.N + p.sh.I
}
