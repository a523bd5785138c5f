package importer

import (
	"bytes"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/sixpin/sixpin/scenario"
)

// workload is a peer's invocation read into sixpin's terms, each setting
// with the peer's flags it came from (what the YAML comments say).
type workload struct {
	name, description, command string

	seed     int64
	seedFrom string

	model     string
	modelFrom string

	prompt     length
	promptFrom string
	// prefix is the shared prefix in tokens (part of prompt), groups how
	// many distinct ones.
	prefix, groups int
	prefixFrom     string

	output     length
	outputFrom string
	exact      bool
	exactFrom  string

	mode        scenario.Mode
	streams     int
	rate        float64
	arrival     string
	burstiness  float64
	maxInFlight int
	concFrom    string

	requests     int
	requestsFrom string
	duration     time.Duration
	durationFrom string

	warmup     time.Duration
	warmupFrom string

	// slo is the peer's goodput bounds in ms (0: none).
	sloTTFT, sloTPOT, sloE2E float64
	sloFrom                  string
	// warm is what the peer sends before it measures (left out).
	warm Warmup

	profile     *profile
	profilePath string
}

// comment writes a comment block (each line of text prefixed) at indent.
func comment(b *bytes.Buffer, indent, text string) {
	for _, line := range strings.Split(text, "\n") {
		if line == "" {
			continue
		}
		fmt.Fprintf(b, "%s# %s\n", indent, line)
	}
}

// field writes "key: value" at indent, after its comment.
func field(b *bytes.Buffer, indent, key, value, from string) {
	comment(b, indent, from)
	fmt.Fprintf(b, "%s%s: %s\n", indent, key, value)
}

// render writes the scenario's YAML.
func (w *workload) render(peer Peer, notes []Note) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "# Translated by `sixpin import %s` from:\n#   %s\n", peer.Name, w.command)
	fmt.Fprintf(&b, "# following %s %s: %s.\n", peer.Command, peer.Version, peer.Source)
	b.WriteString("# Every setting below says which of the peer's settings it comes from.\n")
	if len(notes) > 0 {
		b.WriteString("#\n# Where the translation differs from the peer, or only a default does:\n")
		for _, n := range notes {
			fmt.Fprintf(&b, "#   - %s\n", strings.ReplaceAll(n.String(), "\n", " "))
		}
	}
	b.WriteString("\n")
	field(&b, "", "name", strconv.Quote(w.name), "")
	field(&b, "", "description", strconv.Quote(w.description), "")
	field(&b, "", "seed", strconv.FormatInt(w.seed, 10), w.seedFrom)
	b.WriteString("pins:\n")
	field(&b, "  ", "model", "{name: "+strconv.Quote(w.model)+"}", w.modelFrom)
	b.WriteString("  prompt:\n")
	field(&b, "    ", "tokens", w.prompt.yaml(), w.promptFrom)
	if w.prefix > 0 {
		field(&b, "    ", "shared_prefix_tokens", strconv.Itoa(w.prefix), w.prefixFrom)
		field(&b, "    ", "prefix_groups", strconv.Itoa(max(w.groups, 1)), "")
	}
	b.WriteString("  output:\n")
	field(&b, "    ", "tokens", w.output.yaml(), w.outputFrom)
	field(&b, "    ", "exact", strconv.FormatBool(w.exact), w.exactFrom)
	b.WriteString("  concurrency:\n")
	comment(&b, "    ", w.concFrom)
	field(&b, "    ", "mode", string(w.mode), "")
	if w.mode == scenario.ModeClosed {
		field(&b, "    ", "streams", strconv.Itoa(w.streams), "")
	} else {
		field(&b, "    ", "rate", num(w.rate), "")
		field(&b, "    ", "arrival", w.arrival, "")
		if w.arrival == scenario.ArrivalGamma {
			field(&b, "    ", "burstiness", num(w.burstiness), "")
		}
		if w.maxInFlight > 0 {
			field(&b, "    ", "max_in_flight", strconv.Itoa(w.maxInFlight), "")
		}
	}
	if w.requests > 0 {
		field(&b, "", "requests", strconv.Itoa(w.requests), w.requestsFrom)
	}
	if w.duration > 0 {
		field(&b, "", "duration", scenario.Duration(w.duration).String(), w.durationFrom)
	}
	if w.warmup > 0 {
		b.WriteString("windows:\n")
		field(&b, "  ", "warmup", scenario.Duration(w.warmup).String(), w.warmupFrom)
	}
	if w.sloTTFT > 0 || w.sloTPOT > 0 || w.sloE2E > 0 {
		b.WriteString("slo:\n")
		comment(&b, "  ", w.sloFrom)
		for _, f := range []struct {
			key string
			v   float64
		}{{"ttft_ms", w.sloTTFT}, {"tpot_ms", w.sloTPOT}, {"e2e_ms", w.sloE2E}} {
			if f.v > 0 {
				field(&b, "  ", f.key, num(f.v), "")
			}
		}
	}
	if w.profilePath != "" {
		b.WriteString("target:\n")
		field(&b, "  ", "profile", strconv.Quote(w.profilePath), "the endpoint the peer addressed: "+w.profile.summary())
	}
	return b.Bytes()
}

