// Package profiles holds endpoint and vendor profiles.
//
// A profile says how an endpoint is addressed (base URL, model, API-key variable), which request extensions
// it honours, and, for the simulator, its calibrated model. Ready profiles
// are embedded in the binary, so `--profile NAME` works from any directory;
// a path to a YAML file works too.
package profiles

import (
	"bytes"
	"embed"
	"fmt"
	"net/url"
	"os"
	"path"
	"sort"
	"strings"

	"github.com/sixpin/sixpin/endpoint"
	"github.com/sixpin/sixpin/internal/bounds"
	"github.com/sixpin/sixpin/internal/clip"
	"github.com/sixpin/sixpin/internal/numfmt"
	"github.com/sixpin/sixpin/internal/redact"
	"github.com/sixpin/sixpin/internal/strictyaml"
	"github.com/sixpin/sixpin/record"
	"github.com/sixpin/sixpin/results"
	"github.com/sixpin/sixpin/tokenizer"
	"gopkg.in/yaml.v3"
)

// Kinds of endpoint.
const (
	KindSimulator        = "simulator"
	KindOpenAICompatible = "openai-compatible"
)

// kinds are the accepted kinds: the simulator, or the serving stack,
// named so reports can say which stack they measured (what API it is
// spoken to in is the profile's protocol).
var kinds = []string{KindSimulator, KindOpenAICompatible, "vllm", "llamacpp", "sglang", "ollama", "openai", "tgi", "anthropic"}

// Profile describes one endpoint.
type Profile struct {
	Name        string `yaml:"name"`
	Description string `yaml:"description"`
	// Kind is "simulator" or the serving stack of an OpenAI-compatible
	// endpoint (openai-compatible, vllm, llamacpp, sglang, ollama, openai,
	// tgi).
	Kind string `yaml:"kind"`
	// BaseURL ends in /v1 (not used by the simulator, which is served
	// in-process on a loopback port); under protocol messages the /v1
	// may be left out, as Anthropic writes it.
	BaseURL string `yaml:"base_url"`
	// Protocol is the API the endpoint is spoken to in: chat (OpenAI chat
	// completions, the default), messages (Anthropic's Messages API),
	// responses (OpenAI's Responses API) or completions (legacy
	// /v1/completions, the prompt as one text).
	Protocol string `yaml:"protocol"`
	// HTTP is the HTTP spoken to an https endpoint: "1.1" (the default:
	// a connection per stream, through sixpin's own transport) or "2"
	// (HTTP/2 where the server offers it, through net/http: streams
	// share connections). Plain http is always HTTP/1.1.
	HTTP string `yaml:"http"`
	// Model is the id to request; empty means the scenario's model pin
	// name (or --model).
	Model string `yaml:"model"`
	// APIKeyEnv names the environment variable holding the API key
	// (default OPENAI_API_KEY). The key itself never appears in a profile.
	APIKeyEnv string `yaml:"api_key_env"`
	// MaxTokensField is max_tokens (default) or max_completion_tokens.
	MaxTokensField string `yaml:"max_tokens_field"`
	// OutputControl is the endpoint's don't-stop-early control: none,
	// ignore_eos, min_tokens or ignore_eos+min_tokens (default none).
	OutputControl string `yaml:"output_control"`
	// Tokenizer is whose count prompts are built to: "server" (the
	// endpoint's own /tokenize: llama.cpp, vLLM, SGLang), a tokenizer
	// name ("qwen2", "cl100k_base", "o200k_base", "words") or "hf:PATH" to
	// a tokenizer.json. Empty: unknown; runs fall back to o200k_base with
	// a warning, and pin 2 stays unverified until usage confirms it.
	Tokenizer string `yaml:"tokenizer"`
	// ExtraBody members are added to every request body.
	ExtraBody map[string]any `yaml:"extra_body"`
	// Headers are added to every request (not for secrets: use api_key_env).
	Headers map[string]string `yaml:"headers"`
	// ContextWindow is the endpoint's context length in tokens, if known.
	ContextWindow int `yaml:"context_window"`
	// Pricing is the vendor's price list per million tokens.
	Pricing *record.Pricing `yaml:"pricing"`
	// RateLimits are the vendor's limits, metered client-side.
	RateLimits *results.RateLimits `yaml:"rate_limits"`
	// PowerWatts and USDPerKWh price a local endpoint by energy over wall
	// time.
	PowerWatts float64 `yaml:"power_watts"`
	USDPerKWh  float64 `yaml:"usd_per_kwh"`
	// GPUs is how many accelerators serve the endpoint, and USDPerHour
	// what the deployment costs an hour to rent (0: not declared): a
	// capacity search's answers per GPU and per $/hour.
	GPUs       int     `yaml:"gpus"`
	USDPerHour float64 `yaml:"usd_per_hour"`
	// Sim configures the simulator (kind simulator only), kept as YAML:
	// the harness decodes it into the simulator's configuration
	// (harness.SimConfig), so that a client-side profile never links the
	// simulator.
	Sim *yaml.Node `yaml:"sim"`

	// Source is "embedded" or the file the profile was read from.
	Source string `yaml:"-"`
}

