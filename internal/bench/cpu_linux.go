//go:build linux

package bench

import (
	"syscall"
	"time"
	"unsafe"
)

// ThreadCPU returns the CPU time the calling thread has used, to the
// nanosecond (CLOCK_THREAD_CPUTIME_ID; getrusage counts in scheduler ticks,
// too coarse for blocks of a few milliseconds). Lock the goroutine to its
// thread (runtime.LockOSThread) around what it measures, so that other load
// on the machine does not count.
func ThreadCPU() time.Duration {
	const clockThreadCPUTime = 3
	var ts syscall.Timespec
	_, _, _ = syscall.Syscall(syscall.SYS_CLOCK_GETTIME, clockThreadCPUTime, uintptr(unsafe.Pointer(&ts)), 0)
	return time.Duration(ts.Nano())
}
