//go:build !linux

package mr

import "errors"

// mmapHuge fails: explicit huge pages are a Linux mapping flag.
func mmapHuge(n, prot, flags int) ([]byte, error) {
	return nil, errors.ErrUnsupported
}

// adviseHuge does nothing where transparent huge pages cannot be asked for.
func adviseHuge([]byte) {}
