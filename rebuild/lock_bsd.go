//go:build unix && !linux

package rebuild

import "golang.org/x/sys/unix"

// getLockCmd: F_GETLK sees POSIX locks held by other processes.
const getLockCmd = unix.F_GETLK
