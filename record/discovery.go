package record

// Discovery is what the server said about itself before the run: the
// observed side of pins 1 (model) and 5 (KV cache), where each fact came
// from, and how every source fared.
type Discovery struct {
	// ModelIDs are the ids /v1/models listed.
	ModelIDs []string `json:"model_ids,omitempty"`
	// Err is why /v1/models failed, if it did.
	Err string `json:"error,omitempty"`
	// Engine is the serving engine, when recognised: "vllm", "llama.cpp",
	// "sglang", "ollama" or "sixpin-sim" (from /v1/models owned_by, else
	// the one engine source that answered).
	Engine string `json:"engine,omitempty"`
	// Version is the engine's build (llama.cpp build_info, SGLang version).
	Version string `json:"version,omitempty"`
	// Speculative is the speculative decoding the server says it was
	// started with: SpeculativeNone, or its drafters' names (llama.cpp's
	// /props speculative.types, "draft-simple"); "" when it does not say.
	Speculative string     `json:"speculative,omitempty"`
	Model       ModelFacts `json:"model"`
	KV          KVFacts    `json:"kv_cache"`
	// RequestsRunning and RequestsWaiting are vLLM's gauges at discovery
	// time, summed over engines (nil: not reported). A server already busy
	// before the run skews it.
	RequestsRunning *float64 `json:"requests_running,omitempty"`
	RequestsWaiting *float64 `json:"requests_waiting,omitempty"`
	// From names where each fact came from, by the fact's JSON path
	// ("kv_cache.block_size" → "/metrics vllm:cache_config_info block_size").
	From map[string]string `json:"from,omitempty"`
	// Sources is every source asked, in Sources() order.
	Sources []SourceResult `json:"sources"`
	// Notes are what a reader should know: sources that disagree, facts
	// that could not be read, caveats of an engine.
	Notes []string `json:"notes,omitempty"`
}

// ModelFacts is pin 1 as the server describes its model.
type ModelFacts struct {
	// ID is the served model id: the target's when listed, else the only
	// one listed.
	ID string `json:"id,omitempty"`
	// Path is the weights' path or repository (llama.cpp model_path,
	// vLLM/SGLang root or model_path).
	Path string `json:"path,omitempty"`
	// ParamsB is the parameter count in billions.
	ParamsB float64 `json:"params_b,omitempty"`
	// Quantization is the weights' quantisation as the server names it
	// ("Q4_K_M", "fp8"); for llama.cpp it is read from the GGUF file name.
	Quantization string `json:"quantization,omitempty"`
	// Dtype is the weights' data type as configured ("bfloat16", "auto").
	Dtype string `json:"dtype,omitempty"`
	// ContextTrain is the context length the model was trained for, in
	// tokens: an upper bound, not the served context (KVFacts.MaxModelLen).
	ContextTrain int `json:"context_train,omitempty"`
	// VocabSize is the tokenizer's vocabulary size.
	VocabSize int `json:"vocab_size,omitempty"`
	// SizeBytes is the weights' size in bytes.
	SizeBytes int64 `json:"size_bytes,omitempty"`
	// ChatTemplate says whether the server has a chat template (nil:
	// unknown).
	ChatTemplate *bool `json:"chat_template,omitempty"`
}

// KVFacts is pin 5 as the server is configured.
type KVFacts struct {
	// MaxModelLen is the longest sequence served, prompt plus output, in
	// tokens (vLLM/SGLang max_model_len, llama.cpp's per-slot n_ctx,
	// Ollama's num_ctx).
	MaxModelLen int `json:"max_model_len,omitempty"`
	// BudgetTokens is the KV cache's capacity in tokens over all running
	// sequences: num_gpu_blocks × block_size (or vLLM's
	// kv_cache_size_tokens), SGLang's max_total_num_tokens.
	BudgetTokens int `json:"budget_tokens,omitempty"`
	// BlockSize is tokens per KV block (page).
	BlockSize int `json:"block_size,omitempty"`
	// NumGPUBlocks is the KV blocks on the accelerators, all engines.
	NumGPUBlocks int `json:"num_gpu_blocks,omitempty"`
	// CacheDtype is the KV cache's data type ("auto", "fp8").
	CacheDtype string `json:"cache_dtype,omitempty"`
	// GPUMemoryUtilization is the fraction (0–1] of accelerator memory the
	// engine may take (vLLM gpu_memory_utilization, SGLang
	// mem_fraction_static).
	GPUMemoryUtilization float64 `json:"gpu_memory_utilization,omitempty"`
	// MaxNumSeqs is the most sequences served at once (llama.cpp
	// total_slots, SGLang max_running_requests).
	MaxNumSeqs int `json:"max_num_seqs,omitempty"`
	// PrefixCaching says whether prefix caching is on (nil: unknown).
	PrefixCaching *bool `json:"prefix_caching,omitempty"`
	// ChunkedPrefillTokens is the prefill chunk size in tokens (SGLang
	// chunked_prefill_size; 0: unknown or off).
	ChunkedPrefillTokens int `json:"chunked_prefill_tokens,omitempty"`
	// Batching is how the server batches, "continuous" or "static" (""
	// unknown): what the engine is known to do (vLLM and SGLang only
	// batch continuously), or what it says (the simulator).
	Batching string `json:"batching,omitempty"`
}

// SourceResult is how one discovery source fared.
type SourceResult struct {
	// Name is the source (SourceVLLM, ...).
	Name string `json:"name"`
	// Endpoint is the request made ("GET /metrics").
	Endpoint string `json:"endpoint"`
	// OK is true when the source answered with the shape its engine
	// documents; its facts are then merged.
	OK bool `json:"ok"`
	// Status is the HTTP status (0: no response).
	Status int `json:"status,omitempty"`
	// Err says why the source is not OK. A 404 is normal: the server is
	// another engine.
	Err string `json:"error,omitempty"`
}

// SpeculativeNone is Discovery.Speculative for a server that says it
// does not speculate (llama.cpp's --spec-type none, its default).
const SpeculativeNone = "none"
