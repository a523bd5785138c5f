package tokenizer

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/dlclark/regexp2/v2"
	"golang.org/x/text/unicode/norm"
)

// ErrUnsupported is wrapped by the errors of LoadHF and ParseHF for a
// tokenizer.json that is valid but not byte-level BPE as this package
// implements it (a Unigram or WordPiece model, a Metaspace pre-tokenizer,
// ...). Test with errors.Is.
var ErrUnsupported = errors.New("unsupported")

// Option configures LoadHF and ParseHF.
type Option func(*options)

type options struct {
	normalize bool
}

// WithNormalization applies the Unicode normalization form the file's
// normalizer names (NFC, NFD, NFKC or NFKD) to the text before encoding
// it. By default none is applied, although Hugging Face's tokenizers would:
// llama.cpp, and so llama-server's /tokenize and its usage.prompt_tokens,
// applies none, and sixpin matches what the server counts. The forms differ
// only for text that is not already normalized, e.g. decomposed accents.
func WithNormalization() Option {
	return func(o *options) { o.normalize = true }
}

// LoadHF reads a Hugging Face tokenizer.json file of a byte-level BPE model
// (GPT-2, Llama 3, Qwen and the like). The tokenizer's name is
// "hf:" followed by path. Errors name the file; errors for files of an
// unsupported kind wrap ErrUnsupported.
func LoadHF(path string, opts ...Option) (*BPE, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("load tokenizer: %w", err)
	}
	return ParseHF("hf:"+path, data, opts...)
}

// ParseHF parses the contents of a Hugging Face tokenizer.json (see
// LoadHF). name becomes the tokenizer's Name and appears in errors.
//
// Supported: model.type BPE with vocab and merges (as "a b" strings or
// ["a", "b"] pairs; ignore_merges is honoured); added_tokens, special or
// not, matched in the raw text first, longest first; the pre_tokenizer
// ByteLevel (its use_regex meaning the GPT-2 pattern), alone or after
// Split (Regex or String pattern, behavior Isolated) and Digits stages in
// a Sequence; a ByteLevel decoder; an NFC/NFD/NFKC/NFKD normalizer, applied
// only with WithNormalization. The post_processor is ignored: Encode adds
// no BOS or other tokens.
func ParseHF(name string, data []byte, opts ...Option) (*BPE, error) {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	t, err := parseHF(name, data, o)
	if err != nil {
		return nil, fmt.Errorf("load tokenizer %q: %w", strings.TrimPrefix(name, "hf:"), err)
	}
	return t, nil
}

// The parts of tokenizer.json this package reads.
type (
	hfFile struct {
		AddedTokens  []hfAddedToken  `json:"added_tokens"`
		Normalizer   *hfNormalizer   `json:"normalizer"`
		PreTokenizer *hfPreTokenizer `json:"pre_tokenizer"`
		Decoder      *hfDecoder      `json:"decoder"`
		Model        hfModel         `json:"model"`
	}
	hfAddedToken struct {
		ID         int    `json:"id"`
		Content    string `json:"content"`
		SingleWord bool   `json:"single_word"`
		LStrip     bool   `json:"lstrip"`
		RStrip     bool   `json:"rstrip"`
	}
	hfNormalizer struct {
		Type        string         `json:"type"`
		Normalizers []hfNormalizer `json:"normalizers"`
	}
	hfPreTokenizer struct {
		Type          string           `json:"type"`
		Pretokenizers []hfPreTokenizer `json:"pretokenizers"`
		Pattern       *struct {
			Regex  *string `json:"Regex"`
			String *string `json:"String"`
		} `json:"pattern"`
		Behavior         string `json:"behavior"`
		Invert           bool   `json:"invert"`
		AddPrefixSpace   bool   `json:"add_prefix_space"`
		UseRegex         *bool  `json:"use_regex"`
		IndividualDigits bool   `json:"individual_digits"`
	}
	hfDecoder struct {
		Type string `json:"type"`
	}
	hfModel struct {
		Type                    string   `json:"type"`
		Dropout                 *float64 `json:"dropout"`
		ContinuingSubwordPrefix string   `json:"continuing_subword_prefix"`
		EndOfWordSuffix         string   `json:"end_of_word_suffix"`
		IgnoreMerges            bool     `json:"ignore_merges"`
		vocab, merges           string   // raw JSON, read by hand
	}
)

