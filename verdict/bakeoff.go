package verdict

import (
	"fmt"
	"strings"

	"github.com/sixpin/sixpin/record"
	"github.com/sixpin/sixpin/results"
)

// Vendor is one profile of a bake-off: its runs (one per repeat, in run
// order), its declared intelligence gate, and what it lost.
type Vendor struct {
	Profile string
	Runs    []*results.Run
	// Gate is "pass", "fail", or "" when the user declared none.
	Gate string
	// Losses say why some of its figures are lost or bent, in a fixed
	// order: interrupted, failed, invalid, throttled.
	Losses []Loss
}

// The kinds of Loss.
const (
	// LossInterrupted: a run was cut short; its figures are partial.
	LossInterrupted = "interrupted"
	// LossFailed: no request succeeded, or abort_on stopped a run.
	LossFailed = "failed"
	// LossInvalid: a pin broke or the error budget was exceeded; its
	// figures are not the scenario's.
	LossInvalid = "invalid"
	// LossThrottled: the server refused requests with 429; its figures
	// are shaped by its rate limit.
	LossThrottled = "throttled"
)

// Loss is one reason a vendor's figures are lost or bent.
type Loss struct {
	Kind string
	// Share is, for LossThrottled, the fraction (0–1) of its requests the
	// rate limit refused, over all its runs.
	Share float64
	// Why is a phrase: the invalid pins ("prompt, errors"), the 429
	// count, what cut a run short.
	Why string
}

// Vendors groups set's runs by profile, in the order each profile first
// ran, with their losses. A set of another kind gives nil.
func Vendors(set *results.Set) []Vendor {
	if set.Kind != results.SetBakeoff {
		return nil
	}
	var vs []Vendor
	at := map[string]int{}
	for _, p := range Points(set) {
		name := strings.TrimPrefix(p.Key, "profile=")
		name, _, _ = strings.Cut(name, ",")
		i, ok := at[name]
		if !ok {
			i = len(vs)
			at[name] = i
			vs = append(vs, Vendor{Profile: name, Gate: set.Gates[name]})
		}
		vs[i].Runs = append(vs[i].Runs, p.Run)
	}
	for i := range vs {
		vs[i].Losses = losses(vs[i].Runs)
	}
	return vs
}

// losses are what runs (one vendor's) lost, each kind once.
func losses(runs []*results.Run) []Loss {
	var out []Loss
	var cut, failed, invalid []string
	refused, requests := 0, 0
	for _, r := range runs {
		requests += r.Errors.Requests
		refused += r.Errors.ByClass[string(record.ErrHTTP429)]
		switch {
		case r.Incomplete:
			cut = append(cut, r.IncompleteReason)
		case r.StoppedEarly != nil && r.StoppedEarly.Aborted:
			failed = append(failed, "stopped by abort_on: "+r.StoppedEarly.Reason)
		case r.Errors.Requests > 0 && r.Errors.Requests == r.Errors.Failed:
			failed = append(failed, "no request succeeded")
		}
		if !r.Valid {
			for _, why := range r.Invalid {
				pin, _, _ := strings.Cut(why, ":")
				invalid = appendNew(invalid, pin)
			}
		}
	}
	if len(cut) > 0 {
		out = append(out, Loss{Kind: LossInterrupted, Why: strings.Join(cut, "; ")})
	}
	if len(failed) > 0 {
		out = append(out, Loss{Kind: LossFailed, Why: strings.Join(failed, "; ")})
	}
	if len(invalid) > 0 {
		out = append(out, Loss{Kind: LossInvalid, Why: strings.Join(invalid, ", ")})
	}
	if refused > 0 && requests > 0 {
		out = append(out, Loss{Kind: LossThrottled, Share: float64(refused) / float64(requests),
			Why: fmt.Sprintf("%d of %d requests refused with 429", refused, requests)})
	}
	return out
}

func appendNew(xs []string, x string) []string {
	for _, y := range xs {
		if y == x {
			return xs
		}
	}
	return append(xs, x)
}

// Lost reports whether v lost its place in the comparison: a run
// interrupted, failed or invalid, or a request refused by its rate limit.
// A bake-off that ran whole and lost a vendor is not a bake-off that
// failed (cmd/sixpin gives it its own exit code).
func (v Vendor) Lost() bool { return len(v.Losses) > 0 }

// Usable reports whether v's figures stand for the scenario and the user
// did not fail its intelligence: no run interrupted, failed or invalid
// (a throttled vendor within its error budget is still usable).
func (v Vendor) Usable() bool {
	for _, l := range v.Losses {
		if l.Kind != LossThrottled {
			return false
		}
	}
	return v.Gate != "fail" && len(v.Runs) > 0
}

// Loss returns v's loss of kind, if it has one.
func (v Vendor) Loss(kind string) (Loss, bool) {
	for _, l := range v.Losses {
		if l.Kind == kind {
			return l, true
		}
	}
	return Loss{}, false
}

// SessionCap says what ended a run's sessions when it was a setting
// rather than the vendor: "the run's length" when no session that began
// at its first turn ended before the run did, "the cost cap" when every
// one that ended hit it. Then the sessions' lifetime (and cost per
// session) are bounds, not measurements. capped is false when some
// session ended on its own (its turns done, its context full, an error),
// or the run had no sessions.
func SessionCap(r *results.Run) (capped bool, why string) {
	if r.Sessions == nil {
		return false, ""
	}
	whole, runEnded, costCap := 0, 0, 0
	for _, s := range r.Sessions.All {
		if s.FirstTurn != 0 {
			continue
		}
		whole++
		switch s.EndReason {
		case record.SessionEndRunEnded, record.SessionEndInterrupted:
			runEnded++
		case record.SessionEndCostCap:
			costCap++
		}
	}
	switch {
	case whole == 0:
		return false, ""
	case runEnded == whole:
		return true, "the run's length; no session ended"
	case runEnded+costCap == whole:
		return true, "the cost cap; no session ended otherwise"
	}
	return false, ""
}
