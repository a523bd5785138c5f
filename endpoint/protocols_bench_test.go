package endpoint

import (
	"testing"
)

// protocolEvents are one token's event per protocol, byte for byte as the
// simulator streams them.
var protocolEvents = []struct {
	name string
	p    protocol
	data string
}{
	{"chat", chat{}, sampleChunk},
	{"messages", messages{}, `{"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":" garden"},"sixpin_sent_unix_ns":1764518400123456789}`},
	{"messages_thinking", messages{}, `{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":" garden"},"sixpin_sent_unix_ns":1764518400123456789}`},
	{"responses", responses{}, `{"type":"response.output_text.delta","sequence_number":12,"item_id":"msg_3f9a1c0e5b7d2468","output_index":1,"content_index":0,"delta":" garden","logprobs":[],"sixpin_sent_unix_ns":1764518400123456789}`},
	{"completions", completions{}, `{"id":"cmpl-3f9a1c0e5b7d2468","object":"text_completion","created":1764518400,"model":"qwen3.8-27b","choices":[{"text":" garden","index":0,"logprobs":null,"finish_reason":null}],"sixpin_sent_unix_ns":1764518400123456789}`},
}

// TestProtocolEventAllocs: reading a token's event allocates nothing, in
// every protocol, and finds its seven bytes of output.
func TestProtocolEventAllocs(t *testing.T) {
	for _, e := range protocolEvents {
		data := []byte(e.data)
		var c chunk
		allocs := testing.AllocsPerRun(1000, func() {
			if err := e.p.event(data, &c); err != nil {
				t.Fatal(err)
			}
		})
		if allocs != 0 {
			t.Errorf("%s: %v allocations per event", e.name, allocs)
		}
		if n := c.contentBytes + c.reasoningBytes; n != len(" garden") || c.sentUnixNS == 0 {
			t.Errorf("%s: %d output bytes, stamp %d", e.name, n, c.sentUnixNS)
		}
	}
}

// BenchmarkProtocolEvent is the JSON half of the per-chunk path, per
// protocol: chat is the yardstick the others are read against.
func BenchmarkProtocolEvent(b *testing.B) {
	for _, e := range protocolEvents {
		b.Run(e.name, func(b *testing.B) {
			data := []byte(e.data)
			b.ReportAllocs()
			b.SetBytes(int64(len(data)))
			var c chunk
			for b.Loop() {
				if err := e.p.event(data, &c); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
