package sim

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
)

// do sends method path with a JSON body (nil: none) and returns the status
// and the body.
func do(t *testing.T, method, url string, body any) (int, []byte) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		switch b := body.(type) {
		case string:
			rd = strings.NewReader(b)
		default:
			enc, err := json.Marshal(b)
			if err != nil {
				t.Fatal(err)
			}
			rd = bytes.NewReader(enc)
		}
	}
	r, err := http.NewRequest(method, url, rd)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(r)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, b
}

func TestWordTokenizer(t *testing.T) {
	var tok wordTokenizer
	for _, text := range []string{
		"", "   ", "hello", "  hello  world ", "a\tb\nc\r\nd", "naïve café\u00a0ünï", "x\u2003y\u3000z", "one, two. three?",
		"\xff\xfe bad utf8",
	} {
		ids := tok.Encode(text)
		if len(ids) != tok.Count(text) || len(ids) != len(strings.Fields(text)) {
			t.Errorf("%q: %d ids, Count %d, %d fields", text, len(ids), tok.Count(text), len(strings.Fields(text)))
		}
		for i, w := range strings.Fields(text) {
			if want := int(hashString(fnvOffset, w) % wordVocab); ids[i] != want {
				t.Errorf("%q: id of %q = %d, want %d", text, w, ids[i], want)
			}
		}
		if got := strings.Join(tok.Pieces(text), ""); got != strings.TrimRightFunc(text, func(r rune) bool {
			return strings.TrimSpace(string(r)) == ""
		}) {
			t.Errorf("%q: pieces join to %q", text, got)
		}
	}
	// A word's id does not depend on its neighbours or the server.
	if a, b := tok.Encode("river bank"), tok.Encode("the river"); a[0] != b[1] {
		t.Errorf("id of river: %d vs %d", a[0], b[1])
	}
}

func TestProps(t *testing.T) {
	_, ts := start(t, Config{Timing: TimingNone, Model: "qwen3.8-27b", MaxModelLen: 8192, MaxNumSeqs: 4})
	code, b := do(t, http.MethodGet, ts.URL+"/props", nil)
	if code != http.StatusOK {
		t.Fatalf("status %d: %s", code, b)
	}
	var p struct {
		DGS struct {
			NCtx   int `json:"n_ctx"`
			Params struct {
				NPredict int `json:"n_predict"`
			} `json:"params"`
		} `json:"default_generation_settings"`
		TotalSlots   int    `json:"total_slots"`
		ModelPath    string `json:"model_path"`
		ChatTemplate string `json:"chat_template"`
		BuildInfo    string `json:"build_info"`
	}
	if err := json.Unmarshal(b, &p); err != nil {
		t.Fatal(err)
	}
	if p.DGS.NCtx != 8192 || p.TotalSlots != 4 || p.ModelPath != "qwen3.8-27b" || p.ChatTemplate == "" ||
		p.BuildInfo == "" || p.DGS.Params.NPredict != -1 {
		t.Errorf("props = %+v", p)
	}
}

func TestMetricsCacheConfig(t *testing.T) {
	_, ts := start(t, Config{Timing: TimingNone, Model: `we"ird\model`, KVBudgetTokens: 100_000, GPUMemoryUtilization: 0.85})
	code, b := do(t, http.MethodGet, ts.URL+"/metrics", nil)
	if code != http.StatusOK {
		t.Fatalf("status %d", code)
	}
	var info string
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "vllm:cache_config_info{") {
			info = line
		}
	}
	for _, want := range []string{
		`block_size="16"`, `num_gpu_blocks="6250"`, `kv_cache_size_tokens="100000"`,
		`gpu_memory_utilization="0.85"`, `enable_prefix_caching="False"`, `cache_dtype="auto"`,
	} {
		if !strings.Contains(info, want) {
			t.Errorf("cache_config_info %q lacks %s", info, want)
		}
	}
	if !strings.HasSuffix(info, "} 1.0") {
		t.Errorf("cache_config_info value: %q", info)
	}
	if !strings.Contains(string(b), `vllm:num_requests_running{engine="0",model_name="we\"ird\\model"} 0`) {
		t.Errorf("label value not escaped Prometheus-style:\n%s", b)
	}
}

