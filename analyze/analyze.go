// Package analyze measures real agentic work from its session logs.
//
// It reads opencode's SQLite database (both its layouts, OpenCode 2's
// included), Claude Code's JSONL transcripts and Codex CLI's JSONL
// rollouts, all strictly read-only, and computes the field report's effective throughput per provider and model, and what
// that report's tool did not: context lengths, input:output ratios,
// cache reads, pure decode speed and TTFT, the prefill share, tokens per
// minute per session against a vendor's rate limits, the bill at a
// vendor's prices, and the sessions as a replayable trace. The Report is
// data: package report renders it (text, Markdown, CSV, JSON, charts).
//
// Memory grows with the number of generations only by the float32 values
// the percentiles need (at most 32 bytes per generation, 20 per session),
// never by rows: messages and parts stream from the database, and a
// session's messages (about 200 bytes each, parsed) are held only until
// the session ends, when the copies among them are dropped; JSON Lines
// logs are read a line at a time, a file's messages held until the file
// ends. Claude Code's transcripts add an 8-byte hash per message (about
// 40 bytes with its map) to count a message copied into another file
// once. An exported trace adds its turns (about 72 bytes each), an
// exported scenario 20 bytes per generation and 16 per session.
package analyze

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/sixpin/sixpin/record"
	"github.com/sixpin/sixpin/results"
	"github.com/sixpin/sixpin/trace"
)

// Sample bounds: the field report's.
const (
	// DefaultMinOutputTokens is the fewest output + reasoning tokens a
	// sample has.
	DefaultMinOutputTokens = 50
	// MinDuration and MaxDuration bound a sample's generation time.
	MinDuration = 200 * time.Millisecond
	MaxDuration = time.Hour
	// Window is the rate-limit window per session.
	Window = time.Minute
)

// Sources: the agents whose logs Analyze reads.
const (
	SourceOpencode   = "opencode"
	SourceClaudeCode = "claude-code"
	SourceCodex      = "codex"
)

// Options choose what Analyze reads and how.
type Options struct {
	// Source is SourceOpencode (when empty), SourceClaudeCode or
	// SourceCodex.
	Source string
	// DBs are opencode databases, read together (a live one and its
	// archives); a message found in several is counted once.
	DBs []string
	// Paths are Claude Code transcripts or Codex rollouts: .jsonl files,
	// or directories searched for them recursively.
	Paths []string
	// Since and Until keep generations created in [Since, Until); zero
	// times leave that side open.
	Since, Until time.Time
	// Providers and Models keep generations whose providerID or modelID
	// matches one of the patterns: a case-insensitive substring, or a
	// whole-id glob when the pattern has * or ?. Empty keeps all.
	Providers, Models []string
	// MinOutputTokens is the fewest output + reasoning tokens a sample
	// has (DefaultMinOutputTokens in the command).
	MinOutputTokens int
	// ToolCut is the rule that ends a generation's time at a tool start:
	// ToolCutReference (the default, when empty) or ToolCutAnyTool.
	ToolCut string
	// Profile names where Pricing, Energy and Limits came from.
	Profile string
	// Pricing prices the generations (nil: not priced by tokens).
	Pricing *record.Pricing
	// Energy prices them by power over model time when Pricing is unset.
	Energy *record.Energy
	// Limits are the rate limits each session is metered against.
	Limits *results.RateLimits
	// Trace collects the generations as a replayable trace in
	// Report.Trace (about 72 bytes per generation).
	Trace bool
	// Scenario fits the sessions to an agentic scenario in
	// Report.Scenario (about 20 bytes per generation and per session).
	Scenario bool
	// Now is the time the report is made (time.Now when zero).
	Now time.Time
	// BusyTimeout is how long a read waits for another program's lock
	// on a database (DefaultBusyTimeout when zero).
	BusyTimeout time.Duration

	// afterRead, when set, replaces the list of databases a pass found
	// changed under an immutable read (tests).
	afterRead func(attempt int, changed []string) []string
}

// DefaultBusyTimeout is how long a read waits for another program's lock.
const DefaultBusyTimeout = 3 * time.Second

func (o *Options) validate() error {
	switch o.Source {
	case "", SourceOpencode:
		if len(o.DBs) == 0 {
			return errors.New("no database to read")
		}
	case SourceClaudeCode, SourceCodex:
		if len(o.Paths) == 0 {
			return errors.New("no file or directory to read")
		}
	default:
		return fmt.Errorf("unknown source %q (want %s, %s or %s)", o.Source, SourceOpencode, SourceClaudeCode, SourceCodex)
	}
	if !o.Since.IsZero() && !o.Until.IsZero() && !o.Since.Before(o.Until) {
		return fmt.Errorf("--since %s is not before --until %s", o.Since.Format(time.RFC3339), o.Until.Format(time.RFC3339))
	}
	if o.MinOutputTokens < 0 {
		return fmt.Errorf("--min-output must be ≥ 0 (got %d)", o.MinOutputTokens)
	}
	if o.ToolCut != "" && !slices.Contains(ToolCuts, o.ToolCut) {
		return fmt.Errorf("--tool-cut %q: want %s", o.ToolCut, strings.Join(ToolCuts, " or "))
	}
	if o.BusyTimeout < 0 {
		return fmt.Errorf("busy timeout must be ≥ 0 (got %s)", o.BusyTimeout)
	}
	return nil
}

