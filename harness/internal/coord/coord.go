// Package coord is the wire between the processes of a capacity search
// sharded across machines: a leader (shard 0) serves it over HTTP, and
// workers (shards 1 to N−1) join it, take each point the leader opens,
// wait together for its start, stream their records while it runs, learn
// from the leader when to stop, and hand in their results.
//
// The search is adaptive — each point's value depends on the verdicts of
// the last — so the shards go in lockstep, the leader deciding everything
// and the workers running what they are told. Records and results travel
// as opaque bytes: what they are is the harness's business, and this
// package links no other part of sixpin.
//
// Every request is JSON over HTTP under Prefix. A worker joins once
// (Join, answered with a token it sends as TokenHeader from then on, or
// refused with the reason) and beats every Beat while it lives, each beat
// carrying the records it queued since; a shard not heard from for
// Silence is gone, and the point it was in fails naming it. Long polls
// (the next point, the start) are answered within PollHold.
package coord

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// Prefix is the path every request of the protocol is under.
const Prefix = "/sixpin/coord/v1/"

// TokenHeader carries a joined worker's token.
const TokenHeader = "Sixpin-Shard-Token"

// Defaults of the protocol's times, in wall time.
const (
	// DefaultBeat is how often a worker beats: its records reach the
	// leader this often, and a stop reaches it within one beat.
	DefaultBeat = 200 * time.Millisecond
	// DefaultSilence is how long a shard may go unheard before it counts
	// as gone (its process killed, its machine down, the network cut).
	DefaultSilence = 30 * time.Second
	// DefaultJoinWait is how long the leader waits for every worker to
	// join, and a worker keeps trying to reach a leader not up yet (pods
	// are scheduled in any order).
	DefaultJoinWait = 10 * time.Minute
	// PollHold is the longest the leader holds a long poll open before
	// it answers "nothing yet" and the worker asks again.
	PollHold = 15 * time.Second
)

// ErrRefused marks a worker the leader would not take: a different
// scenario, tiers, target or run, or a shard already joined. The error
// says why.
var ErrRefused = errors.New("refused by the leader")

// ErrLost marks a leader that stopped answering for Silence.
var ErrLost = errors.New("the leader stopped answering")

// Fact is one thing a worker must share with its leader (the scenario's
// sha256, the tiers, the target, …), by name, as text.
type Fact struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// Mismatch says how a worker's facts differ from its leader's, naming
// the first that differs ("" when they agree).
func Mismatch(leader, worker []Fact) string {
	mine := map[string]string{}
	for _, f := range worker {
		mine[f.Name] = f.Value
	}
	for _, f := range leader {
		v, ok := mine[f.Name]
		switch {
		case !ok:
			return fmt.Sprintf("%s: the leader's is %s, the worker says none (a different sixpin?)", f.Name, clip(f.Value))
		case v != f.Value:
			return fmt.Sprintf("%s differs: the leader's is %s, the worker's %s", f.Name, clip(f.Value), clip(v))
		}
	}
	if len(worker) != len(leader) {
		return fmt.Sprintf("the worker states %d facts, the leader %d (a different sixpin?)", len(worker), len(leader))
	}
	return ""
}

// clip shortens a fact for an error: a long one is cut in the middle.
func clip(s string) string {
	const most = 120
	if len(s) <= most {
		return fmt.Sprintf("%q", s)
	}
	return fmt.Sprintf("%q", s[:most/2]+" … "+s[len(s)-most/2:])
}

// Join is what a worker says when it joins.
type Join struct {
	// Shard and Count are I and N of --shard I/N.
	Shard int `json:"shard"`
	Count int `json:"count"`
	// RunID is the search's run id (--run-id).
	RunID string `json:"run_id"`
	// Host is the worker's machine, for the leader's words.
	Host  string `json:"host"`
	Facts []Fact `json:"facts"`
}

// Name is the shard as the words name it: "shard 2/4 (HOST)".
func (j Join) Name() string {
	s := fmt.Sprintf("shard %d/%d", j.Shard, j.Count)
	if j.Host != "" {
		s += " (" + j.Host + ")"
	}
	return s
}

// welcome answers a join.
type welcome struct {
	Token string `json:"token,omitempty"`
	Error string `json:"error,omitempty"`
}

// Point is one point the leader opens: every shard runs its share of the
// scenario at Value, with Seed, for at most Duration of run time, under
// run id RunID (which salts the prompts alike in every shard).
type Point struct {
	// K numbers the points from 1.
	K        int           `json:"k"`
	Value    float64       `json:"value"`
	Seed     int64         `json:"seed"`
	Role     string        `json:"role"`
	Label    string        `json:"label"`
	RunID    string        `json:"run_id"`
	Duration time.Duration `json:"duration_ns"`
}

// Next is the answer to a worker asking for the point after its last:
// the point, or Done with the reason the search ended (neither: ask
// again).
type Next struct {
	Point  *Point `json:"point,omitempty"`
	Done   bool   `json:"done,omitempty"`
	Reason string `json:"reason,omitempty"`
}

// start answers a worker ready for a point: the common start, or why the
// point was abandoned (neither: ask again).
type start struct {
	At    time.Time `json:"at,omitzero"`
	Abort string    `json:"abort,omitempty"`
}

// Stop is the leader's word to stop a point: every shard stops issuing at
// At (wall-clock), so that they end together. Why says what decided it;
// AtS is when, in seconds of run time.
type Stop struct {
	At  time.Time `json:"at"`
	Why string    `json:"why"`
	AtS float64   `json:"at_s"`
}

// beat answers a worker's beat: a stop or an abandonment of its point,
// once there is one.
type beat struct {
	Stop  *Stop  `json:"stop,omitempty"`
	Abort string `json:"abort,omitempty"`
}

// Result is what a worker hands in for a point: its results (opaque), or
// the error that kept it from running.
type Result struct {
	Run   []byte `json:"run,omitempty"`
	Error string `json:"error,omitempty"`
}

// leave is a worker's last word: why it is going.
type leave struct {
	Why string `json:"why"`
}

// errorBody is the body of a refusal or a bad request.
type errorBody struct {
	Error string `json:"error"`
}

// oneLine keeps the first line of s, for words that must fit one.
func oneLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}
