//go:build !linux

package main

import "os/exec"

// setChildAttrs does nothing off Linux; the benchmark needs /proc anyway.
func setChildAttrs(cmd *exec.Cmd) {}