func TestTokenizeLlamaCpp(t *testing.T) {
	_, ts := start(t, Config{Timing: TimingNone})
	text := "The river  bank\nis wide"
	want := wordTokenizer{}.Encode(text)
	for _, tc := range []struct {
		name       string
		body       map[string]any
		bos        bool
		withPieces bool
	}{
		{"plain", map[string]any{"content": text}, false, false},
		{"add_special", map[string]any{"content": text, "add_special": true}, true, false},
		{"with_pieces", map[string]any{"content": text, "with_pieces": true}, false, true},
		{"both", map[string]any{"content": text, "add_special": true, "with_pieces": true, "parse_special": false}, true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, b := do(t, http.MethodPost, ts.URL+"/tokenize", tc.body)
			if code != http.StatusOK {
				t.Fatalf("status %d: %s", code, b)
			}
			wantIDs := want
			if tc.bos {
				wantIDs = append([]int{tokBOS}, want...)
			}
			if !tc.withPieces {
				var r struct {
					Tokens []int `json:"tokens"`
				}
				if err := json.Unmarshal(b, &r); err != nil {
					t.Fatalf("%s: %v", b, err)
				}
				if !slices.Equal(r.Tokens, wantIDs) {
					t.Errorf("tokens %v, want %v", r.Tokens, wantIDs)
				}
				return
			}
			var r struct {
				Tokens []llamaPiece `json:"tokens"`
			}
			if err := json.Unmarshal(b, &r); err != nil {
				t.Fatalf("%s: %v", b, err)
			}
			var ids []int
			var joined strings.Builder
			for i, p := range r.Tokens {
				ids = append(ids, p.ID)
				if tc.bos && i == 0 {
					if p.Piece != "<|sim_bos|>" {
						t.Errorf("BOS piece %q", p.Piece)
					}
					continue
				}
				joined.WriteString(p.Piece)
			}
			if !slices.Equal(ids, wantIDs) || joined.String() != text {
				t.Errorf("ids %v pieces %q; want %v, %q", ids, joined.String(), wantIDs, text)
			}
		})
	}
}

type vllmTok struct {
	Count       int       `json:"count"`
	MaxModelLen int       `json:"max_model_len"`
	Tokens      []int     `json:"tokens"`
	TokenStrs   *[]string `json:"token_strs"`
}

