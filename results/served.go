package results

import (
	"fmt"
	"strings"

	"github.com/sixpin/sixpin/internal/numfmt"
	"github.com/sixpin/sixpin/record"
	"github.com/sixpin/sixpin/scenario"
)

// QueuedTolerancePct is how much of the client's mean in flight the
// server may have queued, on average, before the concurrency pin is
// contradicted: a server that kept more than this share of what it was
// sent waiting did not serve the declared concurrency.
const QueuedTolerancePct = 25.0

// ServedConcurrency is the concurrency the server served in the headline
// window, by what the server says of itself: how many requests it ran
// and queued (its running and waiting gauges), how long it queued them
// (its own per-request timings or its queue-time histogram), and how many
// it runs at most (its max_num_seqs or slots).
type ServedConcurrency struct {
	// Served is the mean number of requests the server was running in
	// the window, Queued the mean number it kept waiting, each with where
	// it came from.
	Served     float64 `json:"served"`
	ServedFrom string  `json:"served_from"`
	Queued     float64 `json:"queued"`
	QueuedFrom string  `json:"queued_from"`
	// RunningMean and RunningPeak are the server's running gauge over the
	// window's scrapes, WaitingMean and WaitingPeak its waiting gauge's
	// (nil: not scraped).
	RunningMean *float64 `json:"running_mean,omitempty"`
	RunningPeak *float64 `json:"running_peak,omitempty"`
	WaitingMean *float64 `json:"waiting_mean,omitempty"`
	WaitingPeak *float64 `json:"waiting_peak,omitempty"`
	// QueuedTTFTShare is the share (0–1) of the requests' TTFT they spent
	// in the server's queue, QueuedShare the share of their whole time in
	// flight, by the server's timing of each request or its queue-time
	// histogram (nil: it does not say).
	QueuedTTFTShare *float64 `json:"queued_ttft_share,omitempty"`
	QueuedShare     *float64 `json:"queued_share,omitempty"`
	// MaxNumSeqs is the most requests the server runs at once (0:
	// unknown).
	MaxNumSeqs int `json:"max_num_seqs,omitempty"`
}

// servedConcurrency is what the server did with inFlight (the client's
// mean requests in flight in window w; sw is the server's metrics of the
// same window, nil when not scraped): how many it queued — the requests'
// share of time in its queue, else its waiting gauge, else what exceeds
// its max_num_seqs — and how many it ran — its running gauge, else in
// flight less queued. nil when the server says nothing of it.
// The client's in flight also holds the network's and the client's share
// of each request, which the server neither runs nor queues: a server
// that ran fewer than were in flight with nothing waiting was idle, not
// short.
func servedConcurrency(inFlight float64, w *Window, sw *ServerWindow, kv record.KVFacts, kvFrom string) *ServedConcurrency {
	s := &ServedConcurrency{MaxNumSeqs: kv.MaxNumSeqs}
	if sw != nil && sw.Running != nil {
		s.RunningMean, s.RunningPeak = &sw.Running.Mean, &sw.Running.Peak
	}
	if sw != nil && sw.Waiting != nil {
		s.WaitingMean, s.WaitingPeak = &sw.Waiting.Mean, &sw.Waiting.Peak
	}
	// The queue's share of a request's time, from the server's own
	// timing of each request, else its queue-time histogram.
	var queueMs float64
	var queueFrom string
	switch {
	case w != nil && w.ServerQueueMs != nil && w.ServerQueueMs.Count > 0:
		queueMs, queueFrom = w.ServerQueueMs.Mean, "its timing of each request"
	case sw != nil && sw.QueueMs != nil && sw.QueueMs.Count > 0:
		queueMs, queueFrom = sw.QueueMs.Mean, "its queue-time histogram"
	}
	if queueFrom != "" && w != nil && w.TTFTMs != nil && w.E2EMs != nil && w.E2EMs.Mean > 0 {
		share := min(queueMs/w.E2EMs.Mean, 1)
		s.QueuedShare = &share
		if w.TTFTMs.Mean > 0 {
			t := min(queueMs/w.TTFTMs.Mean, 1)
			s.QueuedTTFTShare = &t
		}
	}
	// Per request (Little's law: in flight × the share of their time
	// queued is the mean number queued) beats the waiting gauge, which is
	// sampled once per scrape.
	switch {
	case s.QueuedShare != nil:
		s.Queued, s.QueuedFrom = inFlight**s.QueuedShare, "in flight × their share of time in its queue, by "+queueFrom
	case s.WaitingMean != nil:
		s.Queued, s.QueuedFrom = min(*s.WaitingMean, inFlight), "its waiting gauge"
	case s.MaxNumSeqs > 0:
		s.Queued, s.QueuedFrom = max(inFlight-float64(s.MaxNumSeqs), 0), "in flight beyond its max_num_seqs"
	default:
		return nil
	}
	switch {
	case s.RunningMean != nil:
		s.Served, s.ServedFrom = min(*s.RunningMean, inFlight), "its running gauge"
	default:
		s.Served, s.ServedFrom = inFlight-s.Queued, "in flight less queued"
	}
	if s.MaxNumSeqs > 0 && s.Served > float64(s.MaxNumSeqs) {
		s.Served = float64(s.MaxNumSeqs)
	}
	if s.MaxNumSeqs > 0 && kvFrom != "" {
		s.ServedFrom += "; max_num_seqs " + numfmt.Int(s.MaxNumSeqs) + " from " + kvFrom
	}
	return s
}

