package podman

import (
	"context"
	"fmt"
	"net"
	"os"
	"runtime"
	"strconv"

	"golang.org/x/sys/unix"
)

// dialIn opens a TCP connection to addr from inside the network
// namespace of process pid: for a container the host reaches on no
// address of its own (Network=none, a pod that publishes nothing). A
// socket belongs to the namespace it was made in, so only its creation
// needs the namespace: the dial runs on an OS thread locked to this
// goroutine and moved into the namespace, and the thread comes back to
// the host's before it is let go. A thread that cannot come back is
// never reused (it stays locked, and Go ends it with the goroutine).
// Needs root (CAP_SYS_ADMIN), as syslet runs.
func dialIn(ctx context.Context, pid int, addr string) (net.Conn, error) {
	if pid <= 0 {
		return nil, fmt.Errorf("its container has no process to enter the network namespace of")
	}
	target, err := os.Open("/proc/" + strconv.Itoa(pid) + "/ns/net")
	if err != nil {
		return nil, fmt.Errorf("opening its network namespace: %w", err)
	}
	defer target.Close()
	type result struct {
		conn net.Conn
		err  error
	}
	ch := make(chan result, 1)
	go func() {
		runtime.LockOSThread()
		own, err := os.Open("/proc/thread-self/ns/net")
		if err != nil {
			runtime.UnlockOSThread()
			ch <- result{nil, fmt.Errorf("opening the host's network namespace: %w", err)}
			return
		}
		defer own.Close()
		if err := unix.Setns(int(target.Fd()), unix.CLONE_NEWNET); err != nil {
			runtime.UnlockOSThread()
			ch <- result{nil, fmt.Errorf("entering its network namespace: %w", err)}
			return
		}
		var d net.Dialer
		conn, err := d.DialContext(ctx, "tcp", addr)
		if unix.Setns(int(own.Fd()), unix.CLONE_NEWNET) == nil {
			runtime.UnlockOSThread()
		}
		ch <- result{conn, err}
	}()
	r := <-ch
	return r.conn, r.err
}
