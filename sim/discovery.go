package sim

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"unicode"
	"unicode/utf8"
)

// textTokenizer is what the simulator counts and encodes text with: the
// prompt tokens of a chat request and the answers of /tokenize both come
// from it. tokenizer.Tokenizer satisfies it, so a real model's tokenizer
// can replace the default word count.
type textTokenizer interface {
	// Encode returns the token ids of text, no special tokens added.
	Encode(text string) []int
	// Count returns len(Encode(text)), possibly faster.
	Count(text string) int
}

// wordVocab is the size of the word tokenizer's vocabulary: word ids are
// in [0, wordVocab), special tokens just above.
const wordVocab = 150_000

// Special token ids of the simulated vocabulary.
const (
	tokBOS      = wordVocab     // added by add_special / add_special_tokens
	tokTemplate = wordVocab + 1 // the chat template's tokens around a message
	tokPrime    = wordVocab + 2 // the assistant prime after the last message
)

// wordTokenizer is the simulator's default: one token per
// whitespace-separated word (as strings.Fields splits), each word's id its
// FNV-1a hash modulo wordVocab, so an id is stable across runs and servers.
type wordTokenizer struct{}

func (wordTokenizer) Count(text string) int { return countWords(text) }

func (wordTokenizer) Encode(text string) []int {
	ids := make([]int, 0, countWords(text))
	eachWord(text, func(start, end int) {
		ids = append(ids, int(hashString(fnvOffset, text[start:end])%wordVocab))
	})
	return ids
}

// Pieces returns each token's text with the whitespace before it, so that
// the pieces concatenated give text back (less any trailing whitespace).
func (wordTokenizer) Pieces(text string) []string {
	pieces := make([]string, 0, countWords(text))
	prev := 0
	eachWord(text, func(start, end int) {
		pieces = append(pieces, text[prev:end])
		prev = end
	})
	return pieces
}

// eachWord calls f with the byte bounds of every whitespace-separated word
// of s, in order, splitting exactly where countWords counts.
func eachWord(s string, f func(start, end int)) {
	start := -1
	for i := 0; i < len(s); {
		c := s[i]
		size := 1
		var space bool
		if c < utf8.RuneSelf {
			space = asciiSpace[c]
		} else {
			var r rune
			r, size = utf8.DecodeRuneInString(s[i:])
			space = unicode.IsSpace(r)
		}
		switch {
		case space && start >= 0:
			f(start, i)
			start = -1
		case !space && start < 0:
			start = i
		}
		i += size
	}
	if start >= 0 {
		f(start, len(s))
	}
}

// countTokens is the simulator's token count of text: the single hook
// through which prompt lengths are decided (chat usage, /tokenize).
func (s *Server) countTokens(text string) int { return s.tok.Count(text) }

// encode is the simulator's tokenization of text, consistent with
// countTokens: len(s.encode(t)) == s.countTokens(t).
func (s *Server) encode(text string) []int { return s.tok.Encode(text) }

// chatTokens is the prompt of a chat request as the simulated template
// renders it: per message, the template's tokens then the content's, and
// with genPrompt the assistant prime. Its length is the prompt_tokens the
// chat endpoint reports for the same messages.
func (s *Server) chatTokens(msgs []chatMessage, genPrompt bool) []int {
	var ids []int
	for i := range msgs {
		for range s.overhead {
			ids = append(ids, tokTemplate)
		}
		ids = append(ids, s.encode(string(msgs[i].Content))...)
	}
	if genPrompt {
		ids = append(ids, tokPrime, tokPrime, tokPrime)
	}
	return ids
}

// tokenString is a token's text for vLLM's token_strs (the word
// tokenizer's ids are hashes, so words are looked up by position).
func tokenString(id int, word string) string {
	switch id {
	case tokBOS:
		return "<|sim_bos|>"
	case tokTemplate:
		return "<|sim_template|>"
	case tokPrime:
		return "<|sim_prime|>"
	}
	return word
}

// simChatTemplate is what /props reports as the chat template: ChatML, the
// shape the simulator's per-message overhead imitates.
const simChatTemplate = "{% for message in messages %}<|im_start|>{{ message.role }}\n{{ message.content }}<|im_end|>\n{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"

