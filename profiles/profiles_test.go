package profiles

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sixpin/sixpin/internal/redact"
	"github.com/sixpin/sixpin/internal/strictyaml"
)

func TestEmbeddedProfilesLoad(t *testing.T) {
	list, err := List()
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"anthropic", "llamacpp", "ollama", "openai", "openai-compatible", "openai-responses", "sglang",
		"sim-cerebras-27b", "sim-instant", "sim-local-27b", "sim-spec-degenerate", "sim-spec-healthy", "vllm"}
	var got []string
	for _, p := range list {
		got = append(got, p.Name)
		if p.Source != "embedded" {
			t.Errorf("%s: source %q", p.Name, p.Source)
		}
		// Anthropic writes its base URL without /v1 (the messages
		// protocol takes both).
		if !p.Simulated() && !strings.HasSuffix(p.BaseURL, "/v1") && p.Protocol != "messages" {
			t.Errorf("%s: base_url %q does not end in /v1", p.Name, p.BaseURL)
		}
	}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("profiles = %v, want %v", got, want)
	}
}

func TestResolve(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "mine.yaml")
	os.WriteFile(file, []byte("kind: vllm\nbase_url: http://gpu-box:8000/v1\nmodel: qwen\napi_key_env: MY_KEY\n"), 0o644)
	p, err := Resolve(file)
	if err != nil {
		t.Fatal(err)
	}
	if p.Name != "mine" || p.Model != "qwen" || p.KeyEnv() != "MY_KEY" || p.OutputControl != "none" || p.MaxTokensField != "max_tokens" {
		t.Errorf("resolved %+v", p)
	}
	if p, err := Resolve("vllm"); err != nil || p.OutputControl != "ignore_eos+min_tokens" {
		t.Errorf("Resolve(vllm) = %+v, %v", p, err)
	}
	if _, err := Resolve("no-such-profile"); err == nil || !strings.Contains(err.Error(), "profiles list") {
		t.Errorf("unknown profile: %v", err)
	}
	if p, _ := Resolve("openai-compatible"); p.KeyEnv() != DefaultAPIKeyEnv {
		t.Errorf("default key env = %q", p.KeyEnv())
	}
}

func TestParseErrors(t *testing.T) {
	cases := []struct{ src, want string }{
		{"kind: vllm\nbase_url: http://x/v1\nmodle: q\n", "p.yaml:3:1: modle: unknown field (did you mean \"model\"?)"},
		{"kind: triton\n", "p.yaml:1:7: kind: must be one of"},
		{"kind: vllm\nbase_url: ftp://x\n", "p.yaml:2:11: base_url: must be an http(s) URL"},
		{"kind: vllm\noutput_control: always\n", "p.yaml:2:17: output_control: must be one of"},
		{"kind: simulator\n", "p.yaml:1:1: sim: required for kind simulator"},
		{"kind: vllm\nheaders: {Authorization: Bearer x}\n", "p.yaml:2:26: headers.Authorization: must not hold credentials"},
		{"kind: simulator\nsim: [timing, warp]\n", "p.yaml:2:1: sim: must be a mapping of the simulator's settings"},
	}
	for _, c := range cases {
		_, err := Parse("p.yaml", []byte(c.src))
		var list strictyaml.ErrorList
		if err == nil || !errors.As(err, &list) || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("Parse(%q) = %v, want prefix %q", c.src, err, c.want)
		}
	}
}

// shown is what `profiles show` prints of a profile file named name
// holding src.
func shown(t *testing.T, dir, name, src string) []byte {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	text, err := Text(p)
	if err != nil {
		t.Fatal(err)
	}
	return text
}

// A profile's headers are shown as the run treats them, every value a
// secret: `profiles show` prints each as [redacted], however the YAML
// writes it, and keeps the rest of the file, comments too.
func TestTextRedactsHeaders(t *testing.T) {
	dir := t.TempDir()
	for name, c := range map[string]struct{ src, comment string }{
		"flow.yaml":  {"kind: vllm # mine\nbase_url: http://gpu.example/v1\nheaders: {X-Org: acme-0rg-s3cret, X-Tenant: 't3nant'}\n", "# mine"},
		"block.yaml": {"kind: vllm\nheaders:\n  X-Org: acme-0rg-s3cret # the org\n  X-Tenant: \"t3n\\x61nt\"\n", "# the org"},
	} {
		text := shown(t, dir, name, c.src)
		for _, secret := range []string{"acme-0rg-s3cret", "t3nant", "t3n\\x61nt"} {
			if strings.Contains(string(text), secret) {
				t.Errorf("%s: Text shows %q:\n%s", name, secret, text)
			}
		}
		back, err := Parse(name, text)
		if err != nil || back.Headers["X-Org"] != redact.Marker || back.Headers["X-Tenant"] != redact.Marker || back.Kind != "vllm" {
			t.Errorf("%s: Text does not read back with the headers redacted (%v):\n%s", name, err, text)
		}
		if !strings.Contains(string(text), c.comment) {
			t.Errorf("%s: Text lost the comment %q:\n%s", name, c.comment, text)
		}
	}
}

// A profile's base_url never shows its password or query values, however
// the YAML writes it.
func TestTextRedactsBaseURL(t *testing.T) {
	dir := t.TempDir()
	for name, src := range map[string]string{
		"plain.yaml":   "kind: vllm # mine\nbase_url: https://alice:s3cret@gpu.example/v1?api-key=k3y&region=eu\n",
		"escaped.yaml": "kind: vllm\nbase_url: \"https://alice:s3cr\\x65t@gpu.example/v1?api-key=k3y\"\n",
	} {
		text := shown(t, dir, name, src)
		for _, secret := range []string{"s3cret", "s3cr\\x65t", "k3y", "alice"} {
			if strings.Contains(string(text), secret) {
				t.Errorf("%s: Text shows %q:\n%s", name, secret, text)
			}
		}
		if !strings.Contains(string(text), "gpu.example/v1?api-key=[redacted]") || !strings.Contains(string(text), "kind: vllm") {
			t.Errorf("%s: Text =\n%s", name, text)
		}
	}
	if got := redact.URL("http://127.0.0.1:8000/v1"); got != "http://127.0.0.1:8000/v1" {
		t.Errorf("DisplayURL changed a URL without secrets: %q", got)
	}
	if got := redact.URL("https://u:p@h/v1?a=1&b=2"); got != "https://[redacted]@h/v1?a=[redacted]&b=[redacted]" {
		t.Errorf("DisplayURL = %q", got)
	}
}
