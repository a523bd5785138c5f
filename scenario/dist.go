package scenario

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/sixpin/sixpin/internal/strictyaml"
	"gopkg.in/yaml.v3"
)

// Distribution kinds.
const (
	DistFixed     = "fixed"
	DistUniform   = "uniform"
	DistNormal    = "normal"
	DistLognormal = "lognormal"
	DistEmpirical = "empirical"
)

// distKinds lists the kinds in the order error messages name them.
var distKinds = []string{DistFixed, DistUniform, DistNormal, DistLognormal, DistEmpirical}

// truncTries is how many times Sample redraws a value outside [Min, Max]
// before it clamps.
const truncTries = 64

// Dist is a seeded distribution of a quantity (token counts for the prompt
// and output pins). The quantity's unit is the unit of the field that holds
// the Dist (tokens for pins.prompt.tokens and pins.output.tokens).
//
// In YAML a bare number is a fixed value; otherwise a mapping with dist: and
// the parameters of that kind:
//
//	fixed      value
//	uniform    min, max
//	normal     mean, stddev, min, max
//	lognormal  median, sigma, min, max
//	empirical  values, optional weights (same length; default equal)
//
// Bounds are explicit: uniform, normal and lognormal require min and max and
// are truncated to them; fixed and empirical are bounded by their values.
// A parameter the kind does not use is an error.
//
// A Dist is a value; its methods do not modify it and are safe for
// concurrent use (each caller brings its own *rand.Rand).
type Dist struct {
	// Kind is one of the Dist* constants; empty means unset.
	Kind string `yaml:"dist"`
	// Value is the fixed value.
	Value float64 `yaml:"value"`
	// Min and Max are the inclusive bounds of uniform, normal and lognormal.
	Min float64 `yaml:"min"`
	Max float64 `yaml:"max"`
	// Mean and Stddev are the normal's parameters before truncation.
	Mean   float64 `yaml:"mean"`
	Stddev float64 `yaml:"stddev"`
	// Median is the lognormal's median, exp(μ), before truncation.
	Median float64 `yaml:"median"`
	// Sigma is the lognormal's σ, the standard deviation of ln X.
	Sigma float64 `yaml:"sigma"`
	// Values are the empirical outcomes; Weights, when set, their relative
	// weights (one per value, ≥ 0, not necessarily summing to 1).
	Values  []float64 `yaml:"values"`
	Weights []float64 `yaml:"weights"`
}

// Fixed returns the distribution that is always v.
func Fixed(v float64) Dist { return Dist{Kind: DistFixed, Value: v} }

// distParams maps each kind to the parameters it uses, in YAML-key order.
// Parameters not listed are errors for that kind.
var distParams = map[string][]string{
	DistFixed:     {"value"},
	DistUniform:   {"min", "max"},
	DistNormal:    {"mean", "stddev", "min", "max"},
	DistLognormal: {"median", "sigma", "min", "max"},
	DistEmpirical: {"values", "weights"},
}

// allDistParams lists every parameter key, in Dist field order.
var allDistParams = []string{"value", "min", "max", "mean", "stddev", "median", "sigma", "values", "weights"}

// param reports whether parameter key has a non-zero value in d.
func (d Dist) param(key string) bool {
	switch x := d.get(key).(type) {
	case float64:
		return x != 0
	case []float64:
		return len(x) > 0
	}
	return false
}

// IsZero reports whether d is unset (no kind and no parameters).
func (d Dist) IsZero() bool {
	if d.Kind != "" {
		return false
	}
	for _, k := range allDistParams {
		if d.param(k) {
			return false
		}
	}
	return true
}

// Bounds returns the smallest and largest value Sample can return: the
// value of a fixed Dist, Min and Max of uniform, normal and lognormal, and
// the extreme values of an empirical Dist. An unset or unknown Dist gives
// (0, 0).
func (d Dist) Bounds() (lo, hi float64) {
	switch d.Kind {
	case DistFixed:
		return d.Value, d.Value
	case DistUniform, DistNormal, DistLognormal:
		return d.Min, d.Max
	case DistEmpirical:
		first := true
		for i, v := range d.Values {
			if i < len(d.Weights) && d.Weights[i] == 0 {
				continue // never drawn
			}
			if first || v < lo {
				lo = v
			}
			if first || v > hi {
				hi = v
			}
			first = false
		}
		return lo, hi
	}
	return 0, 0
}

