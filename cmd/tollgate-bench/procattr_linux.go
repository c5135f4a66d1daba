package main

import (
	"os/exec"
	"syscall"
)

// setChildAttrs asks the kernel to SIGKILL the child if the benchmark dies
// without running its clean-up (e.g. it is itself SIGKILLed).
func setChildAttrs(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
}
