package harness

import (
	"fmt"
	"strings"

	"github.com/sixpin/sixpin/endpoint"
	"github.com/sixpin/sixpin/profiles"
	"github.com/sixpin/sixpin/record"
	"github.com/sixpin/sixpin/results"
	"github.com/sixpin/sixpin/runner"
	"github.com/sixpin/sixpin/scenario"
	verdicts "github.com/sixpin/sixpin/verdict"
)

// judging follows a run's records with a verdict.Judge and stops the run
// once it is decided: at the first broken tier for abort_on (abort), or
// once every tier is decided for a capacity point. Like the collector it
// is owned by the consumer of the runner's channel.
type judging struct {
	judge *verdicts.Judge
	abort bool
	// only names the tiers a capacity point waits for (empty: all).
	only []string
	// stopped is the stop, once asked for (nil before).
	stopped *earlyStop
	// link ties a shard of a sharded capacity point to the others (nil:
	// the point runs in one process); with it, the records go to the
	// link, which judges them on the leader and forwards them from a
	// worker.
	link *shardLink
}

// earlyStop is the cause a judged run stops issuing with.
type earlyStop struct {
	atS   float64
	why   string
	abort bool
}

func (e *earlyStop) Error() string { return e.why }

// observe judges rec and asks stop to end issuing once the verdict
// allows it (once).
func (j *judging) observe(rec *record.Record, stop func(error)) {
	if j != nil && j.link != nil {
		j.link.observe(rec)
		return
	}
	if j == nil || j.stopped != nil || !j.judge.Observe(rec) {
		return
	}
	j.decided(rec.End.Seconds(), stop)
}

// decided stops issuing, at run time atS, once a tier's verdict allows
// it: the first broken tier for abort_on, every awaited tier decided for
// a capacity point.
func (j *judging) decided(atS float64, stop func(error)) {
	ok, why := j.judge.Broken()
	if !j.abort {
		ok, why = j.judge.Decided(j.only), "decided at 95% confidence: "+strings.Join(j.only, ", ")
	}
	if ok {
		j.stopped = &earlyStop{atS: atS, why: why, abort: j.abort}
		stop(j.stopped)
	}
}

// censors reports whether the judge can count requests still in flight
// (verdict.Judge.Censors): not across shards, whose records the leader
// judges.
func (j *judging) censors() bool {
	return j != nil && j.link == nil && j.judge.Censors()
}

// censor judges the requests in flight in pending at the clock's now
// (verdict.Judge.Censor) and asks stop to end issuing once the verdict
// allows it, as observe does. Called from the consumer of the runner's
// channel, once a second.
func (j *judging) censor(pending *runner.Pending, clock endpoint.Clock, stop func(error)) {
	if pending == nil || j == nil || j.stopped != nil {
		return
	}
	now := clock.Since()
	decided := false
	pending.Each(func(f *runner.InFlight) {
		decided = j.judge.Censor(f.Index, f.Scheduled, now, f.Answered()) || decided
	})
	if decided {
		j.decided(now.Seconds(), stop)
	}
}

// ending is how the judged run ended, nil when it was not stopped.
func (e *earlyStop) ending() *results.StoppedEarly {
	if e == nil {
		return nil
	}
	return &results.StoppedEarly{AtS: e.atS, Reason: e.why, Aborted: e.abort}
}

// measurable is what a run of sc against profile p can measure.
func measurable(sc *scenario.Scenario, p *profiles.Profile) verdicts.Measurable {
	return verdicts.Measurable{Sessions: sc.Workload.Agentic(), ServerQueue: p.Simulated()}
}

// abortJudging is the run's abort_on — the scenario's conditions and
// --abort-on's, as one tier — judged from after the warmup (nil: none).
// A condition that does not parse, or names what the run cannot measure,
// is bad input.
func abortJudging(cfg Config, sc *scenario.Scenario, p *profiles.Profile, streams int) (*judging, error) {
	var flag scenario.Conditions
	for _, s := range cfg.AbortOn {
		flag = append(flag, scenario.SplitConditions(s, 0, 0)...)
	}
	tier := verdicts.Tier{Name: "abort_on"}
	for _, part := range []struct {
		file, field string
		conds       scenario.Conditions
	}{{sc.Path, "abort_on", sc.AbortOn}, {"--abort-on", "", flag}} {
		if len(part.conds) == 0 {
			continue
		}
		t, err := verdicts.ParseTier(part.file, part.field, tier.Name, part.conds)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrBadInput, err)
		}
		tier.Conditions = append(tier.Conditions, t.Conditions...)
	}
	if len(tier.Conditions) == 0 {
		return nil, nil
	}
	if err := verdicts.CheckTiers([]verdicts.Tier{tier}, measurable(sc, p)); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadInput, err)
	}
	return &judging{judge: verdicts.NewJudge([]verdicts.Tier{tier}, judgeOptions(sc, streams)), abort: true}, nil
}

// judgeOptions are how sc's runs are judged: from its warmup on, and
// under a stationary start once each of its first sessions (one per
// stream the judge sees: a shard's, or all of them) has had its cold
// turn answered.
func judgeOptions(sc *scenario.Scenario, streams int) verdicts.JudgeOptions {
	o := verdicts.JudgeOptions{Warmup: sc.Windows.Warmup.D()}
	if sc.Workload.Stationary() {
		o.WarmSessions = streams
	}
	return o
}
