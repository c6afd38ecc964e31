package scan

import (
	"encoding/binary"
	"io"
	"runtime"
	"sync/atomic"

	"github.com/kseg/kseg/inspect/record"
)

// ReadAheadMinBytes is the smallest log IterOptions.ReadAhead reads on a
// second goroutine: below it the goroutine's start and hand-overs cost
// more than they save, and a data dir of small segments already keeps
// every core busy with one segment each.
const ReadAheadMinBytes = 8 << 20

// aheadChunks is how many chunks the read-ahead cycles through: the one
// the scan holds, and up to three read ahead of it.
const aheadChunks = 4

// aheadGroupBytes is about how many bytes of entries make one group, the
// unit of checksum work either goroutine claims.
const aheadGroupBytes = 16 << 10

// readAhead puts the second core to work inside one segment. A goroutine
// (the helper) reads the log ahead of the scan in chunks of whole entries,
// following the chain of length fields from where the scan stands, and
// hands each chunk over as the window the scan reads; the entries'
// checksums, the bulk of the work, are computed by whichever goroutine
// claims them first: the scan from the front of the chunk it is reading,
// the helper, once it has read ahead as far as its buffers allow, from the
// back of the oldest chunk with work left.
//
// The helper decides nothing. It walks entries with the cursor's first
// rules only to know where a chunk ends (and stops at anything the cursor
// would stop at: damage, the end of the file); the scan still parses every
// header and applies every rule, and takes a checksum only for an entry
// the helper noted at the same position, of the same size and magic. So
// what a scan reports does not depend on whether, or how far, the helper
// ran (TestReadAheadMatchesSequential). Whatever the scan needs that the
// helper did not provide (a header past the chunks, an entry whose bytes
// were skipped, the Resyncer's reads) is read by the scan itself after the
// helper has been stopped, so the two never read the log at once (other
// readers of the same File may: verify's index checks re-read headers
// while the helper runs, which fileio.File allows).
type readAhead struct {
	r         io.ReaderAt
	end       int64 // the log's readable size
	minLeft   int64 // the helper starts only with at least this many bytes left
	chunkSize int   // a chunk's size

	chunks [aheadChunks]aheadChunk
	ready  chan *aheadChunk
	free   chan *aheadChunk
	quit   chan struct{}
	done   chan struct{}

	running bool
	cur     *aheadChunk // the chunk the scan reads (nil: none)
	next    int         // the scan's next entry in cur
	expect  int64       // where entry next starts when the scan went entry by entry
	group   int         // the group of cur the scan is in
	known   int         // the checksums of cur's entries below it are computed
	allOK   bool        // and the entries of the group ending at known all match their stored CRC
	stretch readWindow  // the helper's window for entries larger than a chunk
	sums    int64       // checksums handed out to the scan (tests)
}

// aheadChunk is one read of the helper: buf holds the file bytes [at,
// at+len(buf)); entries are the whole entries the helper found in it, in
// file order, split into groups for the checksum work.
type aheadChunk struct {
	buf     []byte
	at      int64
	entries []aheadEntry
	groups  []int32         // group g is entries[groups[g]:groups[g+1]]
	state   []atomic.Uint32 // group g: groupPending, groupOK or groupMismatch
	claim   atomic.Uint64   // front<<32 | back: the scan took the groups below front, the helper those from back on
}

// The states of a group's checksums. Whoever computes a group also
// compares each checksum with the CRC stored in the same bytes, so that
// for a group whose entries all match the scan needs no entry's result:
// reading them back from the helper's core would cost more than the
// comparison.
const (
	groupPending  = iota // not computed yet
	groupOK              // computed, every entry matches its stored CRC
	groupMismatch        // computed, some entry does not (or its stored CRC is not in the chunk)
)

// aheadEntry is an entry the helper found: where, how large, its magic,
// and (once its group is done) its checksum.
type aheadEntry struct {
	pos   int64
	size  int64
	magic int8
	crc   uint32
}

// newReadAhead returns a read-ahead of chunks of window bytes, used for
// logs with at least minLeft bytes left to read.
func newReadAhead(window int, minLeft int64) *readAhead {
	return &readAhead{minLeft: minLeft, chunkSize: window}
}

// reset points a at another log, stopping the helper.
func (a *readAhead) reset(r io.ReaderAt, end int64) {
	a.stop()
	a.r, a.end = r, end
}

// start launches the helper at entry position pos.
func (a *readAhead) start(pos int64) {
	a.ready = make(chan *aheadChunk, aheadChunks)
	a.free = make(chan *aheadChunk, aheadChunks)
	a.quit = make(chan struct{})
	a.done = make(chan struct{})
	for i := range a.chunks {
		if a.chunks[i].buf == nil {
			a.chunks[i].buf = make([]byte, 0, a.chunkSize)
		}
		a.free <- &a.chunks[i]
	}
	a.running, a.cur = true, nil
	go a.help(pos)
}

