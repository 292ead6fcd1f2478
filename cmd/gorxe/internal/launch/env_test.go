package launch

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestEnviron: the library goes first on LD_LIBRARY_PATH, ahead of what the first entry of it
// held; GORXE_ADDR is replaced when --addr is given and left as it is otherwise; every other
// entry stays, in order.
func TestEnviron(t *testing.T) {
	const lib = "/src/gorxe/build/clib"
	tests := []struct {
		name string
		env  []string
		addr string
		want []string
	}{
		{"empty", nil, "", []string{"LD_LIBRARY_PATH=" + lib}},
		{"path and address added", []string{"HOME=/root", "PATH=/bin"}, "127.0.0.2",
			[]string{"HOME=/root", "PATH=/bin", "LD_LIBRARY_PATH=" + lib, "GORXE_ADDR=127.0.0.2"}},
		{"user's path kept after it", []string{"LD_LIBRARY_PATH=/opt/a:/opt/b", "TERM=xterm"}, "",
			[]string{"TERM=xterm", "LD_LIBRARY_PATH=" + lib + ":/opt/a:/opt/b"}},
		{"empty path adds no current directory", []string{"LD_LIBRARY_PATH="}, "",
			[]string{"LD_LIBRARY_PATH=" + lib}},
		{"first of duplicates, as getenv", []string{"LD_LIBRARY_PATH=/first", "X=1", "LD_LIBRARY_PATH=/second"}, "",
			[]string{"X=1", "LD_LIBRARY_PATH=" + lib + ":/first"}},
		{"user's address kept", []string{"GORXE_ADDR=eth0", "GORXE_PORT=14791"}, "",
			[]string{"GORXE_ADDR=eth0", "GORXE_PORT=14791", "LD_LIBRARY_PATH=" + lib}},
		{"--addr replaces it", []string{"GORXE_ADDR=eth0", "GORXE_ADDRX=1", "GORXE_ADDR=eth1"}, "lo",
			[]string{"GORXE_ADDRX=1", "LD_LIBRARY_PATH=" + lib, "GORXE_ADDR=lo"}},
		{"entries without =", []string{"ODD", "LD_LIBRARY_PATH"}, "",
			[]string{"ODD", "LD_LIBRARY_PATH=" + lib}},
	}
	for _, tc := range tests {
		assert.Equal(t, tc.want, environ(tc.env, lib, tc.addr), tc.name)
	}
}