// TokenizerServer names the endpoint's own /tokenize as the tokenizer.
const TokenizerServer = "server"

// DefaultSimulator is the profile `sixpin run` uses when no target is given.
const DefaultSimulator = "sim-local-27b"

// DefaultAPIKeyEnv is read when a profile names no api_key_env.
const DefaultAPIKeyEnv = "OPENAI_API_KEY"

//go:embed *.yaml
var embedded embed.FS

// Simulated reports whether the profile is the built-in simulator.
func (p *Profile) Simulated() bool { return p.Kind == KindSimulator }

// KeyEnv returns the environment variable the API key is read from.
func (p *Profile) KeyEnv() string {
	if p.APIKeyEnv != "" {
		return p.APIKeyEnv
	}
	return DefaultAPIKeyEnv
}

// Parse decodes a profile strictly (unknown keys are errors with
// file:line:col), applies defaults and validates it.
func Parse(file string, data []byte) (*Profile, error) {
	var p Profile
	doc, errs := strictyaml.Decode(file, data, &p, yamlKind)
	if len(errs) > 0 {
		return nil, errs
	}
	p.Source = file
	if p.MaxTokensField == "" {
		p.MaxTokensField = "max_tokens"
	}
	if p.OutputControl == "" {
		p.OutputControl = "none"
	}
	if p.Protocol == "" {
		p.Protocol = endpoint.ProtocolChat.String()
	}
	if p.Name == "" {
		p.Name = strings.TrimSuffix(path.Base(file), path.Ext(file))
	}
	if errs := p.validate(doc); len(errs) > 0 {
		for _, e := range errs {
			if e.Line == 0 {
				doc.Place(e)
			}
			e.File = file
		}
		errs.Sort()
		return nil, errs
	}
	return &p, nil
}