// stop ends the helper and waits for it: every chunk is the scan's again.
// The chunk the scan was reading stays readable, but its checksums are no
// longer handed out (some may never have been computed).
func (a *readAhead) stop() {
	if !a.running {
		return
	}
	close(a.quit)
	<-a.done
	a.running = false
}

// window makes the chunk holding [pos, pos+n) the scan's window: the next
// chunk the helper hands over (starting the helper at pos when it is not
// running and enough of the log is left). False when the helper cannot
// provide it; it is then stopped, and the caller reads for itself.
func (a *readAhead) window(w *readWindow, pos, n int64) bool {
	if !a.running {
		if a.end-pos < a.minLeft || n > int64(a.chunkSize) {
			return false
		}
		w.buf = w.own[:0] // what it held may be a chunk, about to be refilled
		a.start(pos)
	}
	c, ok := a.receive()
	if a.cur != nil {
		a.free <- a.cur
		a.cur = nil
	}
	if !ok || pos < c.at || pos+n > c.at+int64(len(c.buf)) {
		if ok {
			a.free <- c
		}
		a.stop()
		return false
	}
	a.cur, a.next, a.group, a.known, a.allOK = c, 0, 0, 0, false
	w.buf, w.at = c.buf, c.at
	return true
}

// sum returns the checksum of the entry at pos (size bytes, magic, stored
// CRC stored) when the helper noted that entry in the chunk the scan
// reads, computing its group first when no goroutine has claimed it.
//
// The chunk is the window the scan parsed the entry's header from, so an
// entry that starts where the previous one the scan asked about ended, in
// the same chunk, is the helper's next entry, of the same size and magic
// (both read the same bytes); the first entry of a chunk, and any other,
// is looked up and compared.
func (a *readAhead) sum(pos, size int64, magic int8, stored uint32) (uint32, bool) {
	c := a.cur
	if !a.running || c == nil {
		return 0, false
	}
	if pos != a.expect || a.next == 0 || a.next == len(c.entries) {
		if !a.find(pos, size, magic) {
			return 0, false
		}
	}
	i := a.next
	a.next, a.expect = i+1, pos+size
	if i >= a.known {
		a.settle(c, i)
	}
	a.sums++
	if a.allOK {
		return stored, true
	}
	return c.entries[i].crc, true
}

// find moves the scan's entry to the one at pos, checking that the helper
// noted it with the same size and magic.
func (a *readAhead) find(pos, size int64, magic int8) bool {
	c := a.cur
	for a.next < len(c.entries) && c.entries[a.next].pos < pos {
		a.next++
	}
	if a.next == len(c.entries) {
		return false
	}
	e := &c.entries[a.next]
	return e.pos == pos && e.size == size && e.magic == magic
}

// settle makes sure the checksums of the group holding entry i are
// computed: by the scan, when no goroutine has claimed it, else by waiting
// for the helper.
func (a *readAhead) settle(c *aheadChunk, i int) {
	for int(c.groups[a.group+1]) <= i {
		a.group++
	}
	g := uint64(a.group)
	for {
		v := c.claim.Load()
		front, back := v>>32, v&(1<<32-1)
		if front > g {
			break // the scan computed it
		}
		if front < back {
			if c.claim.CompareAndSwap(v, (front+1)<<32|back) {
				c.checksum(int(front))
			}
			continue
		}
		for c.state[g].Load() == groupPending { // the helper is computing it
			runtime.Gosched()
		}
		break
	}
	a.known, a.allOK = int(c.groups[g+1]), c.state[g].Load() == groupOK
}

// checksum computes the checksums of group g and publishes its state.
func (c *aheadChunk) checksum(g int) {
	state := uint32(groupOK)
	for i := c.groups[g]; i < c.groups[g+1]; i++ {
		e := &c.entries[i]
		off := e.pos - c.at
		if off+e.size > int64(len(c.buf)) {
			state = groupMismatch // a stretch: computed already, its stored CRC may lie past the chunk
			continue
		}
		entry := c.buf[off : off+e.size]
		e.crc = record.ComputeCRC(e.magic, entry)
		if e.crc != record.StoredCRC(e.magic, entry) {
			state = groupMismatch
		}
	}
	c.state[g].Store(state)
}

// help is the helper: it reads chunks while a buffer is free, and
// otherwise claims checksum groups from the back of the oldest chunk
// handed over with any left; it returns at the end of the chain of
// entries, at anything the scan must decide, or when stopped.
func (a *readAhead) help(pos int64) {
	defer close(a.done)
	var pending []*aheadChunk // handed over, oldest first
	for pos >= 0 {
		var c *aheadChunk
		select {
		case c = <-a.free:
		case <-a.quit:
			close(a.ready)
			return
		default:
			if !a.claimBack(&pending) {
				select {
				case c = <-a.free:
				case <-a.quit:
					close(a.ready)
					return
				}
			}
		}
		if c == nil {
			continue
		}
		if len(pending) > 0 && pending[0] == c {
			pending = pending[1:]
		}
		next, err := a.fill(c, pos)
		if err != nil {
			break // the scan reads the same bytes and reports the error
		}
		pending = append(pending, c)
		a.ready <- c
		pos = next
	}
	// Nothing more to read: the scan reads anything past the last chunk
	// itself. Finish the checksums of what was handed over, unless stopped.
	close(a.ready)
	for a.claimBack(&pending) {
		select {
		case <-a.quit:
			return
		default:
		}
	}
}

