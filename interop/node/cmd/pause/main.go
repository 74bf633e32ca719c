// Command pause is the program of the node harness's pod sandbox image:
// containerd runs it as the first process of every pod, to hold the
// pod's namespaces. It waits for SIGTERM or SIGINT and exits 0; as
// process 1 of its PID namespace it also reaps the children that are
// handed to it (a pod that shares its process namespace).
//
// It is built static (CGO_ENABLED=0) and put alone in an image by the
// harness (package node), which names that image in containerd's
// sandbox_image: nothing is pulled.
package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT)
	if os.Getpid() == 1 {
		children := make(chan os.Signal, 1)
		signal.Notify(children, syscall.SIGCHLD)
		go reap(children)
	}
	<-stop
}

// reap waits for every child that has exited, at each SIGCHLD.
func reap(children <-chan os.Signal) {
	for range children {
		for {
			var status syscall.WaitStatus
			pid, err := syscall.Wait4(-1, &status, syscall.WNOHANG, nil)
			if pid <= 0 || err != nil {
				break
			}
		}
	}
}
