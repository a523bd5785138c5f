// Package testserve holds the small HTTP servers sixpin's tests of
// different packages share: fixed answers, chat streams made on purpose
// and ports nothing listens on.
package testserve

import (
	"io"
	"net"
	"net/http"
	"testing"
)

// Status answers every request with code, contentType and body, after
// reading the request's body.
func Status(code int, contentType, body string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", contentType)
		w.WriteHeader(code)
		io.WriteString(w, body)
	}
}

// DeadURL is the http:// URL of a loopback port nothing listens on.
func DeadURL(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return "http://" + addr
}