// Report is what Analyze found. It is the JSON output as is.
type Report struct {
	// Source is the agent the logs are of (Source*).
	Source string `json:"source"`
	// Databases are the opencode databases read.
	Databases []Database `json:"databases,omitempty"`
	// Paths are the transcript files and directories read (Claude Code,
	// Codex).
	Paths []string `json:"paths,omitempty"`
	// GeneratedAt is when the report was made.
	GeneratedAt time.Time `json:"generated_at"`
	Filters     Filters   `json:"filters"`
	// First and Last are the earliest and latest generation analysed.
	First *time.Time `json:"first,omitempty"`
	Last  *time.Time `json:"last,omitempty"`
	// Definitions say in words how each figure is computed.
	Definitions map[string]string `json:"definitions"`
	Counts      Counts            `json:"counts"`
	// Models are sorted by samples, most first.
	Models   []*ModelReport `json:"models"`
	Sessions SessionReport  `json:"sessions"`
	// Cost is the bill at the profile's prices (nil: no profile prices).
	Cost *Cost `json:"cost,omitempty"`
	// ReportedLimits are the rate-limit windows the agent's own logs
	// report (Codex), with the most of each that was used.
	ReportedLimits []ReportedLimit `json:"reported_limits,omitempty"`
	// Unavailable names the figures the source's logs cannot give, and
	// why (figure: reason).
	Unavailable map[string]string `json:"unavailable,omitempty"`

	// Trace holds the generations as sessions of turns when asked for.
	Trace *trace.Trace `json:"-"`
	// Scenario is the workload fitted from the sessions when asked for
	// (nil: no session to fit).
	Scenario *ScenarioFit `json:"-"`
}

// ReportedLimit is one rate-limit window as the vendor reported it in
// the logs: the highest share of it used, in percent (0–100), over the
// Samples reports.
type ReportedLimit struct {
	Name           string  `json:"name"`
	WindowMinutes  int     `json:"window_minutes,omitempty"`
	MaxUsedPercent float64 `json:"max_used_percent"`
	Samples        int     `json:"samples"`
}

// Database read modes (Database.Mode).
const (
	ModeImmutable = modeImmutable
	ModeReadOnly  = modeReadOnly
)

// Database is one database read and how.
type Database struct {
	Path string `json:"path"`
	// Mode is ModeImmutable (a snapshot of a database no writer had
	// open) or ModeReadOnly (through SQLite's locks and the -wal file of a
	// database in use).
	Mode string `json:"mode"`
	// V1Messages and V2Messages are the rows read from each layout:
	// opencode 1's message table and OpenCode 2's session_message.
	V1Messages int `json:"v1_messages"`
	V2Messages int `json:"v2_messages"`
}

// Filters echo the options that chose the generations.
type Filters struct {
	Since           *time.Time `json:"since,omitempty"`
	Until           *time.Time `json:"until,omitempty"`
	Providers       []string   `json:"providers,omitempty"`
	Models          []string   `json:"models,omitempty"`
	MinOutputTokens int        `json:"min_output_tokens"`
	// ToolCut is the tool-cut rule (ToolCut*).
	ToolCut      string  `json:"tool_cut"`
	MinDurationS float64 `json:"min_duration_s"`
	MaxDurationS float64 `json:"max_duration_s"`
	Profile      string  `json:"profile,omitempty"`
}

// Counts account for every message read: what became a generation or a
// sample, and why the rest did not.
type Counts struct {
	// Messages are the distinct messages read; Duplicates the copies
	// found again (in another database, or in both of an OpenCode 2
	// database's layouts: LayoutDuplicates of them), each counted once.
	// With --since or --until only rows written within a day of the
	// range are read.
	Messages         int `json:"messages"`
	Duplicates       int `json:"duplicates,omitempty"`
	LayoutDuplicates int `json:"layout_duplicates,omitempty"`
	// Parts are v1 part rows and v2 content items.
	Parts int `json:"parts"`
	// MalformedParts are parts whose data is not a JSON object with a
	// type, in MalformedPartMessages messages. Each is ignored and its
	// message kept, as the reference ignores an unreadable part row
	// (throughput.py, grapeot/opencode_skill@
	// 73e353aa351ae3fa82b678d2de8d4080ac77506b); such a message's first
	// token is not timed (the part may have been the first), so it gives
	// no TTFT, decode or prefill share.
	MalformedParts        int `json:"malformed_parts"`
	MalformedPartMessages int `json:"malformed_part_messages"`
	// Files and Lines are the JSON Lines files and lines read (Claude
	// Code, Codex).
	Files     int `json:"files,omitempty"`
	Lines     int `json:"lines,omitempty"`
	User      int `json:"user_messages"`
	Assistant int `json:"assistant_messages"`
	// Other counts, by kind, the messages that are neither user nor
	// assistant messages and are not analysed
	// ("session_message.type=compaction": 3).
	Other map[string]int `json:"other,omitempty"`
	// Filtered are assistant messages outside --since/--until or
	// --provider/--model.
	Filtered int `json:"filtered_out"`
	// Generations are the completed assistant messages in the filters:
	// the traffic (context, ratios, cache, cost, rate limits, trace).
	Generations int `json:"generations"`
	// MissingTokens are generations without a numeric tokens.input or
	// tokens.output (or without tokens): a missing count is 0, as the
	// reference reads it (throughput.py's _as_int, grapeot/opencode_skill@
	// 73e353aa351ae3fa82b678d2de8d4080ac77506b, needs no input count).
	MissingTokens int `json:"missing_tokens"`
	// Samples are the generations kept for throughput.
	Samples int     `json:"samples"`
	Skipped Skipped `json:"skipped"`
}

