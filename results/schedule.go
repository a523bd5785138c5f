package results

import (
	"fmt"
	"math"

	"github.com/sixpin/sixpin/internal/numfmt"
)

// maxLagP99Ms is the p99 send lag beyond which an open-loop client counts
// as behind its schedule; timer and scheduling jitter stay well below it.
const maxLagP99Ms = 10

// BuildSchedule reports open-loop pacing for a declared arrival rate
// (req/s): the rate the schedule itself had (a random arrival process
// rarely hits its mean exactly), the rate the client achieved in sending,
// the send lag, and whether the client fell behind: p99 lag over 10 ms of
// wall time, or sends more than 1% slower than scheduled. scale is wall
// time per run time (Header.TimeScale; 0 or 1: real time): in compressed
// time the lag, measured in run time, is 1/scale times the client's own,
// and the 10 ms allowance is the client's.
func BuildSchedule(declaredRate, scale float64, m *Measurement) *Schedule {
	s := &Schedule{TargetRateRPS: declaredRate}
	all := m.Windows[WindowAll]
	if all == nil {
		return s
	}
	s.LagMs = all.ScheduleLagMs
	s.Requests = all.Requests
	if n := float64(all.Requests - 1); n > 0 {
		if span := (m.LastScheduled - m.FirstScheduled).Seconds(); span > 0 {
			s.ScheduledRateRPS = n / span
		}
		if span := (m.LastSent - m.FirstSent).Seconds(); span > 0 {
			s.AchievedRateRPS = n / span
		}
	}
	if !(scale > 0 && scale < 1) {
		scale = 1
	}
	switch {
	case s.LagMs != nil && s.LagMs.P99*scale > maxLagP99Ms:
		s.Behind = true
		if scale < 1 {
			s.Note = fmt.Sprintf("p99 send lag %s ms (%s ms of wall time at --time-scale %s) exceeds %d ms of wall time; latencies are measured from the scheduled start, so they include it",
				num(s.LagMs.P99), num(s.LagMs.P99*scale), numfmt.Plain(scale), maxLagP99Ms)
			break
		}
		s.Note = fmt.Sprintf("p99 send lag %s ms exceeds %d ms; latencies are measured from the scheduled start, so they include it", num(s.LagMs.P99), maxLagP99Ms)
	case s.AchievedRateRPS > 0 && s.AchievedRateRPS < s.ScheduledRateRPS*0.99:
		s.Behind = true
		s.Note = fmt.Sprintf("sent %s req/s, more than 1%% below the %s req/s scheduled", num(s.AchievedRateRPS), num(s.ScheduledRateRPS))
	}
	return s
}

// arrivalCV is the coefficient of variation of an arrival process's gaps:
// 0 for constant, 1 for Poisson, 1/√shape for gamma.
func arrivalCV(arrival string, burstiness float64) float64 {
	switch arrival {
	case "constant":
		return 0
	case "gamma":
		if burstiness > 0 {
			return 1 / math.Sqrt(burstiness)
		}
	}
	return 1
}