// Sample draws one value from d using r. Bounded kinds are truncated: a
// draw outside [Min, Max] is redrawn up to 64 times, then clamped. Sample
// assumes d is valid (see Scenario.Validate); an unset Dist gives 0. It
// walks an empirical Dist's weights on every call: for many draws use a
// Plan, which prepares its distributions once.
func (d Dist) Sample(r *rand.Rand) float64 {
	s := d.prepare()
	return s.sample(r)
}

// SampleInt draws one integer: the form used for token counts. A uniform
// Dist gives every integer in [⌈Min⌉, ⌊Max⌋] the same chance; other kinds
// round Sample to the nearest integer within those bounds. Like Sample it
// prepares d anew on every call.
func (d Dist) SampleInt(r *rand.Rand) int {
	s := d.prepare()
	return s.sampleInt(r)
}

// sampler is a Dist prepared for many draws: its bounds and, for a
// weighted empirical Dist, the running total of its weights, each
// computed once (Bounds and the total walk every value, which a list of
// a million values makes slow).
type sampler struct {
	d      Dist
	lo, hi float64   // Bounds
	cum    []float64 // cum[i]: the sum of the positive weights up to i
}

// prepare returns d's sampler.
func (d Dist) prepare() sampler {
	s := sampler{d: d}
	s.lo, s.hi = d.Bounds()
	if d.Kind == DistEmpirical && len(d.Weights) == len(d.Values) && len(d.Values) > 0 {
		s.cum = make([]float64, len(d.Weights))
		var total float64
		for i, w := range d.Weights {
			total += max(w, 0)
			s.cum[i] = total
		}
	}
	return s
}

// sample is Dist.Sample.
func (s *sampler) sample(r *rand.Rand) float64 {
	d := s.d
	switch d.Kind {
	case DistFixed:
		return d.Value
	case DistUniform:
		return d.Min + r.Float64()*(d.Max-d.Min)
	case DistNormal:
		return d.truncated(func() float64 { return d.Mean + d.Stddev*r.NormFloat64() })
	case DistLognormal:
		return d.truncated(func() float64 { return d.Median * math.Exp(d.Sigma*r.NormFloat64()) })
	case DistEmpirical:
		return s.empirical(r)
	}
	return 0
}

// sampleInt is Dist.SampleInt.
func (s *sampler) sampleInt(r *rand.Rand) int {
	lo, hi := math.Ceil(s.lo), math.Floor(s.hi)
	if s.d.Kind == DistUniform && lo <= hi {
		return int(lo) + int(r.Int64N(int64(hi-lo)+1))
	}
	v := math.Round(s.sample(r))
	if lo <= hi {
		v = min(max(v, lo), hi)
	}
	return int(v)
}

func (d Dist) truncated(draw func() float64) float64 {
	var v float64
	for range truncTries {
		v = draw()
		if v >= d.Min && v <= d.Max {
			return v
		}
	}
	return min(max(v, d.Min), d.Max)
}

// empirical draws a value, by weight when there are weights: the first
// value whose running total exceeds a uniform draw from [0, total).
func (s *sampler) empirical(r *rand.Rand) float64 {
	d := s.d
	switch {
	case len(d.Values) == 0:
		return 0
	case s.cum == nil:
		return d.Values[r.IntN(len(d.Values))]
	}
	u := r.Float64() * s.cum[len(s.cum)-1]
	i := sort.Search(len(s.cum), func(i int) bool { return s.cum[i] > u })
	if i == len(s.cum) { // rounding left u at the total
		i = len(s.cum) - 1
	}
	for d.Weights[i] <= 0 && i > 0 { // the running total was flat there
		i--
	}
	return d.Values[i]
}

