package scenario

import (
	"fmt"
	"net/http"
	"strings"
)

// reservedHeaders are the headers sixpin sets on a request itself (the
// body's type, the stream, the key, the protocol's version, the request
// id) or that HTTP/1.1 owns: a session header may not replace one.
var reservedHeaders = []string{"Accept", "Anthropic-Version", "Authorization", "Connection", "Content-Length",
	"Content-Type", "Host", "Transfer-Encoding", "X-Api-Key", "X-Request-Id"}

// affinity checks workload.session_affinity: only where requests belong
// to sessions, and header names that are HTTP tokens, not sixpin's own,
// each once.
func (v *validator) affinity() {
	a, p := v.s.Workload.SessionAffinity, "workload.session_affinity"
	if a == nil {
		return
	}
	if k := v.s.Workload.Kind; k != WorkloadAgentic && k != WorkloadTrace {
		v.errorf(p, "only for kind agentic or trace: independent requests belong to no session")
		return
	}
	if len(a.Headers) == 0 && len(a.Echo) == 0 {
		v.errorf(p, "names no header: give headers, echo or both (or leave headers out: X-Session-ID)")
		return
	}
	seen := map[string]string{}
	for _, list := range []struct {
		key   string
		names []string
	}{{"headers", a.Headers}, {"echo", a.Echo}} {
		if len(list.names) > MaxAffinityHeaders {
			v.errorf(p+"."+list.key, "at most %d headers (got %d)", MaxAffinityHeaders, len(list.names))
			continue
		}
		for i, h := range list.names {
			f := fmt.Sprintf("%s.%s[%d]", p, list.key, i)
			c := http.CanonicalHeaderKey(h)
			switch first, dup := seen[c]; {
			case !headerToken(h):
				v.errorf(f, "%q is not a header name (letters, digits and !#$%%&'*+-.^_`|~ only)", h)
			case dup:
				v.errorf(f, "%q repeats %s", h, first)
			case reserved(c):
				v.errorf(f, "%q is a header sixpin sets itself; name another", h)
			}
			if _, dup := seen[c]; !dup {
				seen[c] = fmt.Sprintf("%s[%d] (header names are case-insensitive)", list.key, i)
				if list.key == "headers" && !v.has(p+".headers") {
					seen[c] = "the default session header (write headers: [] to send none)"
				}
			}
		}
	}
}

func reserved(canonical string) bool {
	for _, r := range reservedHeaders {
		if canonical == r {
			return true
		}
	}
	return false
}

// headerToken reports whether s is an HTTP field name: a token of RFC
// 9110 §5.6.2.
func headerToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0:
		default:
			return false
		}
	}
	return true
}

// Affinity returns the headers that carry a session's id on each of its
// requests, canonicalised ("X-Session-Id"), or nil when session affinity
// is off. An MLPerf replay always sends X-Session-ID, declared or not:
// MLPerf's agentic rules require it on every request (mlcommons/endpoints
// ea33275, AgenticInferenceConfig.routing_headers), so it is among the
// names, after those declared.
func (p *Plan) Affinity() []string {
	var names []string
	if a := p.s.Workload.SessionAffinity; a != nil {
		names = canonical(a.Headers)
	}
	if p.s.Workload.MLPerfReplay() {
		id := http.CanonicalHeaderKey(DefaultAffinityHeader)
		for _, n := range names {
			if n == id {
				return names
			}
		}
		names = append(names, id)
	}
	return names
}

// AffinityEcho returns the response headers a session sends back
// (SessionAffinity.Echo), canonicalised, or nil.
func (p *Plan) AffinityEcho() []string {
	a := p.s.Workload.SessionAffinity
	if a == nil {
		return nil
	}
	return canonical(a.Echo)
}

func canonical(names []string) []string {
	if len(names) == 0 {
		return nil
	}
	out := make([]string, len(names))
	for i, h := range names {
		out[i] = http.CanonicalHeaderKey(h)
	}
	return out
}

// affinityStream seeds synthetic session ids, apart from the sessions'
// texts.
const affinityStream = 0x7369_7870_696e_6964 // "sixpinid"

// sessionID is the id of agentic session i whose text seed is seed:
// "sixpin-I-HEX", a pure function of the plan's seed, its prompt salt and
// i, so that two runs of one scenario name their sessions alike and a
// salted run names them anew, as it writes them anew.
func (p *Plan) sessionID(i int, seed uint64) string {
	return fmt.Sprintf("sixpin-%d-%016x", i, p.Salt(splitmix64(seed^affinityStream)))
}

// traceSessionID is a trace session's id as a request carries it: the
// trace's own (a Mooncake line number for a line without a session_id),
// with the plan's prompt salt appended when it has one, so that a salted
// replay's sessions are new to a router as its texts are new to a cache.
// Bytes a header value may not hold (controls but the tab) become "_".
func (p *Plan) traceSessionID(own string) string {
	own = strings.Map(func(r rune) rune {
		if r < ' ' && r != '\t' || r == 0x7f {
			return '_'
		}
		return r
	}, strings.TrimSpace(own))
	if own == "" {
		own = "_"
	}
	if p.salt == 0 {
		return own
	}
	return fmt.Sprintf("%s-%08x", own, uint32(splitmix64(p.salt^affinityStream)>>32))
}
