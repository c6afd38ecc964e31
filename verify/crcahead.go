package verify

import (
	"encoding/binary"
	"io"
	"sync/atomic"

	"github.com/kseg/kseg/inspect"
	"github.com/kseg/kseg/inspect/record"
)

// Checksums and reads on a second core. The log check is one sequential
// walk: it reads a window, parses each batch header, checksums the batch
// and hands it to the offset tracker, the index checks and the recovery
// emulation. On small batches the copy out of the page cache and the
// checksums are about half of that work, and one core cannot keep up with
// the read+CRC limit. crcAhead moves both to a helper goroutine one window
// ahead of the walk:
//
//   - when the walk moves to the window read ahead, it asks the helper
//     for the next one: the window holding the batch where the chain of
//     length fields left the current window. The helper reads it, follows
//     the chain from there, noting each entry that lies whole in the
//     window and could be a batch (magic 0, 1 or 2, long enough to hold
//     its CRC field), and computes each noted entry's checksum exactly as
//     window.crc would (record.UpdateCRC over the same bytes);
//   - the walk takes a checksum only for the batch at the same position,
//     of the same size and magic; anything else (damage, a batch larger
//     than the window, a resync) is read and computed in the walk as
//     before, after waiting until the helper holds no window, and the
//     other readers of the file (resync, records of a batch larger than
//     the window, the index checks' scans) wait the same way
//     (window.reader): the File and its page-cache bookkeeping are never
//     used by two goroutines at once.
//
// Every decision stays in the walk, so the findings and their order are
// those of the sequential check (TestCRCAheadMatchesSequential). A
// checksum is a function of the bytes alone, so a noted entry that turns
// out not to be a batch costs only time.

// crcEntry is one entry noted in a window: its position and size in the
// file and its magic.
type crcEntry struct {
	pos, size int64
	magic     int8
}

// aheadWindow is one window buffer of the pipeline and what was noted in
// it. Whoever holds it writes it: the helper from the send on work until
// it sends on done, the walk otherwise.
//
// The checksums are shared out in chunks of crcChunk entries: the helper
// claims chunks from the first on, and the walk, when it needs a checksum
// whose chunk nobody has claimed yet, claims and computes chunks itself.
// So when the helper falls behind (its reads and checksums are more work
// than the walk's parsing), both cores checksum.
type aheadWindow struct {
	buf     []byte
	at, n   int64 // buf[:n] holds the file bytes [at, at+n)
	fill    bool  // for the helper: read the window where the chain left the last one it read
	entries []crcEntry
	crcs    []uint32 // crcs[i] is entries[i]'s checksum, once its chunk is done
	end     int64    // where the chain of entries left the window
	next    int      // lookup cursor into entries

	claimed atomic.Int32    // chunks claimed so far
	chunks  []atomic.Uint32 // chunks[c] != 0: chunk c's checksums are in
	seen    int             // the walk's last chunk known to be in (no atomics for the rest of it)

	read, done         chan struct{} // the helper sends on read once the window is read and noted, on done once it is finished with it
	readWait, doneWait bool          // sent to the helper, read or done not yet received
}

// crcChunk is how many entries' checksums are claimed at once.
const crcChunk = 8

// crcAhead holds the window buffers of a worker and its helper goroutine.
// It is reused across the segments a worker checks.
type crcAhead struct {
	wins [aheadWindows]aheadWindow
	work chan *aheadWindow

	// Set by the walk while the helper holds no window, then the helper's.
	r       io.ReaderAt // the file being checked
	size    int64
	from    int64 // where the next window to fill starts its chain
	stalled bool  // a window filled from "from" held no entry: fill no more
}

// aheadWindows is how many windows a worker's pipeline holds: the one the
// walk reads and up to aheadWindows-1 the helper reads ahead, so that
// neither waits for the other at every window.
const aheadWindows = 6

func newCRCAhead(window int) *crcAhead {
	a := &crcAhead{work: make(chan *aheadWindow, aheadWindows)}
	for i := range a.wins {
		a.wins[i] = aheadWindow{buf: make([]byte, window), read: make(chan struct{}, 1), done: make(chan struct{}, 1)}
	}
	go a.helper()
	return a
}

// close ends the helper goroutine.
func (a *crcAhead) close() { close(a.work) }

func (a *crcAhead) helper() {
	for p := range a.work {
		if p.fill {
			a.read(p)
			p.share()
		}
		p.read <- struct{}{}
		for p.claimNext() {
		}
		p.done <- struct{}{}
	}
}

// share readies the checksums of the noted entries to be claimed.
func (p *aheadWindow) share() {
	n := (len(p.entries) + crcChunk - 1) / crcChunk
	if cap(p.chunks) < n {
		p.chunks = make([]atomic.Uint32, n)
	}
	p.chunks = p.chunks[:n]
	for i := range p.chunks {
		p.chunks[i].Store(0)
	}
	if cap(p.crcs) < len(p.entries) {
		p.crcs = make([]uint32, len(p.entries), cap(p.entries))
	}
	p.crcs = p.crcs[:len(p.entries)]
	p.claimed.Store(0)
	p.seen = -1
}

