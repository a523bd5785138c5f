//go:build linux

package endpoint

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/sixpin/sixpin/record"
)

// The package's tests read on the event loop every answer it can take,
// whatever its length: every test of a stream over plain HTTP holds for
// the loop, and TestLoopAgreesWithGoroutine holds the goroutine's reading
// equal to it.
func init() { loopAfterReads = 1 }

// pieces answers with body cut at the given offsets, each piece flushed
// on its own a moment after the last, so that the client reads it apart:
// lines, events and chunks split wherever the offsets fall.
func pieces(body string, at ...int) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		from := 0
		for _, i := range append(at, len(body)) {
			io.WriteString(w, body[from:i])
			w.(http.Flusher).Flush()
			time.Sleep(2 * time.Millisecond)
			from = i
		}
	}
}

// paced answers with the given parts as pieces does, 2 ms apart: a
// short answer sent at once comes whole with its head, in the first
// read, and is never the loop's to take.
func paced(parts ...string) http.HandlerFunc {
	var at []int
	n := 0
	for _, p := range parts[:len(parts)-1] {
		n += len(p)
		at = append(at, n)
	}
	return pieces(strings.Join(parts, ""), at...)
}

// raw answers with the given parts, the first starting with the status
// line and header, over the hijacked connection, a moment apart, then
// closes it: a server's framing exactly as written (a length, a cut
// chunk, no length at all).
func raw(parts ...string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		c, _, err := w.(http.Hijacker).Hijack()
		if err != nil {
			return
		}
		for _, p := range parts {
			io.WriteString(c, p)
			time.Sleep(3 * time.Millisecond)
		}
		c.Close()
	}
}

