//go:build !linux

package main

import (
	"fmt"
	"os"
)

func main() {
	fmt.Fprintln(os.Stderr, "uring: io_uring is Linux only")
	os.Exit(2)
}