// claimNext claims the next chunk nobody has claimed and computes its
// checksums; false when every chunk is claimed.
func (p *aheadWindow) claimNext() bool {
	c := p.claimed.Load()
	for {
		if int(c) >= len(p.chunks) {
			return false
		}
		if p.claimed.CompareAndSwap(c, c+1) {
			break
		}
		c = p.claimed.Load()
	}
	from := int(c) * crcChunk
	for i := from; i < min(from+crcChunk, len(p.entries)); i++ {
		e := p.entries[i]
		off := e.pos - p.at
		p.crcs[i] = record.UpdateCRC(e.magic, 0, p.buf[off+record.CRCStart(e.magic):off+e.size])
	}
	p.chunks[c].Store(1)
	return true
}

// crcOf is entries[i]'s checksum: computed by the helper, or by the walk
// claiming chunks up to i's, or waited for while the helper computes it.
func (p *aheadWindow) crcOf(i int) uint32 {
	c := i / crcChunk
	if c == p.seen {
		return p.crcs[i]
	}
	if p.chunks[c].Load() == 0 {
		for int(p.claimed.Load()) <= c && p.claimNext() {
		}
		if p.chunks[c].Load() == 0 {
			// The helper is computing this chunk: rather than wait for a
			// goroutine the kernel may have descheduled, compute the one
			// checksum here too.
			e := p.entries[i]
			off := e.pos - p.at
			return record.UpdateCRC(e.magic, 0, p.buf[off+record.CRCStart(e.magic):off+e.size])
		}
	}
	p.seen = c
	return p.crcs[i]
}

// read fills p with the window holding the chain from a.from, notes its
// entries and moves a.from to where the chain left it. A failed read, or
// a window without an entry, leaves p without entries and stops the
// filling: the walk's own read then reports the error or the damage.
func (a *crcAhead) read(p *aheadWindow) {
	p.n, p.entries, p.next = 0, p.entries[:0], 0
	if a.stalled || a.from+record.HeaderSizeUpToMagic > a.size {
		return
	}
	start := inspect.ReadStart(a.from, min(int64(record.HeaderReadSize), a.size-a.from), int64(len(p.buf)))
	want := min(int64(len(p.buf)), a.size-start)
	if k, _ := a.r.ReadAt(p.buf[:want], start); int64(k) < want {
		a.stalled = true
		return
	}
	p.at, p.n = start, want
	p.note(a.from)
	if len(p.entries) == 0 {
		a.stalled = true
	}
	a.from = p.end
}

// waitRead makes sure the helper has read and noted p.
func (p *aheadWindow) waitRead() {
	if p.readWait {
		<-p.read
		p.readWait = false
	}
}

// wait makes sure the helper is done with p.
func (p *aheadWindow) wait() {
	p.waitRead()
	if p.doneWait {
		<-p.done
		p.doneWait = false
	}
}

func (p *aheadWindow) covers(pos, n int64) bool {
	return p.n > 0 && pos >= p.at && pos+n <= p.at+p.n
}

// note follows the chain of length fields from pos, noting each entry
// that lies whole in p, and sets where the chain leaves p. Only the
// length and magic fields are read: whether an entry is a sound batch is
// the walk's decision, made later on the same bytes.
func (p *aheadWindow) note(pos int64) {
	p.entries, p.next = p.entries[:0], 0
	defer func() { p.end = pos }()
	for {
		off := pos - p.at
		if off+record.HeaderSizeUpToMagic > p.n {
			return
		}
		size := record.LogOverhead + int64(int32(binary.BigEndian.Uint32(p.buf[off+8:])))
		magic := int8(p.buf[off+16])
		if magic < 0 || magic > 2 || size < record.CRCStart(magic) || off+size > p.n {
			return
		}
		p.entries = append(p.entries, crcEntry{pos: pos, size: size, magic: magic})
		pos += size
	}
}

// lookup returns the checksum noted for the entry [pos, pos+size) of the
// given magic. The helper must have read p. Lookups go up in position,
// as the walk does.
func (p *aheadWindow) lookup(magic int8, pos, size int64) (uint32, bool) {
	for p.next < len(p.entries) && p.entries[p.next].pos < pos {
		p.next++
	}
	if p.next >= len(p.entries) {
		return 0, false
	}
	e := &p.entries[p.next]
	if e.pos != pos || e.size != size || e.magic != magic {
		return 0, false
	}
	return p.crcOf(p.next), true
}