// The same streams, read on the event loop and on their goroutine
// (Options.NoEventLoop), make the same records: the same chunks (their
// sizes and kinds), the same class and message, finish, usage, model and
// text; and the loop does read them (Client.EventLoopStreams).
func TestLoopAgreesWithGoroutine(t *testing.T) {
	var stream strings.Builder
	stream.WriteString(roleEvent)
	for i := range 40 {
		stream.WriteString(contentEvent(fmt.Sprintf(" w%d", i)))
	}
	stream.WriteString(finishEvent("length") + usageEvent(9, 40) + doneEvent)
	long := stream.String()
	crlf := strings.ReplaceAll(long, "\n", "\r\n")
	cr := strings.ReplaceAll(long, "\n", "\r")
	chunkedBody := func(parts ...string) string {
		var b strings.Builder
		for _, p := range parts {
			fmt.Fprintf(&b, "%x\r\n%s\r\n", len(p), p)
		}
		return b.String()
	}
	head := "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
	// Each case has the loop take its stream (stay: unless it ends
	// within its first read, which is then read on the goroutine).
	cases := []struct {
		name string
		h    http.Handler
		co   Options
		stay bool
	}{
		{name: "40 tokens, an event a flush", h: paced(strings.SplitAfter(long, "\n\n")...)},
		{name: "40 tokens at once", h: sse(long), stay: true},
		{name: "split inside lines and events", h: pieces(long, 7, 200, 201, 350, 900, 901, 902, 1500, len(long)-3)},
		{name: "CRLF, split between CR and LF", h: pieces(crlf, strings.Index(crlf, "\r\n")+1, 500, 1001)},
		{name: "CR alone", h: pieces(cr, 300, 301, 1200)},
		{name: "multi-line data and comments", h: paced(roleEvent, ": ping\n\n", "data: {\"choices\":[{\"index\":0,\n",
			"data: \"delta\":{\"content\":\" a\"}}]}\n\n", "retry: 5\nevent: x\n"+contentEvent(" b"), finishEvent("stop"), doneEvent)},
		{name: "byte-order mark, split", h: pieces("\xef\xbb\xbf"+long, 1, 2, 600)},
		{name: "no [DONE]", h: paced(roleEvent, contentEvent(" a"), contentEvent(" b"), finishEvent("stop"))},
		{name: "no finish_reason", h: paced(roleEvent, contentEvent(" a"), contentEvent(" b"), doneEvent)},
		{name: "only [DONE]", h: sse(doneEvent), stay: true},
		{name: "malformed JSON", h: paced(roleEvent, contentEvent(" a"), contentEvent(" b"), "data: {\"choices\":[\n\n")},
		{name: "an error event", h: paced(roleEvent, contentEvent(" a"), `data: {"error":{"message":"over capacity","type":"server_error"}}`+"\n\n")},
		{name: "a line over the limit", h: pieces(roleEvent+contentEvent(" a")+`data: {"choices":[{"delta":{"content":"`+strings.Repeat("x", 5000)+`"}}]}`+"\n\n", 100, 3000),
			co: Options{MaxLineBytes: 4096}},
		{name: "a Content-Length body", h: raw(head+fmt.Sprintf("Content-Length: %d\r\n\r\n", len(long))+long[:500], long[500:1000], long[1000:])},
		{name: "a Content-Length body cut short", h: raw(head+fmt.Sprintf("Content-Length: %d\r\n\r\n", len(long)+10)+long[:500], long[500:])},
		{name: "a body until the close", h: raw(head+"Connection: close\r\n\r\n"+long[:500], long[500:])},
		{name: "a chunk cut short", h: raw(head+"Transfer-Encoding: chunked\r\n\r\n"+chunkedBody(roleEvent), chunkedBody(contentEvent(" a")), "40\r\ndata: {")},
		{name: "bad chunk framing", h: raw(head+"Transfer-Encoding: chunked\r\n\r\n"+chunkedBody(roleEvent), chunkedBody(contentEvent(" a")), "zz\r\n")},
		{name: "the stream ended inside an event", h: raw(head+"Connection: close\r\n\r\n"+roleEvent, contentEvent(" a"), "data: {\"choi")},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ts := serve(t, c.h, nil)
			var recs [2]*record.Record
			for i, noLoop := range []bool{false, true} {
				o := c.co
				o.NoEventLoop = noLoop
				cl := client(t, Target{BaseURL: ts.URL + "/v1", Model: "m"}, o)
				recs[i] = streamOne(cl, 0, 10, 40, UserMessage("a short prompt"))
				if took := cl.EventLoopStreams() == 1; took && noLoop || !took && !noLoop && !c.stay {
					t.Fatalf("NoEventLoop %v: read on the loop %v", noLoop, took)
				}
			}
			l, g := recs[0], recs[1]
			if l.Err != g.Err || l.ErrMsg != g.ErrMsg || l.FinishReason != g.FinishReason || l.HasUsage != g.HasUsage ||
				l.Usage != g.Usage || l.Model != g.Model || l.HTTPStatus != g.HTTPStatus || string(l.Text) != string(g.Text) {
				t.Errorf("loop:      %s %q finish %q usage %v %+v model %q\ngoroutine: %s %q finish %q usage %v %+v model %q",
					l.Err, l.ErrMsg, l.FinishReason, l.HasUsage, l.Usage, l.Model,
					g.Err, g.ErrMsg, g.FinishReason, g.HasUsage, g.Usage, g.Model)
			}
			if len(l.Chunks) != len(g.Chunks) {
				t.Fatalf("%d chunks on the loop, %d on the goroutine", len(l.Chunks), len(g.Chunks))
			}
			for i := range l.Chunks {
				if l.Chunks[i].Bytes != g.Chunks[i].Bytes || l.Chunks[i].Reasoning != g.Chunks[i].Reasoning {
					t.Fatalf("chunk %d: %+v on the loop, %+v on the goroutine", i, l.Chunks[i], g.Chunks[i])
				}
			}
			if !l.Failed() {
				checkTimeline(t, l, false)
			}
		})
	}
}

// Events that came in the read before the handover, behind the one the
// goroutine last took, are taken at once, not when the socket next has
// something to read: here the whole answer to its [DONE] comes in one
// read, and the server then keeps the connection silent for two seconds
// before it ends the body.
func TestLoopTakesEventsBufferedAtTheHandover(t *testing.T) {
	head := "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"
	body := roleEvent + contentEvent(" a") + contentEvent(" b") + finishEvent("stop") + doneEvent
	ts := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		c, _, err := w.(http.Hijacker).Hijack()
		if err != nil {
			return
		}
		defer c.Close()
		io.WriteString(c, head)
		time.Sleep(5 * time.Millisecond)
		fmt.Fprintf(c, "%x\r\n%s\r\n", len(body), body)
		time.Sleep(2 * time.Second)
		io.WriteString(c, "0\r\n\r\n")
	}), nil)
	cl := client(t, Target{BaseURL: ts.URL + "/v1", Model: "m"}, Options{})
	rec := streamOne(cl, 0, 10, 2, UserMessage("a short prompt"))
	if took := rec.End - rec.Sent; took > 500*time.Millisecond || rec.Failed() || len(rec.Chunks) != 2 || cl.EventLoopStreams() != 1 {
		t.Errorf("%v to the answer's end (%s: %s), %d chunks, %d on the loop; want it at once, 2 chunks, on the loop",
			took, rec.Err, rec.ErrMsg, len(rec.Chunks), cl.EventLoopStreams())
	}
}
