package endpoint

import (
	"bytes"
	"strconv"
	"strings"
)

// promSample is one sample of the Prometheus text exposition format: a
// metric name, its labels and its value.
type promSample struct {
	name   string
	labels map[string]string
	value  float64
}

// parseProm reads the samples of a Prometheus text exposition (format
// 0.0.4, and the OpenMetrics text that shares its sample syntax) whose
// metric name keep accepts (nil keeps all). Comment lines (# HELP, # TYPE,
// # EOF) and blank lines are skipped. A line that does not parse is
// skipped and counted in bad, never fatal: a scrape cut short, or a metric
// sixpin does not know, must not cost the samples it does know.
//
// The sample syntax is
//
//	name [ "{" label "=" "\"" value "\"" { "," ... } [","] "}" ] value [ timestamp ]
//
// with label values escaped as \\, \" and \n, and, in Prometheus 3's
// UTF-8 form, a quoted metric name inside the braces ({"my.metric",a="b"})
// and quoted label names.
func parseProm(text []byte, keep func(name string) bool) (samples []promSample, bad int) {
	for len(text) > 0 {
		var line []byte
		if i := bytes.IndexByte(text, '\n'); i >= 0 {
			line, text = text[:i], text[i+1:]
		} else {
			line, text = text, nil
		}
		line = bytes.TrimRight(line, "\r")
		line = bytes.TrimLeft(line, " \t")
		if len(line) == 0 || line[0] == '#' {
			continue
		}
		s, ok := parsePromLine(line, keep)
		switch {
		case !ok:
			bad++
		case s != nil:
			samples = append(samples, *s)
		}
	}
	return samples, bad
}

// parsePromLine parses one sample line. It returns nil, true for a
// well-formed sample that keep rejects (its labels are not decoded).
func parsePromLine(line []byte, keep func(string) bool) (*promSample, bool) {
	p := promParser{b: line}
	var s promSample
	if p.peek() != '{' {
		if s.name = p.name(); s.name == "" {
			return nil, false
		}
		p.ws()
		if keep != nil && !keep(s.name) {
			return nil, p.skipToValue()
		}
	}
	if p.peek() == '{' {
		p.i++
		if !p.labels(&s) || s.name == "" {
			return nil, false
		}
	}
	v, ok := p.value()
	if !ok {
		return nil, false
	}
	if keep != nil && !keep(s.name) {
		return nil, true
	}
	s.value = v
	return &s, true
}

// promParser walks one sample line.
type promParser struct {
	b []byte
	i int
}

func (p *promParser) peek() byte {
	if p.i < len(p.b) {
		return p.b[p.i]
	}
	return 0
}

func (p *promParser) ws() {
	for p.i < len(p.b) && (p.b[p.i] == ' ' || p.b[p.i] == '\t') {
		p.i++
	}
}

// name reads a bare metric or label name: [a-zA-Z_:][a-zA-Z0-9_:]*.
func (p *promParser) name() string {
	start := p.i
	for p.i < len(p.b) {
		c := p.b[p.i]
		if c == '_' || c == ':' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || p.i > start && '0' <= c && c <= '9' {
			p.i++
			continue
		}
		break
	}
	return string(p.b[start:p.i])
}

// quoted reads a double-quoted string with the exposition format's escapes
// (\\, \", \n; any other escaped byte stands for itself).
func (p *promParser) quoted() (string, bool) {
	if p.peek() != '"' {
		return "", false
	}
	p.i++
	var sb strings.Builder
	for p.i < len(p.b) {
		c := p.b[p.i]
		switch c {
		case '"':
			p.i++
			return sb.String(), true
		case '\\':
			if p.i+1 >= len(p.b) {
				return "", false
			}
			p.i++
			if e := p.b[p.i]; e == 'n' {
				sb.WriteByte('\n')
			} else {
				sb.WriteByte(e)
			}
		default:
			sb.WriteByte(c)
		}
		p.i++
	}
	return "", false
}

// labels reads the label set after "{" up to and including "}". A quoted
// item with no "=" is the metric name (Prometheus 3).
func (p *promParser) labels(s *promSample) bool {
	for {
		p.ws()
		if p.peek() == '}' {
			p.i++
			return true
		}
		var key string
		quotedKey := p.peek() == '"'
		if quotedKey {
			k, ok := p.quoted()
			if !ok {
				return false
			}
			key = k
		} else if key = p.name(); key == "" {
			return false
		}
		p.ws()
		if quotedKey && (p.peek() == ',' || p.peek() == '}') {
			if s.name != "" {
				return false
			}
			s.name = key
		} else {
			if p.peek() != '=' {
				return false
			}
			p.i++
			p.ws()
			v, ok := p.quoted()
			if !ok {
				return false
			}
			if s.labels == nil {
				s.labels = make(map[string]string, 8)
			}
			s.labels[key] = v
		}
		p.ws()
		switch p.peek() {
		case ',':
			p.i++
		case '}':
		default:
			return false
		}
	}
}

// skipToValue skips a label set without decoding it and checks the value,
// so a rejected sample is still checked for well-formedness.
func (p *promParser) skipToValue() bool {
	if p.peek() == '{' {
		p.i++
		var discard promSample
		if !p.labels(&discard) {
			return false
		}
	}
	_, ok := p.value()
	return ok
}

// value reads the sample value and an optional timestamp, and requires the
// line to end there.
func (p *promParser) value() (float64, bool) {
	p.ws()
	start := p.i
	for p.i < len(p.b) && p.b[p.i] != ' ' && p.b[p.i] != '\t' {
		p.i++
	}
	v, err := strconv.ParseFloat(string(p.b[start:p.i]), 64)
	if err != nil {
		return 0, false
	}
	p.ws()
	if p.i < len(p.b) { // timestamp (ms in 0.0.4, s in OpenMetrics)
		start = p.i
		for p.i < len(p.b) && p.b[p.i] != ' ' && p.b[p.i] != '\t' {
			p.i++
		}
		if _, err := strconv.ParseFloat(string(p.b[start:p.i]), 64); err != nil {
			return 0, false
		}
		p.ws()
	}
	return v, p.i == len(p.b)
}
