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

// UDPBound reports whether process pid holds a UDP socket bound on port: a socket of its network
// namespace's /proc/net/udp or udp6 on that local port whose inode is one of the process's open
// files. It tells when a program binds a port without listening on anything a probe could see,
// as a RoCE device does when a program on gorxe's C library starts to use it.
func UDPBound(pid, port int) (bool, error) {
	inodes, err := socketInodes(pid)
	if err != nil {
		return false, err
	}
	want := fmt.Sprintf(":%04X", port)
	for _, name := range []string{"udp", "udp6"} {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/net/%s", pid, name))
		if err != nil {
			if os.IsNotExist(err) {
				continue
			}
			return false, err
		}
		for _, line := range strings.Split(string(b), "\n") {
			// sl local_address rem_address st tx_queue:rx_queue tr:tm->when retrnsmt uid timeout inode
			fields := strings.Fields(line)
			if len(fields) > 9 && strings.HasSuffix(fields[1], want) && inodes[fields[9]] {
				return true, nil
			}
		}
	}
	return false, nil
}

// socketInodes are the inodes of the sockets process pid has open.
func socketInodes(pid int) (map[string]bool, error) {
	dir := fmt.Sprintf("/proc/%d/fd", pid)
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	inodes := map[string]bool{}
	for _, e := range entries {
		target, err := os.Readlink(dir + "/" + e.Name())
		if err != nil {
			continue // closed since the directory was read
		}
		if inode, ok := strings.CutPrefix(target, "socket:["); ok {
			inodes[strings.TrimSuffix(inode, "]")] = true
		}
	}
	return inodes, nil
}