// Skipped counts messages left out, by reason.
type Skipped struct {
	// MalformedMessages have data that is not a JSON object, or no role.
	MalformedMessages int `json:"malformed_messages"`
	// UnknownTypes counts, by name, messages of a kind analyze does not
	// know ("message.role=system", "session_message.type=x").
	UnknownTypes map[string]int `json:"unknown_types,omitempty"`
	// MalformedLines are JSON Lines lines that are not a JSON object
	// with a type; Examples names the first few (file:line: why).
	MalformedLines int      `json:"malformed_lines,omitempty"`
	Examples       []string `json:"examples,omitempty"`
	// NoRequestTime are model calls of a log without request times
	// (Claude Code, Codex) with no record before them to start from.
	NoRequestTime int `json:"no_request_time,omitempty"`
	// MissingFields are assistant messages without a providerID,
	// modelID, or numeric time.created.
	MissingFields int `json:"missing_fields"`
	// Errored ended in an error (aborted, API error).
	Errored int `json:"errored"`
	// Incomplete have no time.completed (still running, or killed), or
	// one before time.created.
	Incomplete int `json:"incomplete"`
	// The rest are generations that are not throughput samples:
	// ToolOutsideSpan started a tool outside [created, completed];
	// ToolCallsWithoutStart finished with tool calls but no tool has a
	// start time (the reference tool-cut rule);
	// BelowMinOutput generated fewer tokens than --min-output;
	// DurationOutOfRange took less than 0.2 s or more than 1 h.
	ToolOutsideSpan       int `json:"tool_outside_span"`
	ToolCallsWithoutStart int `json:"tool_calls_without_tool_start"`
	BelowMinOutput        int `json:"below_min_output"`
	DurationOutOfRange    int `json:"duration_out_of_range"`
}

// ModelReport is one provider and model.
type ModelReport struct {
	Provider string `json:"provider"`
	Model    string `json:"model"`
	// Generations counts the model's traffic, N its throughput samples.
	Generations int `json:"generations"`
	N           int `json:"n"`
	// Tokens is the output + reasoning tokens of the samples.
	Tokens int64 `json:"tokens"`
	// EffectiveTokS is (output + reasoning tokens) / generation time
	// over the samples, tok/s.
	EffectiveTokS *Dist `json:"effective_tok_s"`
	// ByContext splits EffectiveTokS by the sample's context length.
	ByContext []ContextBucket `json:"by_context"`
	// DecodeTokS, TTFTS and PrefillShare cover the samples whose parts
	// time their first token (nil when none do).
	DecodeTokS   *Dist `json:"decode_tok_s,omitempty"`
	TTFTS        *Dist `json:"ttft_s,omitempty"`
	PrefillShare *Dist `json:"prefill_share,omitempty"`
	// ContextTokens is the prompt length of every generation.
	ContextTokens *Dist `json:"context_tokens"`
	// InputOutputRatio is prompt tokens over generated tokens, per
	// generation that generated any.
	InputOutputRatio *Dist `json:"input_output_ratio,omitempty"`
	// CacheReadShare is cache reads over all prompt tokens.
	CacheReadShare float64 `json:"cache_read_share"`
	Usage          Usage   `json:"usage"`
	// CostUSD is the model's share of Report.Cost.
	CostUSD *float64 `json:"cost_usd,omitempty"`

	acc *modelAcc
}

// Key is "provider/model".
func (m *ModelReport) Key() string { return m.Provider + "/" + m.Model }

// Samples returns the model's throughput samples, index for index: each
// one's effective tok/s and its context in tokens (for a chart of the one
// against the other). Both are nil in a report read back from JSON. The
// slices are the report's own: do not change them.
func (m *ModelReport) Samples() (effTokS, contextTokens []float32) {
	if m.acc == nil {
		return nil, nil
	}
	return m.acc.eff, m.acc.effCtx
}

// ContextBucket is effective throughput over the samples whose context
// fell in one context depth (results.ContextDepths).
type ContextBucket struct {
	results.ContextDepth
	EffectiveTokS *Dist `json:"effective_tok_s"`
}