// String formats d compactly: "8000", "uniform [150, 500]",
// "normal(mean 1000, stddev 200) in [500, 1500]",
// "lognormal(median 50000, σ 0.6) in [11000, 120000]",
// "empirical{100, 200}" or "empirical{100: 0.7, 200: 0.3}".
func (d Dist) String() string {
	switch d.Kind {
	case "":
		if d.IsZero() {
			return "unset"
		}
		return "?"
	case DistFixed:
		return num(d.Value)
	case DistUniform:
		return fmt.Sprintf("uniform [%s, %s]", num(d.Min), num(d.Max))
	case DistNormal:
		return fmt.Sprintf("normal(mean %s, stddev %s) in [%s, %s]", num(d.Mean), num(d.Stddev), num(d.Min), num(d.Max))
	case DistLognormal:
		return fmt.Sprintf("lognormal(median %s, σ %s) in [%s, %s]", num(d.Median), num(d.Sigma), num(d.Min), num(d.Max))
	case DistEmpirical:
		const most = 8
		if len(d.Values) > most {
			lo, hi := d.Bounds()
			return fmt.Sprintf("empirical(%d values) in [%s, %s]", len(d.Values), num(lo), num(hi))
		}
		parts := make([]string, len(d.Values))
		for i, v := range d.Values {
			parts[i] = num(v)
			if len(d.Weights) == len(d.Values) {
				parts[i] += ": " + num(d.Weights[i])
			}
		}
		return "empirical{" + strings.Join(parts, ", ") + "}"
	}
	return d.Kind + "(?)"
}

// Shorthand lets the strict decoder accept a bare number as a fixed Dist.
func (d *Dist) Shorthand(n *yaml.Node) string {
	v, ok := strictyaml.Number(n)
	if !ok {
		return "must be " + d.YAMLWant() + " (got " + strictyaml.Got(n) + ")"
	}
	*d = Fixed(v)
	return ""
}

// YAMLWant describes Dist's YAML forms for messages.
func (d *Dist) YAMLWant() string { return `a number or a mapping with "dist"` }

// distYAML is Dist without its methods, for plain yaml.v3 decoding.
type distYAML struct {
	Kind    string    `yaml:"dist"`
	Value   float64   `yaml:"value"`
	Min     float64   `yaml:"min"`
	Max     float64   `yaml:"max"`
	Mean    float64   `yaml:"mean"`
	Stddev  float64   `yaml:"stddev"`
	Median  float64   `yaml:"median"`
	Sigma   float64   `yaml:"sigma"`
	Values  []float64 `yaml:"values"`
	Weights []float64 `yaml:"weights"`
}

// UnmarshalYAML accepts a bare number (fixed) or a mapping, for plain
// yaml.v3 decoding. It is lenient and does not validate; Load is strict.
func (d *Dist) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode {
		if v, ok := strictyaml.Number(n); ok {
			*d = Fixed(v)
			return nil
		}
	}
	var y distYAML
	if err := n.Decode(&y); err != nil {
		return err
	}
	*d = Dist(y)
	return nil
}

// MarshalYAML writes a fixed Dist as a bare number and any other as a flow
// mapping of dist: and the parameters its kind uses, so it reads back
// through Load.
func (d Dist) MarshalYAML() (any, error) {
	switch {
	case d.IsZero():
		return nil, nil
	case d.Kind == DistFixed:
		return d.Value, nil
	}
	keys, ok := distParams[d.Kind]
	if !ok {
		keys = slices.DeleteFunc(slices.Clone(allDistParams), func(k string) bool { return !d.param(k) })
	}
	m := &yaml.Node{Kind: yaml.MappingNode, Style: yaml.FlowStyle}
	add := func(k string, v any) error {
		var kn, vn yaml.Node
		if err := kn.Encode(k); err != nil {
			return err
		}
		if err := vn.Encode(v); err != nil {
			return err
		}
		vn.Style |= yaml.FlowStyle
		m.Content = append(m.Content, &kn, &vn)
		return nil
	}
	if err := add("dist", d.Kind); err != nil {
		return nil, err
	}
	for _, k := range keys {
		if k == "weights" && len(d.Weights) == 0 {
			continue // optional
		}
		if err := add(k, d.get(k)); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// get returns parameter key of d.
func (d Dist) get(key string) any {
	switch key {
	case "value":
		return d.Value
	case "min":
		return d.Min
	case "max":
		return d.Max
	case "mean":
		return d.Mean
	case "stddev":
		return d.Stddev
	case "median":
		return d.Median
	case "sigma":
		return d.Sigma
	case "values":
		return d.Values
	case "weights":
		return d.Weights
	}
	return nil
}

// num formats x in the shortest form that reads back exactly.
func num(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }
