package launch

import (
	"os"
	"runtime"
	"syscall"

	"golang.org/x/sys/unix"
)

// namespaces returns how the stage's process is made: root gets a new mount namespace alone,
// keeping its privileges over the host's network (a user namespace would take from the program
// what root may do there: ports below 1024, raw sockets, socket buffers past the system's
// limits); anyone else gets a user namespace too, in which their own uid and gid map to
// themselves (setgroups then denied), and keeps its CAP_SYS_ADMIN across the stage's execve,
// which a user other than root would lose, to mount the view. The stage drops it before the
// program's execve.
func namespaces() (*syscall.SysProcAttr, error) {
	if os.Geteuid() == 0 {
		return &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWNS}, nil
	}
	uid, gid := os.Geteuid(), os.Getegid()
	return &syscall.SysProcAttr{
		Cloneflags:  syscall.CLONE_NEWUSER | syscall.CLONE_NEWNS,
		UidMappings: []syscall.SysProcIDMap{{ContainerID: uid, HostID: uid, Size: 1}},
		GidMappings: []syscall.SysProcIDMap{{ContainerID: gid, HostID: gid, Size: 1}},
		AmbientCaps: []uintptr{unix.CAP_SYS_ADMIN},
	}, nil
}

// dropCaps takes back the capability gorxe exec gave the stage to inherit, so that the program
// gets only what its own uid gives it in the namespace (everything for root, nothing otherwise).
func dropCaps() error {
	if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil {
		return err
	}
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return err
	}
	data[0].Inheritable, data[1].Inheritable = 0, 0
	return unix.Capset(&hdr, &data[0])
}

// raiseOnThread sends s to the calling thread, so that it is handled as the call returns.
func raiseOnThread(s syscall.Signal) {
	runtime.LockOSThread()
	_ = syscall.Tgkill(os.Getpid(), syscall.Gettid(), s)
}