// Usage sums token counts over generations. InputTokens is the whole
// prompt (cache reads and writes included); OutputTokens everything
// generated (reasoning included).
type Usage struct {
	InputTokens      int64 `json:"input_tokens"`
	CacheReadTokens  int64 `json:"cache_read_tokens"`
	CacheWriteTokens int64 `json:"cache_write_tokens"`
	OutputTokens     int64 `json:"output_tokens"`
	ReasoningTokens  int64 `json:"reasoning_tokens"`
}

func (u *Usage) add(g *generation) {
	u.InputTokens += g.prompt()
	u.CacheReadTokens += g.cacheRead
	u.CacheWriteTokens += g.cacheWrite
	u.OutputTokens += g.generated()
	u.ReasoningTokens += g.reasoning
}

// Cost is the bill for the generations analysed.
type Cost struct {
	// Basis is "tokens" (a price list) or "energy" (power over model
	// time).
	Basis   string          `json:"basis"`
	Pricing *record.Pricing `json:"pricing,omitempty"`
	Energy  *record.Energy  `json:"energy,omitempty"`
	Bill    *record.Bill    `json:"bill,omitempty"`
	// ModelTimeS is the generations' model time added up, s (energy).
	ModelTimeS float64 `json:"model_time_s,omitempty"`
	TotalUSD   float64 `json:"total_usd"`
	// PerSessionUSD is the mean over sessions; PerMOutputTokensUSD per
	// million generated tokens.
	PerSessionUSD       float64 `json:"per_session_usd"`
	PerMOutputTokensUSD float64 `json:"per_m_output_tokens_usd"`
}

// Analyze reads the databases and reports. Databases are never written:
// each is read as an immutable snapshot when no writer can be active (a
// WAL database without a -wal file), and otherwise through SQLite's
// read-only mode, which sees what a running opencode has committed. A
// database that changed under an immutable read is read again in
// read-only mode.
func Analyze(ctx context.Context, opts Options) (*Report, error) {
	if err := opts.validate(); err != nil {
		return nil, err
	}
	if opts.Now.IsZero() {
		opts.Now = time.Now()
	}
	if opts.BusyTimeout == 0 {
		opts.BusyTimeout = DefaultBusyTimeout
	}
	if opts.ToolCut == "" {
		opts.ToolCut = ToolCutReference
	}
	if opts.Source == "" {
		opts.Source = SourceOpencode
	}
	if opts.Source != SourceOpencode {
		return analyzeJSONL(ctx, &opts)
	}
	forceRO := map[string]bool{}
	for attempt := 0; ; attempt++ {
		a, changed, err := read(ctx, &opts, forceRO)
		if opts.afterRead != nil {
			changed = opts.afterRead(attempt, changed)
		}
		if len(changed) > 0 && attempt == 0 {
			for _, p := range changed {
				forceRO[p] = true
			}
			continue
		}
		if err != nil {
			return nil, err
		}
		return a.report(), nil
	}
}

// analyzeJSONL reads Claude Code transcripts or Codex rollouts.
func analyzeJSONL(ctx context.Context, opts *Options) (*Report, error) {
	files, err := jsonlFiles(opts.Source, opts.Paths)
	if err != nil {
		return nil, err
	}
	a, err := newAcc(opts, opts.Source)
	if err != nil {
		return nil, err
	}
	if opts.Source == SourceClaudeCode {
		err = a.readClaudeCode(ctx, files)
	} else {
		err = a.readCodex(ctx, files)
	}
	if err != nil {
		return nil, err
	}
	a.flushSession()
	return a.report(), nil
}

// read makes one pass over the databases. changed lists those read as
// immutable snapshots that changed meanwhile.
func read(ctx context.Context, opts *Options, forceRO map[string]bool) (a *acc, changed []string, err error) {
	var srcs []*source
	var rds []*reader
	defer func() {
		for _, rd := range rds {
			rd.close()
		}
		for _, s := range srcs {
			if s.mode == modeImmutable && s.changed() {
				changed = append(changed, s.path)
			}
			s.close()
		}
	}()
	for _, p := range opts.DBs {
		s, err := openSource(ctx, p, forceRO[p], opts.BusyTimeout)
		if err != nil {
			return nil, nil, err
		}
		srcs = append(srcs, s)
	}
	defer func() {
		if a != nil {
			for _, s := range srcs {
				a.dbs = append(a.dbs, Database{Path: s.path, Mode: s.mode, V1Messages: s.rows[layoutV1], V2Messages: s.rows[layoutV2]})
			}
		}
	}()
	var curs []*cursor
	for _, s := range srcs {
		rd, err := newReader(ctx, s, opts.Since, opts.Until)
		if err != nil {
			return nil, nil, err
		}
		rds = append(rds, rd)
		curs = append(curs, rd.curs...)
	}
	a, err = newAcc(opts, "opencode")
	if err != nil {
		return nil, nil, err
	}
	for n := 0; ; n++ {
		if n%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, nil, err
			}
		}
		// The next row in (session, created, id) order across sources and
		// layouts; a session's rows are gathered and de-duplicated when
		// it ends.
		var best *cursor
		for _, c := range curs {
			if !c.done && (best == nil || before(&c.cur, &best.cur)) {
				best = c
			}
		}
		if best == nil {
			break
		}
		a.add(&best.cur)
		if err := best.next(); err != nil {
			return nil, nil, err
		}
	}
	a.flushSession()
	return a, nil, nil
}

