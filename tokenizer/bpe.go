package tokenizer

import (
	"hash/maphash"
	"math"
	"strings"
	"sync"
)

// merge is what merging a pair of adjacent tokens gives: the merge's rank
// (its line in the merges list; lower merges first) and the new token's id.
type merge struct {
	rank int32
	id   int32
}

// pairKey packs the ids of a token pair into a map key.
func pairKey(a, b int32) uint64 { return uint64(uint32(a))<<32 | uint64(uint32(b)) }

// noMerge is the rank of a pair that does not merge.
const noMerge = math.MaxInt32

// bpeModel is a byte-level BPE model: the ids of single bytes and the
// merges. It is read-only after construction.
type bpeModel struct {
	byteID [256]int32       // token id of each single byte
	merges map[uint64]merge // by pairKey of the two token ids
	// whole maps a piece's raw bytes straight to a token id, skipping the
	// merges, for models with ignore_merges (Llama 3); nil otherwise.
	whole map[string]int32
}

// heapThreshold is the piece length in bytes from which appendEncode uses
// a heap instead of scanning for the lowest-ranked pair.
const heapThreshold = 64

// appendEncode appends the ids of piece, one pre-token, to dst.
func (m *bpeModel) appendEncode(dst []int, piece string) []int {
	if m.whole != nil {
		if id, ok := m.whole[piece]; ok {
			return append(dst, int(id))
		}
	}
	if len(piece) >= heapThreshold {
		return m.appendEncodeHeap(dst, piece)
	}
	// ids[k] is the k-th symbol; ranks[k] the rank of merging it with
	// ids[k+1]. Both are on the stack for pieces this short.
	var idBuf, rankBuf [heapThreshold]int32
	ids, ranks := idBuf[:0], rankBuf[:0]
	for i := 0; i < len(piece); i++ {
		ids = append(ids, m.byteID[piece[i]])
	}
	if len(ids) == 0 {
		return dst
	}
	ranks = ranks[:len(ids)]
	for k := 0; k+1 < len(ids); k++ {
		ranks[k] = m.rank(ids[k], ids[k+1])
	}
	ranks[len(ids)-1] = noMerge
	for len(ids) > 1 {
		best, at := int32(noMerge), -1
		for k, r := range ranks[:len(ids)-1] {
			if r < best {
				best, at = r, k
			}
		}
		if at < 0 {
			break
		}
		ids[at] = m.merges[pairKey(ids[at], ids[at+1])].id
		copy(ids[at+1:], ids[at+2:])
		copy(ranks[at+1:], ranks[at+2:])
		ids, ranks = ids[:len(ids)-1], ranks[:len(ranks)-1]
		ranks[len(ids)-1] = noMerge
		if at+1 < len(ids) {
			ranks[at] = m.rank(ids[at], ids[at+1])
		} else {
			ranks[at] = noMerge
		}
		if at > 0 {
			ranks[at-1] = m.rank(ids[at-1], ids[at])
		}
	}
	for _, id := range ids {
		dst = append(dst, int(id))
	}
	return dst
}

// rank returns the rank of merging a and b, or noMerge.
func (m *bpeModel) rank(a, b int32) int32 {
	if mg, ok := m.merges[pairKey(a, b)]; ok {
		return mg.rank
	}
	return noMerge
}

// symbol is a node of appendEncodeHeap's doubly linked list of symbols.
type symbol struct {
	id         int32
	prev, next int32 // indexes in the list; -1 at the ends
	gone       bool  // merged into its predecessor
}

// candidate is a possible merge of the symbol at pos with its successor.
type candidate struct {
	rank     int32
	pos      int32
	left, rt int32 // the two ids when the candidate was made, to spot stale ones
}