// totals are the peer's totals for w: requests × mean lengths.
func (w *workload) totals() Totals {
	t := Totals{Requests: w.requests, Warmup: w.warm}
	if w.requests == 0 && w.duration > 0 && w.rate > 0 {
		t.Requests, t.RequestsExpected = int(math.Round(w.rate*w.duration.Seconds())), true
	}
	n := float64(t.Requests)
	t.Input, t.Output = n*w.prompt.mean, n*w.output.mean
	t.Exact = !t.RequestsExpected && w.prompt.isFixed() && w.output.isFixed()
	count := strconv.Itoa(t.Requests)
	if t.RequestsExpected {
		count = fmt.Sprintf("%s/s × %s ≈ %d", num(w.rate), scenario.Duration(w.duration), t.Requests)
	}
	how := func(what string, l length) string {
		if l.isFixed() {
			return fmt.Sprintf("%s: %s requests × %s tokens", what, count, num(l.mean))
		}
		return fmt.Sprintf("%s: %s requests × %s tokens on average (%s)", what, count, num(round6(l.mean)), l.dist)
	}
	t.Why = append(t.Why, how("input", w.prompt), how("output", w.output))
	if w.prefix > 0 && t.Requests > 0 {
		// Every request after the first of its group finds the group's
		// prefix cached, if the cache keeps it; with several groups the
		// first use of each is a draw, so this is an upper bound.
		t.Cached = float64(w.prefix) * float64(max(t.Requests-max(w.groups, 1), 0))
		t.Why = append(t.Why, fmt.Sprintf("cached input: at most %d prefix tokens × (%s requests − %d prefixes)", w.prefix, count, max(w.groups, 1)))
	}
	return t
}

// profile is the target a peer addressed, as a sixpin profile.
type profile struct {
	name, description string
	kind              string
	baseURL           string
	protocol          string
	model             string
	outputControl     string
	maxTokensField    string
	apiKeyEnv         string
	extraBody         map[string]any
	headers           map[string]string
	from              []string // the peer's flags, for the comments
}

func (p *profile) summary() string {
	return fmt.Sprintf("%s, %s protocol", p.baseURL, p.protocol)
}

// render writes the profile's YAML.
func (p *profile) render(peer Peer) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "# Written by `sixpin import %s`: the endpoint %s addressed.\n", peer.Name, peer.Command)
	for _, f := range p.from {
		comment(&b, "", f)
	}
	field(&b, "", "name", strconv.Quote(p.name), "")
	field(&b, "", "description", strconv.Quote(p.description), "")
	field(&b, "", "kind", p.kind, "")
	field(&b, "", "base_url", strconv.Quote(p.baseURL), "")
	field(&b, "", "protocol", p.protocol, "")
	if p.model != "" {
		field(&b, "", "model", strconv.Quote(p.model), "")
	}
	if p.apiKeyEnv != "" {
		field(&b, "", "api_key_env", p.apiKeyEnv, "")
	}
	if p.maxTokensField != "" {
		field(&b, "", "max_tokens_field", p.maxTokensField, "")
	}
	field(&b, "", "output_control", p.outputControl, "")
	field(&b, "", "tokenizer", "server", "prompts are built to the server's /tokenize (vLLM, SGLang, llama.cpp); another server falls back to o200k_base, and its usage verifies the lengths")
	if len(p.extraBody) > 0 {
		b.WriteString("extra_body:\n")
		for _, k := range slices.Sorted(maps.Keys(p.extraBody)) {
			fmt.Fprintf(&b, "  %s: %s\n", strconv.Quote(k), yamlValue(p.extraBody[k]))
		}
	}
	if len(p.headers) > 0 {
		b.WriteString("headers:\n")
		for _, k := range slices.Sorted(maps.Keys(p.headers)) {
			fmt.Fprintf(&b, "  %s: %s\n", strconv.Quote(k), strconv.Quote(p.headers[k]))
		}
	}
	return b.Bytes()
}

// yamlValue writes a JSON-like value in YAML flow form.
func yamlValue(v any) string {
	switch x := v.(type) {
	case string:
		return strconv.Quote(x)
	case bool:
		return strconv.FormatBool(x)
	case float64:
		return num(x)
	case int:
		return strconv.Itoa(x)
	case nil:
		return "null"
	case []any:
		s := make([]string, len(x))
		for i, e := range x {
			s[i] = yamlValue(e)
		}
		return "[" + strings.Join(s, ", ") + "]"
	case map[string]any:
		s := make([]string, 0, len(x))
		for _, k := range slices.Sorted(maps.Keys(x)) {
			s = append(s, strconv.Quote(k)+": "+yamlValue(x[k]))
		}
		return "{" + strings.Join(s, ", ") + "}"
	}
	return strconv.Quote(fmt.Sprint(v))
}