// aheadState is a window's use of the pipeline for one file: cur is the
// window the walk reads from (window.buf is cur.buf), queue the windows
// the helper fills ahead, in file order.
type aheadState struct {
	a     *crcAhead
	cur   *aheadWindow
	queue []*aheadWindow
	taken int64 // checksums taken from the helper (tests)
}

// useAhead makes w read through a's window buffers and take its checksums
// from a's helper.
func (w *window) useAhead(a *crcAhead) {
	s := &aheadState{a: a, cur: &a.wins[0], queue: make([]*aheadWindow, 0, aheadWindows)}
	s.quiesce()
	for i := range a.wins {
		a.wins[i].n, a.wins[i].entries, a.wins[i].next = 0, a.wins[i].entries[:0], 0
	}
	a.r, a.size = w.r, w.size
	w.ahead = s
	w.buf, w.at, w.n = s.cur.buf, 0, 0
}

// quiesce waits until the helper holds no window.
func (s *aheadState) quiesce() {
	for i := range s.a.wins {
		s.a.wins[i].wait()
	}
}

func (s *aheadState) send(p *aheadWindow, fill bool) {
	p.fill = fill
	p.readWait, p.doneWait = true, true
	s.a.work <- p
}

// crc returns the helper's checksum of the entry [pos, pos+size), if it
// noted that entry.
func (s *aheadState) crc(magic int8, pos, size int64) (uint32, bool) {
	s.cur.waitRead()
	c, ok := s.cur.lookup(magic, pos, size)
	if !ok && len(s.queue) > 0 {
		p := s.queue[0]
		p.waitRead()
		if p.covers(pos, size) {
			c, ok = p.lookup(magic, pos, size)
		}
	}
	if ok {
		s.taken++
	}
	return c, ok
}

// bytesAhead is window.bytes past the current window: the next window
// read ahead when it holds the bytes, else a read as the sequential window
// makes. After a header read (a batch starts at pos) in a window of its
// own, the entries from pos go to the helper to checksum, and the helper
// fills the other windows from where their chain leaves this one.
func (w *window) bytesAhead(pos, n int64) ([]byte, error) {
	s := w.ahead
	if len(s.queue) > 0 {
		p := s.queue[0]
		p.waitRead()
		if p.covers(pos, n) {
			old := s.cur
			s.cur = p
			s.queue = append(s.queue[:0], s.queue[1:]...)
			w.buf, w.at, w.n = p.buf, p.at, p.n
			old.wait()
			s.send(old, true) // the helper fills it next
			s.queue = append(s.queue, old)
			return w.buf[pos-w.at : pos-w.at+n], nil
		}
	}
	s.quiesce()
	s.queue = s.queue[:0]
	p := s.cur
	p.n, p.entries, p.next = 0, p.entries[:0], 0
	if err := w.read(pos, n); err != nil {
		return nil, err
	}
	p.at, p.n = w.at, w.n
	if n <= record.HeaderReadSize {
		p.note(pos)
		if len(p.entries) > 0 {
			p.share()
			s.send(p, false)
			s.a.from, s.a.stalled = p.end, false
			for i := range s.a.wins {
				if q := &s.a.wins[i]; q != p {
					s.send(q, true)
					s.queue = append(s.queue, q)
				}
			}
		}
	}
	return w.buf[pos-w.at : pos-w.at+n], nil
}

// reader is the file w reads, for reads outside the window: with a helper,
// each waits until the helper holds no window.
func (w *window) reader() io.ReaderAt {
	if w.ahead == nil {
		return w.r
	}
	return quiescingReader{w.ahead, w.r}
}

type quiescingReader struct {
	s *aheadState
	r io.ReaderAt
}

func (q quiescingReader) ReadAt(p []byte, off int64) (int, error) {
	q.s.quiesce()
	return q.r.ReadAt(p, off)
}

// crcAheadMinBytes is the smallest .log whose checksums go to a helper
// goroutine (when Options allow it): smaller logs are checked on one core,
// so that -j keeps meaning cores over a data dir of small segments, where
// the workers already keep every core busy.
const crcAheadMinBytes = 8 << 20

// crcAheadByDefault turns the helper on for Run's own choice (Options
// without crcAhead). It is off: on 2 cores, over one 256 MiB segment, the
// helper made verify slower on ~9 KiB batches in all five series measured
// (0.66-0.78x the speed of the check without it) and on ~0.32 KiB batches
// in four of five; where it was faster it gained 3-27%, for 19-58% more
// CPU time (docs/performance.md, run J). Tests still force it on
// (crcAhead > 0) to keep it matching the walk.
const crcAheadByDefault = false

// crcAheadFor reports whether the log check of a .log of size bytes takes
// its checksums from a helper goroutine.
func (o *Options) crcAheadFor(size int64) bool {
	switch {
	case o.crcAhead < 0:
		return false
	case o.crcAhead > 0:
		return true
	}
	return crcAheadByDefault && o.spareCores && size >= crcAheadMinBytes
}