// info is what a message's JSON says that analyze reads.
type info struct {
	role, provider, model, finish string
	created, completed            float64
	hasCreated, hasCompleted      bool
	failed                        bool // a non-null "error"
	hasInput, hasOut              bool
	input, output, reasoning      float64
	cacheRead, cacheWrite         float64
	// noRequestTime: a JSONL log's call with nothing before it to take
	// its start from.
	noRequestTime bool
}

// parseInfo reads message.data: role, time.created and completed,
// providerID, modelID, finish, error and tokens.
func parseInfo(b []byte) (info, error) {
	var m info
	err := fields(b, m.field)
	return m, err
}

// field reads one key of a message's JSON into m: the keys opencode 1
// and 2 share (finish, error, time, tokens) and v1's role, providerID
// and modelID.
func (m *info) field(key, val []byte) error {
	switch string(key) {
	case "role":
		m.role, _ = str(val)
	case "providerID":
		m.provider, _ = str(val)
	case "modelID":
		m.model, _ = str(val)
	case "finish":
		m.finish, _ = str(val)
	case "error":
		m.failed = string(val) != "null"
	case "time":
		return subfields(val, func(k, v []byte) error {
			switch string(k) {
			case "created":
				m.created, m.hasCreated = number(v)
			case "completed":
				m.completed, m.hasCompleted = number(v)
			}
			return nil
		})
	case "tokens":
		return subfields(val, func(k, v []byte) error {
			switch string(k) {
			case "input":
				m.input, m.hasInput = number(v)
			case "output":
				m.output, m.hasOut = number(v)
			case "reasoning":
				m.reasoning, _ = number(v)
			case "cache":
				return subfields(v, func(k, v []byte) error {
					switch string(k) {
					case "read":
						m.cacheRead, _ = number(v)
					case "write":
						m.cacheWrite, _ = number(v)
					}
					return nil
				})
			}
			return nil
		})
	}
	return nil
}

// acc accumulates the report over one pass.
type acc struct {
	opts      *Options
	source    string
	dbs       []Database
	providers []*regexp.Regexp
	models    []*regexp.Regexp
	since     int64
	until     int64
	counts    Counts
	byModel   map[string]*modelAcc
	first     int64
	last      int64
	usage     Usage
	modelMS   int64

	sess     sessionAcc
	sessions sessionsAcc
	trace    []trace.Session
	reported []ReportedLimit
	fit      *fitAcc
}

// modelAcc accumulates one provider and model.
type modelAcc struct {
	provider, model string
	generations     int
	usage           Usage
	samples         int
	tokens          int64
	ctx, ratio      sample
	// eff and effCtx are the samples' effective tok/s and context,
	// index for index (the chart plots one against the other).
	eff, effCtx           sample
	byCtx                 []sample // by results.ContextDepths
	decode, ttft, prefill sample
	modelMS               int64
}

func newAcc(opts *Options, source string) (*acc, error) {
	a := &acc{opts: opts, source: source, byModel: map[string]*modelAcc{}, until: 1<<63 - 1}
	var err error
	if a.providers, err = compilePatterns("--provider", opts.Providers); err != nil {
		return nil, err
	}
	if a.models, err = compilePatterns("--model", opts.Models); err != nil {
		return nil, err
	}
	if !opts.Since.IsZero() {
		a.since = opts.Since.UnixMilli()
	}
	if !opts.Until.IsZero() {
		a.until = opts.Until.UnixMilli()
	}
	a.sessions.init(opts.Limits)
	if opts.Scenario {
		a.fit = &fitAcc{}
	}
	return a, nil
}

// compilePatterns turns --provider/--model values into matchers: a glob
// over the whole id when the value has * or ?, else a substring; case is
// ignored.
func compilePatterns(flag string, pats []string) ([]*regexp.Regexp, error) {
	var out []*regexp.Regexp
	for _, p := range pats {
		if strings.TrimSpace(p) == "" {
			return nil, fmt.Errorf("%s: empty pattern", flag)
		}
		var expr string
		if strings.ContainsAny(p, "*?") {
			q := regexp.QuoteMeta(p)
			q = strings.ReplaceAll(q, `\*`, ".*")
			q = strings.ReplaceAll(q, `\?`, ".")
			expr = "(?i)^" + q + "$"
		} else {
			expr = "(?i)" + regexp.QuoteMeta(p)
		}
		re, err := regexp.Compile(expr)
		if err != nil {
			return nil, fmt.Errorf("%s %q: %w", flag, p, err)
		}
		out = append(out, re)
	}
	return out, nil
}

