package sim

// This file is the KV cache in blocks, as vLLM's block manager keeps it:
// a sequence holds ceil(tokens / blockSize) blocks; with prefix caching,
// full prompt blocks are known by a hash chain and outlive their sequence
// on an LRU free list, so a later prompt with the same leading blocks
// reuses them instead of prefilling them again.

// cachedBlock is a full block whose content is known: by its chain hash
// it can be found and shared. ref counts the sequences holding it; a block
// nobody holds sits on the LRU list until it is reused or evicted.
type cachedBlock struct {
	hash       uint64
	ref        int
	prev, next *cachedBlock // LRU links while ref == 0
}

// kvCache counts the blocks of a KV budget and, with prefix caching, keeps
// the blocks whose content is known. A block is in one of three states:
// held (by one or more running sequences; counted once in used), cached
// and free (on the LRU list, reusable by hash, evictable), or blank (free,
// no content). It is not safe for concurrent use.
type kvCache struct {
	blockSize int
	total     int  // blocks in the budget
	caching   bool // prefix caching on

	used   int                     // blocks held; above total only for a lone oversized sequence
	byHash map[uint64]*cachedBlock // every cached block, held or free
	lru    cachedBlock             // sentinel: lru.next is the least recently used free block
	nlru   int

	queries, hits int64 // prompt tokens looked up and found, for /metrics
}

func newKVCache(budgetTokens, blockSize int, caching bool) *kvCache {
	c := &kvCache{blockSize: blockSize, total: max(1, budgetTokens/blockSize), caching: caching}
	c.lru.next, c.lru.prev = &c.lru, &c.lru
	if caching {
		c.byHash = map[uint64]*cachedBlock{}
	}
	return c
}

// blocks is how many blocks hold n tokens.
func (c *kvCache) blocks(n int) int { return (n + c.blockSize - 1) / c.blockSize }

// free is how many blocks can be taken now: blank ones and cached free
// ones (by evicting them).
func (c *kvCache) free() int { return max(0, c.total-c.used) }

// match returns how many of hashes, from the first, are cached (held or
// free), and how many of those are free (taking them costs free blocks).
// It changes nothing.
func (c *kvCache) match(hashes []uint64) (found, revive int) {
	if !c.caching {
		return 0, 0
	}
	for _, h := range hashes {
		b := c.byHash[h]
		if b == nil {
			break
		}
		found++
		if b.ref == 0 {
			revive++
		}
	}
	return found, revive
}

// cachedPrefix is how many of q's prompt blocks a lookup may reuse when q
// is admitted with fill tokens to compute: at least one token is always
// computed (it yields the next token), so a prompt found whole reuses all
// but its last block.
func (c *kvCache) cachedPrefix(q *seq, fill int) []uint64 {
	return q.hashes[:min(len(q.hashes), (fill-1)/c.blockSize)]
}

// admit gives q the blocks for its fill tokens (prompt + generated so
// far): the cached leading blocks it shares, blank or evicted blocks for
// the rest. It reports false, changing nothing, when they do not fit the
// free blocks, unless alone is set (nothing else runs): then q takes what
// it needs even beyond the budget. On success q.prefilled is the cached
// tokens, whose prefill q skips.
func (c *kvCache) admit(q *seq, alone bool) bool {
	fill := q.prompt + q.generated
	hashes := c.cachedPrefix(q, fill)
	found, revive := c.match(hashes)
	need := c.blocks(fill) - found
	if need+revive > c.free() && !alone {
		return false
	}
	for _, h := range hashes[:found] {
		b := c.byHash[h]
		if b.ref == 0 {
			c.unlink(b)
			c.used++
		}
		b.ref++
		q.blocks = append(q.blocks, b)
	}
	c.alloc(need)
	q.own += need
	q.fill = fill
	q.prefilled = found * c.blockSize
	q.hashed = found
	if c.caching {
		c.queries += int64(fill)
		c.hits += int64(q.prefilled)
	}
	return true
}

// grow gives q one more block, if one is free or q is alone.
func (c *kvCache) grow(q *seq, alone bool) bool {
	if c.free() == 0 && !alone {
		return false
	}
	c.alloc(1)
	q.own++
	return true
}