func (p *Profile) validate(doc *strictyaml.Doc) strictyaml.ErrorList {
	var errs strictyaml.ErrorList
	bad := func(field, format string, args ...any) {
		errs = append(errs, &strictyaml.FieldError{Field: field, Msg: fmt.Sprintf(format, clip.Args(args)...)})
	}
	if !contains(kinds, p.Kind) {
		bad("kind", "must be one of %s (got %q)", strings.Join(kinds, ", "), p.Kind)
	}
	if p.Kind == KindSimulator {
		if p.Sim == nil {
			bad("sim", "required for kind simulator")
		} else if p.Sim.Kind != yaml.MappingNode {
			bad("sim", "must be a mapping of the simulator's settings (got %s)", strictyaml.Got(p.Sim))
		}
		if p.BaseURL != "" {
			bad("base_url", "not used by kind simulator (it is served in-process)")
		}
	} else {
		if p.Sim != nil {
			bad("sim", "only for kind simulator")
		}
		if p.BaseURL != "" {
			if u, err := url.Parse(p.BaseURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
				bad("base_url", "must be an http(s) URL ending in /v1 (got %q)", p.BaseURL)
			}
		}
	}
	if p.MaxTokensField != "max_tokens" && p.MaxTokensField != "max_completion_tokens" {
		bad("max_tokens_field", "must be max_tokens or max_completion_tokens (got %q)", p.MaxTokensField)
	}
	if _, err := endpoint.ParseOutputControl(p.OutputControl); err != nil {
		bad("output_control", "%v", err)
	}
	if _, err := endpoint.ParseProtocol(p.Protocol); err != nil {
		bad("protocol", "%v", err)
	}
	if _, err := endpoint.ParseHTTPVersion(p.HTTP); err != nil {
		bad("http", "%v", err)
	}
	if p.Tokenizer != "" && p.Tokenizer != TokenizerServer {
		if _, err := tokenizer.Get(p.Tokenizer); err != nil {
			bad("tokenizer", "%v (or %q for the endpoint's own /tokenize)", err, TokenizerServer)
		}
	}
	if p.Tokenizer == TokenizerServer && p.Kind == KindSimulator {
		bad("tokenizer", "name the simulator's tokenizer (sim.tokenizer) instead of %q", TokenizerServer)
	}
	for k := range p.Headers {
		if strings.EqualFold(k, "Authorization") {
			bad("headers."+k, "must not hold credentials: name the variable in api_key_env")
		}
	}
	p.checkRequests(doc, bad, func(e *strictyaml.FieldError) { errs = append(errs, e) })
	if pr := p.Pricing; pr != nil {
		for name, v := range map[string]float64{"input_per_mtok": pr.InputPerMTok, "output_per_mtok": pr.OutputPerMTok} {
			if v < 0 {
				bad("pricing."+name, "must be ≥ 0")
			}
		}
		if pr.CachedInputPerMTok != nil && *pr.CachedInputPerMTok < 0 {
			bad("pricing.cached_input_per_mtok", "must be ≥ 0")
		}
		if pr.ReasoningPerMTok != nil && *pr.ReasoningPerMTok < 0 {
			bad("pricing.reasoning_per_mtok", "must be ≥ 0")
		}
		if pr.CacheWriteInputPerMTok != nil && *pr.CacheWriteInputPerMTok < 0 {
			bad("pricing.cache_write_input_per_mtok", "must be ≥ 0")
		}
	}
	if l := p.RateLimits; l != nil {
		for name, v := range map[string]int{"requests_per_minute": l.RequestsPerMinute, "tokens_per_minute": l.TokensPerMinute,
			"uncached_tokens_per_minute": l.UncachedTokensPerMinute, "output_tokens_per_minute": l.OutputTokensPerMinute, "tokens_per_day": l.TokensPerDay} {
			if v < 0 {
				bad("rate_limits."+name, "must be ≥ 0")
			}
		}
	}
	if p.PowerWatts < 0 || p.USDPerKWh < 0 {
		bad("power_watts", "power_watts and usd_per_kwh must be ≥ 0")
	}
	if (p.PowerWatts > 0) != (p.USDPerKWh > 0) {
		bad("power_watts", "power_watts and usd_per_kwh go together")
	}
	if p.GPUs < 0 {
		bad("gpus", "must be ≥ 0")
	}
	if p.USDPerHour < 0 {
		bad("usd_per_hour", "must be ≥ 0")
	}
	if p.ContextWindow < 0 {
		bad("context_window", "must be ≥ 0")
	} else if p.ContextWindow > bounds.Tokens {
		bad("context_window", "must be ≤ %s tokens (got %d)", numfmt.Thousands(bounds.Tokens), p.ContextWindow)
	}
	return errs
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// Load reads a profile file.
func Load(file string) (*Profile, error) {
	data, err := bounds.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("load profile: %w", err)
	}
	return Parse(file, data)
}

// Embedded returns the embedded profile called name.
func Embedded(name string) (*Profile, error) {
	data, err := embedded.ReadFile(name + ".yaml")
	if err != nil {
		return nil, fmt.Errorf("no profile %q (see sixpin profiles list)", name)
	}
	p, err := Parse(name+".yaml", data)
	if err != nil {
		return nil, err
	}
	p.Source = "embedded"
	return p, nil
}