func matches(res []*regexp.Regexp, s string) bool {
	if len(res) == 0 {
		return true
	}
	for _, re := range res {
		if re.MatchString(s) {
			return true
		}
	}
	return false
}

// add takes one row into its session's buffer.
func (a *acc) add(r *row) {
	if r.session != a.sess.id {
		a.flushSession()
		a.sess.id = r.session
	}
	a.sess.msgs = append(a.sess.msgs, parseRow(r))
}

// message takes one message a reader found: the counts, then a
// generation if it is one.
func (a *acc) message(m *msg) {
	a.counts.Messages++
	a.counts.Parts += m.parts.n
	if m.parts.malformed > 0 {
		a.counts.MalformedParts += m.parts.malformed
		a.counts.MalformedPartMessages++
	}
	switch m.kind {
	case kindMalformed:
		a.counts.Skipped.MalformedMessages++
		return
	case kindUnknown:
		addName(&a.counts.Skipped.UnknownTypes, m.name)
		return
	case kindOther:
		addName(&a.counts.Other, m.name)
		return
	case kindUser:
		a.counts.User++
		return
	}
	a.counts.Assistant++
	i := &m.info
	if i.noRequestTime {
		a.counts.Skipped.NoRequestTime++
		return
	}
	created, ok := ms(i.created)
	if i.provider == "" || i.model == "" || !i.hasCreated || !ok {
		a.counts.Skipped.MissingFields++
		return
	}
	if created < a.since || created >= a.until || !matches(a.providers, i.provider) || !matches(a.models, i.model) {
		a.counts.Filtered++
		return
	}
	if i.failed {
		a.counts.Skipped.Errored++
		return
	}
	completed, ok := ms(i.completed)
	if !i.hasCompleted || !ok || completed < created {
		a.counts.Skipped.Incomplete++
		return
	}
	if !i.hasInput || !i.hasOut {
		a.counts.MissingTokens++
	}
	g := generation{
		session: a.sess.id, provider: i.provider, model: i.model, finish: i.finish,
		created: created, completed: completed,
		input: tokens(i.input), output: tokens(i.output), reasoning: tokens(i.reasoning),
		cacheRead: tokens(i.cacheRead), cacheWrite: tokens(i.cacheWrite),
		parts: m.parts,
	}
	a.generation(&g)
}

// addName counts one more of name in *m, making the map if need be.
func addName(m *map[string]int, name string) {
	if *m == nil {
		*m = map[string]int{}
	}
	(*m)[name]++
}

// tokens is a JSON token count as an integer, a fraction truncated as
// the reference truncates it (throughput.py's int(), grapeot/
// opencode_skill@73e353aa351ae3fa82b678d2de8d4080ac77506b); 0 for
// nonsense.
func tokens(v float64) int64 {
	if v > 0 && v < 1e15 {
		return int64(v)
	}
	return 0
}

func (a *acc) generation(g *generation) {
	key := g.provider + "/" + g.model
	m := a.byModel[key]
	if m == nil {
		m = &modelAcc{provider: g.provider, model: g.model, byCtx: make([]sample, len(results.ContextDepths))}
		a.byModel[key] = m
	}
	a.counts.Generations++
	if a.counts.Generations == 1 || g.created < a.first {
		a.first = g.created
	}
	if g.created > a.last {
		a.last = g.created
	}
	m.generations++
	m.usage.add(g)
	a.usage.add(g)
	m.ctx.add(float64(g.prompt()))
	if gen := g.generated(); gen > 0 {
		m.ratio.add(float64(g.prompt()) / float64(gen))
	}
	a.sess.add(g)

	t := g.timing(a.opts.ToolCut)
	modelMS := t.end - g.created
	if t.outside || t.noToolStart {
		modelMS = g.completed - g.created
	}
	m.modelMS += modelMS
	a.modelMS += modelMS

	switch d := time.Duration(t.end-g.created) * time.Millisecond; {
	case t.outside:
		a.counts.Skipped.ToolOutsideSpan++
		return
	case t.noToolStart:
		a.counts.Skipped.ToolCallsWithoutStart++
		return
	case g.generated() < int64(a.opts.MinOutputTokens):
		a.counts.Skipped.BelowMinOutput++
		return
	case d < MinDuration || d > MaxDuration:
		a.counts.Skipped.DurationOutOfRange++
		return
	}
	a.counts.Samples++
	m.samples++
	gen := float64(g.generated())
	m.tokens += g.generated()
	durS := float64(t.end-g.created) / 1000
	eff := gen / durS
	m.eff.add(eff)
	m.effCtx.add(float64(g.prompt()))
	m.byCtx[results.DepthOf(g.prompt())].add(eff)
	if t.first {
		m.ttft.add(float64(t.ttftMS) / 1000)
		m.prefill.add(float64(t.ttftMS) / 1000 / durS)
		if t.decodeMS > 0 {
			m.decode.add(gen / (float64(t.decodeMS) / 1000))
		}
	}
}

