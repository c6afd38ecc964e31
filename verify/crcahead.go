package verify

import (
	"encoding/binary"

	"github.com/kseg/kseg/inspect"
)

// Checksums on a second core. The log check is one sequential walk: it
// reads a window, parses each batch header, checksums the batch and hands
// it to the offset tracker, the index checks and the recovery emulation.
// On small batches the checksum is about a third of that work, and one
// core cannot keep up with the read+CRC limit. crcAhead moves the
// checksums to another goroutine one window ahead of the walk:
//
//   - the walk's goroutine still makes every read (the File, its
//     page-cache bookkeeping and the error messages stay single-threaded)
//     and, right after reading a window, follows the chain of length
//     fields from the batch it was asked for, noting each entry that lies
//     whole in the window and could be a batch (magic 0, 1 or 2, long
//     enough to hold its CRC field);
//   - the helper computes the checksum of each noted entry, exactly as
//     window.crc would (inspect.UpdateCRC over the same bytes);
//   - the walk reads the next window (from where the chain left the
//     current one) while the helper checksums the current one, and takes
//     a checksum only for the batch at the same position, of the same
//     size and magic; anything else (damage, a batch larger than the
//     window, a resync) is computed in the walk as before.
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

// aheadWindow is one window buffer of the pipeline and what was noted in it.
type aheadWindow struct {
	buf     []byte
	at, n   int64         // buf[:n] holds the file bytes [at, at+n)
	entries []crcEntry    // written by the walk before the helper gets the window
	crcs    []uint32      // crcs[i] is entries[i]'s checksum, written by the helper
	end     int64         // where the chain of entries left the window
	next    int           // lookup cursor into entries
	done    chan struct{} // the helper sends once the checksums are in
	pending bool          // sent to the helper, done not yet received
}

// crcAhead holds the two window buffers of a worker and its helper
// goroutine. It is reused across the segments a worker checks.
type crcAhead struct {
	wins [2]aheadWindow
	work chan *aheadWindow
}

func newCRCAhead(window int) *crcAhead {
	a := &crcAhead{work: make(chan *aheadWindow, 2)}
	for i := range a.wins {
		a.wins[i] = aheadWindow{buf: make([]byte, window), done: make(chan struct{}, 1)}
	}
	go a.helper()
	return a
}

// close ends the helper goroutine.
func (a *crcAhead) close() { close(a.work) }

func (a *crcAhead) helper() {
	for p := range a.work {
		p.crcs = p.crcs[:0]
		for _, e := range p.entries {
			off := e.pos - p.at
			p.crcs = append(p.crcs, inspect.UpdateCRC(e.magic, 0, p.buf[off+inspect.CRCStart(e.magic):off+e.size]))
		}
		p.done <- struct{}{}
	}
}

// wait makes sure the helper is done with p.
func (p *aheadWindow) wait() {
	if p.pending {
		<-p.done
		p.pending = false
	}
}

func (p *aheadWindow) covers(pos, n int64) bool {
	return p.n > 0 && pos >= p.at && pos+n <= p.at+p.n
}

// note follows the chain of length fields from pos, noting each entry
// that lies whole in p, and returns where the chain leaves p. Only the
// length and magic fields are read: whether an entry is a sound batch is
// the walk's decision, made later on the same bytes.
func (p *aheadWindow) note(pos int64) int64 {
	p.entries, p.next = p.entries[:0], 0
	for {
		off := pos - p.at
		if off+inspect.HeaderSizeUpToMagic > p.n {
			return pos
		}
		size := inspect.LogOverhead + int64(int32(binary.BigEndian.Uint32(p.buf[off+8:])))
		magic := int8(p.buf[off+16])
		if magic < 0 || magic > 2 || size < inspect.CRCStart(magic) || off+size > p.n {
			return pos
		}
		p.entries = append(p.entries, crcEntry{pos: pos, size: size, magic: magic})
		pos += size
	}
}

// lookup returns the checksum noted for the entry [pos, pos+size) of the
// given magic. Lookups go up in position, as the walk does.
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
	p.wait()
	return p.crcs[p.next], true
}

// aheadState is a window's use of the pipeline for one file: cur is the
// window the walk reads from (window.buf is cur.buf), ahead the next one,
// read and with the helper, or nil.
type aheadState struct {
	a          *crcAhead
	cur, ahead *aheadWindow
	taken      int64 // checksums taken from the helper (tests)
}