// claimBack computes one group from the back of the oldest pending chunk
// with groups left; false when there was none.
func (a *readAhead) claimBack(pending *[]*aheadChunk) bool {
	for len(*pending) > 0 {
		c := (*pending)[0]
		v := c.claim.Load()
		front, back := v>>32, v&(1<<32-1)
		if front >= back {
			*pending = (*pending)[1:]
			continue
		}
		if c.claim.CompareAndSwap(v, front<<32|(back-1)) {
			c.checksum(int(back - 1))
		}
		return true
	}
	return false
}

// fill reads the chunk starting at the entry at pos and notes its whole
// entries; it returns where the next chunk starts, or -1 when the helper
// is done (the end of the log, or an entry the cursor would stop at).
func (a *readAhead) fill(c *aheadChunk, pos int64) (int64, error) {
	size := int64(cap(c.buf))
	start := pos &^ (ReadAlignment - 1)
	c.entries, c.groups = c.entries[:0], append(c.groups[:0], 0)
	next, groupBytes := int64(-1), int64(0)
	for {
		n := min(size, a.end-start)
		c.buf = c.buf[:n]
		if k, err := a.r.ReadAt(c.buf, start); int64(k) < n {
			c.buf = c.buf[:0]
			return -1, err
		}
		c.at = start
		for {
			off := pos - start
			if a.end-pos < record.HeaderSizeUpToMagic+1 {
				break // the end, or the cursor's rule 1
			}
			if off+record.HeaderSizeUpToMagic > n {
				next = pos
				break
			}
			length := int32(binary.BigEndian.Uint32(c.buf[off+8:]))
			magic := int8(c.buf[off+16])
			entry := record.LogOverhead + int64(length)
			if length < record.MinEntryLength || magic < 0 || magic > 2 || entry > a.end-pos {
				break // damage: the scan decides
			}
			if off+entry > n {
				if entry > size {
					// Larger than a chunk: checksummed here, in pieces.
					a.noteStretch(c, pos, entry, magic)
					next = pos + entry
				} else if len(c.entries) > 0 {
					next = pos
				} else {
					start = pos // read again from the entry itself
					continue
				}
				break
			}
			c.entries = append(c.entries, aheadEntry{pos: pos, size: entry, magic: magic})
			if groupBytes += entry; groupBytes >= aheadGroupBytes {
				c.groups, groupBytes = append(c.groups, int32(len(c.entries))), 0
			}
			pos += entry
		}
		break
	}
	if last := c.groups[len(c.groups)-1]; int(last) < len(c.entries) {
		c.groups = append(c.groups, int32(len(c.entries)))
	}
	groups := len(c.groups) - 1
	if cap(c.state) < groups {
		c.state = make([]atomic.Uint32, groups)
	}
	c.state = c.state[:groups]
	for i := range c.state {
		c.state[i].Store(groupPending)
	}
	c.claim.Store(uint64(groups))
	return next, nil
}

// noteStretch notes the entry at pos, which does not fit a chunk, as a
// group of its own, its checksum computed now by reading it in pieces.
func (a *readAhead) noteStretch(c *aheadChunk, pos, entry int64, magic int8) {
	if last := c.groups[len(c.groups)-1]; int(last) < len(c.entries) {
		c.groups = append(c.groups, int32(len(c.entries)))
	}
	if cap(a.stretch.buf) == 0 {
		a.stretch.buf = make([]byte, 0, a.chunkSize)
	}
	a.stretch.reset(a.r, "", a.end)
	crc, err := a.stretch.crc(magic, pos+record.CRCStart(magic), pos+entry)
	if err != nil {
		return // not noted: the scan reads it and reports the error
	}
	c.entries = append(c.entries, aheadEntry{pos: pos, size: entry, magic: magic, crc: crc})
	c.groups = append(c.groups, int32(len(c.entries)))
	// Its group is claimed like any other: checksum finds the entry past
	// the chunk, keeps the checksum computed here and marks the group
	// groupMismatch, so the scan takes this entry's own checksum.
}

// aheadSpins is how many times the scan polls for the next chunk before
// it sleeps on the channel: when the helper is the slower of the two (the
// copy out of the page cache bounds it on large batches) the scan waits
// for every chunk, and waking a sleeping goroutine costs tens of
// microseconds on a virtual machine, as much as reading the chunk.
const aheadSpins = 400

// receive is the next chunk the helper hands over (false: none will come).
func (a *readAhead) receive() (*aheadChunk, bool) {
	for range aheadSpins {
		select {
		case c, ok := <-a.ready:
			return c, ok
		default:
			runtime.Gosched()
		}
	}
	c, ok := <-a.ready
	return c, ok
}
