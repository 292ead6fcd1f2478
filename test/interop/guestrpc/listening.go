package guestrpc

import (
	"bufio"
	"fmt"
	"os"
	"strings"
)

// tcpListen is the st column value of a listening socket in /proc/net/tcp.
const tcpListen = "0A"

// TCPListening reports whether a socket in the caller's network namespace listens on TCP port
// port. It reads /proc/net/tcp and tcp6 instead of connecting, because the tools under test accept
// exactly one connection and a probe would use it up.
func TCPListening(port int) (bool, error) {
	want := fmt.Sprintf(":%04X", port)
	found := false
	for _, name := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		f, err := os.Open(name)
		if err != nil {
			if os.IsNotExist(err) {
				continue
			}
			return false, err
		}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			fields := strings.Fields(sc.Text())
			// sl local_address rem_address st ...
			if len(fields) > 3 && strings.HasSuffix(fields[1], want) && fields[3] == tcpListen {
				found = true
			}
		}
		err = sc.Err()
		f.Close()
		if err != nil {
			return false, err
		}
	}
	return found, nil
}
