package results

import (
	"fmt"
	"math"
	"slices"
	"time"
)

// OverTime is one latency's distribution over the run, step by step: the
// successful requests observed in each step (TTFT at the first token,
// E2E at the end), counted in log buckets 2^(1/16) apart (4.4%), so that
// steps add across shards and a step's percentile reads within 4.4%. A
// step is 1 s in a run of up to 10 minutes, 10 s up to 100 minutes, and
// a minute beyond: at most about 600 steps.
type OverTime struct {
	StepS int `json:"step_s"`
	// Steps holds each step's populated buckets as pairs: bucket, count,
	// bucket, count … (buckets ascending). Bucket b holds the values in
	// [2^(b/16), 2^((b+1)/16)) µs.
	Steps [][]int64 `json:"steps"`
}

// overTimeBuckets bounds the bucket index: 2^(700/16) µs is 1.7 years.
const (
	overTimePerOctave = 16
	overTimeBuckets   = 700
)

// overTimeStep is a run's step, in seconds, for a run that ends at end.
func overTimeStep(end time.Duration) int {
	switch {
	case end <= 10*time.Minute:
		return 1
	case end <= 100*time.Minute:
		return 10
	}
	return 60
}

// overTimeAcc builds an OverTime as records replay.
type overTimeAcc struct {
	step  time.Duration
	steps []map[int32]int64
}

func newOverTimeAcc(end time.Duration) *overTimeAcc {
	return &overTimeAcc{step: time.Duration(overTimeStep(end)) * time.Second}
}

// observe counts latency v at time at (both from the start of load).
func (a *overTimeAcc) observe(at, v time.Duration) {
	if at < 0 || v < 0 {
		return
	}
	i := int(at / a.step)
	for len(a.steps) <= i {
		a.steps = append(a.steps, nil)
	}
	if a.steps[i] == nil {
		a.steps[i] = map[int32]int64{}
	}
	a.steps[i][overTimeBucket(v)]++
}

func (a *overTimeAcc) result() *OverTime {
	if len(a.steps) == 0 {
		return nil
	}
	o := &OverTime{StepS: int(a.step / time.Second), Steps: make([][]int64, len(a.steps))}
	for i, m := range a.steps {
		o.Steps[i] = pairs(m)
	}
	return o
}

// overTimeBucket is v's bucket (v below 1 µs counts as 1 µs).
func overTimeBucket(v time.Duration) int32 {
	us := max(float64(v)/float64(time.Microsecond), 1)
	return int32(min(math.Floor(overTimePerOctave*math.Log2(us)), overTimeBuckets-1))
}

// pairs is m as sorted bucket, count pairs.
func pairs(m map[int32]int64) []int64 {
	keys := make([]int32, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	out := make([]int64, 0, 2*len(keys))
	for _, k := range keys {
		out = append(out, int64(k), m[k])
	}
	return out
}

// Count is how many requests step i observed.
func (o *OverTime) Count(i int) int64 {
	var n int64
	for j := 1; j < len(o.Steps[i]); j += 2 {
		n += o.Steps[i][j]
	}
	return n
}

// QuantileMs is the q-quantile (0 < q ≤ 1) of step i in milliseconds, the
// geometric middle of its bucket; false when the step observed nothing.
func (o *OverTime) QuantileMs(i int, q float64) (float64, bool) {
	n := o.Count(i)
	if n == 0 {
		return 0, false
	}
	rank := int64(math.Ceil(q * float64(n)))
	var seen int64
	s := o.Steps[i]
	for j := 0; j+1 < len(s); j += 2 {
		seen += s[j+1]
		if seen >= rank {
			return math.Exp2((float64(s[j])+0.5)/overTimePerOctave) / 1e3, true
		}
	}
	return math.Exp2((float64(s[len(s)-2])+0.5)/overTimePerOctave) / 1e3, true
}

// check says what is wrong with o, a results file's: "" when nothing.
func (o *OverTime) check() string {
	if o.StepS < 1 {
		return fmt.Sprintf("step_s %d: must be at least 1", o.StepS)
	}
	for i, s := range o.Steps {
		if len(s)%2 != 0 {
			return fmt.Sprintf("steps[%d]: an odd number of values (bucket, count pairs)", i)
		}
		for j := 0; j < len(s); j += 2 {
			if s[j] < 0 || s[j] >= overTimeBuckets || (j > 0 && s[j] <= s[j-2]) || s[j+1] <= 0 {
				return fmt.Sprintf("steps[%d]: bucket %d, count %d: buckets ascend in [0, %d), counts are positive", i, s[j], s[j+1], overTimeBuckets)
			}
		}
	}
	return ""
}

// addOverTime adds src, shifted off later, into *dst: steps add bucket
// by bucket, the finer of two steps re-counted in the coarser.
func addOverTime(dst **OverTime, src *OverTime, off time.Duration) {
	if src == nil {
		return
	}
	if *dst == nil {
		*dst = &OverTime{StepS: src.StepS}
	}
	d := *dst
	if src.StepS > d.StepS {
		*d = *d.rebin(src.StepS)
	}
	step := d.StepS
	k := int(math.Round(off.Seconds()))
	for i, s := range src.Steps {
		at := (i*src.StepS + k) / step
		for len(d.Steps) <= at {
			d.Steps = append(d.Steps, nil)
		}
		d.Steps[at] = addPairs(d.Steps[at], s)
	}
}

// rebin is o counted in steps of step seconds (a multiple of o's).
func (o *OverTime) rebin(step int) *OverTime {
	out := &OverTime{StepS: step}
	for i, s := range o.Steps {
		at := i * o.StepS / step
		for len(out.Steps) <= at {
			out.Steps = append(out.Steps, nil)
		}
		out.Steps[at] = addPairs(out.Steps[at], s)
	}
	return out
}

// addPairs is the sum of two sorted bucket, count pair lists.
func addPairs(a, b []int64) []int64 {
	out := make([]int64, 0, len(a)+len(b))
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case j >= len(b) || (i < len(a) && a[i] < b[j]):
			out = append(out, a[i], a[i+1])
			i += 2
		case i >= len(a) || b[j] < a[i]:
			out = append(out, b[j], b[j+1])
			j += 2
		default:
			out = append(out, a[i], a[i+1]+b[j+1])
			i, j = i+2, j+2
		}
	}
	return out
}
