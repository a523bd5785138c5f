package profiles

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/sixpin/sixpin/internal/strictyaml"
)

// ownedFields are the request body members sixpin sets on every request,
// which extra_body must not override, and why.
var ownedFields = map[string]string{
	"model":                 "set model: in the profile (or --model)",
	"messages":              "the prompt pin builds them",
	"stream":                "sixpin streams every request",
	"stream_options":        "sixpin asks for usage in the stream",
	"max_tokens":            "the output pin sets it (max_tokens_field names the member)",
	"max_completion_tokens": "the output pin sets it (max_tokens_field names the member)",
	"prompt":                "the prompt pin builds it (protocol completions)",
	"input":                 "the prompt pin builds it (protocol responses)",
	"max_output_tokens":     "the output pin sets it (protocol responses)",
	"store":                 "sixpin sends store: false (protocol responses): a benchmark's responses are not kept",
}

// checkRequests finds what would break every request the profile makes:
// header names that are not HTTP tokens, header values with line breaks
// or other control characters, and extra_body members that sixpin owns
// or that JSON cannot carry (NaN, infinities, keys that are not strings).
// doc positions the errors at the offending values.
func (p *Profile) checkRequests(doc *strictyaml.Doc, bad func(field, format string, args ...any), at func(*strictyaml.FieldError)) {
	names := make([]string, 0, len(p.Headers))
	for k := range p.Headers {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		switch {
		case !validHeaderName(k):
			bad("headers."+k, "must be a header name: letters, digits and !#$%%&'*+-.^_`|~ only (got %q)", k)
		case !validHeaderValue(p.Headers[k]):
			bad("headers."+k, "must not hold a line break or other control character (got %q)", p.Headers[k])
		}
	}
	keys := make([]string, 0, len(p.ExtraBody))
	for k := range p.ExtraBody {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if why, owned := ownedFields[k]; owned {
			bad("extra_body."+k, "sixpin sets this member of every request: %s", why)
			continue
		}
		if n, ok := doc.Node("extra_body." + k); ok {
			jsonable(n, "extra_body."+k, at)
		}
	}
}

// jsonable reports, through bad, the first part of the YAML value n (at
// field path) that JSON cannot carry, positioned at it.
func jsonable(n *yaml.Node, path string, bad func(e *strictyaml.FieldError)) bool {
	for n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	switch n.Kind {
	case yaml.ScalarNode:
		if n.ShortTag() != "!!float" {
			return true
		}
		var f float64
		if n.Decode(&f) == nil && (math.IsNaN(f) || math.IsInf(f, 0)) {
			bad(&strictyaml.FieldError{Line: n.Line, Col: n.Column, Field: path, Msg: "must be a finite number: JSON has no " + n.Value})
			return false
		}
	case yaml.SequenceNode:
		for i, item := range n.Content {
			if !jsonable(item, fmt.Sprintf("%s[%d]", path, i), bad) {
				return false
			}
		}
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i]
			if k.Kind != yaml.ScalarNode || k.ShortTag() != "!!str" {
				bad(&strictyaml.FieldError{Line: k.Line, Col: k.Column, Field: path,
					Msg: "keys must be strings: JSON has no other (got " + strictyaml.Got(k) + "; quote it)"})
				return false
			}
			if !jsonable(n.Content[i+1], path+"."+k.Value, bad) {
				return false
			}
		}
	}
	return true
}

// validHeaderName reports whether s is an HTTP field name: a token of
// RFC 9110 (letters, digits and !#$%&'*+-.^_`|~).
func validHeaderName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0:
		default:
			return false
		}
	}
	return true
}

// validHeaderValue reports whether s can be sent as a header value: no
// control characters but tab (a CR or LF would split the request).
func validHeaderValue(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < ' ' && c != '\t') || c == 0x7f {
			return false
		}
	}
	return true
}