// Resolve returns the profile a --profile value names: a path to a YAML file
// (anything with a slash or a .yaml/.yml ending), else an embedded name.
func Resolve(ref string) (*Profile, error) {
	if strings.ContainsRune(ref, os.PathSeparator) || strings.HasSuffix(ref, ".yaml") || strings.HasSuffix(ref, ".yml") {
		return Load(ref)
	}
	return Embedded(ref)
}

// List returns every embedded profile, sorted by name.
func List() ([]*Profile, error) {
	entries, err := embedded.ReadDir(".")
	if err != nil {
		return nil, err
	}
	var out []*Profile
	for _, e := range entries {
		p, err := Embedded(strings.TrimSuffix(e.Name(), ".yaml"))
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// Text returns the YAML a profile was read from (for profiles show), with
// what the run holds secret redacted as the run redacts it: base_url's
// userinfo and query values (redact.URL) and every headers: value
// (redact.Marker). A file with nothing to redact is returned as written;
// one with something is re-encoded from its YAML, comments kept.
func Text(p *Profile) ([]byte, error) {
	if p.Source == "embedded" {
		return embedded.ReadFile(p.Name + ".yaml")
	}
	src, err := bounds.ReadFile(p.Source)
	if err != nil {
		return nil, err
	}
	if redact.URL(p.BaseURL) == p.BaseURL && len(p.Headers) == 0 {
		return src, nil
	}
	var root yaml.Node
	if err := yaml.Unmarshal(src, &root); err != nil || len(root.Content) == 0 || root.Content[0].Kind != yaml.MappingNode {
		return nil, fmt.Errorf("profile %s: cannot show it with its secrets redacted", p.Name)
	}
	m := root.Content[0]
	for i := 0; i+1 < len(m.Content); i += 2 {
		switch v := m.Content[i+1]; m.Content[i].Value {
		case "base_url":
			redactScalar(v, redact.URL(p.BaseURL))
		case "headers":
			if v.Kind == yaml.MappingNode {
				for j := 1; j < len(v.Content); j += 2 {
					redactScalar(v.Content[j], redact.Marker)
				}
			}
		}
	}
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(&root); err != nil {
		return nil, fmt.Errorf("profile %s: cannot show it with its secrets redacted: %w", p.Name, err)
	}
	return b.Bytes(), enc.Close()
}

// redactScalar makes n the plain string safe, whatever it held and
// however it was written.
func redactScalar(n *yaml.Node, safe string) {
	n.Kind, n.Tag, n.Value, n.Style, n.Content, n.Alias = yaml.ScalarNode, "!!str", safe, 0, nil, nil
}

// Energy returns the profile's energy pricing, or nil.
func (p *Profile) Energy() *record.Energy {
	if p.PowerWatts <= 0 {
		return nil
	}
	return &record.Energy{PowerWatts: p.PowerWatts, USDPerKWh: p.USDPerKWh}
}

// yamlKind names a profile file in the errors about the whole file.
var yamlKind = strictyaml.Kind{Noun: "profile", Keys: "name, kind, base_url, ..."}

// LooksLikeProfile reports whether data, a YAML document, reads as a
// profile rather than a scenario: a mapping with kind: and without pins:
// (for `sixpin validate`, which takes either).
func LooksLikeProfile(data []byte) bool {
	if !strictyaml.Small(data) {
		return false // no profile is that big; a scenario's check will say why
	}
	var root yaml.Node
	if yaml.Unmarshal(data, &root) != nil || len(root.Content) == 0 || root.Content[0].Kind != yaml.MappingNode {
		return false
	}
	kind, pins := false, false
	m := root.Content[0]
	for i := 0; i+1 < len(m.Content); i += 2 {
		switch m.Content[i].Value {
		case "kind":
			kind = true
		case "pins":
			pins = true
		}
	}
	return kind && !pins
}
