// Package fdlimit reads how many files the process may have open: every
// connection sixpin keeps is one, so a run of 20,000 streams needs more
// than 20,000.
package fdlimit

// Reserve is what a run keeps open besides its connections: the spill
// and results files, the server-metrics scrapes, the live page and
// Prometheus listeners, the tokenizer files, DNS.
const Reserve = 64

// Need is how many files a run of conns connections needs open: conns,
// twice that when the server is in the same process (the built-in
// simulator holds the other end of each), and Reserve.
func Need(conns int, inProcess bool) int {
	if inProcess {
		conns *= 2
	}
	return conns + Reserve
}