// appendEncodeHeap is appendEncode for long pieces: O(n log n) with a heap
// ordered by rank, then position, so equal ranks merge leftmost first, as
// Hugging Face and llama.cpp do.
func (m *bpeModel) appendEncodeHeap(dst []int, piece string) []int {
	syms := make([]symbol, 0, len(piece))
	for i := 0; i < len(piece); i++ {
		n := int32(i)
		syms = append(syms, symbol{id: m.byteID[piece[i]], prev: n - 1, next: n + 1})
	}
	if len(syms) == 0 {
		return dst
	}
	syms[len(syms)-1].next = -1
	h := make(candHeap, 0, len(syms))
	for k := 0; k+1 < len(syms); k++ {
		if r := m.rank(syms[k].id, syms[k+1].id); r != noMerge {
			h = append(h, candidate{r, int32(k), syms[k].id, syms[k+1].id})
		}
	}
	h.init()
	for len(h) > 0 {
		c := h.pop()
		a := &syms[c.pos]
		if a.gone || a.id != c.left || a.next < 0 || syms[a.next].id != c.rt {
			continue // stale: one of the two symbols has changed
		}
		b := &syms[a.next]
		a.id = m.merges[pairKey(c.left, c.rt)].id
		b.gone = true
		a.next = b.next
		if a.next >= 0 {
			syms[a.next].prev = c.pos
			if r := m.rank(a.id, syms[a.next].id); r != noMerge {
				h.push(candidate{r, c.pos, a.id, syms[a.next].id})
			}
		}
		if a.prev >= 0 {
			p := &syms[a.prev]
			if r := m.rank(p.id, a.id); r != noMerge {
				h.push(candidate{r, a.prev, p.id, a.id})
			}
		}
	}
	for k := int32(0); k >= 0; k = syms[k].next {
		dst = append(dst, int(syms[k].id))
	}
	return dst
}

// candHeap is a binary min-heap of candidates by (rank, pos), typed so that
// pushes do not allocate through interfaces as container/heap's do.
type candHeap []candidate

func (h candHeap) less(i, j int) bool {
	if h[i].rank != h[j].rank {
		return h[i].rank < h[j].rank
	}
	return h[i].pos < h[j].pos
}

func (h candHeap) init() {
	for i := len(h)/2 - 1; i >= 0; i-- {
		h.down(i)
	}
}

func (h *candHeap) push(c candidate) {
	*h = append(*h, c)
	h.up(len(*h) - 1)
}

func (h *candHeap) pop() candidate {
	old := *h
	top := old[0]
	n := len(old) - 1
	old[0] = old[n]
	*h = old[:n]
	h.down(0)
	return top
}

func (h candHeap) up(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if !h.less(i, p) {
			return
		}
		h[i], h[p] = h[p], h[i]
		i = p
	}
}

func (h candHeap) down(i int) {
	n := len(h)
	for {
		l := 2*i + 1
		if l >= n {
			return
		}
		s := l
		if r := l + 1; r < n && h.less(r, l) {
			s = r
		}
		if !h.less(s, i) {
			return
		}
		h[i], h[s] = h[s], h[i]
		i = s
	}
}

// Piece cache bounds: pieces longer than maxCachedPiece bytes are encoded
// every time (they are rare and would bloat the cache); a shard that
// reaches maxShardEntries is emptied, bounding memory on hostile text.
const (
	cacheShards     = 64
	maxCachedPiece  = 48
	maxShardEntries = 8192
)

// pieceCache maps a pre-token's bytes to its token ids. It is sharded by
// hash, each shard under its own lock, so concurrent encoders rarely
// contend. The cached slices are never modified.
type pieceCache struct {
	seed   maphash.Seed
	shards [cacheShards]cacheShard
}

type cacheShard struct {
	mu sync.RWMutex
	m  map[string][]int
}

func newPieceCache() *pieceCache {
	c := &pieceCache{seed: maphash.MakeSeed()}
	for i := range c.shards {
		c.shards[i].m = make(map[string][]int)
	}
	return c
}

func (c *pieceCache) shard(piece string) *cacheShard {
	return &c.shards[maphash.String(c.seed, piece)%cacheShards]
}

// get returns the cached ids of piece.
func (c *pieceCache) get(sh *cacheShard, piece string) ([]int, bool) {
	sh.mu.RLock()
	ids, ok := sh.m[piece]
	sh.mu.RUnlock()
	return ids, ok
}

// put stores the ids of piece; ids must not be modified afterwards. The
// key is a copy, so the cache does not pin the text piece was cut from.
func (c *pieceCache) put(sh *cacheShard, piece string, ids []int) {
	piece = strings.Clone(piece)
	sh.mu.Lock()
	if len(sh.m) >= maxShardEntries {
		clear(sh.m)
	}
	sh.m[piece] = ids
	sh.mu.Unlock()
}