// alloc takes n blocks: blank ones first, then cached free ones, least
// recently used first (their content is lost). Past the budget (a lone
// oversized sequence) it takes blocks that do not exist.
func (c *kvCache) alloc(n int) {
	for evict := n - (c.total - c.used - c.nlru); evict > 0 && c.nlru > 0; evict-- {
		b := c.lru.next
		c.unlink(b)
		delete(c.byHash, b.hash)
	}
	c.used += n
}

// commit makes q's computed full prompt blocks findable by hash: those
// its prefill has passed. A block whose hash another sequence registered
// first stays q's own, unshared.
func (c *kvCache) commit(q *seq) {
	if !c.caching {
		return
	}
	for ; q.hashed < len(q.hashes) && (q.hashed+1)*c.blockSize <= q.prefilled; q.hashed++ {
		h := q.hashes[q.hashed]
		if c.byHash[h] != nil {
			continue
		}
		b := &cachedBlock{hash: h, ref: 1}
		c.byHash[h] = b
		q.blocks = append(q.blocks, b)
		q.own--
	}
}

// release frees every block q holds. Cached blocks nobody else holds keep
// their content on the LRU list; q's last blocks go first, so they are
// evicted before the leading ones that more prompts share.
func (c *kvCache) release(q *seq) {
	for i := len(q.blocks) - 1; i >= 0; i-- {
		b := q.blocks[i]
		b.ref--
		if b.ref == 0 {
			c.used--
			c.pushMRU(b)
		}
	}
	c.used -= q.own
	clear(q.blocks)
	q.blocks = q.blocks[:0]
	q.own = 0
	q.hashed = 0
}

func (c *kvCache) unlink(b *cachedBlock) {
	b.prev.next, b.next.prev = b.next, b.prev
	b.prev, b.next = nil, nil
	c.nlru--
}

func (c *kvCache) pushMRU(b *cachedBlock) {
	b.prev, b.next = c.lru.prev, &c.lru
	c.lru.prev.next = b
	c.lru.prev = b
	c.nlru++
}

// blockHasher turns a prompt's token keys into the chain hashes of its
// full blocks: h_i = mix(FNV-1a(h_{i-1}, keys of block i)), so a block's
// hash names its content and everything before it.
type blockHasher struct {
	size   int
	n      int    // keys in the current block
	cur    uint64 // running hash of the current block
	prev   uint64 // hash of the last full block
	hashes []uint64
	mark   uint64 // xor'ed into the next key: it starts a message
}

func newBlockHasher(size int) *blockHasher {
	return &blockHasher{size: size, cur: fnvOffset, prev: fnvOffset}
}

// Keys of the simulated chat template's tokens, apart from content ids
// (which are below 1<<62).
const (
	keySpecial  = 1 << 63 // template tokens: header or footer
	keyBoundary = 1 << 62 // with the role's kind << 32, xor'ed into a message's first key
	keyFooter   = 0xff    // kind of the footer tokens
)

// startMessage marks the next key as the start of a role's message, so
// that the same text split into messages differently, or sent by another
// role, hashes differently.
func (b *blockHasher) startMessage(role string) { b.mark = keyBoundary | roleKind(role)<<32 }

// roleKind is 30 bits of a role's hash.
func roleKind(role string) uint64 { return hashString(fnvOffset, role) & 0x3fffffff }

func (b *blockHasher) add(key uint64) {
	key ^= b.mark
	b.mark = 0
	b.cur = hashUint64(b.cur, key)
	b.n++
	if b.n == b.size {
		b.prev = mix(b.cur)
		b.hashes = append(b.hashes, b.prev)
		b.cur, b.n = b.prev, 0
	}
}

// header adds the template's first k tokens of a role's message.
func (b *blockHasher) header(role string, k int) {
	kind := roleKind(role)
	for i := range k {
		b.add(keySpecial | kind<<8 | uint64(i))
	}
}

func (b *blockHasher) footer(k int) {
	for i := range k {
		b.add(keySpecial | keyFooter<<40 | uint64(i))
	}
}