// propsResponse is llama.cpp's GET /props, with the fields discovery reads
// and a few more so that clients which expect them find them.
type propsResponse struct {
	DefaultGenerationSettings propsSlot `json:"default_generation_settings"`
	TotalSlots                int       `json:"total_slots"`
	ModelPath                 string    `json:"model_path"`
	ChatTemplate              string    `json:"chat_template"`
	Modalities                struct {
		Vision bool `json:"vision"`
		Audio  bool `json:"audio"`
	} `json:"modalities"`
	BuildInfo  string `json:"build_info"`
	IsSleeping bool   `json:"is_sleeping"`
}

type propsSlot struct {
	ID           int  `json:"id"`
	IDTask       int  `json:"id_task"`
	NCtx         int  `json:"n_ctx"`
	Speculative  bool `json:"speculative"`
	IsProcessing bool `json:"is_processing"`
	Params       struct {
		NPredict  int  `json:"n_predict"`
		IgnoreEOS bool `json:"ignore_eos"`
		Stream    bool `json:"stream"`
	} `json:"params"`
}

// handleProps answers llama.cpp's GET /props from the Config: a slot's
// context is MaxModelLen and there are MaxNumSeqs slots.
func (s *Server) handleProps(w http.ResponseWriter, r *http.Request) {
	var p propsResponse
	p.DefaultGenerationSettings = propsSlot{IDTask: -1, NCtx: s.cfg.MaxModelLen}
	p.DefaultGenerationSettings.Params.NPredict = -1
	p.DefaultGenerationSettings.Params.Stream = true
	p.TotalSlots = s.cfg.MaxNumSeqs
	p.ModelPath = s.cfg.Model
	p.ChatTemplate = simChatTemplate
	p.BuildInfo = "sixpin-sim"
	writeJSON(w, http.StatusOK, p)
}

// tokenizeRequest is either shape of POST /tokenize: vLLM's ("model" with
// "prompt" or "messages") or llama.cpp's ("content"). A body with both
// (as sixpin's runner sends, so that either server reads its own) is
// answered in vLLM's shape.
type tokenizeRequest struct {
	// vLLM
	Model               *string        `json:"model"`
	Prompt              *string        `json:"prompt"`
	Messages            *[]chatMessage `json:"messages"`
	AddSpecialTokens    *bool          `json:"add_special_tokens"`    // prompt only; default true (BOS)
	AddGenerationPrompt *bool          `json:"add_generation_prompt"` // messages only; default true
	ReturnTokenStrs     bool           `json:"return_token_strs"`
	// llama.cpp
	Content    *string `json:"content"`
	AddSpecial bool    `json:"add_special"` // default false
	WithPieces bool    `json:"with_pieces"`
}

// vllmTokenizeResponse is vLLM's answer to POST /tokenize.
type vllmTokenizeResponse struct {
	Count       int       `json:"count"`
	MaxModelLen int       `json:"max_model_len"`
	Tokens      []int     `json:"tokens"`
	TokenStrs   *[]string `json:"token_strs"`
}

// llamaPiece is one token of llama.cpp's /tokenize with with_pieces.
type llamaPiece struct {
	ID    int    `json:"id"`
	Piece string `json:"piece"`
}

// handleTokenize serves POST /tokenize in vLLM's shape or llama.cpp's,
// decided by the body (see tokenizeRequest), with the simulator's own
// tokenization: the counts it answers are the counts the chat endpoint
// bills.
func (s *Server) handleTokenize(w http.ResponseWriter, r *http.Request) {
	var req tokenizeRequest
	body := http.MaxBytesReader(w, r.Body, maxBodyBytes)
	if err := json.NewDecoder(body).Decode(&req); err != nil {
		writeAPIError(w, openAIError(http.StatusBadRequest, "invalid_request_error", "Invalid JSON body: "+err.Error()))
		return
	}
	io.Copy(io.Discard, body)
	switch {
	case req.Prompt != nil || req.Messages != nil:
		s.tokenizeVLLM(w, &req)
	case req.Content != nil:
		s.tokenizeLlama(w, &req)
	default:
		writeAPIError(w, openAIError(http.StatusBadRequest, "invalid_request_error",
			`a /tokenize body needs "prompt" or "messages" (vLLM) or "content" (llama.cpp)`))
	}
}