// start points the pipeline at a new file: no window holds any of it.
func (s *aheadState) start(a *crcAhead) {
	s.a = a
	s.cur, s.ahead = &a.wins[0], nil
	for i := range a.wins {
		a.wins[i].wait()
		a.wins[i].n, a.wins[i].entries, a.wins[i].next = 0, a.wins[i].entries[:0], 0
	}
}

// quiesce waits until the helper holds no window.
func (s *aheadState) quiesce() {
	for i := range s.a.wins {
		s.a.wins[i].wait()
	}
}

// spare is the window buffer that is not cur.
func (s *aheadState) spare() *aheadWindow {
	if s.cur == &s.a.wins[0] {
		return &s.a.wins[1]
	}
	return &s.a.wins[0]
}

// submit notes the entries of p from pos on and hands them to the helper;
// it returns where the chain leaves p.
func (s *aheadState) submit(p *aheadWindow, pos int64) int64 {
	end := p.note(pos)
	p.end = end
	if len(p.entries) > 0 {
		p.pending = true
		s.a.work <- p
	}
	return end
}

// useAhead makes w take its checksums from a's helper for the file it
// reads; w reads through a's window buffers from then on.
func (w *window) useAhead(a *crcAhead) {
	w.ahead = &aheadState{}
	w.ahead.start(a)
	w.buf, w.at, w.n = w.ahead.cur.buf, 0, 0
}

// crc returns the helper's checksum of the entry [pos, pos+size), if it
// noted that entry.
func (s *aheadState) crc(magic int8, pos, size int64) (uint32, bool) {
	c, ok := s.cur.lookup(magic, pos, size)
	if !ok && s.ahead != nil && s.ahead.covers(pos, size) {
		c, ok = s.ahead.lookup(magic, pos, size)
	}
	if ok {
		s.taken++
	}
	return c, ok
}

// bytesAhead is window.bytes past the current window: the window read
// ahead when it holds the bytes, else a read as the sequential window
// makes. After a header read (a batch starts at pos) the chain of entries
// from pos goes to the helper and the next window is read ahead.
func (w *window) bytesAhead(pos, n int64) ([]byte, error) {
	s := w.ahead
	if s.ahead != nil && s.ahead.covers(pos, n) {
		s.cur.wait() // its buffer is read into next
		old := s.cur
		s.cur, s.ahead = s.ahead, nil
		w.buf, w.at, w.n = s.cur.buf, s.cur.at, s.cur.n
		if len(s.cur.entries) > 0 {
			w.readAhead(old, s.cur.end)
		}
		return w.buf[pos-w.at : pos-w.at+n], nil
	}
	s.quiesce()
	s.ahead = nil
	p := s.cur
	p.n, p.entries, p.next = 0, p.entries[:0], 0
	if err := w.read(pos, n); err != nil {
		return nil, err
	}
	p.at, p.n = w.at, w.n
	if n <= inspect.HeaderReadSize {
		if end := s.submit(p, pos); end > pos {
			w.readAhead(s.spare(), end)
		}
	}
	return w.buf[pos-w.at : pos-w.at+n], nil
}

// readAhead reads into p the window where a chain left the current one,
// at end, and hands its entries to the helper. A failed read leaves no
// window ahead: the walk's own read then reports the error.
func (w *window) readAhead(p *aheadWindow, end int64) {
	s := w.ahead
	p.n, p.entries, p.next = 0, p.entries[:0], 0
	if end+inspect.HeaderSizeUpToMagic > w.size {
		return
	}
	start := inspect.ReadStart(end, min(int64(inspect.HeaderReadSize), w.size-end), int64(len(p.buf)))
	want := min(int64(len(p.buf)), w.size-start)
	if k, _ := w.r.ReadAt(p.buf[:want], start); int64(k) < want {
		return
	}
	p.at, p.n = start, want
	s.submit(p, end)
	s.ahead = p
}

// crcAheadMinBytes is the smallest .log whose checksums go to a helper
// goroutine (when Options allow it): smaller logs are checked on one core,
// so that -j keeps meaning cores over a data dir of small segments, where
// the workers already keep every core busy.
const crcAheadMinBytes = 8 << 20

// crcAheadFor reports whether the log check of a .log of size bytes takes
// its checksums from a helper goroutine.
func (o *Options) crcAheadFor(size int64) bool {
	switch {
	case o.crcAhead < 0:
		return false
	case o.crcAhead > 0:
		return true
	}
	return o.spareCores && size >= crcAheadMinBytes
}