// flushSession closes the current session: its messages, each counted
// once, in order of creation, then its traffic.
func (a *acc) flushSession() {
	s := &a.sess
	for _, m := range a.dedupe(s.msgs) {
		a.message(m)
	}
	if len(s.gens) > 0 {
		s.sorted()
		a.sessions.add(s)
		if a.opts.Trace {
			a.trace = append(a.trace, s.trace())
		}
		if a.fit != nil {
			a.fit.add(s.gens)
		}
	}
	s.reset()
}

func (a *acc) report() *Report {
	o := a.opts
	r := &Report{
		Source:      a.source,
		Databases:   a.dbs,
		GeneratedAt: o.Now,
		Filters: Filters{
			Providers: o.Providers, Models: o.Models, MinOutputTokens: o.MinOutputTokens, ToolCut: o.ToolCut,
			MinDurationS: MinDuration.Seconds(), MaxDurationS: MaxDuration.Seconds(), Profile: o.Profile,
		},
		Definitions: definitions(a.source, o.MinOutputTokens, o.ToolCut),
		Counts:      a.counts,
	}
	if !o.Since.IsZero() {
		r.Filters.Since = &o.Since
	}
	if !o.Until.IsZero() {
		r.Filters.Until = &o.Until
	}
	if a.counts.Generations > 0 {
		f, l := time.UnixMilli(a.first), time.UnixMilli(a.last)
		if loc := o.Now.Location(); loc != nil {
			f, l = f.In(loc), l.In(loc)
		}
		r.First, r.Last = &f, &l
	}
	for _, m := range a.byModel {
		r.Models = append(r.Models, m.report())
	}
	sort.Slice(r.Models, func(i, j int) bool {
		a, b := r.Models[i], r.Models[j]
		if a.N != b.N {
			return a.N > b.N
		}
		if a.Generations != b.Generations {
			return a.Generations > b.Generations
		}
		return a.Key() < b.Key()
	})
	r.Sessions = a.sessions.report()
	r.Cost = a.cost(r)
	r.ReportedLimits = a.reported
	if a.source != SourceOpencode {
		r.Paths = o.Paths
		r.Unavailable = unavailable(a.source)
	}
	if o.Trace {
		r.Trace = a.traceOut()
	}
	if o.Scenario {
		r.Scenario = a.scenarioFit(r)
	}
	if a.source != SourceOpencode {
		r.Filters.ToolCut = ""
	}
	return r
}

func (m *modelAcc) report() *ModelReport {
	r := &ModelReport{
		Provider: m.provider, Model: m.model,
		Generations: m.generations, N: m.samples, Tokens: m.tokens,
		// A copy: eff stays paired with effCtx for the charts.
		EffectiveTokS:    slices.Clone(m.eff).dist(),
		DecodeTokS:       m.decode.dist(),
		TTFTS:            m.ttft.dist(),
		PrefillShare:     m.prefill.dist(),
		ContextTokens:    m.ctx.dist(),
		InputOutputRatio: m.ratio.dist(),
		Usage:            m.usage,
		acc:              m,
	}
	if m.usage.InputTokens > 0 {
		r.CacheReadShare = float64(m.usage.CacheReadTokens) / float64(m.usage.InputTokens)
	}
	for i, d := range results.ContextDepths {
		r.ByContext = append(r.ByContext, ContextBucket{ContextDepth: d, EffectiveTokS: m.byCtx[i].dist()})
	}
	return r
}

// cost prices the generations: by tokens at the profile's prices, else
// by energy over the model time added up.
func (a *acc) cost(r *Report) *Cost {
	o := a.opts
	u := a.usage
	c := &Cost{}
	switch {
	case o.Pricing.Set():
		b := o.Pricing.Price(u.InputTokens, u.CacheReadTokens, u.OutputTokens, u.ReasoningTokens)
		c.Basis, c.Pricing, c.Bill, c.TotalUSD = "tokens", o.Pricing, &b, b.Total
		for _, m := range r.Models {
			v := o.Pricing.Price(m.Usage.InputTokens, m.Usage.CacheReadTokens, m.Usage.OutputTokens, m.Usage.ReasoningTokens).Total
			m.CostUSD = &v
		}
	case o.Energy != nil && o.Energy.PowerWatts > 0:
		d := time.Duration(a.modelMS) * time.Millisecond
		c.Basis, c.Energy, c.ModelTimeS, c.TotalUSD = "energy", o.Energy, d.Seconds(), o.Energy.EnergyUSD(d)
		for _, m := range r.Models {
			v := o.Energy.EnergyUSD(time.Duration(m.acc.modelMS) * time.Millisecond)
			m.CostUSD = &v
		}
	default:
		return nil
	}
	if n := r.Sessions.Sessions; n > 0 {
		c.PerSessionUSD = c.TotalUSD / float64(n)
	}
	if u.OutputTokens > 0 {
		c.PerMOutputTokensUSD = c.TotalUSD / float64(u.OutputTokens) * 1e6
	}
	return c
}