// short reports whether the server queued more than QueuedTolerancePct
// of inFlight.
func (s *ServedConcurrency) short(inFlight float64) bool {
	return s != nil && s.Queued > inFlight*QueuedTolerancePct/100
}

// String is what the server said of the requests: "it ran 1.89 on
// average (peak 2), kept 6.00 waiting (peak 6) and queued them for 69% of
// their TTFT; it runs at most 2 at once".
func (s *ServedConcurrency) String() string {
	var parts []string
	if s.RunningMean != nil {
		parts = append(parts, fmt.Sprintf("ran %s on average (peak %s)", num(*s.RunningMean), num(*s.RunningPeak)))
	}
	if s.WaitingMean != nil {
		parts = append(parts, fmt.Sprintf("kept %s waiting (peak %s)", num(*s.WaitingMean), num(*s.WaitingPeak)))
	}
	if s.QueuedTTFTShare != nil {
		parts = append(parts, "queued them for "+pct(*s.QueuedTTFTShare)+" of their TTFT")
	}
	out := "it " + strings.Join(parts, ", ")
	if len(parts) == 0 {
		out = ""
	}
	if s.MaxNumSeqs > 0 {
		if out != "" {
			out += "; "
		}
		out += "it runs at most " + numfmt.Int(s.MaxNumSeqs) + " at once"
	}
	return out
}

// judgeServed amends a client-side concurrency verdict with the server's
// side: the declared concurrency is verified only if the server did not
// queue more than QueuedTolerancePct of what the client kept in flight,
// and is not verifiable on the server side when the server says nothing
// of it. A scenario that declares queueing: allowed studies a queueing
// server: it is told, not judged. Open loop and replays, whose
// concurrency is a consequence and not a pin, are told what the server
// did.
func judgeServed(d scenario.ConcurrencyDeclared, o ConcurrencyObserved, v Verdict, reason string) (Verdict, string) {
	s := o.Server
	judged := d.Mode == scenario.ModeClosed
	if v == Contradicted || o.MeanInFlight == 0 {
		return v, reason
	}
	if s == nil {
		if v == Verified && judged {
			return Unverifiable, reason + "; not verifiable on the server side: it exposes no running or waiting count, no queue time and no max_num_seqs"
		}
		return v, reason
	}
	told := fmt.Sprintf("the client kept %s in flight, the server ran %s (%s) and queued %s (%s)",
		num(o.MeanInFlight), num(s.Served), s.ServedFrom, num(s.Queued), s.QueuedFrom)
	if more := s.String(); more != "" {
		told += ": " + more
	}
	switch {
	case !s.short(o.MeanInFlight):
		return v, reason + "; " + told
	case !judged:
		return v, reason + "; " + told + " — the server queued what arrived"
	case d.Queueing == scenario.QueueingAllowed:
		return v, reason + "; " + told + " — queueing: allowed (a queueing study)"
	}
	return Contradicted, fmt.Sprintf("%s — it queued more than %s%% of what was sent, so it did not serve the declared concurrency (a queueing study declares queueing: allowed)",
		told, trimPct(QueuedTolerancePct))
}
