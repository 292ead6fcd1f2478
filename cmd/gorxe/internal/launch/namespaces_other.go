//go:build !linux

package launch

import (
	"errors"
	"os"
	"syscall"
)

// errNoNamespaces: the device view is made in Linux's user and mount namespaces, which this
// system does not have; gorxe exec runs the program without it (--sysfs auto) or refuses
// (--sysfs on).
var errNoNamespaces = errors.New("the device view needs Linux's user and mount namespaces")

func namespaces() (*syscall.SysProcAttr, error) { return nil, errNoNamespaces }

// mountView and dropCaps run only in the stage, which namespaces keeps from starting here.
func mountView([]viewFile) error { return errNoNamespaces }
func dropCaps() error            { return errNoNamespaces }

// raiseOnThread sends s to the process: the thread-directed signal is Linux's.
func raiseOnThread(s syscall.Signal) { _ = syscall.Kill(os.Getpid(), s) }