// decodeHF reads tokenizer.json: encoding/json for the small parts, and
// parseVocab and parseMerges for model.vocab and model.merges.
func decodeHF(data string) (*hfFile, error) {
	var f hfFile
	err := eachMember(data, func(key string, val string) error {
		var err error
		switch key {
		case "added_tokens":
			err = json.Unmarshal([]byte(val), &f.AddedTokens)
		case "normalizer":
			err = json.Unmarshal([]byte(val), &f.Normalizer)
		case "pre_tokenizer":
			err = json.Unmarshal([]byte(val), &f.PreTokenizer)
		case "decoder":
			err = json.Unmarshal([]byte(val), &f.Decoder)
		case "model":
			return eachMember(val, func(key string, val string) error {
				var err error
				switch key {
				case "vocab":
					f.Model.vocab = val
				case "merges":
					f.Model.merges = val
				case "type":
					err = json.Unmarshal([]byte(val), &f.Model.Type)
				case "dropout":
					err = json.Unmarshal([]byte(val), &f.Model.Dropout)
				case "continuing_subword_prefix":
					err = json.Unmarshal([]byte(val), &f.Model.ContinuingSubwordPrefix)
				case "end_of_word_suffix":
					err = json.Unmarshal([]byte(val), &f.Model.EndOfWordSuffix)
				case "ignore_merges":
					err = json.Unmarshal([]byte(val), &f.Model.IgnoreMerges)
				}
				if err != nil {
					return fmt.Errorf("model.%s: %w", key, err)
				}
				return nil
			})
		}
		if err != nil {
			return fmt.Errorf("%s: %w", key, err)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("parse JSON: %w", err)
	}
	return &f, nil
}

func unsupported(format string, args ...any) error {
	return fmt.Errorf("%s %w", fmt.Sprintf(format, args...), ErrUnsupported)
}

func parseHF(name string, data []byte, o options) (*BPE, error) {
	f, err := decodeHF(string(data))
	if err != nil {
		return nil, err
	}
	m := f.Model
	switch m.Type {
	case "BPE":
	case "":
		if m.merges == "" {
			return nil, fmt.Errorf("model: no type, and no merges to make it BPE")
		}
	default:
		return nil, unsupported("model.type %q is", m.Type)
	}
	if m.Dropout != nil && *m.Dropout > 0 {
		return nil, unsupported("model.dropout %g (random merges) is", *m.Dropout)
	}
	if m.ContinuingSubwordPrefix != "" || m.EndOfWordSuffix != "" {
		return nil, unsupported("model.continuing_subword_prefix or end_of_word_suffix (not byte-level BPE) is")
	}
	norms, err := normalizerForms(f.Normalizer)
	if err != nil {
		return nil, err
	}
	stages, err := preTokenizerStages(f.PreTokenizer)
	if err != nil {
		return nil, err
	}
	if f.Decoder != nil && f.Decoder.Type != "ByteLevel" {
		return nil, unsupported("decoder %q is", f.Decoder.Type)
	}

	if m.vocab == "" {
		return nil, fmt.Errorf("model.vocab: missing")
	}
	// The two big parts parse in parallel.
	var merges [][2]string
	var mergesErr error
	done := make(chan struct{})
	go func() {
		defer close(done)
		merges, mergesErr = parseMerges(m.merges)
	}()
	vocab, err := parseVocab(m.vocab)
	<-done
	if err != nil {
		return nil, fmt.Errorf("model.vocab: %w", err)
	}
	if mergesErr != nil {
		return nil, mergesErr
	}

	t := &BPE{name: name, stages: stages, cache: newPieceCache()}
	if o.normalize {
		t.norms = norms
	}
	maxID := -1
	for _, id := range vocab {
		maxID = max(maxID, id)
	}
	var added []addedToken
	for _, at := range f.AddedTokens {
		maxID = max(maxID, at.ID)
		added = append(added, addedToken{content: at.Content, id: at.ID,
			lstrip: at.LStrip, rstrip: at.RStrip, singleWord: at.SingleWord})
	}
	if maxID >= maxVocabID {
		return nil, fmt.Errorf("token id %d: ids must be below %d", maxID, maxVocabID)
	}
	for _, id := range vocab {
		if id < 0 {
			return nil, fmt.Errorf("model.vocab: negative id %d", id)
		}
	}
	for _, at := range added {
		if at.id < 0 {
			return nil, fmt.Errorf("added_tokens: %q has negative id %d", at.content, at.id)
		}
	}
	for b := range 256 {
		id, ok := vocab[string(byteRune[b])]
		if !ok {
			return nil, unsupported("a vocabulary without the byte-level token for byte 0x%02x (%q) is", b, byteRune[b])
		}
		t.model.byteID[b] = int32(id)
	}
	if err := t.model.setMerges(vocab, merges); err != nil {
		return nil, err
	}
	t.added = newAddedMatcher(added)
	t.setPieces(vocab, added, maxID+1, m.IgnoreMerges)
	return t, nil
}

// maxVocabID bounds token ids, so that a corrupt file cannot make the
// id-indexed tables huge.
const maxVocabID = 1 << 24

// setPieces fills t.pieces, the raw text of each id, and for
// ignore_merges t.model.whole. The texts of the vocabulary share one
// backing string.
func (t *BPE) setPieces(vocab map[string]int, added []addedToken, size int, ignoreMerges bool) {
	t.vocabSize = size
	t.pieces = make([]string, size)
	if ignoreMerges {
		t.model.whole = make(map[string]int32, len(vocab))
	}
	type span struct{ start, end int }
	spans := make([]span, size)
	arena := make([]byte, 0, 8*len(vocab))
	for tok, id := range vocab {
		start := len(arena)
		var ok bool
		arena, ok = appendByteLevelDecode(arena, tok)
		spans[id] = span{start, len(arena)}
		if ok && t.model.whole != nil {
			t.model.whole[string(arena[start:])] = int32(id)
		}
	}
	all := string(arena)
	for id, sp := range spans {
		t.pieces[id] = all[sp.start:sp.end]
	}
	for _, at := range added {
		t.pieces[at.id] = at.content
	}
}

// normalizerForms returns the Unicode normalization forms a normalizer
// applies, in order, or an error for any other kind of normalizer.
func normalizerForms(n *hfNormalizer) ([]norm.Form, error) {
	if n == nil {
		return nil, nil
	}
	forms := map[string]norm.Form{"NFC": norm.NFC, "NFD": norm.NFD, "NFKC": norm.NFKC, "NFKD": norm.NFKD}
	if f, ok := forms[n.Type]; ok {
		return []norm.Form{f}, nil
	}
	if n.Type != "Sequence" {
		return nil, unsupported("normalizer %q is", n.Type)
	}
	var out []norm.Form
	for _, sub := range n.Normalizers {
		fs, err := normalizerForms(&sub)
		if err != nil {
			return nil, err
		}
		out = append(out, fs...)
	}
	return out, nil
}

// preTokenizerStages returns the splitters a pre_tokenizer applies in
// turn. It must end in ByteLevel, the only place ByteLevel may appear.
func preTokenizerStages(p *hfPreTokenizer) ([]splitter, error) {
	if p == nil {
		return nil, unsupported("a missing pre_tokenizer (byte-level BPE needs ByteLevel) is")
	}
	list := []hfPreTokenizer{*p}
	if p.Type == "Sequence" {
		list = p.Pretokenizers
	}
	var stages []splitter
	for k, s := range list {
		last := k == len(list)-1
		switch s.Type {
		case "ByteLevel":
			if !last {
				return nil, unsupported("pre_tokenizer: ByteLevel before other pre-tokenizers is")
			}
			if s.AddPrefixSpace {
				return nil, unsupported("pre_tokenizer: ByteLevel add_prefix_space is")
			}
			if s.UseRegex == nil || *s.UseRegex { // HF's default is true
				stages = append(stages, knownPatterns[gpt2Pattern])
			}
			return stages, nil
		case "Split":
			if s.Behavior != "Isolated" || s.Invert {
				return nil, unsupported("pre_tokenizer: Split with behavior %q, invert %v (only Isolated) is", s.Behavior, s.Invert)
			}
			var pattern string
			switch {
			case s.Pattern != nil && s.Pattern.Regex != nil:
				pattern = *s.Pattern.Regex
			case s.Pattern != nil && s.Pattern.String != nil:
				pattern = regexp2.Escape(*s.Pattern.String)
			default:
				return nil, fmt.Errorf("pre_tokenizer: Split without a Regex or String pattern")
			}
			sp, err := newSplitter(pattern)
			if err != nil {
				return nil, fmt.Errorf("pre_tokenizer: %w", err)
			}
			stages = append(stages, sp)
		case "Digits":
			pattern := `\p{N}+`
			if s.IndividualDigits {
				pattern = `\p{N}`
			}
			sp, err := newSplitter(pattern)
			if err != nil {
				return nil, fmt.Errorf("pre_tokenizer: %w", err)
			}
			stages = append(stages, sp)
		default:
			return nil, unsupported("pre_tokenizer %q is", s.Type)
		}
	}
	return nil, unsupported("a pre_tokenizer without a final ByteLevel is")
}

// BPE is a byte-level BPE tokenizer read from a Hugging Face
// tokenizer.json. It is safe for concurrent use: the model is read-only
// and the per-piece cache is sharded under locks.
type BPE struct {
	name      string
	model     bpeModel
	stages    []splitter // pre-tokenizer stages, each splitting the pieces of the last
	added     *addedMatcher
	norms     []norm.Form // applied to text between added tokens; nil by default
	pieces    []string    // raw bytes (added tokens: content) by id; "" for unused ids
	vocabSize int
	cache     *pieceCache
}

// Name returns the name the tokenizer was loaded under ("qwen2",
// "hf:PATH").
func (t *BPE) Name() string { return t.name }

// VocabSize returns one more than the largest token id, added tokens
// included.
func (t *BPE) VocabSize() int { return t.vocabSize }

// Encode returns the token ids of text. No BOS or other tokens are added;
// added tokens written in the text, such as <|im_start|>, become their ids.
// Each invalid UTF-8 byte is encoded as U+FFFD, as llama.cpp does, and as
// a server sees text that encoding/json has sent it.
func (t *BPE) Encode(text string) []int {
	ids := make([]int, 0, len(text)/3+4)
	t.walk(text, func(id int) { ids = append(ids, id) }, func(piece string) {
		ids = t.appendPiece(ids, piece)
	})
	return ids
}

// Count returns len(Encode(text)), allocating only for pieces it has not
// seen before.
func (t *BPE) Count(text string) int {
	n := 0
	t.walk(text, func(int) { n++ }, func(piece string) {
		n += t.countPiece(piece)
	})
	return n
}

// Decode returns the text that ids spell, added tokens included as written.
// Ids out of range are skipped. A slice of a longer encoding may end or
// start inside a UTF-8 character; its text is then not valid UTF-8.
func (t *BPE) Decode(ids []int) string {
	var b strings.Builder
	for _, id := range ids {
		if id >= 0 && id < len(t.pieces) {
			b.WriteString(t.pieces[id])
		}
	}
	return b.String()
}

// walk calls special for each added token and piece for each pre-token
// of text, in order.
func (t *BPE) walk(text string, special func(id int), piece func(string)) {
	if !utf8.ValidString(text) {
		text = replaceInvalidUTF8(text)
	}
	t.added.segments(text, func(seg string, id int) {
		if id >= 0 {
			special(id)
			return
		}
		for _, f := range t.norms {
			seg = f.String(seg)
		}
		t.split(0, seg, piece)
	})
}

// split runs pre-tokenizer stages from stage on s.
func (t *BPE) split(stage int, s string, yield func(string)) {
	switch {
	case stage == len(t.stages):
		yield(s)
	case stage == len(t.stages)-1:
		t.stages[stage].split(s, yield)
	default:
		t.stages[stage].split(s, func(p string) { t.split(stage+1, p, yield) })
	}
}

// appendPiece appends the ids of one pre-token, through the cache.
func (t *BPE) appendPiece(ids []int, piece string) []int {
	if len(piece) == 1 {
		return append(ids, int(t.model.byteID[piece[0]]))
	}
	if len(piece) > maxCachedPiece {
		return t.model.appendEncode(ids, piece)
	}
	sh := t.cache.shard(piece)
	if cached, ok := t.cache.get(sh, piece); ok {
		return append(ids, cached...)
	}
	start := len(ids)
	ids = t.model.appendEncode(ids, piece)
	t.cache.put(sh, piece, slices.Clone(ids[start:]))
	return ids
}

// countPiece returns the number of ids of one pre-token.
func (t *BPE) countPiece(piece string) int {
	if len(piece) == 1 {
		return 1
	}
	if len(piece) > maxCachedPiece {
		var buf [heapThreshold]int
		return len(t.model.appendEncode(buf[:0], piece))
	}
	sh := t.cache.shard(piece)
	if cached, ok := t.cache.get(sh, piece); ok {
		return len(cached)
	}
	ids := t.model.appendEncode(nil, piece)
	t.cache.put(sh, piece, ids)
	return len(ids)
}

// setMerges resolves the merges' tokens to ids, in two halves in parallel
// (a few hundred thousand lookups in a large map), and fills m.merges.
func (m *bpeModel) setMerges(vocab map[string]int, merges [][2]string) error {
	type resolved struct {
		key uint64
		mg  merge
	}
	out := make([]resolved, len(merges))
	resolve := func(from, to int) error {
		var buf []byte
		for rank := from; rank < to; rank++ {
			p := merges[rank]
			a, okA := vocab[p[0]]
			b, okB := vocab[p[1]]
			buf = append(append(buf[:0], p[0]...), p[1]...)
			ab, okAB := vocab[string(buf)]
			if !okA || !okB || !okAB {
				return fmt.Errorf("model.merges[%d] %q: a token is not in the vocabulary", rank, p[0]+" "+p[1])
			}
			out[rank] = resolved{pairKey(int32(a), int32(b)), merge{rank: int32(rank), id: int32(ab)}}
		}
		return nil
	}
	half := len(merges) / 2
	errc := make(chan error, 1)
	go func() { errc <- resolve(half, len(merges)) }()
	err1 := resolve(0, half)
	if err2 := <-errc; err1 == nil {
		err1 = err2
	}
	if err1 != nil {
		return err1
	}
	m.merges = make(map[uint64]merge, len(merges))
	for _, r := range out {
		if _, dup := m.merges[r.key]; !dup { // the first rank wins, as in llama.cpp
			m.merges[r.key] = r.mg
		}
	}
	return nil
}

// replaceInvalidUTF8 replaces each invalid byte of s with U+FFFD, as Go's
// range loop, encoding/json and llama.cpp see it.
func replaceInvalidUTF8(s string) string {
	var b strings.Builder
	b.Grow(len(s) + 8)
	for _, r := range s {
		b.WriteRune(r)
	}
	return b.String()
}
