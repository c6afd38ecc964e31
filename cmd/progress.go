package cmd

import (
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"
)

// progressBar is a byte-count bar on stderr (done, total, bytes/s, elapsed
// and remaining time) for long work: verify, rebuild, dump-log, ls --deep,
// timeline; where the command walks the partitions itself (ls --deep,
// timeline) it also names the current one.
// Its update method is the Progress callback of those packages. A nil
// *progressBar draws nothing, and every method is safe on it.
//
// The bar is drawn only on a terminal (see IOStreams.progress); it is
// cleared when the work is done, before a warning is written (Warnf), and
// before the command's table goes to stdout, so that nothing of it is left
// on the screen or mixed into the output.
type progressBar struct {
	ios  *IOStreams
	desc string

	mu       sync.Mutex
	bar      *progressbar.ProgressBar // created at the first update
	finished bool
	current  string // the partition being worked on (partition), escaped
}

// progress returns a bar described by desc, or nil when none may be drawn:
// stderr is not a terminal, -q was given, or the command streams its
// output (-o json or csv) to the same terminal, where the bar would be
// drawn across the lines.
func (s *IOStreams) progress(desc string) *progressBar {
	if !s.ProgressEnabled() || (s.stdoutTTY && !s.IsTable()) {
		return nil
	}
	p := &progressBar{ios: s, desc: desc}
	s.bar = p
	return p
}

// update is the Progress callback: done of total bytes. The bar appears at
// the first call that is not already the end (work that takes one step
// shows nothing) and is cleared at the end.
func (p *progressBar) update(done, total int64) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.finished || total <= 0 {
		return
	}
	if p.bar == nil {
		if done >= total {
			return
		}
		p.bar = progressbar.NewOptions64(total,
			progressbar.OptionSetWriter(p.ios.ErrOut),
			progressbar.OptionSetDescription(p.description()),
			progressbar.OptionShowBytes(true),
			progressbar.OptionShowTotalBytes(true),
			progressbar.OptionShowCount(),
			progressbar.OptionUseIECUnits(true),
			progressbar.OptionSetWidth(24),
			progressbar.OptionSetPredictTime(true),
			progressbar.OptionSetElapsedTime(true),
			progressbar.OptionThrottle(100*time.Millisecond),
			progressbar.OptionClearOnFinish(),
			progressbar.OptionSetRenderBlankState(true),
			progressbar.OptionEnableColorCodes(p.ios.ErrColorEnabled()),
			progressbar.OptionSetTheme(progressbar.Theme{
				Saucer: "[cyan]=[reset]", SaucerHead: "[cyan]>[reset]", SaucerPadding: " ",
				BarStart: "[", BarEnd: "]",
			}),
		)
	}
	_ = p.bar.Set64(min(done, total))
	if done >= total {
		p.finishLocked()
	}
}

// partition names the partition being worked on: the bar's description
// becomes "<desc> <name>", beside the remaining time (ETA) it shows.
func (p *progressBar) partition(name string) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.current = escapeControl(name)
	if p.bar != nil && !p.finished {
		p.bar.Describe(p.description())
	}
}

// description is the bar's text: the work and the current partition.
func (p *progressBar) description() string {
	if p.current == "" {
		return p.desc
	}
	return p.desc + " " + p.current
}

// clear erases the bar from its line, so that a warning can be written; the
// next update draws it again.
func (p *progressBar) clear() {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.bar != nil && !p.finished {
		_ = p.bar.Clear()
	}
}

// done ends the bar (cleared) whether or not the work completed; later
// updates draw nothing. Call it before writing a table to stdout.
func (p *progressBar) done() {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.finishLocked()
	if p.ios.bar == p {
		p.ios.bar = nil
	}
}

func (p *progressBar) finishLocked() {
	if p.finished {
		return
	}
	p.finished = true
	if p.bar != nil {
		_ = p.bar.Clear()
		_ = p.bar.Exit()
	}
}

// callback is update as a Progress function, or nil for a nil bar (so that
// the work does not even count its bytes).
func (p *progressBar) callback() func(done, total int64) {
	if p == nil {
		return nil
	}
	return p.update
}