// traceOut makes the collected sessions a trace: starts from the
// earliest, sessions in order of start.
func (a *acc) traceOut() *trace.Trace {
	from := a.opts.DBs
	if a.source != SourceOpencode {
		from = a.opts.Paths
	}
	t := &trace.Trace{Source: a.source + " " + strings.Join(from, ", "), Sessions: a.trace}
	if len(t.Sessions) == 0 {
		return t
	}
	first := slices.MinFunc(t.Sessions, func(x, y trace.Session) int { return int(x.Start - y.Start) }).Start
	for i := range t.Sessions {
		t.Sessions[i].Start -= first
	}
	sort.SliceStable(t.Sessions, func(i, j int) bool {
		if t.Sessions[i].Start != t.Sessions[j].Start {
			return t.Sessions[i].Start < t.Sessions[j].Start
		}
		return t.Sessions[i].ID < t.Sessions[j].ID
	})
	return t
}

// definitions say how each figure is made, for the JSON and the reports.
func definitions(source string, minOutput int, toolCut string) map[string]string {
	cut := "cut at the earliest tool start when it finished with tool calls (no sample when no tool has a start time), as the field report's tool does"
	if toolCut == ToolCutAnyTool {
		cut = "cut at the earliest tool start when a tool started and it finished with tool calls or stored no finish reason (--tool-cut any-tool)"
	}
	bounds := fmt.Sprintf("samples have ≥ %d output + reasoning tokens and a generation time of 0.2 s to 1 h", minOutput)
	d := map[string]string{
		"effective_tok_s":  fmt.Sprintf("(output + reasoning tokens) / generation time; the generation time runs from the message's time.created to time.completed, %s; opencode 2 rows the same, their tool start being time.ran; %s", cut, bounds),
		"context_tokens":   "the whole prompt: tokens.input + tokens.cache.read + tokens.cache.write (opencode stores input without the cache reads and writes)",
		"input_output":     "prompt tokens / (output + reasoning tokens), per generation",
		"cache_read_share": "cache-read tokens / prompt tokens, over all generations",
		"decode_tok_s":     "(output + reasoning tokens) / (first token → last token: the tool start when cut, else the last text or reasoning part end); the first token is the first text or reasoning part's start (opencode 2: the first content item's start, when it is reasoning or a tool call, as text carries no time); a message with an unreadable part has none",
		"ttft_s":           "time.created → the first token",
		"prefill_share":    "TTFT / generation time",
		"rate_limits":      "per session, the most any 60 s window held: requests and prompt tokens at time.created, generated tokens at time.completed; total tokens count cache reads in full",
		"generations":      "completed assistant messages in the filters, without an error; they are the traffic: context, ratios, cache, cost, rate limits and the exported trace",
	}
	switch source {
	case SourceClaudeCode:
		d["effective_tok_s"] = "output tokens (thinking included) / generation time; the generation time runs from the request's start, taken as the later of the last user record before the message (its prompt, or the tool results it answers) and the previous message's last line, to the message's own last line (Claude Code writes a line as each content block completes, so tools run after it); " + bounds
		d["context_tokens"] = "the whole prompt: input_tokens + cache_read_input_tokens + cache_creation_input_tokens (the Messages API counts them apart)"
		d["input_output"] = "prompt tokens / output tokens, per generation"
		d["rate_limits"] = "per session, the most any 60 s window held: requests and prompt tokens at the request's start, output tokens at the message's last line; total tokens count cache reads in full"
		d["generations"] = "assistant messages (one API call each: their lines joined by message.id, the largest usage taken) with usage and a start, not an API error nor Claude Code's own <synthetic> notices; each message once across files"
	case SourceCodex:
		d["effective_tok_s"] = "output tokens (reasoning included) / generation time; the generation time runs from the call's start, taken as the later of the last input record before it (the user's message, a tool's output) and the previous call's token_count, to its own token_count event; " + bounds
		d["context_tokens"] = "the whole prompt: input_tokens (Codex counts cached_input_tokens inside it)"
		d["cache_read_share"] = "cached_input_tokens / input_tokens, over all generations"
		d["rate_limits"] = "per session, the most any 60 s window held: requests and prompt tokens at the call's start, output tokens at its token_count; total tokens count cached input in full"
		d["generations"] = "token_count events with new usage, one model call each (last_token_usage, else the change in total_token_usage); a token_count repeating the previous total is no call"
	}
	if source != SourceOpencode {
		for k := range unavailable(source) {
			delete(d, k)
		}
	}
	return d
}

// unavailable names the figures a JSONL source cannot give, and why.
func unavailable(source string) map[string]string {
	var why string
	switch source {
	case SourceClaudeCode:
		why = "Claude Code's transcripts record no first-token time (a line is written when a content block completes)"
	case SourceCodex:
		why = "Codex's rollouts record no first-token time per model call (items are written when complete)"
	default:
		return nil
	}
	return map[string]string{"decode_tok_s": why, "ttft_s": why, "prefill_share": why}
}
