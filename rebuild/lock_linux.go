package rebuild

import "golang.org/x/sys/unix"

// getLockCmd: open file description locks see conflicting POSIX locks of
// every process, this one included.
const getLockCmd = unix.F_OFD_GETLK
