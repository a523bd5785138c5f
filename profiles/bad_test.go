package profiles

import (
	"errors"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/sixpin/sixpin/internal/strictyaml"
)

// The bad-profile corpus: what would break every request (header
// injection, invalid header names, extra_body members sixpin owns or
// JSON cannot carry), sizes that would allocate absurdly, and files that
// are no profile at all are refused at load with file:line:col and the
// field, echoing nothing of a foreign file.
func TestBadProfileCorpus(t *testing.T) {
	for file, want := range map[string][]string{
		"compose.yaml": {
			"testdata/bad/compose.yaml:1:1: not a profile file: none of its keys is a profile key (want name, kind, base_url, ...)",
		},
		"context-window.yaml": {
			"testdata/bad/context-window.yaml:3:17: context_window: must be ≤ 10,000,000 tokens (got 1000000000000)",
		},
		"empty.yaml": {
			"testdata/bad/empty.yaml: empty file: want a profile mapping (name, kind, base_url, ...)",
		},
		"extra-body-key.yaml": {
			"testdata/bad/extra-body-key.yaml:4:12: extra_body.kw.b: keys must be strings: JSON has no other (got \"1\"; quote it)",
		},
		"extra-body-nan.yaml": {
			"testdata/bad/extra-body-nan.yaml:4:16: extra_body.temperature: must be a finite number: JSON has no .nan",
			"testdata/bad/extra-body-nan.yaml:5:15: extra_body.kw.a[1]: must be a finite number: JSON has no .inf",
		},
		"extra-body-owned.yaml": {
			"testdata/bad/extra-body-owned.yaml:4:11: extra_body.stream: sixpin sets this member of every request: sixpin streams every request",
			"testdata/bad/extra-body-owned.yaml:5:15: extra_body.max_tokens: sixpin sets this member of every request: the output pin sets it (max_tokens_field names the member)",
			"testdata/bad/extra-body-owned.yaml:7:3: extra_body.messages: sixpin sets this member of every request: the prompt pin builds them",
			"testdata/bad/extra-body-owned.yaml:8:10: extra_body.model: sixpin sets this member of every request: set model: in the profile (or --model)",
			"testdata/bad/extra-body-owned.yaml:9:3: extra_body.stream_options: sixpin sets this member of every request: sixpin asks for usage in the stream",
			"testdata/bad/extra-body-owned.yaml:10:26: extra_body.max_completion_tokens: sixpin sets this member of every request: the output pin sets it (max_tokens_field names the member)",
		},
		"header-crlf.yaml": {
			"testdata/bad/header-crlf.yaml:4:11: headers.X-Team: must not hold a line break or other control character (got \"ml\\r\\nX-Injected: 1\")",
		},
		"header-name.yaml": {
			"testdata/bad/header-name.yaml:4:16: headers.My Header: must be a header name: letters, digits and !#$%&'*+-.^_`|~ only (got \"My Header\")",
			"testdata/bad/header-name.yaml:6:13: headers.X(bad): must be a header name: letters, digits and !#$%&'*+-.^_`|~ only (got \"X(bad)\")",
		},
		"protocol.yaml": {
			"testdata/bad/protocol.yaml:3:11: protocol: must be one of chat, messages, responses, completions (got \"grpc\")",
		},
		"passwd": {
			"testdata/bad/passwd:1:1: not a profile file: want a mapping (name, kind, base_url, ...), got a string",
		},
	} {
		t.Run(file, func(t *testing.T) {
			p, err := Resolve(filepath.Join("testdata", "bad", file))
			var list strictyaml.ErrorList
			if !errors.As(err, &list) {
				t.Fatalf("Resolve = %+v, %v; want an ErrorList", p, err)
			}
			var got []string
			for _, e := range list {
				got = append(got, e.Error())
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("errors:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
			if strings.Contains(err.Error(), "root:x") || strings.Contains(err.Error(), "registry/secret") {
				t.Errorf("the error echoes the file: %v", err)
			}
		})
	}
}