func (s *Server) tokenizeVLLM(w http.ResponseWriter, req *tokenizeRequest) {
	if req.Prompt != nil && req.Messages != nil {
		writeAPIError(w, vllmError(http.StatusBadRequest, "BadRequestError", "Either prompt or messages must be given, not both."))
		return
	}
	var ids []int
	var text []string // each token's text, for token_strs
	if req.Messages != nil {
		ids = s.chatTokens(*req.Messages, req.AddGenerationPrompt == nil || *req.AddGenerationPrompt)
		if req.ReturnTokenStrs {
			text = s.chatTokenText(*req.Messages, ids)
		}
	} else {
		if req.AddSpecialTokens == nil || *req.AddSpecialTokens {
			ids = append(ids, tokBOS)
			text = append(text, "")
		}
		ids = append(ids, s.encode(*req.Prompt)...)
		if req.ReturnTokenStrs {
			text = append(text, s.pieces(*req.Prompt)...)
		}
	}
	resp := vllmTokenizeResponse{Count: len(ids), MaxModelLen: s.cfg.MaxModelLen, Tokens: ids}
	if req.ReturnTokenStrs {
		strs := make([]string, len(ids))
		for i, id := range ids {
			word := ""
			if i < len(text) {
				word = text[i]
			}
			strs[i] = tokenString(id, word)
		}
		resp.TokenStrs = &strs
	}
	writeJSON(w, http.StatusOK, resp)
}

// chatTokenText lines up each chat token with its text.
func (s *Server) chatTokenText(msgs []chatMessage, ids []int) []string {
	text := make([]string, 0, len(ids))
	for i := range msgs {
		for range s.overhead {
			text = append(text, "")
		}
		text = append(text, s.pieces(string(msgs[i].Content))...)
	}
	return text
}

func (s *Server) tokenizeLlama(w http.ResponseWriter, req *tokenizeRequest) {
	ids := s.encode(*req.Content)
	var pieces []string
	if req.WithPieces {
		pieces = s.pieces(*req.Content)
	}
	if req.AddSpecial {
		ids = append([]int{tokBOS}, ids...)
		if req.WithPieces {
			pieces = append([]string{tokenString(tokBOS, "")}, pieces...)
		}
	}
	if !req.WithPieces {
		writeJSON(w, http.StatusOK, struct {
			Tokens []int `json:"tokens"`
		}{ids})
		return
	}
	out := make([]llamaPiece, len(ids))
	for i, id := range ids {
		out[i] = llamaPiece{ID: id}
		if i < len(pieces) {
			out[i].Piece = pieces[i]
		}
	}
	writeJSON(w, http.StatusOK, struct {
		Tokens []llamaPiece `json:"tokens"`
	}{out})
}

// pieces is each token's text, when the tokenizer can say (the word
// tokenizer can); otherwise empty strings.
func (s *Server) pieces(text string) []string {
	if p, ok := s.tok.(interface{ Pieces(string) []string }); ok {
		return p.Pieces(text)
	}
	return make([]string, s.countTokens(text))
}

// metricsLabels renders vLLM's vllm:cache_config_info labels for the
// Config, sorted by name as prometheus_client writes them.
func (s *Server) metricsLabels() string {
	prefix := "False"
	if s.caching {
		prefix = "True"
	}
	return fmt.Sprintf(`block_size="%d",cache_dtype="auto",enable_prefix_caching="%s",engine="0",gpu_memory_utilization="%g",kv_cache_size_tokens="%d",num_gpu_blocks="%d"`,
		s.cfg.BlockSize, prefix, s.cfg.GPUMemoryUtilization, s.cfg.KVBudgetTokens, s.cfg.KVBudgetTokens/s.cfg.BlockSize)
}

// promQuote quotes a Prometheus label value: backslash, double quote and
// newline escaped, everything else as it is.
func promQuote(v string) string {
	return `"` + promEscaper.Replace(v) + `"`
}

var promEscaper = strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`)
