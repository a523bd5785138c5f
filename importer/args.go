package importer

import (
	"math"
	"strconv"
	"strings"
)

// arity is how many values a flag takes.
type arity int

const (
	one   arity = iota // --flag V or --flag=V
	none               // --flag (a switch)
	many               // --flag V1 V2 … (argparse's nargs="*" or "+")
	maybe              // --flag or --flag=V (a switch that may carry a value)
)

// flagDef is one flag of a peer's command line.
type flagDef struct {
	names []string
	arity arity
	// ignored, when set, says why the flag has no bearing on the
	// workload (where results go, what is printed): it is accepted and
	// left out.
	ignored string
	// neg accepts --no-NAME for a switch (argparse's
	// BooleanOptionalAction, cyclopts' booleans).
	neg bool
}

// args are a command line parsed against its flag definitions: each
// flag's canonical name (its first) → the values given, in order, and
// the name it was given as.
type args struct {
	vals  map[string][]string
	as    map[string]string
	order []string
}

// parse reads argv against defs, as argparse, click and cyclopts read
// long options: "--flag value", "--flag=value", switches alone, and
// "--no-flag" for a switch that has it. normalize rewrites a flag's
// spelling before lookup (vLLM's parser accepts underscores). An unknown
// flag or a stray value is refused by name.
func parse(argv []string, defs []flagDef, normalize func(string) string) (*args, []Refusal) {
	byName := map[string]*flagDef{}
	for i := range defs {
		for _, n := range defs[i].names {
			byName[n] = &defs[i]
		}
	}
	a := &args{vals: map[string][]string{}, as: map[string]string{}}
	var bad []Refusal
	for i := 0; i < len(argv); i++ {
		arg := argv[i]
		if !strings.HasPrefix(arg, "-") || arg == "-" || arg == "--" {
			bad = append(bad, Refusal{Setting: arg, Reason: "not a flag of this command (a stray value, or a value of a flag that takes none)"})
			continue
		}
		name, val, hasVal := strings.Cut(arg, "=")
		if normalize != nil {
			name = normalize(name)
		}
		d := byName[name]
		neg := false
		if d == nil && strings.HasPrefix(name, "--no-") {
			if dd := byName["--"+strings.TrimPrefix(name, "--no-")]; dd != nil && dd.arity == none && dd.neg {
				d, neg = dd, true
			}
		}
		if d == nil {
			bad = append(bad, Refusal{Setting: name, Reason: "unknown flag"})
			continue
		}
		key := d.names[0]
		if _, seen := a.as[key]; !seen {
			a.order = append(a.order, key)
		}
		a.as[key] = name
		switch {
		case neg:
			a.vals[key] = []string{"false"}
		case d.arity == none && hasVal:
			bad = append(bad, Refusal{Setting: name, Reason: "takes no value"})
		case d.arity == none:
			a.vals[key] = []string{"true"}
		case d.arity == maybe:
			if !hasVal {
				val = "true"
			}
			a.vals[key] = []string{val}
		case hasVal:
			a.vals[key] = append(a.vals[key], val)
		case d.arity == one:
			if i+1 >= len(argv) {
				bad = append(bad, Refusal{Setting: name, Reason: "needs a value"})
				continue
			}
			i++
			a.vals[key] = append(a.vals[key], argv[i])
		default: // many: every following argument up to the next flag
			n := 0
			for i+1 < len(argv) && !isFlag(argv[i+1]) {
				i++
				n++
				a.vals[key] = append(a.vals[key], argv[i])
			}
			if n == 0 {
				a.vals[key] = append(a.vals[key], "")
			}
		}
	}
	return a, bad
}

// isFlag reports whether s is a flag rather than a value (a negative
// number is a value).
func isFlag(s string) bool {
	if !strings.HasPrefix(s, "-") || len(s) < 2 {
		return false
	}
	_, err := strconv.ParseFloat(s, 64)
	return err != nil
}

// has reports whether flag (canonical name) was given.
func (a *args) has(flag string) bool { _, ok := a.as[flag]; return ok }

// name is how flag was spelled on the command line (its canonical name
// when it was not given).
func (a *args) name(flag string) string {
	if n, ok := a.as[flag]; ok {
		return n
	}
	return flag
}

// last is flag's last value (argparse and click keep the last of a
// repeated option), or def when it was not given.
func (a *args) last(flag, def string) string {
	v := a.vals[flag]
	if len(v) == 0 {
		return def
	}
	return v[len(v)-1]
}

// given renders the flags given, for comments: "--seed 1".
func (a *args) given(flags ...string) string {
	var s []string
	for _, f := range flags {
		if !a.has(f) {
			continue
		}
		v := a.vals[f]
		switch {
		case len(v) == 1 && v[0] == "true":
			s = append(s, a.name(f))
		default:
			s = append(s, a.name(f)+" "+strings.Join(v, " "))
		}
	}
	return strings.Join(s, ", ")
}

// reader reads typed values of flags, refusing a bad one by name.
type reader struct {
	a *args
	p *problems
}

func (r reader) int(flag string, def int) int {
	s := r.a.last(flag, "")
	if s == "" {
		return def
	}
	v, err := strconv.Atoi(s)
	if err != nil {
		r.p.refuse(r.a.name(flag), "want a whole number, got %q", s)
		return def
	}
	return v
}

// float reads a float; "inf" is +Inf (Python's float("inf")).
func (r reader) float(flag string, def float64) float64 {
	s := r.a.last(flag, "")
	if s == "" {
		return def
	}
	v, err := strconv.ParseFloat(strings.ToLower(s), 64)
	if err != nil || math.IsNaN(v) {
		r.p.refuse(r.a.name(flag), "want a number, got %q", s)
		return def
	}
	return v
}

func (r reader) bool(flag string) bool {
	s := strings.ToLower(r.a.last(flag, "false"))
	switch s {
	case "true", "1", "yes", "on":
		return true
	case "false", "0", "no", "off":
		return false
	}
	r.p.refuse(r.a.name(flag), "want true or false, got %q", s)
	return false
}

func (r reader) str(flag, def string) string { return r.a.last(flag, def) }

// ignoredNotes notes the flags given that do not shape the workload.
func ignoredNotes(a *args, defs []flagDef, p *problems) {
	for _, key := range a.order {
		for _, d := range defs {
			if d.names[0] == key && d.ignored != "" {
				p.note(a.name(key), "left out: %s", d.ignored)
			}
		}
	}
}