func TestTokenizeVLLM(t *testing.T) {
	zero := 0
	for _, tc := range []struct {
		name     string
		overhead *int
		body     map[string]any
		// want is the ids wanted, or, with usage, that the count equals
		// the chat endpoint's prompt_tokens for the same messages.
		want  []int
		usage bool
		strs  []string
	}{
		{name: "prompt adds BOS by default", body: map[string]any{"model": "sim-model", "prompt": "hello world"},
			want: append([]int{tokBOS}, wordTokenizer{}.Encode("hello world")...)},
		{name: "prompt without special tokens", body: map[string]any{"model": "sim-model", "prompt": "hello world", "add_special_tokens": false},
			want: wordTokenizer{}.Encode("hello world")},
		{name: "token strings", body: map[string]any{"model": "m", "prompt": "hello  world", "return_token_strs": true},
			want: append([]int{tokBOS}, wordTokenizer{}.Encode("hello world")...), strs: []string{"<|sim_bos|>", "hello", "  world"}},
		{name: "sixpin's two-shape body reads as vLLM", body: map[string]any{"model": "m", "prompt": "a b c", "content": "a b c",
			"add_special": false, "add_special_tokens": false},
			want: wordTokenizer{}.Encode("a b c")},
		{name: "messages count as the chat endpoint bills", usage: true, body: map[string]any{"model": "sim-model",
			"messages": []map[string]any{{"role": "system", "content": "be brief"}, {"role": "user", "content": "what is a river bank"}}}},
		{name: "messages, no template overhead", usage: true, overhead: &zero, body: map[string]any{"model": "sim-model",
			"messages": []map[string]any{{"role": "user", "content": "one two three"}}}},
		{name: "messages without the generation prompt", body: map[string]any{"model": "sim-model", "add_generation_prompt": false,
			"messages": []map[string]any{{"role": "user", "content": "one two"}}},
			want: []int{tokTemplate, tokTemplate, tokTemplate, tokTemplate, tokTemplate, wordTokenizer{}.Encode("one")[0], wordTokenizer{}.Encode("two")[0]}},
		{name: "message token strings", overhead: &zero, body: map[string]any{"model": "m", "return_token_strs": true,
			"messages": []map[string]any{{"role": "user", "content": "hi there"}}},
			want: []int{wordTokenizer{}.Encode("hi")[0], wordTokenizer{}.Encode("there")[0], tokPrime, tokPrime, tokPrime},
			strs: []string{"hi", " there", "<|sim_prime|>", "<|sim_prime|>", "<|sim_prime|>"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, ts := start(t, Config{Timing: TimingNone, MaxModelLen: 4096, TemplateOverheadTokens: tc.overhead})
			code, b := do(t, http.MethodPost, ts.URL+"/tokenize", tc.body)
			if code != http.StatusOK {
				t.Fatalf("status %d: %s", code, b)
			}
			var r vllmTok
			if err := json.Unmarshal(b, &r); err != nil {
				t.Fatalf("%s: %v", b, err)
			}
			if r.Count != len(r.Tokens) || r.MaxModelLen != 4096 {
				t.Errorf("count %d of %d tokens, max_model_len %d", r.Count, len(r.Tokens), r.MaxModelLen)
			}
			if tc.usage {
				_, c := nonStream(t, ts.URL, req{"messages": tc.body["messages"], "max_tokens": 1})
				if c.Usage.PromptTokens == 0 || r.Count != c.Usage.PromptTokens {
					t.Errorf("tokenize count %d, chat prompt_tokens %d", r.Count, c.Usage.PromptTokens)
				}
			} else if !slices.Equal(r.Tokens, tc.want) {
				t.Errorf("tokens %v, want %v", r.Tokens, tc.want)
			}
			switch {
			case tc.strs == nil && r.TokenStrs != nil:
				t.Errorf("token_strs %q not asked for", *r.TokenStrs)
			case tc.strs != nil && (r.TokenStrs == nil || !slices.Equal(*r.TokenStrs, tc.strs)):
				t.Errorf("token_strs %v, want %q", r.TokenStrs, tc.strs)
			}
		})
	}
}

func TestTokenizeErrors(t *testing.T) {
	_, ts := start(t, Config{Timing: TimingNone})
	for _, tc := range []struct {
		name   string
		method string
		body   any
		status int
		want   string
	}{
		{"neither shape", http.MethodPost, map[string]any{"model": "m"}, 400, `needs \"prompt\" or \"messages\"`},
		{"not JSON", http.MethodPost, "{", 400, "Invalid JSON"},
		{"content not a string", http.MethodPost, map[string]any{"content": []int{1, 2}}, 400, "Invalid JSON"},
		{"prompt and messages", http.MethodPost, map[string]any{"prompt": "a", "messages": []any{}}, 400, "not both"},
		{"GET", http.MethodGet, nil, 405, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, b := do(t, tc.method, ts.URL+"/tokenize", tc.body)
			if code != tc.status || !strings.Contains(string(b), tc.want) {
				t.Errorf("status %d body %s; want %d mentioning %q", code, b, tc.status, tc.want)
			}
		})
	}
}
