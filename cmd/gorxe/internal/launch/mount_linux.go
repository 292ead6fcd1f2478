package launch

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"
)

// tmpfsFlags are the flags of the view's tmpfs mounts: nothing on them is set-user-ID, and
// their device files are the host's, bound in.
const tmpfsFlags = syscall.MS_NOSUID | syscall.MS_NODEV

// mountView builds the view in the process's own mount namespace: each of viewRoots that exists
// gets an empty tmpfs over it; one that does not is made in a tmpfs over its parent, which first
// gets every entry the parent had back (a directory, file or device bound from the original, a
// symlink made again), so that /sys/class/net, /dev/null and the rest read as before. Then it
// writes the files and makes the tmpfs mounts read-only.
func mountView(files []viewFile) error {
	// Mounts made from here on must not reach the namespace the process came from.
	if err := syscall.Mount("", "/", "", syscall.MS_REC|syscall.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("make / private: %w", err)
	}
	var missing, present, mounts []string
	for _, root := range viewRoots {
		if fi, err := os.Stat(root); err == nil && fi.IsDir() {
			present = append(present, root)
		} else {
			missing = append(missing, root)
		}
	}
	// The parents first: an existing root inside a parent is bound back into the parent's tmpfs,
	// and its own tmpfs then goes over that.
	for _, root := range missing {
		parent := filepath.Dir(root)
		if !slices.Contains(mounts, parent) {
			if err := shadow(parent); err != nil {
				return err
			}
			mounts = append(mounts, parent)
		}
	}
	for _, root := range present {
		if err := syscall.Mount("tmpfs", root, "tmpfs", tmpfsFlags, "mode=0755"); err != nil {
			return fmt.Errorf("mount a tmpfs on %s: %w", root, err)
		}
		mounts = append(mounts, root)
	}
	for _, root := range missing {
		if err := os.Mkdir(root, 0o755); err != nil {
			return err
		}
	}
	for _, f := range files {
		if err := os.MkdirAll(filepath.Dir(f.Path), 0o755); err != nil {
			return err
		}
		var err error
		switch {
		case f.Link != "":
			err = os.Symlink(f.Link, f.Path)
		case f.Char:
			if err = os.WriteFile(f.Path, nil, 0o600); err == nil {
				err = syscall.Mount(charStandIn, f.Path, "", syscall.MS_BIND, "")
			}
		default:
			if err = os.WriteFile(f.Path, []byte(f.Data), 0o600); err == nil {
				err = os.Chmod(f.Path, os.FileMode(f.Mode)) // as given, whatever the umask
			}
		}
		if err != nil {
			return fmt.Errorf("add %s to the view: %w", f.Path, err)
		}
	}
	for _, m := range mounts {
		if err := syscall.Mount("", m, "", syscall.MS_REMOUNT|syscall.MS_BIND|syscall.MS_RDONLY|tmpfsFlags, ""); err != nil {
			return fmt.Errorf("make the tmpfs on %s read-only: %w", m, err)
		}
	}
	return nil
}

// shadow mounts a tmpfs over dir holding what dir held: its subdirectories, files and devices
// bound from the originals (with what is mounted below them), its symlinks made again.
func shadow(dir string) error {
	fi, err := os.Stat(dir)
	if err != nil {
		return err
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	// The originals stay reachable through a descriptor of dir taken before the tmpfs hides them.
	fd, err := syscall.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("open %s: %w", dir, err)
	}
	defer syscall.Close(fd)
	orig := "/proc/self/fd/" + strconv.Itoa(fd)
	mode := "mode=" + strconv.FormatUint(uint64(fi.Mode().Perm()), 8)
	if err := syscall.Mount("tmpfs", dir, "tmpfs", tmpfsFlags, mode); err != nil {
		return fmt.Errorf("mount a tmpfs on %s: %w", dir, err)
	}
	for _, e := range entries {
		from, to := orig+"/"+e.Name(), filepath.Join(dir, e.Name())
		switch {
		case e.Type()&os.ModeSymlink != 0:
			target, err := os.Readlink(from)
			if err == nil {
				err = os.Symlink(target, to)
			}
			if err != nil {
				return err
			}
			continue
		case e.IsDir():
			if err := os.Mkdir(to, 0o755); err != nil {
				return err
			}
		default:
			if err := os.WriteFile(to, nil, 0o600); err != nil {
				return err
			}
		}
		if err := syscall.Mount(from, to, "", syscall.MS_BIND|syscall.MS_REC, ""); err != nil {
			return fmt.Errorf("bind %s/%s back: %w", dir, e.Name(), err)
		}
	}
	return nil
}
